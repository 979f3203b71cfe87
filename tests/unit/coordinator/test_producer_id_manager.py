"""ProducerIdManager: block reservation in a store, sharing between brokers, restarts, exhaustion."""

from __future__ import annotations

import threading

import pytest

from kafkapy.common.errors import CoordinatorLoadInProgressError, UnknownServerError
from kafkapy.coordinator.producer_id_manager import (
    LONG_MAX,
    InMemoryProducerIdBlockStore,
    ProducerIdManager,
    ProducerIdsBlock,
    decode_producer_id_block,
    encode_producer_id_block,
)


def test_block_record_is_kafkas_json() -> None:
    block = ProducerIdsBlock(3, 2000, 1000)
    assert encode_producer_id_block(block) == {"version": 1, "broker": 3, "block_start": "2000", "block_end": "2999"}
    assert decode_producer_id_block(encode_producer_id_block(block)) == block


def test_ids_come_from_consecutive_blocks() -> None:
    store = InMemoryProducerIdBlockStore()
    manager = ProducerIdManager(0, store, block_size=3)
    assert [manager.generate_producer_id() for _ in range(7)] == [0, 1, 2, 3, 4, 5, 6]
    assert store.get_producer_id_block() == ({"version": 1, "broker": 0, "block_start": "6", "block_end": "8"}, 2)


def test_brokers_sharing_a_store_never_collide_and_restarts_skip_the_rest() -> None:
    store = InMemoryProducerIdBlockStore()
    a, b = ProducerIdManager(0, store), ProducerIdManager(1, store)
    assert (a.generate_producer_id(), b.generate_producer_id(), a.generate_producer_id()) == (0, 1000, 1)
    assert ProducerIdManager(0, store).generate_producer_id() == 2000


def test_concurrent_generation_is_unique() -> None:
    manager = ProducerIdManager(0, InMemoryProducerIdBlockStore(), block_size=10)
    got: list[int] = []
    lock = threading.Lock()

    def run() -> None:
        ids = [manager.generate_producer_id() for _ in range(200)]
        with lock:
            got.extend(ids)

    threads = [threading.Thread(target=run) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join(10)
    assert sorted(got) == list(range(800))


class LosingStore(InMemoryProducerIdBlockStore):
    def set_producer_id_block(self, data, expected_version):  # another writer always wins
        return False


def test_errors() -> None:
    with pytest.raises(CoordinatorLoadInProgressError):
        ProducerIdManager(0, LosingStore()).generate_producer_id()
    store = InMemoryProducerIdBlockStore()
    store.set_producer_id_block(encode_producer_id_block(ProducerIdsBlock(0, LONG_MAX - 1500, 1000)), -1)
    with pytest.raises(UnknownServerError, match="exhausted"):
        ProducerIdManager(0, store).generate_producer_id()
