"""A Kafka broker for users' own tests: `with kafkapy.testing.KafkaBroker() as broker: ...`.

The pytest plugin (kafkapy/testing/pytest_plugin.py, registered through the `pytest11` entry point)
gives the same broker as the `kafka_broker` fixture. This package sits above kafkapy.server (it starts
one); nothing else in kafkapy imports it.
"""

from __future__ import annotations

from kafkapy.testing.kafka_broker import KafkaBroker

__all__ = ["KafkaBroker"]
