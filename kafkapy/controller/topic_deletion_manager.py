"""TopicDeletionManager: Kafka's topic deletion on the controller's event thread, in one pass per attempt.

DeleteTopics marks the topics (/admin/delete_topics/<t>); the active controller then hides their partitions
from clients (UpdateMetadata with leader -2), stops and deletes the replicas on live brokers (StopReplica with
delete) and removes each topic whose replicas are all gone from the store. In cluster mode a replica on a down
broker becomes ReplicaDeletionIneligible and keeps its topic marked until that broker returns
(`resume_topic_deletion`). Marks written by others (tools with --zookeeper) arrive as a watch
(`on_topic_deletion_flag`); delete.topic.enable=false removes them instead.
Reads and writes no bytes itself (the store holds the JSON). Thread-safety: none; the event thread only.
"""

from __future__ import annotations

import logging
from collections.abc import Callable

from kafkapy.common.errors import KafkaError, TopicDeletionDisabledError, UnknownTopicOrPartitionError
from kafkapy.controller.controller_config import ControllerConfig
from kafkapy.controller.controller_events import TopicDeletion
from kafkapy.controller.controller_request_sender import ControllerRequestSender
from kafkapy.controller.metadata_store import MetadataStore
from kafkapy.controller.partition_state_machine import (
    BrokerRequestBatch,
    ControllerContext,
    PartitionStateMachine,
)
from kafkapy.controller.replica_state_machine import ReplicaState, ReplicaStateMachine
from kafkapy.zk import zk_data

log = logging.getLogger("kafka.controller.KafkaController")
deletion_log = logging.getLogger("kafka.controller.TopicDeletionManager")


class TopicDeletionManager:
    def __init__(self, ctx: ControllerContext, psm: PartitionStateMachine, rsm: ReplicaStateMachine,
                 store: MetadataStore, sender: ControllerRequestSender, config: ControllerConfig,
                 is_active: Callable[[], bool]) -> None:
        self.ctx = ctx
        self.psm = psm
        self.rsm = rsm
        self.store = store
        self.sender = sender
        self.config = config
        self.is_active = is_active

    def on_topic_deletion(self, event: TopicDeletion) -> dict[str, KafkaError | None]:
        names = event.names
        controller_id = self.ctx.controller_id
        results: dict[str, KafkaError | None] = {}
        if not self.config.delete_topic_enable:
            return {n: TopicDeletionDisabledError("Topic deletion is disabled.") for n in names}
        log.debug("[Controller id=%d] Delete topics listener fired for topics %s to be deleted", controller_id,
                  ",".join(names))
        to_delete = []
        for name in dict.fromkeys(names):
            if name not in self.ctx.assignments:
                results[name] = UnknownTopicOrPartitionError("This server does not host this topic-partition.")
            else:
                results[name] = None
                to_delete.append(name)
        if to_delete:
            log.info("[Controller id=%d] Starting topic deletion for topics %s", controller_id, ",".join(to_delete))
            self.store.mark_topics_for_deletion(to_delete)
            if self.is_active():
                self.delete_topics(to_delete)
        return results

    def on_topic_deletion_flag(self) -> None:
        """/admin/delete_topics changed (cluster mode): delete what others marked."""
        ctx = self.ctx
        marked = self.store.get_topics_marked_for_deletion()
        unknown = sorted(marked - set(ctx.assignments))
        if unknown:
            self.store.delete_children(zk_data.DELETE_TOPICS_PATH, unknown)
        wanted = sorted((marked & set(ctx.assignments)) - ctx.topics_to_be_deleted)
        if not wanted:
            return
        if not self.config.delete_topic_enable:
            log.info("Removing deletion marks of %s: delete.topic.enable is false", wanted)
            self.store.delete_children(zk_data.DELETE_TOPICS_PATH, wanted)
            return
        self.delete_topics(wanted)

    def delete_topics(self, names: list[str]) -> None:
        """One deletion attempt: clients stop seeing the partitions, the replicas on live brokers are stopped
        and deleted; replicas on down brokers wait (ReplicaDeletionIneligible). A topic whose replicas are all
        deleted leaves the store."""
        ctx = self.ctx
        ctx.topics_to_be_deleted.update(names)
        ident = f"[Topic Deletion Manager {ctx.controller_id}]"
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
        self.sender.send(batch)
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
            self.delete_topics(waiting)
