"""`kafkapy console-consumer` (kafka-console-consumer.sh, ConsoleConsumer): records -> stdout.

Flags are ConsoleConsumerOptions' (old and KIP-1147 spellings: --property/--formatter-property,
--consumer-property/--command-property, --consumer.config/--command-config, --include/--whitelist).
Records are written as raw bytes in DefaultMessageFormatter's layout (see
kafkapy.tools.console_consumer); at exit `Processed a total of N messages` goes to stderr, also after
Ctrl-C (exit 130) and when stdout closes (`Unable to write to standard out, closing consumer.`).
Without --group, kafkapy assigns the topic's partitions itself (no group traffic); --group, a group.id
property and --include subscribe through the client's group membership.
--output json: one object per record ({"topic", "partition", "offset", "timestamp", "timestampType",
"key", "value", "headers"}; bytes as UTF-8 text).
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, run


def build_parser() -> ToolParser:
    p = ToolParser("console-consumer", "This tool helps to read data from Kafka topics and outputs it to standard "
                   "output.")
    p.add_bootstrap_server(required=False, help="REQUIRED: The server(s) to connect to.")
    p.add_argument("--topic", metavar="<topic>", help="The topic to consume from.")
    p.add_argument("--include", "--whitelist", dest="include", metavar="<Java regex (String)>",
                   help="Regular expression specifying list of topics to include for consumption.")
    p.add_argument("--partition", type=int, metavar="<partition>",
                   help="The partition to consume from. Consumption starts from the end of the partition unless "
                   "'--offset' is specified.")
    p.add_argument("--offset", metavar="<consume offset>",
                   help="The offset to consume from (a non-negative number), or 'earliest' which means from "
                   "beginning, or 'latest' which means from end (default: latest)")
    p.add_argument("--from-beginning", action="store_true",
                   help="If the consumer does not already have an established offset to consume from, start with "
                   "the earliest message present in the log rather than the latest message.")
    p.add_argument("--group", metavar="<consumer group id>", help="The consumer group id of the consumer.")
    p.add_argument("--max-messages", type=int, metavar="<num_messages>",
                   help="The maximum number of messages to consume before exiting. If not set, consumption is "
                   "continual.")
    p.add_argument("--timeout-ms", type=int, metavar="<timeout_ms>",
                   help="If specified, exit if no message is available for consumption for the specified interval.")
    p.add_argument("--skip-message-on-error", action="store_true",
                   help="If there is an error when processing a message, skip it instead of halt.")
    p.add_argument("--formatter", default="org.apache.kafka.tools.consumer.DefaultMessageFormatter",
                   metavar="<class>", help="The name of a class to use for formatting kafka messages for display.")
    p.add_property_list("--property", "--formatter-property", dest="property",
                        help="Formatter properties: print.timestamp, print.key, print.offset, print.epoch, print.partition, "
                        "print.headers, print.value, key.separator, line.separator, headers.separator, null.literal, "
                        "key.deserializer, value.deserializer, headers.deserializer.")
    p.add_argument("--formatter-config", metavar="<config file>",
                   help="Config properties file to initialize the message formatter.")
    p.add_argument("--key-deserializer", metavar="<deserializer for keys>",
                   help="The name of the class to use for deserializing keys.")
    p.add_argument("--value-deserializer", metavar="<deserializer for values>",
                   help="The name of the class to use for deserializing values.")
    p.add_argument("--isolation-level", choices=("read_committed", "read_uncommitted"), metavar="<String>",
                   help="Set to read_committed in order to filter out transactional messages which are not "
                   "committed. Set to read_uncommitted to read all messages.")
    p.add_argument("--enable-systest-events", action="store_true",
                   help="Log lifecycle events of the consumer in addition to logging consumed messages.")
    p.add_property_list("--consumer-property", "--command-property", dest="consumer_property",
                        help="Consumer config properties in the form key=value.")
    p.add_command_config(aliases=("--consumer.config",), help="Consumer config properties file.")
    return p


def parse_offset(text: str | None, from_beginning: bool) -> int | None:
    from kafkapy.tools.console_consumer import EARLIEST, LATEST

    if text is None:
        return EARLIEST if from_beginning else None
    low = text.lower()
    if low == "earliest":
        return EARLIEST
    if low == "latest":
        return LATEST
    try:
        value = int(text)
    except ValueError:
        value = -1
    if value < 0:
        raise UsageError(f"The provided offset value '{text}' is incorrect. Valid values are 'earliest', 'latest', or "
                         "a non-negative long.")
    return value


def check_args(args: argparse.Namespace) -> None:
    if (args.topic is None) == (args.include is None):
        raise UsageError("Exactly one of the following arguments is required: [topic], [include]")
    if args.partition is not None:
        if args.topic is None:
            raise UsageError("The topic is required when partition is specified.")
        if args.from_beginning and args.offset is not None:
            raise UsageError("Options from-beginning and offset cannot be specified together.")
    elif args.offset is not None:
        raise UsageError("The partition is required when offset is specified.")
    if not args.bootstrap_server:
        raise missing_argument("bootstrap-server")


def _record_json(r: Any) -> dict[str, Any]:
    def text(b: bytes | None) -> str | None:
        return None if b is None else bytes(b).decode("utf-8", errors="replace")

    return {
        "topic": r.topic, "partition": r.partition, "offset": r.offset, "timestamp": r.timestamp,
        "timestampType": {0: "CreateTime", 1: "LogAppendTime"}.get(r.timestamp_type, "NO_TIMESTAMP"),
        "key": text(r.key), "value": text(r.value),
        "headers": [{"key": k, "value": text(v)} for k, v in r.headers],
    }


class _Sink:
    """Writes formatted records to stdout as bytes (flushing per poll batch), or JSON lines."""

    def __init__(self, out: Any, formatter: Any, skip_on_error: bool) -> None:
        self.out = out
        self.formatter = formatter
        self.skip_on_error = skip_on_error
        stream = out.stream
        self.binary = getattr(stream, "buffer", None)
        self.stream = stream

    def __call__(self, record: Any) -> None:
        if self.out.json:
            self.out.emit(_record_json(record))
            return
        try:
            data = self.formatter.format(record)
        except Exception as e:  # noqa: BLE001 - Kafka's --skip-message-on-error covers any formatter failure
            if not self.skip_on_error:
                raise
            self.out.error_line(f"ERROR Error processing message, skipping this message: {e}")
            return
        if self.binary is not None:
            self.binary.write(data)
        else:
            self.stream.write(data.decode("utf-8", errors="replace"))

    def flush(self) -> None:
        if self.binary is not None:
            self.binary.flush()
        self.stream.flush()


def execute(args: argparse.Namespace, out: Any) -> int:
    check_args(args)
    offset = parse_offset(args.offset, args.from_beginning) if args.partition is not None else None
    from kafkapy.cli.properties import load_properties, parse_key_values
    from kafkapy.tools import console_consumer as cc

    file_props = load_properties(args.command_config) if args.command_config else {}
    cli_props = parse_key_values(args.consumer_property, "--consumer-property")
    groups = {g for g in (args.group, file_props.get("group.id"), cli_props.get("group.id")) if g is not None}
    if len(groups) > 1:
        detected = ", ".join(f"'{g}'" for g in (args.group, file_props.get("group.id"), cli_props.get("group.id"))
                             if g is not None)
        raise UsageError("The group ids provided in different places (directly using '--group', via "
                         "'--consumer-property', or via '--consumer.config') do not match. Detected group ids: "
                         + detected)
    if groups and args.partition is not None:
        raise UsageError("Options group and partition cannot be specified together.")
    formatter_props = load_properties(args.formatter_config) if args.formatter_config else {}
    if args.key_deserializer:
        formatter_props["key.deserializer"] = args.key_deserializer
    if args.value_deserializer:
        formatter_props["value.deserializer"] = args.value_deserializer
    formatter_props.update(parse_key_values(args.property, "--property"))
    from kafkapy.tools.coordinator_formatters import deprecation_warning

    warning = deprecation_warning(args.formatter)
    if warning is not None:
        out.err.write(warning + "\n")
    try:
        formatter = cc.build_formatter(args.formatter, formatter_props)
        props, has_group = cc.consumer_props(file_props, cli_props, args.bootstrap_server, args.from_beginning,
                                             args.isolation_level, args.group)
    except cc.FormatterError as e:
        raise UsageError(str(e)) from e
    except cc.OffsetResetConflict as e:
        raise ToolError(str(e), prefixed=False) from e

    from kafkapy.client.consumer import KafkaConsumer

    try:
        consumer = KafkaConsumer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e
    from kafkapy.tools.connection_warnings import ConnectionWarner, consumer_log_prefix

    ConnectionWarner(consumer_log_prefix(props)).attach(consumer.client)
    if args.timeout_ms is None or args.timeout_ms < 0:
        consumer.client.bootstrap_fail_fast = False  # wait for a broker to come up, as Kafka's consumer does
    warn_handler = warnings_to_stderr(out.err)
    opts = cc.ConsumeOptions(
        topic=args.topic, partition=args.partition, offset=offset, include=args.include, use_group=has_group,
        max_messages=-1 if args.max_messages is None else args.max_messages,
        timeout_ms=None if args.timeout_ms is None or args.timeout_ms < 0 else args.timeout_ms)
    sink = _Sink(out, formatter, args.skip_message_on_error)
    count = [0]

    def counted(record: Any) -> None:
        count[0] += 1  # Kafka counts a message before formatting it
        sink(record)

    try:
        cc.consume(consumer, opts, counted, batch_done=sink.flush)
    except BrokenPipeError:
        out.err.write("Unable to write to standard out, closing consumer.\n")
        raise
    finally:
        consumer.close()
        warn_handler.close()
        try:
            sink.flush()
        except (BrokenPipeError, ValueError, OSError):
            pass
        out.err.write(f"Processed a total of {count[0]} messages\n")
        out.err.flush()
        if args.enable_systest_events and not out.json:
            try:
                out.line("shutdown_complete")
            except (BrokenPipeError, ValueError, OSError):
                pass
    return 0


class _ClientWarnings:
    """Routes the client's NetworkClient WARN lines to stderr in Kafka's tools-log4j layout during a run."""

    def __init__(self, stream: Any) -> None:
        import logging

        from kafkapy.cli.server import KafkaLogFormatter
        from kafkapy.tools.connection_warnings import LOGGER_NAME

        self.logger = logging.getLogger(LOGGER_NAME)
        self.handler = logging.StreamHandler(stream)
        self.handler.setFormatter(KafkaLogFormatter())
        self.logger.addHandler(self.handler)
        self.logger.setLevel(logging.WARNING)
        self.logger.propagate = False

    def close(self) -> None:
        self.logger.removeHandler(self.handler)


def warnings_to_stderr(stream: Any) -> _ClientWarnings:
    return _ClientWarnings(stream)


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
