"""TopicChangeHandler: topics and partitions coming into being, on the controller's event thread.

CreateTopics (placement by Kafka's AdminUtils algorithm, rack-aware with broker.rack; num.partitions and
default.replication.factor for what the request leaves out; at most MAX_PARTITIONS_PER_BATCH partitions per
request), CreatePartitions, and Kafka's onNewPartitionCreation (New, then Online: the first live replica leads,
LeaderAndIsr to every replica). In cluster mode it also acts on topics and partitions others wrote to
/brokers/topics (tools with --zookeeper, non-controller brokers), watching each topic's node. While the broker
is not the active controller (cluster mode) creation only writes the store, as Kafka 2.x's AdminZkClient did.
Reads and writes no bytes itself. Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

import logging
import random
from collections.abc import Callable, Iterable

from kafkapy.common.errors import (
    InvalidConfigError,
    InvalidPartitionsError,
    InvalidReplicaAssignmentError,
    InvalidRequestError,
    InvalidTopicExceptionError,
    KafkaError,
    PolicyViolationError,
    TopicAlreadyExistsError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller import topic as topic_rules
from kafkapy.controller.config_change_handler import ConfigValidator, validate_topic_configs
from kafkapy.controller.controller_config import ControllerConfig
from kafkapy.controller.controller_events import (
    NO_NUM_PARTITIONS,
    NO_REPLICATION_FACTOR,
    ControllerEvent,
    CreatableTopic,
    CreateTopicResult,
    PartitionCreation,
    PartitionModifications,
    TopicCreation,
)
from kafkapy.controller.controller_request_sender import ControllerRequestSender
from kafkapy.controller.metadata_store import MetadataStore, NodeExistsError
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
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
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import random_kafka_uuid

# Kafka's ReplicationControlManager.MAX_PARTITIONS_PER_BATCH: partitions one CreateTopics or CreatePartitions
# request may add.
MAX_PARTITIONS_PER_BATCH = 10_000
log = logging.getLogger("kafka.controller.KafkaController")


class TopicChangeHandler:
    def __init__(self, ctx: ControllerContext, psm: PartitionStateMachine, rsm: ReplicaStateMachine,
                 store: MetadataStore, sender: ControllerRequestSender, config: ControllerConfig,
                 validate_configs: ConfigValidator, rng: random.Random, is_active: Callable[[], bool],
                 enqueue_watch: Callable[[ControllerEvent], None]) -> None:
        self.ctx = ctx
        self.psm = psm
        self.rsm = rsm
        self.store = store
        self.sender = sender
        self.config = config
        self.validate_configs = validate_configs
        self.rng = rng
        self.is_active = is_active
        self.enqueue_watch = enqueue_watch
        self._topic_watches: set[str] = set()

    # -- topics -----------------------------------------------------------------------------------------------

    def on_topic_creation(self, event: TopicCreation) -> dict[str, CreateTopicResult]:
        batch = BrokerRequestBatch(self.ctx)
        results: dict[str, CreateTopicResult] = {}
        if self.requested_partitions(event.topics) > MAX_PARTITIONS_PER_BATCH:
            # Kafka's ReplicationControlManager cap: one request must not make the controller assign (and
            # the broker allocate) an unbounded number of partitions; the whole request is refused.
            err = PolicyViolationError("Excessively large number of partitions per request.")
            return {t.name: CreateTopicResult(t.name, err) for t in event.topics}
        # Kafka's onNewPartitionCreation runs once for all the new topics' partitions: their states are
        # written to the store in one operation, not one per topic.
        new_partitions: list[TopicPartition] = []
        for topic in event.topics:
            try:
                results[topic.name] = self.create_topic(topic, event.validate_only, batch, new_partitions)
            except KafkaError as e:
                results[topic.name] = CreateTopicResult(topic.name, e)
        if new_partitions:
            self.on_new_partitions(new_partitions, batch)
        if self.is_active():
            self.sender.send(batch)
        return results

    def requested_partitions(self, topics: Iterable[CreatableTopic]) -> int:
        default = self.config.num_partitions
        total = 0
        for t in topics:
            if t.assignment:
                total += len(t.assignment)
            elif t.num_partitions == NO_NUM_PARTITIONS:
                total += default
            elif t.num_partitions > 0:
                total += t.num_partitions
        return total

    def create_topic(self, t: CreatableTopic, validate_only: bool, batch: BrokerRequestBatch,
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
                self.config.num_partitions
            rf = t.replication_factor if t.replication_factor != NO_REPLICATION_FACTOR else \
                self.config.default_replication_factor
            assignment = assign_replicas_to_brokers(self.broker_metadatas(), num_partitions, rf, rng=self.rng)
        topic_rules.validate(name)
        if topic_rules.has_collision_chars(name):
            colliding = [x for x in sorted(ctx.assignments) if topic_rules.has_collision(name, x)]
            if colliding:
                raise InvalidTopicExceptionError(f"Topic '{name}' collides with existing topics: {', '.join(colliding)}")
        validate_topic_assignment(assignment)
        validate_topic_configs(self.validate_configs, configs)
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
        self.watch_topic(name)
        partitions = ctx.partitions_for_topic(name)
        if not self.is_active():  # a non-controller broker only writes the store (Kafka 2.x's AdminZkClient)
            return CreateTopicResult(name, None, topic_id, len(assignment), rf, assignment, configs)
        if new_partitions is not None:
            new_partitions.extend(partitions)
        else:
            self.on_new_partitions(partitions, batch)
        return CreateTopicResult(name, None, topic_id, len(assignment), rf, assignment, configs)

    def on_new_partitions(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        """Kafka's onNewPartitionCreation: New partition and replicas, then both Online (first leader = the
        first live replica, LeaderAndIsr to every replica)."""
        replicas = [(tp, r) for tp in partitions for r in self.ctx.replicas(tp)]
        if log.isEnabledFor(logging.INFO):
            log.info("[Controller id=%d] New partition creation callback for %s", self.ctx.controller_id,
                     ",".join(map(str, partitions)))
        self.psm.to_new(partitions)
        self.rsm.handle_state_changes(replicas, ReplicaState.NEW, batch)
        self.psm.to_online(partitions, batch)
        self.rsm.handle_state_changes(replicas, ReplicaState.ONLINE, batch)

    def broker_metadatas(self) -> list[BrokerMetadata]:
        brokers = [BrokerMetadata(b.id, b.rack) for b in self.ctx.live_brokers.values()]
        return apply_rack_aware_mode(brokers, RackAwareMode.ENFORCED)

    def on_partition_creation(self, event: PartitionCreation) -> None:
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
        new = assign_new_partitions(name, existing, self.broker_metadatas(), event.new_total, proposed, self.rng)
        if event.validate_only:
            return None
        self.store.add_partitions(name, new)
        ctx.assignments[name].update({p: tuple(r) for p, r in new.items()})
        partitions = [TopicPartition(name, p) for p in sorted(new)]
        batch = BrokerRequestBatch(ctx)
        if not self.is_active():
            return None
        self.on_new_partitions(partitions, batch)
        self.sender.send(batch)
        return None

    # -- topics and partitions written by others (cluster mode) --------------------------------------------

    def watch_topic(self, name: str) -> None:
        if self.store.cluster_mode and name not in self._topic_watches:
            self._topic_watches.add(name)
            self.store.watch_path_node(zk_data.topic_path(name),
                                       self._topic_watch_callback(name))

    def _topic_watch_callback(self, name: str) -> Callable[[], None]:
        return lambda: self.enqueue_watch(PartitionModifications(topic=name))

    def on_topic_change(self) -> None:
        ctx = self.ctx
        stored = self.store.get_all_topics()
        new = sorted(stored - set(ctx.assignments))
        for name in sorted(set(ctx.assignments) - stored - ctx.topics_to_be_deleted):
            ctx.remove_topic(name)  # removed behind our back: forget it
        if not new:
            return
        partitions: list[TopicPartition] = []
        for name in new:
            topic = self.store.get_topic(name)
            if topic is None:
                continue
            ctx.topic_ids[name] = topic.topic_id or random_kafka_uuid()
            ctx.assignments[name] = dict(topic.assignment)
            ctx.topic_configs[name] = self.store.get_topic_config(name)
            self.watch_topic(name)
            partitions.extend(ctx.partitions_for_topic(name))
        log.info("New topics: %s", ", ".join(new))
        batch = BrokerRequestBatch(ctx)
        self.on_new_partitions(partitions, batch)
        self.sender.send(batch)

    def on_partition_modifications(self, topic: str) -> None:
        ctx = self.ctx
        if topic not in ctx.assignments or topic in ctx.topics_to_be_deleted:
            return
        stored = self.store.get_topic(topic)
        if stored is None:
            return
        added = {p: r for p, r in stored.assignment.items() if p not in ctx.assignments[topic]}
        if not added:
            return
        ctx.assignments[topic].update(added)
        partitions = [TopicPartition(topic, p) for p in sorted(added)]
        log.info("New partitions of %s: %s", topic, sorted(added))
        batch = BrokerRequestBatch(ctx)
        self.on_new_partitions(partitions, batch)
        self.sender.send(batch)
