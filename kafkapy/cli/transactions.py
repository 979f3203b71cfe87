"""`kafkapy transactions` (kafka-transactions.sh, Kafka's TransactionsCommand): list, describe,
describe-producers, abort and find-hanging.

Global flags come before the command, as Kafka's argparse4j tool takes them:
`kafkapy transactions --bootstrap-server h:9092 describe --transactional-id t`. Text output is Kafka's table
(columns padded to their widest cell, each followed by a tab); `--output json` prints a list of objects keyed
by Kafka's column names (abort prints nothing in text, `{"aborted": ...}` in json). Failures print Kafka's
message bare on stderr and exit 1.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run

COMMANDS = ("list", "describe", "describe-producers", "abort", "find-hanging")


def build_parser() -> ToolParser:
    p = ToolParser("transactions", "This tool is used to analyze the transactional state of producers in the "
                   "cluster. It can be used to detect and recover from hanging transactions.")
    p.add_bootstrap_server(aliases=(), help="hostname and port for the broker to connect to, in the form "
                           "`host:port`  (multiple comma-separated entries can be given)")
    p.add_command_config(help="property file containing configs to be passed to admin client")
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND", required=True,
                           parser_class=argparse.ArgumentParser)
    sub.add_parser("list", help="list transactions")
    d = sub.add_parser("describe", help="describe the state of an active transactional-id",
                       description="Describe the state of an active transactional-id.")
    d.add_argument("--transactional-id", required=True, help="transactional id")
    dp = sub.add_parser("describe-producers", help="describe the states of active producers for a topic partition")
    dp.add_argument("--broker-id", type=int, help="optional broker id to describe the producer state on a specific "
                    "replica")
    dp.add_argument("--topic", required=True, help="topic name")
    dp.add_argument("--partition", type=int, required=True, help="partition number")
    a = sub.add_parser("abort", help="abort a hanging transaction (requires administrative privileges)")
    a.add_argument("--topic", required=True, help="topic name")
    a.add_argument("--partition", type=int, required=True, help="partition number")
    new = a.add_argument_group("Brokers on versions 3.0 and above",
                               "For newer brokers, only the start offset of the transaction to be aborted is required")
    new.add_argument("--start-offset", type=int, help="start offset of the transaction to abort")
    old = a.add_argument_group("Brokers on versions older than 3.0",
                               "For older brokers, you must provide all of these arguments")
    old.add_argument("--producer-id", type=int, help="producer id")
    old.add_argument("--producer-epoch", type=int, help="producer epoch")
    old.add_argument("--coordinator-epoch", type=int, help="coordinator epoch")
    fh = sub.add_parser("find-hanging", help="find hanging transactions")
    fh.add_argument("--broker-id", type=int, help="broker id to search for hanging transactions")
    fh.add_argument("--max-transaction-timeout", type=int, default=15,
                    help="maximum transaction timeout in minutes to limit the scope of the search")
    fh.add_argument("--topic", help="topic name to limit search to")
    fh.add_argument("--partition", type=int, help="partition number")
    for parser in sub.choices.values():  # --output also after the command, without overriding the global one
        parser.add_argument("--output", choices=("text", "json"), default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    import time

    from kafkapy.cli.properties import load_properties
    from kafkapy.common.topic_partition import TopicPartition
    from kafkapy.tools import transactions as tx
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    admin = admin_client(args.bootstrap_server, props)
    now = int(time.time() * 1000)
    try:
        try:
            if args.command == "list":
                table = tx.list_transactions(admin)
            elif args.command == "describe":
                table = tx.describe_transaction(admin, args.transactional_id, now)
            elif args.command == "describe-producers":
                table = tx.describe_producers(admin, TopicPartition(args.topic, args.partition), args.broker_id)
            elif args.command == "abort":
                spec = tx.abort_transaction(admin, TopicPartition(args.topic, args.partition), args.start_offset,
                                            args.producer_id, args.producer_epoch, args.coordinator_epoch)
                if out.json:
                    out.document({"aborted": spec})
                return 0
            else:
                table = tx.find_hanging(admin, args.broker_id, args.topic, args.partition,
                                        args.max_transaction_timeout, now)
        except tx.TransactionsError as e:
            raise ToolError(str(e), prefixed=False) from e
    finally:
        admin.close()
    if out.json:
        out.document(table)
    else:
        out.lines(tx.pretty_table(table.headers, table.rows))
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
