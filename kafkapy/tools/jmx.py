"""`kafkapy jmx` logic (Kafka's JmxTool, kafka-jmx.sh) over a kafkapy broker's metrics endpoint.

Kafka's JmxTool reads MBeans over JMX/RMI; a kafkapy broker serves the same MBean names and attributes as
JSON at `<prometheus.listener>/jmx` (`{"<mbean>": {"<Attribute>": value}}`), so `--jmx-url` takes that
address (`http://host:port`, with or without `/metrics` or `/jmx`). The rest is JmxTool's: object-name
patterns select MBeans, `--attributes` filters attribute names, keys are `<mbean>:<Attribute>` sorted after
`time`, values print as Java prints them (`1000`, `0.75`, `3.1989548E8`), and a row prints only when every
expected attribute is present. Report formats: original (a CSV header of quoted keys, then one CSV row per
poll), properties (`key=value`), csv (`key,"value"`), tsv (`key<TAB>value`).
No byte format beyond that text. Thread-safety: one run per call.
"""

from __future__ import annotations

import json
import math
import urllib.error
import urllib.request
from collections.abc import Iterator, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import urlencode, urlparse

from kafkapy.metrics.metric_name import mbean_matches
from kafkapy.tools import ToolFailure

REPORT_FORMATS = ("original", "properties", "csv", "tsv")


def jmx_endpoint(url: str) -> str:
    """The /jmx URL of a broker's metrics address, or ToolFailure for a JMX service URL (RMI)."""
    if url.startswith("service:jmx:"):
        raise ToolFailure(f"Could not connect to JMX url {url}: kafkapy brokers serve their MBeans over HTTP; "
                          "pass the broker's prometheus.listener address (http://host:port)")
    parsed = urlparse(url if "://" in url else f"http://{url}")
    if parsed.scheme not in ("http", "https") or not parsed.hostname:
        raise ToolFailure(f"Invalid JMX url {url}")
    path = parsed.path.rstrip("/")
    if path.endswith("/metrics"):
        path = path[: -len("/metrics")]
    if not path.endswith("/jmx"):
        path += "/jmx"
    return f"{parsed.scheme}://{parsed.netloc}{path}"


def fetch_mbeans(endpoint: str, patterns: Sequence[str] = (), timeout_s: float = 10.0) -> dict[str, dict[str, Any]]:
    query = "?" + urlencode([("name", p) for p in patterns]) if patterns else ""
    try:
        with urllib.request.urlopen(endpoint + query, timeout=timeout_s) as resp:
            data = json.loads(resp.read().decode("utf-8"))
    except (OSError, urllib.error.URLError, ValueError) as e:
        raise ToolFailure(f"Could not connect to JMX url {endpoint}. Exception: {e}.") from e
    if not isinstance(data, dict):
        raise ToolFailure(f"Unexpected answer from {endpoint}")
    return data


def java_string(value: Any) -> str:
    """Java's String.valueOf: Double.toString for floats (`1.0`, `1.0E7`, `NaN`), `true`/`false` for booleans."""
    if value is None:
        return "null"
    if isinstance(value, bool):
        return "true" if value else "false"
    if isinstance(value, float):
        if math.isnan(value):
            return "NaN"
        if math.isinf(value):
            return "Infinity" if value > 0 else "-Infinity"
        if value == 0:
            return "-0.0" if math.copysign(1.0, value) < 0 else "0.0"
        if 1e-3 <= abs(value) < 1e7:
            text = repr(value)
            return text if "." in text or "e" in text else text + ".0"
        return _java_scientific(value)
    return str(value)


def _java_scientific(value: float) -> str:
    """Double.toString outside [1e-3, 1e7): the shortest round-trip digits as d.dddE[-]n."""
    text = repr(abs(value))
    sign = "-" if value < 0 else ""
    if "e" in text:
        mantissa, _, exponent = text.partition("e")
        if "." not in mantissa:
            mantissa += ".0"
        return f"{sign}{mantissa}E{int(exponent)}"
    whole, _, frac = text.partition(".")
    digits = (whole + frac).lstrip("0")
    power = len(whole) - 1 if whole.strip("0") else -(len(frac) - len(frac.lstrip("0")) + 1)
    digits = digits.rstrip("0") or "0"
    return f"{sign}{digits[0]}.{digits[1:] or '0'}E{power}"


@dataclass
class JmxQuery:
    endpoint: str
    object_names: list[str]  # empty: every MBean
    attributes: list[str] | None  # None: every attribute

    def poll(self) -> dict[str, Any]:
        """`<mbean>:<Attribute>` -> value for the selected MBeans and attributes."""
        mbeans = fetch_mbeans(self.endpoint, self.object_names)
        out: dict[str, Any] = {}
        for mbean, attrs in mbeans.items():
            if self.object_names and not any(mbean_matches(mbean, p) for p in self.object_names):
                continue
            for name, value in attrs.items():
                if self.attributes is None or name in self.attributes:
                    out[f"{mbean}:{name}"] = value
        return out

    def expected(self, first: dict[str, Any]) -> int:
        """How many attributes a complete row has (JmxTool's numExpectedAttributes sum)."""
        if self.attributes is None or any("*" in p or "?" in p for p in self.object_names):
            return len(first)
        return len({k.rsplit(":", 1)[0] for k in first}) * len(self.attributes)


def header_line(keys: Sequence[str]) -> str:
    return ",".join(f'"{k}"' for k in keys)


def row_lines(report_format: str, keys: Sequence[str], values: dict[str, Any]) -> Iterator[str]:
    if report_format == "properties":
        yield from (f"{k}={java_string(values.get(k))}" for k in keys)
    elif report_format == "csv":
        yield from (f'{k},"{java_string(values.get(k))}"' for k in keys)
    elif report_format == "tsv":
        yield from (f"{k}\t{java_string(values.get(k))}" for k in keys)
    else:
        yield ",".join(java_string(values[k]) for k in keys if values.get(k) is not None)
