"""CreateTopics (19) v0-7, DeleteTopics (20) v0-6, CreatePartitions (37) v0-3: thin handlers over the Controller.

Kafka's request-level rules live here (duplicate names, name-or-id resolution, the version-dependent error
for disabled deletion, v5+ CreateTopics answers carrying the created topic's partitions, replication factor
and configs, v7 topic ids); topic rules, assignment and config validation are the Controller's.

Waiting: Kafka parks these requests in a DelayedCreatePartitions/DelayedDeleteTopics purgatory until the
metadata has propagated. kafkapy's Controller completes its Future only after the store, the replicas and
the MetadataCache are all updated, in milliseconds on a single broker, so the handler waits on that Future
for at most the request's timeout_ms (request.timeout.ms when it is <= 0) and answers REQUEST_TIMED_OUT
past it. A handler thread is therefore held for as long as the controller takes, bounded by that timeout.
Thread-safety: stateless.
"""

from __future__ import annotations

import concurrent.futures
import logging
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    InvalidRequestError,
    KafkaError,
    TopicAuthorizationFailedError,
    TopicDeletionDisabledError,
    UnknownServerError,
    UnknownTopicIdError,
    UnknownTopicOrPartitionError,
)
from kafkapy.controller.controller_events import CreatableTopic, CreateTopicResult
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    CreatePartitionsRequest,
    CreatePartitionsResponse,
    CreateTopicsRequest,
    CreateTopicsResponse,
    DeleteTopicsRequest,
    DeleteTopicsResponse,
)
from kafkapy.protocol.types import ZERO_UUID
from kafkapy.server.apis.handler_support import (
    config_helper,
    controller_of,
    respond_after_controller,
)
from kafkapy.server.apis.registry import Deferred, api
from kafkapy.server.purgatory.delayed_controller_operation import controller_result

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

log = logging.getLogger("kafka.server.KafkaApis")
AUTHORIZATION_FAILED = "Authorization failed."


def _duplicates(names: Iterable[str | None]) -> set[str]:
    seen: set[str] = set()
    dups: set[str] = set()
    for n in names:
        if n is None:
            continue
        if n in seen:
            dups.add(n)
        seen.add(n)
    return dups


# -- CreateTopics ------------------------------------------------------------------------------------------------

CTResp = CreateTopicsResponse


def _create_error(name: str, code: int, message: str | None) -> Any:
    return CTResp.CreatableTopicResult(name=name, error_code=code, error_message=message, num_partitions=-1,
                                       replication_factor=-1, configs=[])


def _create_topics_error(request: CreateTopicsRequest, version: int, code: int) -> CreateTopicsResponse:
    return CTResp(topics=[_create_error(t.name, code, None) for t in request.topics])


def _created(ctx: RequestContext, result: CreateTopicResult, version: int) -> Any:
    out = CTResp.CreatableTopicResult(name=result.name, error_code=0, error_message=None,
                                      topic_id=result.topic_id or ZERO_UUID)
    if version >= 5:
        entries = config_helper(ctx).describe_topic(result.configs)
        out.num_partitions = result.num_partitions
        out.replication_factor = result.replication_factor
        out.configs = [CTResp.CreatableTopicConfigs(name=e.name, value=e.value, read_only=e.read_only,
                                                    config_source=e.source, is_sensitive=e.is_sensitive)
                       for e in entries]
    return out


@api(ApiKey.CREATE_TOPICS, 0, 7, error_response=_create_topics_error)
def handle_create_topics(ctx: RequestContext, request: CreateTopicsRequest) -> CreateTopicsResponse | Deferred:
    version = ctx.api_version
    dups = _duplicates(t.name for t in request.topics)
    cluster_create = ctx.authorize(AclOperation.CREATE, ResourceType.CLUSTER, log_if_denied=False)
    unauthorized = set() if cluster_create else {
        t.name for t in request.topics if not ctx.authorize(AclOperation.CREATE, ResourceType.TOPIC, t.name)}
    to_create = []
    for t in request.topics:
        if t.name in dups or t.name in unauthorized:
            continue
        configs: dict[str, str | None] = {c.name: c.value for c in t.configs}
        assignment = {a.partition_index: list(a.broker_ids) for a in t.assignments} or None
        to_create.append(CreatableTopic(t.name, t.num_partitions, t.replication_factor, assignment, configs))
    future = None
    failed: dict[str, CreateTopicResult] = {}
    if to_create:
        try:
            future = controller_of(ctx).create_topics(to_create, validate_only=bool(request.validate_only))
        except KafkaError as e:
            failed = {t.name: CreateTopicResult(t.name, e) for t in to_create}

    def build() -> CreateTopicsResponse:
        results = failed
        if future is not None:
            try:
                results = controller_result(future, "create topics")
            except KafkaError as e:
                results = {t.name: CreateTopicResult(t.name, e) for t in to_create}
        out = []
        for t in request.topics:
            if t.name in dups:
                out.append(_create_error(t.name, InvalidRequestError.code, "Found multiple entries for this topic."))
                continue
            # Kafka: v5+ configs, partitions and replication factor only with DESCRIBE_CONFIGS on the topic.
            hide_configs = version >= 5 and not ctx.authorize(AclOperation.DESCRIBE_CONFIGS, ResourceType.TOPIC,
                                                             t.name, log_if_denied=False)
            if t.name in unauthorized:
                out.append(_create_error(t.name, TopicAuthorizationFailedError.code, AUTHORIZATION_FAILED))
                if hide_configs:
                    out[-1].topic_config_error_code = TopicAuthorizationFailedError.code
                continue
            result = results.get(t.name)
            if result is None:
                out.append(_create_error(t.name, UnknownServerError.code, None))
            elif result.error is not None:
                out.append(_create_error(t.name, result.error.code, result.error.message))
            elif hide_configs:
                out.append(CTResp.CreatableTopicResult(
                    name=result.name, error_code=0, error_message=None, topic_id=result.topic_id or ZERO_UUID,
                    num_partitions=-1, replication_factor=-1, configs=[],
                    topic_config_error_code=TopicAuthorizationFailedError.code))
            else:
                out.append(_created(ctx, result, version))
        return CTResp(throttle_time_ms=0, topics=out)

    return respond_after_controller(ctx, request, [future] if future else [], request.timeout_ms, build)


# -- DeleteTopics ------------------------------------------------------------------------------------------------

DTResp = DeleteTopicsResponse


def _requested_deletions(request: DeleteTopicsRequest, version: int) -> list[tuple[str | None, Any]]:
    if version >= 6:
        return [(t.name, t.topic_id or ZERO_UUID) for t in request.topics]
    return [(name, ZERO_UUID) for name in request.topic_names]


def _delete_topics_error(request: DeleteTopicsRequest, version: int, code: int) -> DeleteTopicsResponse:
    return DTResp(responses=[DTResp.DeletableTopicResult(name=n, topic_id=i, error_code=code)
                             for n, i in _requested_deletions(request, version)])


@api(ApiKey.DELETE_TOPICS, 0, 6, error_response=_delete_topics_error)
def handle_delete_topics(ctx: RequestContext, request: DeleteTopicsRequest) -> DeleteTopicsResponse | Deferred:
    version = ctx.api_version
    cache = ctx.server.metadata_cache
    controller = controller_of(ctx)
    requested = _requested_deletions(request, version)
    results: list[Any] = []
    to_delete: list[str] = []
    for name, topic_id in requested:
        if name is not None and topic_id != ZERO_UUID:
            raise InvalidRequestError("Topic name and topic ID can not both be specified.")
        if topic_id != ZERO_UUID:
            name = cache.get_topic_name(topic_id)
        result = DTResp.DeletableTopicResult(name=name, topic_id=topic_id, error_code=0)
        results.append(result)
        if name is None:
            result.error_code = UnknownTopicIdError.code
        elif topic_id != ZERO_UUID and not ctx.authorize(AclOperation.DESCRIBE, ResourceType.TOPIC, name):
            # Kafka: asked by id, the name of a topic one may not describe stays hidden (the id is no secret).
            result.name = None
            result.error_code = TopicAuthorizationFailedError.code
        elif not ctx.authorize(AclOperation.DELETE, ResourceType.TOPIC, name):
            result.error_code = TopicAuthorizationFailedError.code
        elif not cache.contains_topic(name):
            result.error_code = UnknownTopicOrPartitionError.code
            result.error_message = "This server does not host this topic-partition."
        elif name not in to_delete:
            to_delete.append(name)
    future = controller.delete_topics(to_delete) if to_delete else None

    def build() -> DeleteTopicsResponse:
        if future is not None:
            try:
                errors = controller_result(future, "delete topics")
            except KafkaError as e:
                errors = {name: e for name in to_delete}
            for result in results:
                error = errors.get(result.name) if result.error_code == 0 else None
                if error is None:
                    continue
                code = error.code
                if isinstance(error, TopicDeletionDisabledError) and version < 3:
                    code = InvalidRequestError.code  # what pre-v3 clients understand
                result.error_code = code
                result.error_message = error.message
        if version < 5:
            for result in results:
                result.error_message = None
        return DTResp(throttle_time_ms=0, responses=results)

    return respond_after_controller(ctx, request, [future] if future else [], request.timeout_ms, build)


# -- CreatePartitions --------------------------------------------------------------------------------------------

CPResp = CreatePartitionsResponse


def _create_partitions_error(request: CreatePartitionsRequest, version: int, code: int) -> CreatePartitionsResponse:
    names = list(dict.fromkeys(t.name for t in request.topics))
    return CPResp(results=[CPResp.CreatePartitionsTopicResult(name=n, error_code=code) for n in names])


@api(ApiKey.CREATE_PARTITIONS, 0, 3, error_response=_create_partitions_error)
def handle_create_partitions(ctx: RequestContext, request: CreatePartitionsRequest) -> CreatePartitionsResponse | Deferred:
    dups = _duplicates(t.name for t in request.topics)
    controller = controller_of(ctx)
    futures: dict[str, concurrent.futures.Future] = {}
    unauthorized = {t.name for t in request.topics if not ctx.authorize(AclOperation.ALTER, ResourceType.TOPIC, t.name)}
    for t in request.topics:
        if t.name in dups or t.name in futures or t.name in unauthorized:
            continue
        assignment = [list(a.broker_ids) for a in t.assignments] if t.assignments is not None else None
        futures[t.name] = controller.create_partitions(t.name, t.count, assignment,
                                                       validate_only=bool(request.validate_only))
    def build() -> CreatePartitionsResponse:
        results = []
        for name in dict.fromkeys(t.name for t in request.topics):
            if name in dups:
                results.append(CPResp.CreatePartitionsTopicResult(name=name, error_code=InvalidRequestError.code,
                                                                  error_message="Duplicate topic in request."))
                continue
            if name in unauthorized:
                results.append(CPResp.CreatePartitionsTopicResult(
                    name=name, error_code=TopicAuthorizationFailedError.code,
                    error_message="The topic authorization is failed."))
                continue
            try:
                controller_result(futures[name], "create partitions")
                results.append(CPResp.CreatePartitionsTopicResult(name=name, error_code=0, error_message=None))
            except KafkaError as e:
                results.append(CPResp.CreatePartitionsTopicResult(name=name, error_code=e.code,
                                                                  error_message=e.message))
        return CPResp(throttle_time_ms=0, results=results)

    return respond_after_controller(ctx, request, list(futures.values()), request.timeout_ms, build)
