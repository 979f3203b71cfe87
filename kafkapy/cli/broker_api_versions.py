"""`kafkapy broker-api-versions` (kafka-broker-api-versions.sh, BrokerApiVersionsCommand).

Text per broker, as Kafka prints it:
`127.0.0.1:9092 (id: 0 rack: null) -> (` then one `\\tProduce(0): 0 to 12 [usable: 12],` line per API
(the last without the comma) and `)`; a broker that fails prints `<node> -> ERROR: <msg>`.
--output json: a list of {"id", "host", "port", "rack", "apis": [{"apiKey", "name", "minVersion",
"maxVersion", "usable"}], "error"}.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolParser, run


def build_parser() -> ToolParser:
    p = ToolParser("broker-api-versions", "This tool helps to retrieve broker version information.")
    p.add_bootstrap_server(aliases=(), help="REQUIRED: The server to connect to.")
    p.add_command_config(help="A property file containing configs to be passed to Admin Client.")
    return p


def broker_text(b: Any) -> str:
    if b.error is not None:
        return f"{b.node_text} -> ERROR: {b.error}"
    return b.node_text + " -> (\n\t" + ",\n\t".join(a.text() for a in b.apis) + "\n)"


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import broker_api_versions as bav
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    admin = admin_client(args.bootstrap_server, props)
    try:
        brokers = bav.list_broker_versions(admin)
    finally:
        admin.close()
    if out.json:
        out.document([{
            "id": b.node_id, "host": b.host, "port": b.port, "rack": b.rack, "error": b.error,
            "apis": [{"apiKey": a.api_key, "name": a.name, "minVersion": a.min_version, "maxVersion": a.max_version,
                      "usable": a.usable, "unusable": a.unusable} for a in b.apis],
        } for b in brokers])
    else:
        for b in brokers:
            out.write(broker_text(b) + "\n")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
