"""Driver-side offset planning (Spark's KafkaOffsetReaderAdmin + KafkaOffsetRangeCalculator).

`KafkaOffsetReader(options)` resolves the subscription to topic-partitions with an AdminClient
(Metadata; a pattern matches whole topic names, internal topics excluded, as Java's consumer), turns
an OffsetSpec into concrete offsets (ListOffsets: -2 earliest, -1 latest, timestamps), and checks
specific offsets against what the log holds (failOnDataLoss). `offset_ranges` splits ranges for
`minPartitions`; `rate_limit` applies `maxOffsetsPerTrigger` the way Spark's source prorates it.

Thread-safety: one reader per planning thread (Spark plans a query on one thread).
"""

from __future__ import annotations

import logging
import math
import re
from dataclasses import dataclass

from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark.errors import KafkaDataLossError, KafkaSourceError
from kafkapy.spark.offsets import EARLIEST, LATEST, OffsetSpec, format_partition_set
from kafkapy.spark.options import SourceOptions

log = logging.getLogger(__name__)


@dataclass(frozen=True)
class OffsetRange:
    tp: TopicPartition
    from_offset: int
    until_offset: int

    @property
    def size(self) -> int:
        return self.until_offset - self.from_offset


class KafkaOffsetReader:
    def __init__(self, options: SourceOptions) -> None:
        from kafkapy.client.admin import AdminClient

        self.options = options
        params = dict(options.kafka)
        params.setdefault("client.id", "kafkapy-spark-driver")
        self.admin = AdminClient(params)
        self.isolation = params.get("isolation.level", "read_uncommitted")

    def close(self) -> None:
        self.admin.close()

    # -- partitions ----------------------------------------------------------------------------

    def partitions(self) -> set[TopicPartition]:
        """The topic-partitions the subscription names right now."""
        sub = self.options.subscription
        if sub.kind == "assign":
            return set(sub.partitions)
        if sub.kind == "subscribe":
            described = self.admin.describe_topics(list(sub.topics), raise_errors=False)
            return {TopicPartition(name, p.partition) for name, d in described.items() if d.error is None
                    for p in d.partitions}
        pattern = re.compile(sub.pattern or "")
        names = [n for n in self.admin.list_topics() if pattern.fullmatch(n)]
        if not names:
            return set()
        described = self.admin.describe_topics(names, raise_errors=False)
        return {TopicPartition(name, p.partition) for name, d in described.items() if d.error is None
                for p in d.partitions}

    # -- offsets -------------------------------------------------------------------------------

    def list_offsets(self, specs: dict[TopicPartition, int]) -> dict[TopicPartition, int | None]:
        """ListOffsets for {tp: -2 | -1 | timestamp}; None where no offset matches a timestamp."""
        if not specs:
            return {}
        found = self.admin.list_offsets(specs, isolation_level=self.isolation, raise_errors=False)
        out: dict[TopicPartition, int | None] = {}
        for tp in specs:
            v = found.get(tp)
            if isinstance(v, KafkaError):
                raise v
            out[tp] = None if v is None else v.offset
        return out

    def earliest(self, tps: set[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: o or 0 for tp, o in self.list_offsets(dict.fromkeys(tps, EARLIEST)).items()}

    def latest(self, tps: set[TopicPartition]) -> dict[TopicPartition, int]:
        return {tp: o or 0 for tp, o in self.list_offsets(dict.fromkeys(tps, LATEST)).items()}

    def resolve(self, spec: OffsetSpec, tps: set[TopicPartition], starting: bool) -> dict[TopicPartition, int]:
        """Concrete offsets for `spec` over `tps` (Spark's fetchSpecificOffsets / ...ByTimestamp)."""
        name = "startingOffsets" if starting else "endingOffsets"
        if spec.kind == "earliest":
            return self.earliest(tps)
        if spec.kind == "latest":
            return self.latest(tps)
        if spec.kind == "offsets" or spec.kind == "timestamps":
            given = spec.partition_values or {}
            if set(given) != tps:
                what = name if spec.kind == "offsets" else f"{name}ByTimestamp"
                raise KafkaSourceError(
                    f"assertion failed: If {what} contains specific offsets, you must specify all "
                    "TopicPartitions.\nUse -1 for latest, -2 for earliest.\n"
                    f"Specified: {format_partition_set(given)} Assigned: {format_partition_set(tps)}"
                )
            if spec.kind == "offsets":
                return self._specific(given, starting)
            return self._by_timestamp(given, starting, spec.strategy_latest)
        assert spec.timestamp is not None
        return self._by_timestamp(dict.fromkeys(tps, spec.timestamp), starting, spec.strategy_latest)

    def _specific(self, given: dict[TopicPartition, int], starting: bool) -> dict[TopicPartition, int]:
        specials = {tp: o for tp, o in given.items() if o in (EARLIEST, LATEST)}
        resolved = {tp: o or 0 for tp, o in self.list_offsets(specials).items()}
        out = {tp: resolved.get(tp, o) for tp, o in given.items()}
        if starting:
            # Spark's fetchSpecificOffsets: an offset below the log start is data loss.
            explicit = {tp for tp, o in given.items() if o >= 0}
            if explicit:
                earliest = self.earliest(explicit)
                for tp in sorted(explicit):
                    if out[tp] < earliest[tp]:
                        self.report_data_loss(
                            f"Cannot fetch offset {out[tp]} (TopicPartition: {tp}): the earliest offset "
                            f"in the log is {earliest[tp]}."
                        )
                        out[tp] = earliest[tp]
        return out

    def _by_timestamp(self, given: dict[TopicPartition, int], starting: bool,
                      strategy_latest: bool) -> dict[TopicPartition, int]:
        found = self.list_offsets(given)
        missing = {tp for tp, o in found.items() if o is None}
        latest = self.latest(missing) if missing else {}
        out = {}
        for tp, o in found.items():
            if o is not None:
                out[tp] = o
            elif starting and not strategy_latest:
                raise KafkaSourceError(
                    f"No offset matched from request of topic-partition {tp} and timestamp {given[tp]}."
                )
            else:
                out[tp] = latest[tp]
        return out

    def report_data_loss(self, message: str) -> None:
        if self.options.fail_on_data_loss:
            raise KafkaDataLossError(message)
        log.warning("%s Skipping to the earliest available offset.", message)


def check_ranges(starts: dict[TopicPartition, int], ends: dict[TopicPartition, int]) -> list[OffsetRange]:
    """Offset ranges for the partitions in `ends`; Spark's assertion when a range runs backwards."""
    out = []
    for tp in sorted(ends):
        start = starts.get(tp, 0)
        if start > ends[tp]:
            raise KafkaSourceError(
                f"assertion failed: Beginning offset {start} is after the ending offset {ends[tp]} for topic "
                f"{tp.topic} partition {tp.partition}. You either provided an invalid fromOffset, or the "
                "Kafka topic has been damaged"
            )
        out.append(OffsetRange(tp, start, ends[tp]))
    return out


def offset_ranges(ranges: list[OffsetRange], min_partitions: int | None) -> list[OffsetRange]:
    """Spark's KafkaOffsetRangeCalculator: one range per topic-partition, large ones split so that
    there are at least `min_partitions` (each range gets round(size / total * minPartitions) parts)."""
    ranges = [r for r in ranges if r.size > 0]
    if not min_partitions or min_partitions <= len(ranges):
        return ranges
    total = sum(r.size for r in ranges)
    parts_of = [max(int(math.floor(r.size / total * min_partitions + 0.5)), 1) for r in ranges]
    # Rounding may leave fewer than asked (SPARK-36576): give the largest remaining pieces one more split.
    while sum(parts_of) < min_partitions:
        i = max(range(len(ranges)), key=lambda j: ranges[j].size / parts_of[j])
        if ranges[i].size <= parts_of[i]:
            break
        parts_of[i] += 1
    out: list[OffsetRange] = []
    for r, parts in zip(ranges, parts_of, strict=True):
        step = r.size / parts
        bounds = [r.from_offset + int(step * i) for i in range(parts)] + [r.until_offset]
        out += [OffsetRange(r.tp, bounds[i], bounds[i + 1]) for i in range(parts) if bounds[i] < bounds[i + 1]]
    return out


def rate_limit(limit: int, start: dict[TopicPartition, int], until: dict[TopicPartition, int]) -> dict[TopicPartition, int]:
    """Spark's KafkaMicroBatchStream.rateLimit: spread `limit` over partitions in proportion to their
    backlog, never starving a small one (ceil below 1), never past `until`."""
    sizes = {tp: until[tp] - start.get(tp, until[tp]) for tp in until}
    total = sum(s for s in sizes.values() if s > 0)
    if total < 1:
        return dict(until)
    out: dict[TopicPartition, int] = {}
    for tp, end in until.items():
        begin = start.get(tp, end)
        size = max(sizes[tp], 0)
        prorate = limit * (size / total)
        n = math.ceil(prorate) if prorate < 1 else math.floor(prorate)
        out[tp] = min(end, begin + n)
    return out
