"""kafka-broker-api-versions logic (BrokerApiVersionsCommand): every broker's ApiVersions, with the
version this client would use.

For each broker found through Metadata (Kafka's order: the HashMap keyed by Node), the APIs the broker
advertises plus, as `UNSUPPORTED`, every broker API it does not (NodeApiVersions.toString): an API
the client knows is usable up to min(client max, broker max), or "unusable: node too new/old"; an api
key the client does not know prints as `UNKNOWN(key)`. A broker whose ApiVersions fails is reported
with its error (Kafka: `host:port (id: N rack: null) -> ERROR: <msg>`).
Thread-safety: one call at a time per AdminClient.
"""

from __future__ import annotations

from dataclasses import dataclass
from typing import TYPE_CHECKING, Any

from kafkapy.tools.tool_support import java_hash_order, java_string_hash

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient


@dataclass(frozen=True)
class ApiVersionInfo:
    api_key: int
    name: str  # Kafka's ApiKeys name ("Produce"), "UNKNOWN" for a key this client does not know
    min_version: int | None  # None: the broker does not support the API
    max_version: int | None
    usable: int | None = None
    unusable: str | None = None  # "node too new" / "node too old"

    def text(self) -> str:
        head = f"{self.name}({self.api_key}): "
        if self.min_version is None:
            return head + "UNSUPPORTED"
        rng = str(self.min_version) if self.min_version == self.max_version else f"{self.min_version} to {self.max_version}"
        if self.unusable is not None:
            return head + rng + f" [unusable: {self.unusable}]"
        if self.usable is not None:
            return head + rng + f" [usable: {self.usable}]"
        return head + rng


@dataclass
class BrokerApiVersions:
    node_id: int
    host: str
    port: int
    rack: str | None
    apis: list[ApiVersionInfo]
    error: str | None = None

    @property
    def node_text(self) -> str:
        return f"{self.host}:{self.port} (id: {self.node_id} rack: {'null' if self.rack is None else self.rack})"


def _node_hash(node: Any) -> int:
    h = 31 + java_string_hash(node.host)
    h = (31 * h + node.node_id) & 0xFFFFFFFF
    h = (31 * h + node.port) & 0xFFFFFFFF
    h = (31 * h + (java_string_hash(node.rack) if node.rack is not None else 0)) & 0xFFFFFFFF
    return h


def broker_apis() -> list[int]:
    """Api keys a broker serves (the ApiKeys with the 'broker' listener), printed as UNSUPPORTED if absent."""
    from kafkapy.protocol import messages as M

    return sorted(k for k, cls in M.REQUEST_CLASSES.items() if "broker" in cls.LISTENERS)


def node_api_versions(versions: dict[int, tuple[int, int]]) -> list[ApiVersionInfo]:
    from kafkapy.client.connection import our_version_range
    from kafkapy.protocol import messages as M
    from kafkapy.protocol.api_keys import API_NAMES

    out: dict[int, ApiVersionInfo] = {}
    for key, (lo, hi) in versions.items():
        if key not in M.REQUEST_CLASSES:
            out[key] = ApiVersionInfo(key, "UNKNOWN", lo, hi)
            continue
        ours_lo, ours_hi = our_version_range(key)
        if ours_hi < lo:
            out[key] = ApiVersionInfo(key, API_NAMES[key], lo, hi, unusable="node too new")
        elif hi < ours_lo:
            out[key] = ApiVersionInfo(key, API_NAMES[key], lo, hi, unusable="node too old")
        else:
            out[key] = ApiVersionInfo(key, API_NAMES[key], lo, hi, usable=min(ours_hi, hi))
    for key in broker_apis():
        if key not in out:
            out[key] = ApiVersionInfo(key, API_NAMES[key], None, None)
    return [out[k] for k in sorted(out)]


def list_broker_versions(admin: AdminClient) -> list[BrokerApiVersions]:
    from kafkapy.common.errors import KafkaError
    from kafkapy.tools.tool_support import error_message

    cluster = admin.client.update_metadata([], admin.default_api_timeout_ms)
    nodes = java_hash_order(list(cluster.brokers.values()), _node_hash)
    out: list[BrokerApiVersions] = []
    for node in nodes:
        try:
            versions = admin.client.api_versions(node.node_id, admin.default_api_timeout_ms)
            out.append(BrokerApiVersions(node.node_id, node.host, node.port, node.rack, node_api_versions(versions)))
        except KafkaError as e:
            out.append(BrokerApiVersions(node.node_id, node.host, node.port, node.rack, [], error_message(e)))
    return out
