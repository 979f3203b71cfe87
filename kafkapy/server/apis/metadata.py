"""Metadata (api key 3), v0-13: brokers, cluster id, controller id, topics with ids and partition states.

Kafka's rules (KafkaApis.handleTopicMetadataRequest): v0 asks for all topics with an empty list, v1+
with a null one; v10/v11 take names only, v12+ may name topics by id (unknown id -> UNKNOWN_TOPIC_ID).
A requested topic that does not exist is auto-created (auto.create.topics.enable and, v4+, the
request's allow_auto_topic_creation) through the controller without waiting, answered
LEADER_NOT_AVAILABLE as Kafka's AutoTopicCreationManager does; otherwise UNKNOWN_TOPIC_OR_PARTITION,
or INVALID_TOPIC_EXCEPTION for an illegal name. v0 reports REPLICA_NOT_AVAILABLE for replicas without
an endpoint; v6+ reports LISTENER_NOT_FOUND when the leader lacks the request's listener.
Authorization as KafkaApis: a topic the principal may not DESCRIBE is left out of an all-topics answer and,
when named, answered TOPIC_AUTHORIZATION_FAILED with the zero topic id (asked by id: no name, the id);
authorized operations are the principal's real bit sets (cluster: 0 without DESCRIBE on it).
Per-topic parts of the answer come from a MetadataTopicCache per MetadataCache (metadata_topic_cache.py),
rebuilt only when the topic's state changes; a per-principal field is set on a copy.
Thread-safety: reads one MetadataCache snapshot per request; the topic caches are shared (see there).
"""

from __future__ import annotations

import copy
import logging
import weakref
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import ErrorCode, InvalidRequestError, InvalidTopicExceptionError
from kafkapy.common.internal_topics import (
    INTERNAL_TOPICS,
)
from kafkapy.controller import topic as topic_rules
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import MetadataRequest, MetadataResponse
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.server.apis.handler_support import cluster_authorized_operations
from kafkapy.server.apis.registry import api
from kafkapy.server.auto_topic_creation_manager import auto_topic_creation_manager
from kafkapy.server.metadata_topic_cache import MetadataTopicCache

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")

AUTHORIZED_OPERATIONS_OMITTED = -2147483648


Resp = MetadataResponse
_TOPIC_CACHES: weakref.WeakKeyDictionary[Any, MetadataTopicCache] = weakref.WeakKeyDictionary()


def _topic_cache(metadata_cache: Any) -> MetadataTopicCache:
    found = _TOPIC_CACHES.get(metadata_cache)
    if found is None:
        found = _TOPIC_CACHES.setdefault(metadata_cache, MetadataTopicCache(metadata_cache))
    return found


def _topic(error: int, name: str | None, topic_id: Any = ZERO_UUID, partitions: list | None = None) -> Any:
    return Resp.MetadataResponseTopic(error_code=int(error), name=name, topic_id=topic_id or ZERO_UUID,
                                      is_internal=name in INTERNAL_TOPICS, partitions=partitions or [])


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

    requested = request.topics if request.topics is not None else []
    all_topics = request.topics is None or (version == 0 and not requested)
    unknown_ids: list[Any] = []
    names: list[str] = []
    if not all_topics:
        for t in requested:
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
    by_id = bool(requested) and version >= 12 and any(
        t.topic_id is not None and t.topic_id != ZERO_UUID for t in requested)

    topics_md = _topic_cache(cache).topics(None if all_topics else names, listener,
                                           error_unavailable_endpoints=version == 0,
                                           error_unavailable_listeners=version >= 6)
    if all_topics and services.authorizer is not None:
        topics_md = [tm for tm in topics_md
                     if ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, tm.name, log_if_denied=False)]
    include_ops = version >= 8 and request.include_topic_authorized_operations
    out_topics = [_topic(ErrorCode.UNKNOWN_TOPIC_ID, None, tid) for tid in dict.fromkeys(unknown_ids)]
    # Asked by name, the id of a topic one may not describe stays hidden (zero); asked by id, the name does.
    denied = [_topic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, None, snapshot.topic_ids.get(n)) if by_id
              else _topic(ErrorCode.TOPIC_AUTHORIZATION_FAILED, n) for n in unauthorized]
    for t in denied:
        t.is_internal = False
    out_topics.extend(topics_md)  # shared with other requests: not to be mutated
    if not all_topics:
        found = {tm.name for tm in topics_md}
        missing = [n for n in names if n not in found]
        if missing:
            allow = services.config.get_bool("auto.create.topics.enable") and (
                version < 4 or request.allow_auto_topic_creation)
            if allow:
                # Auto-creation needs CREATE on the cluster or on the topic.
                may_create = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, log_if_denied=False)
                create_denied = [] if may_create else [
                    n for n in missing if not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, n)]
                errors = auto_topic_creation_manager(services).create_topics(
                    [n for n in missing if n not in create_denied])
                errors.update((n, ErrorCode.TOPIC_AUTHORIZATION_FAILED) for n in create_denied)
            else:
                errors = {}
                for name in missing:
                    try:
                        topic_rules.validate(name)
                        errors[name] = ErrorCode.UNKNOWN_TOPIC_OR_PARTITION
                    except InvalidTopicExceptionError:
                        errors[name] = ErrorCode.INVALID_TOPIC_EXCEPTION
            for name in missing:
                code = errors[name]
                out_topics.append(_topic(code, name, ZERO_UUID if code == ErrorCode.TOPIC_AUTHORIZATION_FAILED
                                         else snapshot.topic_ids.get(name)))
    if include_ops:  # Kafka sets them on the described topics only, not on the refused ones
        for i, t in enumerate(out_topics):
            if t.error_code != ErrorCode.TOPIC_AUTHORIZATION_FAILED:
                t = out_topics[i] = copy.copy(t)
                t.topic_authorized_operations = ctx.authorized_operations(ResourceType.TOPIC, t.name or "")
    out_topics.extend(denied)
    cluster_ops = AUTHORIZED_OPERATIONS_OMITTED
    if 8 <= version <= 10 and request.include_cluster_authorized_operations:
        cluster_ops = cluster_authorized_operations(ctx)

    brokers = [Resp.MetadataResponseBroker(node_id=n.id, host=n.host, port=n.port, rack=n.rack)
               for n in cache.get_alive_broker_nodes(listener)]
    controller_id = snapshot.controller_id
    return MetadataResponse(
        throttle_time_ms=0, brokers=brokers, cluster_id=snapshot.cluster_id,
        controller_id=-1 if controller_id is None else controller_id, topics=_topic_cache(cache).encoded_list(out_topics),
        cluster_authorized_operations=cluster_ops, error_code=0)
