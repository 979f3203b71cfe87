"""`kafkapy topics` (kafka-topics.sh, TopicCommand): flags, checks and Kafka 4.x's exact text.

Text written (stdout): `Created topic X.` (plus Kafka's '.'/'_' collision WARNING line first), the
--list names one per line (an empty line when there are none, as Kafka's println of an empty join),
describe lines `Topic: X\\tTopicId: ...\\tPartitionCount: N\\tReplicationFactor: R\\tConfigs: k=v,...`
and `\\tTopic: X\\tPartition: 0\\tLeader: 1\\tReplicas: 1\\tIsr: 1[\\tAdding Replicas: ..\\tRemoving Replicas: ..]
\\tElr: N/A\\tLastKnownElr: N/A`. --alter and --delete print nothing (Kafka 4.x).
--zookeeper host:port[/chroot] is Kafka 2.x's path (kafkapy/tools/zk_admin.py writes the znodes): describe lines end at
Isr, --delete prints `Topic X is marked for deletion.` and the delete.topic.enable note.
Errors (stderr, exit 1): `Error while executing topic command : <msg>` (Kafka 4.x), argument errors
included (`... : Topic 'x' does not exist as expected`). Flag misuse exits 2.
On a terminal --describe shows each topic as a Rich table (KAFKAPY_PLAIN=1 keeps Kafka's text).
--output json: one document (list: names; describe: topic objects; create/alter/delete: a summary).
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, run

if TYPE_CHECKING:
    from kafkapy.client.admin_api import AdminApi

ERROR_PREFIX = "Error while executing topic command : "
ACTIONS = ("--list", "--describe", "--create", "--alter", "--delete")
CONFIGS_HINT = " (To alter topic configurations, the kafka-configs tool can be used.)"
REPORT_FLAGS = ("under_replicated_partitions", "unavailable_partitions", "under_min_isr_partitions",
                "at_min_isr_partitions")


def build_parser() -> ToolParser:
    p = ToolParser("topics", "This tool helps to create, delete, describe, or change a topic.")
    p.add_bootstrap_server(required=False, aliases=(), help="REQUIRED: The Kafka server to connect to.")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client.")
    p.add_argument("--list", action="store_true", help="List all available topics.")
    p.add_argument("--create", action="store_true", help="Create a new topic.")
    p.add_argument("--delete", action="store_true", help="Delete a topic.")
    p.add_argument("--alter", action="store_true",
                   help="Alter the number of partitions and replica assignment." + CONFIGS_HINT)
    p.add_argument("--describe", action="store_true", help="List details for the given topics.")
    p.add_argument("--topic", metavar="<topic>",
                   help="The topic to create, alter, describe or delete. It also accepts a regular expression, "
                   "except for --create option.")
    p.add_argument("--topic-id", metavar="<topic-id>", help="The topic-id to describe.")
    p.add_property_list("--config", help="A topic configuration override for the topic being created (name=value)."
                        " It is supported only in combination with --create." + CONFIGS_HINT)
    p.add_argument("--delete-config", metavar="<name>", action="append",
                   help="This option is no longer supported and has been deprecated since 4.0")
    p.add_argument("--partitions", type=int, metavar="<# of partitions>",
                   help="The number of partitions for the topic being created or altered. If not supplied with "
                   "--create, the topic uses the cluster default.")
    p.add_argument("--replication-factor", type=int, metavar="<replication factor>",
                   help="The replication factor for each partition in the topic being created. If not supplied, "
                   "the topic uses the cluster default.")
    p.add_argument("--replica-assignment", metavar="<broker_id_for_part1_replica1 : broker_id_for_part1_replica2 , "
                   "...>", help="A list of manual partition-to-broker assignments for the topic being created or "
                   "altered.")
    p.add_argument("--under-replicated-partitions", action="store_true",
                   help="If set when describing topics, only show under-replicated partitions.")
    p.add_argument("--unavailable-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose leader is not available.")
    p.add_argument("--under-min-isr-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose isr count is less than the "
                   "configured minimum.")
    p.add_argument("--at-min-isr-partitions", action="store_true",
                   help="If set when describing topics, only show partitions whose isr count is equal to the "
                   "configured minimum.")
    p.add_argument("--topics-with-overrides", action="store_true",
                   help="If set when describing topics, only show topics that have overridden configs.")
    p.add_argument("--if-exists", action="store_true",
                   help="If set when altering or deleting or describing topics, the action will only execute if "
                   "the topic exists.")
    p.add_argument("--if-not-exists", action="store_true",
                   help="If set when creating topics, the create request will not fail if the topic already "
                   "exists, but the request will still be sent.")
    p.add_argument("--exclude-internal", action="store_true",
                   help="Exclude internal topics when listing or describing topics. By default, the internal "
                   "topics are included.")
    p.add_argument("--partition-size-limit-per-response", type=int, metavar="<maximum number of partitions>",
                   help="The maximum partition size to be included in one DescribeTopicPartitions response.")
    p.add_argument("--zookeeper", metavar="<hosts>",
                   help="DEPRECATED (Kafka 2.x): the ZooKeeper connection string host:port[/chroot]; the topic's "
                   "znodes are read and written directly, as Kafka 2.x's TopicCommand did.")
    return p


# Which actions each option may be used with (TopicCommand.checkInvalidArgs).
_ALLOWED_WITH = {
    "config": ("create", "alter"),
    "partitions": ("create", "alter"),
    "replication_factor": ("create",),
    "replica_assignment": ("create", "alter"),
    "if_exists": ("alter", "delete", "describe"),
    "if_not_exists": ("create",),
    "exclude_internal": ("list", "describe"),
    "topics_with_overrides": ("describe",),
    **{flag: ("describe",) for flag in REPORT_FLAGS},
}


def _flag(dest: str) -> str:
    return "[" + dest.replace("_", "-") + "]"


def check_args(args: argparse.Namespace) -> str:
    """TopicCommandOptions.checkArgs: returns the action; raises UsageError with Kafka's wording."""
    if args.zookeeper is not None and args.bootstrap_server is not None:
        raise UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
    if args.zookeeper is None and args.bootstrap_server is None:
        raise UsageError("the following arguments are required: --bootstrap-server")
    actions = [a for a in ("create", "list", "alter", "describe", "delete") if getattr(args, a)]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --create, --alter or --delete")
    action = actions[0]
    if action not in ("list", "describe") and args.topic is None:
        raise missing_argument("topic")
    if action == "alter":
        if args.config:
            raise UsageError(
                'Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]"' + CONFIGS_HINT)
        if args.partitions is None:
            raise missing_argument("partitions")
    for dest, allowed in _ALLOWED_WITH.items():
        value = getattr(args, dest)
        if value and action not in allowed:
            raise UsageError(f'Option "{_flag(dest)}" can\'t be used with option "[{action}]"')
    if action == "create" and args.replica_assignment and (args.partitions is not None
                                                           or args.replication_factor is not None):
        other = "partitions" if args.partitions is not None else "replication-factor"
        raise UsageError(f'Option "[replica-assignment]" can\'t be used with option "[{other}]"')
    reports = [f for f in REPORT_FLAGS if getattr(args, f)]
    if args.topics_with_overrides and reports:
        raise UsageError(f'Option "{_flag(reports[0])}" can\'t be used with option "[topics-with-overrides]"')
    if action == "describe" and args.if_exists and args.topic is None and args.topic_id is None:
        raise UsageError("--topic or --topic-id is required to describe a topic")
    return action


def partition_line(p: Any, zookeeper: bool = False) -> str:
    parts = [
        f"\tTopic: {p.topic}",
        f"\tPartition: {p.partition}",
        f"\tLeader: {'none' if p.leader is None else p.leader}",
        "\tReplicas: " + ",".join(map(str, p.replicas)),
        "\tIsr: " + ",".join(map(str, p.isr)),
    ]
    if p.adding_replicas is not None:
        parts.append("\tAdding Replicas: " + ",".join(map(str, p.adding_replicas)))
        parts.append("\tRemoving Replicas: " + ",".join(map(str, p.removing_replicas or [])))
    if zookeeper:  # Kafka 2.x's ZooKeeper describe ends at Isr (and the reassignment columns)
        return "".join(parts)
    parts.append("\tElr: " + ("N/A" if p.elr is None else ",".join(map(str, p.elr))))
    parts.append("\tLastKnownElr: " + ("N/A" if p.last_known_elr is None else ",".join(map(str, p.last_known_elr))))
    return "".join(parts)


def topic_line(t: Any) -> str:
    configs = ",".join(f"{k}={'null' if v is None else v}" for k, v in t.configs)
    head = f"Topic: {t.name}"
    if t.topic_id is not None:
        head += f"\tTopicId: {t.topic_id}"
    return head + f"\tPartitionCount: {t.partition_count}\tReplicationFactor: {t.replication_factor}\tConfigs: {configs}"


def describe_lines(descriptions: list[Any], zookeeper: bool = False) -> list[str]:
    lines: list[str] = []
    for t in descriptions:
        if t.print_header:
            lines.append(topic_line(t))
        lines.extend(partition_line(p, zookeeper) for p in t.partitions)
    return lines


def execute(args: argparse.Namespace, out: Any) -> int:
    action = check_args(args)
    if args.delete_config:
        out.error_line("delete-config option is no longer supported and deprecated since version 4.0. "
                       "The config will be fully removed in future releases.")
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import topics as t
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    try:
        configs = t.parse_topic_configs(args.config) if action == "create" else {}
        assignment = t.parse_replica_assignment(args.replica_assignment) if args.replica_assignment else None
        if args.zookeeper is not None:
            from kafkapy.tools.zk_admin import ZkAdmin

            admin: AdminApi = ZkAdmin(args.zookeeper)
        else:
            admin = admin_client(args.bootstrap_server, props)
        try:
            return _run(action, args, admin, configs, assignment, out)
        finally:
            admin.close()
    except (t.TopicArgumentError, t.TopicCommandError) as e:
        # Kafka 4.x's TopicCommand.execute prints every failure, its IllegalArgumentExceptions included
        # (3.x printed those bare, with the usage), as "Error while executing topic command : <message>".
        raise ToolError(ERROR_PREFIX + str(e), prefixed=False) from e


def _run(action: str, args: argparse.Namespace, admin: AdminApi, configs: dict[str, str],
         assignment: dict[int, list[int]] | None, out: Any) -> int:
    from kafkapy.tools import topics as t

    if action == "create":
        if ("." in args.topic or "_" in args.topic) and not out.json:
            out.line(t.COLLISION_WARNING)
        res = t.create_topic(admin, t.CreateTopicOptions(
            args.topic, args.partitions, args.replication_factor, assignment, configs, args.if_not_exists))
        if out.json:
            out.document({"topic": res.topic, "created": res.created})
        elif res.created:
            out.line(f"Created topic {res.topic}.")
        return 0
    if action == "list":
        names = t.list_topics(admin, args.topic, args.exclude_internal)
        if out.json:
            out.document(names)
        else:
            out.line("\n".join(names))
        return 0
    if action == "describe":
        opts = t.DescribeOptions(
            args.topic, args.exclude_internal, args.if_exists, args.under_replicated_partitions,
            args.unavailable_partitions, args.under_min_isr_partitions, args.at_min_isr_partitions,
            args.topics_with_overrides, args.topic_id)
        descriptions = t.describe_topics(admin, opts)
        if out.json:
            out.document([_describe_json(d) for d in descriptions])
        elif out.rich:
            describe_tables(descriptions, out)
        else:
            out.lines(describe_lines(descriptions, args.zookeeper is not None))
        return 0
    if action == "alter":
        altered = t.alter_topic(admin, args.topic, args.partitions, assignment, args.if_exists, args.exclude_internal)
        if out.json:
            out.document({"altered": altered, "partitions": args.partitions})
        return 0
    deleted = t.delete_topics(admin, args.topic, args.if_exists, args.exclude_internal)
    if out.json:
        out.document({"deleted": deleted})
    elif args.zookeeper is not None:  # Kafka 2.x's ZooKeeper path only marks the topics for deletion
        for name in deleted:
            out.line(f"Topic {name} is marked for deletion.")
            out.line("Note: This will have no impact if delete.topic.enable is not set to true.")
    return 0


def _ids(ids: list[int] | None) -> str:
    return "N/A" if ids is None else ",".join(map(str, ids))


def describe_tables(descriptions: list[Any], out: Any) -> None:
    """--describe on a terminal: per topic its header fields as the title and a table of partitions (no
    leader in red, an ISR short of the replicas in yellow). With a partition filter (--under-replicated-partitions,
    ...) Kafka prints no topic header, so the matching partitions of every topic go in one table with a Topic
    column."""
    filtered = not any(t.print_header for t in descriptions)
    if filtered:
        parts = [p for t in descriptions for p in t.partitions]
        if parts:
            columns, rows = _partition_table(parts, with_topic=True)
            out.table(columns, rows)
        return
    for t in descriptions:
        columns, rows = _partition_table(t.partitions, with_topic=False)
        out.table(columns, rows, title=topic_line(t).replace("\t", "   ") if t.print_header else f"Topic: {t.name}")


def _partition_table(partitions: list[Any], with_topic: bool) -> tuple[list[str], list[list[Any]]]:
    from kafkapy.cli.render import Styled

    reassigning = any(p.adding_replicas is not None for p in partitions)
    columns = (["Topic"] if with_topic else []) + ["Partition", "Leader", "Replicas", "Isr"]
    columns += ["Adding Replicas", "Removing Replicas"] if reassigning else []
    rows = []
    for p in partitions:
        row: list[Any] = ([p.topic] if with_topic else []) + [
            p.partition,
            Styled("none", "bold red") if p.leader is None else p.leader,
            _ids(p.replicas),
            Styled(_ids(p.isr), "yellow") if len(p.isr) < len(p.replicas) else _ids(p.isr),
        ]
        if reassigning:
            row += [_ids(p.adding_replicas or []), _ids(p.removing_replicas or [])]
        rows.append(row + [_ids(p.elr), _ids(p.last_known_elr)])
    return columns + ["Elr", "LastKnownElr"], rows


def _describe_json(d: Any) -> dict[str, Any]:
    return {
        "topic": d.name,
        "topicId": d.topic_id,
        "partitionCount": d.partition_count,
        "replicationFactor": d.replication_factor,
        "configs": dict(d.configs),
        "partitions": [
            {
                "partition": p.partition, "leader": p.leader, "replicas": p.replicas, "isr": p.isr,
                "addingReplicas": p.adding_replicas, "removingReplicas": p.removing_replicas,
                "elr": p.elr, "lastKnownElr": p.last_known_elr,
            }
            for p in d.partitions
        ],
    }


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
