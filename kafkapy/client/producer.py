"""KafkaProducer: Kafka's producer API over the RecordAccumulator and the Sender thread.

`send(topic, value, key=None, headers=None, partition=None, timestamp=None, callback=None)`
returns a FutureRecordMetadata (the concurrent.futures.Future API: result/exception/done/
add_done_callback) resolving to RecordMetadata(topic, partition, offset, timestamp). Records are
appended to per-partition batches (batch.size / linger.ms, compressed with compression.type via
record/), and the Sender thread ships them in Produce requests with acks 0 / 1 / all.
`callback(metadata, exception)` runs on the Sender thread, in send order per partition.

Keys, values and header values are bytes (str is UTF-8 encoded; key.serializer / value.serializer
may be callables `f(topic, data) -> bytes`).

Transactions (transactional.id set): `init_transactions()`, `begin_transaction()`,
`send_offsets_to_transaction(offsets, group_metadata)`, `commit_transaction()`, `abort_transaction()`, as
Kafka's producer: the state machine and the transactional requests are the TransactionManager's
(client/transaction_manager.py), sent by the Sender thread; each call waits up to max.block.ms (or its
`timeout` in seconds). ProducerFencedError (another producer took the transactional.id) is fatal: only
close() is left.

Thread-safety: send/flush/close may be called from any thread (as with the Java producer).
"""

from __future__ import annotations

import logging
import threading
from collections.abc import Callable, Iterable, Mapping
from typing import Any

from kafkapy.client.config import ProducerConfig
from kafkapy.client.errors import KafkaTimeoutError
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.partitioner import BuiltInPartitioner, partition_for_key
from kafkapy.client.record_accumulator import (
    Callback,
    FutureRecordMetadata,
    RecordAccumulator,
    RecordMetadata,
)
from kafkapy.client.sender import Sender
from kafkapy.client.transaction_manager import (
    ConsumerGroupMetadata,
    IllegalStateError,
    TransactionalRequestResult,
    TransactionManager,
)
from kafkapy.common.errors import KafkaError, MessageTooLargeError, UnknownTopicOrPartitionError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.record.compression import CompressionType
from kafkapy.record.default_record import estimate_record_size_upper_bound
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

log = logging.getLogger(__name__)

__all__ = ["KafkaProducer", "Producer", "RecordMetadata", "FutureRecordMetadata"]

_client_ids = iter(range(1, 1 << 62))
_client_ids_lock = threading.Lock()



def _to_bytes(v: Any) -> bytes | None:
    if v is None or isinstance(v, bytes):
        return v
    if isinstance(v, str):
        return v.encode("utf-8")
    if isinstance(v, bytearray | memoryview):
        return bytes(v)
    raise TypeError(f"expected bytes, str or None, got {type(v).__name__}")


class KafkaProducer:
    def __init__(self, configs: Mapping[str, Any] | None = None, time: Time = SYSTEM, **overrides: Any) -> None:
        self.config = ProducerConfig(configs, **overrides)
        cfg = self.config
        if not cfg["client.id"]:
            with _client_ids_lock:
                n = next(_client_ids)
            cfg._values["client.id"] = f"producer-{n}"
        self._time = time
        self.client = NetworkClient(cfg, time)
        self.client.metadata.metadata_max_age_ms = int(cfg["metadata.max.age.ms"])
        self._partitioner = cfg["partitioner.class"] if callable(cfg["partitioner.class"]) else None
        self._builtin = BuiltInPartitioner(int(cfg["batch.size"]), bool(cfg["partitioner.ignore.keys"]))
        self._key_serializer: Callable[[str, Any], bytes | None] | None = (
            cfg["key.serializer"] if callable(cfg["key.serializer"]) else None
        )
        self._value_serializer: Callable[[str, Any], bytes | None] | None = (
            cfg["value.serializer"] if callable(cfg["value.serializer"]) else None
        )
        codec = CompressionType.from_name(cfg["compression.type"])
        level = {
            CompressionType.GZIP: cfg["compression.gzip.level"],
            CompressionType.LZ4: cfg["compression.lz4.level"],
            CompressionType.ZSTD: cfg["compression.zstd.level"],
        }.get(codec)
        if level is not None and codec == CompressionType.GZIP and level < 0:
            level = None
        self.max_block_ms = int(cfg["max.block.ms"])
        self.max_request_size = int(cfg["max.request.size"])
        self.accumulator = RecordAccumulator(
            batch_size=int(cfg["batch.size"]),
            linger_ms=int(cfg["linger.ms"]),
            compression=codec,
            compression_level=level,
            retry_backoff_ms=int(cfg["retry.backoff.ms"]),
            delivery_timeout_ms=int(cfg["delivery.timeout.ms"]),
            buffer_memory=int(cfg["buffer.memory"]),
            time=time,
        )
        # A compressed batch may hold more uncompressed bytes than batch.size, never more than a request.
        self.accumulator.max_uncompressed_bytes = max(int(cfg["batch.size"]), self.max_request_size - 1024)
        tid = cfg["transactional.id"]
        self.transaction_manager = TransactionManager(
            tid, int(cfg["transaction.timeout.ms"]), int(cfg["retry.backoff.ms"])) if tid else None
        self.sender = Sender(
            self.client,
            self.accumulator,
            acks=int(cfg["acks"]),
            retries=int(cfg["retries"]),
            request_timeout_ms=int(cfg["request.timeout.ms"]),
            max_request_size=self.max_request_size,
            max_in_flight=int(cfg["max.in.flight.requests.per.connection"]),
            idempotent=bool(cfg["enable.idempotence"]),
            idempotence_explicit=cfg.is_set("enable.idempotence"),
            transaction_timeout_ms=int(cfg["transaction.timeout.ms"]),
            time=time,
            name=f"kafka-producer-network-thread | {cfg['client.id']}",
            transaction_manager=self.transaction_manager,
        )
        self._closed = False
        self.sender.start()

    # ------------------------------------------------------------------------------------------
    # transactions

    def _transactions(self) -> TransactionManager:
        if self.transaction_manager is None:
            raise IllegalStateError("Cannot use transactional methods without enabling transactions by setting "
                                    "the transactional.id configuration property")
        if self._closed:
            raise IllegalStateError("Cannot perform operation after producer has been closed")
        return self.transaction_manager

    def _await(self, result: TransactionalRequestResult, timeout: float | None) -> None:
        self.sender.wakeup()
        result.await_(self.max_block_ms if timeout is None else timeout * 1000)

    def init_transactions(self, timeout: float | None = None) -> None:
        """Register transactional.id with its coordinator (fencing older producers with the same id and
        completing their open transaction) and take its producer id and epoch."""
        self._await(self._transactions().initialize_transactions(), timeout)

    def begin_transaction(self) -> None:
        self._transactions().begin_transaction()

    def send_offsets_to_transaction(
        self, offsets: Mapping[TopicPartition, Any], group_metadata: ConsumerGroupMetadata | str | Any,
        timeout: float | None = None,
    ) -> None:
        """Commit the consumer group's offsets ({tp: offset | OffsetAndMetadata}) as part of the transaction
        (AddOffsetsToTxn, then TxnOffsetCommit to the group coordinator). group_metadata: a group id, a
        ConsumerGroupMetadata, or anything with group_id (+ generation_id, member_id, group_instance_id)."""
        if isinstance(group_metadata, str):
            group = ConsumerGroupMetadata(group_metadata)
        elif isinstance(group_metadata, ConsumerGroupMetadata):
            group = group_metadata
        else:
            group = ConsumerGroupMetadata(
                group_metadata.group_id, getattr(group_metadata, "generation_id", -1),
                getattr(group_metadata, "member_id", "") or "", getattr(group_metadata, "group_instance_id", None))
        self._await(self._transactions().send_offsets_to_transaction(offsets, group), timeout)

    def commit_transaction(self, timeout: float | None = None) -> None:
        """Flush, then commit (EndTxn); raises the error of a failed send (then abort) or ProducerFencedError."""
        self._await(self._transactions().begin_commit(), timeout)

    def abort_transaction(self, timeout: float | None = None) -> None:
        """Drop what was not sent, wait for what is in flight, then abort (EndTxn)."""
        self._await(self._transactions().begin_abort(), timeout)

    # ------------------------------------------------------------------------------------------

    def partitions_for(self, topic: str, timeout_ms: int | None = None) -> list[int]:
        """The topic's partition ids (fetching metadata, waiting up to max.block.ms)."""
        self._wait_on_metadata(topic, None, self.max_block_ms if timeout_ms is None else timeout_ms)
        return [p.partition for p in self.client.cluster.partitions_for_topic(topic)]

    def _wait_on_metadata(self, topic: str, partition: int | None, max_wait_ms: int) -> int:
        metadata = self.client.metadata
        metadata.add_topics(topic)
        count = metadata.cluster.partition_count(topic)
        if count is not None and (partition is None or partition < count):
            return count
        deadline = self._time.milliseconds() + max_wait_ms
        while True:
            remaining = deadline - self._time.milliseconds()
            if remaining <= 0:
                if count is not None and partition is not None:
                    raise KafkaTimeoutError(
                        f"Partition {partition} of topic {topic} with partition count {count} is not present "
                        f"in metadata after {max_wait_ms} ms."
                    )
                raise KafkaTimeoutError(f"Topic {topic} not present in metadata after {max_wait_ms} ms.")
            try:
                cluster = self.client.update_metadata(sorted(metadata.topics), remaining, allow_auto_topic_creation=True)
            except KafkaError as e:
                if not e.retriable and not isinstance(e, KafkaTimeoutError):
                    raise
                cluster = metadata.cluster
            t = cluster.topic(topic)
            if t is not None and t.error_code and t.error_code not in (3, 5):
                from kafkapy.client.errors import error_from_code

                raise error_from_code(t.error_code, f"topic {topic}")
            count = cluster.partition_count(topic)
            if count is not None and (partition is None or partition < count):
                return count
            self._time.sleep(min(self.client.retry_backoff_ms, max(deadline - self._time.milliseconds(), 0)))

    def send(
        self,
        topic: str,
        value: Any = None,
        key: Any = None,
        headers: Iterable[tuple[str, Any]] | Mapping[str, Any] | None = None,
        partition: int | None = None,
        timestamp: int | None = None,
        callback: Callback | None = None,
    ) -> FutureRecordMetadata:
        if self._closed:
            raise KafkaError("Cannot perform operation after producer has been closed")
        if self._key_serializer is not None:
            key_b = self._key_serializer(topic, key)
        else:
            key_b = key if key is None or type(key) is bytes else _to_bytes(key)
        if self._value_serializer is not None:
            value_b = self._value_serializer(topic, value)
        else:
            value_b = value if value is None or type(value) is bytes else _to_bytes(value)
        if headers:
            items = headers.items() if isinstance(headers, Mapping) else headers
            hdrs = [(k, _to_bytes(v)) for k, v in items]
        else:
            hdrs = []
        cluster = self.client.metadata.cluster
        count = cluster.partition_count(topic)
        if count is None or (partition is not None and partition >= count):
            count = self._wait_on_metadata(topic, partition, self.max_block_ms)
            cluster = self.client.metadata.cluster
        if partition is None:
            if self._partitioner is not None:
                partition = int(self._partitioner(topic, key_b, count))
            elif key_b is not None and not self._builtin.ignore_keys:
                partition = partition_for_key(key_b, count)
            else:
                partition = self._builtin.partition(topic, key_b, count, cluster.available_partitions(topic))
        elif partition < 0:
            raise UnknownTopicOrPartitionError(f"Invalid partition given with record: {partition}")
        size = estimate_record_size_upper_bound(key_b, value_b, hdrs)
        if size + 61 > self.max_request_size:
            raise MessageTooLargeError(
                f"The message is {size + 61} bytes when serialized which is larger than {self.max_request_size}, "
                "which is the value of the max.request.size configuration."
            )
        if timestamp is None:
            timestamp = self._time.milliseconds()
        tp = TopicPartition(topic, partition)
        if self.transaction_manager is not None:
            self.transaction_manager.maybe_add_partition(tp)
        fut, full, new_batch = self.accumulator.append(
            tp, timestamp, key_b, value_b, hdrs, callback, self.max_block_ms, size
        )
        if self._partitioner is None and (key_b is None or self._builtin.ignore_keys):
            self._builtin.update_partition_info(topic, partition, size, count, cluster.available_partitions(topic))
        if full or new_batch:
            self.sender.wakeup()
        return fut

    def batch_builder(self) -> MemoryRecordsBuilder:
        """An empty builder with this producer's compression.type (and level), for send_batch."""
        acc = self.accumulator
        return MemoryRecordsBuilder(compression=acc.compression, compression_level=acc.compression_level)

    def send_batch(
        self, topic: str, partition: int, builder: MemoryRecordsBuilder, timestamp: int,
        callback: Callback | None = None,
    ) -> FutureRecordMetadata:
        """Send a whole batch of records encoded by the caller (MemoryRecordsBuilder.append_encoded) to
        one partition: per-batch work for columnar writers. Retries, acks, idempotence and compression
        (the builder's codec) are the producer's; the callback gets the first record's metadata."""
        if self._closed:
            raise KafkaError("Cannot perform operation after producer has been closed")
        count = self.client.metadata.cluster.partition_count(topic)
        if count is None or partition >= count:
            self._wait_on_metadata(topic, partition, self.max_block_ms)
        if builder.uncompressed_bytes > self.max_request_size:
            raise MessageTooLargeError(
                f"The message is {builder.uncompressed_bytes} bytes when serialized which is larger than "
                f"{self.max_request_size}, which is the value of the max.request.size configuration."
            )
        if self.transaction_manager is not None:
            self.transaction_manager.maybe_add_partition(TopicPartition(topic, partition))
        fut = self.accumulator.append_batch(
            TopicPartition(topic, partition), builder, timestamp, callback, self.max_block_ms
        )
        self.sender.wakeup()
        return fut

    def flush(self, timeout: float | None = None) -> None:
        """Send everything buffered now and wait until every sent record is complete."""
        self.accumulator.begin_flush()
        try:
            self.sender.wakeup()
            deadline = None if timeout is None else self._time.milliseconds() + timeout * 1000
            for batch in self.accumulator.incomplete_batches():
                remaining = None if deadline is None else max(0.0, (deadline - self._time.milliseconds()) / 1000)
                if not batch.result.wait(remaining):
                    raise KafkaTimeoutError(f"Failed to flush accumulated records within {timeout} s")
        finally:
            self.accumulator.end_flush()

    def close(self, timeout: float | None = None) -> None:
        """Send what is buffered (within timeout seconds, forever if None), then stop the Sender."""
        if self._closed:
            return
        self._closed = True
        if timeout is not None and timeout <= 0:
            self.sender.force_close()
        else:
            self.sender.initiate_close()
        self.sender.join(timeout)
        if self.sender.is_alive():
            self.sender.force_close()
            self.sender.join(5)
        self.client.close()

    def metrics(self) -> dict[str, Any]:
        return {}

    def __enter__(self) -> KafkaProducer:
        return self

    def __exit__(self, *exc: Any) -> None:
        self.close()


Producer = KafkaProducer
