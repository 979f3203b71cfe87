"""`kafkapy mirror-maker` (kafka-mirror-maker.sh, kafka.tools.MirrorMaker, MirrorMaker 1): continuously copy
the topics matching --include from the cluster of --consumer.config to the cluster of --producer.config.

Flags are MirrorMaker's (joptsimple): --consumer.config and --producer.config (both required),
--include <Java regex> (--whitelist: its deprecated spelling, ignored if --include is given),
--num.streams (1), --offset.commit.interval.ms (60000), --abort.on.send.failure (true),
--new.consumer (deprecated no-op), --help. --consumer.rebalance.listener, --rebalance.listener.args,
--message.handler and --message.handler.args name Java classes and are refused.
The consumer group is the consumer config's group.id. SIGTERM / SIGINT stop it cleanly: every stream
flushes the producer and commits its offsets, then the producer closes; exit 0. A stream that fails
(or a send that fails with --abort.on.send.failure true) stops the mirror maker with exit 1.
Logging: warnings and errors on stderr, as kafka-run-class.sh's tools-log4j.properties (--verbose: INFO).
--output json: after a clean stop, {"mirroredMessages": N, "droppedMessages": M} on stdout.
Thread-safety: the main thread waits and handles signals; the streams run in their own threads.
"""

from __future__ import annotations

import argparse
import logging
import sys
import threading
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, run

DESCRIPTION = "This tool helps to continuously copy data between two Kafka clusters."
JAVA_CLASS_FLAGS = ("consumer_rebalance_listener", "rebalance_listener_args", "message_handler",
                    "message_handler_args")  # fmt: skip


def build_parser() -> ToolParser:
    p = ToolParser("mirror-maker", DESCRIPTION)
    p.add_argument("--abort.on.send.failure", dest="abort_on_send_failure", default="true",
                   metavar="<String: Stop the entire mirror maker when a send failure occurs>",
                   help="Configure the mirror maker to exit on a failed send. (default: true)")
    p.add_argument("--consumer.config", dest="consumer_config", metavar="<String: config file>",
                   help="Embedded consumer config for consuming from the source cluster.")
    p.add_argument("--consumer.rebalance.listener", dest="consumer_rebalance_listener",
                   metavar="<String: A custom rebalance listener of type ConsumerRebalanceListener>",
                   help="The consumer rebalance listener to use for mirror maker consumer.")
    p.add_argument("--include", metavar="<String: Java regex (String)>", help="List of included topics to mirror.")
    p.add_argument("--message.handler", dest="message_handler",
                   metavar="<String: A custom message handler of type MirrorMakerMessageHandler>",
                   help="Message handler which will process every record in-between consumer and producer.")
    p.add_argument("--message.handler.args", dest="message_handler_args",
                   metavar="<String: Arguments passed to message handler constructor.>",
                   help="Arguments used by custom message handler for mirror maker.")
    p.add_argument("--new.consumer", dest="new_consumer", action="store_true",
                   help="DEPRECATED Use new consumer in mirror maker (this is the default so this option will be "
                   "removed in a future version).")
    p.add_argument("--num.streams", dest="num_streams", type=int, default=1,
                   metavar="<Integer: Number of threads>", help="Number of consumption streams. (default: 1)")
    p.add_argument("--offset.commit.interval.ms", dest="offset_commit_interval_ms", type=int, default=60000,
                   metavar="<Integer: offset commit interval in millisecond>",
                   help="Offset commit interval in ms. (default: 60000)")
    p.add_argument("--producer.config", dest="producer_config", metavar="<String: config file>",
                   help="Embedded producer config.")
    p.add_argument("--rebalance.listener.args", dest="rebalance_listener_args",
                   metavar="<String: Arguments passed to custom rebalance listener constructor as a string.>",
                   help="Arguments used by custom rebalance listener for mirror maker consumer.")
    p.add_argument("--whitelist", metavar="<String: Java regex (String)>",
                   help="DEPRECATED, use --include instead; ignored if --include specified. List of included topics "
                   "to mirror.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    for name in ("consumer_config", "producer_config"):
        if getattr(args, name) is None:
            raise missing_argument(name.replace("_", "."))
    given = [f"--{n.replace('_', '.')}" for n in JAVA_CLASS_FLAGS if getattr(args, n) is not None]
    if given:
        raise UsageError(f"{given[0]} names a Java class; kafkapy's mirror maker has no plug-in classes")
    if args.num_streams < 1:
        raise UsageError(f"--num.streams must be at least 1, got {args.num_streams}")
    from kafkapy.cli.properties import load_properties
    from kafkapy.cli.verifiable_producer import stop_on_signals
    from kafkapy.tools import mirror_maker as mm

    consumer_props = load_properties(args.consumer_config)
    include = args.include if args.include is not None else args.whitelist
    if include is None:
        raise ToolError("include list must be specified", prefixed=False)
    if "partition.assignment.strategy" not in consumer_props:
        sys.stderr.write(mm.ASSIGNMENT_STRATEGY_WARNING + "\n")
    if not consumer_props.get("group.id"):
        raise ToolError("group.id must be set in the --consumer.config file (the mirror maker's consumer group)")
    options = mm.MirrorMakerOptions(
        consumer_props=dict(consumer_props),
        producer_props=dict(load_properties(args.producer_config)),
        include=include,
        num_streams=args.num_streams,
        offset_commit_interval_ms=args.offset_commit_interval_ms,
        abort_on_send_failure=args.abort_on_send_failure.strip().lower() == "true",  # Java's toBoolean
    )
    handler = _log_to_stderr(logging.INFO if args.verbose else logging.WARNING)
    stop = threading.Event()
    try:
        mirror = mm.MirrorMaker(options)
        with stop_on_signals(stop):
            mirror.start()
            while not stop.is_set() and not mirror.stopped:
                stop.wait(0.2)
            mirror.shutdown()
    finally:
        logging.getLogger().removeHandler(handler)
    if mirror.failure is not None:
        raise ToolError(f"Mirror maker thread exited abnormally, stopping the whole mirror maker: {mirror.failure}",
                        prefixed=False)
    if out.json:  # text mode prints nothing on stdout (Kafka's logs go to stderr)
        out.document({"mirroredMessages": mirror.num_mirrored_messages,
                      "droppedMessages": mirror.num_dropped_messages})
    return 0


def _log_to_stderr(level: int) -> logging.Handler:
    """Kafka's tools-log4j.properties: `[date] LEVEL message (logger)` on stderr."""
    from kafkapy.cli.server import KafkaLogFormatter

    handler = logging.StreamHandler(sys.stderr)
    handler.setFormatter(KafkaLogFormatter())
    handler.setLevel(level)
    root = logging.getLogger()
    root.addHandler(handler)
    if root.level > level or root.level == logging.NOTSET:
        root.setLevel(level)
    return handler


def main(argv: list[str]) -> int:
    if not argv:  # joptsimple's printUsageAndDie: usage on stderr, exit 1
        build_parser().print_help(sys.stderr)
        return 1
    return run(build_parser(), argv, execute)
