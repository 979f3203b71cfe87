"""`kafkapy reassign-partitions` (kafka-reassign-partitions.sh, Kafka 4.x's ReassignPartitionsCommand).

Actions (exactly one): --generate (--topics-to-move-json-file, --broker-list, --disable-rack-aware),
--execute (--reassignment-json-file, --throttle, --replica-alter-log-dirs-throttle, --additional, --timeout),
--verify (--reassignment-json-file, --preserve-throttles), --cancel (--reassignment-json-file,
--preserve-throttles, --timeout), --list; always --bootstrap-server, optional --command-config.
Kafka's checks in its order and wording (`Command must include exactly one action: ...`,
`Missing required argument "[broker-list]"`, `Option "[throttle]" can't be used with action "[verify]"`):
exit 2. Note `--broker-list` is --generate's broker list here, not a --bootstrap-server alias.

Text output is Kafka's, line for line (including its blank line after the verify status block and the
missing newline after "None of the specified partition moves are active." on --cancel). Failures: one
line on stderr, exit 1: Kafka's TerseExceptions bare ("Error reassigning partition(s): t-0: ..."), others
"Error: <message>" (cluster errors as Java names them); what was done before a failure is printed first.
On a terminal, --execute then shows a live progress view (bytes copied per partition, rate, ETA; Ctrl-C stops
watching) and --verify of an ongoing reassignment watches it finish before its report (which then clears
the throttles); piped or with KAFKAPY_PLAIN=1 the output is Kafka's text only.
--output json: one document per action ({"currentAssignment", "proposedAssignment"} for --generate, whose
values are reassignment-JSON documents; see the result classes in kafkapy/tools/reassign_partitions.py).
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, run

ACTIONS = ("generate", "execute", "verify", "cancel", "list")
REQUIRED = {"verify": ("reassignment-json-file",), "generate": ("topics-to-move-json-file", "broker-list"),
            "execute": ("reassignment-json-file",), "cancel": ("reassignment-json-file",), "list": ()}
PERMITTED = {
    "verify": ("bootstrap-server", "command-config", "preserve-throttles"),
    "generate": ("bootstrap-server", "broker-list", "command-config", "disable-rack-aware"),
    "execute": ("additional", "bootstrap-server", "command-config", "throttle", "replica-alter-log-dirs-throttle",
                "timeout"),
    "cancel": ("bootstrap-server", "command-config", "preserve-throttles", "timeout"),
    "list": ("bootstrap-server", "command-config"),
}
LONG_OPTIONS = ("throttle", "replica-alter-log-dirs-throttle", "timeout")
YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE = ("Warning: You must run --verify periodically, until the reassignment "
                                            "completes, to ensure the throttle is removed.")


class _Given(argparse.Action):
    """Stores the value and records which Kafka option was given, in command-line order (Kafka reports the
    first option an action does not permit)."""

    def __call__(self, parser: Any, namespace: Any, values: Any, option_string: str | None = None) -> None:
        setattr(namespace, self.dest, True if self.nargs == 0 else values)
        given = getattr(namespace, "given", None) or []
        name = self.option_strings[0].lstrip("-")
        if name not in given:
            given.append(name)
        namespace.given = given


def build_parser() -> ToolParser:
    p = ToolParser("reassign-partitions", "This tool helps to move topic partitions between replicas.")
    p.set_defaults(given=[])

    def flag(name: str, help: str) -> None:
        p.add_argument(f"--{name}", action=_Given, nargs=0, default=False, help=help)

    def opt(name: str, metavar: str, help: str) -> None:
        p.add_argument(f"--{name}", action=_Given, metavar=metavar, default=None, help=help)

    flag("verify", "Verify if the reassignment completed as specified by the --reassignment-json-file option. If "
         "there is a throttle engaged for the replicas specified, and the rebalance has completed, the throttle will "
         "be removed")
    flag("generate", "Generate a candidate partition reassignment configuration. Note that this only generates a "
         "candidate assignment, it does not execute it.")
    flag("execute", "Kick off the reassignment as specified by the --reassignment-json-file option.")
    flag("cancel", "Cancel an active reassignment.")
    flag("list", "List all active partition reassignments.")
    opt("bootstrap-server", "<Server(s) to use for bootstrapping>", "REQUIRED: the server(s) to use for "
        "bootstrapping.")
    opt("command-config", "<Admin client property file>", "Property file containing configs to be passed to Admin "
        "Client.")
    opt("reassignment-json-file", "<manual assignment json file path>",
        'The JSON file with the partition reassignment configuration. The format to use is - {"partitions": '
        '[{"topic": "foo", "partition": 1, "replicas": [1,2,3], "log_dirs": ["dir1","dir2","dir3"]}], "version":1}. '
        'Note that "log_dirs" is optional. When it is specified, its length must equal the length of the replicas '
        'list. The value in this list can be either "any" or the absolution path of the log directory on the '
        "broker.")
    opt("topics-to-move-json-file", "<topics to reassign json file path>",
        "Generate a reassignment configuration to move the partitions of the specified topics to the list of "
        'brokers specified by the --broker-list option. The format to use is - {"topics": [{"topic": "foo"},'
        '{"topic": "foo1"}], "version":1}')
    opt("broker-list", "<brokerlist>", 'The list of brokers to which the partitions need to be reassigned in the form '
        '"0,1,2". This is required if --topics-to-move-json-file is used to generate reassignment configuration')
    flag("disable-rack-aware", "Disable rack aware replica assignment")
    opt("throttle", "<throttle>", "The movement of partitions between brokers will be throttled to this value "
        "(bytes/sec). This option can be included with --execute when a reassignment is started, and it can be "
        "altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should "
        "be at least 1 KB/s. (default: -1)")
    opt("replica-alter-log-dirs-throttle", "<replicaAlterLogDirsThrottle>",
        "The movement of replicas between log directories on the same broker will be throttled to this value "
        "(bytes/sec). This option can be included with --execute when a reassignment is started, and it can be "
        "altered by resubmitting the current reassignment along with the --additional flag. The throttle rate should "
        "be at least 1 KB/s. (default: -1)")
    opt("timeout", "<timeout>", "The maximum time in ms to wait for log directory replica assignment to begin. "
        "(default: 10000)")
    flag("additional", "Execute this reassignment in addition to any other ongoing ones. This option can also be "
         "used to change the throttle of an ongoing reassignment.")
    flag("preserve-throttles", "Do not modify broker or topic throttles.")
    opt("zookeeper", "<urls>", "DEPRECATED (Kafka 2.x): the ZooKeeper connection string host:port[/chroot] "
        "instead of --bootstrap-server; --execute writes /admin/reassign_partitions as Kafka 2.x did.")
    return p


def _value(args: argparse.Namespace, name: str) -> Any:
    return getattr(args, name.replace("-", "_"))


def validate(args: argparse.Namespace) -> str:
    """Kafka's validateAndParseArgs: returns the action."""
    actions = [a for a in ACTIONS if _value(args, a)]
    if len(actions) != 1:
        raise UsageError("Command must include exactly one action: " + ", ".join(f"--{a}" for a in ACTIONS))
    action = actions[0]
    if args.bootstrap_server is None and args.zookeeper is None:
        raise UsageError("Please specify --bootstrap-server")
    if args.zookeeper is not None:
        if args.bootstrap_server is not None:
            raise UsageError("Only one of --bootstrap-server or --zookeeper must be specified")
        if action in ("cancel", "list"):
            raise UsageError(f'Option "[zookeeper]" can\'t be used with action "[{action}]"')
    for name in REQUIRED[action]:
        if _value(args, name) is None:
            raise missing_argument(name)
    for name in args.given:
        if name != action and name not in REQUIRED[action] and name not in PERMITTED[action] + ("zookeeper",):
            raise UsageError(f'Option "[{name}]" can\'t be used with action "[{action}]"')
    return action


def _long(args: argparse.Namespace, name: str, default: int) -> int:
    import re

    raw = _value(args, name)
    if raw is None:
        return default
    if not re.fullmatch(r"[+-]?[0-9]+", raw) or not -2**63 <= int(raw) < 2**63:
        raise UsageError(f"Cannot parse argument '{raw}' of option {name}")
    return int(raw)


def _read(path: str) -> str:
    try:
        with open(path, encoding="utf-8") as f:
            return f.read()
    except OSError as e:
        raise ToolError(f"{path} ({e.strerror or e})") from e


# --- Kafka's text ----------------------------------------------------------------------------------


def render_generate(result: Any, out: Any) -> None:
    from kafkapy.tools.reassign_json import format_reassignment_json

    out.line("Current partition replica assignment")
    out.line(format_reassignment_json(result.current))
    out.line()
    out.line("Proposed partition reassignment configuration")
    out.line(format_reassignment_json(result.proposed))


def render_execute(result: Any, out: Any) -> None:
    from kafkapy.tools.reassign_json import format_reassignment_json

    out.line("Current partition replica assignment")
    out.line()
    out.line(format_reassignment_json(result.current))
    out.line()
    out.line("Save this to use as the --reassignment-json-file option during rollback")
    if result.throttle_warning:
        out.line(YOU_MUST_RUN_VERIFY_PERIODICALLY_MESSAGE)
    if result.inter_broker_throttle is not None:
        out.line(f"The inter-broker throttle limit was set to {result.inter_broker_throttle} B/s")
    if result.log_dir_throttle is not None:
        out.line(f"The replica-alter-dir throttle limit was set to {result.log_dir_throttle} B/s")
    if result.started:
        out.line(f"Successfully started partition reassignment{'' if len(result.started) == 1 else 's'} for "
                 + ",".join(map(str, result.started)))
    for r, log_dir in result.moves_started:
        out.line(f"Successfully started moving log directory to {log_dir} for replica {r.topic}-{r.partition} with "
                 f"broker {r.broker_id} ")


def partition_states_lines(states: dict[Any, Any]) -> list[str]:
    from kafkapy.tools.reassign_json import tp_sort_key

    lines = ["Status of partition reassignment:"]
    for tp in sorted(states, key=tp_sort_key):
        s = states[tp]
        if not s.done:
            lines.append(f"Reassignment of partition {tp} is still in progress.")
        elif s.current_replicas == s.target_replicas:
            lines.append(f"Reassignment of partition {tp} is completed.")
        else:
            lines.append(f"There is no active reassignment of partition {tp}, but replica set is "
                         f"{','.join(map(str, s.current_replicas))} rather than "
                         f"{','.join(map(str, s.target_replicas))}.")
    return lines


def move_states_lines(moves: dict[Any, Any]) -> list[str]:
    from kafkapy.tools.reassign_json import replica_sort_key

    lines = []
    for r in sorted(moves, key=replica_sort_key):
        m = moves[r]
        name = f"{r.topic}-{r.partition}"
        if m.kind == "missing_log_dir":
            lines.append(f"Partition {name} is not found in any live log dir on broker {r.broker_id}. There is likely "
                         "an offline log directory on the broker.")
        elif m.kind == "missing_replica":
            lines.append(f"Partition {name} cannot be found in any live log directory on broker {r.broker_id}.")
        elif m.kind == "active" and m.target_log_dir == m.future_log_dir:
            lines.append(f"Reassignment of replica {r} is still in progress.")
        elif m.kind == "active":
            lines.append(f"Partition {name} on broker {r.broker_id} is being moved to log dir {m.future_log_dir} "
                         f"instead of {m.target_log_dir}.")
        elif m.kind == "cancelled":
            lines.append(f"Partition {name} on broker {r.broker_id} is not being moved from log dir "
                         f"{m.current_log_dir} to {m.target_log_dir}.")
        else:
            lines.append(f"Reassignment of replica {r} completed successfully.")
    return lines


def render_cleared(result: Any, out: Any) -> None:
    if result.cleared_brokers is not None:
        brokers = result.cleared_brokers
        out.line(f"Clearing broker-level throttles on broker{'' if len(brokers) == 1 else 's'} "
                 + ",".join(map(str, brokers)))
    if result.cleared_topics is not None:
        topics = result.cleared_topics
        out.line(f"Clearing topic-level throttles on topic{'' if len(topics) == 1 else 's'} " + ",".join(topics))


def render_verify(result: Any, out: Any) -> None:
    out.line("\n".join(partition_states_lines(result.partitions)))
    out.line("\n".join(move_states_lines(result.moves)))  # Kafka prints this block even when empty
    render_cleared(result, out)


def render_cancel(result: Any, out: Any) -> None:
    if result.partitions_done:
        if result.cancelled:
            out.line(f"Successfully cancelled partition reassignment{'' if len(result.cancelled) == 1 else 's'} for: "
                     + ",".join(map(str, result.cancelled)))
        else:
            out.line("None of the specified partition reassignments are active.")
    if result.moves_done:
        if result.moves_cancelled:
            for r, log_dir in result.moves_cancelled:
                out.line(f"Successfully started moving log directory to {log_dir} for replica "
                         f"{r.topic}-{r.partition} with broker {r.broker_id} ")
        else:
            out.write("None of the specified partition moves are active.")  # sic: Kafka prints no newline
    render_cleared(result, out)


def render_list(reassignments: dict[Any, Any], out: Any) -> None:
    if out.json:
        out.document({"reassignments": [
            {"topic": tp.topic, "partition": tp.partition, "replicas": r.replicas,
             "addingReplicas": r.adding_replicas, "removingReplicas": r.removing_replicas}
            for tp, r in reassignments.items()]})
        return
    if not reassignments:
        out.line("No partition reassignments found.")
        return
    out.line("Current partition reassignments:")
    for tp, r in reassignments.items():
        adding = f" adding: {','.join(map(str, r.adding_replicas))}." if r.adding_replicas else ""
        removing = f" removing: {','.join(map(str, r.removing_replicas))}." if r.removing_replicas else ""
        out.line(f"{tp}: replicas: {','.join(map(str, r.replicas))}.{adding}{removing}")


# --- execution -------------------------------------------------------------------------------------


def _failure(e: BaseException) -> ToolError:
    """Kafka's printing of a failed action, on one line."""
    from kafkapy.common.errors import KafkaError
    from kafkapy.tools.reassign_json import ReassignError
    from kafkapy.tools.tool_support import java_error_text

    if isinstance(e, ReassignError):
        head, *rest = str(e).split("\n")
        text = head + (" " + "; ".join(rest) if rest else "")
        return ToolError(text, prefixed=not e.terse)
    if isinstance(e, KafkaError):
        return ToolError(java_error_text(e))
    return ToolError(str(e))


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.client.admin_api import AdminApi, ReplicaLogDirsApi
    from kafkapy.common.errors import KafkaError
    from kafkapy.tools import ToolFailure
    from kafkapy.tools import reassign_partitions as rp
    from kafkapy.tools.tool_support import admin_client

    action = validate(args)
    throttle = _long(args, "throttle", -1)
    log_dir_throttle = _long(args, "replica-alter-log-dirs-throttle", -1)
    timeout_ms = _long(args, "timeout", 10000)
    props = load_properties(args.command_config) if args.command_config else {}
    props.setdefault("client.id", "reassign-partitions-tool")
    json_file = args.reassignment_json_file
    renderers = {"generate": render_generate, "execute": render_execute, "verify": render_verify,
                 "cancel": render_cancel}

    def show(result: Any) -> None:
        if out.json:
            out.document(result)
        else:
            renderers[action](result, out)

    admin: AdminApi | None = None
    shown = False
    result: Any = None

    def open_admin() -> AdminApi:
        if args.zookeeper is not None:  # Kafka 2.x's path: the same actions over the znodes
            from kafkapy.tools.zk_admin import ZkAdmin

            return ZkAdmin(args.zookeeper)
        return admin_client(args.bootstrap_server, props)

    try:
        if action == "generate":
            topics_json = _read(args.topics_to_move_json_file)
            admin = open_admin()
            result = rp.generate_assignment(admin, topics_json, args.broker_list, not args.disable_rack_aware)
        elif action == "list":
            admin = open_admin()
            render_list(rp.list_reassignments(admin), out)
            return 0
        else:
            text = _read(json_file)
            admin = open_admin()
            # A terminal: the live progress view (the bootstrap path: it reads the replicas' log dirs).
            live_admin = admin if out.rich and isinstance(admin, ReplicaLogDirsApi) else None
            if action == "execute":
                result = rp.execute_assignment(admin, text, args.additional, throttle, log_dir_throttle, timeout_ms)
                if live_admin is not None and result.started:
                    show(result)
                    shown = True
                    from kafkapy.cli.reassign_progress_view import watch_progress

                    watch_progress(live_admin, result.started, out)
            elif action == "verify":
                result = rp.verify_assignment(admin, text, args.preserve_throttles)
                if live_admin is not None and result.partitions_ongoing:
                    from kafkapy.cli.reassign_progress_view import watch_progress

                    if watch_progress(live_admin, list(result.partitions), out):  # done: verify again, clear throttles
                        result = rp.verify_assignment(admin, text, args.preserve_throttles)
            else:
                result = rp.cancel_assignment(admin, text, args.preserve_throttles, timeout_ms)
    except (ToolFailure, KafkaError) as e:
        partial = getattr(e, "partial", None)
        if partial is not None:
            show(partial)
        raise _failure(e) from e
    finally:
        if admin is not None:
            admin.close()
    if not shown:
        show(result)
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
