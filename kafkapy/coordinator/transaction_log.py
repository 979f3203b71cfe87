"""The records of __transaction_state, in Kafka's byte format (TransactionLog.keyToBytes / valueToBytes).

Key = int16 version (0) + TransactionLogKey v0 (transactionalId). Value = int16 version + TransactionLogValue
(v0: producerId, producerEpoch, transactionTimeoutMs, transactionStatus (the state id), transaction
partitions grouped by topic, last update and start timestamps; v1 adds tagged fields, read but not
written). A Dead transactional id is written as a tombstone (null value). Both classes are generated from
Kafka's transaction-coordinator/ JSON schemas (protocol/messages/transaction_coordinator.py).
Thread-safety: stateless functions.
"""

from __future__ import annotations

import struct
from collections import defaultdict

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.coordinator.transaction_metadata import (
    NO_PRODUCER_EPOCH,
    NO_PRODUCER_ID,
    TransactionState,
    TxnTransitMetadata,
)
from kafkapy.protocol.message import ProtocolDecodeError
from kafkapy.protocol.messages.transaction_coordinator import TransactionLogKey, TransactionLogValue

__all__ = ["key_to_bytes", "value_to_bytes", "read_key", "read_value"]

KEY_VERSION = 0
VALUE_VERSION = 0
_INT16 = struct.Struct(">h")


def key_to_bytes(transactional_id: str) -> bytes:
    return _INT16.pack(KEY_VERSION) + TransactionLogKey(transactional_id=transactional_id).encode(KEY_VERSION)


def value_to_bytes(t: TxnTransitMetadata) -> bytes | None:
    if t.txn_state == TransactionState.DEAD:
        return None
    if t.txn_state == TransactionState.EMPTY and t.topic_partitions:
        raise ValueError("Transaction is not expected to have any partitions since its state is Empty")
    by_topic: dict[str, list[int]] = defaultdict(list)
    for tp in t.topic_partitions:
        by_topic[tp.topic].append(tp.partition)
    partitions = [TransactionLogValue.PartitionsSchema(topic=topic, partition_ids=sorted(ids))
                  for topic, ids in sorted(by_topic.items())]
    value = TransactionLogValue(
        producer_id=t.producer_id, producer_epoch=t.producer_epoch, transaction_timeout_ms=t.txn_timeout_ms,
        transaction_status=t.txn_state.id, transaction_partitions=partitions,
        transaction_last_update_timestamp_ms=t.txn_last_update_timestamp,
        transaction_start_timestamp_ms=t.txn_start_timestamp)
    return _INT16.pack(VALUE_VERSION) + value.encode(VALUE_VERSION)


def read_key(data: bytes | memoryview) -> str:
    """The transactional id of a key; ValueError for a key version this coordinator cannot read."""
    (version,) = _INT16.unpack_from(data, 0)
    if version != KEY_VERSION:
        raise ValueError(f"Unknown version {version} from the transaction log message key")
    try:
        return TransactionLogKey.decode(bytes(data[2:]), version).transactional_id
    except ProtocolDecodeError as e:
        raise ValueError(str(e)) from e


def read_value(data: bytes | memoryview | None) -> TxnTransitMetadata | None:
    """The transit a value records (None for a tombstone)."""
    if data is None:
        return None
    (version,) = _INT16.unpack_from(data, 0)
    lo, hi = TransactionLogValue.VALID_VERSIONS
    if not lo <= version <= hi:
        raise ValueError(f"Unknown version {version} from the transaction log message value")
    try:
        v = TransactionLogValue.decode(bytes(data[2:]), version)
    except ProtocolDecodeError as e:
        raise ValueError(str(e)) from e
    partitions = frozenset(TopicPartition(p.topic, i) for p in v.transaction_partitions or [] for i in p.partition_ids)
    return TxnTransitMetadata(
        producer_id=v.producer_id, previous_producer_id=v.previous_producer_id if version >= 1 else NO_PRODUCER_ID,
        next_producer_id=v.next_producer_id if version >= 1 else NO_PRODUCER_ID, producer_epoch=v.producer_epoch,
        last_producer_epoch=NO_PRODUCER_EPOCH, txn_timeout_ms=v.transaction_timeout_ms,
        txn_state=TransactionState.from_id(v.transaction_status), topic_partitions=partitions,
        txn_start_timestamp=v.transaction_start_timestamp_ms,
        txn_last_update_timestamp=v.transaction_last_update_timestamp_ms)
