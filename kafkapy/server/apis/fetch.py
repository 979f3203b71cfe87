"""Fetch (api key 1), v4-17: reads through the ReplicaManager and answers with records as FileRegions.

The records of every partition go out with os.sendfile straight from the segment file: they are
never read into Python here. v13+ name topics by id (unknown id -> UNKNOWN_TOPIC_ID per partition).
Fetch sessions (KIP-227, v7+): the ReplicaManager's FetchManager turns the session id / epoch into a
context (fetch_session.py): epoch -1 is sessionless (answered in full, session id 0); epoch 0 is answered in
full and opens a session when the cache has room (its id in the response); an incremental request updates
its session (partitions named: changed fetch state; forgotten topics: removed), reads what it names plus
what changed since, and is answered with the changed partitions only. A session error
(FETCH_SESSION_ID_NOT_FOUND, INVALID_FETCH_SESSION_EPOCH) is a top-level error with no partitions. v0-3 are not served (as Kafka 4): their clients read magic 0/1 only, and
the log holds magic 2, which this broker never down-converts (the records never enter Python). Every
served version returns at least one batch per response. max_bytes is capped by fetch.max.bytes;
min_bytes by max_bytes.
Thread-safety: stateless; the response is sent from whichever thread completes the fetch.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import FetchRequest, FetchResponse
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.server.apis.registry import DEFERRED, Deferred, api
from kafkapy.server.fetch_params import FetchParams, FetchPartitionData, FetchPartitionInfo
from kafkapy.server.fetch_session import FetchContext

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")
Resp = FetchResponse
_TOPIC_UNAUTHORIZED = FetchPartitionData(ErrorCode.TOPIC_AUTHORIZATION_FAILED)


def _partition_data(index: int, d: FetchPartitionData, version: int) -> Any:
    pd = Resp.PartitionData(
        partition_index=index, error_code=d.error, high_watermark=d.high_watermark,
        last_stable_offset=d.last_stable_offset, log_start_offset=d.log_start_offset,
        aborted_transactions=None if d.aborted_transactions is None else [
            Resp.AbortedTransaction(producer_id=pid, first_offset=first) for pid, first in d.aborted_transactions],
        preferred_read_replica=d.preferred_read_replica, records=d.records if d.records is not None else b"")
    if version < 12:
        return pd  # the tagged fields below exist from v12
    if d.diverging_epoch is not None:
        pd.diverging_epoch = Resp.EpochEndOffset(epoch=d.diverging_epoch[0], end_offset=d.diverging_epoch[1])
    if d.current_leader is not None:
        pd.current_leader = Resp.LeaderIdAndEpoch(leader_id=d.current_leader[0], leader_epoch=d.current_leader[1])
    return pd


def fetch_error_response(request: FetchRequest, version: int, code: int) -> FetchResponse:
    """Whole-request error: Kafka's FetchResponse.of(error) - top-level error, no partitions (v7+);
    older versions carry the error on every partition."""
    if version >= 7:
        return FetchResponse(throttle_time_ms=0, error_code=code, session_id=0, responses=[])
    topics = [Resp.FetchableTopicResponse(topic=t.topic, topic_id=t.topic_id, partitions=[
        Resp.PartitionData(partition_index=p.partition, error_code=code, high_watermark=-1, records=b"")
        for p in t.partitions]) for t in request.topics]
    return FetchResponse(throttle_time_ms=0, error_code=0, session_id=0, responses=topics)


@api(ApiKey.FETCH, 4, 17, error_response=fetch_error_response)
def handle_fetch(ctx: RequestContext, request: FetchRequest) -> FetchResponse | Deferred:
    services = ctx.server
    version = ctx.api_version
    use_ids = version >= 13
    names_by_id = services.metadata_cache.snapshot().topic_names if use_ids else {}  # read only when use_ids
    # (topic name or None, topic id, [(partition, info or error)]) in request order.
    layout: list[tuple[str | None, Any, list[tuple[int, TopicPartition | None]]]] = []
    partitions: dict[TopicPartition, FetchPartitionInfo] = {}
    if version >= 15:
        state = request.replica_state
        replica_id = state.replica_id if state is not None else -1
        replica_epoch = state.replica_epoch if state is not None else -1
    else:
        replica_id, replica_epoch = request.replica_id, -1
    ctx.quota_exempt = replica_id >= 0  # replication has its own throttle (ReplicationQuotaManager)
    # Kafka: a follower needs CLUSTER_ACTION on the cluster, a consumer READ on each topic.
    follower_authorized = replica_id < 0 or ctx.authorize(AclOperation.CLUSTER_ACTION, ResourceType.CLUSTER)
    denied: dict[TopicPartition, FetchPartitionData] = {}
    for t in request.topics:
        if use_ids:
            name = names_by_id.get(t.topic_id)
        else:
            name = t.topic
        authorized = name is not None and follower_authorized and (
            replica_id >= 0 or ctx.authorize(AclOperation.READ, ResourceType.TOPIC, name))
        entries: list[tuple[int, TopicPartition | None]] = []
        for p in t.partitions:
            if name is None:
                entries.append((p.partition, None))
                continue
            tp = TopicPartition(name, p.partition)
            if not authorized:
                denied[tp] = _TOPIC_UNAUTHORIZED
                entries.append((p.partition, tp))
                continue
            partitions[tp] = FetchPartitionInfo(p.fetch_offset, p.partition_max_bytes, p.log_start_offset,
                                                p.current_leader_epoch, p.last_fetched_epoch)
            entries.append((p.partition, tp))
        layout.append((name, t.topic_id, entries))

    fetch_manager = services.replica_manager.fetch_manager
    if version >= 7:
        forgotten: list[TopicPartition] = []
        for f in request.forgotten_topics_data:
            fname = names_by_id.get(f.topic_id) if use_ids else f.topic
            if fname is not None:
                forgotten.extend(TopicPartition(fname, p) for p in f.partitions)
        fctx = fetch_manager.new_context(request.session_id, request.session_epoch, partitions, forgotten,
                                         replica_id >= 0)
    else:
        fctx = FetchContext("sessionless", partitions)
    if fctx.kind == "error":
        return FetchResponse(throttle_time_ms=0, error_code=fctx.error_code, session_id=0, responses=[])
    session = fctx.session

    max_bytes = min(request.max_bytes, services.config.get_int("fetch.max.bytes"))
    params = FetchParams(
        replica_id=replica_id, max_wait_ms=request.max_wait_ms, min_bytes=min(request.min_bytes, max_bytes),
        max_bytes=max_bytes, isolation_level=request.isolation_level, partitions=fctx.read,
        hard_max_bytes_limit=version <= 2, replica_epoch=replica_epoch)

    unknown_id = FetchPartitionData(ErrorCode.UNKNOWN_TOPIC_ID)

    def respond(results: dict[TopicPartition, FetchPartitionData]) -> None:
        # May run on another request's thread (a purgatory completion): never let a failure escape there.
        if denied:
            results = {**results, **denied}
        try:
            if services.metrics is not None:
                services.metrics.topic_stats.on_fetch_response(results, replica_id >= 0)
            if session is not None:
                topics = _incremental_topics(fetch_manager.changed(session, results), layout, version, use_ids,
                                             services)
                session_id = session.id
            else:
                topics = []
                for name, topic_id, entries in layout:
                    parts = [_partition_data(index, results[tp] if tp is not None else unknown_id, version)
                             for index, tp in entries]
                    topics.append(Resp.FetchableTopicResponse(topic=name or "", topic_id=topic_id or ZERO_UUID,
                                                              partitions=parts))
                session_id = fetch_manager.create_session(replica_id >= 0, partitions, results) \
                    if fctx.kind == "full" else 0
            ctx.respond(FetchResponse(throttle_time_ms=0, error_code=0, session_id=session_id, responses=topics))
        except Exception:
            log.exception("Could not send the Fetch v%d response to %s; closing its connection", version,
                          ctx.client_id)
            ctx.close()

    services.replica_manager.fetch_messages(params, respond, session)
    return DEFERRED


def _incremental_topics(changed: dict[TopicPartition, FetchPartitionData],
                        layout: list[tuple[str | None, Any, list[tuple[int, TopicPartition | None]]]],
                        version: int, use_ids: bool, services: Any) -> list[Any]:
    """An incremental response: the changed partitions grouped by topic, plus the request's own errors
    (unknown topic ids, denied topics), which are not held by the session."""
    by_topic: dict[str, list[Any]] = {}
    for tp, d in changed.items():
        by_topic.setdefault(tp.topic, []).append(_partition_data(tp.partition, d, version))
    ids = services.metadata_cache.snapshot().topic_ids if use_ids else {}
    topics = [Resp.FetchableTopicResponse(topic=name, topic_id=ids.get(name, ZERO_UUID), partitions=parts)
              for name, parts in by_topic.items()]
    unknown = FetchPartitionData(ErrorCode.UNKNOWN_TOPIC_ID)
    for name, topic_id, entries in layout:
        if name is None:
            topics.append(Resp.FetchableTopicResponse(topic="", topic_id=topic_id or ZERO_UUID, partitions=[
                _partition_data(index, unknown, version) for index, _tp in entries]))
    return topics
