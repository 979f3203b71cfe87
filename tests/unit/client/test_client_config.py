"""Client configs: Kafka's keys and defaults."""

from __future__ import annotations

import pytest

from kafkapy.client.config import (
    AdminClientConfig,
    ConsumerConfig,
    ProducerConfig,
    parse_host_port,
    parse_key_value_pairs,
)


def test_key_value_pairs() -> None:
    assert parse_key_value_pairs(["a=1", "b.c = x=y"]) == {"a": "1", "b.c": "x=y"}
    with pytest.raises(ValueError):
        parse_key_value_pairs(["nope"])


def test_producer_defaults() -> None:
    c = ProducerConfig({"bootstrap.servers": "a:1,b:2"})
    assert c["acks"] == -1
    assert c["linger.ms"] == 5
    assert c["batch.size"] == 16384
    assert c["request.timeout.ms"] == 30000
    assert c["retry.backoff.ms"] == 100
    assert c["delivery.timeout.ms"] == 120000
    assert c["max.request.size"] == 1048576
    assert c["compression.type"] == "none"
    assert c["enable.idempotence"] is True
    assert c.bootstrap_addresses() == [("a", 1), ("b", 2)]


def test_string_values_are_parsed_and_unknown_ignored() -> None:
    c = ProducerConfig(
        {"acks": "1", "linger.ms": "0", "compression.type": "GZIP", "no.such.key": "x"}, batch_size=10
    )
    assert c["acks"] == 1
    assert c["linger.ms"] == 0
    assert c["compression.type"] == "gzip"
    assert c["batch.size"] == 10
    assert "no.such.key" not in c and c.originals["no.such.key"] == "x"
    # acks=1 without an explicit enable.idempotence silently turns idempotence off, as in Java.
    assert c["enable.idempotence"] is False


def test_conflicting_idempotence_is_an_error() -> None:
    with pytest.raises(ValueError, match="idempotent"):
        ProducerConfig({"acks": "0", "enable.idempotence": "true"})
    assert ProducerConfig({"acks": "0", "enable.idempotence": "false"})["acks"] == 0


def test_invalid_values() -> None:
    with pytest.raises(ValueError, match="acks"):
        ProducerConfig({"acks": "2"})
    with pytest.raises(ValueError, match="compression.type"):
        ProducerConfig({"compression.type": "brotli"})
    with pytest.raises(ValueError, match="linger.ms"):
        ProducerConfig({"linger.ms": "soon"})


def test_consumer_and_admin_defaults() -> None:
    c = ConsumerConfig({"auto.offset.reset": "earliest"})
    assert c["fetch.max.wait.ms"] == 500
    assert c["fetch.min.bytes"] == 1
    assert c["fetch.max.bytes"] == 52428800
    assert c["max.partition.fetch.bytes"] == 1048576
    assert c["isolation.level"] == "read_uncommitted"
    assert c["auto.offset.reset"] == "earliest"
    assert c["enable.auto.commit"] is False  # no group.id
    a = AdminClientConfig()
    assert a["default.api.timeout.ms"] == 60000
    assert a["bootstrap.servers"] == []


def test_parse_host_port() -> None:
    assert parse_host_port("localhost:9092") == ("localhost", 9092)
    assert parse_host_port("PLAINTEXT://h:1") == ("h", 1)
    assert parse_host_port("[::1]:9093") == ("::1", 9093)
    with pytest.raises(ValueError):
        parse_host_port("nohost")
