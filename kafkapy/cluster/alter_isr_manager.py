"""AlterIsrManager: how a partition leader asks for an ISR change (Kafka's AlterIsrManager trait).

A leader never changes its ISR on its own authority: it proposes a LeaderAndIsr (same leader and leader
epoch, the new ISR, the partition epoch it knows) and adopts the answer. Implementations:
- server/alter_isr_manager.py `DefaultAlterIsrManager`: the embedded single-node mode, through the
  controller's alter_partition (Kafka's AlterPartition request, answered in-process);
- ZooKeeper mode (controller/zk side): the conditional write of `.../partitions/<p>/state` guarded by
  the zkVersion (the partition epoch) plus an `/isr_change_notification/isr_change_<seq>` znode, as Kafka
  2.x's ZkIsrManager; the answer carries the new zkVersion as partition_epoch.
The future yields the committed LeaderAndIsr, or a KafkaError instance when refused (a stale partition
epoch: INVALID_UPDATE_VERSION; fenced: FENCED_LEADER_EPOCH; OPERATION_NOT_ATTEMPTED when the manager
already has a proposal for that partition in flight, ...), or a dict {tp: either} (the controller's
alter_partition answer). It fails with an exception when the request could not be sent; the Partition
keeps the proposal in flight and sends it again at its next ISR check (never falls back to the old ISR:
the controller may have committed it). The ZooKeeper-mode sender retries by itself until answered.
No byte format. Thread-safety: submit is called with the Partition's lock held, so an implementation
must not block, and must complete the future from another thread (its done-callback takes the lock and
may complete delayed operations, which must not run under it).
"""

from __future__ import annotations

from concurrent.futures import Future
from typing import Any, Protocol

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.topic_partition import TopicPartition


class AlterIsrManager(Protocol):
    def submit(self, topic_partition: TopicPartition, proposed: LeaderAndIsr,
               controller_epoch: int) -> Future[Any]:
        """Propose `proposed` for topic_partition (controller_epoch: the epoch of the controller whose
        LeaderAndIsr made this broker leader; the ZooKeeper write stores it in the partition state)."""
        ...
