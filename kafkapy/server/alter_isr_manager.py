"""DefaultAlterIsrManager: the broker's implementation of cluster.alter_isr_manager's AlterIsrManager: a
leader's ISR proposal goes to the controller as an AlterPartition (Kafka's AlterIsr since 2.7): in
embedded mode to this broker's own Controller in-process, in ZooKeeper mode over the wire to the active
controller (server/broker_to_controller.py), which checks the partition epoch (the zkVersion), writes
the new state and answers with the committed LeaderAndIsr or a KafkaError. submit's future is one shape in
both modes: the committed LeaderAndIsr, or it raises the KafkaError (or the exception that kept the request
from being answered). Tests acting as the controller inject their own AlterIsrManager into KafkaServer
instead.
No byte format. Thread-safety: submit never blocks; the answer arrives on the controller's event thread or
the broker-to-controller sender thread.
"""

from __future__ import annotations

from collections.abc import Callable
from concurrent.futures import Future
from typing import Any

from kafkapy.cluster.leader_and_isr import LeaderAndIsr
from kafkapy.common.errors import UnknownServerError
from kafkapy.common.topic_partition import TopicPartition

AlterPartitionSender = Callable[[TopicPartition, LeaderAndIsr], "Future[Any]"]


class DefaultAlterIsrManager:
    def __init__(self, send: AlterPartitionSender) -> None:
        self._send = send

    def submit(self, topic_partition: TopicPartition, proposed: LeaderAndIsr,
               controller_epoch: int) -> Future[LeaderAndIsr]:
        answer: Future[LeaderAndIsr] = Future()

        def done(sent: Future[Any]) -> None:
            try:
                result = sent.result()
                if isinstance(result, dict):  # the controller's answer for every partition of the request
                    result = result.get(topic_partition)
            except Exception as e:  # noqa: BLE001 - handed to the Partition as the answer's failure
                answer.set_exception(e)
                return
            if isinstance(result, LeaderAndIsr):
                answer.set_result(result)
            elif isinstance(result, BaseException):
                answer.set_exception(result)
            else:
                answer.set_exception(UnknownServerError(f"AlterPartition answer {result!r} for {topic_partition}"))

        self._send(topic_partition, proposed).add_done_callback(done)
        return answer
