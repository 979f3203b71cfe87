"""`kafkapy cluster cluster-id|unregister` (kafka-cluster.sh, Kafka's ClusterTool).

Flags as ClusterTool's: `--bootstrap-server/-b` (or `--bootstrap-controller/-C`, used as the bootstrap),
`--config/-c <admin properties>`, unregister's `--id/-i`. Output: `Cluster ID: <id>`;
`Broker <id> is no longer registered.` or `The target cluster does not support the broker unregistration API.`
--output json: {"cluster_id": ...} / {"broker_id": .., "unregistered": bool}.
Thread-safety: one run per process, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("cluster", "The Kafka cluster tool.")
    p.add_argument("command", choices=["cluster-id", "unregister"], metavar="{cluster-id,unregister}",
                   help="cluster-id: Get information about the ID of a cluster. unregister: Unregister a broker.")
    conn = p.add_mutually_exclusive_group(required=True)
    conn.add_argument("--bootstrap-server", "-b", metavar="BOOTSTRAP_SERVER",
                      help="A list of host/port pairs to use for establishing the connection to the Kafka cluster.")
    conn.add_argument("--bootstrap-controller", "-C", metavar="BOOTSTRAP_CONTROLLER",
                      help="A list of host/port pairs to use for establishing the connection to the KRaft "
                      "controllers.")
    p.add_argument("--config", "-c", metavar="CONFIG",
                   help="A property file containing configurations for the Admin client.")
    p.add_argument("--id", "-i", type=int, metavar="ID", help="The ID of the broker to unregister.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import cluster_tool
    from kafkapy.tools.tool_support import admin_client

    if args.command == "unregister" and args.id is None:
        raise ToolError("argument --id/-i is required", prefixed=False)
    props = load_properties(args.config) if args.config else {}
    admin = admin_client(args.bootstrap_server or args.bootstrap_controller, props)
    try:
        if args.command == "cluster-id":
            cid = cluster_tool.cluster_id(admin)
            if out.json:
                out.document({"cluster_id": cid})
            elif cid is not None:
                out.line(f"Cluster ID: {cid}")
            else:
                out.line("No cluster ID found. The Kafka version is probably too old.")
            return 0
        done = cluster_tool.unregister(admin, args.id)
    finally:
        admin.close()
    if out.json:
        out.document({"broker_id": args.id, "unregistered": done})
    elif done:
        out.line(f"Broker {args.id} is no longer registered.")
    else:
        out.line("The target cluster does not support the broker unregistration API.")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
