"""LogDirFailureNotifier: tells the controller that a log dir of this broker went offline (KIP-112).

ZooKeeper mode (Kafka's KafkaZkClient.propagateLogDirEvent): a sequential znode
`/log_dir_event_notification/log_dir_event_<seq>` holding `{"version":1,"broker":<id>,"event":1}`; the
controller's watch then sends LeaderAndIsr for every replica of the broker, and the KAFKA_STORAGE_ERROR answers
move the leadership of the partitions in the failed dir. Embedded mode (the broker is its own controller): the
same answers go straight to the controller's LeaderAndIsr response handling.
Thread-safety: called from whichever thread hit the I/O error; the store and the controller are thread-safe.
"""

from __future__ import annotations

import logging
from typing import Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.zk import zk_data

log = logging.getLogger("kafka.server.ReplicaManager")

LOG_DIR_EVENT_PREFIX = f"{zk_data.LOG_DIR_EVENT_NOTIFICATION_PATH}/log_dir_event_"
LOG_DIR_FAILURE_EVENT = 1


class LogDirFailureNotifier:
    def __init__(self, broker_id: int, store: Any, controller: Any, uses_zookeeper: bool) -> None:
        self.broker_id = broker_id
        self._store = store
        self._controller = controller
        self._uses_zookeeper = uses_zookeeper

    def __call__(self, log_dir: str, partitions: list[TopicPartition]) -> None:
        if self._uses_zookeeper:
            self._store.create_sequential(LOG_DIR_EVENT_PREFIX, {"version": 1, "broker": self.broker_id,
                                                                 "event": LOG_DIR_FAILURE_EVENT})
            log.info("Broker %d reported the failure of log dir %s to the controller", self.broker_id, log_dir)
        elif partitions:
            self._controller.leader_and_isr_response(
                self.broker_id, dict.fromkeys(partitions, int(ErrorCode.KAFKA_STORAGE_ERROR)))
