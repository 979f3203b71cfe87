"""Transaction APIs: AddPartitionsToTxn (24) v0-5 (v4+: the brokers' batched form, verify_only), AddOffsetsToTxn (25) v0-4, EndTxn (26) v0-4,
WriteTxnMarkers (27) v0-1, TxnOffsetCommit (28) v0-4, DescribeProducers (61) v0, DescribeTransactions (65) v0,
ListTransactions (66) v0-1.

Thin handlers: the coordinator-side ones call `ctx.server.transaction_coordinator` (answered from its
callbacks, DEFERRED), TxnOffsetCommit calls the group coordinator, WriteTxnMarkers appends one COMMIT/ABORT
control batch per partition through the ReplicaManager (acks=-1, origin "coordinator") and tells the group
coordinator about markers that landed in __consumer_offsets, DescribeProducers reads each partition's
producer state. Kafka's rules: a partition of a missing topic fails with UNKNOWN_TOPIC_OR_PARTITION and the
others with OPERATION_NOT_ATTEMPTED; PRODUCER_FENCED is INVALID_PRODUCER_EPOCH for clients too old to
know it (AddPartitions/AddOffsets/EndTxn < v2, TxnOffsetCommit < v2).
Authorization as KafkaApis: AddPartitionsToTxn v0-3 WRITE on the transactional id and on each topic (refused
topics' partitions TOPIC_AUTHORIZATION_FAILED, the others OPERATION_NOT_ATTEMPTED), v4+ CLUSTER_ACTION (brokers
only); AddOffsetsToTxn/EndTxn/TxnOffsetCommit WRITE on the transactional id (+ READ group, TxnOffsetCommit READ
on each topic); WriteTxnMarkers ALTER or CLUSTER_ACTION on the cluster (refused: logged, the error on every
partition); DescribeProducers READ on each topic; Describe/ListTransactions DESCRIBE on each transactional id.
Thread-safety: stateless; responses go out from whichever thread completes the work.
"""

from __future__ import annotations

import functools
import logging
import threading
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    CoordinatorNotAvailableError,
    ErrorCode,
    KafkaError,
    NotLeaderOrFollowerError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.internal_topics import GROUP_METADATA_TOPIC_NAME, INTERNAL_TOPICS
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.controller import topic as topic_rules
from kafkapy.coordinator.group_metadata import OffsetAndMetadata
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AddOffsetsToTxnRequest,
    AddOffsetsToTxnResponse,
    AddPartitionsToTxnRequest,
    AddPartitionsToTxnResponse,
    DescribeProducersRequest,
    DescribeProducersResponse,
    DescribeTransactionsRequest,
    DescribeTransactionsResponse,
    EndTxnRequest,
    EndTxnResponse,
    ListTransactionsRequest,
    ListTransactionsResponse,
    TxnOffsetCommitRequest,
    TxnOffsetCommitResponse,
    WriteTxnMarkersRequest,
    WriteTxnMarkersResponse,
)
from kafkapy.record.control_record import ControlRecordType, build_end_txn_marker_batch
from kafkapy.server.apis.registry import DEFERRED, Deferred, api

if TYPE_CHECKING:
    from kafkapy.coordinator.transaction_coordinator import TransactionCoordinator
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")



def _txn_coordinator(ctx: RequestContext) -> TransactionCoordinator:
    coordinator = ctx.server.transaction_coordinator
    if coordinator is None or not coordinator.is_active:
        raise CoordinatorNotAvailableError("The transaction coordinator is not available.")
    return coordinator


def _fenced_for(version: int, first_version_knowing_it: int, code: int) -> int:
    if code == ErrorCode.PRODUCER_FENCED and version < first_version_knowing_it:
        return ErrorCode.INVALID_PRODUCER_EPOCH
    return code


# -- AddPartitionsToTxn --------------------------------------------------------------------------------

def _add_partitions_response(topics: dict[str, list[int]], codes: dict[TopicPartition, int]) -> AddPartitionsToTxnResponse:
    return AddPartitionsToTxnResponse(throttle_time_ms=0, results_by_topic_v3_and_below=_topic_results(topics, codes))


def _add_partitions_error(request: AddPartitionsToTxnRequest, version: int, code: int) -> AddPartitionsToTxnResponse:
    if version >= 4:
        return AddPartitionsToTxnResponse(throttle_time_ms=0, error_code=code, results_by_transaction=[])
    topics = {t.name: list(t.partitions) for t in request.v3_and_below_topics}
    return _add_partitions_response(topics, {TopicPartition(t, p): code for t, ps in topics.items() for p in ps})


def _topic_results(topics: dict[str, list[int]], codes: dict[TopicPartition, int]) -> list[Any]:
    R = AddPartitionsToTxnResponse
    return [R.AddPartitionsToTxnTopicResult(name=t, results_by_partition=[R.AddPartitionsToTxnPartitionResult(
        partition_index=p, partition_error_code=codes[TopicPartition(t, p)]) for p in ps]) for t, ps in topics.items()]


def _unknown_partition_codes(ctx: RequestContext, partitions: set[TopicPartition]) -> dict[TopicPartition, int] | None:
    """Kafka's rule: with any unknown partition, those fail and the others are not attempted."""
    cache = ctx.server.metadata_cache
    unknown = {tp for tp in partitions if not cache.contains(tp)}
    if not unknown:
        return None
    return {tp: ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if tp in unknown else ErrorCode.OPERATION_NOT_ATTEMPTED
            for tp in partitions}


def _unwritable_partition_codes(ctx: RequestContext, partitions: set[TopicPartition]) -> dict[TopicPartition, int] | None:
    """Kafka's client-side (v0-3) rule: WRITE on each topic (never on an internal one); with any topic refused,
    its partitions fail with TOPIC_AUTHORIZATION_FAILED and the others are not attempted."""
    topics = {tp.topic for tp in partitions}
    denied = {t for t in topics if t in INTERNAL_TOPICS or not ctx.authorize(AclOperation.WRITE, ResourceType.TOPIC, t)}
    if not denied:
        return _unknown_partition_codes(ctx, partitions)
    cache = ctx.server.metadata_cache
    return {tp: ErrorCode.TOPIC_AUTHORIZATION_FAILED if tp.topic in denied else
            ErrorCode.UNKNOWN_TOPIC_OR_PARTITION if not cache.contains(tp) else ErrorCode.OPERATION_NOT_ATTEMPTED
            for tp in partitions}


@api(ApiKey.ADD_PARTITIONS_TO_TXN, 0, 5, error_response=_add_partitions_error)
def handle_add_partitions_to_txn(ctx: RequestContext, request: AddPartitionsToTxnRequest) -> AddPartitionsToTxnResponse | Deferred:
    version = ctx.api_version
    if version >= 4:
        # The batched form comes from brokers only (KIP-890): a client may not drive another's transaction.
        ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
        return _add_partitions_batched(ctx, request)
    ctx.require(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.v3_and_below_transactional_id)
    topics: dict[str, list[int]] = {}
    for t in request.v3_and_below_topics:
        topics.setdefault(t.name, []).extend(t.partitions)
    partitions = {TopicPartition(t, p) for t, ps in topics.items() for p in ps}
    codes = _unwritable_partition_codes(ctx, partitions)
    if codes is not None:
        return _add_partitions_response(topics, codes)
    coordinator = _txn_coordinator(ctx)

    def done(code: int) -> None:
        code = _fenced_for(version, 2, code)
        ctx.respond(_add_partitions_response(topics, dict.fromkeys(partitions, code)))

    coordinator.handle_add_partitions_to_transaction(
        request.v3_and_below_transactional_id, request.v3_and_below_producer_id, request.v3_and_below_producer_epoch,
        partitions, done)
    return DEFERRED


def _add_partitions_batched(ctx: RequestContext, request: AddPartitionsToTxnRequest
                            ) -> AddPartitionsToTxnResponse | Deferred:
    """v4+ (brokers, KIP-890): several transactions per request; verify_only asks whether the partitions are
    already in the ongoing transaction instead of adding them."""
    R = AddPartitionsToTxnResponse
    coordinator = _txn_coordinator(ctx)
    txns = list(request.transactions)
    results: list[Any] = [None] * len(txns)
    remaining = [len(txns)]
    lock = threading.Lock()

    def settle(i: int, topics: dict[str, list[int]], codes: dict[TopicPartition, int]) -> None:
        results[i] = R.AddPartitionsToTxnResult(transactional_id=txns[i].transactional_id,
                                                topic_results=_topic_results(topics, codes))
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            ctx.respond(R(throttle_time_ms=0, error_code=0, results_by_transaction=results))

    def settle_all(i: int, topics: dict[str, list[int]], partitions: set[TopicPartition], code: int) -> None:
        settle(i, topics, dict.fromkeys(partitions, code))

    if not txns:
        return R(throttle_time_ms=0, error_code=0, results_by_transaction=[])
    for i, txn in enumerate(txns):
        topics: dict[str, list[int]] = {}
        for t in txn.topics:
            topics.setdefault(t.name, []).extend(t.partitions)
        partitions = {TopicPartition(t, p) for t, ps in topics.items() for p in ps}
        codes = _unknown_partition_codes(ctx, partitions)
        if codes is not None:
            settle(i, topics, codes)
        elif txn.verify_only:
            settle(i, topics, coordinator.handle_verify_partitions_in_transaction(
                txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions))
        else:
            coordinator.handle_add_partitions_to_transaction(
                txn.transactional_id, txn.producer_id, txn.producer_epoch, partitions,
                functools.partial(settle_all, i, topics, partitions))
    return DEFERRED


# -- AddOffsetsToTxn / EndTxn --------------------------------------------------------------------------

@api(ApiKey.ADD_OFFSETS_TO_TXN, 0, 4)
def handle_add_offsets_to_txn(ctx: RequestContext, request: AddOffsetsToTxnRequest) -> AddOffsetsToTxnResponse | Deferred:
    ctx.require(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    version = ctx.api_version
    coordinator = _txn_coordinator(ctx)
    group_coordinator = ctx.server.group_coordinator
    if group_coordinator is None:
        raise CoordinatorNotAvailableError("The group coordinator is not available.")
    offsets_tp = TopicPartition(GROUP_METADATA_TOPIC_NAME, group_coordinator.partition_for(request.group_id))

    def done(code: int) -> None:
        ctx.respond(AddOffsetsToTxnResponse(throttle_time_ms=0, error_code=_fenced_for(version, 2, code)))

    coordinator.handle_add_partitions_to_transaction(request.transactional_id, request.producer_id,
                                                     request.producer_epoch, {offsets_tp}, done)
    return DEFERRED


@api(ApiKey.END_TXN, 0, 4)
def handle_end_txn(ctx: RequestContext, request: EndTxnRequest) -> EndTxnResponse | Deferred:
    ctx.require(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    version = ctx.api_version
    coordinator = _txn_coordinator(ctx)

    def done(code: int) -> None:
        ctx.respond(EndTxnResponse(throttle_time_ms=0, error_code=_fenced_for(version, 2, code)))

    coordinator.handle_end_transaction(request.transactional_id, request.producer_id, request.producer_epoch,
                                       request.committed, done)
    return DEFERRED


# -- WriteTxnMarkers -------------------------------------------------------------------------------------

def _write_txn_markers_error(request: WriteTxnMarkersRequest, version: int, code: int) -> WriteTxnMarkersResponse:
    """Kafka's WriteTxnMarkersRequest.getErrorResponse: the error on every partition of every marker."""
    R = WriteTxnMarkersResponse
    return R(markers=[R.WritableTxnMarkerResult(producer_id=m.producer_id, topics=[
        R.WritableTxnMarkerTopicResult(name=t.name, partitions=[
            R.WritableTxnMarkerPartitionResult(partition_index=p, error_code=code) for p in t.partition_indexes])
        for t in m.topics]) for m in request.markers])


@api(ApiKey.WRITE_TXN_MARKERS, 0, 1, error_response=_write_txn_markers_error)
def handle_write_txn_markers(ctx: RequestContext, request: WriteTxnMarkersRequest) -> WriteTxnMarkersResponse | Deferred:
    # Kafka: ALTER on the cluster, else CLUSTER_ACTION.
    if not ctx.authorize(AclOperation.ALTER, ResourceType.CLUSTER, log_if_denied=False) and \
            not ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER):
        log.warning("WriteTxnMarkers from %s (client %s) refused: CLUSTER_ACTION on the cluster is not authorized; "
                    "%d marker(s) not written", ctx.principal, ctx.client_id, len(request.markers))
        ctx.require(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    services = ctx.server
    rm = services.replica_manager
    R = WriteTxnMarkersResponse
    markers = list(request.markers)
    results: list[dict[TopicPartition, int]] = [{} for _ in markers]
    remaining = [len(markers)]
    lock = threading.Lock()
    if not markers:
        return R(markers=[])

    def respond() -> None:
        out = []
        for marker, codes in zip(markers, results, strict=True):
            by_topic: dict[str, list[Any]] = {}
            for t in marker.topics:
                for p in t.partition_indexes:
                    by_topic.setdefault(t.name, []).append(R.WritableTxnMarkerPartitionResult(
                        partition_index=p, error_code=codes.get(TopicPartition(t.name, p), ErrorCode.UNKNOWN_SERVER_ERROR)))
            out.append(R.WritableTxnMarkerResult(producer_id=marker.producer_id, topics=[
                R.WritableTxnMarkerTopicResult(name=n, partitions=ps) for n, ps in by_topic.items()]))
        ctx.respond(R(markers=out))

    def one_done() -> None:
        with lock:
            remaining[0] -= 1
            last = remaining[0] == 0
        if last:
            respond()

    now = services.time.milliseconds()
    for i, marker in enumerate(markers):
        control = ControlRecordType.COMMIT if marker.transaction_result else ControlRecordType.ABORT
        batch = build_end_txn_marker_batch(control, marker.producer_id, marker.producer_epoch,
                                           marker.coordinator_epoch, now)
        entries: dict[TopicPartition, Any] = {}
        for t in marker.topics:
            for p in t.partition_indexes:
                tp = TopicPartition(t.name, p)
                if services.metadata_cache.contains(tp):
                    entries[tp] = batch
                else:
                    results[i][tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
        if not entries:
            one_done()
            continue

        def appended(answers: dict[TopicPartition, Any], i: int = i, marker: Any = marker) -> None:
            offsets_partitions = set()
            for tp, r in answers.items():
                results[i][tp] = r.error
                if not r.error and tp.topic == GROUP_METADATA_TOPIC_NAME:
                    offsets_partitions.add(tp.partition)
            if offsets_partitions and services.group_coordinator is not None:
                try:
                    services.group_coordinator.on_transaction_completed(marker.producer_id, offsets_partitions,
                                                                        bool(marker.transaction_result))
                except Exception:
                    log.exception("Completing the transactional offsets of producer %d failed", marker.producer_id)
            one_done()

        rm.append_records(services.config.get_int("request.timeout.ms"), -1, entries, appended,
                          internal_topics_allowed=True, origin="coordinator")
    return DEFERRED


# -- TxnOffsetCommit -------------------------------------------------------------------------------------

def _txn_offset_commit_response(request: TxnOffsetCommitRequest, codes: dict[TopicPartition, int]) -> TxnOffsetCommitResponse:
    R = TxnOffsetCommitResponse
    return R(throttle_time_ms=0, topics=[R.TxnOffsetCommitResponseTopic(name=t.name, partitions=[
        R.TxnOffsetCommitResponsePartition(partition_index=p.partition_index,
                                           error_code=codes.get(TopicPartition(t.name, p.partition_index), 0))
        for p in t.partitions]) for t in request.topics])


def _txn_offset_commit_error(request: TxnOffsetCommitRequest, version: int, code: int) -> TxnOffsetCommitResponse:
    return _txn_offset_commit_response(request, {TopicPartition(t.name, p.partition_index): code
                                                  for t in request.topics for p in t.partitions})


@api(ApiKey.TXN_OFFSET_COMMIT, 0, 4, error_response=_txn_offset_commit_error)
def handle_txn_offset_commit(ctx: RequestContext, request: TxnOffsetCommitRequest) -> TxnOffsetCommitResponse | Deferred:
    ctx.require(AclOperation.WRITE, ResourceType.TRANSACTIONAL_ID, request.transactional_id)
    ctx.require(AclOperation.READ, ResourceType.GROUP, request.group_id)
    version = ctx.api_version
    services = ctx.server
    coordinator = services.group_coordinator
    if coordinator is None:
        raise CoordinatorNotAvailableError("The group coordinator is not available.")
    now = services.time.milliseconds()
    codes: dict[TopicPartition, int] = {}
    offsets: dict[TopicPartition, OffsetAndMetadata] = {}
    for t in request.topics:
        readable = ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name)
        for p in t.partitions:
            tp = TopicPartition(t.name, p.partition_index)
            if not readable:
                codes[tp] = ErrorCode.TOPIC_AUTHORIZATION_FAILED
            elif not services.metadata_cache.contains(tp):
                codes[tp] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
            else:
                offsets[tp] = OffsetAndMetadata(p.committed_offset, p.committed_leader_epoch,
                                                p.committed_metadata or "", now)
    if not offsets:
        return _txn_offset_commit_response(request, codes)

    def done(results: dict[TopicPartition, int]) -> None:
        codes.update({tp: _fenced_for(version, 2, c) for tp, c in results.items()})
        ctx.respond(_txn_offset_commit_response(request, codes))

    coordinator.handle_txn_commit_offsets(request.group_id, request.producer_id, request.producer_epoch,
                                          request.member_id, request.group_instance_id, request.generation_id,
                                          offsets, done)
    return DEFERRED


# -- DescribeProducers / DescribeTransactions / ListTransactions ---------------------------------------

@api(ApiKey.DESCRIBE_PRODUCERS, 0, 0)
def handle_describe_producers(ctx: RequestContext, request: DescribeProducersRequest) -> DescribeProducersResponse:
    rm = ctx.server.replica_manager
    R = DescribeProducersResponse
    topics = []
    for t in request.topics:
        parts = []
        # Kafka: a valid name, READ on the topic (producer ids and epochs are a transaction's keys), a known topic.
        topic_error: KafkaError | None = None
        try:
            topic_rules.validate(t.name)
        except KafkaError as e:
            topic_error = e
        if topic_error is None and not ctx.authorize(AclOperation.READ, ResourceType.TOPIC, t.name):
            topic_error = TopicAuthorizationFailedError("Topic authorization failed.")
        elif topic_error is None and not ctx.server.metadata_cache.contains_topic(t.name):
            topic_error = UnknownTopicOrPartitionError("This server does not host this topic-partition.")
        for index in t.partition_indexes:
            tp = TopicPartition(t.name, index)
            if topic_error is not None:
                parts.append(R.PartitionResponse(partition_index=index, error_code=topic_error.code,
                                                 error_message=topic_error.message))
                continue
            try:
                # Any local replica answers, as Kafka's Partition.activeProducerState (find-hanging asks the
                # followers too).
                local_log = rm.get_partition_or_error(tp).log
                if local_log is None:
                    raise NotLeaderOrFollowerError(f"Leader not local for partition {tp}")
                entries = local_log.producer_state_manager.active_producers()
                parts.append(R.PartitionResponse(partition_index=index, error_code=0, active_producers=[
                    R.ProducerState(producer_id=e.producer_id, producer_epoch=e.producer_epoch, last_sequence=e.last_seq,
                                    last_timestamp=e.last_timestamp, coordinator_epoch=e.coordinator_epoch,
                                    current_txn_start_offset=e.current_txn_first_offset)
                    for e in sorted(entries, key=lambda e: e.producer_id)]))
            except Exception as e:
                code = e.code if isinstance(e, KafkaError) else ErrorCode.UNKNOWN_SERVER_ERROR
                parts.append(R.PartitionResponse(partition_index=index, error_code=code, error_message=None))
        topics.append(R.TopicResponse(name=t.name, partitions=parts))
    return R(throttle_time_ms=0, topics=topics)


@api(ApiKey.DESCRIBE_TRANSACTIONS, 0, 0)
def handle_describe_transactions(ctx: RequestContext, request: DescribeTransactionsRequest) -> DescribeTransactionsResponse:
    R = DescribeTransactionsResponse
    coordinator = ctx.server.transaction_coordinator
    if coordinator is None or not coordinator.is_active:
        return R(throttle_time_ms=0, transaction_states=[
            R.TransactionState(error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE, transactional_id=tid)
            for tid in request.transactional_ids])
    states = [R.TransactionState(error_code=ErrorCode.TRANSACTIONAL_ID_AUTHORIZATION_FAILED, transactional_id=tid)
              for tid in request.transactional_ids
              if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, tid)]
    denied = {s.transactional_id for s in states}
    for d in coordinator.handle_describe_transactions([t for t in request.transactional_ids if t not in denied]):
        by_topic: dict[str, list[int]] = {}
        for tp in d.topic_partitions:
            by_topic.setdefault(tp.topic, []).append(tp.partition)
        states.append(R.TransactionState(
            error_code=d.error_code, transactional_id=d.transactional_id, transaction_state=d.state,
            transaction_timeout_ms=d.transaction_timeout_ms, transaction_start_time_ms=d.transaction_start_time_ms,
            producer_id=d.producer_id, producer_epoch=d.producer_epoch,
            topics=[R.TopicData(topic=t, partitions=ps) for t, ps in by_topic.items()]))
    return R(throttle_time_ms=0, transaction_states=states)


@api(ApiKey.LIST_TRANSACTIONS, 0, 1)
def handle_list_transactions(ctx: RequestContext, request: ListTransactionsRequest) -> ListTransactionsResponse:
    R = ListTransactionsResponse
    coordinator = ctx.server.transaction_coordinator
    if coordinator is None:
        return R(throttle_time_ms=0, error_code=ErrorCode.COORDINATOR_NOT_AVAILABLE)
    duration = request.duration_filter if ctx.api_version >= 1 else -1
    error, unknown, listings = coordinator.handle_list_transactions(
        request.state_filters, request.producer_id_filters, duration)
    return R(throttle_time_ms=0, error_code=error, unknown_state_filters=unknown, transaction_states=[
        R.TransactionState(transactional_id=t.transactional_id, producer_id=t.producer_id, transaction_state=t.state)
        for t in listings if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TRANSACTIONAL_ID, t.transactional_id)])
