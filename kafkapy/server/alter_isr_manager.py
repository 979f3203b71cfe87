"""DefaultAlterIsrManager: the broker's implementation of cluster.alter_isr_manager's AlterIsrManager: a
leader's ISR proposal goes to the controller as an AlterPartition (Kafka's AlterIsr since 2.7): in
embedded mode to this broker's own Controller in-process, in ZooKeeper mode over the wire to the active
controller (server/broker_to_controller.py), which checks the partition epoch (the zkVersion), writes
the new state and answers with the committed LeaderAndIsr or a KafkaError. Tests acting as the
controller inject their own AlterIsrManager into KafkaServer instead.
No byte format. Thread-safety: submit never blocks; the answer arrives on the controller's event thread or
the broker-to-controller sender thread.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.topic_partition import TopicPartition

AlterPartitionSender = Callable[[TopicPartition, LeaderAndIsr], "Future[Any]"]


class DefaultAlterIsrManager:
    def __init__(self, send: AlterPartitionSender) -> None:
        self._send = send

    def submit(self, topic_partition: TopicPartition, proposed: LeaderAndIsr, controller_epoch: int) -> Future[Any]:
        return self._send(topic_partition, proposed)
