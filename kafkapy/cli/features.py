"""`kafkapy features` (kafka-features.sh, Kafka 3.9's FeatureCommand): describe, upgrade, downgrade, disable.

`--bootstrap-server` (or `--bootstrap-controller`, which a ZooKeeper-era cluster does not have) and
`--command-config` come before the command, as Kafka's argparse4j parser wants. Text output is Kafka's lines; a
failure prints its message alone on stderr with exit 1 (FeatureCommand prints e.getMessage()). --output json:
describe -> a list of {"feature", "supportedMinVersion", ...}; updates -> {"results": [...], "failed": n}.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run


def build_parser() -> ToolParser:
    p = ToolParser("features", "This tool manages feature flags in Kafka.")
    p.add_argument("--bootstrap-server", help="A comma-separated list of host:port pairs to use for establishing the "
                   "connection to the Kafka cluster.")
    p.add_argument("--bootstrap-controller", help="A comma-separated list of host:port pairs to use for establishing "
                   "the connection to the KRaft quorum.")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND", required=True,
                           parser_class=argparse.ArgumentParser)
    sub.add_parser("describe", help="Describes the current active feature flags.")
    up = sub.add_parser("upgrade", help="Upgrade one or more feature flags.")
    up.add_argument("--metadata", help="The level to which we should upgrade the metadata. For example, 3.3-IV3.")
    up.add_argument("--feature", action="append", default=[], help="A feature upgrade we should perform, in "
                    "feature=level format. For example: `metadata.version=5`.")
    up.add_argument("--dry-run", action="store_true", help="Validate this upgrade, but do not perform it.")
    down = sub.add_parser("downgrade", help="Upgrade one or more feature flags.")
    down.add_argument("--metadata", help="The level to which we should downgrade the metadata. For example, 3.3-IV0.")
    down.add_argument("--feature", action="append", default=[], help="A feature downgrade we should perform, in "
                      "feature=level format. For example: `metadata.version=5`.")
    down.add_argument("--unsafe", action="store_true", help="Perform this downgrade even if it may irreversibly "
                      "destroy metadata.")
    down.add_argument("--dry-run", action="store_true", help="Validate this downgrade, but do not perform it.")
    dis = sub.add_parser("disable", help="Disable one or more feature flags. This is the same as downgrading the "
                         "version to zero.")
    dis.add_argument("--feature", action="append", default=[], help="A feature flag to disable.")
    dis.add_argument("--unsafe", action="store_true", help="Disable this feature flag even if it may irreversibly "
                     "destroy metadata.")
    dis.add_argument("--dry-run", action="store_true", help="Perform a dry-run of this disable operation.")
    for parser in sub.choices.values():  # --output also after the command, without overriding the global one
        parser.add_argument("--output", choices=("text", "json"), default=argparse.SUPPRESS, help=argparse.SUPPRESS)
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    if bool(args.bootstrap_server) == bool(args.bootstrap_controller):
        raise UsageError("one of the arguments --bootstrap-server --bootstrap-controller is required"
                         if not args.bootstrap_server else
                         "argument --bootstrap-controller: not allowed with argument --bootstrap-server")
    from kafkapy.cli.properties import load_properties
    from kafkapy.client.admin_features import SAFE_DOWNGRADE, UNSAFE_DOWNGRADE, UPGRADE
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import features as ft
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    admin = admin_client(args.bootstrap_server or args.bootstrap_controller, props)
    try:
        if args.command == "describe":
            lines = ft.describe(admin.describe_features())
            if out.json:
                out.document(lines)
            else:
                out.lines(line.text() for line in lines)
            return 0
        if args.command == "upgrade":
            kind = UPGRADE
        else:
            kind = UNSAFE_DOWNGRADE if args.unsafe else SAFE_DOWNGRADE
        try:
            updates = ft.plan_updates(args.command, getattr(args, "metadata", None), args.feature, kind)
            results = ft.update(admin, args.command, updates, kind, args.dry_run)
        except ToolFailure as e:
            raise ToolError(str(e), prefixed=False) from e
    finally:
        admin.close()
    failed = sum(1 for r in results if r.error is not None)
    if out.json:
        out.document({"results": results, "failed": failed})
    else:
        out.lines(r.line for r in results)
    if failed:
        raise ToolError(f"{failed} out of {len(results)} operation(s) failed.", prefixed=False)
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
