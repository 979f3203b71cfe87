"""Read one topic-partition offset range as Arrow record batches (runs in Spark's executor workers).

Each task sends single-partition Fetch requests (v4-v12: topics by name, so any Kafka 1.0+ broker
answers) to the partition's leader from `from_offset` until `until_offset`, and turns every Fetch
response into one Arrow batch through record_columns.RecordColumns: per-batch work, no per-record
Python objects. The connection is the Python worker's (one NetworkClient per distinct `kafka.*` option
set, kept across tasks since Spark reuses its Python workers), and the next Fetch is sent as soon as a
response's batches are located, so the broker reads and sends the next range while this one is
decoded. `kafkapy.reader=per-task` selects the former path (a connection per task, one fetch at a
time), `kafkapy.reader=kernels` the pipelined path with the Arrow-kernel column build (record_columns),
both kept for the benchmark's before/after.
Control batches are skipped; with kafka.isolation.level=read_committed, batches of aborted
transactions are too (Java's Fetcher rule). OFFSET_OUT_OF_RANGE means data loss: with failOnDataLoss
the task fails with Spark's wording, otherwise it continues from the earliest offset still in the log.

Thread-safety: one call per task; the worker's client cache is guarded by a lock (a task that fails
drops its client, whose connection may hold an unread response).
"""

from __future__ import annotations

import logging
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

from kafkapy.client.config import ConsumerConfig
from kafkapy.client.fetcher import fetched_batches
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.offset_fetcher import list_offsets
from kafkapy.common.errors import ErrorCode, KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.fetch import FetchRequest
from kafkapy.spark.errors import KafkaDataLossError

log = logging.getLogger(__name__)

PER_TASK = "per-task"  # kafkapy.reader: the former path (a connection per task, one fetch at a time)
KERNELS = "kernels"  # kafkapy.reader: pipelined, columns built by Arrow kernels rather than the compiled build
_clients: dict[tuple, NetworkClient] = {}
_clients_lock = threading.Lock()

FETCH_KEY = 1
FETCH_MAX_VERSION = 12  # the last version naming topics by name
DEFAULT_PARTITION_FETCH_BYTES = 4 * 1024 * 1024
# A socket buffer that holds a good part of a 4 MiB fetch: half the reads (and polls) of the client's 64 KiB
# default per response, and fewer, larger sendfile calls on the broker. `kafka.receive.buffer.bytes` overrides.
DEFAULT_RECEIVE_BUFFER_BYTES = 1024 * 1024
_RETRIABLE = {
    ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.LEADER_NOT_AVAILABLE, ErrorCode.UNKNOWN_TOPIC_OR_PARTITION,
    ErrorCode.FENCED_LEADER_EPOCH, ErrorCode.UNKNOWN_LEADER_EPOCH, ErrorCode.KAFKA_STORAGE_ERROR,
    ErrorCode.REPLICA_NOT_AVAILABLE, ErrorCode.NOT_LEADER_OR_FOLLOWER, ErrorCode.REQUEST_TIMED_OUT,
}


@dataclass(frozen=True)
class RangeRead:
    """What a reader needs to read one range; pickled to executors with the reader."""

    kafka: dict[str, str]
    include_headers: bool
    fail_on_data_loss: bool
    poll_timeout_ms: int
    reader: str = "pipelined"


def consumer_config(kafka: dict[str, str], role: str) -> ConsumerConfig:
    params = dict(kafka)
    params.setdefault("client.id", f"kafkapy-spark-{role}")
    params.setdefault("max.partition.fetch.bytes", str(DEFAULT_PARTITION_FETCH_BYTES))
    params.setdefault("receive.buffer.bytes", str(DEFAULT_RECEIVE_BUFFER_BYTES))
    return ConsumerConfig(params)


def _fetch_request(config: ConsumerConfig, tp: TopicPartition, offset: int) -> FetchRequest:
    return FetchRequest(
        cluster_id=None, replica_id=-1, max_wait_ms=int(config["fetch.max.wait.ms"]),
        min_bytes=1, max_bytes=max(int(config["fetch.max.bytes"]), int(config["max.partition.fetch.bytes"])),
        isolation_level=1 if config["isolation.level"] == "read_committed" else 0,
        session_id=0, session_epoch=-1,
        topics=[FetchRequest.FetchTopic(topic=tp.topic, partitions=[FetchRequest.FetchPartition(
            partition=tp.partition, current_leader_epoch=-1, fetch_offset=offset, last_fetched_epoch=-1,
            log_start_offset=-1, partition_max_bytes=int(config["max.partition.fetch.bytes"]))])],
        forgotten_topics_data=[], rack_id="",
    )


def _client(config: ConsumerConfig, kafka: dict[str, str], reuse: bool) -> tuple[NetworkClient, bool]:
    """(a NetworkClient for these options, whether the caller owns it). With `reuse`, one client per
    distinct option set lives as long as the Python worker: Spark reuses workers across tasks
    (spark.python.worker.reuse), so a worker keeps its connection and metadata from task to task."""
    if not reuse:
        return NetworkClient(config), True
    key = tuple(sorted(kafka.items()))
    with _clients_lock:
        client = _clients.get(key)
        if client is None:
            client = _clients[key] = NetworkClient(config)
    return client, False


def _drop_client(kafka: dict[str, str], client: NetworkClient) -> None:
    with _clients_lock:
        if _clients.get(tuple(sorted(kafka.items()))) is client:
            del _clients[tuple(sorted(kafka.items()))]
    client.close()


def read_range(
    spec: RangeRead, tp: TopicPartition, from_offset: int, until_offset: int, arrow_schema: Any
) -> Iterator[Any]:
    """Yield Arrow RecordBatches of the records with from_offset <= offset < until_offset."""
    from kafkapy.spark.record_columns import RecordColumns

    if from_offset >= until_offset:
        return
    config = consumer_config(spec.kafka, "reader")
    read_committed = config["isolation.level"] == "read_committed"
    pipelined = spec.reader != PER_TASK
    client, owned = _client(config, spec.kafka, pipelined)
    failed = True
    try:
        offset = from_offset
        # A reused client starts from the leader its metadata already holds (a stale one answers the first
        # Fetch with a retriable error, which refreshes it); a new client, or a retry, asks the cluster.
        leader = None if owned else client.cluster.leader_for(tp)
        ahead: tuple[int, Any] | None = None  # (fetch offset, response future) sent before decoding
        arena = bytearray()  # the record bytes of each response in turn (RecordColumns' reused arena)
        deadline = time.monotonic() + spec.poll_timeout_ms / 1000
        while offset < until_offset:
            if leader is None:
                ahead = None
                leader = client.update_metadata([tp.topic]).leader_for(tp)
                if leader is None:
                    _wait_or_fail(deadline, tp, offset, spec.poll_timeout_ms)
                    continue
            try:
                if ahead is not None and ahead[0] == offset:
                    resp = client.get_connection(leader).wait(ahead[1], client.request_timeout_ms)
                else:
                    resp = client.request(leader, _fetch_request(config, tp, offset), api_key=FETCH_KEY,
                                          max_version=FETCH_MAX_VERSION)
                ahead = None
            except KafkaError as e:
                log.debug("fetch of %s at %d failed: %s", tp, offset, e)
                leader = None
                _wait_or_fail(deadline, tp, offset, spec.poll_timeout_ms)
                continue
            p = resp.responses[0].partitions[0]
            if p.error_code == ErrorCode.OFFSET_OUT_OF_RANGE:
                offset = _out_of_range(client, spec, tp, offset, until_offset)
                continue
            if p.error_code in _RETRIABLE:
                leader = None
                _wait_or_fail(deadline, tp, offset, spec.poll_timeout_ms)
                continue
            if p.error_code:
                from kafkapy.client.errors import error_from_code

                raise error_from_code(p.error_code, f"partition {tp}")
            cols = RecordColumns(tp.topic, tp.partition, spec.include_headers, arrow_schema, walker=pipelined,
                                 compiled=spec.reader != KERNELS, arena=arena)
            next_offset = _collect(cols, p, offset, read_committed, bool(config["check.crcs"]), tp)
            if next_offset > offset:
                deadline = time.monotonic() + spec.poll_timeout_ms / 1000
                if pipelined and next_offset < until_offset:
                    # The broker reads and sends the next range while this one is decoded.
                    try:
                        ahead = (next_offset, client.send(leader, _fetch_request(config, tp, next_offset),
                                                          api_key=FETCH_KEY, max_version=FETCH_MAX_VERSION))
                    except KafkaError:
                        ahead = None
                batches = cols.build(offset, until_offset)
                offset = next_offset
                yield from batches
            elif p.high_watermark <= offset or not p.records:
                # Nothing at this offset yet (a range planned past what is readable, e.g. uncommitted).
                _wait_or_fail(deadline, tp, offset, spec.poll_timeout_ms)
        failed = False
    finally:
        if owned:
            client.close()
        elif failed:
            _drop_client(spec.kafka, client)  # its connection may hold unread responses


def _collect(cols: Any, p: Any, offset: int, read_committed: bool, check_crcs: bool, tp: TopicPartition) -> int:
    """Add the fetched data batches to `cols`; return the offset after the last complete batch."""
    if not p.records:
        return offset
    next_offset = offset
    for batch, is_data in fetched_batches(p.records, offset, p.aborted_transactions or [], read_committed,
                                          check_crcs, tp):
        next_offset = batch.next_offset
        if is_data:
            cols.add_batch(batch)
    return next_offset


def _out_of_range(client: NetworkClient, spec: RangeRead, tp: TopicPartition, offset: int, until: int) -> int:
    earliest = list_offsets(client, {tp: -2}, spec.poll_timeout_ms).get(tp)
    start = earliest.offset if earliest else offset
    if spec.fail_on_data_loss:
        raise KafkaDataLossError(
            f"Cannot fetch offset {offset} (TopicPartition: {tp}): the earliest offset in the log is {start}."
        )
    log.warning("Cannot fetch offset %d of %s; skipping to the earliest available offset %d", offset, tp, start)
    return start if start > offset else until


def _wait_or_fail(deadline: float, tp: TopicPartition, offset: int, poll_timeout_ms: int) -> None:
    if time.monotonic() > deadline:
        raise TimeoutError(
            f"Cannot fetch record for offset {offset} in {poll_timeout_ms} milliseconds (TopicPartition: {tp})"
        )
    time.sleep(0.1)
