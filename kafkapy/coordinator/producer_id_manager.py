"""ProducerIdManager: hands out producer ids from blocks reserved in the metadata store (Kafka's ZkProducerIdManager).

A broker reserves 1000 ids at a time by rewriting the latest block record with a conditional write, so
brokers sharing a store never hand out the same id and a restarted broker never reuses one (the rest of
its last block is skipped, as in Kafka). The record is Kafka's /latest_producer_id_block payload:
  {"version": 1, "broker": <broker id>, "block_start": "<first id>", "block_end": "<last id>"}
(the ids are decimal strings). The store is anything with ProducerIdBlockStore's two methods; the
server wires it to the controller's MetadataStore.
Thread-safety: generate_producer_id() may be called from any thread (one lock).
"""

from __future__ import annotations

import logging
import threading
from dataclasses import dataclass
from typing import Any, Protocol

from kafkapy.common.errors import CoordinatorLoadInProgressError, KafkaError, UnknownServerError

log = logging.getLogger("kafka.coordinator.transaction.ZkProducerIdManager")

PRODUCER_ID_BLOCK_SIZE = 1000
LONG_MAX = 2**63 - 1
_MAX_WRITE_ATTEMPTS = 50


@dataclass(frozen=True, slots=True)
class ProducerIdsBlock:
    assigned_broker_id: int
    first_producer_id: int
    size: int

    @property
    def last_producer_id(self) -> int:
        return self.first_producer_id + self.size - 1

    def next_block_first_id(self) -> int:
        return self.first_producer_id + self.size


def encode_producer_id_block(block: ProducerIdsBlock) -> dict[str, Any]:
    return {"version": 1, "broker": block.assigned_broker_id, "block_start": str(block.first_producer_id),
            "block_end": str(block.last_producer_id)}


def decode_producer_id_block(data: dict[str, Any]) -> ProducerIdsBlock:
    first = int(data["block_start"])
    last = int(data["block_end"])
    return ProducerIdsBlock(int(data["broker"]), first, last - first + 1)


class ProducerIdBlockStore(Protocol):
    def get_producer_id_block(self) -> tuple[dict[str, Any] | None, int]:
        """The stored block record and its version (-1 when there is none yet)."""

    def set_producer_id_block(self, data: dict[str, Any], expected_version: int) -> bool:
        """Write the record if its version is still expected_version (-1: create it); False if another
        writer got there first."""


class InMemoryProducerIdBlockStore:
    """A ProducerIdBlockStore in memory (tests, and brokers without a durable store)."""

    def __init__(self) -> None:
        self._lock = threading.Lock()
        self._data: dict[str, Any] | None = None
        self._version = -1

    def get_producer_id_block(self) -> tuple[dict[str, Any] | None, int]:
        with self._lock:
            return (dict(self._data) if self._data is not None else None), self._version

    def set_producer_id_block(self, data: dict[str, Any], expected_version: int) -> bool:
        with self._lock:
            if expected_version != self._version:
                return False
            self._data = dict(data)
            self._version += 1
            return True


class ProducerIdManager:
    def __init__(self, broker_id: int, store: ProducerIdBlockStore, block_size: int = PRODUCER_ID_BLOCK_SIZE) -> None:
        self.broker_id = broker_id
        self.store = store
        self.block_size = block_size
        self._lock = threading.Lock()
        self._block: ProducerIdsBlock | None = None
        self._next_id = 0

    def generate_producer_id(self) -> int:
        with self._lock:
            if self._block is None or self._next_id > self._block.last_producer_id:
                self._block = self._allocate_block()
                self._next_id = self._block.first_producer_id
            producer_id = self._next_id
            self._next_id += 1
            return producer_id

    @property
    def current_block(self) -> ProducerIdsBlock | None:
        return self._block

    def _allocate_block(self) -> ProducerIdsBlock:
        for _ in range(_MAX_WRITE_ATTEMPTS):
            try:
                data, version = self.store.get_producer_id_block()
            except KafkaError:
                raise
            except Exception as e:
                raise CoordinatorLoadInProgressError(f"Cannot read the producer id block: {e}") from None
            if data is None:
                block = ProducerIdsBlock(self.broker_id, 0, self.block_size)
            else:
                current = decode_producer_id_block(data)
                if current.last_producer_id > LONG_MAX - self.block_size:
                    log.critical("Exhausted all producerIds (current block end is %d)", current.last_producer_id)
                    raise UnknownServerError("Have exhausted all producerIds.")
                block = ProducerIdsBlock(self.broker_id, current.next_block_first_id(), self.block_size)
            try:
                written = self.store.set_producer_id_block(encode_producer_id_block(block), version)
            except Exception as e:
                raise CoordinatorLoadInProgressError(f"Cannot write the producer id block: {e}") from None
            if written:
                log.info("Acquired new producerId block %s (store version %d)", block, version)
                return block
        raise CoordinatorLoadInProgressError("Could not reserve a producer id block: too many concurrent writers.")
