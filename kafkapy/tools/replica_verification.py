"""replica-verification's logic (Kafka's ReplicaVerificationTool): fetch every replica of every selected
partition, compare the replicas batch by batch below each replica's high watermark, and report the
largest lag.

Each round sends one Fetch per broker (replica_id -2, Kafka's DEBUGGING_REPLICA_ID, so followers answer
too) for all partitions that broker hosts, at the partition's verified offset; when every broker answered,
each partition's batches are walked in step across replicas: a batch's last offset must be the same on
every replica (else `<date>: partition t-0: replica 1's offset 5 doesn't match replica 2's offset 7` and
exit 1) and a differing CRC is reported (`... has unmatched checksum at offset ...`). The verified offset
moves past batches every replica holds; lag = max HW over the replicas - verified offset.
Every report interval: `<date>: max lag is N for partition t-0 at offset M among K partitions`
(date as Java's `yyyy-MM-dd HH:mm:ss,SSS`). Work is per batch, never per record.
Thread-safety: one ReplicaVerifier per thread.
"""

from __future__ import annotations

import time as _time
from collections.abc import Callable
from concurrent.futures import Future
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.client.metadata import ZERO_UUID
from kafkapy.common.errors import ErrorCode
from kafkapy.common.time import SYSTEM, Time
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.fetch import FetchRequest
from kafkapy.record.memory_records import MemoryRecords
from kafkapy.tools import ToolFailure
from kafkapy.tools.tool_support import IncludeList, listed_offset

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

FETCH_KEY = 1
DEBUGGING_REPLICA_ID = -2
DEFAULT_FETCH_SIZE = 1024 * 1024  # ConsumerConfig.DEFAULT_MAX_PARTITION_FETCH_BYTES
DEFAULT_MAX_WAIT_MS = 1000
DEFAULT_REPORT_INTERVAL_MS = 30000
DEFAULT_TIME = -1  # latest
# Fetch v15 moved replica_id into ReplicaState (brokers only); v13-14 carry topic ids and replica_id -2.
MAX_FETCH_VERSION = 14
MAX_FETCH_VERSION_WITHOUT_IDS = 12


class ReplicaMismatchError(ToolFailure):
    """Two replicas disagree on a batch's offsets: Kafka's tool prints the line and exits 1."""


def java_timestamp(epoch_ms: int) -> str:
    """SimpleDateFormat("yyyy-MM-dd HH:mm:ss,SSS") in the local time zone."""
    return _time.strftime("%Y-%m-%d %H:%M:%S", _time.localtime(epoch_ms / 1000)) + f",{epoch_ms % 1000:03d}"


@dataclass
class ReplicaFetch:
    high_watermark: int
    records: Any


@dataclass
class LagReport:
    max_lag: int = -1
    partition: TopicPartition | None = None
    offset: int = -1
    partitions: int = 0
    mismatches: list[str] = field(default_factory=list)


def verify_partition(tp: TopicPartition, fetch_offset: int, per_replica: dict[int, ReplicaFetch],
                     now: Callable[[], str]) -> tuple[int, list[str]]:
    """Kafka's ReplicaBuffer.verifyCheckSum for one partition: (new fetch offset, checksum lines).
    Raises ReplicaMismatchError when the replicas' batch offsets differ."""
    iterators = {r: iter(MemoryRecords(f.records or b"").batches()) for r, f in per_replica.items()}
    lines: list[str] = []
    while True:
        first: tuple[int, int, int, int] | None = None  # replica, last offset, next offset, checksum
        in_all = True
        for replica, batches in iterators.items():
            batch = next(batches, None)
            while batch is not None and batch.next_offset <= fetch_offset:
                batch = next(batches, None)  # a fetch may start inside an earlier batch
            if batch is None or batch.last_offset >= per_replica[replica].high_watermark:
                in_all = False
                continue
            if first is None:
                first = (replica, batch.last_offset, batch.next_offset, batch.crc)
                continue
            if first[1] != batch.last_offset:
                raise ReplicaMismatchError(f"{now()}: partition {tp}: replica {first[0]}'s offset {first[1]} "
                                           f"doesn't match replica {replica}'s offset {batch.last_offset}")
            if first[3] != batch.crc:
                lines.append(f"{now()}: partition {tp} has unmatched checksum at offset {batch.last_offset}; "
                             f"replica {first[0]}'s checksum {first[3]}; replica {replica}'s checksum {batch.crc}")
        if not in_all or first is None:
            return fetch_offset, lines
        fetch_offset = first[2]


class ReplicaVerifier:
    def __init__(self, admin: AdminClient, include: str, fetch_size: int = DEFAULT_FETCH_SIZE,
                 max_wait_ms: int = DEFAULT_MAX_WAIT_MS, initial_time: int = DEFAULT_TIME,
                 report_interval_ms: int = DEFAULT_REPORT_INTERVAL_MS, time: Time = SYSTEM) -> None:
        self.admin = admin
        self.client = admin.client
        self.fetch_size = fetch_size
        self.max_wait_ms = max_wait_ms
        self.report_interval_ms = report_interval_ms
        self.time = time
        topics = IncludeList(include)
        # Kafka passes excludeInternalTopics=false: internal topics are verified when the regex selects them
        names = [t for t in sorted(admin.list_topics(include_internal=True)) if topics.is_topic_allowed(t)]
        if not names:
            raise ToolFailure(f"No topics found. {include} if specified, is either filtering out all topics or "
                              "there is no topic.")
        described = admin.describe_topics(names)
        self.replicas: dict[TopicPartition, list[int]] = {}
        for name in names:
            for p in described[name].partitions:
                self.replicas[TopicPartition(name, p.partition)] = [n.node_id for n in p.replicas]
        self.topic_ids = {name: described[name].topic_id for name in names}
        offsets = admin.list_offsets({tp: initial_time for tp in self.replicas})
        self.offsets = {tp: listed_offset(info) or 0 for tp, info in offsets.items()}
        self.last_report_ms = time.milliseconds()

    def now(self) -> str:
        return java_timestamp(self.time.milliseconds())

    def _fetch_request(self, tps: list[TopicPartition]) -> Callable[[int], FetchRequest]:
        use_ids = all(self.topic_ids.get(tp.topic, ZERO_UUID) != ZERO_UUID for tp in tps)

        def build(version: int) -> FetchRequest:
            by_topic: dict[str, list[Any]] = {}
            for tp in tps:
                by_topic.setdefault(tp.topic, []).append(FetchRequest.FetchPartition(
                    partition=tp.partition, current_leader_epoch=-1, fetch_offset=self.offsets[tp],
                    last_fetched_epoch=-1, log_start_offset=-1, partition_max_bytes=self.fetch_size))
            return FetchRequest(
                cluster_id=None, replica_id=DEBUGGING_REPLICA_ID, max_wait_ms=self.max_wait_ms, min_bytes=1,
                max_bytes=max(self.fetch_size, 1) * max(len(tps), 1), isolation_level=0, session_id=0,
                session_epoch=-1, forgotten_topics_data=[], rack_id="",
                topics=[FetchRequest.FetchTopic(topic=t, topic_id=self.topic_ids[t] if version >= 13 else ZERO_UUID,
                                                partitions=ps) for t, ps in by_topic.items()])

        build.use_ids = use_ids  # type: ignore[attr-defined]
        return build

    def fetch_round(self) -> dict[TopicPartition, dict[int, ReplicaFetch]]:
        """One Fetch to every broker, answered in parallel; partition -> replica -> its answer."""
        by_broker: dict[int, list[TopicPartition]] = {}
        for tp, replicas in self.replicas.items():
            for r in replicas:
                by_broker.setdefault(r, []).append(tp)
        pending: dict[int, Future] = {}
        for broker, tps in by_broker.items():
            build = self._fetch_request(tps)
            pending[broker] = self.client.send(broker, build, api_key=FETCH_KEY,
                                               max_version=MAX_FETCH_VERSION if build.use_ids else MAX_FETCH_VERSION_WITHOUT_IDS)  # type: ignore[attr-defined]
        deadline = self.time.milliseconds() + self.max_wait_ms + self.client.request_timeout_ms
        while not all(f.done() for f in pending.values()) and self.time.milliseconds() < deadline:
            self.client.poll(100, list(pending))
        out: dict[TopicPartition, dict[int, ReplicaFetch]] = {}
        for broker, future in pending.items():
            if not future.done() or future.exception() is not None:
                continue
            resp = future.result()
            for t in resp.responses:
                name = t.topic or next((n for n, i in self.topic_ids.items() if i == t.topic_id), None)
                for p in t.partitions:
                    if name is None or p.error_code != ErrorCode.NONE:
                        continue
                    out.setdefault(TopicPartition(name, p.partition_index), {})[broker] = ReplicaFetch(
                        p.high_watermark, p.records)
        return out

    def verify_round(self, fetched: dict[TopicPartition, dict[int, ReplicaFetch]]) -> LagReport:
        report = LagReport(partitions=len(self.replicas))
        for tp, replicas in self.replicas.items():
            per_replica = fetched.get(tp, {})
            if set(per_replica) != set(replicas):
                continue  # a replica did not answer this round: verify it next round
            offset, lines = verify_partition(tp, self.offsets[tp], per_replica, self.now)
            report.mismatches.extend(lines)
            self.offsets[tp] = offset
            lag = max(f.high_watermark for f in per_replica.values()) - offset
            if lag > report.max_lag:
                report.max_lag, report.partition, report.offset = lag, tp, offset
        return report

    def report_due(self) -> bool:
        now = self.time.milliseconds()
        if now - self.last_report_ms > self.report_interval_ms:
            self.last_report_ms = now
            return True
        return False


def lag_line(report: LagReport, now: str) -> str:
    return (f"{now}: max lag is {report.max_lag} for partition {report.partition} at offset {report.offset} "
            f"among {report.partitions} partitions")
