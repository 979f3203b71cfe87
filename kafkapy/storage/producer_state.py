"""Per-producer state of one partition (Kafka's ProducerStateEntry, BatchMetadata, ProducerAppendInfo).

A ProducerStateEntry remembers a producer's epoch, the metadata of its last five data batches (sequence
range and offsets: duplicates of any of them are answered with the original offsets), the coordinator
epoch of its last transaction marker, and the first offset of its open transaction. ProducerAppendInfo
validates the batches of one append against a working copy of the entry, as Kafka does: epochs may not
go back (INVALID_PRODUCER_EPOCH), sequences of client batches must follow on (OUT_OF_ORDER_SEQUENCE_NUMBER),
markers may not come from an older coordinator (TRANSACTION_COORDINATOR_FENCED), and a non-transactional
batch may not land inside an open transaction (INVALID_TXN_STATE). Works per batch, never per record.
No byte format (snapshots are in producer_state_manager.py). Not thread-safe: used under the Log lock.
"""

from __future__ import annotations

from collections import deque
from dataclasses import dataclass, field
from typing import NamedTuple

from kafkapy.common.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from kafkapy.record.control_record import ControlRecordType, EndTransactionMarker

__all__ = ["BatchMetadata", "ProducerStateEntry", "ProducerAppendInfo", "TxnMetadata", "CompletedTxn",
           "NUM_BATCHES_TO_RETAIN", "NO_SEQUENCE", "NO_PRODUCER_EPOCH", "APPEND_ORIGIN_CLIENT",
           "APPEND_ORIGIN_REPLICATION", "APPEND_ORIGIN_COORDINATOR"]

NUM_BATCHES_TO_RETAIN = 5
NO_SEQUENCE = -1
NO_PRODUCER_EPOCH = -1
_INT32_MAX = 2**31 - 1
APPEND_ORIGIN_CLIENT = "client"
APPEND_ORIGIN_COORDINATOR = "coordinator"
APPEND_ORIGIN_REPLICATION = "replication"


def _decrease_sequence(sequence: int, decrement: int) -> int:
    if sequence < decrement:
        return _INT32_MAX - (decrement - sequence) + 1
    return sequence - decrement


class BatchMetadata(NamedTuple):
    last_seq: int
    last_offset: int
    offset_delta: int
    timestamp: int

    @property
    def first_seq(self) -> int:
        return _decrease_sequence(self.last_seq, self.offset_delta)

    @property
    def first_offset(self) -> int:
        return self.last_offset - self.offset_delta


@dataclass(slots=True)
class ProducerStateEntry:
    producer_id: int
    producer_epoch: int = NO_PRODUCER_EPOCH
    coordinator_epoch: int = -1
    last_timestamp: int = -1
    current_txn_first_offset: int = -1  # -1: no open transaction
    batch_metadata: deque[BatchMetadata] = field(default_factory=lambda: deque(maxlen=NUM_BATCHES_TO_RETAIN))

    @property
    def first_seq(self) -> int:
        return self.batch_metadata[0].first_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_seq(self) -> int:
        return self.batch_metadata[-1].last_seq if self.batch_metadata else NO_SEQUENCE

    @property
    def last_data_offset(self) -> int:
        return self.batch_metadata[-1].last_offset if self.batch_metadata else -1

    @property
    def last_offset_delta(self) -> int:
        return self.batch_metadata[-1].offset_delta if self.batch_metadata else 0

    def copy(self) -> ProducerStateEntry:
        return ProducerStateEntry(self.producer_id, self.producer_epoch, self.coordinator_epoch, self.last_timestamp,
                                  self.current_txn_first_offset,
                                  deque(self.batch_metadata, maxlen=NUM_BATCHES_TO_RETAIN))

    def maybe_update_producer_epoch(self, epoch: int) -> bool:
        if self.producer_epoch != epoch:
            self.batch_metadata.clear()
            self.producer_epoch = epoch
            return True
        return False

    def add_batch(self, epoch: int, last_seq: int, last_offset: int, offset_delta: int, timestamp: int) -> None:
        self.maybe_update_producer_epoch(epoch)
        self.batch_metadata.append(BatchMetadata(last_seq, last_offset, offset_delta, timestamp))
        self.last_timestamp = timestamp

    def find_duplicate_batch(self, epoch: int, first_seq: int, last_seq: int) -> BatchMetadata | None:
        if epoch != self.producer_epoch:
            return None
        for m in self.batch_metadata:
            if m.first_seq == first_seq and m.last_seq == last_seq:
                return m
        return None


@dataclass(slots=True)
class TxnMetadata:
    producer_id: int
    first_offset: int
    last_offset: int = -1  # the marker's offset once completed


class CompletedTxn(NamedTuple):
    producer_id: int
    first_offset: int
    last_offset: int
    is_aborted: bool


def _in_sequence(last_seq: int, next_seq: int) -> bool:
    return next_seq == last_seq + 1 or (next_seq == 0 and last_seq == _INT32_MAX)


class ProducerAppendInfo:
    """The batches of one append from one producer, checked against a working copy of its entry."""

    __slots__ = ("topic_partition", "producer_id", "current_entry", "origin", "updated_entry", "started_txns")

    def __init__(self, topic_partition: object, producer_id: int, current_entry: ProducerStateEntry | None,
                 origin: str) -> None:
        self.topic_partition = topic_partition
        self.producer_id = producer_id
        self.current_entry = current_entry or ProducerStateEntry(producer_id)
        self.origin = origin
        self.updated_entry = self.current_entry.copy()
        self.started_txns: list[TxnMetadata] = []

    def _check_producer_epoch(self, epoch: int, offset: int) -> None:
        if epoch < self.updated_entry.producer_epoch and self.origin != APPEND_ORIGIN_REPLICATION:
            raise InvalidProducerEpochError(
                f"Epoch of producer {self.producer_id} at offset {offset} in {self.topic_partition} is {epoch}, "
                f"which is smaller than the last seen epoch {self.updated_entry.producer_epoch}")

    def _check_sequence(self, epoch: int, first_seq: int, offset: int) -> None:
        entry = self.updated_entry
        if epoch != entry.producer_epoch:
            if first_seq != 0 and entry.producer_epoch != NO_PRODUCER_EPOCH:
                raise OutOfOrderSequenceNumberError(
                    f"Invalid sequence number for new epoch of producer {self.producer_id} at offset {offset} in "
                    f"partition {self.topic_partition}: {epoch} (request epoch), {first_seq} (seq. number), "
                    f"{entry.producer_epoch} (current producer epoch)")
            return
        current_last_seq = entry.last_seq
        if not (self.current_entry.producer_epoch == NO_PRODUCER_EPOCH or _in_sequence(current_last_seq, first_seq)):
            raise OutOfOrderSequenceNumberError(
                f"Out of order sequence number for producer {self.producer_id} at offset {offset} in partition "
                f"{self.topic_partition}: {first_seq} (incoming seq. number), {current_last_seq} (current end "
                f"sequence number)")

    def append_data_batch(self, epoch: int, first_seq: int, last_seq: int, last_timestamp: int, first_offset: int,
                          last_offset: int, is_transactional: bool) -> None:
        self._check_producer_epoch(epoch, first_offset)
        if self.origin == APPEND_ORIGIN_CLIENT:
            self._check_sequence(epoch, first_seq, first_offset)
        entry = self.updated_entry
        entry.add_batch(epoch, last_seq, last_offset, last_offset - first_offset, last_timestamp)
        if entry.current_txn_first_offset >= 0 and not is_transactional:
            raise InvalidTxnStateError(
                f"Expected transactional write from producer {self.producer_id} at offset {first_offset} in "
                f"partition {self.topic_partition}")
        if entry.current_txn_first_offset < 0 and is_transactional:
            entry.current_txn_first_offset = first_offset
            self.started_txns.append(TxnMetadata(self.producer_id, first_offset))

    def append_end_txn_marker(self, marker: EndTransactionMarker, epoch: int, offset: int,
                              timestamp: int) -> CompletedTxn | None:
        self._check_producer_epoch(epoch, offset)
        entry = self.updated_entry
        if entry.coordinator_epoch > marker.coordinator_epoch and self.origin != APPEND_ORIGIN_REPLICATION:
            raise TransactionCoordinatorFencedError(
                f"Invalid coordinator epoch for producer {self.producer_id} at offset {offset} in partition "
                f"{self.topic_partition}: {marker.coordinator_epoch} (zombie), {entry.coordinator_epoch} (current)")
        completed = None
        if entry.current_txn_first_offset >= 0:
            completed = CompletedTxn(self.producer_id, entry.current_txn_first_offset, offset,
                                     marker.control_type == ControlRecordType.ABORT)
        entry.maybe_update_producer_epoch(epoch)
        entry.coordinator_epoch = marker.coordinator_epoch
        entry.last_timestamp = timestamp
        entry.current_txn_first_offset = -1
        return completed
