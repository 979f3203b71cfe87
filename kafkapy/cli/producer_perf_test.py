"""`kafkapy producer-perf-test` (kafka-producer-perf-test.sh, ProducerPerformance): produce --num-records
records and print Kafka's window lines (every --reporting-interval ms, 5 s by default) and final line.

Flags are ProducerPerformance's (argparse4j): --topic, --num-records, exactly one of --record-size /
--payload-file [--payload-delimiter, a regex, default \\n] / --payload-monotonic, --throughput (records/s,
-1 = unthrottled), --producer-props k=v ... and/or --producer.config (4.2 spellings --command-property /
--command-config), --bootstrap-server (4.x; wins over bootstrap.servers), --print-metrics, --warmup-records,
--reporting-interval, --transactional-id / --transaction-duration-ms (Kafka 4.x's rules: transactions are on when
either flag or a transactional.id property is given; --transactional-id wins over the property, else the id is
performance-producer-default-transactional-id; each transaction is committed once it is
--transaction-duration-ms old, 3000 by default). --print-metrics prints the Java producer's whole metric list
(kafkapy/tools/producer_metrics.py; NaN, null in JSON, where kafkapy does not measure a value). Kafka's usage checks: `--num-records should be greater than zero`, ... (exit 2 here).
Properties given with --producer-props must be exactly `key=value` (Kafka splits on every '=':
`Invalid property: a=b=c`). client.id defaults to perf-producer-client.

Output: text is Kafka's, byte for byte (numbers rounded as Java's Formatter does). Failed sends print
`<java exception>: <message>` on stderr (Kafka prints a stack trace) and make the exit code 1.
--output json: one object per line: {"type":"window",...}, {"type":"total",...} (+ "steadyStateTotal"),
{"type":"metrics","metrics":{...}} with --print-metrics, {"type":"payloads",...} for --payload-file.
A Rich progress bar shows while producing on a terminal: below the window lines when stdout is the
terminal, on stderr when stdout is piped (the piped bytes stay Kafka's).
Thread-safety: one run per call; window lines are written from the producer's Sender thread.
"""

from __future__ import annotations

import argparse
import os
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

DESCRIPTION = ("This tool is used to verify the producer performance. To enable transactions, you can specify a "
               "transaction id or set a transaction duration using --transaction-duration-ms. There are three ways "
               "to specify the transaction id: set transaction.id=<id> via --producer-props, set transaction.id=<id> "
               "in the config file via --producer.config, or use --transaction-id <id>.")


DEFAULT_TRANSACTIONAL_ID = "performance-producer-default-transactional-id"
DEFAULT_TRANSACTION_DURATION_MS = 3000


def transaction_settings(args: argparse.Namespace, props: dict[str, Any]) -> int:
    """ProducerPerformance's transactional mode: sets props' transactional.id when transactions are on and
    returns the transaction duration (0 = no transactions)."""
    if args.transactional_id is None and args.transaction_duration_ms is None and not props.get("transactional.id"):
        return 0
    if args.transactional_id is not None:
        props["transactional.id"] = args.transactional_id
    elif not props.get("transactional.id"):
        props["transactional.id"] = DEFAULT_TRANSACTIONAL_ID
    return args.transaction_duration_ms or DEFAULT_TRANSACTION_DURATION_MS


def build_parser() -> ToolParser:
    p = ToolParser("producer-perf-test", DESCRIPTION)
    p.add_argument("--topic", required=True, metavar="TOPIC", help="produce messages to this topic")
    p.add_argument("--num-records", dest="num_records", required=True, type=int, metavar="NUM-RECORDS",
                   help="number of messages to produce")
    payload = p.add_mutually_exclusive_group(required=True)
    payload.add_argument("--record-size", dest="record_size", type=int, metavar="RECORD-SIZE",
                         help="message size in bytes. Note that you must provide exactly one of --record-size or "
                         "--payload-file or --payload-monotonic.")
    payload.add_argument("--payload-file", dest="payload_file", metavar="PAYLOAD-FILE",
                         help="file to read the message payloads from. This works only for UTF-8 encoded text files. "
                         "Payloads will be read from this file and a payload will be randomly selected when sending "
                         "messages.")
    payload.add_argument("--payload-monotonic", dest="payload_monotonic", action="store_true",
                         help="payload is monotonically increasing integer.")
    p.add_argument("--payload-delimiter", dest="payload_delimiter", default="\\n", metavar="PAYLOAD-DELIMITER",
                   help="provides delimiter to be used when --payload-file is provided. Defaults to new line. Note "
                   "that this parameter will be ignored if --payload-file is not provided. (default: \\n)")
    p.add_argument("--throughput", required=True, type=float, metavar="THROUGHPUT",
                   help="throttle maximum message throughput to *approximately* THROUGHPUT messages/sec. Set this to "
                   "-1 to disable throttling.")
    p.add_argument("--producer-props", "--command-property", dest="producer_props", nargs="+", action="extend",
                   metavar="PROP-NAME=PROP-VALUE",
                   help="kafka producer related configuration properties like bootstrap.servers,client.id etc. These "
                   "configs take precedence over those passed via --producer.config.")
    p.add_command_config(aliases=("--producer.config",), help="producer config properties file.")
    p.add_bootstrap_server(required=False, aliases=(),
                           help="The server(s) to connect to. This config takes precedence over bootstrap.servers "
                           "specified via --producer-props or --producer.config.")
    p.add_argument("--print-metrics", dest="print_metrics", action="store_true",
                   help="print out metrics at the end of the test. (default: false)")
    p.add_argument("--transactional-id", dest="transactional_id", metavar="TRANSACTIONAL-ID",
                   help="The transactional id to use. This config takes precedence over the transactional.id "
                   "specified via --producer.config or --producer-props. Note that if the transactional id is not "
                   f"specified while --transaction-duration-ms is provided, the default value for the transactional id "
                   f"will be {DEFAULT_TRANSACTIONAL_ID}.")
    p.add_argument("--transaction-duration-ms", dest="transaction_duration_ms", type=int,
                   metavar="TRANSACTION-DURATION",
                   help="The max age of each transaction. The commitTransaction will be called after this time has "
                   "elapsed. The value should be greater than 0. If the transactional id is specified via "
                   "--producer-props, --producer.config, or --transactional-id but --transaction-duration-ms is not "
                   f"specified, the default value will be {DEFAULT_TRANSACTION_DURATION_MS}.")
    p.add_argument("--warmup-records", dest="warmup_records", type=int, default=0, metavar="WARMUP-RECORDS",
                   help="The number of records to treat as warmup; these initial records will not be included in "
                   "steady-state statistics. An additional summary line will be printed describing the steady-state "
                   "statistics. (default: 0).")
    p.add_argument("--reporting-interval", dest="reporting_interval", type=int, default=5000,
                   metavar="INTERVAL-MS", help="Interval in milliseconds at which to print progress info. (default: 5000)")
    return p


def producer_props(file_props: dict[str, str], props: list[str] | None, bootstrap: str | None) -> dict[str, Any]:
    """ProducerPerformance.readProps: the file, then --producer-props (each exactly `k=v`), serializers forced
    to bytes, client.id defaulted; 4.x's --bootstrap-server last."""
    out: dict[str, Any] = dict(file_props)
    for prop in props or ():
        pieces = [x for x in prop.split("=")]
        while len(pieces) > 1 and pieces[-1] == "":  # Java's split drops trailing empty strings
            pieces.pop()
        if len(pieces) != 2:
            raise ToolError(f"Invalid property: {prop}")
        out[pieces[0]] = pieces[1]
    out["key.serializer"] = "org.apache.kafka.common.serialization.ByteArraySerializer"
    out["value.serializer"] = "org.apache.kafka.common.serialization.ByteArraySerializer"
    if out.get("client.id") is None:
        out["client.id"] = "perf-producer-client"
    if bootstrap is not None:
        out["bootstrap.servers"] = bootstrap
    return out


def _check(args: argparse.Namespace) -> None:
    if args.num_records <= 0:
        raise UsageError("--num-records should be greater than zero")
    if max(args.warmup_records, 0) >= args.num_records:
        raise UsageError("The value for --warmup-records must be strictly fewer than the number of records in the "
                         "test, --num-records.")
    if args.record_size is not None and args.record_size <= 0:
        raise UsageError("--record-size should be greater than zero")
    if args.producer_props is None and args.command_config is None and args.bootstrap_server is None:
        raise UsageError("Either --bootstrap-server, --producer-props or --producer.config must be specified.")
    if args.transaction_duration_ms is not None and args.transaction_duration_ms <= 0:
        raise UsageError("--transaction-duration-ms should be greater than zero")
    if args.reporting_interval <= 0:
        raise UsageError("--reporting-interval should be greater than zero")


def execute(args: argparse.Namespace, out: Any) -> int:
    _check(args)
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import producer_perf_test as ppt
    from kafkapy.tools.tool_support import java_error_text

    props = producer_props(load_properties(args.command_config) if args.command_config else {},
                           args.producer_props, args.bootstrap_server)
    transaction_duration_ms = transaction_settings(args, props)
    if not props.get("bootstrap.servers"):
        raise ToolError('Missing required configuration "bootstrap.servers" which has no default value.')

    payloads = None
    if args.payload_file is not None:
        path = os.path.abspath(args.payload_file)
        if not out.json:
            out.line(f"Reading payloads from: {path}")
        delimiter = "\n" if args.payload_delimiter == "\\n" else args.payload_delimiter
        payloads = ppt.read_payload_file(args.payload_file, delimiter)
        if out.json:
            out.emit({"type": "payloads", "path": path, "count": len(payloads)})
        else:
            out.line(f"Number of messages read: {len(payloads)}")
        if not payloads:  # Kafka fails on its first random pick ("bound must be positive")
            raise ToolError(f"No payloads in {path}: every token between delimiters was empty")
    opts = ppt.ProducerPerfOptions(args.topic, args.num_records, args.record_size, payloads, args.payload_monotonic,
                                   args.throughput, max(args.warmup_records, 0), args.reporting_interval,
                                   transaction_duration_ms)

    import time

    from kafkapy.client.producer import KafkaProducer
    from kafkapy.tools.tool_support import admin_client

    start_time_ms = int(time.time() * 1000)
    try:
        producer = KafkaProducer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e
    try:
        admin = admin_client(props["bootstrap.servers"], {k: v for k, v in props.items()
                                                          if not k.endswith(".serializer")},
                             client_id=None)
        try:
            create_time = ppt.topic_uses_create_time(admin, args.topic)
        finally:
            admin.close()
    except Exception:  # noqa: BLE001 - the per-record callbacks are always correct
        create_time = False

    if opts.warmup_records > 0 and not out.json:
        out.line(f"Warmup first {opts.warmup_records} records. Steady state results will print after the complete "
                 "test summary.")

    def on_window(report: Any) -> None:
        if out.json:
            out.emit(report)
        else:
            if report.in_steady_state:
                out.line("In steady state.")
            out.line(report.text())
        out.flush()

    def on_error(exc: BaseException) -> None:
        out.error_line(java_error_text(exc))

    finished = False
    try:
        with out.progress(opts.num_records, "producing", share_stdout=True) as advance:
            result = ppt.run_producer_perf(
                producer, opts, on_window=on_window, on_error=on_error, latency_from_timestamp=create_time,
                flush_instead_of_close=args.print_metrics, advance=advance,
                client_id=str(props.get("client.id")), start_time_ms=start_time_ms)
        finished = True
    finally:
        if not finished:
            producer.close(0)
    for report in (result.total, result.steady):
        if report is not None:
            if out.json:
                out.emit(report)
            else:
                out.line(report.text())
    if args.print_metrics:
        if out.json:
            out.emit({"type": "metrics", "metrics": {k: None if isinstance(v, float) and v != v else v  # NaN: null
                                                     for k, v in result.metrics.items()}})
        else:
            out.lines(ppt.format_metrics(result.metrics))
        producer.close()
    return 1 if result.errors else 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
