"""The AdminClient's transaction calls (Java's Admin.describeTransactions / listTransactions /
describeProducers / abortTransaction): DescribeTransactions to each id's transaction coordinator
(FindCoordinator key type 1), ListTransactions to every broker, DescribeProducers to each partition's
leader (or a chosen broker), and abort as a WriteTxnMarkers ABORT for one partition sent to its leader.
Helper functions over the AdminClient's AdminCalls; the AdminClient exposes them as methods.
Thread-safety: stateless.
"""

from __future__ import annotations

from collections.abc import Iterable, Mapping
from dataclasses import dataclass
from typing import Any

from kafkapy.client.admin_calls import AdminCalls
from kafkapy.client.errors import error_from_code
from kafkapy.client.metadata import Node
from kafkapy.client.partition_leader import call_partition_leaders
from kafkapy.common.errors import KafkaError
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M
from kafkapy.protocol.api_keys import ApiKey

TRANSACTION_KEY_TYPE = 1


@dataclass(frozen=True)
class TransactionDescription:
    coordinator_id: int
    state: str
    producer_id: int
    producer_epoch: int
    transaction_timeout_ms: int
    transaction_start_time_ms: int | None  # None when no transaction is open
    topic_partitions: tuple[TopicPartition, ...]


@dataclass(frozen=True)
class TransactionListing:
    transactional_id: str
    producer_id: int
    state: str


@dataclass(frozen=True)
class ProducerState:
    producer_id: int
    producer_epoch: int
    last_sequence: int
    last_timestamp: int
    coordinator_epoch: int | None  # None: no marker written yet (-1 on the wire)
    current_transaction_start_offset: int | None


@dataclass(frozen=True)
class AbortTransactionSpec:
    topic_partition: TopicPartition
    producer_id: int
    producer_epoch: int
    coordinator_epoch: int


def find_transaction_coordinator(calls: AdminCalls, transactional_id: str, timeout_ms: float | None = None) -> Node:
    def build(version: int) -> Any:
        if version >= 4:
            return M.FindCoordinatorRequest(key_type=TRANSACTION_KEY_TYPE, coordinator_keys=[transactional_id])
        return M.FindCoordinatorRequest(key=transactional_id, key_type=TRANSACTION_KEY_TYPE)

    def handle(resp: M.FindCoordinatorResponse) -> Node:
        if resp.coordinators:
            c = resp.coordinators[0]
            code, message, node = c.error_code, c.error_message, Node(c.node_id, c.host, c.port)
        else:
            code, message, node = resp.error_code, resp.error_message, Node(resp.node_id, resp.host, resp.port)
        if code:
            raise error_from_code(code, message)
        return node

    return calls.call(None, build, ApiKey.FIND_COORDINATOR, timeout_ms, handle, "findCoordinator", min_version=1)


def describe_transactions(calls: AdminCalls, transactional_ids: Iterable[str], timeout_ms: float | None = None
                          ) -> dict[str, TransactionDescription | KafkaError]:
    out: dict[str, TransactionDescription | KafkaError] = {}
    for tid in dict.fromkeys(transactional_ids):
        try:
            out[tid] = _describe_one(calls, tid, timeout_ms)
        except KafkaError as e:
            out[tid] = e
    return out


def _describe_one(calls: AdminCalls, tid: str, timeout_ms: float | None) -> TransactionDescription:
    coordinator: list[int] = []

    def target(deadline: float) -> int:
        node = find_transaction_coordinator(calls, tid, calls.remaining(deadline))
        if calls.client.cluster.node(node.node_id) is None:
            calls.metadata([], deadline)
        coordinator[:] = [node.node_id]
        return node.node_id

    def handle(resp: M.DescribeTransactionsResponse) -> TransactionDescription:
        s = resp.transaction_states[0]
        if s.error_code:
            raise error_from_code(s.error_code, f"transactional id {tid}")
        parts = tuple(TopicPartition(t.topic, p) for t in s.topics for p in t.partitions)
        start = s.transaction_start_time_ms if s.transaction_start_time_ms >= 0 else None
        return TransactionDescription(coordinator[0], s.transaction_state, s.producer_id, s.producer_epoch,
                                      s.transaction_timeout_ms, start, parts)

    return calls.call(target, lambda v: M.DescribeTransactionsRequest(transactional_ids=[tid]),
                      ApiKey.DESCRIBE_TRANSACTIONS, timeout_ms, handle, "describeTransactions")


def list_transactions(calls: AdminCalls, state_filters: Iterable[str] = (), producer_id_filters: Iterable[int] = (),
                      duration_filter_ms: int = -1, timeout_ms: float | None = None
                      ) -> dict[int, list[TransactionListing]]:
    """Listings by coordinator broker id (Java's ListTransactionsResult.allByBrokerId)."""
    deadline = calls.time.milliseconds() + calls.timeout(timeout_ms)
    states, pids = list(state_filters), list(producer_id_filters)

    def build(version: int) -> Any:
        return M.ListTransactionsRequest(state_filters=states, producer_id_filters=pids,
                                         duration_filter=duration_filter_ms if version >= 1 else -1)

    def handle(resp: M.ListTransactionsResponse) -> list[TransactionListing]:
        if resp.error_code:
            raise error_from_code(resp.error_code)
        return [TransactionListing(t.transactional_id, t.producer_id, t.transaction_state)
                for t in resp.transaction_states]

    out: dict[int, list[TransactionListing]] = {}
    for node in sorted(calls.metadata([], deadline).brokers):
        out[node] = calls.call(node, build, ApiKey.LIST_TRANSACTIONS, calls.remaining(deadline), handle,
                               "listTransactions")
    return out


def describe_producers(calls: AdminCalls, partitions: Iterable[TopicPartition], broker_id: int | None = None,
                       timeout_ms: float | None = None) -> dict[TopicPartition, list[ProducerState] | KafkaError]:
    timeout = calls.timeout(timeout_ms)
    wanted = {TopicPartition(*tp): None for tp in partitions}

    def send(node: int, parts: Mapping[TopicPartition, Any], remaining_ms: int) -> dict[TopicPartition, Any]:
        def build(version: int) -> Any:
            by_topic: dict[str, list[int]] = {}
            for tp in parts:
                by_topic.setdefault(tp.topic, []).append(tp.partition)
            return M.DescribeProducersRequest(topics=[M.DescribeProducersRequest.TopicRequest(
                name=t, partition_indexes=ps) for t, ps in by_topic.items()])

        resp = calls.client.request(node, build, remaining_ms, api_key=ApiKey.DESCRIBE_PRODUCERS)
        result: dict[TopicPartition, Any] = {}
        for t in resp.topics:
            for p in t.partitions:
                tp = TopicPartition(t.name, p.partition_index)
                if p.error_code:
                    result[tp] = error_from_code(p.error_code, p.error_message)
                else:
                    result[tp] = [ProducerState(s.producer_id, s.producer_epoch, s.last_sequence, s.last_timestamp,
                                                s.coordinator_epoch if s.coordinator_epoch >= 0 else None,
                                                s.current_txn_start_offset if s.current_txn_start_offset >= 0 else None)
                                  for s in p.active_producers]
        return result

    if broker_id is not None:
        deadline = calls.time.milliseconds() + timeout
        if broker_id not in calls.client.cluster.brokers:  # a fresh client knows only the bootstrap servers
            calls.metadata([], deadline)
        return send(broker_id, wanted, calls.remaining(deadline))
    return call_partition_leaders(calls.client, wanted, send, timeout, "describeProducers", fail_unknown_topics=True,
                                  refresh_first=True)


def abort_transaction(calls: AdminCalls, spec: AbortTransactionSpec, timeout_ms: float | None = None) -> None:
    """Write an ABORT marker for spec's producer on its partition (the partition leader does it)."""
    timeout = calls.timeout(timeout_ms)
    R = M.WriteTxnMarkersRequest
    tp = spec.topic_partition

    def send(node: int, parts: Mapping[TopicPartition, Any], remaining_ms: int) -> dict[TopicPartition, Any]:
        request = R(markers=[R.WritableTxnMarker(
            producer_id=spec.producer_id, producer_epoch=spec.producer_epoch, transaction_result=False,
            coordinator_epoch=spec.coordinator_epoch,
            topics=[R.WritableTxnMarkerTopic(name=tp.topic, partition_indexes=[tp.partition])])])
        resp = calls.client.request(node, lambda v: request, remaining_ms, api_key=ApiKey.WRITE_TXN_MARKERS)
        for marker in resp.markers:
            for t in marker.topics:
                for p in t.partitions:
                    if TopicPartition(t.name, p.partition_index) == tp:
                        return {tp: error_from_code(p.error_code) if p.error_code else None}
        return {tp: error_from_code(-1, "no result for the partition")}

    result = call_partition_leaders(calls.client, {tp: None}, send, timeout, "abortTransaction",
                                    fail_unknown_topics=True, refresh_first=True)[tp]
    if isinstance(result, KafkaError):
        raise result
