"""MemoryPool (queued.max.request.bytes): Kafka's non-strict SimpleMemoryPool accounting."""

from __future__ import annotations

import pytest

from kafkapy.server.kafka_config_defs import ConfigError
from kafkapy.server.network.memory_pool import MemoryPool


def test_no_pool_at_kafkas_default() -> None:
    assert MemoryPool.from_config(-1, 104857600) is None


def test_pool_smaller_than_one_request_is_refused_as_kafka_config_does() -> None:
    with pytest.raises(ConfigError, match="queued.max.request.bytes must be larger or equal to socket.request.max.bytes"):
        MemoryPool.from_config(1000, 1001)


def test_non_strict_allocation_and_release_listener() -> None:
    pool = MemoryPool.from_config(100, 100)
    assert pool is not None
    woken: list[int] = []
    pool.add_release_listener(lambda: woken.append(pool.available))
    assert pool.try_allocate(60)
    assert pool.try_allocate(60)  # any memory left: granted, the pool dips below zero
    assert pool.available == -20 and pool.is_out_of_memory()
    assert not pool.try_allocate(1)
    pool.release(10)
    assert woken == []  # still nothing available: no wakeup
    pool.release(60)
    assert woken == [50] and not pool.is_out_of_memory()
    with pytest.raises(ValueError):
        pool.try_allocate(101)  # over the single allocation limit (socket.request.max.bytes)
