"""The broker's Prometheus endpoint: a prometheus_client Collector over the MetricsRegistry, served over HTTP.

`prometheus.listener=http://127.0.0.1:9404` in server.properties starts `PrometheusEndpoint` on that address:
- `GET /metrics`: Prometheus text format, produced by prometheus_client from `KafkaCollector`, which reads a
  registry snapshot at scrape time and names every numeric MBean attribute by the JMX exporter's Kafka rules
  (jmx_rules.py). Counters named `*_total` are counter families; the exporter's `*_count` counters are
  written untyped so their sample keeps its exact name (prometheus_client would append `_total`).
- `GET /jmx[?name=<mbean pattern>]`: the MBeans themselves as JSON, `{"<mbean name>": {"<Attribute>": value}}`
  (what `kafkapy jmx` reads; Kafka's JmxTool reads the same names over RMI).
The HTTP server is prometheus_client's threading WSGI server (daemon threads), started and stopped here.

Thread-safety: a scrape runs on the HTTP server's thread and only reads the registry (its snapshot locks).
"""

from __future__ import annotations

import json
import logging
import threading
from collections.abc import Callable, Iterable, Iterator
from typing import Any
from urllib.parse import parse_qs, urlparse
from wsgiref.simple_server import make_server

from prometheus_client.core import Metric
from prometheus_client.exposition import ThreadingWSGIServer, _SilentHandler, make_wsgi_app
from prometheus_client.registry import CollectorRegistry

from kafkapy.metrics.jmx_rules import COUNTER, GAUGE, map_attribute
from kafkapy.metrics.metric_name import mbean_matches
from kafkapy.metrics.registry import MetricsRegistry

log = logging.getLogger("kafka.metrics.PrometheusEndpoint")


class KafkaCollector:
    """A prometheus_client custom collector: one scrape = one registry snapshot mapped by the exporter's rules."""

    def __init__(self, registry: MetricsRegistry) -> None:
        self.registry = registry

    def describe(self) -> list[Metric]:
        return []  # families depend on the broker's state: nothing to check at registration

    def collect(self) -> Iterator[Metric]:
        # A family may hold samples with different label sets (the all-topics meter has no topic label, the
        # per-topic ones have one), as the JMX exporter writes them.
        families: dict[str, Metric] = {}
        for sample in self.registry.snapshot():
            mbean = sample.name.mbean_name
            for attribute, value in sample.attributes.items():
                if isinstance(value, bool) or not isinstance(value, int | float):
                    continue
                mapped = map_attribute(mbean, attribute)
                if mapped is None:
                    continue
                metric = families.get(mapped.name)
                if metric is None:
                    metric = families[mapped.name] = _family(mapped.name, mapped.type)
                metric.add_sample(mapped.name, dict(mapped.labels), float(value))
        yield from families.values()


def _family(name: str, type_: str) -> Metric:
    doc = f"Kafka MBean attribute(s) mapped by the JMX exporter's rules to {name}"
    if type_ == COUNTER and name.endswith("_total"):
        return Metric(name[: -len("_total")], doc, "counter")
    if type_ == GAUGE:
        return Metric(name, doc, "gauge")
    # The exporter's `*_count` counters: untyped, so the sample keeps its exact name (a counter family
    # would be written with `_total` appended).
    return Metric(name, doc, "unknown")


def mbeans_json(registry: MetricsRegistry, patterns: Iterable[str] = ()) -> dict[str, dict[str, Any]]:
    """The registry's MBeans (optionally those matching any of the JMX-style `*` patterns) with attributes."""
    pats = [p for p in patterns if p]
    out: dict[str, dict[str, Any]] = {}
    for sample in registry.snapshot():
        mbean = sample.name.mbean_name
        if pats and not any(mbean_matches(mbean, p) for p in pats):
            continue
        out[mbean] = sample.attributes
    return out


def _jmx_app(registry: MetricsRegistry) -> Callable[..., list[bytes]]:
    def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> list[bytes]:
        query = parse_qs(environ.get("QUERY_STRING", ""))
        body = json.dumps(mbeans_json(registry, query.get("name", [])), default=str).encode()
        start_response("200 OK", [("Content-Type", "application/json"), ("Content-Length", str(len(body)))])
        return [body]

    return app


def parse_listener(value: str) -> tuple[str, int]:
    """`http://127.0.0.1:9404` (or `127.0.0.1:9404`) -> (host, port)."""
    url = urlparse(value if "://" in value else f"http://{value}")
    if url.scheme != "http" or url.port is None:
        raise ValueError(f"prometheus.listener must be http://host:port, got {value!r}")
    return url.hostname or "127.0.0.1", url.port


class PrometheusEndpoint:
    def __init__(self, registry: MetricsRegistry, host: str, port: int) -> None:
        self.registry = registry
        self.collector_registry = CollectorRegistry(auto_describe=False)
        self.collector_registry.register(KafkaCollector(registry))  # type: ignore[arg-type]
        metrics_app = make_wsgi_app(self.collector_registry)
        jmx_app = _jmx_app(registry)

        def app(environ: dict[str, Any], start_response: Callable[..., Any]) -> Iterable[bytes]:
            path = environ.get("PATH_INFO", "")
            if path.startswith("/jmx"):
                return jmx_app(environ, start_response)
            result: Iterable[bytes] = metrics_app(environ, start_response)
            return result

        self._httpd = make_server(host, port, app, ThreadingWSGIServer, handler_class=_SilentHandler)
        self._thread = threading.Thread(target=self._httpd.serve_forever, name="prometheus-endpoint", daemon=True)

    @property
    def port(self) -> int:
        return int(self._httpd.server_port)

    @property
    def url(self) -> str:
        host = self._httpd.server_address[0]
        return f"http://{host if isinstance(host, str) else host.decode()}:{self.port}/metrics"

    def startup(self) -> None:
        self._thread.start()
        log.info("Serving Prometheus metrics on %s", self.url)

    def shutdown(self) -> None:
        self._httpd.shutdown()
        self._httpd.server_close()
        self._thread.join(5)
