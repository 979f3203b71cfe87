"""Metadata (api key 3), v0-13: brokers, cluster id, controller id, topics with ids and partition states.

Kafka's rules (KafkaApis.handleTopicMetadataRequest): v0 asks for all topics with an empty list, v1+
with a null one; v10/v11 take names only, v12+ may name topics by id (unknown id -> UNKNOWN_TOPIC_ID).
A requested topic that does not exist is auto-created (auto.create.topics.enable and, v4+, the
request's allow_auto_topic_creation) through the controller without waiting, answered
LEADER_NOT_AVAILABLE as Kafka's AutoTopicCreationManager does; otherwise UNKNOWN_TOPIC_OR_PARTITION,
or INVALID_TOPIC_EXCEPTION for an illegal name. v0 reports REPLICA_NOT_AVAILABLE for replicas without
an endpoint; v6+ reports LISTENER_NOT_FOUND when the leader lacks the request's listener.
There is no authorizer, so authorized operations are every operation the resource supports.
Thread-safety: stateless; reads one MetadataCache snapshot per request.
"""

from __future__ import annotations

import logging
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import CLUSTER_NAME, AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, InvalidRequestError, InvalidTopicExceptionError
from kafkapy.common.internal_topics import (
    GROUP_METADATA_TOPIC_NAME,
    INTERNAL_TOPICS,
    TRANSACTION_STATE_TOPIC_NAME,
)
from kafkapy.controller import topic as topic_rules
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import MetadataRequest, MetadataResponse
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.server.apis.registry import api

if TYPE_CHECKING:
    from kafkapy.server.broker_services import BrokerServices
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")

# AclOperation bits: READ 3, WRITE 4, CREATE 5, DELETE 6, ALTER 7, DESCRIBE 8, DESCRIBE_CONFIGS 10,
# ALTER_CONFIGS 11 (a topic's supported operations; all allowed without an authorizer).
TOPIC_AUTHORIZED_OPERATIONS = sum(1 << op for op in (3, 4, 5, 6, 7, 8, 10, 11))
# CLUSTER: CREATE 5, ALTER 7, DESCRIBE 8, CLUSTER_ACTION 9, DESCRIBE_CONFIGS 10, ALTER_CONFIGS 11,
# IDEMPOTENT_WRITE 12, CREATE_TOKENS 13, DESCRIBE_TOKENS 14.
CLUSTER_AUTHORIZED_OPERATIONS = sum(1 << op for op in (5, 7, 8, 9, 10, 11, 12, 13, 14))
AUTHORIZED_OPERATIONS_OMITTED = -2147483648


Resp = MetadataResponse


def authorized_operations(ctx: RequestContext, resource_type: ResourceType, name: str, supported: int) -> int:
    """The bits of `supported` (AclOperation codes) the principal is authorized for on the resource."""
    if ctx.server.authorizer is None:
        return supported
    return sum(1 << op for op in range(3, 15)
               if supported & (1 << op) and ctx.authorize(AclOperation(op), resource_type, name))


def _topic(error: int, name: str | None, topic_id: Any = ZERO_UUID, partitions: list | None = None) -> Any:
    return Resp.MetadataResponseTopic(error_code=int(error), name=name, topic_id=topic_id or ZERO_UUID,
                                      is_internal=name in INTERNAL_TOPICS, partitions=partitions or [])


def _auto_create_spec(config: Any, name: str, live_brokers: int) -> tuple[int, int, dict[str, str]]:
    """(partitions, replication factor, configs) Kafka's AutoTopicCreationManager uses for `name`."""
    if name == GROUP_METADATA_TOPIC_NAME:
        return (config.get_int("offsets.topic.num.partitions"),
                config.internal_topic_replication_factor("offsets.topic.replication.factor", live_brokers),
                {"cleanup.policy": "compact", "compression.type": "producer",
                 "segment.bytes": str(config.get_int("offsets.topic.segment.bytes"))})
    if name == TRANSACTION_STATE_TOPIC_NAME:
        rf = config.internal_topic_replication_factor("transaction.state.log.replication.factor", live_brokers)
        # The replication factor is capped by the live brokers (zero-setup single broker); min.isr likewise, or
        # every acks=-1 coordinator write would fail with NOT_ENOUGH_REPLICAS.
        min_isr = min(config.get_int("transaction.state.log.min.isr"), rf)
        return (config.get_int("transaction.state.log.num.partitions"), rf,
                {"cleanup.policy": "compact", "compression.type": "uncompressed", "unclean.leader.election.enable":
                 "false", "min.insync.replicas": str(min_isr),
                 "segment.bytes": str(config.get_int("transaction.state.log.segment.bytes"))})
    return config.get_int("num.partitions"), config.get_int("default.replication.factor"), {}


def auto_create_topics(services: BrokerServices, names: list[str]) -> dict[str, int]:
    """Ask the controller to create `names` (not waiting); the error code each topic is answered with."""
    out: dict[str, int] = {}
    creatable = []
    live = max(1, len(services.metadata_cache.get_alive_brokers()))
    for name in names:
        try:
            topic_rules.validate(name)
        except InvalidTopicExceptionError:
            out[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
            continue
        partitions, rf, configs = _auto_create_spec(services.config, name, live)
        creatable.append((name, partitions, rf, None, configs))
        out[name] = ErrorCode.LEADER_NOT_AVAILABLE
    controller = services.controller
    if creatable and controller is not None:
        future = controller.create_topics(creatable)

        def logged(f: Any) -> None:
            try:
                for name, result in f.result().items():
                    if result.error is not None and result.error.code != ErrorCode.TOPIC_ALREADY_EXISTS:
                        log.info("Auto-creation of topic %s failed: %s", name, result.error)
                    elif result.error is None:
                        log.info("Auto-created topic %s with %d partitions", name, result.num_partitions)
            except Exception as e:  # noqa: BLE001 - the answer was already sent; only log
                log.info("Auto-creation of topics %s failed: %s", [c[0] for c in creatable], e)

        future.add_done_callback(logged)
    return out


def metadata_error_response(request: MetadataRequest, version: int, code: int) -> MetadataResponse:
    """Whole-request failure: every requested topic carries the error (v13 also at the top level)."""
    topics = [_topic(code, t.name, t.topic_id) for t in request.topics or []]
    return MetadataResponse(throttle_time_ms=0, brokers=[], cluster_id=None, controller_id=-1, topics=topics,
                            error_code=code)


@api(ApiKey.METADATA, 0, 13, error_response=metadata_error_response)
def handle_metadata(ctx: RequestContext, request: MetadataRequest) -> MetadataResponse:
    services = ctx.server
    cache = services.metadata_cache
    version = ctx.api_version
    listener = ctx.request.listener_name
    snapshot = cache.snapshot()

    all_topics = request.topics is None or (version == 0 and not request.topics)
    unknown_ids: list[Any] = []
    names: list[str] = []
    if not all_topics:
        for t in request.topics:
            has_id = t.topic_id is not None and t.topic_id != ZERO_UUID
            if version < 12 and (t.name is None or has_id):
                raise InvalidRequestError(
                    f"Topic name can not be null for version {version}" if t.name is None
                    else f"Topic IDs are not supported in requests for version {version}")
            if has_id:
                name = snapshot.topic_names.get(t.topic_id)
                if name is None:
                    unknown_ids.append(t.topic_id)
                else:
                    names.append(name)
            elif t.name is not None:
                names.append(t.name)
        names = list(dict.fromkeys(names))
    # Kafka: a topic the principal may not DESCRIBE is hidden from an all-topics answer and answered
    # TOPIC_AUTHORIZATION_FAILED when named (whether it exists or not).
    unauthorized = [n for n in names if not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, n)]
    if unauthorized:
        names = [n for n in names if n not in set(unauthorized)]

    topics_md = cache.get_topic_metadata(None if all_topics else names, listener,
                                         error_unavailable_endpoints=version == 0,
                                         error_unavailable_listeners=version >= 6)
    if all_topics and services.authorizer is not None:
        topics_md = [tm for tm in topics_md if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, tm.name)]
    include_ops = version >= 8 and request.include_topic_authorized_operations
    out_topics = [_topic(ErrorCode.UNKNOWN_TOPIC_ID, None, tid) for tid in dict.fromkeys(unknown_ids)]
    out_topics.extend(_topic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, n, snapshot.topic_ids.get(n)) for n in unauthorized)
    for tm in topics_md:
        parts = [Resp.MetadataResponsePartition(
            error_code=int(p.error_code), partition_index=p.partition, leader_id=p.leader,
            leader_epoch=p.leader_epoch, replica_nodes=list(p.replicas), isr_nodes=list(p.isr),
            offline_replicas=list(p.offline_replicas)) for p in tm.partitions]
        out_topics.append(_topic(tm.error_code, tm.name, tm.topic_id, parts))
    if not all_topics:
        found = {tm.name for tm in topics_md}
        missing = [n for n in names if n not in found]
        if missing:
            allow = services.config.get_bool("auto.create.topics.enable") and (
                version < 4 or request.allow_auto_topic_creation)
            if allow:
                # Auto-creation needs CREATE on the cluster or on the topic.
                may_create = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER)
                denied = [] if may_create else [
                    n for n in missing if not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, n)]
                errors = auto_create_topics(services, [n for n in missing if n not in denied])
                errors.update((n, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for n in denied)
            else:
                errors = {}
                for name in missing:
                    try:
                        topic_rules.validate(name)
                        errors[name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    except InvalidTopicExceptionError:
                        errors[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
            for name in missing:
                out_topics.append(_topic(errors[name], name, snapshot.topic_ids.get(name)))
    if include_ops:
        for t in out_topics:
            t.topic_authorized_operations = authorized_operations(
                ctx, ResourceType.TOPIC, t.name or "", TOPIC_AUTHORIZED_OPERATIONS)
    cluster_ops = AUTHORIZED_OPERATIONS_OMITTED
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        cluster_ops = authorized_operations(ctx, ResourceType.CLUSTER, CLUSTER_NAME, CLUSTER_AUTHORIZED_OPERATIONS)

    brokers = [Resp.MetadataResponseBroker(node_id=n.id, host=n.host, port=n.port, rack=n.rack)
               for n in cache.get_alive_broker_nodes(listener)]
    controller_id = snapshot.controller_id
    return MetadataResponse(
        throttle_time_ms=0, brokers=brokers, cluster_id=snapshot.cluster_id,
        controller_id=-1 if controller_id is None else controller_id, topics=out_topics,
        cluster_authorized_operations=cluster_ops, error_code=0)
