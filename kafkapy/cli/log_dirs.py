"""`kafkapy log-dirs` (kafka-log-dirs.sh, LogDirsCommand): `--describe` prints
`Querying brokers for log directories information`, `Received log directory information from brokers
0,1` and Kafka's one-line JSON (see kafkapy.tools.log_dirs). --output json prints only the JSON
document (same structure); on a terminal a Rich table of the replicas replaces the JSON line.
Unknown --broker-list ids: the bare ERROR line on stderr, exit 1.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, missing_argument, run


def build_parser() -> ToolParser:
    p = ToolParser("log-dirs", "This tool helps to query log directory usage on the specified brokers.")
    p.add_bootstrap_server(aliases=(), help="REQUIRED: the server(s) to use for bootstrapping")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--describe", action="store_true",
                   help="Describe the specified log directories on the specified brokers.")
    p.add_argument("--topic-list", default="", metavar="<Topic list>",
                   help='The list of topics to be queried in the form "topic1,topic2,topic3". All topics will be '
                   "queried if no topic list is specified")
    p.add_argument("--broker-list", default="", metavar="<Broker list>",
                   help='The list of brokers to be queried in the form "0,1,2". All brokers in the cluster will be '
                   "queried if no broker list is specified")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    if not args.describe:
        raise missing_argument("describe")
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import log_dirs as ld
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    props.setdefault("client.id", "log-dirs-tool")
    admin = admin_client(args.bootstrap_server, props)
    try:
        try:
            result = ld.describe_log_dirs(admin, args.broker_list, args.topic_list)
        except ld.LogDirsError as e:
            raise ToolError(str(e), prefixed=False) from e
    finally:
        admin.close()
    if out.json:
        out.write(ld.to_json(result) + "\n")
        return 0
    out.line("Querying brokers for log directories information")
    out.line("Received log directory information from brokers " + ",".join(map(str, result.brokers_queried)))
    if out.rich:
        _table(result, out)
    else:
        out.line(ld.to_json(result))
    return 0


def _table(result: Any, out: Any) -> None:
    """On a terminal: one row per replica (a log dir without replicas gets one row; errors in red)."""
    from kafkapy.cli.render import Styled

    rows: list[list[Any]] = []
    for b in result.brokers:
        for d in b.log_dirs:
            error = Styled(d.error, "bold red") if d.error else ""
            if not d.partitions:
                rows.append([b.broker, d.log_dir, error, "", "", "", ""])
            for r in d.partitions:
                lag = Styled(r.offset_lag, "yellow") if r.offset_lag else r.offset_lag
                rows.append([b.broker, d.log_dir, error, f"{r.topic}-{r.partition}", r.size, lag,
                             "true" if r.is_future else "false"])
    out.table(["Broker", "Log dir", "Error", "Partition", "Size", "Offset lag", "Future"], rows)


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
