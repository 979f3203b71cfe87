"""Kafka's request log: `kafka.request.logger` at DEBUG writes one line per completed request, as Kafka's
RequestChannel does: `Completed request:{json}` where the JSON is RequestConvertToJson.requestDescMetrics:

  {"isForwarded":false,
   "requestHeader":{"requestApiKey":3,"requestApiVersion":12,"correlationId":7,"clientId":"rdkafka",
                    "requestApiKeyName":"METADATA"},
   "request":{...the request body...}, "response":{...the response body...},
   "connection":"127.0.0.1:9092-127.0.0.1:50412-0", "totalTimeMs":0.61, "requestQueueTimeMs":0.05,
   "localTimeMs":0.4, "remoteTimeMs":0.0, "throttleTimeMs":0, "responseQueueTimeMs":0.0, "sendTimeMs":0.08,
   "securityProtocol":"PLAINTEXT", "principal":"User:ANONYMOUS", "listener":"PLAINTEXT",
   "clientInformation":{"softwareName":"unknown","softwareVersion":"unknown"}}

Bodies are written as Kafka's generated JSON converters write them (camelCase field names of the version's
fields; bytes in base64; UUIDs in Kafka's base64url form; a records field as `<name>SizeInBytes`, never the
records: KIP-673). Values of sensitive broker configs in AlterConfigs / IncrementalAlterConfigs are
`[hidden]` (Kafka's loggableRequest), SASL tokens and SCRAM credentials are not written. The times are
Kafka's split (RequestMetrics): queue = dequeued - received, local = the handler's time, remote = waiting in
purgatory, send = response handed to the connection until written; responseQueueTimeMs is 0 when the
answering thread writes the response itself.

Cost: nothing unless the logger is enabled for DEBUG: KafkaApis checks `enabled()` once per request and
only then keeps the request's JSON (computed before handling, as Kafka, since a produce body goes to
purgatory); RequestContext writes the line when that JSON is present.
clientInformation is what the connection's ApiVersions v3+ request said (remember_client, from its handler;
the last MAX_CLIENTS connections are kept), else unknown/unknown as in Kafka.
Thread-safety: the client table is guarded by a lock; the rest is stateless; logging is thread-safe.
"""

from __future__ import annotations

import base64
import json
import logging
import threading
import uuid
from collections import OrderedDict
from typing import Any

from kafkapy.common.config_types import ConfigType
from kafkapy.common.file_region import FileRegion
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.protocol.schema import in_range
from kafkapy.server.kafka_config_defs import CONFIG_DEFS

REQUEST_LOGGER = "kafka.request.logger"
log = logging.getLogger(REQUEST_LOGGER)

_BROKER_RESOURCE = 4
_HIDDEN_BODIES = (ApiKey.SASL_AUTHENTICATE, ApiKey.ALTER_USER_SCRAM_CREDENTIALS)
_CONFIG_ALTERS = (ApiKey.ALTER_CONFIGS, ApiKey.INCREMENTAL_ALTER_CONFIGS)

# clientInformation per connection (ApiVersions v3+'s software name and version, Kafka's channel metadata): the
# most recent connections only, so closed ones need no hook to be forgotten.
MAX_CLIENTS = 10_000
_UNKNOWN = ("unknown", "unknown")
_clients: OrderedDict[str, tuple[str, str]] = OrderedDict()
_clients_lock = threading.Lock()


def enabled() -> bool:
    return log.isEnabledFor(logging.DEBUG)


def remember_client(connection_id: str, software_name: str | None, software_version: str | None) -> None:
    """What an ApiVersions v3+ request said the client is (called by its handler, once per connection)."""
    with _clients_lock:
        _clients[connection_id] = (software_name or "unknown", software_version or "unknown")
        _clients.move_to_end(connection_id)
        if len(_clients) > MAX_CLIENTS:
            _clients.popitem(last=False)


def client_information(connection_id: str) -> dict[str, str]:
    with _clients_lock:
        name, version = _clients.get(connection_id, _UNKNOWN)
    return {"softwareName": name, "softwareVersion": version}


def _camel(json_name: str) -> str:
    return json_name[:1].lower() + json_name[1:]


def _records_size(value: Any) -> int:
    if isinstance(value, FileRegion):
        return value.length
    if isinstance(value, (list, tuple)):
        return sum(_records_size(v) for v in value)
    return len(value) if not isinstance(value, memoryview) else value.nbytes


def _value(value: Any, version: int) -> Any:
    if value is None or isinstance(value, (bool, int, float, str)):
        return value
    if isinstance(value, uuid.UUID):
        return base64.urlsafe_b64encode(value.bytes).rstrip(b"=").decode()
    if isinstance(value, (bytes, bytearray, memoryview)):
        return base64.b64encode(bytes(value)).decode()
    if isinstance(value, (list, tuple)):
        return [_value(v, version) for v in value]
    if hasattr(value, "FIELDS"):
        return message_json(value, version)
    return str(value)


def message_json(message: Any, version: int) -> dict[str, Any]:
    """A generated message or struct as Kafka's JsonConverter writes it at `version`."""
    node: dict[str, Any] = {}
    for f in message.FIELDS:
        if not in_range(f.versions, version):
            continue
        value = getattr(message, f.name, None)
        name = _camel(f.json_name)
        if f.type == "records":
            if value is None:
                node[name] = None
            else:
                node[f"{name}SizeInBytes"] = _records_size(value)
            continue
        node[name] = _value(value, version)
    return node


def _hide_sensitive_configs(node: dict[str, Any]) -> None:
    for resource in node.get("resources") or ():
        if resource.get("resourceType") != _BROKER_RESOURCE:
            continue
        for config in resource.get("configs") or ():
            d = CONFIG_DEFS.get(config.get("name", ""))
            if d is None or d.type is ConfigType.PASSWORD:
                config["value"] = "[hidden]"


def request_json(api_key: int, version: int, body: Any) -> Any:
    """The request body's JSON ("" for bodies Kafka never logs)."""
    if api_key in _HIDDEN_BODIES:
        return ""
    node = message_json(body, version)
    if api_key in _CONFIG_ALTERS:
        _hide_sensitive_configs(node)
    return node


def header_json(header: Any, api_key_name: str) -> dict[str, Any]:
    return {"requestApiKey": header.api_key, "requestApiVersion": header.api_version,
            "correlationId": header.correlation_id, "clientId": header.client_id,
            "requestApiKeyName": api_key_name}


def log_completed(ctx: Any, response: Any, send_start_ns: int, end_ns: int, throttle_ms: int) -> None:
    """Write the `Completed request:` line of a request whose `ctx.request_log` was kept (see module doc).
    Never raises: the response is already on its way."""
    try:
        _log_completed(ctx, response, send_start_ns, end_ns, throttle_ms)
    except Exception:  # noqa: BLE001 - a logging failure must not fail the request
        log.warning("Could not log the completed request %r", ctx.request, exc_info=True)


def _log_completed(ctx: Any, response: Any, send_start_ns: int, end_ns: int, throttle_ms: int) -> None:
    request = ctx.request
    header = ctx.header
    try:
        name = ApiKey(header.api_key).name
    except ValueError:
        name = str(header.api_key)
    start = request.start_ns
    dequeue = request.dequeue_ns or start
    local_ns = ctx.handler_ns
    remote_ns = max(0, send_start_ns - dequeue - local_ns)
    body = "" if response is None or header.api_key in _HIDDEN_BODIES else message_json(response, header.api_version)
    desc = {
        "isForwarded": False,
        "requestHeader": header_json(header, name),
        "request": ctx.request_log,
        "response": body,
        "connection": request.connection_id,
        "totalTimeMs": (end_ns - start) / 1e6,
        "requestQueueTimeMs": (dequeue - start) / 1e6,
        "localTimeMs": local_ns / 1e6,
        "remoteTimeMs": remote_ns / 1e6,
        "throttleTimeMs": throttle_ms,
        "responseQueueTimeMs": 0.0,
        "sendTimeMs": (end_ns - send_start_ns) / 1e6,
        "securityProtocol": request.security_protocol,
        "principal": str(request.principal),
        "listener": request.listener_name,
        "clientInformation": client_information(request.connection_id),
    }
    log.debug("Completed request:%s", json.dumps(desc, separators=(",", ":")))
