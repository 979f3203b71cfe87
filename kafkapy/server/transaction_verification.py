"""Produce-side transaction verification: Kafka 3.9's `transaction.partition.verification.enable` (KIP-890 part 1).

A transactional batch may only open a transaction on a partition the transaction coordinator has added to that
producer's ongoing transaction (AddPartitionsToTxn). Without this check a batch carrying the isTransactional bit
with a made-up producer id, or one sent without AddPartitionsToTxn, opens a transaction nobody will ever end: the
partition's last stable offset stays there and read_committed consumers stop for good. As Kafka's ReplicaManager:
a partition whose log already has an ongoing transaction of this (producer id, epoch) needs no verification; the
others are asked of the coordinator (`handle_verify_partitions_in_transaction`, the verify_only AddPartitionsToTxn
answer) and a refusal becomes the partition's produce error: not in the transaction -> INVALID_TXN_STATE ("Partition
was not added to the transaction"; TRANSACTION_ABORTABLE for Produce v11+), PRODUCER_FENCED -> INVALID_PRODUCER_EPOCH,
a coordinator that is busy or loading -> NOT_ENOUGH_REPLICAS (which every client retries).

Reads only the batch header: producerId (int64 at byte 43) and producerEpoch (int16 at 51) of a magic-2 batch whose
attributes (int16 at 21) carry the transactional bit 0x10. No record is parsed; no Python object per record.

The coordinator is asked in-process when it is this broker; when it is another broker (cluster mode), through the
AddPartitionsToTxnManager (an AddPartitionsToTxn v4 verify_only request on the inter-broker listener), and the
produce request waits for that answer without holding a handler thread.

Thread-safety: stateless; called from request handler threads (the coordinator and the producer state manager keep
their own locking).
"""

from __future__ import annotations

import struct
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkapy.common.errors import ErrorCode
from kafkapy.common.internal_topics import TRANSACTION_STATE_TOPIC_NAME
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.batch_header import (
    ATTRIBUTES_OFFSET,
    MAGIC_OFFSET,
    PRODUCER_ID_OFFSET,
    RECORD_BATCH_OVERHEAD,
    TRANSACTIONAL_FLAG_MASK,
)
from kafkapy.server.partition_response import PartitionResponse

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices

_ATTRIBUTES = struct.Struct(">h")
_PRODUCER = struct.Struct(">qh")  # producerId, producerEpoch: adjacent in the header
_RETRIABLE = frozenset({ErrorCode.CONCURRENT_TRANSACTIONS, ErrorCode.NETWORK_EXCEPTION,
                        ErrorCode.COORDINATOR_LOAD_IN_PROGRESS, ErrorCode.COORDINATOR_NOT_AVAILABLE,
                        ErrorCode.NOT_COORDINATOR})


def transactional_producer(records: Any) -> tuple[int, int] | None:
    """(producer id, epoch) of a transactional magic-2 first batch, else None."""
    if records is None or len(records) < RECORD_BATCH_OVERHEAD or records[MAGIC_OFFSET] < 2:
        return None
    if not _ATTRIBUTES.unpack_from(records, ATTRIBUTES_OFFSET)[0] & TRANSACTIONAL_FLAG_MASK:
        return None
    pid, epoch = _PRODUCER.unpack_from(records, PRODUCER_ID_OFFSET)
    return pid, epoch


def _has_ongoing_transaction(services: BrokerServices, tp: TopicPartition, pid: int, epoch: int) -> bool:
    try:
        log = services.replica_manager.get_leader_partition_or_error(tp).log
    except Exception:  # noqa: BLE001 - not the leader: the append answers that error itself
        return True
    if log is None:
        return True
    entry = log.producer_state_manager.last_entry(pid)
    return entry is not None and entry.producer_epoch == epoch and entry.current_txn_first_offset >= 0


def _coordinator_id(services: BrokerServices, coordinator: Any, transactional_id: str) -> int | None:
    """The broker leading the transactional id's __transaction_state partition (None: not known)."""
    state = services.metadata_cache.get_partition_state(
        TopicPartition(TRANSACTION_STATE_TOPIC_NAME, coordinator.partition_for(transactional_id)))
    return None if state is None or state.leader < 0 else int(state.leader)


def produce_error(code: int, version: int) -> PartitionResponse:
    if code == ErrorCode.TRANSACTION_ABORTABLE and version < 11:
        code = ErrorCode.INVALID_TXN_STATE
    if code == ErrorCode.INVALID_TXN_STATE:
        return PartitionResponse(code, error_message="Partition was not added to the transaction")
    if code == ErrorCode.PRODUCER_FENCED:
        return PartitionResponse(ErrorCode.INVALID_PRODUCER_EPOCH)
    if code in _RETRIABLE:
        return PartitionResponse(ErrorCode.NOT_ENOUGH_REPLICAS, error_message=(
            "Unable to verify the partition has been added to the transaction. Underlying error: "
            f"{ErrorCode(code).name}"))
    return PartitionResponse(code)


Refusals = dict[TopicPartition, PartitionResponse]


def verify_transaction_partitions(services: BrokerServices, transactional_id: str | None,
                                  entries: dict[TopicPartition, Any], version: int,
                                  then: Callable[[Refusals], None]) -> None:
    """Call `then(refusals)` once with the partitions of `entries` (records per partition) whose transactional batch
    the coordinator does not vouch for, each with its produce error: at once when nothing needs asking or the
    coordinator is this broker's, else from the AddPartitionsToTxnManager's thread when the other broker answers."""
    coordinator = services.transaction_coordinator
    if transactional_id is None or coordinator is None or \
            not services.config.get_bool("transaction.partition.verification.enable"):
        then({})
        return
    wanted: dict[tuple[int, int], set[TopicPartition]] = {}
    for tp, records in entries.items():
        producer = transactional_producer(records)
        if producer is not None and not _has_ongoing_transaction(services, tp, *producer):
            wanted.setdefault(producer, set()).add(tp)
    if not wanted:
        then({})
        return
    if len(wanted) > 1:  # Kafka: "Transactional records contained more than one producer ID"
        then({tp: PartitionResponse(ErrorCode.INVALID_PRODUCER_ID_MAPPING) for tp in entries})
        return
    (pid, epoch), partitions = next(iter(wanted.items()))

    def refusals(codes: dict[TopicPartition, int]) -> Refusals:
        return {tp: produce_error(code, version) for tp, code in codes.items() if code}

    coordinator_id = _coordinator_id(services, coordinator, transactional_id)
    manager = services.add_partitions_to_txn_manager
    if coordinator_id is None:
        then(refusals(dict.fromkeys(partitions, ErrorCode.COORDINATOR_NOT_AVAILABLE)))
    elif coordinator_id == services.broker_id:
        then(refusals(coordinator.handle_verify_partitions_in_transaction(transactional_id, pid, epoch, partitions)))
    elif manager is None:  # no inter-broker path to ask on (a broker built without one): not verified
        then({})
    else:
        manager.verify(coordinator_id, transactional_id, pid, epoch, partitions,
                       lambda codes: then(refusals(codes)))
