"""Broker gauges read through typed collaborators (no getattr on private fields): LogCleaner's thread and
buffer gauges, TransactionStateManager.NumTransactions and TransactionMarkerChannelManager's
UnknownDestinationQueueSize, over one in-process broker and a real transactional producer."""

from __future__ import annotations

from typing import Any

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")


def _gauges(server: Any) -> dict[str, Any]:
    return {s.name.mbean_name: s.attributes.get("Value") for s in server.metrics.snapshot()}


def test_cleaner_and_transaction_gauges(kafkapy_broker: Any) -> None:
    server = kafkapy_broker.server
    gauges = _gauges(server)
    # log.cleaner.enable defaults to true: one cleaner thread, alive, nothing cleaned yet
    assert server.log_manager.cleaner is not None and len(server.log_manager.cleaner.threads) == 1
    assert gauges["kafka.log:type=LogCleaner,name=DeadThreadCount"] == 0
    assert gauges["kafka.log:type=LogCleaner,name=max-buffer-utilization-percent"] == 0
    assert gauges["kafka.coordinator.transaction:type=TransactionStateManager,name=NumTransactions"] == 0

    producer = confluent_kafka.Producer({"bootstrap.servers": kafkapy_broker.bootstrap,
                                         "transactional.id": "gauge-txn", "linger.ms": 0})
    producer.init_transactions(30)
    producer.begin_transaction()
    producer.produce("gauge-topic", b"v")
    producer.commit_transaction(30)

    gauges = _gauges(server)
    assert gauges["kafka.coordinator.transaction:type=TransactionStateManager,name=NumTransactions"] == 1
    assert gauges[
        "kafka.coordinator.transaction:type=TransactionMarkerChannelManager,name=UnknownDestinationQueueSize"] == 0
