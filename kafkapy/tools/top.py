"""`kafkapy top` logic: one snapshot of a cluster's health, from the admin API and the brokers' metrics.

What an operator looks at first, gathered per refresh:
- brokers (AdminClient describe_cluster): id, host:port, rack, which is the controller, up; a broker id that
  replicas name but the cluster does not list is shown down;
- per topic (describe_topics + topic configs): partitions, under-replicated (ISR smaller than the replicas),
  under-min-ISR (ISR below min.insync.replicas), offline (no leader); messages / bytes in and bytes out per
  second from the brokers' BrokerTopicMetrics (Count deltas between two snapshots, else the meters'
  one-minute rates), or, without metrics, messages in per second from log end offset deltas;
- request p99 (RequestMetrics TotalTimeMs 99thPercentile, the worst broker) and requests/s per API;
- request-handler and network-processor idle % (the mean over brokers);
- the largest consumer-group lags (committed offset vs log end offset, per partition).
Metrics come from each broker's metrics endpoint (`--metrics-url http://host:port[,...]`, the brokers'
prometheus.listener addresses; their `/jmx` JSON). No byte format. Thread-safety: one Top per caller thread.
"""

from __future__ import annotations

import time
from collections.abc import Mapping, Sequence
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any

from kafkapy.tools.jmx import fetch_mbeans, jmx_endpoint

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

_TOPIC_METERS = {"MessagesInPerSec": "msgs_in", "BytesInPerSec": "bytes_in", "BytesOutPerSec": "bytes_out"}


@dataclass
class BrokerRow:
    id: int
    host: str
    port: int
    rack: str | None
    controller: bool
    up: bool


@dataclass
class TopicRow:
    topic: str
    partitions: int
    under_replicated: int
    under_min_isr: int
    offline: int
    msgs_in: float | None = None
    bytes_in: float | None = None
    bytes_out: float | None = None


@dataclass
class RequestRow:
    api: str
    p99_ms: float
    requests_per_sec: float | None


@dataclass
class LagRow:
    group: str
    topic: str
    partition: int
    lag: int


@dataclass
class TopSnapshot:
    cluster_id: str | None
    brokers: list[BrokerRow]
    topics: list[TopicRow]
    requests: list[RequestRow] = field(default_factory=list)
    handler_idle_pct: float | None = None
    network_idle_pct: float | None = None
    lags: list[LagRow] = field(default_factory=list)
    metrics_errors: list[str] = field(default_factory=list)

    @property
    def under_replicated(self) -> int:
        return sum(t.under_replicated for t in self.topics)

    @property
    def offline(self) -> int:
        return sum(t.offline for t in self.topics)


class Top:
    def __init__(self, admin: AdminClient, metrics_urls: Sequence[str] = (), max_lags: int = 10,
                 include_internal: bool = False) -> None:
        self.admin = admin
        self.endpoints = [jmx_endpoint(u) for u in metrics_urls]
        self.max_lags = max_lags
        self.include_internal = include_internal
        self._last: tuple[float, dict[str, dict[str, float]]] | None = None  # (time, counts by key)

    def snapshot(self) -> TopSnapshot:
        from kafkapy.client.admin_types import ConfigResource, ConfigResourceType

        cluster = self.admin.describe_cluster()
        topics = self.admin.describe_topics(None, raise_errors=False)
        names = [n for n, t in topics.items() if t.error is None and (self.include_internal or not t.internal)]
        configs = self.admin.describe_configs([ConfigResource(ConfigResourceType.TOPIC, n) for n in names],
                                              config_names=["min.insync.replicas"], raise_errors=False) if names else {}
        min_isr = {}
        for res, cfg in configs.items():
            entry = cfg.get("min.insync.replicas") if cfg.error is None else None
            min_isr[res.name] = int(entry.value) if entry is not None and entry.value else 1
        live = {n.node_id for n in cluster.nodes}
        controller_id = cluster.controller.node_id if cluster.controller is not None else -1
        brokers = [BrokerRow(n.node_id, n.host, n.port, n.rack, n.node_id == controller_id, True) for n in cluster.nodes]
        named: set[int] = set()
        rows = []
        for name in sorted(names):
            parts = topics[name].partitions
            for p in parts:
                named.update(p.replica_ids)
            rows.append(TopicRow(
                name, len(parts), sum(1 for p in parts if len(p.isr_ids) < len(p.replica_ids)),
                sum(1 for p in parts if p.leader_id >= 0 and len(p.isr_ids) < min_isr.get(name, 1)),
                sum(1 for p in parts if p.leader_id < 0)))
        brokers += [BrokerRow(b, "", -1, None, False, False) for b in sorted(named - live)]
        snap = TopSnapshot(cluster.cluster_id, sorted(brokers, key=lambda b: b.id), rows)
        if self.endpoints:
            self._apply_metrics(snap)
        else:
            self._apply_offset_rates(snap, topics)
        snap.lags = self._lags(topics)
        return snap

    # -- metrics --------------------------------------------------------------------------------------

    def _apply_metrics(self, snap: TopSnapshot) -> None:
        counts: dict[str, dict[str, float]] = {}
        one_minute: dict[str, dict[str, float]] = {}
        p99: dict[str, float] = {}
        req_counts: dict[str, float] = {}
        handler: list[float] = []
        network: list[float] = []
        for endpoint in self.endpoints:
            try:
                mbeans = fetch_mbeans(endpoint, ["kafka.server:*", "kafka.network:*"], timeout_s=3.0)
            except Exception as e:
                snap.metrics_errors.append(str(e))
                continue
            for mbean, attrs in mbeans.items():
                keys = dict(kv.split("=", 1) for kv in mbean.partition(":")[2].split(",") if "=" in kv)
                kind, name = keys.get("type"), keys.get("name", "")
                if kind == "BrokerTopicMetrics" and name in _TOPIC_METERS and "topic" in keys:
                    field_ = _TOPIC_METERS[name]
                    counts.setdefault(keys["topic"], {})[field_] = \
                        counts.get(keys["topic"], {}).get(field_, 0.0) + float(attrs.get("Count", 0))
                    one_minute.setdefault(keys["topic"], {})[field_] = \
                        one_minute.get(keys["topic"], {}).get(field_, 0.0) + float(attrs.get("OneMinuteRate", 0))
                elif kind == "RequestMetrics" and name == "TotalTimeMs" and "request" in keys:
                    p99[keys["request"]] = max(p99.get(keys["request"], 0.0), float(attrs.get("99thPercentile", 0)))
                elif kind == "RequestMetrics" and name == "RequestsPerSec" and "request" in keys:
                    req_counts[keys["request"]] = req_counts.get(keys["request"], 0.0) + float(attrs.get("Count", 0))
                elif kind == "KafkaRequestHandlerPool" and name == "RequestHandlerAvgIdlePercent":
                    idle = attrs.get("OneMinuteRate") or attrs.get("MeanRate") or 0.0
                    handler.append(float(idle))
                elif kind == "SocketServer" and name == "NetworkProcessorAvgIdlePercent":
                    network.append(float(attrs.get("Value", 0.0)))
        now = time.monotonic()
        flat = {f"{t}|{f}": v for t, fields in counts.items() for f, v in fields.items()}
        flat.update({f"request|{k}": v for k, v in req_counts.items()})
        previous = self._last
        self._last = (now, {"": flat})
        elapsed = now - previous[0] if previous is not None else 0.0
        before = previous[1][""] if previous is not None else {}

        def rate(key: str, fallback: float | None) -> float | None:
            if elapsed > 0 and key in before:
                delta = flat.get(key, 0.0) - before[key]
                if delta > 0:
                    return delta / elapsed
            return fallback

        for row in snap.topics:
            for f in ("msgs_in", "bytes_in", "bytes_out"):
                setattr(row, f, rate(f"{row.topic}|{f}", one_minute.get(row.topic, {}).get(f, 0.0)))
        snap.requests = sorted((RequestRow(api, ms, rate(f"request|{api}", None)) for api, ms in p99.items()),
                               key=lambda r: -r.p99_ms)
        snap.handler_idle_pct = 100.0 * sum(handler) / len(handler) if handler else None
        snap.network_idle_pct = 100.0 * sum(network) / len(network) if network else None

    def _apply_offset_rates(self, snap: TopSnapshot, topics: Mapping[str, Any]) -> None:
        from kafkapy.common.topic_partition import TopicPartition

        specs = {TopicPartition(r.topic, p.partition): -1 for r in snap.topics for p in topics[r.topic].partitions}
        if not specs:
            return
        ends = self.admin.list_offsets(specs, raise_errors=False)
        totals: dict[str, float] = {}
        for tp, info in ends.items():
            if info is not None and hasattr(info, "offset"):
                totals[tp.topic] = totals.get(tp.topic, 0.0) + info.offset
        now = time.monotonic()
        previous = self._last
        self._last = (now, {"": totals})
        for row in snap.topics:
            if previous is not None and now > previous[0] and row.topic in previous[1][""]:
                row.msgs_in = max(0.0, totals.get(row.topic, 0.0) - previous[1][""][row.topic]) / (now - previous[0])

    # -- lag ------------------------------------------------------------------------------------------

    def _lags(self, topics: Mapping[str, Any]) -> list[LagRow]:
        from kafkapy.common.topic_partition import TopicPartition

        if self.max_lags <= 0:
            return []
        try:
            groups = self.admin.list_consumer_groups()
        except Exception:
            return []
        committed: list[tuple[str, Any, int]] = []
        for g in groups[:50]:  # bounded: the largest lags among the first 50 groups
            try:
                offsets = self.admin.list_consumer_group_offsets(g.group_id)
            except Exception:
                continue
            committed += [(g.group_id, tp, om.offset) for tp, om in offsets.items() if om is not None]
        if not committed:
            return []
        specs = {TopicPartition(tp.topic, tp.partition): -1 for _, tp, _ in committed}
        ends = self.admin.list_offsets(specs, raise_errors=False)
        rows = []
        for group, tp, offset in committed:
            end = ends.get(TopicPartition(tp.topic, tp.partition))
            if end is not None and hasattr(end, "offset"):
                rows.append(LagRow(group, tp.topic, tp.partition, max(0, end.offset - offset)))
        rows.sort(key=lambda r: (-r.lag, r.group, r.topic, r.partition))
        return rows[: self.max_lags]
