"""`kafkapy preferred-replica-election` (kafka-preferred-replica-election.sh, Kafka 2.x's deprecated
PreferredReplicaLeaderElectionCommand), delegating to leader-election's logic.

Prints Kafka's deprecation line first (stdout; stderr with --output json), then the election lines of
tools/preferred_replica_election.py. Flags: exactly one of --bootstrap-server | --zookeeper (Kafka 2.x's path:
writes /admin/preferred_replica_election and prints `Created preferred replica election path with t-0,t-1`
and `Successfully started preferred replica election for partitions Set(t-0, t-1)`),
--path-to-json-file (default: all partitions), --admin.config (or --command-config, as every tool; only with
--bootstrap-server).
Failures: `N preferred replica(s) could not be elected` on stderr, exit 1; usage errors exit 2.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

DESCRIPTION = ("This tool helps to causes leadership for each partition to be transferred back to the 'preferred "
               "replica', it can be used to balance leadership among the servers.")


def build_parser() -> ToolParser:
    p = ToolParser("preferred-replica-election", DESCRIPTION)
    p.add_argument("--path-to-json-file", metavar="<list of partitions for which preferred replica leader election "
                   "needs to be triggered>",
                   help='The JSON file with the list of partitions for which preferred replica leader election should '
                   'be done, in the following format - {"partitions": [{"topic": "foo", "partition": 1}, {"topic": '
                   '"foobar", "partition": 2}]}. Defaults to all existing partitions')
    p.add_argument("--zookeeper", metavar="<urls>",
                   help="DEPRECATED. The connection string for the zookeeper connection in the form host:port. "
                   "Replaced by --bootstrap-server, REQUIRED unless --bootstrap-server is given.")
    p.add_bootstrap_server(required=False, aliases=(), help="A hostname and port for the broker to connect to, in the "
                           "form host:port. Multiple comma-separated URLs can be given. REQUIRED unless --zookeeper "
                           "is given.")
    p.add_argument("--admin.config", "--command-config", dest="admin_config", metavar="<config file>",
                   help="Admin client config properties file to pass to the admin client when --bootstrap-server is "
                   "given.")
    return p


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.leader_election import read_text_file, run_election
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import leader_election as le
    from kafkapy.tools import preferred_replica_election as pre
    from kafkapy.tools.tool_support import admin_client

    (out.error_line if out.json else out.line)(pre.DEPRECATION_LINE)
    if (args.bootstrap_server is None) == (args.zookeeper is None):
        raise UsageError("Exactly one of '[bootstrap-server]' or '[zookeeper]' must be provided")
    if args.admin_config is not None and args.bootstrap_server is None:
        raise UsageError("Option admin.config is unavailable unless bootstrap-server is present")
    partitions = None
    if args.path_to_json_file is not None:
        try:
            partitions = pre.parse_election_json(read_text_file(args.path_to_json_file))
        except le.LeaderElectionError as e:
            raise ToolError(str(e)) from e
    if args.zookeeper is not None:
        return elect_through_zookeeper(args.zookeeper, partitions, out)
    props = load_properties(args.admin_config) if args.admin_config else {}
    props["request.timeout.ms"] = str(pre.REQUEST_TIMEOUT_MS)
    props["default.api.timeout.ms"] = str(pre.DEFAULT_API_TIMEOUT_MS)
    try:
        return run_election(lambda: admin_client(args.bootstrap_server, props), "PREFERRED", partitions, out,
                            succeeded_line=pre.succeeded_line, noop_line=pre.noop_line,
                            failed_line=pre.failed_line, failure_message=pre.failure_message)
    except ToolError as e:
        raise ToolError(e.message) from e  # Kafka 2.x let these escape main(): keep kafkapy's "Error:" line
    except ToolFailure as e:
        raise ToolError(str(e)) from e


def elect_through_zookeeper(connect: str, partitions: Any, out: Any) -> int:
    """Kafka 2.x's ZooKeeper path: write /admin/preferred_replica_election for the controller to act on."""
    from kafkapy.tools import ToolFailure
    from kafkapy.tools.zk_admin import ZkAdmin

    admin = ZkAdmin(connect)
    try:
        if partitions is None:
            partitions = admin.all_partitions()
        admin.create_preferred_replica_election(partitions)
    except ToolFailure as e:
        raise ToolError(str(e)) from e
    finally:
        admin.close()
    names = [str(tp) for tp in partitions]
    out.line("Created preferred replica election path with " + ",".join(names))
    out.line("Successfully started preferred replica election for partitions Set(" + ", ".join(names) + ")")
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
