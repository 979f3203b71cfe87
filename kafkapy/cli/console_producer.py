"""`kafkapy console-producer` (kafka-console-producer.sh, ConsoleProducer): stdin lines -> records.

Flags are ConsoleProducer's (old and KIP-1147 spellings: --broker-list/--bootstrap-server,
--producer-property/--command-property, --producer.config/--command-config, --property/
--reader-property); --linger-ms is accepted as an alias of --timeout. Nothing is written to stdout
except Kafka's `>` prompt when stdin and stdout are a terminal. Async send failures are reported on
stderr as Kafka's ErrorLoggingCallback line and make the exit code 1; a reader error (e.g. `No key
separator found on line number 3: '...'`) flushes what was sent, prints
`org.apache.kafka.common.KafkaException: <msg>` and exits 1. --output json: one object per record
({"topic", "partition", "offset", "timestamp"} or {"error"}) after the input ends.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
import sys
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run


def build_parser() -> ToolParser:
    p = ToolParser("console-producer", "This tool helps to read data from standard input and publish it to Kafka.")
    p.add_argument("--bootstrap-server", metavar="<server to connect to>",
                   help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.")
    p.add_argument("--broker-list", metavar="<broker-list>",
                   help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
    p.add_argument("--topic", required=True, metavar="<topic>", help="REQUIRED: The topic id to produce messages to.")
    p.add_argument("--sync", action="store_true",
                   help="If set message send requests to the brokers are synchronously, one at a time as they arrive.")
    p.add_argument("--compression-codec", nargs="?", const="gzip", metavar="<compression-codec>",
                   help="The compression codec: either 'none', 'gzip', 'snappy', 'lz4', or 'zstd'. If specified "
                   "without value, then it defaults to 'gzip'")
    p.add_argument("--batch-size", type=int, metavar="<size>",
                   help="Number of messages to send in a single batch if they are not being sent synchronously.")
    p.add_argument("--message-send-max-retries", type=int, metavar="<Integer>",
                   help="The number of retries before the producer gives up (`retries`; default 3).")
    p.add_argument("--retry-backoff-ms", type=int, metavar="<Long>", help="`retry.backoff.ms` (default 100).")
    p.add_argument("--timeout", "--linger-ms", dest="timeout", type=int, metavar="<timeout_ms>",
                   help="`linger.ms`: the maximum time a message waits for a batch in async mode (default 1000).")
    p.add_argument("--request-required-acks", metavar="<request required acks>",
                   help="The required `acks` of the producer requests (default -1)")
    p.add_argument("--request-timeout-ms", type=int, metavar="<request timeout ms>",
                   help="The ack timeout of the producer requests (default 1500).")
    p.add_argument("--metadata-expiry-ms", type=int, metavar="<metadata expiration interval>",
                   help="`metadata.max.age.ms` (default 300000).")
    p.add_argument("--max-block-ms", type=int, metavar="<max block on send>",
                   help="The max time that the producer will block for during a send request (default 60000).")
    p.add_argument("--max-memory-bytes", type=int, metavar="<total memory in bytes>",
                   help="`buffer.memory` (default 33554432).")
    p.add_argument("--max-partition-memory-bytes", type=int, metavar="<memory in bytes per partition>",
                   help="`batch.size` (default 16384).")
    p.add_argument("--line-reader", default="org.apache.kafka.tools.LineMessageReader", metavar="<reader_class>",
                   help="The class name of the class to use for reading lines from standard in.")
    p.add_argument("--socket-buffer-size", type=int, metavar="<size>", help="`send.buffer.bytes` (default 102400).")
    p.add_property_list("--property", "--reader-property", dest="property",
                        help="Properties for the line reader: parse.key, key.separator, parse.headers, "
                        "headers.delimiter, headers.separator, headers.key.separator, null.marker, ignore.error.")
    p.add_argument("--reader-config", metavar="<config file>", help="Config properties file for the message reader.")
    p.add_property_list("--producer-property", "--command-property", dest="producer_property",
                        help="Producer config properties in the form key=value.")
    p.add_command_config(aliases=("--producer.config",), help="Producer config properties file.")
    return p


def _flags(args: argparse.Namespace) -> dict[str, Any]:
    return {dest: getattr(args, dest) for dest in (
        "timeout", "request_required_acks", "request_timeout_ms", "message_send_max_retries", "retry_backoff_ms",
        "socket_buffer_size", "max_memory_bytes", "batch_size", "max_partition_memory_bytes", "metadata_expiry_ms",
        "max_block_ms")}


def _isatty(stream: Any) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


def execute(args: argparse.Namespace, out: Any) -> int:
    bootstrap = args.bootstrap_server or args.broker_list
    if not bootstrap:
        raise UsageError("Missing required option(s) [bootstrap-server]")
    # Kafka: absent -> none, given without a value (or empty) -> gzip; the producer validates the name.
    codec = "none" if args.compression_codec is None else (args.compression_codec or "gzip")
    from kafkapy.tools import console_producer as cp

    if args.line_reader not in cp.READER_CLASSES:
        raise ToolError(f"java.lang.ClassNotFoundException: {args.line_reader} (kafkapy has only LineMessageReader)",
                        prefixed=False)
    from kafkapy.cli.properties import load_properties, parse_key_values

    reader_props = load_properties(args.reader_config) if args.reader_config else {}
    reader_props["topic"] = args.topic
    reader_props.update(parse_key_values(args.property, "--property"))
    file_props = load_properties(args.command_config) if args.command_config else {}
    props = cp.producer_props(file_props, parse_key_values(args.producer_property, "--producer-property"),
                              bootstrap, codec.lower(), _flags(args))
    try:
        reader = cp.LineMessageReader(reader_props)
    except cp.LineReaderError as e:
        raise ToolError("org.apache.kafka.common.KafkaException: " + str(e), prefixed=False) from e

    from kafkapy.client.producer import KafkaProducer

    try:
        producer = KafkaProducer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e
    stdin = sys.stdin
    prompt = _isatty(stdin) and _isatty(out.stream) and not out.json

    def lines():
        if prompt:
            out.write(">")
            out.flush()
        for line in cp.read_lines(stdin):
            yield line
            if prompt:
                out.write(">")
                out.flush()

    summary = None
    try:
        summary = cp.produce_lines(producer, args.topic, reader.read_records(lines()), args.sync,
                                   on_error=out.error_line, keep_results=out.json)
    except cp.LineReaderError as e:
        raise ToolError("org.apache.kafka.common.KafkaException: " + str(e), prefixed=False) from e
    finally:
        producer.close()
    if out.json:
        for r in summary.results:
            if r.error is None:
                out.emit({"topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp})
            else:
                out.emit({"topic": r.topic, "error": r.error})
    return 1 if summary.failed else 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
