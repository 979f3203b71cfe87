"""ListOffsets lookups for the consumer and the admin client (Kafka's OffsetFetcher / ListOffsetsHandler).

`list_offsets_by_partition(client, {tp: timestamp}, timeout_ms, isolation_level)` answers every partition
on its own: an OffsetAndTimestamp, None when no offset matches (a timestamp after the last record), or the
KafkaError that partition ended with (like the futures of Java's ListOffsetsResult); `list_offsets` raises
the first error instead (the consumer's offsetsForTimes / beginningOffsets / endOffsets). Timestamps are
Kafka's specs: -1 latest, -2 earliest, -3 max-timestamp (ListOffsets v7+), -4 earliest-local (v8+), -5
latest-tiered (v9+), or a time in ms. A leader that does not speak the version a spec needs fails only the
partitions asking for that spec; the others are asked again at a lower version.
Requests go to each partition's leader through partition_leader.call_partition_leaders (retries, metadata
refreshes, the call's timeout). Thread-safety: one call per thread.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import Any

from kafkapy.client.errors import ClientUnsupportedVersionError, KafkaTimeoutError, error_from_code
from kafkapy.client.network_client import NetworkClient
from kafkapy.client.partition_leader import call_partition_leaders
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages.list_offsets import ListOffsetsRequest, ListOffsetsResponse

LIST_OFFSETS_KEY = 2
# Lowest ListOffsets version able to answer each special timestamp.
_SPEC_MIN_VERSION = {-3: 7, -4: 8, -5: 9}


@dataclass(frozen=True, slots=True)
class OffsetAndTimestamp:
    offset: int
    timestamp: int
    leader_epoch: int | None = None


def _min_version(timestamp: int, isolation_level: int) -> int:
    return max(_SPEC_MIN_VERSION.get(timestamp, 1), 2 if isolation_level else 1)


def _builder(parts: dict[TopicPartition, int], isolation_level: int) -> Any:
    def build(version: int) -> ListOffsetsRequest:
        R = ListOffsetsRequest
        topics: dict[str, list] = {}
        for tp, ts in parts.items():
            topics.setdefault(tp.topic, []).append(
                R.ListOffsetsPartition(partition_index=tp.partition, current_leader_epoch=-1, timestamp=ts))
        return R(replica_id=-1, isolation_level=isolation_level,
                 topics=[R.ListOffsetsTopic(name=t, partitions=p) for t, p in topics.items()], timeout_ms=30000)

    return build


def list_offsets_by_partition(
    client: NetworkClient,
    timestamps: dict[TopicPartition, int],
    timeout_ms: float,
    isolation_level: int = 0,
    refresh_metadata: bool = False,
) -> dict[TopicPartition, OffsetAndTimestamp | None | KafkaError]:
    """{tp: OffsetAndTimestamp | None (no such offset) | KafkaError} for every partition asked about."""

    def send(node: int, parts: dict[TopicPartition, int], remaining_ms: int) -> dict[TopicPartition, Any]:
        need = {tp: _min_version(ts, isolation_level) for tp, ts in parts.items()}
        top = max(need.values())
        try:
            resp: ListOffsetsResponse = client.request(node, _builder(parts, isolation_level), remaining_ms,
                                                       api_key=LIST_OFFSETS_KEY, min_version=top)
        except ClientUnsupportedVersionError as e:
            answers: dict[TopicPartition, Any] = {tp: e for tp in parts if need[tp] == top}
            lower = {tp: ts for tp, ts in parts.items() if need[tp] < top}
            if lower:
                answers.update(send(node, lower, remaining_ms))
            return answers
        answers = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code:
                    answers[tp] = error_from_code(p.error_code, f"partition {tp}")
                elif p.offset < 0:
                    answers[tp] = None
                else:
                    epoch = p.leader_epoch
                    answers[tp] = OffsetAndTimestamp(p.offset, p.timestamp, None if epoch < 0 else epoch)
        return answers

    return call_partition_leaders(client, timestamps, send, timeout_ms, "listOffsets",
                                  refresh_first=refresh_metadata)


def list_offsets(
    client: NetworkClient, timestamps: dict[TopicPartition, int], timeout_ms: float, isolation_level: int = 0
) -> dict[TopicPartition, OffsetAndTimestamp | None]:
    """As list_offsets_by_partition, raising the first partition's error (the consumer's lookups); a
    partition still failing with a retriable error when the time is up raises Java's TimeoutException."""
    found = list_offsets_by_partition(client, timestamps, timeout_ms, isolation_level)
    for value in found.values():
        if isinstance(value, KafkaError) and value.retriable:
            raise KafkaTimeoutError(f"Failed to get offsets by times in {timeout_ms:.0f}ms") from value
        if isinstance(value, KafkaError):
            raise value
    return found  # type: ignore[return-value]
