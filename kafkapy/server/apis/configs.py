"""DescribeConfigs (32) v0-4, AlterConfigs (33) v0-2, IncrementalAlterConfigs (44) v0-1.

Resources: TOPIC (2), BROKER (4; name = this broker's id, or "" for the cluster-wide dynamic defaults) and
BROKER_LOGGER (8; Python loggers under log4j level names). What a config reports comes from
server/config_describer.py (Kafka's ConfigHelper); writes go to the Controller, which validates topic
configs and stores overrides. AlterConfigs replaces the whole set of a resource's overrides (null values are
dropped, as Kafka does); IncrementalAlterConfigs applies SET/DELETE/APPEND/SUBTRACT to the current set.
Dynamic broker configs are accepted for the keys ALTERABLE_BROKER_CONFIGS lists (log defaults, cleaner,
replica fetchers, connection quotas); the Controller's config-change callback is what applies them.
Errors are per resource, with Kafka's messages. The Controller's Future is awaited for at most
request.timeout.ms (see topics.py).
Thread-safety: stateless apart from the logging levels BROKER_LOGGER changes (logging is thread-safe).
"""

from __future__ import annotations

import logging
from collections.abc import Callable
from typing import TYPE_CHECKING, Any

from kafkapy.common.acl import AclOperation, ResourceType
from kafkapy.common.errors import (
    InvalidConfigError,
    InvalidRequestError,
    KafkaError,
    UnknownTopicOrPartitionError,
)
from kafkapy.controller import topic as topic_rules
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.messages import (
    AlterConfigsRequest,
    AlterConfigsResponse,
    DescribeConfigsRequest,
    DescribeConfigsResponse,
    IncrementalAlterConfigsRequest,
    IncrementalAlterConfigsResponse,
)
from kafkapy.server.apis.handler_support import config_helper, controller_of, respond_after_controller
from kafkapy.server.apis.registry import Deferred, api
from kafkapy.server.config_describer import (
    OP_APPEND,
    OP_DELETE,
    OP_SET,
    OP_SUBTRACT,
    ConfigHelper,
    DescribedConfig,
    broker_config_defaults,
    broker_config_types,
    prepare_incremental_configs,
    topic_config_defaults,
    topic_config_types,
    validate_dynamic_broker_configs,
)
from kafkapy.server.purgatory.delayed_controller_operation import controller_result

if TYPE_CHECKING:
    from kafkapy.server.request_context import RequestContext

TOPIC, BROKER, BROKER_LOGGER = 2, 4, 8
RESOURCE_TYPE_NAMES = {0: "UNKNOWN", 2: "TOPIC", 4: "BROKER", 8: "BROKER_LOGGER", 16: "CLIENT_METRICS", 32: "GROUP"}
ROOT_LOGGER = "root"
VALID_LOG_LEVELS = ("FATAL", "ERROR", "WARN", "INFO", "DEBUG", "TRACE")
_PY_LEVELS = {"FATAL": logging.CRITICAL, "ERROR": logging.ERROR, "WARN": logging.WARNING, "INFO": logging.INFO,
              "DEBUG": logging.DEBUG, "TRACE": 5}
_OP_NAMES = {OP_SET: "SET", OP_DELETE: "DELETE", OP_APPEND: "APPEND", OP_SUBTRACT: "SUBTRACT"}


def _type_name(resource_type: int) -> str:
    return RESOURCE_TYPE_NAMES.get(resource_type, "UNKNOWN")


def broker_id_of(ctx: RequestContext, name: str, allow_default: bool = True) -> int | None:
    """The broker a BROKER resource names: None for "" (cluster default), else this broker's id."""
    my_id = ctx.server.config.broker_id
    if not name:
        if allow_default:
            return None
        raise InvalidRequestError("Broker id must not be empty")
    try:
        broker_id = int(name)
    except ValueError:
        raise InvalidRequestError(f"Broker id must be an integer, but it is: {name}") from None
    if broker_id != my_id:
        expected = f"{my_id} or empty string" if allow_default else str(my_id)
        raise InvalidRequestError(f"Unexpected broker id, expected {expected}, but received {name}")
    return broker_id


# -- DescribeConfigs ---------------------------------------------------------------------------------------------

DCResp = DescribeConfigsResponse


def _describe_error(request: DescribeConfigsRequest, version: int, code: int) -> DescribeConfigsResponse:
    return DCResp(results=[DCResp.DescribeConfigsResult(error_code=code, resource_type=r.resource_type,
                                                        resource_name=r.resource_name, configs=[])
                           for r in request.resources])


def _entry(e: DescribedConfig, version: int) -> Any:
    return DCResp.DescribeConfigsResourceResult(
        name=e.name, value=e.value, read_only=e.read_only, is_default=e.is_default and version == 0,
        config_source=e.source,
        is_sensitive=e.is_sensitive, config_type=e.config_type, documentation=e.documentation,
        synonyms=[DCResp.DescribeConfigsSynonym(name=s.name, value=s.value, source=s.source) for s in e.synonyms])


def _describe_resource(ctx: RequestContext, helper: ConfigHelper, resource: Any, include_synonyms: bool,
                       include_documentation: bool) -> list[DescribedConfig]:
    keys = resource.configuration_keys
    name = resource.resource_name
    if resource.resource_type == TOPIC:
        topic_rules.validate(name)
        if not ctx.server.metadata_cache.contains_topic(name):
            raise UnknownTopicOrPartitionError(None)
        overrides = controller_of(ctx).topic_config_overrides(name)
        return helper.describe_topic(overrides, keys, include_synonyms, include_documentation)
    if resource.resource_type == BROKER:
        per_broker = broker_id_of(ctx, name) is not None
        return helper.describe_broker(per_broker, keys, include_synonyms, include_documentation)
    if resource.resource_type == BROKER_LOGGER:
        broker_id_of(ctx, name, allow_default=False)
        return helper.describe_loggers(keys)
    raise InvalidRequestError(f"Unsupported resource type: {_type_name(resource.resource_type)}")


def _require_on_resource(ctx: RequestContext, operation: AclOperation, resource: Any) -> None:
    """Topics are authorized on the topic; brokers and broker loggers on the cluster (Kafka's rule)."""
    if resource.resource_type == TOPIC:
        ctx.require(operation, ResourceType.TOPIC, resource.resource_name)
    else:
        ctx.require(operation, ResourceType.CLUSTER)


@api(ApiKey.DESCRIBE_CONFIGS, 0, 4, error_response=_describe_error)
def handle_describe_configs(ctx: RequestContext, request: DescribeConfigsRequest) -> DescribeConfigsResponse:
    version = ctx.api_version
    helper = config_helper(ctx)
    include_synonyms = bool(request.include_synonyms) and version >= 1
    include_documentation = bool(request.include_documentation) and version >= 3
    results = []
    for resource in request.resources:
        result = DCResp.DescribeConfigsResult(resource_type=resource.resource_type,
                                              resource_name=resource.resource_name, error_code=0,
                                              error_message=None, configs=[])
        try:
            _require_on_resource(ctx, AclOperation.DESCRIBE_CONFIGS, resource)
            entries = _describe_resource(ctx, helper, resource, include_synonyms, include_documentation)
            result.configs = [_entry(e, version) for e in entries]
        except KafkaError as e:
            result.error_code = e.code
            result.error_message = e.message
        results.append(result)
    return DCResp(throttle_time_ms=0, results=results)


# -- AlterConfigs / IncrementalAlterConfigs ----------------------------------------------------------------------

def _alter_configs_error(request: AlterConfigsRequest, version: int, code: int) -> AlterConfigsResponse:
    R = AlterConfigsResponse
    return R(responses=[R.AlterConfigsResourceResponse(error_code=code, resource_type=r.resource_type,
                                                       resource_name=r.resource_name) for r in request.resources])


def _incremental_alter_configs_error(request: IncrementalAlterConfigsRequest, version: int, code: int
                                     ) -> IncrementalAlterConfigsResponse:
    R = IncrementalAlterConfigsResponse
    return R(responses=[R.AlterConfigsResourceResponse(error_code=code, resource_type=r.resource_type,
                                                       resource_name=r.resource_name) for r in request.resources])


def _submit_topic(ctx: RequestContext, name: str, configs: dict[str, str], validate_only: bool) -> Any:
    topic_rules.validate(name)
    return controller_of(ctx).alter_topic_configs(name, configs, validate_only=validate_only)


def _submit_broker(ctx: RequestContext, name: str, configs: dict[str, str], validate_only: bool) -> Any:
    broker_id = broker_id_of(ctx, name)
    validate_dynamic_broker_configs(configs, per_broker=broker_id is not None)
    return controller_of(ctx).alter_broker_configs(broker_id, configs, validate_only=validate_only)


def _collect(ctx: RequestContext, request: Any, response_cls: Any, submit: Callable[[Any], Any]) -> Deferred:
    """Submit every resource (submit returns a Future, or None when already done); answer when all are done."""
    pending: list[tuple[Any, Any]] = []
    for resource in request.resources:
        result = response_cls.AlterConfigsResourceResponse(resource_type=resource.resource_type,
                                                           resource_name=resource.resource_name,
                                                           error_code=0, error_message=None)
        try:
            future = submit(resource)
        except KafkaError as e:
            result.error_code, result.error_message = e.code, e.message
            future = None
        pending.append((result, future))
    def build() -> Any:
        for result, future in pending:
            if future is None:
                continue
            try:
                controller_result(future, "alter configs")
            except KafkaError as e:
                result.error_code, result.error_message = e.code, e.message
        return response_cls(throttle_time_ms=0, responses=[r for r, _ in pending])

    return respond_after_controller(ctx, request, [f for _, f in pending if f is not None], 0, build)


@api(ApiKey.ALTER_CONFIGS, 0, 2, error_response=_alter_configs_error)
def handle_alter_configs(ctx: RequestContext, request: AlterConfigsRequest) -> AlterConfigsResponse | Deferred:
    validate_only = bool(request.validate_only)

    def submit(resource: Any) -> Any:
        _require_on_resource(ctx, AclOperation.ALTER_CONFIGS, resource)
        configs = {c.name: c.value for c in resource.configs if c.value is not None}
        if resource.resource_type == TOPIC:
            return _submit_topic(ctx, resource.resource_name, configs, validate_only)
        if resource.resource_type == BROKER:
            return _submit_broker(ctx, resource.resource_name, configs, validate_only)
        raise InvalidRequestError("AlterConfigs is only supported for topics and brokers, but resource type is "
                                  f"{_type_name(resource.resource_type)}")

    return _collect(ctx, request, AlterConfigsResponse, submit)


def _alter_loggers(ctx: RequestContext, name: str, ops: list[tuple[str, int, str | None]], validate_only: bool) -> None:
    broker_id_of(ctx, name, allow_default=False)
    # Parents count too: kafka.controller exists once any kafka.controller.* logger does (Python keeps a
    # placeholder for it; setting its level makes it a logger whose level the children inherit).
    known = set(logging.root.manager.loggerDict)
    for logger_name, op, value in ops:
        if op in (OP_APPEND, OP_SUBTRACT):
            raise InvalidRequestError(f"{_OP_NAMES[op]} operation is not allowed for the BROKER_LOGGER resource")
        if logger_name != ROOT_LOGGER and logger_name not in known:
            raise InvalidConfigError(f"Logger {logger_name} does not exist!")
        if op == OP_SET and (value or "").upper() not in VALID_LOG_LEVELS:
            raise InvalidConfigError(f"Cannot set the log level of {logger_name} to {value} as it is not a "
                                     f"supported log level. Valid log levels are {', '.join(VALID_LOG_LEVELS)}")
        if op == OP_DELETE and logger_name == ROOT_LOGGER:
            raise InvalidRequestError(f"Removing the log level of the {ROOT_LOGGER} logger is not allowed")
        if op not in _OP_NAMES:
            raise InvalidRequestError(f"Unknown config operation {op} for config {logger_name}")
    if validate_only:
        return
    for logger_name, op, value in ops:
        logger = logging.getLogger() if logger_name == ROOT_LOGGER else logging.getLogger(logger_name)
        logger.setLevel(_PY_LEVELS[(value or "").upper()] if op == OP_SET else logging.NOTSET)


@api(ApiKey.INCREMENTAL_ALTER_CONFIGS, 0, 1, error_response=_incremental_alter_configs_error)
def handle_incremental_alter_configs(ctx: RequestContext, request: IncrementalAlterConfigsRequest
                                     ) -> IncrementalAlterConfigsResponse | Deferred:
    validate_only = bool(request.validate_only)
    seen = [(r.resource_type, r.resource_name) for r in request.resources]
    dup_resources = {k for k in seen if seen.count(k) > 1}

    def submit(resource: Any) -> Any:
        _require_on_resource(ctx, AclOperation.ALTER_CONFIGS, resource)
        name = resource.resource_name
        if (resource.resource_type, name) in dup_resources:
            raise InvalidRequestError("Each resource must appear at most once.")
        ops = [(c.name, c.config_operation, c.value) for c in resource.configs]
        keys = [o[0] for o in ops]
        if len(set(keys)) != len(keys):
            raise InvalidRequestError("Error due to duplicate config keys")
        if resource.resource_type == TOPIC:
            topic_rules.validate(name)
            if not ctx.server.metadata_cache.contains_topic(name):
                raise UnknownTopicOrPartitionError(f"Topic {name} does not exist.")
            current = controller_of(ctx).topic_config_overrides(name)
            new = prepare_incremental_configs(ops, current, topic_config_types(), topic_config_defaults(),
                                              "Unknown topic config name: ")
            return _submit_topic(ctx, name, new, validate_only)
        if resource.resource_type == BROKER:
            broker_id = broker_id_of(ctx, name)
            current = controller_of(ctx).broker_config_overrides(broker_id)
            new = prepare_incremental_configs(ops, current, broker_config_types(),
                                              broker_config_defaults(ctx.server.config), "Unknown broker config: ")
            return _submit_broker(ctx, name, new, validate_only)
        if resource.resource_type == BROKER_LOGGER:
            _alter_loggers(ctx, name, ops, validate_only)
            return None
        raise InvalidRequestError(f"Unsupported resource type: {_type_name(resource.resource_type)}")

    return _collect(ctx, request, IncrementalAlterConfigsResponse, submit)

