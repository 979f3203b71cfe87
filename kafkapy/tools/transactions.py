"""`kafkapy transactions` logic (Kafka's TransactionsCommand / kafka-transactions.sh): list, describe,
describe-producers, abort and find-hanging, over an AdminClient. Each command returns rows of Kafka's
columns (`*_HEADERS`); `pretty_table` lays them out as Kafka does (each cell left-aligned to its column's
widest value, then a tab). Failures raise TransactionsError with Kafka's message (printed bare, exit 1).
Thread-safety: one call per command, caller's thread.
"""

from __future__ import annotations

from collections.abc import Sequence
from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.common.errors import KafkaError, TransactionalIdNotFoundError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools import ToolFailure

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

LIST_HEADERS = ("TransactionalId", "Coordinator", "ProducerId", "TransactionState")
DESCRIBE_HEADERS = ("CoordinatorId", "TransactionalId", "ProducerId", "ProducerEpoch", "TransactionState",
                    "TransactionTimeoutMs", "CurrentTransactionStartTimeMs", "TransactionDurationMs",
                    "TopicPartitions")
PRODUCERS_HEADERS = ("ProducerId", "ProducerEpoch", "LatestCoordinatorEpoch", "LastSequence", "LastTimestamp",
                     "CurrentTransactionStartOffset")
HANGING_HEADERS = ("Topic", "Partition", "ProducerId", "ProducerEpoch", "CoordinatorEpoch", "StartOffset",
                   "LastTimestamp", "Duration(min)")
MAX_BATCH_SIZE = 500


class TransactionsError(ToolFailure):
    """A Kafka printErrorAndExit: the message is printed as is on stderr, exit 1."""


def _fail(message: str, error: BaseException | None = None) -> TransactionsError:
    if error is None:
        return TransactionsError(message)
    text = (error.message if isinstance(error, KafkaError) else None) or str(error) or type(error).__name__
    return TransactionsError(f"{message}: {text}. Enable debug logging for additional detail.")


def pretty_table(headers: Sequence[str], rows: Sequence[Sequence[str]]) -> list[str]:
    widths = [len(h) for h in headers]
    for row in rows:
        widths = [max(w, len(c)) for w, c in zip(widths, row, strict=True)]
    return ["".join(c.ljust(w) + "\t" for c, w in zip(row, widths, strict=True)) for row in [headers, *rows]]


@dataclass(frozen=True)
class TableResult:
    headers: tuple[str, ...]
    rows: Sequence[tuple[Any, ...]]

    def __json__(self) -> list[dict[str, Any]]:
        """Rows keyed by Kafka's column names, typed: numbers as numbers, "None" as null, TopicPartitions a list."""
        return [{h: _typed(h, c) for h, c in zip(self.headers, row, strict=True)} for row in self.rows]


_TEXT_COLUMNS = frozenset({"TransactionalId", "TransactionState", "Topic"})


def _typed(header: str, cell: str) -> Any:
    if header in _TEXT_COLUMNS:
        return cell
    if header == "TopicPartitions":
        return cell.split(",") if cell else []
    if cell == "None":
        return None
    try:
        return int(cell)
    except ValueError:
        return cell


def list_transactions(admin: AdminClient) -> TableResult:
    try:
        by_broker = admin.list_transactions()
    except KafkaError as e:
        raise _fail("Failed to list transactions", e) from e
    rows = [(t.transactional_id, str(broker), str(t.producer_id), t.state)
            for broker, listings in by_broker.items() for t in listings]
    return TableResult(LIST_HEADERS, rows)


def describe_transaction(admin: AdminClient, transactional_id: str, now_ms: int) -> TableResult:
    result = admin.describe_transactions([transactional_id])[transactional_id]
    if isinstance(result, BaseException):
        raise _fail(f"Failed to describe transaction state of transactional-id `{transactional_id}`", result)
    if result.transaction_start_time_ms is not None:
        start, duration = str(result.transaction_start_time_ms), str(now_ms - result.transaction_start_time_ms)
    else:
        start = duration = "None"
    row = (str(result.coordinator_id), transactional_id, str(result.producer_id), str(result.producer_epoch),
           result.state, str(result.transaction_timeout_ms), start, duration,
           ",".join(str(tp) for tp in result.topic_partitions))
    return TableResult(DESCRIBE_HEADERS, [row])


def _producers(admin: AdminClient, tp: TopicPartition, broker_id: int | None) -> list[Any]:
    result = admin.describe_producers([tp], broker_id=broker_id)[tp]
    if isinstance(result, BaseException):
        where = f"broker {broker_id}" if broker_id is not None else "leader"
        raise _fail(f"Failed to describe producers for partition {tp} on {where}", result)
    return list(result)


def describe_producers(admin: AdminClient, tp: TopicPartition, broker_id: int | None = None) -> TableResult:
    rows = [(str(p.producer_id), str(p.producer_epoch),
             str(p.coordinator_epoch if p.coordinator_epoch is not None else -1), str(p.last_sequence),
             str(p.last_timestamp),
             str(p.current_transaction_start_offset) if p.current_transaction_start_offset is not None else "None")
            for p in _producers(admin, tp, broker_id)]
    return TableResult(PRODUCERS_HEADERS, rows)


def abort_transaction(admin: AdminClient, tp: TopicPartition, start_offset: int | None, producer_id: int | None,
                      producer_epoch: int | None, coordinator_epoch: int | None) -> Any:
    """Abort the open transaction starting at start_offset (or the one given by producer id, epoch and
    coordinator epoch, for brokers before 3.0). Returns the AbortTransactionSpec used."""
    from kafkapy.client.admin_transactions import AbortTransactionSpec

    if start_offset is None and producer_id is None:
        raise _fail("The transaction to abort must be identified either with --start-offset (for brokers on 3.0 "
                    "or above) or with --producer-id, --producer-epoch, and --coordinator-epoch (for older brokers)")
    if start_offset is None:
        if producer_epoch is None:
            raise _fail("Missing required argument --producer-epoch")
        if coordinator_epoch is None:
            raise _fail("Missing required argument --coordinator-epoch")
        spec = AbortTransactionSpec(tp, producer_id or 0, producer_epoch, max(0, coordinator_epoch))
    else:
        found = next((p for p in _producers(admin, tp, None) if p.current_transaction_start_offset == start_offset),
                     None)
        if found is None:
            raise _fail(f"Could not find any open transactions starting at offset {start_offset} on partition {tp}")
        spec = AbortTransactionSpec(tp, found.producer_id, found.producer_epoch,
                                    found.coordinator_epoch if found.coordinator_epoch is not None else 0)
    try:
        admin.abort_transaction(spec)
    except KafkaError as e:
        raise _fail(f"Failed to abort transaction {spec}", e) from e
    return spec


def find_hanging(admin: AdminClient, broker_id: int | None, topic: str | None, partition: int | None,
                 max_transaction_timeout_min: int, now_ms: int) -> TableResult:
    """Open transactions older than the max timeout whose coordinator no longer lists their partition."""
    if topic is None and broker_id is None:
        raise _fail("The `find-hanging` command requires either --topic or --broker-id to limit the scope of the "
                    "search")
    if partition is not None and topic is None:
        raise _fail("The --partition argument requires --topic to be provided")
    max_ms = max_transaction_timeout_min * 60_000
    partitions = _partitions_to_search(admin, broker_id, topic, partition)
    candidates: list[tuple[TopicPartition, Any]] = []
    for i in range(0, len(partitions), MAX_BATCH_SIZE):
        batch = partitions[i:i + MAX_BATCH_SIZE]
        try:
            states = admin.describe_producers(batch, broker_id=broker_id)
        except KafkaError as e:
            raise _fail(f"Failed to describe producers for {len(batch)} partitions on broker {broker_id}", e) from e
        for tp, producers in states.items():
            if isinstance(producers, BaseException):
                raise _fail(f"Failed to describe producers for {len(batch)} partitions on broker {broker_id}",
                            producers)
            candidates += [(tp, p) for p in producers if p.current_transaction_start_offset is not None
                           and now_ms - p.last_timestamp > max_ms]
    hanging: list[tuple[TopicPartition, Any]] = []
    if candidates:
        pids = {p.producer_id for _, p in candidates}
        try:
            listings = [t for ls in admin.list_transactions(producer_id_filters=pids).values() for t in ls]
        except KafkaError as e:
            raise _fail(f"Failed to list transactions for {len(pids)} producers", e) from e
        ids = {t.producer_id: t.transactional_id for t in listings if t.producer_id in pids}
        descriptions = admin.describe_transactions(set(ids.values())) if ids else {}
        for tp, p in candidates:
            tid = ids.get(p.producer_id)
            d = descriptions.get(tid) if tid is not None else None
            if isinstance(d, TransactionalIdNotFoundError):
                d = None
            elif isinstance(d, BaseException):
                raise _fail(f"Failed to describe {len(ids)} transactions", d)
            if d is None or tp not in d.topic_partitions:
                hanging.append((tp, p))
    rows = [(tp.topic, str(tp.partition), str(p.producer_id), str(p.producer_epoch),
             str(p.coordinator_epoch if p.coordinator_epoch is not None else -1),
             str(p.current_transaction_start_offset), str(p.last_timestamp), str((now_ms - p.last_timestamp) // 60_000))
            for tp, p in hanging]
    return TableResult(HANGING_HEADERS, rows)


def _partitions_to_search(admin: AdminClient, broker_id: int | None, topic: str | None,
                          partition: int | None) -> list[TopicPartition]:
    if topic is not None and partition is not None:
        return [TopicPartition(topic, partition)]
    try:
        topics = [topic] if topic is not None else sorted(admin.list_topics())
        described = admin.describe_topics(topics, raise_errors=False)
    except KafkaError as e:
        raise _fail(f"Failed to describe {len(topic and [topic] or [])} topics", e) from e
    out = []
    for name in topics:
        d = described[name]
        if d.error is not None:
            raise _fail(f"Failed to describe {len(topics)} topics", d.error)
        for p in d.partitions:
            if broker_id is None or broker_id in p.replica_ids:
                out.append(TopicPartition(name, p.partition))
    return out
