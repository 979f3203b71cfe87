"""`kafkapy <tool> [flags]`: the Typer application, its console-script entry point, and the tool table.

TOOLS below is the one registry: each row is a command of the Typer app (`kafkapy --help` shows the
tree with each row's summary, Rich-formatted; `kafkapy --install-completion` / `--show-completion`
set up shell completion of tools and their flags; a mistyped tool gets Click's "Did you mean").
Commands load lazily (kafkapy/cli/tool_group.py: the group lists the table and imports one module),
and an exactly named tool (`kafkapy topics --list`) runs without importing Typer: the app, built from this
table on first use (kafkapy/cli/app.py), would hand the tool the same raw argv.

Each tool parses its own flags with `kafkapy.cli.command.ToolParser` (argparse), which keeps Kafka's
joptsimple syntax unchanged: `--flag value` and `--flag=value`, repeated `--config k=v`, aliases such
as `--broker-list` for `--bootstrap-server`, unambiguous prefixes, `-daemon`; usage errors are one
line on stderr with exit 2, runtime errors one line with exit 1 (traceback only with --verbose).
The Typer command of a tool derives its completion params from that parser.

Adding a tool: add one row to TOOLS below, write `kafkapy/cli/<module>.py` with
`build_parser() -> ToolParser` and `main(argv: list[str]) -> int` (see kafkapy/cli/command.py), and
logic in `kafkapy/tools/<module>.py`; the Typer tree, help and completion pick it up with no more work.
A row whose module does not exist yet makes `kafkapy <tool>` print
"kafkapy: <tool> is not implemented yet" and exit 1.

Thread-safety: called once per process from the main thread.
"""

from __future__ import annotations

import os
import sys
from typing import Any

from kafkapy.cli.command import ERROR_EXIT, USAGE_EXIT

# What Click's shell completion sets when the shell asks the app for candidates.
COMPLETE_VAR = "_KAFKAPY_COMPLETE"

# tool name -> ("module[:function]", one-line summary). Function defaults to `main`.
TOOLS: dict[str, tuple[str, str]] = {
    "server-start": ("kafkapy.cli.server:start_main", "Start a Kafka broker (kafka-server-start.sh)"),
    "server-stop": ("kafkapy.cli.server:stop_main", "Stop running brokers (kafka-server-stop.sh)"),
    "topics": ("kafkapy.cli.topics", "Create, delete, describe, or change a topic"),
    "configs": ("kafkapy.cli.configs", "Describe or alter topic, client, user and broker configs"),
    "console-producer": ("kafkapy.cli.console_producer", "Read lines from stdin and produce them"),
    "console-consumer": ("kafkapy.cli.console_consumer", "Consume records and print them"),
    "consumer-groups": ("kafkapy.cli.consumer_groups", "List, describe, delete consumer groups; reset offsets"),
    "reassign-partitions": ("kafkapy.cli.reassign_partitions", "Move partitions between brokers"),
    "leader-election": ("kafkapy.cli.leader_election", "Run preferred or unclean leader election"),
    "preferred-replica-election": (
        "kafkapy.cli.preferred_replica_election",
        "Deprecated: preferred replica leader election",
    ),
    "producer-perf-test": ("kafkapy.cli.producer_perf_test", "Producer throughput and latency test"),
    "consumer-perf-test": ("kafkapy.cli.consumer_perf_test", "Consumer throughput test"),
    "dump-log": ("kafkapy.cli.dump_log", "Dump log segments and indexes (DumpLogSegments)"),
    "log-dirs": ("kafkapy.cli.log_dirs", "Describe log directories of brokers"),
    "delete-records": ("kafkapy.cli.delete_records", "Delete records below given offsets"),
    "get-offsets": ("kafkapy.cli.get_offsets", "Print offsets of topic partitions (GetOffsetShell)"),
    "acls": ("kafkapy.cli.acls", "Add, remove and list ACLs (kafka-acls.sh)"),
    "delegation-tokens": ("kafkapy.cli.delegation_tokens", "Create, renew, expire, describe delegation tokens"),
    "streams-application-reset": (
        "kafkapy.cli.streams_application_reset",
        "Reset a Streams application's input offsets and delete its internal topics",
    ),
    "features": ("kafkapy.cli.features", "Describe, upgrade, downgrade, disable feature flags (kafka-features.sh)"),
    "transactions": ("kafkapy.cli.transactions", "List, describe and abort transactions; find hanging ones"),
    "broker-api-versions": ("kafkapy.cli.broker_api_versions", "Print API versions brokers support"),
    "verifiable-producer": ("kafkapy.cli.verifiable_producer", "Produce integers, report JSON events"),
    "verifiable-consumer": ("kafkapy.cli.verifiable_consumer", "Consume in a group, report JSON events"),
    "replica-verification": ("kafkapy.cli.replica_verification", "Check replicas hold the same data"),
    "mirror-maker": ("kafkapy.cli.mirror_maker", "Copy topics between clusters (MirrorMaker 1)"),
    "zookeeper-shell": ("kafkapy.cli.zookeeper_shell", "ZooKeeper shell (zkCli)"),
    "zookeeper-server-start": ("kafkapy.cli.zookeeper_server:start_main", "Start an installed ZooKeeper"),
    "zookeeper-server-stop": ("kafkapy.cli.zookeeper_server:stop_main", "Stop ZooKeeper started by kafkapy"),
    "zookeeper-security-migration": (
        "kafkapy.cli.zookeeper_security_migration",
        "Set or remove Kafka's ACLs on ZooKeeper znodes (ZkSecurityMigrator)",
    ),
    "jmx": ("kafkapy.cli.jmx", "Dump a broker's JMX metrics (JmxTool) from its metrics endpoint"),
    "e2e-latency": ("kafkapy.cli.e2e_latency", "End-to-end produce/consume latency (EndToEndLatency)"),
    "cluster": ("kafkapy.cli.cluster", "Cluster id; unregister a broker (kafka-cluster.sh)"),
    "top": ("kafkapy.cli.top", "Live view: brokers, topic rates, URP, request p99, idle %, consumer lag"),
    "spark-submit": ("kafkapy.cli.spark_submit", "spark-submit with the kafkapy data source registered"),
    "run-class": ("kafkapy.cli.main:run_class_main", "kafka-run-class.sh: run a tool by its Kafka class name"),
}

# `kafka-run-class.sh <class>` names (Scala-era and 3.x/4.x Java) -> tool.
RUN_CLASS_TOOLS: dict[str, str] = {
    "kafka.Kafka": "server-start",
    "kafka.admin.TopicCommand": "topics",
    "org.apache.kafka.tools.TopicCommand": "topics",
    "kafka.admin.ConfigCommand": "configs",
    "kafka.tools.ConsoleProducer": "console-producer",
    "org.apache.kafka.tools.ConsoleProducer": "console-producer",
    "kafka.tools.ConsoleConsumer": "console-consumer",
    "org.apache.kafka.tools.consumer.ConsoleConsumer": "console-consumer",
    "kafka.admin.ConsumerGroupCommand": "consumer-groups",
    "org.apache.kafka.tools.consumer.group.ConsumerGroupCommand": "consumer-groups",
    "kafka.admin.ReassignPartitionsCommand": "reassign-partitions",
    "org.apache.kafka.tools.reassign.ReassignPartitionsCommand": "reassign-partitions",
    "kafka.admin.LeaderElectionCommand": "leader-election",
    "org.apache.kafka.tools.LeaderElectionCommand": "leader-election",
    "kafka.admin.PreferredReplicaLeaderElectionCommand": "preferred-replica-election",
    "kafka.tools.ProducerPerformance": "producer-perf-test",
    "org.apache.kafka.tools.ProducerPerformance": "producer-perf-test",
    "kafka.tools.ConsumerPerformance": "consumer-perf-test",
    "org.apache.kafka.tools.ConsumerPerformance": "consumer-perf-test",
    "kafka.tools.DumpLogSegments": "dump-log",
    "org.apache.kafka.tools.DumpLogSegments": "dump-log",
    "kafka.admin.LogDirsCommand": "log-dirs",
    "org.apache.kafka.tools.LogDirsCommand": "log-dirs",
    "kafka.admin.AclCommand": "acls",
    "kafka.admin.DelegationTokenCommand": "delegation-tokens",
    "org.apache.kafka.tools.DelegationTokenCommand": "delegation-tokens",
    "kafka.admin.DeleteRecordsCommand": "delete-records",
    "org.apache.kafka.tools.DeleteRecordsCommand": "delete-records",
    "kafka.tools.StreamsResetter": "streams-application-reset",
    "org.apache.kafka.tools.StreamsResetter": "streams-application-reset",
    "kafka.admin.FeatureCommand": "features",
    "org.apache.kafka.tools.FeatureCommand": "features",
    "org.apache.kafka.tools.TransactionsCommand": "transactions",
    "kafka.tools.GetOffsetShell": "get-offsets",
    "org.apache.kafka.tools.GetOffsetShell": "get-offsets",
    "kafka.admin.BrokerApiVersionsCommand": "broker-api-versions",
    "org.apache.kafka.tools.BrokerApiVersionsCommand": "broker-api-versions",
    "org.apache.kafka.tools.VerifiableProducer": "verifiable-producer",
    "org.apache.kafka.tools.VerifiableConsumer": "verifiable-consumer",
    "kafka.tools.ReplicaVerificationTool": "replica-verification",
    "org.apache.kafka.tools.ReplicaVerificationTool": "replica-verification",
    "kafka.tools.MirrorMaker": "mirror-maker",
    "kafka.tools.JmxTool": "jmx",
    "org.apache.kafka.tools.JmxTool": "jmx",
    "kafka.tools.EndToEndLatency": "e2e-latency",
    "org.apache.kafka.tools.EndToEndLatency": "e2e-latency",
    "org.apache.kafka.tools.ClusterTool": "cluster",
    "org.apache.zookeeper.ZooKeeperMain": "zookeeper-shell",
    "org.apache.zookeeper.ZooKeeperMainWithTlsSupportForKafka": "zookeeper-shell",
    "org.apache.zookeeper.server.quorum.QuorumPeerMain": "zookeeper-server-start",
    "kafka.admin.ZkSecurityMigrator": "zookeeper-security-migration",
}



def _version() -> str:
    from kafkapy import __version__

    return __version__


def _not_implemented(tool: str) -> int:
    sys.stderr.write(f"kafkapy: {tool} is not implemented yet\n")
    return ERROR_EXIT


def resolve(tool: str):
    """The entry function for `tool`, or None if its module does not exist yet."""
    target, _ = TOOLS[tool]
    module_name, _, func_name = target.partition(":")
    import importlib

    try:
        module = importlib.import_module(module_name)
    except ModuleNotFoundError as e:
        # Only a missing tool module means "not implemented"; a missing dependency is a real error.
        if e.name == module_name:
            return None
        raise
    return getattr(module, func_name or "main", None)


def run_tool(tool: str, argv: list[str]) -> int:
    func = resolve(tool)
    if func is None:
        return _not_implemented(tool)
    rc = func(argv)
    return 0 if rc is None else int(rc)


def run_class_main(argv: list[str]) -> int:
    """kafka-run-class.sh [-daemon] [-name N] [-loggc] <class> [args]: run the tool for that class."""
    args = list(argv)
    daemon = False
    while args and args[0] in ("-daemon", "-name", "-loggc"):
        flag = args.pop(0)
        if flag == "-daemon":
            daemon = True
        elif flag == "-name" and args:
            args.pop(0)
    if not args or args[0] in ("-h", "--help"):
        sys.stdout.write("usage: kafkapy run-class [-daemon] [-name NAME] [-loggc] <class> [args...]\n")
        sys.stdout.write("classes:\n" + "".join(f"  {c} -> {t}\n" for c, t in RUN_CLASS_TOOLS.items()))
        return 0 if args else USAGE_EXIT
    cls, rest = args[0], args[1:]
    tool = RUN_CLASS_TOOLS.get(cls)
    if tool is None:
        sys.stderr.write(f"kafkapy: run-class: unknown class {cls}\n")
        return ERROR_EXIT
    if daemon and tool == "server-start":
        rest = ["-daemon", *rest]
    return run_tool(tool, rest)


_APP: Any = None


def _app() -> Any:
    global _APP
    if _APP is None:
        from kafkapy.cli.app import build_app

        # run_tool looked up at each call, so a test's monkeypatch of this module reaches the app too.
        _APP = build_app(TOOLS, lambda tool, argv: run_tool(tool, argv), _version)
    return _APP


def command() -> Any:
    """The click group of the Typer app (what the console script and typer.testing.CliRunner run)."""
    from kafkapy.cli.app import command_of

    return command_of(_app())


def __getattr__(name: str) -> Any:
    # The Typer app is built on first use so that running a tool need not import Typer; tests and users
    # reach it as kafkapy.cli.main.app, as before.
    if name == "app":
        return _app()
    raise AttributeError(f"module {__name__!r} has no attribute {name!r}")


def main(argv: list[str] | None = None) -> int:
    """Entry point of the `kafkapy` console script. Returns the process exit code."""
    if argv is None:
        argv = sys.argv[1:]
    if argv[:1] == ["help"]:  # `kafkapy help [tool]`
        argv = [argv[1], "--help"] if len(argv) > 1 else ["--help"]
    elif argv[:1] == ["version"]:
        argv = ["--version"]
    elif argv[:1] and argv[0] in TOOLS and COMPLETE_VAR not in os.environ:
        # An exactly named tool runs straight away: the Typer command would hand it the same raw argv,
        # and importing Typer and building the group costs ~50 ms of the 0.2 s start-up budget.
        return run_tool(argv[0], argv[1:])
    return command().main(argv, prog_name="kafkapy", standalone_mode=False)


def script_main() -> int:
    """Entry point of the installed Kafka script names (`kafka-topics.sh`, `zookeeper-shell.sh`, ...): the tool is
    the script's own name without `kafka-` and `.sh`, so `pip install` alone gives Kafka's bin/ commands."""
    name = os.path.basename(sys.argv[0])
    tool = name.removesuffix(".sh").removeprefix("kafka-")
    if tool not in TOOLS:
        sys.stderr.write(f"kafkapy: {name} is not a Kafka script kafkapy serves\n")
        return ERROR_EXIT
    return run_tool(tool, sys.argv[1:])


if __name__ == "__main__":
    sys.exit(main())
