"""Kafka's murmur2 and the default/sticky partitioner."""

from __future__ import annotations

import random

import pytest

from kafkapy.client.partitioner import BuiltInPartitioner, murmur2, partition_for_key, to_positive

# Values of Java's org.apache.kafka.common.utils.Utils.murmur2 for these inputs.
JAVA_VECTORS = {
    b"21": -973932308,
    b"foobar": -790332482,
    b"a-little-bit-long-string": -985981536,
    b"a-little-bit-longer-string": -1486304829,
    b"lkjh234lh9fiuh90y23oiuhsafujhadof229phr9h19h89h8": -58897971,
    b"abc": 479470107,
}


@pytest.mark.parametrize("key,expected", sorted(JAVA_VECTORS.items()))
def test_murmur2_java_vectors(key: bytes, expected: int) -> None:
    assert murmur2(key) == expected


def test_to_positive_clears_sign_bit() -> None:
    assert to_positive(-973932308) == (-973932308) & 0x7FFFFFFF == 1173551340
    assert to_positive(-(2**31)) == 0
    assert to_positive(5) == 5


def test_partition_for_key() -> None:
    assert partition_for_key(b"21", 3) == 1173551340 % 3
    assert partition_for_key(b"foobar", 10) == ((-790332482) & 0x7FFFFFFF) % 10


def test_murmur2_matches_kafka_python_oracle() -> None:
    oracle = pytest.importorskip("kafka.partitioner.default").murmur2
    rng = random.Random(7)
    for _ in range(3000):
        key = rng.randbytes(rng.randrange(0, 40))
        assert murmur2(key) & 0xFFFFFFFF == oracle(key) & 0xFFFFFFFF


def test_keyed_records_ignore_stickiness() -> None:
    p = BuiltInPartitioner(batch_size=100)
    assert p.partition("t", b"21", 3) == partition_for_key(b"21", 3)


def test_sticky_switches_after_batch_size_bytes() -> None:
    p = BuiltInPartitioner(batch_size=100, rng=random.Random(1))
    first = p.partition("t", None, 4)
    for _ in range(9):
        assert p.partition("t", None, 4) == first
        p.update_partition_info("t", first, 10, 4)
    assert p.partition("t", None, 4) == first
    p.update_partition_info("t", first, 10, 4)
    second = p.partition("t", None, 4)
    assert second != first


def test_sticky_uses_available_partitions() -> None:
    p = BuiltInPartitioner(batch_size=1, rng=random.Random(3))
    seen = set()
    for _ in range(50):
        part = p.partition("t", None, 6, available_partitions=[2, 5])
        seen.add(part)
        p.update_partition_info("t", part, 1, 6, available_partitions=[2, 5])
    assert seen == {2, 5}


def test_ignore_keys() -> None:
    p = BuiltInPartitioner(batch_size=1000, ignore_keys=True, rng=random.Random(0))
    parts = {p.partition("t", bytes([i]), 8) for i in range(50)}
    assert len(parts) == 1
