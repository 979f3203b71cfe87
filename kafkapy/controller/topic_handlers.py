"""The controller's topic and config events (a mixin of Controller, run on its event thread): CreateTopics
(placement by Kafka's AdminUtils algorithm, rack-aware with broker.rack), DeleteTopics (Kafka's
TopicDeletionManager in one pass), CreatePartitions and topic / broker config changes, with Kafka's errors.
While the broker is not the active controller (cluster mode) these only write the store, as Kafka 2.x's
AdminZkClient did; the controller's watches act on the writes.
Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkapy.common.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    InvalidTopicExceptionError,
    KafkaError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    TopicDeletionDisabledError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller import topic as topic_rules
from kafkapy.controller.controller_events import (
    NO_NUM_PARTITIONS,
    NO_REPLICATION_FACTOR,
    ConfigChange,
    CreatableTopic,
    CreateTopicResult,
    PartitionCreation,
    TopicCreation,
)
from kafkapy.controller.metadata_store import MetadataStore, NodeExistsError
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.replica_assignment import (
    BrokerMetadata,
    RackAwareMode,
    apply_rack_aware_mode,
    assign_new_partitions,
    assign_replicas_to_brokers,
    validate_topic_assignment,
)
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.zk.zk_data import DEFAULT_BROKER_ENTITY, random_kafka_uuid

# Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: partitions one CreateTopics or CreatePartitions
# request may add.
MAX_PARTITIONS_PER_BATCH = 10_000
log = logging.getLogger("kafka.controller.KafkaController")
deletion_log = logging.getLogger("kafka.controller.TopicDeletionManager")


def as_bool(value: Any) -> bool:
    return value if isinstance(value, bool) else str(value).strip().lower() == "true"


class TopicHandlers:
    ctx: ControllerContext
    broker_id: int
    psm: PartitionStateMachine
    rsm: ReplicaStateMachine
    store: MetadataStore
    config: Any
    _active: bool
    _rng: random.Random
    _broker_defaults: dict[str, str]
    validate_topic_configs: Callable[[Mapping[str, str]], None]
    on_config_change: Callable[[str, str, dict[str, str]], None] | None

    # Provided by Controller and the other mixins (annotations only: a stub here would shadow them).
    _send: Callable[[BrokerRequestBatch], None]
    _watch_topic: Callable[[str], None]
    _call: Callable[..., None]

    # -- topics -----------------------------------------------------------------------------------------------

    def _on_topic_creation(self, event: TopicCreation) -> dict[str, CreateTopicResult]:
        batch = BrokerRequestBatch(self.ctx)
        results: dict[str, CreateTopicResult] = {}
        if self._requested_partitions(event.topics) > MAX_PARTITIONS_PER_BATCH:
            # Kafka's ReplicationControlManager cap: one request must not make the controller assign (and
            # the broker allocate) an unbounded number of partitions; the whole request is refused.
            err = PolicyViolationError("Excessively large number of partitions per request.")
            return {t.name: CreateTopicResult(t.name, err) for t in event.topics}
        # Kafka's onNewPartitionCreation runs once for all the new topics' partitions: their states are
        # written to the store in one operation, not one per topic.
        new_partitions: list[TopicPartition] = []
        for topic in event.topics:
            try:
                results[topic.name] = self._create_topic(topic, event.validate_only, batch, new_partitions)
            except KafkaError as e:
                results[topic.name] = CreateTopicResult(topic.name, e)
        if new_partitions:
            self._on_new_partitions(new_partitions, batch)
        if self._active:
            self._send(batch)
        return results

    def _requested_partitions(self, topics: Iterable[CreatableTopic]) -> int:
        default = int(self.config.get("num.partitions", 1))
        total = 0
        for t in topics:
            if t.assignment:
                total += len(t.assignment)
            elif t.num_partitions == NO_NUM_PARTITIONS:
                total += default
            elif t.num_partitions > 0:
                total += t.num_partitions
        return total

    def _create_topic(self, t: CreatableTopic, validate_only: bool, batch: BrokerRequestBatch,
                      new_partitions: list[TopicPartition] | None = None) -> CreateTopicResult:
        """Create one topic; its partitions go online now, or are added to `new_partitions` for the caller."""
        ctx = self.ctx
        name = t.name
        if name in ctx.topics_to_be_deleted:
            raise TopicAlreadyExistsError(f"Topic '{name}' is marked for deletion.")
        if name in ctx.assignments:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.")
        null_configs = [k for k, v in t.configs.items() if v is None]
        if null_configs:
            raise InvalidConfigError(f"Null value not supported for topic configs: {','.join(null_configs)}")
        configs = {k: str(v) for k, v in t.configs.items()}
        if t.assignment:
            if t.num_partitions != NO_NUM_PARTITIONS or t.replication_factor != NO_REPLICATION_FACTOR:
                raise InvalidRequestError("Both numPartitions or replicationFactor and replicasAssignments were "
                                          "set. Both cannot be used at the same time.")
            assignment = {int(p): [int(b) for b in r] for p, r in sorted(t.assignment.items())}
            if any(not r for r in assignment.values()):
                raise InvalidReplicaAssignmentError("The manual partition assignment includes an empty replica list.")
        else:
            num_partitions = t.num_partitions if t.num_partitions != NO_NUM_PARTITIONS else \
                int(self.config.get("num.partitions", 1))
            rf = t.replication_factor if t.replication_factor != NO_REPLICATION_FACTOR else \
                int(self.config.get("default.replication.factor", 1))
            assignment = assign_replicas_to_brokers(self._broker_metadatas(), num_partitions, rf, rng=self._rng)
        topic_rules.validate(name)
        if topic_rules.has_collision_chars(name):
            colliding = [x for x in sorted(ctx.assignments) if topic_rules.has_collision(name, x)]
            if colliding:
                raise InvalidTopicExceptionError(f"Topic '{name}' collides with existing topics: {', '.join(colliding)}")
        validate_topic_assignment(assignment)
        self._validate_configs(configs)
        rf = len(assignment[0])
        if validate_only:
            return CreateTopicResult(name, None, None, len(assignment), rf, assignment, configs)
        topic_id = random_kafka_uuid()
        try:
            self.store.create_topic(name, topic_id, assignment, configs)
        except NodeExistsError:
            raise TopicAlreadyExistsError(f"Topic '{name}' already exists.") from None
        ctx.topic_ids[name] = topic_id
        ctx.assignments[name] = {p: tuple(r) for p, r in assignment.items()}
        ctx.topic_configs[name] = configs
        self._watch_topic(name)
        partitions = ctx.partitions_for_topic(name)
        if not self._active:  # a non-controller broker only writes the store (Kafka 2.x's AdminZkClient)
            return CreateTopicResult(name, None, topic_id, len(assignment), rf, assignment, configs)
        if new_partitions is not None:
            new_partitions.extend(partitions)
        else:
            self._on_new_partitions(partitions, batch)
        return CreateTopicResult(name, None, topic_id, len(assignment), rf, assignment, configs)

    def _on_new_partitions(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        """Kafka's onNewPartitionCreation: New partition and replicas, then both Online (first leader = the
        first live replica, LeaderAndIsr to every replica)."""
        replicas = [(tp, r) for tp in partitions for r in self.ctx.replicas(tp)]
        if log.isEnabledFor(logging.INFO):
            log.info("[Controller id=%d] New partition creation callback for %s", self.broker_id,
                     ",".join(map(str, partitions)))
        self.psm.to_new(partitions)
        self.rsm.handle_state_changes(replicas, ReplicaState.NEW, batch)
        self.psm.to_online(partitions, batch)
        self.rsm.handle_state_changes(replicas, ReplicaState.ONLINE, batch)

    def _broker_metadatas(self) -> list[BrokerMetadata]:
        brokers = [BrokerMetadata(b.id, b.rack) for b in self.ctx.live_brokers.values()]
        return apply_rack_aware_mode(brokers, RackAwareMode.ENFORCED)

    def _validate_configs(self, configs: Mapping[str, str]) -> None:
        try:
            self.validate_topic_configs(configs)
        except KafkaError:
            raise
        except (ValueError, TypeError) as e:
            raise InvalidConfigError(str(e)) from None

    def _on_topic_deletion(self, names: list[str]) -> dict[str, KafkaError | None]:
        results: dict[str, KafkaError | None] = {}
        if not as_bool(self.config.get("delete.topic.enable", True)):
            return {n: TopicDeletionDisabledError("Topic deletion is disabled.") for n in names}
        log.debug("[Controller id=%d] Delete topics listener fired for topics %s to be deleted", self.broker_id,
                  ",".join(names))
        to_delete = []
        for name in dict.fromkeys(names):
            if name not in self.ctx.assignments:
                results[name] = UnknownTopicOrPartitionError("This server does not host this topic-partition.")
            else:
                results[name] = None
                to_delete.append(name)
        if to_delete:
            log.info("[Controller id=%d] Starting topic deletion for topics %s", self.broker_id, ",".join(to_delete))
            self.store.mark_topics_for_deletion(to_delete)
            if self._active:
                self._delete_topics(to_delete)
        return results

    def _delete_topics(self, names: list[str]) -> None:
        """Kafka's TopicDeletionManager, in one pass: clients stop seeing the partitions (UpdateMetadata with
        leader -2), the replicas on live brokers are stopped and deleted; replicas on down brokers become
        ReplicaDeletionIneligible and keep their topic (still marked in the store) until
        `resume_topic_deletion` retries it when such a broker returns. A topic whose replicas are all deleted
        leaves the store."""
        ctx = self.ctx
        ctx.topics_to_be_deleted.update(names)
        ident = f"[Topic Deletion Manager {self.broker_id}]"
        deletion_log.info("%s Handling deletion for topics %s", ident, ",".join(names))
        batch = BrokerRequestBatch(ctx)
        partitions = [tp for name in names for tp in ctx.partitions_for_topic(name)]
        batch.add_update_metadata(partitions)
        # Replicas already deleted by an earlier attempt are NonExistent; the rest are retried.
        replicas = [(tp, r) for tp in partitions for r in ctx.replicas(tp)
                    if self.rsm.state(tp, r) != ReplicaState.NON_EXISTENT]
        # Without ZooKeeper no other broker can return to take its StopReplica, so nothing waits (as KRaft).
        waits = [self.store.cluster_mode and not ctx.is_replica_online(r) for _, r in replicas]
        eligible = [replica for replica, wait in zip(replicas, waits, strict=True) if not wait]
        ineligible = [replica for replica, wait in zip(replicas, waits, strict=True) if wait]
        self.rsm.handle_state_changes(replicas, ReplicaState.OFFLINE, batch)
        self.rsm.handle_state_changes(ineligible, ReplicaState.DELETION_INELIGIBLE, batch)
        self.rsm.handle_state_changes(eligible, ReplicaState.DELETION_STARTED, batch)
        self.psm.to_offline(partitions)
        self._send(batch)
        # The StopReplica answers are not awaited: a live replica's deletion is complete once it is queued.
        self.rsm.handle_state_changes(eligible, ReplicaState.DELETION_SUCCESSFUL, batch)
        self.rsm.handle_state_changes(eligible, ReplicaState.NON_EXISTENT, batch)
        waiting = {tp.topic for tp, _ in ineligible}
        for name in names:
            if name in waiting:
                log.info("Topic %s deletion waits for its replicas on brokers %s", name,
                         sorted({r for tp, r in ineligible if tp.topic == name}))
                continue
            self.psm.to_non_existent(ctx.partitions_for_topic(name))
            self.store.delete_topic(name)
            ctx.remove_topic(name)
            self.rsm.forget_topic(name)
            deletion_log.info("%s Deletion of topic %s successfully completed", ident, name)

    def resume_topic_deletion(self, broker_ids: set[int]) -> None:
        """Kafka's onBrokerStartup: retry the deletions that waited for replicas on these brokers."""
        waiting = sorted({tp.topic for tp, r in self.rsm.replicas_on_brokers(broker_ids)
                          if tp.topic in self.ctx.topics_to_be_deleted
                          and self.rsm.state(tp, r) == ReplicaState.DELETION_INELIGIBLE})
        if waiting:
            self._delete_topics(waiting)

    def _on_partition_creation(self, event: PartitionCreation) -> None:
        ctx = self.ctx
        name = event.topic
        if name not in ctx.assignments:
            raise UnknownTopicOrPartitionError(f"The topic '{name}' does not exist.")
        if name in ctx.topics_to_be_deleted:
            raise InvalidTopicExceptionError("The topic is queued for deletion.")
        existing = ctx.assignments[name]
        old = len(existing)
        increment = event.new_total - old
        if increment < 0:
            raise InvalidPartitionsError(
                f"Topic currently has {old} partitions, which is higher than the requested {event.new_total}.")
        if increment == 0:
            raise InvalidPartitionsError(f"Topic already has {old} partitions.")
        if increment > MAX_PARTITIONS_PER_BATCH:
            raise PolicyViolationError("Excessively large number of partitions per request.")
        proposed = None
        if event.assignment is not None:
            unknown = sorted({b for r in event.assignment for b in r} - set(ctx.live_brokers))
            if unknown:
                raise InvalidReplicaAssignmentError(
                    f"Unknown broker(s) in replica assignment: {', '.join(map(str, unknown))}.")
            if len(event.assignment) != increment:
                raise InvalidReplicaAssignmentError(f"Increasing the number of partitions by {increment} but "
                                                    f"{len(event.assignment)} assignments provided.")
            proposed = {old + i: r for i, r in enumerate(event.assignment)}
        new = assign_new_partitions(name, existing, self._broker_metadatas(), event.new_total, proposed, self._rng)
        if event.validate_only:
            return None
        self.store.add_partitions(name, new)
        ctx.assignments[name].update({p: tuple(r) for p, r in new.items()})
        partitions = [TopicPartition(name, p) for p in sorted(new)]
        batch = BrokerRequestBatch(ctx)
        if not self._active:
            return None
        self._on_new_partitions(partitions, batch)
        self._send(batch)
        return None

    # -- configs ----------------------------------------------------------------------------------------------

    def _on_config_change(self, event: ConfigChange) -> None:
        name = event.entity_name
        if event.entity_type == "topics":
            if name not in self.ctx.assignments:
                raise UnknownTopicOrPartitionError(f"Topic {name} does not exist.")
            self._validate_configs(event.configs)
            if event.validate_only:
                return None
            was_unclean = self._unclean_enabled(name)
            self.store.set_topic_config(name, event.configs)
            self.ctx.topic_configs[name] = dict(event.configs)
            if not was_unclean and self._unclean_enabled(name):
                self._elect_offline(self.ctx.partitions_for_topic(name))
        elif event.entity_type == "brokers":
            if event.validate_only:
                return None
            self.store.set_entity_config("brokers", name, event.configs)
            if name == DEFAULT_BROKER_ENTITY:
                self._broker_defaults = dict(event.configs)
                self._elect_offline(self.ctx.partitions_in_state(PartitionState.OFFLINE))
        else:
            raise InvalidRequestError(f"Unsupported config entity type {event.entity_type}")
        if self.on_config_change is not None:
            self._call(self.on_config_change, event.entity_type, name, dict(event.configs))
        return None

    def _on_config_notification(self, entity_type: str, name: str) -> None:
        if entity_type == "topics" and name in self.ctx.assignments:
            was_unclean = self._unclean_enabled(name)
            self.ctx.topic_configs[name] = self.store.get_topic_config(name)
            if not was_unclean and self._unclean_enabled(name):
                self._elect_offline(self.ctx.partitions_for_topic(name))
        elif entity_type == "brokers" and name == DEFAULT_BROKER_ENTITY:
            self._broker_defaults = self.store.get_broker_config(None)
            self._elect_offline(self.ctx.partitions_in_state(PartitionState.OFFLINE))

    def _elect_offline(self, partitions: list[TopicPartition]) -> None:
        if not self._active:
            return
        offline = [tp for tp in partitions if self.ctx.states.get(tp) == PartitionState.OFFLINE]
        if offline:
            batch = BrokerRequestBatch(self.ctx)
            self.psm.trigger_online_state_change(batch, offline)
            self._send(batch)

    def _unclean_enabled(self, topic: str) -> bool:
        overrides = self.ctx.topic_configs.get(topic, {})
        key = "unclean.leader.election.enable"
        if key in overrides:
            return as_bool(overrides[key])
        if key in self._broker_defaults:
            return as_bool(self._broker_defaults[key])
        return as_bool(self.config.get(key, False))
