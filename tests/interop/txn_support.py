"""Shared by the transaction interop tests: an in-process broker with small transaction/offsets topics."""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

TXN_OVERRIDES = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "transaction.state.log.num.partitions": "4",
    "offsets.topic.num.partitions": "4",
    "transaction.state.log.replication.factor": "1",
    "transaction.state.log.min.isr": "1",
}


@dataclass
class TxnBroker:
    server: Any
    log_dir: str

    @property
    def bootstrap(self) -> str:
        return f"127.0.0.1:{self.server.bound_port()}"


def start_txn_broker(log_dir: str, time: Any = None, **overrides: str) -> TxnBroker:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = dict(TXN_OVERRIDES, **{"log.dirs": log_dir})
    props.update(overrides)
    config = KafkaConfig.from_properties(None, props)
    server = KafkaServer(config) if time is None else KafkaServer(config, time)
    server.startup()
    return TxnBroker(server, log_dir)
