"""Sender: the producer's I/O thread (Kafka's Sender + a minimal idempotence TransactionManager).

Loop: refresh metadata when needed, ask the RecordAccumulator which leaders have sendable
batches, drain them into one ProduceRequest per leader (many partitions per request, pipelined
up to max.in.flight.requests.per.connection), then wait on the sockets (or a wake-up pipe poked by
`send`) and complete batches from ProduceResponses. Retriable errors put batches back (with
retry.backoff.ms) until `retries` or delivery.timeout.ms run out; leader errors request a metadata
refresh.

Idempotence (enable.idempotence=true): one InitProducerId at start; each batch gets
producerId/epoch and the partition's next sequence when first drained. A retried batch keeps its
sequence and is only re-sent when nothing else of its partition is in flight, so sequences reach
the broker in order; OUT_OF_ORDER_SEQUENCE_NUMBER behind a retried batch is retried too.

Transactions (transactional.id): a TransactionManager (client/transaction_manager.py) owns the producer
id/epoch and the transaction's state; before producing, each loop sends the manager's next transactional
request (FindCoordinator, InitProducerId, AddPartitionsToTxn, AddOffsetsToTxn, TxnOffsetCommit, EndTxn) to
its coordinator and hands it the response. Batches of a transaction carry the isTransactional bit and are
only drained once their partition was added; while committing or aborting the accumulator is flushed (an
abort fails what was never sent) and EndTxn waits until every batch is complete.

Thread-safety: the Sender owns its in-flight bookkeeping; other threads only call wakeup() and
initiate_close()/force_close().
"""

from __future__ import annotations

import logging
import os
import struct
import threading
from concurrent.futures import Future
from dataclasses import dataclass, field

from kafkapy.client.errors import ClientUnsupportedVersionError, KafkaTimeoutError, error_from_code
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.record_accumulator import ProducerBatch, RecordAccumulator
from kafkapy.client.socket_wait import wait_readable
from kafkapy.client.transaction_manager import TransactionAbortedError, TransactionManager, TxnRequestHandler
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.init_producer_id import InitProducerIdRequest
from kafkapy.protocol.messages.produce import ProduceRequest, ProduceResponse
from kafkapy.record.batch_header import CRC_OFFSET, PRODUCER_ID_OFFSET
from kafkapy.record.crc import crc32c

log = logging.getLogger(__name__)

INIT_PRODUCER_ID_KEY = 22
_LEADER_ERRORS = {
    ErrorCode.NOT_LEADER_OR_FOLLOWER,
    ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.LEADER_NOT_AVAILABLE,
    ErrorCode.FENCED_LEADER_EPOCH,
    ErrorCode.KAFKA_STORAGE_ERROR,
}


_PRODUCER_STATE = struct.Struct(">qhi")  # producerId, producerEpoch, baseSequence
_CRC = struct.Struct(">I")


def restamp_producer_state(batch: bytes, producer_id: int, epoch: int, base_sequence: int) -> bytes:
    """Rewrite a built batch's producer id/epoch/base sequence and its CRC (which covers them)."""
    buf = bytearray(batch)
    _PRODUCER_STATE.pack_into(buf, PRODUCER_ID_OFFSET, producer_id, epoch, base_sequence)
    _CRC.pack_into(buf, CRC_OFFSET, crc32c(memoryview(buf)[CRC_OFFSET + 4 :]))
    return bytes(buf)


@dataclass
class _InFlight:
    node: int
    future: Future
    batches: dict[TopicPartition, ProducerBatch]
    sent_ms: int


@dataclass
class IdempotenceState:
    """Producer id/epoch and per-partition sequence numbers (Java's TransactionManager, minus txns)."""

    producer_id: int = -1
    producer_epoch: int = -1
    next_sequence: dict[TopicPartition, int] = field(default_factory=dict)
    in_flight: dict[TopicPartition, int] = field(default_factory=dict)

    def has_producer_id(self) -> bool:
        return self.producer_id >= 0


class Sender(threading.Thread):
    def __init__(
        self,
        client: NetworkClient,
        accumulator: RecordAccumulator,
        acks: int,
        retries: int,
        request_timeout_ms: int,
        max_request_size: int,
        max_in_flight: int,
        idempotent: bool,
        idempotence_explicit: bool = False,
        transaction_timeout_ms: int = 60000,
        time: Time = SYSTEM,
        name: str = "kafka-producer-network-thread",
        transaction_manager: TransactionManager | None = None,
    ) -> None:
        super().__init__(name=name, daemon=True)
        self.client = client
        self.accumulator = accumulator
        self.acks = acks
        self.retries = retries
        self.request_timeout_ms = request_timeout_ms
        self.max_request_size = max_request_size
        self.max_in_flight = max(1, max_in_flight)
        self.idempotent = idempotent
        self._idempotence_explicit = idempotence_explicit
        self.transaction_timeout_ms = transaction_timeout_ms
        self.idempotence = IdempotenceState()
        self._time = time
        self._running = True
        self._forced = False
        self._in_flight: list[_InFlight] = []
        self._wake_r, self._wake_w = os.pipe()
        os.set_blocking(self._wake_r, False)
        os.set_blocking(self._wake_w, False)
        self._fatal: BaseException | None = None
        self._wake_pending = False
        self._need_pid_reset = False
        self.txn = transaction_manager if transaction_manager and transaction_manager.is_transactional() else None
        self._txn_flushing = False

    # ------------------------------------------------------------------------------------------
    # control from other threads

    def wakeup(self) -> None:
        # One byte in the pipe is enough until the Sender drains it; skip the syscall otherwise.
        if self._wake_pending:
            return
        self._wake_pending = True
        try:
            os.write(self._wake_w, b"x")
        except (BlockingIOError, OSError):
            pass

    def initiate_close(self) -> None:
        self._running = False
        self.accumulator.close()
        self.wakeup()

    def force_close(self) -> None:
        self._forced = True
        self.initiate_close()

    # ------------------------------------------------------------------------------------------
    # thread body

    def run(self) -> None:
        try:
            while self._running:
                self._run_once_safely()
            # A transaction still open at close is aborted (Kafka's "Aborting incomplete transaction due to
            # shutdown"); a forced close or the close timeout ends this loop.
            tm = self.txn
            while not self._forced and tm is not None and tm.has_ongoing_transaction():
                if not tm.is_completing():
                    log.info("Aborting incomplete transaction due to shutdown")
                    tm.begin_abort()
                self._run_once_safely()
            # Graceful close: keep sending until everything queued is acknowledged.
            while not self._forced and (self.accumulator.has_undrained() or self._in_flight):
                self._run_once_safely()
            if self._forced or self.accumulator.incomplete_batches():
                self.accumulator.abort_all(KafkaError("Producer is closed forcefully."))
        finally:
            for fd in (self._wake_r, self._wake_w):
                try:
                    os.close(fd)
                except OSError:
                    pass

    def _run_once_safely(self) -> None:
        try:
            self.run_once()
        except Exception:
            log.exception("Uncaught error in kafka producer I/O thread")
            self._time.sleep(self.client.retry_backoff_ms)

    def run_once(self) -> None:
        tm = self.txn
        if tm is not None:
            if tm.has_fatal_error():
                if tm.last_error is not None:
                    self.accumulator.abort_undrained_batches(tm.last_error)
                self._poll(self.client.retry_backoff_ms)
                return
            if self._maybe_send_transactional_request(tm):
                self._poll(0)
                return
            if not self._adopt_transactional_producer_id(tm):
                self._poll(self.client.retry_backoff_ms)  # until the old epoch's requests are answered
                return
        if self._need_pid_reset and not self._in_flight:
            # A sequenced batch failed (or the broker lost our sequence): start over with a new
            # producer id, so queued batches get fresh sequences from 0 (Java bumps the epoch).
            log.info("Resetting producer id %s after a sequence gap", self.idempotence.producer_id)
            self.idempotence = IdempotenceState()
            self.accumulator.reset_sequences()
            self._need_pid_reset = False
        elif self._need_pid_reset:
            self._poll(self.client.retry_backoff_ms)  # let in-flight requests finish first
            return
        if self.idempotent and tm is None and not self.idempotence.has_producer_id():
            if not self._init_producer_id():
                return
        now = self._time.milliseconds()
        cluster = self.client.metadata.cluster
        ready, delay, unknown = self.accumulator.ready(cluster, now)
        if unknown:
            self.client.metadata.add_topics(*unknown)
            self.client.metadata.request_update()
        if self.client.metadata.time_to_next_update_ms(now) == 0 and (
            unknown or self.accumulator.has_undrained() or self.client.metadata.update_requested()
        ):
            cluster = self.client.maybe_update_metadata(self.request_timeout_ms)
            ready, delay, _ = self.accumulator.ready(cluster, self._time.milliseconds())
        sendable: set[int] = set()
        for node in ready:
            try:
                conn = self.client.get_connection(node, self.request_timeout_ms)
            except KafkaError as e:
                log.debug("Cannot connect to node %s: %s", node, e)
                continue
            if conn.in_flight_count < self.max_in_flight:
                sendable.add(node)
        now = self._time.milliseconds()
        drained = self.accumulator.drain(cluster, sendable, self.max_request_size, now, self._can_send)
        for batch in self.accumulator.expired_batches(now):
            self._fail_batch(batch, KafkaTimeoutError(
                f"Expiring {batch.record_count} record(s) for {batch.tp}:{now - batch.created_ms} ms has "
                "passed since batch creation"
            ))
        for node, batches in drained.items():
            self._send_produce(node, batches, now)
        self._poll(delay if not drained else 0)

    # ------------------------------------------------------------------------------------------
    # idempotence

    def _init_producer_id(self) -> bool:
        def build(version: int) -> InitProducerIdRequest:
            return InitProducerIdRequest(
                transactional_id=None,
                transaction_timeout_ms=self.transaction_timeout_ms,
                producer_id=-1,
                producer_epoch=-1,
            )

        try:
            resp = self.client.request_least_loaded(build, self.request_timeout_ms, api_key=INIT_PRODUCER_ID_KEY)
            if resp.error_code:
                raise error_from_code(resp.error_code)
        except ClientUnsupportedVersionError as e:
            if self._idempotence_explicit:
                self._fatal = e
                self.accumulator.abort_all(e)
                self._running = False
                return False
            log.info("Broker does not support InitProducerId; disabling idempotence")
            self.idempotent = False
            return True
        except KafkaError as e:
            if e.retriable:
                log.debug("InitProducerId failed (%s); retrying", e)
                self._time.sleep(self.client.retry_backoff_ms)
                return False
            self._fatal = e
            self.accumulator.abort_all(e)
            self._running = False
            return False
        self.idempotence.producer_id = resp.producer_id
        self.idempotence.producer_epoch = resp.producer_epoch
        log.info("ProducerId set to %s with epoch %s", resp.producer_id, resp.producer_epoch)
        return True

    # ------------------------------------------------------------------------------------------
    # transactions

    def _adopt_transactional_producer_id(self, tm: TransactionManager) -> bool:
        """A new producer id/epoch from InitProducerId (first, or bumped after an abort) restarts sequences;
        False while requests under the old epoch are still in flight (nothing may be drained meanwhile)."""
        st = self.idempotence
        if tm.has_producer_id() and (st.producer_id, st.producer_epoch) != (tm.producer_id, tm.producer_epoch):
            if self._in_flight:
                return False
            self.idempotence = IdempotenceState(tm.producer_id, tm.producer_epoch)
            self.accumulator.reset_sequences()
        return True

    def _maybe_send_transactional_request(self, tm: TransactionManager) -> bool:
        """Kafka's maybeSendAndPollTransactionalRequest: True when a transactional request was handled."""
        if tm.has_abortable_error() or tm.is_aborting():
            error = tm.last_error or TransactionAbortedError()
            if any(b.base_sequence >= 0 for b in self.accumulator.abort_undrained_batches(error)):
                tm.epoch_bump_required = True  # retried batches dropped: their sequences leave a gap
        if tm.is_completing() != self._txn_flushing:
            self._txn_flushing = not self._txn_flushing
            (self.accumulator.begin_flush if self._txn_flushing else self.accumulator.end_flush)()
        handler = tm.next_request(self.accumulator.has_incomplete())
        if handler is None:
            return False
        node: int | None = None
        if handler.coordinator_type is not None:
            coordinator = tm.coordinator(handler.coordinator_type)
            if coordinator is None:
                tm.lookup_coordinator(handler.coordinator_type, handler.coordinator_key)
                tm.retry(handler)
                return True
            node = coordinator[0]
        if handler.is_retry:
            self._time.sleep(handler.retry_backoff_ms)
        try:
            resp = self._send_transactional(handler, node)
        except KafkaError as e:
            log.debug("Transactional request %s failed (%s); retrying", type(handler).__name__, e)
            if handler.coordinator_type is not None:
                tm.lookup_coordinator(handler.coordinator_type, handler.coordinator_key)
            tm.retry(handler)
            return True
        except Exception as e:  # noqa: BLE001 - not a transport error: the caller gets it, not a retry loop
            log.exception("Transactional request %s could not be sent", type(handler).__name__)
            handler.result.fail(e)
            return True
        try:
            handler.handle_response(resp)
        except Exception as e:  # noqa: BLE001 - e.g. an invalid transition: fail the caller, keep the thread
            handler.result.fail(e)
        return True

    def _send_transactional(self, handler: TxnRequestHandler, node: int | None) -> object:
        if node is None:
            return self.client.request_least_loaded(handler.build, self.request_timeout_ms, api_key=handler.api_key,
                                                    max_version=handler.max_version)
        if self.client.node_address(node) is None:  # a coordinator the metadata snapshot does not name yet
            self.client.update_metadata(sorted(self.client.metadata.topics), self.request_timeout_ms)
        return self.client.request(node, handler.build, self.request_timeout_ms, api_key=handler.api_key,
                                   max_version=handler.max_version, min_version=handler.min_version)

    def _can_send(self, batch: ProducerBatch) -> bool:
        if self.txn is not None and not self.txn.is_send_to_partition_allowed(batch.tp):
            return False
        if self.max_in_flight == 1 or self.idempotent:
            in_flight = self.idempotence.in_flight.get(batch.tp, 0)
            if batch.in_retry and in_flight > 0:
                return False
            if self.max_in_flight == 1 and in_flight > 0:
                return False
        return True

    # ------------------------------------------------------------------------------------------
    # produce

    def _send_produce(self, node: int, batches: list[ProducerBatch], now: int) -> None:
        topics: dict[str, list] = {}
        by_tp: dict[TopicPartition, ProducerBatch] = {}
        st = self.idempotence
        for b in batches:
            if self.idempotent and b.base_sequence < 0:
                seq = st.next_sequence.get(b.tp, 0)
                st.next_sequence[b.tp] = (seq + b.record_count) & 0x7FFFFFFF
                b.base_sequence = seq
                if b.built is None:
                    b.builder.is_transactional = self.txn is not None
                    b.builder.producer_id = st.producer_id
                    b.builder.producer_epoch = st.producer_epoch
                    b.builder.base_sequence = seq
                else:  # re-sequenced after a producer id reset
                    b.built = restamp_producer_state(b.built, st.producer_id, st.producer_epoch, seq)
            if b.built is None:
                b.close()
                self.accumulator.record_compression(b)
            topics.setdefault(b.tp.topic, []).append(
                ProduceRequest.PartitionProduceData(index=b.tp.partition, records=b.built)
            )
            by_tp[b.tp] = b
            if self.idempotent or self.max_in_flight == 1:
                st.in_flight[b.tp] = st.in_flight.get(b.tp, 0) + 1
        req = ProduceRequest(
            transactional_id=None if self.txn is None else self.txn.transactional_id,
            acks=self.acks,
            timeout_ms=self.request_timeout_ms,
            topic_data=[ProduceRequest.TopicProduceData(name=t, partition_data=p) for t, p in topics.items()],
        )
        try:
            future = self.client.send(node, req, expect_response=self.acks != 0)
        except KafkaError as e:
            for b in batches:
                self._release_in_flight(b)
                self._retry_or_fail(b, e, now)
            return
        if self.acks == 0:
            for b in batches:
                self._release_in_flight(b)
                b.done(-1, -1, None)
                self.accumulator.deallocate(b)
            return
        future.add_done_callback(lambda _f: self.wakeup())
        self._in_flight.append(_InFlight(node, future, by_tp, now))

    def _poll(self, timeout_ms: int) -> None:
        fds: dict[int, int] = {}
        for inf in self._in_flight:
            conn = self.client._conns.get(inf.node)
            fd = None if conn is None else conn.fileno()
            if fd is not None and not inf.future.done():
                fds[fd] = inf.node
        timeout = 0 if any(i.future.done() for i in self._in_flight) else min(max(timeout_ms, 0), 100)
        try:
            readable = wait_readable([self._wake_r, *fds], timeout / 1000.0)
        except (OSError, ValueError):
            readable = []
        if self._wake_r in readable:
            self._wake_pending = False
            try:
                while os.read(self._wake_r, 4096):
                    pass
            except (BlockingIOError, OSError):
                pass
        for node in {fds[fd] for fd in readable if fd in fds} | {i.node for i in self._in_flight}:
            conn = self.client._conns.get(node)
            if conn is not None:
                conn.poll(0)
        still: list[_InFlight] = []
        for inf in self._in_flight:
            if inf.future.done():
                self._handle_response(inf)
            else:
                still.append(inf)
        self._in_flight = still

    def _handle_response(self, inf: _InFlight) -> None:
        now = self._time.milliseconds()
        exc = inf.future.exception()
        if exc is not None:
            for b in inf.batches.values():
                self._release_in_flight(b)
                self._retry_or_fail(b, exc, now)
            self.client.metadata.request_update()
            return
        resp: ProduceResponse = inf.future.result()
        seen: set[TopicPartition] = set()
        for t in resp.responses:
            for p in t.partition_responses:
                tp = TopicPartition(t.name, p.index)
                found = inf.batches.get(tp)
                if found is None:
                    continue
                b = found
                seen.add(tp)
                self._release_in_flight(b)
                code = p.error_code
                if code == ErrorCode.NONE or code == ErrorCode.DUPLICATE_SEQUENCE_NUMBER:
                    b.done(p.base_offset, p.log_append_time_ms, None)
                    self.accumulator.deallocate(b)
                    continue
                err = error_from_code(code, p.error_message)
                if code in _LEADER_ERRORS:
                    self.client.metadata.request_update()
                self._retry_or_fail(b, err, now)
        for tp, b in inf.batches.items():
            if tp not in seen:
                self._release_in_flight(b)
                self._fail_batch(b, KafkaError(f"Produce response from node {inf.node} is missing {tp}"))

    def _release_in_flight(self, b: ProducerBatch) -> None:
        st = self.idempotence
        n = st.in_flight.get(b.tp, 0)
        if n > 0:
            st.in_flight[b.tp] = n - 1

    def _retry_or_fail(self, b: ProducerBatch, err: BaseException, now: int) -> None:
        retriable = isinstance(err, KafkaError) and err.retriable
        if (
            self.idempotent
            and isinstance(err, KafkaError)
            and err.code in (ErrorCode.OUT_OF_ORDER_SEQUENCE_NUMBER, ErrorCode.UNKNOWN_PRODUCER_ID)
        ):
            # Behind a batch being retried this is expected; otherwise the broker lost our sequence
            # state (or an earlier batch failed): retry under a new producer id.
            retriable = True
            if self.txn is None and not self.accumulator.has_retry_before(b):
                self._need_pid_reset = True
        if (
            retriable
            and b.attempts < self.retries
            and now - b.created_ms < self.accumulator.delivery_timeout_ms
            and not self._forced
        ):
            log.debug("Retrying batch for %s (attempt %d): %s", b.tp, b.attempts + 1, err)
            self.accumulator.reenqueue(b, now)
            return
        self._fail_batch(b, err)

    def _fail_batch(self, b: ProducerBatch, err: BaseException) -> None:
        if self.txn is not None:
            self.txn.handle_failed_batch(err, b.base_sequence >= 0)
        elif self.idempotent and b.base_sequence >= 0:
            self._need_pid_reset = True  # its sequence numbers leave a gap
        b.done(-1, -1, err)
        self.accumulator.deallocate(b)
