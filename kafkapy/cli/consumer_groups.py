"""`kafkapy consumer-groups` (kafka-consumer-groups.sh, ConsumerGroupCommand): flags, checks, Kafka's text.

Text written (stdout), byte for byte as Kafka 4.x prints it:
- `--list`: one group id per line; with `--state`/`--type`: `%-{W+10}s %-20s` rows under `GROUP STATE`.
- `--describe` (offsets): per group a blank line, then `%-Gs %-Ts %-10s %-15s %-15s %-15s %-Cs %-Hs %s` rows
  (GROUP TOPIC PARTITION CURRENT-OFFSET LOG-END-OFFSET LAG CONSUMER-ID HOST CLIENT-ID; `--verbose` adds
  LEADER-EPOCH), widths from the data (at least 15), `-` for missing values.
- `--members`: GROUP CONSUMER-ID [GROUP-INSTANCE-ID] HOST CLIENT-ID #PARTITIONS (+ verbose epochs/assignments);
  `--state`: GROUP COORDINATOR (ID) ASSIGNMENT-STRATEGY STATE #MEMBERS.
- `--reset-offsets`: GROUP TOPIC PARTITION NEW-OFFSET, or CSV with `--export`.
- `--delete`, `--delete-offsets`: Kafka's sentences and TOPIC PARTITION STATUS table.
stderr: Kafka's System.err lines verbatim (`\\nConsumer group 'g' has no active members.`, the reset WARN);
Kafka's printError lines as `Error: ...` with exit code 1 (Kafka prints them on stdout and exits 0; kafkapy
keeps stdout parseable). Usage errors exit 2. `--output json` prints one document for every action.
Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, run

ACTIONS = ("list", "describe", "delete", "reset_offsets", "delete_offsets", "validate_regex")
SCENARIOS = ("to_offset", "to_datetime", "by_duration", "to_earliest", "to_latest", "to_current", "shift_by",
             "from_file")
RESET_WARN = ("WARN: No action will be performed as the --execute option is missing.In a future major release, the "
              "default behavior of this command will be to prompt the user before executing the reset rather than "
              "doing a dry run. You should add the --dry-run option explicitly if you are scripting this command and "
              "want to keep the current default behavior without prompting.")


def build_parser() -> ToolParser:
    p = ToolParser("consumer-groups", "This tool helps to list all consumer groups, describe a consumer group, delete "
                   "consumer group info, or reset consumer group offsets.")
    p.add_bootstrap_server(aliases=(), help="REQUIRED: The server(s) to connect to.")
    p.add_command_config(help="Property file containing configs to be passed to Admin Client and Consumer.")
    p.add_argument("--group", action="append", default=[], metavar="<consumer group>",
                   help="The consumer group we wish to act on.")
    p.add_argument("--topic", action="append", default=[], metavar="<topic>",
                   help="The topic whose consumer group information should be deleted or topic whose should be "
                   "included in the reset offset process. Partitions can be given as `topic1:0,1,2`.")
    p.add_argument("--all-topics", action="store_true",
                   help="Consider all topics assigned to a group in the `reset-offsets` process.")
    p.add_argument("--list", action="store_true", help="List all consumer groups.")
    p.add_argument("--describe", action="store_true",
                   help="Describe consumer group and list offset lag (number of messages not yet processed) related "
                   "to given group.")
    p.add_argument("--all-groups", action="store_true", help="Apply to all consumer groups.")
    p.add_argument("--delete", action="store_true",
                   help="Pass in groups to delete topic partition offsets and ownership information over the entire "
                   "consumer group. For instance --group g1 --group g2")
    p.add_argument("--timeout", type=int, default=5000, metavar="<timeout (ms)>",
                   help="The timeout that can be set for some use cases (default: 5000).")
    p.add_argument("--reset-offsets", action="store_true",
                   help="Reset offsets of consumer group. Supports one consumer group at the time, and instances "
                   "should be inactive. --dry-run (the default), --execute, --export.")
    p.add_argument("--delete-offsets", action="store_true",
                   help="Delete offsets of consumer group. Supports one consumer group at the time, and multiple "
                   "topics.")
    p.add_argument("--dry-run", action="store_true", help="Only show results without executing changes.")
    p.add_argument("--execute", action="store_true", help="Execute operation. Supported operations: reset-offsets.")
    p.add_argument("--export", action="store_true", help="Export operation execution to a CSV file.")
    p.add_argument("--to-offset", type=int, metavar="<offset>", help="Reset offsets to a specific offset.")
    p.add_argument("--from-file", metavar="<path to CSV file>", help="Reset offsets to values defined in CSV file.")
    p.add_argument("--to-datetime", metavar="<datetime>",
                   help="Reset offsets to offset from datetime. Format: 'YYYY-MM-DDTHH:mm:SS.sss'")
    p.add_argument("--by-duration", metavar="<duration>",
                   help="Reset offsets to offset by duration from current timestamp. Format: 'PnDTnHnMnS'")
    p.add_argument("--to-earliest", action="store_true", help="Reset offsets to earliest offset.")
    p.add_argument("--to-latest", action="store_true", help="Reset offsets to latest offset.")
    p.add_argument("--to-current", action="store_true", help="Reset offsets to current offset.")
    p.add_argument("--shift-by", type=int, metavar="<number-of-offsets>",
                   help="Reset offsets shifting current offset by 'n', where 'n' can be positive or negative.")
    p.add_argument("--members", action="store_true", help="Describe members of the group.")
    p.add_argument("--offsets", action="store_true",
                   help="Describe the group and list all topic partitions in the group along with their offset lag "
                   "(the default sub-action of --describe).")
    p.add_argument("--state", nargs="?", const="", default=None, metavar="<states>",
                   help="With --describe: the state of the group; with --list: the state of all groups, optionally "
                   "only those in the given comma-separated states.")
    p.add_argument("--type", nargs="?", const="", default=None, metavar="<types>",
                   help="With --list: the types of the groups (classic, consumer), optionally filtered.")
    p.add_argument("--validate-regex", metavar="<regex>", help="Validate that the syntax of the provided regular "
                   "expression is valid according to the RE2 format.")
    return p


def _opt(dest: str) -> str:
    return "[" + dest.replace("_", "-") + "]"


def check_args(args: argparse.Namespace) -> str:
    """ConsumerGroupCommandOptions.checkArgs; returns the action."""
    given = [a for a in ACTIONS if getattr(args, a) not in (None, False)]
    if len(given) != 1:
        raise UsageError("Command must include exactly one action: --list, --describe, --delete, --reset-offsets, "
                         "--delete-offsets, --validate-regex")
    action = given[0]
    scope = "[group], [all-groups]"
    if args.members and action != "describe" or args.offsets and action != "describe":
        raise UsageError(f"Option(s) {_opt('members' if args.members else 'offsets')} are unavailable given other "
                         "options on the command line")
    if args.state is not None and action not in ("describe", "list"):
        raise UsageError("Option(s) [state] are unavailable given other options on the command line")
    if args.type is not None and action != "list":
        raise UsageError("Option(s) [type] are unavailable given other options on the command line")
    if action == "describe":
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [describe] takes one of these options: {scope}")
        if sum(1 for x in (args.members, args.offsets, args.state is not None) if x) > 1:
            raise UsageError("Option [describe] takes at most one of these options: [members], [offsets], [state]")
        if args.state:
            raise UsageError("Option [describe] does not take a value for [state]")
    if action == "delete":
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [delete] takes one of these options: {scope}")
        if args.topic:
            raise UsageError("The consumer does not support topic-specific offset deletion from a consumer group.")
    if action == "delete_offsets" and (len(args.group) == 0 or not args.topic):
        raise UsageError("Option [delete-offsets] takes the following options: [group], [topic]")
    if action == "reset_offsets":
        if args.dry_run and args.execute:
            raise UsageError("Option [reset-offsets] only accepts one of [execute] and [dry-run]")
        if not args.group and not args.all_groups:
            raise UsageError(f"Option [reset-offsets] takes one of these options: {scope}")
        used = [s for s in SCENARIOS if getattr(args, s) not in (None, False)]
        if len(used) > 1:
            raise UsageError(f'Option "{_opt(used[0])}" can\'t be used with option "{_opt(used[1])}"')
    if args.group and args.all_groups:
        raise UsageError('Option "[group]" can\'t be used with option "[all-groups]"')
    if args.group and action == "list":
        raise UsageError('Option "[group]" can\'t be used with option "[list]"')
    if args.topic and action in ("list", "describe"):
        raise UsageError(f'Option "[topic]" can\'t be used with option "{_opt(action)}"')
    return action


# --------------------------------------------------------------------------------------------------
# execution


def execute(args: argparse.Namespace, out: Any) -> int:
    action = check_args(args)
    if action == "validate_regex":
        return _validate_regex(args.validate_regex, out)
    if action == "reset_offsets" and not args.dry_run and not args.execute:
        out.error_line(RESET_WARN)
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import consumer_groups as cg
    from kafkapy.tools.tool_support import admin_client

    props = load_properties(args.command_config) if args.command_config else {}
    props.setdefault("default.api.timeout.ms", str(args.timeout))
    admin = admin_client(args.bootstrap_server, props)
    service = cg.ConsumerGroupService(admin, args.timeout)
    try:
        return _run(action, args, service, out)
    except cg.GroupCommandArgumentError as e:
        raise UsageError(str(e)) from e
    except UsageError:
        raise
    except (ToolError, BrokenPipeError):  # a closed stdout (`| head`) is run()'s quiet exit, not a failure
        raise
    except Exception as e:  # noqa: BLE001 - Kafka's "Executing consumer group command failed due to ..."
        text = cg.java_error_text(e) if hasattr(e, "code") and hasattr(e, "name") else str(e)
        raise ToolError(f"Executing consumer group command failed due to {text}") from e
    finally:
        admin.close()


def _validate_regex(regex: str, out: Any) -> int:
    import re

    try:
        re.compile(regex)
        text, ok = f"The regular expression `{regex}` is valid.", True
    except re.error as e:
        text, ok = f"The regular expression `{regex}` is invalid: {e}.", False
    if out.json:
        out.document({"regex": regex, "valid": ok})
    else:
        out.line(text)
    return 0


def _groups(args: argparse.Namespace, service: Any) -> list[str]:
    return service.list_group_ids() if args.all_groups else list(args.group)


def _run(action: str, args: argparse.Namespace, service: Any, out: Any) -> int:
    from kafkapy.cli import consumer_groups_render as R

    if action == "list":
        include_state, include_type = args.state is not None, args.type is not None
        states = _parse_states(args.state) if args.state else None
        types = [t.strip() for t in args.type.split(",")] if args.type else None
        listings = service.list_groups(states, types)
        if out.json:
            out.document(listings)
        elif include_state or include_type:
            out.write(R.group_info_text(listings, include_type, include_state))
        else:
            out.write("".join(g.group_id + "\n" for g in listings))
        return 0
    if action == "describe":
        groups = _groups(args, service)
        if args.members:
            return R.print_members(service.collect_groups_members(groups), args.verbose, out)
        if args.state is not None:
            return R.print_states(service.collect_groups_state(groups), args.verbose, out)
        return R.print_offsets(service.collect_groups_offsets(groups), args.verbose, out)
    if action == "reset_offsets":
        from kafkapy.tools.group_offsets_resetter import ResetSpec

        spec = ResetSpec(args.to_earliest, args.to_latest, args.to_current, args.to_offset, args.shift_by,
                         args.to_datetime, args.by_duration, args.from_file)
        result = service.reset_offsets(_groups(args, service), args.topic, args.all_topics, spec, args.execute,
                                       list(args.group))
        return R.print_reset(result, args.export, len(args.group) == 1, service, out)
    if action == "delete":
        return R.print_delete_groups(service.delete_groups(_groups(args, service)), out)
    return R.print_delete_offsets(service.delete_offsets(args.group[0], args.topic), out)


def _parse_states(text: str) -> list[str]:
    from kafkapy.client.admin_groups import parse_group_state
    from kafkapy.tools.consumer_groups import CONSUMER_GROUP_STATES

    parsed = [parse_group_state(s) for s in text.split(",")]
    if any(s not in CONSUMER_GROUP_STATES for s in parsed):
        raise UsageError(f"Invalid state list '{text}'. Valid states are: " + ", ".join(CONSUMER_GROUP_STATES))
    return parsed


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
