"""`kafkapy verifiable-producer` (kafka-verifiable-producer.sh, VerifiableProducer): produce increasing
integers and print one JSON event per line (see kafkapy/tools/verifiable_producer.py for the events).

Flags are VerifiableProducer's (argparse4j): --topic (required), --bootstrap-server | --broker-list (older
releases), --max-messages (-1 = until stopped), --throughput (-1 = unthrottled), --acks 0|1|-1 (-1),
--producer.config | --command-config (mutually exclusive; their properties override acks/retries, as in
Kafka; --producer.config prints Kafka's deprecation line first), --message-create-time, --value-prefix,
--repeating-keys. The producer runs with retries=0.
SIGTERM / SIGINT stop sending; the producer is then flushed and closed and shutdown_complete + tool_data
are printed (Kafka's shutdown hook). A second signal exits at once. Each event line is flushed; a closed
stdout pipe stops sending as a signal does (exit 0).
--output json prints the same lines (they are JSON already).
Exit code: 0 (1 if a send failed). Thread-safety: main thread; events come from the Sender thread too.
"""

from __future__ import annotations

import argparse
import contextlib
import signal
import threading
from collections.abc import Iterator
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

DESCRIPTION = ("This tool produces increasing integers to the specified topic and prints JSON metadata to stdout on "
               "each \"send\" request, making externally visible which messages have been acked and which have not.")


@contextlib.contextmanager
def stop_on_signals(stop: threading.Event) -> Iterator[None]:
    """SIGTERM/SIGINT set `stop` (a second one raises KeyboardInterrupt); handlers restored on exit.
    Only the main thread may install handlers: elsewhere this is a no-op."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return

    def handler(signum: int, frame: Any) -> None:
        if stop.is_set():
            raise KeyboardInterrupt
        stop.set()

    previous = {sig: signal.signal(sig, handler) for sig in (signal.SIGTERM, signal.SIGINT)}
    try:
        yield
    finally:
        for sig, old in previous.items():
            signal.signal(sig, old)


class EventWriter:
    """Writes one flushed event line per call, from any thread. When stdout's reader goes away
    (`| head`), it sets `stop`, points stdout at /dev/null and drops later events, so the tool winds
    down and exits 0 as Kafka's tools do on a closed pipe."""

    def __init__(self, out: Any, stop: threading.Event) -> None:
        self.out = out
        self.stop = stop
        self.pipe_closed = False

    def __call__(self, line: str) -> None:
        if self.pipe_closed:
            return
        try:
            self.out.line(line)
            self.out.flush()
        except BrokenPipeError:
            from kafkapy.cli.render import silence_stdout

            self.pipe_closed = True
            self.stop.set()
            silence_stdout()


def build_parser() -> ToolParser:
    p = ToolParser("verifiable-producer", DESCRIPTION)
    p.add_argument("--topic", required=True, metavar="TOPIC", help="Produce messages to this topic.")
    conn = p.add_mutually_exclusive_group()
    conn.add_argument("--bootstrap-server", dest="bootstrap_server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
                      help="REQUIRED: The server(s) to connect to. Comma-separated list of Kafka brokers in the form "
                      "HOST1:PORT1,HOST2:PORT2,...")
    conn.add_argument("--broker-list", dest="broker_list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
                      help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
    p.add_argument("--max-messages", dest="max_messages", type=int, default=-1, metavar="MAX-MESSAGES",
                   help="Produce this many messages. If -1, produce messages until the process is killed externally.")
    p.add_argument("--throughput", type=int, default=-1, metavar="THROUGHPUT",
                   help="If set >= 0, throttle maximum message throughput to *approximately* THROUGHPUT messages/sec.")
    p.add_argument("--acks", type=int, default=-1, choices=(0, 1, -1), metavar="ACKS",
                   help="Acks required on each produced message. See Kafka docs on acks for details.")
    p.add_argument("--producer.config", dest="producer_config", metavar="CONFIG-FILE",
                   help="(DEPRECATED) Producer config properties file. This option will be removed in a future "
                   "version. Use --command-config instead.")
    p.add_argument("--message-create-time", dest="create_time", type=int, default=-1, metavar="CREATE-TIME",
                   help="Send messages with creation time starting at the arguments value, in milliseconds since epoch")
    p.add_argument("--value-prefix", dest="value_prefix", type=int, metavar="VALUE-PREFIX",
                   help="If specified, each produced value will have this prefix with a dot separator")
    p.add_argument("--repeating-keys", dest="repeating_keys", type=int, metavar="REPEATING-KEYS",
                   help="If specified, each produced record will have a key starting at 0 increment by 1 up to the "
                   "number specified (exclusive), then the key is set to 0 again")
    p.add_argument("--command-config", dest="command_config", metavar="CONFIG-FILE",
                   help="Config properties file (config options shared with command line parameters will be "
                   "overridden).")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    bootstrap = args.bootstrap_server or args.broker_list
    if not bootstrap:
        raise UsageError("one of the arguments --bootstrap-server --broker-list is required")
    if args.producer_config is not None and args.command_config is not None:
        raise UsageError("Options --producer.config and --command-config are mutually exclusive.")
    if args.repeating_keys is not None and args.repeating_keys <= 0:
        raise UsageError("--repeating-keys must be greater than zero")
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import verifiable_producer as vp

    props: dict[str, Any] = {"bootstrap.servers": bootstrap, "acks": str(args.acks), "retries": "0"}
    if args.producer_config is not None:
        out.line("Option --producer.config has been deprecated and will be removed in a future version. Use "
                 "--command-config instead.")
        props.update(load_properties(args.producer_config))
    if args.command_config is not None:
        props.update(load_properties(args.command_config))
    for key in ("key.serializer", "value.serializer"):  # Kafka forces StringSerializer; we send UTF-8 bytes
        props.pop(key, None)

    from kafkapy.client.producer import KafkaProducer

    try:
        producer = KafkaProducer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e

    stop = threading.Event()
    printer = vp.EventPrinter(EventWriter(out, stop))
    opts = vp.VerifiableProducerOptions(args.topic, args.max_messages, args.throughput, args.value_prefix,
                                        None if args.create_time == -1 else args.create_time, args.repeating_keys)
    tool = vp.VerifiableProducer(producer, opts, printer)
    start_ms = tool.clock()
    closed = False
    try:
        with stop_on_signals(stop):
            tool.run(stop, start_ms)
            summary = tool.close(start_ms)
            closed = True
    finally:
        if not closed:
            producer.close(0)
    return 1 if summary.errors else 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
