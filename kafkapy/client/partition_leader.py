"""Requests to partition leaders with a result or an error per partition (Kafka's PartitionLeaderStrategy,
driven the way its AdminApiDriver drives it): used by ListOffsets (consumer and admin) and DeleteRecords.

Each round finds the leaders of the pending partitions in the metadata snapshot (refreshing it first when
asked to, when a leader is unknown, or after a retriable error), sends one request per leader through
`send(node_id, {tp: item}, timeout_ms) -> {tp: result | KafkaError}` and sorts every partition into a
result, a final error (non-retriable) or a retry after retry.backoff.ms (doubling up to
retry.backoff.max.ms). Partitions of topics the refreshed metadata does not know fail at once with
UNKNOWN_TOPIC_OR_PARTITION when `fail_unknown_topics` (DeleteRecords: Kafka's admin fails them fast);
otherwise they are retried (ListOffsets: the topic may still be being created). When the call's time runs
out every pending partition gets its last retriable error, or a KafkaTimeoutError if it never got one.

Thread-safety: one call per thread, through the NetworkClient's thread-safe request path.
"""

from __future__ import annotations

from collections.abc import Callable, Mapping
from typing import Any, TypeVar

from kafkapy.client.errors import KafkaTimeoutError, error_from_code
from kafkapy.client.metadata import Cluster
from kafkapy.client.network_client import NetworkClient
from kafkapy.common.errors import ErrorCode, KafkaError, LeaderNotAvailableError
from kafkapy.common.topic_partition import TopicPartition

V = TypeVar("V")
Send = Callable[[int, dict[TopicPartition, V], int], Mapping[TopicPartition, Any]]

_UNKNOWN = int(ErrorCode.UNKNOWN_TOPIC_OR_PARTITION)


def _unknown_partition(tp: TopicPartition) -> KafkaError:
    return error_from_code(_UNKNOWN, f"This server does not host this topic-partition: {tp}")


def _route(cluster: Cluster, tp: TopicPartition) -> int | KafkaError:
    """The leader of tp, or why it has none (an error to retry or to report)."""
    t = cluster.topic(tp.topic)
    if t is None or t.error_code == _UNKNOWN or (not t.error_code and tp.partition not in t.partitions):
        return _unknown_partition(tp)
    if t.error_code:
        return error_from_code(t.error_code, f"topic {tp.topic}")
    leader = cluster.leader_for(tp)
    if leader is None or cluster.node(leader) is None:
        return LeaderNotAvailableError(f"There is no leader for partition {tp}")
    return leader


def call_partition_leaders(
    client: NetworkClient,
    items: Mapping[TopicPartition, V],
    send: Send,
    timeout_ms: float,
    what: str,
    *,
    fail_unknown_topics: bool = False,
    refresh_first: bool = False,
) -> dict[TopicPartition, Any]:
    """{tp: send's result for tp, or the KafkaError it ended with} for every partition of `items`."""
    time = client.time
    deadline = time.milliseconds() + timeout_ms
    pending: dict[TopicPartition, V] = dict(items)
    out: dict[TopicPartition, Any] = {}
    last: dict[TopicPartition, KafkaError] = {}
    refresh = refresh_first
    rounds = 0
    max_backoff = int(client.config["retry.backoff.max.ms"])

    def settle(tp: TopicPartition, value: Any) -> None:
        out[tp] = value
        pending.pop(tp, None)

    while pending:
        remaining = deadline - time.milliseconds()
        if remaining <= 0:
            break
        current = client.cluster
        routes = {tp: _route(current, tp) for tp in pending}
        cluster: Cluster | None = current
        if refresh or any(isinstance(r, KafkaError) for r in routes.values()):
            try:
                cluster = client.update_metadata(
                    sorted({tp.topic for tp in pending} | client.metadata.topics), max(1, int(remaining)))
            except KafkaError as e:
                for tp in list(pending):
                    if e.retriable:
                        last[tp] = e
                    else:
                        settle(tp, e)
                cluster = None
            if cluster is not None:
                routes = {tp: _route(cluster, tp) for tp in pending}
        refresh = False
        by_node: dict[int, dict[TopicPartition, V]] = {}
        if cluster is not None:
            for tp, route in routes.items():
                if isinstance(route, int):
                    by_node.setdefault(route, {})[tp] = pending[tp]
                elif route.code == _UNKNOWN and fail_unknown_topics or not route.retriable:
                    settle(tp, route)
                else:
                    last[tp] = route
                    refresh = True
        for node, parts in by_node.items():
            try:
                answers = send(node, parts, max(1, int(deadline - time.milliseconds())))
            except KafkaError as e:
                for tp in parts:
                    if e.retriable:
                        last[tp] = e
                    else:
                        settle(tp, e)
                refresh = refresh or e.retriable
                continue
            for tp in parts:
                answer = answers.get(tp, _MISSING)
                if answer is _MISSING:
                    last[tp] = error_from_code(_UNKNOWN, f"The response from node {node} did not mention {tp}")
                    refresh = True
                elif isinstance(answer, KafkaError) and answer.retriable:
                    last[tp] = answer
                    refresh = True
                else:
                    settle(tp, answer)
        if not pending:
            break
        if refresh:
            client.metadata.request_update()
        backoff = min(max_backoff, client.retry_backoff_ms * (2 ** min(rounds, 16)))
        rounds += 1
        time.sleep(max(0, min(backoff, deadline - time.milliseconds())))
    for tp in pending:
        out[tp] = last.get(tp) or KafkaTimeoutError(f"Timed out waiting for {what} after {timeout_ms:.0f} ms")
    return out


_MISSING: Any = object()
