"""The kafkapy pytest plugin (entry point `pytest11: kafkapy`): a `kafka_broker` fixture for users' tests.

    def test_roundtrip(kafka_broker):
        kafka_broker.create_topic("orders", partitions=3)
        p = confluent_kafka.Producer({"bootstrap.servers": kafka_broker.bootstrap})

The fixture is a started kafkapy.testing.KafkaBroker (in-process, 127.0.0.1 port 0, temporary log dir),
one per test, stopped and its log dir removed at teardown. `kafka_broker_overrides` (a fixture the
user may override, e.g. in conftest.py) supplies server.properties keys for it.
Thread-safety: pytest calls fixtures from one thread.
"""

from __future__ import annotations

from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy.testing.kafka_broker import KafkaBroker


@pytest.fixture
def kafka_broker_overrides() -> dict[str, Any]:
    """server.properties keys for `kafka_broker` (override this fixture to change them)."""
    return {}


@pytest.fixture
def kafka_broker(kafka_broker_overrides: dict[str, Any]) -> Iterator[KafkaBroker]:
    """A started in-process kafkapy broker: `.bootstrap`, `.port`, `.create_topic(name, partitions, config)`."""
    with KafkaBroker(kafka_broker_overrides) as broker:
        yield broker
