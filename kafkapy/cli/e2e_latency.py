"""`kafkapy e2e-latency` (kafka-e2e-latency.sh, Kafka's EndToEndLatency): produce-to-consume latency.

Arguments are Kafka's positional ones: broker_list topic num_messages producer_acks message_size_bytes
[properties_file]; a wrong count prints Kafka's USAGE line on stderr and exits 1. Output: Kafka's lines
(progress `<i>\\t<ms>` every 1000 messages, `Avg latency: ... ms`, `Percentiles: 50th = ..., 99th = ...,
99.9th = ...`). --output json: one document {"num_messages", "avg_latency_ms", "p50_ms", "p99_ms", "p999_ms"}.
Thread-safety: one run per process, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("e2e-latency", "End-to-end latency: produce one message at a time and consume it back.")
    p.add_argument("params", nargs="*", metavar="ARG",
                   help="broker_list topic num_messages producer_acks message_size_bytes [properties_file]")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import e2e_latency as e

    params = args.params
    if len(params) not in (5, 6):
        raise ToolError(e.USAGE, prefixed=False)
    brokers, topic, num, acks, size = params[:5]
    try:
        num_messages, message_size = int(num), int(size)
    except ValueError as exc:
        raise ToolError(f'For input string: "{num if not num.lstrip("-").isdigit() else size}"',
                        prefixed=False) from exc
    props = load_properties(params[5]) if len(params) > 5 and params[5].strip() else {}

    def progress(line: str) -> None:
        if not out.json:
            out.line(line)
            out.flush()

    result = e.run_latency(brokers, topic, num_messages, acks, message_size, props, progress)
    if out.json:
        out.document({"num_messages": result.num_messages, "avg_latency_ms": result.avg_latency_ms,
                      "p50_ms": result.p50, "p99_ms": result.p99, "p999_ms": result.p999})
    else:
        out.line(f"Avg latency: {result.avg_latency_ms:.4f} ms")
        out.line(f"Percentiles: 50th = {result.p50}, 99th = {result.p99}, 99.9th = {result.p999}")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
