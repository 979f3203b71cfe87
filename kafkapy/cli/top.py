"""`kafkapy top --bootstrap-server ... [--metrics-url http://host:port,...]`: a live view of a cluster.

On a terminal: a Rich view redrawn every second (--interval) until Ctrl-C (or --iterations): brokers
(controller, up/down), per-topic messages / bytes in and out per second, under-replicated / under-min-ISR /
offline partitions, request p99 per API, handler and network idle %, the largest consumer-group lags.
Piped, or with --once: the same sections as plain text, once (rates need two snapshots: --once takes two,
--interval apart). --output json: the snapshot as one document. Nothing of the kind ships with Kafka.
Thread-safety: one run per process, main thread.
"""

from __future__ import annotations

import argparse
import dataclasses
import sys
import time
from collections.abc import Iterator
from typing import Any

from kafkapy.cli.command import ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("top", "A live view of a Kafka cluster: brokers, topic rates, partition health, request "
                   "latency, idle ratios and consumer lag.")
    p.add_bootstrap_server()
    p.add_argument("--metrics-url", action="append", default=[], metavar="<url>",
                   help="A broker's metrics address (its prometheus.listener, http://host:port); repeatable or "
                   "comma-separated. Without it, rates come from log end offsets and latency is not shown.")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--once", action="store_true", help="Print one snapshot as plain text and exit.")
    p.add_argument("--interval", type=float, default=1.0, metavar="<seconds>", help="Refresh interval (default 1).")
    p.add_argument("--iterations", type=int, default=0, metavar="<n>",
                   help="Stop after n refreshes (default: until Ctrl-C).")
    p.add_argument("--max-lags", type=int, default=10, metavar="<n>", help="Consumer-group lags to show.")
    p.add_argument("--include-internal", action="store_true", help="Show internal topics too.")
    return p


def _rate(v: float | None) -> str:
    if v is None:
        return "-"
    return f"{v:,.1f}" if v < 1e6 else f"{v:,.0f}"


def _pct(v: float | None) -> str:
    return "-" if v is None else f"{v:.1f}%"


def plain_lines(snap: Any) -> Iterator[str]:
    yield f"Cluster {snap.cluster_id or '-'}: {len([b for b in snap.brokers if b.up])} brokers up, " \
          f"{snap.under_replicated} under-replicated, {snap.offline} offline partitions"
    yield ""
    yield "BROKER\tHOST\tPORT\tRACK\tCONTROLLER\tSTATUS"
    for b in snap.brokers:
        yield f"{b.id}\t{b.host or '-'}\t{b.port if b.port >= 0 else '-'}\t{b.rack or '-'}\t" \
              f"{'yes' if b.controller else 'no'}\t{'up' if b.up else 'down'}"
    yield ""
    yield "TOPIC\tPARTITIONS\tUNDER-REPLICATED\tUNDER-MIN-ISR\tOFFLINE\tMSGS-IN/S\tBYTES-IN/S\tBYTES-OUT/S"
    for t in snap.topics:
        yield f"{t.topic}\t{t.partitions}\t{t.under_replicated}\t{t.under_min_isr}\t{t.offline}\t" \
              f"{_rate(t.msgs_in)}\t{_rate(t.bytes_in)}\t{_rate(t.bytes_out)}"
    yield ""
    yield f"REQUEST-HANDLER-IDLE\t{_pct(snap.handler_idle_pct)}\tNETWORK-PROCESSOR-IDLE\t{_pct(snap.network_idle_pct)}"
    if snap.requests:
        yield ""
        yield "API\tP99-MS\tREQUESTS/S"
        for r in snap.requests:
            yield f"{r.api}\t{r.p99_ms:.2f}\t{_rate(r.requests_per_sec)}"
    if snap.lags:
        yield ""
        yield "GROUP\tTOPIC\tPARTITION\tLAG"
        for lag in snap.lags:
            yield f"{lag.group}\t{lag.topic}\t{lag.partition}\t{lag.lag}"
    for err in snap.metrics_errors:
        yield f"metrics: {err}"


def rich_view(snap: Any) -> Any:
    from rich.console import Group
    from rich.table import Table
    from rich.text import Text

    title = Text(f"kafkapy top  cluster {snap.cluster_id or '-'}  {time.strftime('%H:%M:%S')}", style="bold")
    brokers = Table(title="Brokers", expand=True)
    for col in ("ID", "Host", "Port", "Rack", "Controller", "Status"):
        brokers.add_column(col)
    for b in snap.brokers:
        brokers.add_row(str(b.id), b.host or "-", str(b.port) if b.port >= 0 else "-", b.rack or "-",
                        "*" if b.controller else "", Text("up", "green") if b.up else Text("DOWN", "bold red"))
    topics = Table(title="Topics", expand=True)
    for col in ("Topic", "Parts", "URP", "<MinISR", "Offline", "Msgs in/s", "Bytes in/s", "Bytes out/s"):
        topics.add_column(col, justify="left" if col == "Topic" else "right")
    for t in snap.topics:
        def bad(n: int) -> Text:
            return Text(str(n), "bold red" if n else "")

        topics.add_row(t.topic, str(t.partitions), bad(t.under_replicated), bad(t.under_min_isr), bad(t.offline),
                       _rate(t.msgs_in), _rate(t.bytes_in), _rate(t.bytes_out))
    parts: list[Any] = [title, brokers, topics,
                        Text(f"Request handler idle {_pct(snap.handler_idle_pct)}   "
                             f"Network processor idle {_pct(snap.network_idle_pct)}")]
    if snap.requests:
        req = Table(title="Requests (p99 ms, worst broker)", expand=True)
        for col in ("API", "p99 ms", "Requests/s"):
            req.add_column(col, justify="left" if col == "API" else "right")
        for r in snap.requests[:15]:
            req.add_row(r.api, f"{r.p99_ms:.2f}", _rate(r.requests_per_sec))
        parts.append(req)
    if snap.lags:
        lags = Table(title="Largest consumer lags", expand=True)
        for col in ("Group", "Topic", "Partition", "Lag"):
            lags.add_column(col, justify="right" if col in ("Partition", "Lag") else "left")
        for lag in snap.lags:
            lags.add_row(lag.group, lag.topic, str(lag.partition), f"{lag.lag:,}")
        parts.append(lags)
    parts += [Text(f"metrics: {e}", "yellow") for e in snap.metrics_errors]
    return Group(*parts)


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools.tool_support import admin_client
    from kafkapy.tools.top import Top

    urls = [u for item in args.metrics_url for u in item.split(",") if u]
    props = load_properties(args.command_config) if args.command_config else {}
    admin = admin_client(args.bootstrap_server, props, client_id="kafkapy-top")
    interval = max(0.1, args.interval)
    try:
        top = Top(admin, urls, args.max_lags, args.include_internal)
        live = not args.once and not out.json and sys.stdout.isatty()
        if not live:
            top.snapshot()  # the first snapshot only seeds the rates
            time.sleep(interval)
            snap = top.snapshot()
            if out.json:
                out.document(dataclasses.asdict(snap))
            else:
                out.lines(plain_lines(snap))
            return 0
        from rich.live import Live

        with Live(rich_view(top.snapshot()), console=out.console(), refresh_per_second=4, screen=False) as view:
            n = 0
            while args.iterations <= 0 or n < args.iterations:
                time.sleep(interval)
                view.update(rich_view(top.snapshot()))
                n += 1
        return 0
    finally:
        admin.close()


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
