"""`kafkapy jmx` (kafka-jmx.sh, Kafka's JmxTool): dump a broker's MBean attributes to standard output.

Flags are JmxTool's: --object-name (repeatable, JMX patterns), --attributes (comma list), --reporting-interval
(ms, default 2000; -1 = once), --one-time [true|false] (present = once, as JmxTool), --date-format
(SimpleDateFormat), --report-format original|properties|csv|tsv, --jmx-url (here the broker's metrics
address, `http://host:port` of its prometheus.listener), --wait, --jmx-auth-prop / --jmx-ssl-enable
(accepted; the HTTP endpoint has neither). "Trying to connect to JMX url: ..." goes to stderr, as JmxTool
prints it there for system tests that parse stdout. --output json: one object per poll
{"time": ..., "<mbean>:<Attribute>": value, ...}.
Thread-safety: one run per process, main thread.
"""

from __future__ import annotations

import argparse
import re
import time
from datetime import datetime
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run

_SIMPLE_DATE = {"yyyy": "%Y", "yy": "%y", "MM": "%m", "dd": "%d", "HH": "%H", "hh": "%I", "mm": "%M", "ss": "%S",
                "a": "%p", "EEE": "%a", "MMM": "%b", "Z": "%z", "z": "%Z"}
_DATE_TOKEN = re.compile(r"'[^']*'|yyyy|yy|MMM|MM|dd|HH|hh|mm|ss|SSS|EEE|a|Z|z")


def format_date(pattern: str, when: datetime) -> str:
    """java.text.SimpleDateFormat's common letters (yyyy MM dd HH hh mm ss SSS a EEE MMM Z z, 'quoted')."""
    def token(m: re.Match[str]) -> str:
        t = m.group(0)
        if t.startswith("'"):
            return t[1:-1] or "'"
        if t == "SSS":
            return f"{when.microsecond // 1000:03d}"
        return when.strftime(_SIMPLE_DATE[t])

    return _DATE_TOKEN.sub(token, pattern)


def build_parser() -> ToolParser:
    p = ToolParser("jmx", "Dump JMX values to standard output.")
    p.add_argument("--object-name", action="append", default=[], metavar="<name>",
                   help="A JMX object name to use as a query. This can contain wild cards, and this option can be "
                   "given multiple times to specify more than one query. If no objects are specified all objects "
                   "will be queried.")
    p.add_argument("--attributes", metavar="<name>",
                   help="The list of attributes to include in the query. This is a comma-separated list. If no "
                   "attributes are specified all objects will be queried.")
    p.add_argument("--reporting-interval", type=int, default=2000, metavar="<ms>",
                   help="Interval in MS with which to poll jmx stats; default value is 2 seconds. Value of -1 "
                   "equivalent to setting one-time to true")
    p.add_argument("--one-time", nargs="?", const="true", default=None, metavar="<one-time>",
                   help="Flag to indicate run once only.")
    p.add_argument("--date-format", metavar="<format>",
                   help="The date format to use for formatting the time field. See java.text.SimpleDateFormat "
                   "for options.")
    p.add_argument("--jmx-url", default="service:jmx:rmi:///jndi/rmi://:9999/jmxrmi", metavar="<service-url>",
                   help="The url to connect to poll JMX data: a kafkapy broker's metrics address "
                   "(http://host:port of its prometheus.listener).")
    p.add_argument("--report-format", default="original", metavar="<report-format>",
                   help="output format name: either 'original', 'properties', 'csv', 'tsv' ")
    p.add_argument("--jmx-auth-prop", metavar="<jmx-auth-prop>",
                   help="A mechanism to pass property in the form 'username=password' when enabling remote JMX "
                   "with password authentication.")
    p.add_argument("--jmx-ssl-enable", metavar="<ssl-enable>", help="Flag to enable remote JMX with SSL.")
    p.add_argument("--wait", action="store_true",
                   help="Wait for requested JMX objects to become available before starting output. Only "
                   "supported when the list of objects is non-empty and contains no object name patterns.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.tools import jmx

    fmt = args.report_format.lower()
    report_format = fmt if fmt in jmx.REPORT_FORMATS else "original"
    attributes = [a for a in args.attributes.split(",") if a] if args.attributes is not None else None
    one_time = args.reporting_interval < 0 or args.one_time is not None
    endpoint = jmx.jmx_endpoint(args.jmx_url)
    out.error_line(f"Trying to connect to JMX url: {args.jmx_url}")
    query = jmx.JmxQuery(endpoint, list(args.object_name), attributes)
    first = query.poll()
    patterns = any("*" in n or "?" in n for n in args.object_name)
    if args.wait and args.object_name and not patterns:
        deadline = time.monotonic() + 10.0
        while {k.rsplit(":", 1)[0] for k in first} != set(args.object_name) and time.monotonic() < deadline:
            out.error_line("Could not find all object names, retrying")
            time.sleep(0.1)
            first = query.poll()
    expected = query.expected(first)
    if expected == 0:
        names = args.object_name or ["null"]
        raise ToolError(f"No matched attributes for the queried objects [{', '.join(names)}].", prefixed=False)
    keys = ["time", *sorted(first)]
    if report_format == "original" and not out.json and len(keys) == expected + 1:
        out.line(jmx.header_line(keys))
    values: dict[str, Any] | None = first
    while True:
        start = time.monotonic()
        if values is None:
            values = query.poll()
        now = datetime.now()
        values["time"] = format_date(args.date_format, now) if args.date_format else str(int(now.timestamp() * 1000))
        if len(values) == expected + 1:
            if out.json:
                out.emit({k: values.get(k) for k in keys})
            else:
                out.lines(jmx.row_lines(report_format, keys, values))
            out.flush()
        if one_time:
            return 0
        values = None
        time.sleep(max(0.0, args.reporting_interval / 1000.0 - (time.monotonic() - start)))


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
