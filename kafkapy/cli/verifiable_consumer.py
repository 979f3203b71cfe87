"""`kafkapy verifiable-consumer` (kafka-verifiable-consumer.sh, VerifiableConsumer): consume a topic in a
group and print one JSON event per line (see kafkapy/tools/verifiable_consumer.py for the events).

Flags are VerifiableConsumer's (argparse4j): --bootstrap-server | --broker-list, --topic, --group-id
(required), --group-instance-id, --group-protocol (classic; `consumer` (KIP-848) is refused: kafkapy's
consumer speaks the classic protocol only), --group-remote-assignor (accepted; only used by `consumer`),
--max-messages (-1 = until stopped), --session-timeout (30000), --verbose (record_data events; in kafkapy
it also turns on tracebacks for errors), --enable-autocommit, --reset-policy earliest|latest|none,
--assignment-strategy (org.apache.kafka.clients.consumer.RangeAssignor), --consumer.config (4.2:
--command-config; flags win over the file, as in Kafka).
SIGTERM / SIGINT end the loop; the consumer is closed (partitions_revoked) and shutdown_complete printed.
A second signal exits at once. Each event line is flushed. --output json prints the same lines.
Exit code 0; 1 when the consume loop failed (the error goes to stderr, as Kafka logs it).
Thread-safety: main thread.
"""

from __future__ import annotations

import argparse
import threading
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

DESCRIPTION = ("This tool consumes messages from a specific topic and emits consumer events (e.g. group rebalances, "
               "received messages, and offsets committed) as JSON objects to STDOUT.")


def build_parser() -> ToolParser:
    p = ToolParser("verifiable-consumer", DESCRIPTION)
    conn = p.add_mutually_exclusive_group()
    conn.add_argument("--bootstrap-server", dest="bootstrap_server", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
                      help="REQUIRED unless --broker-list(deprecated) is specified. The server(s) to connect to.")
    conn.add_argument("--broker-list", dest="broker_list", metavar="HOST1:PORT1[,HOST2:PORT2[...]]",
                      help="DEPRECATED, use --bootstrap-server instead; ignored if --bootstrap-server is specified.")
    p.add_argument("--topic", required=True, metavar="TOPIC", help="Consumes messages from this topic.")
    p.add_argument("--group-protocol", dest="group_protocol", default="classic", metavar="GROUP_PROTOCOL",
                   help="Group protocol (must be one of CLASSIC, CONSUMER)")
    p.add_argument("--group-remote-assignor", dest="group_remote_assignor", metavar="GROUP_REMOTE_ASSIGNOR",
                   help="Group remote assignor; only used if the group protocol is CONSUMER")
    p.add_argument("--group-id", dest="group_id", required=True, metavar="GROUP_ID",
                   help="The groupId shared among members of the consumer group")
    p.add_argument("--group-instance-id", dest="group_instance_id", metavar="GROUP_INSTANCE_ID",
                   help="A unique identifier of the consumer instance")
    p.add_argument("--max-messages", dest="max_messages", type=int, default=-1, metavar="MAX-MESSAGES",
                   help="Consume this many messages. If -1 (the default), the consumer will consume until the process "
                   "is killed externally")
    p.add_argument("--session-timeout", dest="session_timeout", type=int, default=30000, metavar="TIMEOUT_MS",
                   help="Set the consumer's session timeout")
    p.add_argument("--enable-autocommit", dest="use_auto_commit", action="store_true",
                   help="Enable offset auto-commit on consumer")
    p.add_argument("--reset-policy", dest="reset_policy", default="earliest",
                   help="Set reset policy (must be either 'earliest', 'latest', or 'none'")
    p.add_argument("--assignment-strategy", dest="assignment_strategy",
                   default="org.apache.kafka.clients.consumer.RangeAssignor",
                   help="Set assignment strategy (e.g. org.apache.kafka.clients.consumer.RoundRobinAssignor); only "
                   "used if the group protocol is CLASSIC")
    p.add_command_config(aliases=("--consumer.config",),
                         help="Consumer config properties file (config options shared with command line parameters "
                         "will be overridden).")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    bootstrap = args.bootstrap_server or args.broker_list
    if not bootstrap:
        raise UsageError("one of the arguments --bootstrap-server --broker-list is required")
    protocol = args.group_protocol.lower()
    if protocol not in ("classic", "consumer"):
        raise UsageError(f"Invalid value {args.group_protocol} for --group-protocol (must be one of CLASSIC, CONSUMER)")
    if protocol == "consumer":
        raise ToolError("kafkapy's consumer supports only the classic group protocol (--group-protocol classic)")
    if args.reset_policy not in ("earliest", "latest", "none"):
        raise UsageError(f"Invalid value {args.reset_policy} for --reset-policy (must be either 'earliest', 'latest', "
                         "or 'none')")
    from kafkapy.cli.properties import load_properties
    from kafkapy.cli.verifiable_producer import EventWriter, stop_on_signals
    from kafkapy.tools import verifiable_consumer as vc
    from kafkapy.tools.verifiable_producer import EventPrinter

    props: dict[str, Any] = load_properties(args.command_config) if args.command_config else {}
    props["partition.assignment.strategy"] = args.assignment_strategy
    props["group.id"] = args.group_id
    if args.group_instance_id is not None:
        props["group.instance.id"] = args.group_instance_id
    props["bootstrap.servers"] = bootstrap
    props["enable.auto.commit"] = "true" if args.use_auto_commit else "false"
    props["auto.offset.reset"] = args.reset_policy
    props["session.timeout.ms"] = str(args.session_timeout)
    for key in ("key.deserializer", "value.deserializer"):  # Kafka forces StringDeserializer: decoded below
        props.pop(key, None)

    from kafkapy.client.consumer import KafkaConsumer

    try:
        consumer = KafkaConsumer(props)
    except ValueError as e:
        raise ToolError(str(e)) from e

    stop = threading.Event()
    tool = vc.VerifiableConsumer(consumer, args.topic, EventPrinter(EventWriter(out, stop)),
                                 max_messages=args.max_messages, use_auto_commit=args.use_auto_commit,
                                 verbose=args.verbose, on_failure=out.error_line)
    with stop_on_signals(stop):
        tool.run(stop)
    return 1 if tool.failed else 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
