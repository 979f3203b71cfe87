"""Group offsets on the wire: OffsetAndMetadata, CommitFailedError and the OffsetCommit / OffsetFetch requests
and responses, shared by the ConsumerCoordinator (member commits) and the AdminClient (admin commits, listings).

OffsetCommit v0-9: group, generation (-1 for admin / manual-assignment commits), member id, static
instance id (v7+), per partition offset, leader epoch (v6+), metadata. OffsetFetch v0-7 name one
group (topics None = every committed partition, v2+), v8+ a list of groups; require_stable v7+.
A negative committed offset means "none" (None in the result).

Stateless; thread-safe.
"""

from __future__ import annotations

from collections.abc import Callable, Iterable, Mapping
from typing import Any, NamedTuple

from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.messages import OffsetCommitRequest, OffsetFetchRequest, OffsetFetchResponse

OFFSET_COMMIT, OFFSET_FETCH = 8, 9


class CommitFailedError(KafkaError, code=-1, name="COMMIT_FAILED", retriable=False):
    """Kafka's CommitFailedException: the member is no longer part of the group's generation."""

    def __init__(self, message: str | None = None) -> None:
        super().__init__(message or (
            "Commit cannot be completed since the group has already rebalanced and assigned the partitions to "
            "another member. This means that the time between subsequent calls to poll() was longer than the "
            "configured max.poll.interval.ms, which typically implies that the poll loop is spending too much time "
            "message processing. You can address this either by increasing max.poll.interval.ms or by reducing the "
            "maximum size of batches returned in poll() with max.poll.records."))


class OffsetAndMetadata(NamedTuple):
    offset: int
    metadata: str = ""
    leader_epoch: int | None = None


def to_offset_and_metadata(value: Any) -> OffsetAndMetadata:
    """An int, an OffsetAndMetadata, or anything with .offset (+ .metadata / .leader_epoch)."""
    if isinstance(value, OffsetAndMetadata):
        return value
    if isinstance(value, int):
        return OffsetAndMetadata(value)
    return OffsetAndMetadata(value.offset, getattr(value, "metadata", "") or "", getattr(value, "leader_epoch", None))


def offset_commit_builder(group_id: str, generation_id: int, member_id: str, group_instance_id: str | None,
                          offsets: Mapping[TopicPartition, OffsetAndMetadata]) -> Callable[[int], Any]:
    by_topic: dict[str, list[tuple[int, OffsetAndMetadata]]] = {}
    for tp, om in offsets.items():
        by_topic.setdefault(tp.topic, []).append((tp.partition, om))
    R = OffsetCommitRequest

    def build(version: int) -> Any:
        return R(
            group_id=group_id, generation_id_or_member_epoch=generation_id, member_id=member_id,
            group_instance_id=group_instance_id if version >= 7 else None, retention_time_ms=-1,
            topics=[R.OffsetCommitRequestTopic(name=t, partitions=[
                R.OffsetCommitRequestPartition(
                    partition_index=p, committed_offset=om.offset,
                    committed_leader_epoch=-1 if om.leader_epoch is None else om.leader_epoch,
                    commit_timestamp=-1, committed_metadata=om.metadata or "")
                for p, om in sorted(parts)]) for t, parts in by_topic.items()],
        )

    return build


def offset_fetch_builder(group_id: str, partitions: Iterable[TopicPartition] | None,
                         require_stable: bool) -> Callable[[int], Any]:
    by_topic: dict[str, list[int]] | None = None
    if partitions is not None:
        by_topic = {}
        for tp in sorted(set(partitions), key=lambda tp: (tp.topic, tp.partition)):
            by_topic.setdefault(tp.topic, []).append(tp.partition)
    R = OffsetFetchRequest

    def build(version: int) -> OffsetFetchRequest:
        if version >= 8:
            group_topics = None if by_topic is None else [
                R.OffsetFetchRequestTopics(name=t, partition_indexes=ps) for t, ps in by_topic.items()]
            return R(require_stable=require_stable, groups=[R.OffsetFetchRequestGroup(group_id=group_id,
                                                                                      topics=group_topics)])
        topics = None if by_topic is None else [R.OffsetFetchRequestTopic(name=t, partition_indexes=ps)
                                                for t, ps in by_topic.items()]
        return R(group_id=group_id, topics=topics, require_stable=require_stable and version >= 7)

    return build


class OffsetFetchResult(NamedTuple):
    error_code: int  # group-level (v2+)
    offsets: dict[TopicPartition, OffsetAndMetadata | None]
    partition_errors: dict[TopicPartition, int]


def parse_offset_fetch(resp: OffsetFetchResponse) -> OffsetFetchResult:
    """The first group's answer (v8+ batches groups) or the whole v0-7 answer."""
    topics: list[OffsetFetchResponse.OffsetFetchResponseTopics] | list[OffsetFetchResponse.OffsetFetchResponseTopic]
    if resp.groups:
        group = resp.groups[0]
        code, topics = group.error_code, group.topics
    else:
        code, topics = resp.error_code, resp.topics
    offsets: dict[TopicPartition, OffsetAndMetadata | None] = {}
    errors: dict[TopicPartition, int] = {}
    for t in topics:
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if p.error_code:
                errors[tp] = p.error_code
            elif p.committed_offset < 0:
                offsets[tp] = None
            else:
                epoch = p.committed_leader_epoch
                offsets[tp] = OffsetAndMetadata(p.committed_offset, p.metadata or "", None if epoch < 0 else epoch)
    return OffsetFetchResult(code, offsets, errors)
