"""The controller's cluster-mode events (a mixin of Controller, run on its event thread): what ZooKeeper watches
report because someone other than the controller wrote (tools with --zookeeper, non-controller brokers,
partition leaders): new topics and partitions, deletion marks, ISR change notifications, preferred replica
elections, and the auto leader rebalance (`auto.leader.rebalance.enable`, `leader.imbalance.*`).
Znodes read and written: /brokers/topics[/<t>], /admin/delete_topics/<t>, /isr_change_notification/*,
/log_dir_event_notification/*,
/admin/preferred_replica_election (Kafka's JSON, zk_data.py).
Thread-safety: none; only the controller's event thread calls these.
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import Any

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller.controller_events import (
    ControllerEvent,
    ElectionType,
    ElectLeaders,
    PartitionModifications,
)
from kafkapy.controller.metadata_store import MetadataStore
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionState,
    PartitionStateMachine,
)
from kafkapy.controller.topic_handlers import as_bool
from kafkapy.zk import zk_data
from kafkapy.zk.zk_data import random_kafka_uuid

log = logging.getLogger("kafka.controller.KafkaController")


class ClusterEventHandlers:
    ctx: ControllerContext
    psm: PartitionStateMachine
    store: MetadataStore
    config: Any
    broker_id: int
    _topic_watches: set[str]

    def _send(self, batch: BrokerRequestBatch) -> None:
        raise NotImplementedError

    def _delete_topics(self, names: list[str]) -> None:
        raise NotImplementedError

    def _on_elect_leaders(self, event: ElectLeaders) -> Any:
        raise NotImplementedError

    def _enqueue_watch(self, event: ControllerEvent) -> None:
        raise NotImplementedError

    def _on_new_partitions(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        raise NotImplementedError

    def _check_reassignments(self, partitions: list[TopicPartition], batch: BrokerRequestBatch) -> None:
        raise NotImplementedError

    # -- topics written by others ---------------------------------------------------------------------------

    def _watch_topic(self, name: str) -> None:
        if self.store.cluster_mode and name not in self._topic_watches:
            self._topic_watches.add(name)
            self.store.watch_path_node(zk_data.topic_path(name),
                                       self._topic_watch_callback(name))

    def _topic_watch_callback(self, name: str) -> Callable[[], None]:
        return lambda: self._enqueue_watch(PartitionModifications(topic=name))

    def _on_topic_change(self) -> None:
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
            self._watch_topic(name)
            partitions.extend(ctx.partitions_for_topic(name))
        log.info("New topics: %s", ", ".join(new))
        batch = BrokerRequestBatch(ctx)
        self._on_new_partitions(partitions, batch)
        self._send(batch)

    def _on_partition_modifications(self, topic: str) -> None:
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
        self._on_new_partitions(partitions, batch)
        self._send(batch)

    def _on_topic_deletion_flag(self) -> None:
        ctx = self.ctx
        marked = self.store.get_topics_marked_for_deletion()
        unknown = sorted(marked - set(ctx.assignments))
        if unknown:
            self.store.delete_children(zk_data.DELETE_TOPICS_PATH, unknown)
        wanted = sorted((marked & set(ctx.assignments)) - ctx.topics_to_be_deleted)
        if not wanted:
            return
        if not as_bool(self.config.get("delete.topic.enable", True)):
            log.info("Removing deletion marks of %s: delete.topic.enable is false", wanted)
            self.store.delete_children(zk_data.DELETE_TOPICS_PATH, wanted)
            return
        self._delete_topics(wanted)

    # -- ISR changes leaders wrote themselves ---------------------------------------------------------------

    def _on_isr_change_notification(self) -> None:
        ctx = self.ctx
        names, tps = self.store.get_isr_change_notifications()
        known = sorted(tp for tp in tps if tp in ctx.leadership)
        for topic in sorted({tp.topic for tp in known}):
            stored = self.store.get_partition_states(topic)
            for tp in known:
                if tp.topic == topic and tp.partition in stored:
                    ctx.leadership[tp] = stored[tp.partition]
        if known:
            batch = BrokerRequestBatch(ctx)
            batch.add_update_metadata(known)
            self._check_reassignments(known, batch)
            self._send(batch)
        if names:
            self.store.delete_children(zk_data.ISR_CHANGE_NOTIFICATION_PATH, names)

    # -- log dir failures brokers reported (KIP-112) ---------------------------------------------------------

    def _on_log_dir_event_notification(self) -> None:
        """Kafka's processLogDirEventNotification / onBrokerLogDirFailure: send LeaderAndIsr for every replica
        on the reporting brokers; each answers KAFKA_STORAGE_ERROR for the replicas in its offline dirs, and the
        LeaderAndIsr response handling (offline_replicas.py) moves their leadership."""
        ctx = self.ctx
        names = self.store.children(zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH)
        brokers: set[int] = set()
        for name in names:
            data = self.store.get_json(f"{zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH}/{name}")
            if isinstance(data, dict) and "broker" in data:
                brokers.add(int(data["broker"]))
        try:
            live = sorted(b for b in brokers if b in ctx.live_brokers)
            if live:
                log.info("Received log directory failure notification for brokers %s", ",".join(map(str, live)))
                batch = BrokerRequestBatch(ctx)
                for broker in live:
                    for tp in ctx.partitions_on_broker(broker):
                        leadership = ctx.leadership.get(tp)
                        if leadership is not None and tp.topic not in ctx.topics_to_be_deleted:
                            batch.add_leader_and_isr([broker], tp, leadership)
                self._send(batch)
        finally:
            if names:
                self.store.delete_children(zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH, names)

    # -- preferred replica election (tools with --zookeeper, non-controller brokers) ------------------------

    def _on_preferred_replica_election(self) -> None:
        wanted = self.store.get_preferred_replica_election()
        if wanted is None:
            return
        try:
            partitions = [tp for tp in wanted if tp in self.ctx.leadership]
            if partitions:
                self._on_elect_leaders(ElectLeaders(partitions=partitions, election_type=ElectionType.PREFERRED))
        finally:
            self.store.delete_preferred_replica_election()

    # -- auto leader rebalance --------------------------------------------------------------------------------

    def _on_auto_leader_rebalance(self) -> None:
        """Kafka's checkAndTriggerAutoLeaderRebalance: per preferred broker, when more than
        leader.imbalance.per.broker.percentage of its partitions are led elsewhere, move them back."""
        ctx = self.ctx
        if not as_bool(self.config.get("auto.leader.rebalance.enable", True)):
            return
        threshold = int(self.config.get("leader.imbalance.per.broker.percentage", 10))
        by_preferred: dict[int, list[TopicPartition]] = {}
        for tp in ctx.all_partitions():
            replicas = ctx.replicas(tp)
            if replicas and tp.topic not in ctx.topics_to_be_deleted and tp in ctx.leadership:
                by_preferred.setdefault(replicas[0], []).append(tp)
        candidates: list[TopicPartition] = []
        for broker_id, tps in sorted(by_preferred.items()):
            if not ctx.is_replica_online(broker_id, include_shutting_down=False):
                continue
            imbalanced = [tp for tp in tps if ctx.leadership[tp].leader_and_isr.leader != broker_id]
            ratio = len(imbalanced) * 100 / len(tps)
            if imbalanced and ratio > threshold:
                log.info("Leader imbalance ratio for broker %d is %.1f%%: moving %d leaders back", broker_id,
                         ratio, len(imbalanced))
                candidates.extend(tp for tp in imbalanced if broker_id in ctx.leadership[tp].leader_and_isr.isr
                                  and ctx.states.get(tp) == PartitionState.ONLINE)
        if candidates:
            self._on_elect_leaders(ElectLeaders(partitions=candidates, election_type=ElectionType.PREFERRED))
