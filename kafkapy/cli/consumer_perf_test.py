"""`kafkapy consumer-perf-test` (kafka-consumer-perf-test.sh, ConsumerPerformance): consume --messages
records in a consumer group and print Kafka's header and values line.

Flags are ConsumerPerformance's (joptsimple): --bootstrap-server (older --broker-list), --topic | --include
<regex>, --messages (required), --group (default perf-consumer-<random 0..99999>), --fetch-size (1048576 ->
max.partition.fetch.bytes), --from-latest (auto.offset.reset=latest, else earliest), --socket-buffer-size
(2097152 -> receive.buffer.bytes), --consumer.config (4.2: --command-config), --print-metrics,
--show-detailed-stats, --reporting-interval (5000), --timeout [ms] (10000: the longest wait between records),
--date-format (java.text.SimpleDateFormat, default yyyy-MM-dd HH:mm:ss:SSS), --hide-header. The pre-3.0
--threads / --num-fetch-threads are accepted and ignored. client.id defaults to perf-consumer-client.

Text (Kafka's, numbers rounded as Java's Formatter does):
  start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, ...
  2026-01-02 10:00:00:123, 2026-01-02 10:00:01:456, 4.7684, 3.5794, 50000, 37537.5375, 312, 1021, 4.6703, 48971.5965
With --show-detailed-stats a progress line per interval (`time, threadId, ...` header) and no values line;
on a timeout Kafka's `WARNING: Exiting before consuming the expected number of messages: timeout (N ms)
exceeded. ...` line (stdout, exit 0, as Kafka).
--output json: one object per line: {"type":"progress"}, {"type":"warning","message"}, {"type":"total"},
{"type":"metrics"}. A Rich progress bar shows while consuming on a terminal (below the lines on a terminal
stdout, on stderr when stdout is piped).
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
import random
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, run


def build_parser() -> ToolParser:
    p = ToolParser("consumer-perf-test", "This tool is used to verify the consumer performance.")
    p.add_bootstrap_server(required=False, help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", metavar="<topic>", help="The topic to consume from.")
    p.add_argument("--include", metavar="<Java regex (String)>",
                   help="Regular expression specifying list of topics to include for consumption.")
    p.add_argument("--group", metavar="<gid>", default=None,
                   help="The group id to consume on. (default: perf-consumer-<random>)")
    p.add_argument("--fetch-size", dest="fetch_size", type=int, default=1024 * 1024, metavar="<Integer: size>",
                   help="The amount of data to fetch in a single request. (default: 1048576)")
    p.add_argument("--from-latest", dest="from_latest", action="store_true",
                   help="If the consumer does not already have an established offset to consume from, start with "
                   "the latest message present in the log rather than the earliest message.")
    p.add_argument("--socket-buffer-size", dest="socket_buffer_size", type=int, default=2 * 1024 * 1024,
                   metavar="<Integer: size>", help="The size of the tcp RECV size. (default: 2097152)")
    p.add_command_config(aliases=("--consumer.config",), help="Consumer config properties file.")
    p.add_argument("--print-metrics", dest="print_metrics", action="store_true", help="Print out the metrics.")
    p.add_argument("--show-detailed-stats", dest="show_detailed_stats", action="store_true",
                   help="If set, stats are reported for each reporting interval as configured by reporting-interval")
    p.add_argument("--timeout", nargs="?", const=10000, default=10000, type=int, metavar="<Long: milliseconds>",
                   help="The maximum allowed time in milliseconds between returned records. (default: 10000)")
    p.add_argument("--messages", required=True, type=int, metavar="<Long: count>",
                   help="REQUIRED: The number of messages to consume.")
    p.add_argument("--reporting-interval", dest="reporting_interval", default="5000", metavar="<Long: interval_ms>",
                   help="Interval in milliseconds at which to print progress info. (default: 5000)")
    p.add_argument("--date-format", dest="date_format", default="yyyy-MM-dd HH:mm:ss:SSS", metavar="<date format>",
                   help="The date format to use for formatting the time field. See java.text.SimpleDateFormat for "
                   "options. (default: yyyy-MM-dd HH:mm:ss:SSS)")
    p.add_argument("--hide-header", dest="hide_header", action="store_true",
                   help="If set, skips printing the header for the stats")
    p.add_argument("--threads", help=argparse.SUPPRESS)  # removed in 3.0; accepted and ignored
    p.add_argument("--num-fetch-threads", help=argparse.SUPPRESS)
    return p


def consumer_props(file_props: dict[str, str], args: argparse.Namespace, group: str) -> dict[str, Any]:
    """ConsumerPerfOptions.props(): the file, then the flags (flags win); client.id defaulted."""
    props: dict[str, Any] = dict(file_props)
    props["bootstrap.servers"] = args.bootstrap_server
    props["group.id"] = group
    props["receive.buffer.bytes"] = str(args.socket_buffer_size)
    props["max.partition.fetch.bytes"] = str(args.fetch_size)
    props["auto.offset.reset"] = "latest" if args.from_latest else "earliest"
    props["check.crcs"] = "false"
    props.pop("key.deserializer", None)  # Kafka forces ByteArrayDeserializer: values stay bytes
    props.pop("value.deserializer", None)
    if props.get("client.id") is None:
        props["client.id"] = "perf-consumer-client"
    return props


def execute(args: argparse.Namespace, out: Any) -> int:
    if not args.bootstrap_server:
        raise missing_argument("bootstrap-server")
    if (args.topic is None) == (args.include is None):
        raise UsageError("Exactly one of the following arguments is required: --topic, --include")
    if not args.reporting_interval.isdigit():
        raise UsageError(f"Value [{args.reporting_interval}] did not match pattern [^\\d+$]")
    reporting_interval = int(args.reporting_interval)
    if reporting_interval <= 0:
        raise UsageError("Reporting interval must be greater than 0.")
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import consumer_perf_test as cpt
    from kafkapy.tools.producer_perf_test import format_metrics

    try:
        date_format = cpt.SimpleDateFormat(args.date_format)
    except ToolFailure as e:
        raise UsageError(str(e)) from e
    group = args.group if args.group is not None else f"perf-consumer-{random.randrange(100_000)}"
    props = consumer_props(load_properties(args.command_config) if args.command_config else {}, args, group)

    if not args.hide_header and not out.json:
        out.line(cpt.header_line(args.show_detailed_stats))
        out.flush()
    from kafkapy.client.consumer import KafkaConsumer

    try:
        consumer = KafkaConsumer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e

    def on_progress(progress: Any) -> None:
        if out.json:
            out.emit(progress)
        else:
            out.line(progress.line(date_format))
        out.flush()

    finished = False
    try:
        with out.progress(args.messages, "consuming", share_stdout=True) as advance:
            result = cpt.consume(consumer, topic=args.topic, include=args.include, num_messages=args.messages,
                                 timeout_ms=args.timeout, reporting_interval_ms=reporting_interval,
                                 show_detailed_stats=args.show_detailed_stats, on_progress=on_progress,
                                 advance=advance, client_id=str(props["client.id"]))
        finished = True
    finally:
        if not finished:
            consumer.close(0)
    if result.timed_out:
        warning = cpt.timeout_warning(args.timeout)
        if out.json:
            out.emit({"type": "warning", "message": warning})
        else:
            out.line(warning)
    if not args.show_detailed_stats:
        if out.json:
            out.emit(result.total)
        else:
            out.line(result.total.line(date_format))
    if args.print_metrics:
        if out.json:
            out.emit({"type": "metrics", "metrics": result.metrics})
        else:
            out.lines(format_metrics(result.metrics))
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
