"""Kafka's text (and kafkapy's JSON) for `kafkapy consumer-groups` results (see kafkapy/cli/consumer_groups.py).

Every `print_*` writes to the Renderer and returns the exit code: 1 when Kafka would have printed an
"Error: ..." line (kafkapy writes those to stderr), else 0. Column formats are ConsumerGroupCommand's
`%-Ns` Java formats (left-justified, never truncated), widths from the data with Kafka's minimums.
On a terminal (Renderer.rich) the describe tables are Rich tables from the same header and rows, a
lag above 0 in yellow; piped output is Kafka's text.
Stateless; thread-safety: one run per call.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

if TYPE_CHECKING:
    from kafkapy.common.errors import KafkaError
    from kafkapy.tools.consumer_groups import DeleteOffsetsResult

MISSING = "-"
REBALANCING = ("PreparingRebalance", "CompletingRebalance", "Assigning", "Reconciling")


def _fmt(widths: list[int | None], values: list[Any]) -> str:
    """Java's "%-{w}s %-{w}s ... %s" (None = last column, unpadded)."""
    cells = []
    for w, v in zip(widths, values, strict=True):
        text = MISSING if v is None else str(v)
        cells.append(text if w is None else f"{text:<{w}}")
    return " ".join(cells)


def _should_print(group: str, state: str, num_rows: int, out: Any) -> tuple[bool, int]:
    """ConsumerGroupCommand.shouldPrintMemberState: (print the table?, exit code)."""
    if state == "Dead":
        out.error_line(f"Error: Consumer group '{group}' does not exist.")
        return False, 1
    if state == "Empty":
        out.error_line(f"\nConsumer group '{group}' has no active members.")
    elif state in REBALANCING:
        out.error_line(f"\nWarning: Consumer group '{group}' is rebalancing.")
    return num_rows > 0, 0


# --------------------------------------------------------------------------------------------------
# list


def group_info_text(listings: list[Any], include_type: bool, include_state: bool) -> str:
    width = max([max(15, len(g.group_id)) for g in listings], default=15) + 10
    header: list[Any] = ["GROUP"]
    widths: list[int | None] = [width]
    if include_type:
        header.append("TYPE")
        widths.append(20)
    if include_state:
        header.append("STATE")
        widths.append(20)
    lines = [_fmt(widths, header)]
    for g in listings:
        row: list[Any] = [g.group_id]
        if include_type:
            row.append(g.type or "Unknown")
        if include_state:
            row.append(g.state or "Unknown")
        lines.append(_fmt(widths, row))
    return "".join(line + "\n" for line in lines)


# --------------------------------------------------------------------------------------------------
# describe


def offsets_table(group: Any, verbose: bool) -> tuple[list[int | None], list[str], list[list[Any]]]:
    """(Kafka's column widths, header, rows) of describe --offsets."""
    rows = group.rows
    g = max([15] + [len(r.group) for r in rows])
    t = max([15] + [len(r.topic or MISSING) for r in rows])
    c = max([15] + [len(r.consumer_id or MISSING) for r in rows])
    h = max([15] + [len(r.host or MISSING) for r in rows])
    if verbose:
        widths: list[int | None] = [g, t, 10, 15, 15, 15, 15, c, h, None]
        header = ["GROUP", "TOPIC", "PARTITION", "LEADER-EPOCH", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                  "CONSUMER-ID", "HOST", "CLIENT-ID"]
    else:
        widths = [g, t, 10, 15, 15, 15, c, h, None]
        header = ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG", "CONSUMER-ID", "HOST",
                  "CLIENT-ID"]
    table = []
    for r in rows:
        values = [r.group, r.topic, r.partition]
        if verbose:
            values.append(r.leader_epoch)
        values += [r.offset, r.log_end_offset, r.lag, r.consumer_id, r.host, r.client_id]
        table.append(values)
    return widths, header, table


def offsets_text(group: Any, verbose: bool) -> str:
    widths, header, rows = offsets_table(group, verbose)
    return "\n" + "".join(_fmt(widths, values) + "\n" for values in [header, *rows])


def _rich_rows(header: list[str], rows: list[list[Any]]) -> list[list[Any]]:
    """Cells for a Rich table: None as Kafka's "-", a lag above 0 in yellow."""
    from kafkapy.cli.render import Styled

    lag = header.index("LAG") if "LAG" in header else -1
    return [[Styled(v, "yellow") if i == lag and isinstance(v, int) and v > 0 else (MISSING if v is None else v)
             for i, v in enumerate(row)] for row in rows]  # fmt: skip


def print_offsets(groups: list[Any], verbose: bool, out: Any) -> int:
    rc = 0
    for g in groups:
        show, code = _should_print(g.group, g.state, len(g.rows), out)
        rc = max(rc, code)
        if show and out.rich:
            _, header, rows = offsets_table(g, verbose)
            out.table(header, _rich_rows(header, rows))
        elif show and not out.json:
            out.write(offsets_text(g, verbose))
    if out.json:
        out.document(groups)
    return rc


def _assignment_string(tps: list[Any]) -> str:
    by_topic: dict[str, list[int]] = {}
    for tp in tps:
        by_topic.setdefault(tp.topic, []).append(tp.partition)
    return ";".join(sorted(f"{t}:" + ",".join(str(p) for p in sorted(ps)) for t, ps in by_topic.items()))


def members_table(group: Any, verbose: bool, show: bool) -> tuple[list[int | None], list[str], list[list[Any]]]:
    """(Kafka's column widths, header, rows) of describe --members (the verbose columns appended)."""
    members = group.members if show else []
    g = max([15] + [len(m.group) for m in members])
    c = max([15] + [len(m.consumer_id) for m in members])
    gi = max([17] + [len(m.group_instance_id) for m in members])
    h = max([15] + [len(m.host) for m in members])
    cl = max([15] + [len(m.client_id) for m in members])
    ca = max([20] + [len(_assignment_string(m.assignment) if m.assignment else MISSING) for m in members])
    ta = max([20] + [len(_assignment_string(m.target_assignment) if m.target_assignment else MISSING)
                     for m in members])
    with_instance = any(m.group_instance_id for m in members)
    if with_instance:
        widths: list[int | None] = [g, c, gi, h, cl, 15]
        header = ["GROUP", "CONSUMER-ID", "GROUP-INSTANCE-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    else:
        widths = [g, c, h, cl, 15]
        header = ["GROUP", "CONSUMER-ID", "HOST", "CLIENT-ID", "#PARTITIONS"]
    if verbose:
        widths += [15, ca, 15, ta]
        header += ["CURRENT-EPOCH", "CURRENT-ASSIGNMENT", "TARGET-EPOCH", "TARGET-ASSIGNMENT"]
    rows = []
    for m in group.members:
        values: list[Any] = [m.group, m.consumer_id]
        if with_instance:
            values.append(m.group_instance_id)
        values += [m.host, m.client_id, m.num_partitions]
        if verbose:
            values += [m.current_epoch, _assignment_string(m.assignment) if m.assignment else MISSING,
                       m.target_epoch, _assignment_string(m.target_assignment) if m.target_assignment else MISSING]
        rows.append(values)
    return widths, header, rows


def members_text(group: Any, verbose: bool, show: bool) -> str:
    widths, header, rows = members_table(group, verbose, show)
    # Kafka formats the basic columns and the verbose ones with two formats, each line ending in a space
    # between them ("%-Ns ... %s " + verbose part), so the basic part is padded separately.
    basic = len(widths) - (4 if verbose else 0)
    basic_widths, verbose_widths = widths[:basic], widths[basic:]

    def line(values: list[Any]) -> str:
        text = _fmt(basic_widths, values[:basic]) + " "
        return text + (_fmt(verbose_widths, values[basic:]) if verbose else "")

    return "\n" + "".join(line(values) + "\n" for values in [header, *rows])


def print_members(groups: list[Any], verbose: bool, out: Any) -> int:
    rc = 0
    for g in groups:
        show, code = _should_print(g.group, g.state, len(g.members), out)
        rc = max(rc, code)
        if out.rich:
            _, header, rows = members_table(g, verbose, show)
            out.table(header, _rich_rows(header, rows))
        elif not out.json:
            out.write(members_text(g, verbose, show))
    if out.json:
        out.document(groups)
    return rc


def states_table(info: Any, verbose: bool) -> tuple[list[int | None], list[str], list[Any]]:
    """(Kafka's column widths, header, the one row) of describe --state."""
    coordinator = f"{info.coordinator.host}:{info.coordinator.port}  ({info.coordinator.node_id})"
    cw = max(25, len(coordinator))
    gw = max(15, len(info.group))
    strategy = info.assignment_strategy or MISSING
    if verbose:
        widths: list[int | None] = [gw, cw, 20, 20, 15, 25, None]
        header = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "GROUP-EPOCH",
                  "TARGET-ASSIGNMENT-EPOCH", "#MEMBERS"]
        row = [info.group, coordinator, strategy, info.state, info.group_epoch, info.target_assignment_epoch,
               info.num_members]
    else:
        widths = [gw, cw, 20, 20, None]
        header = ["GROUP", "COORDINATOR (ID)", "ASSIGNMENT-STRATEGY", "STATE", "#MEMBERS"]
        row = [info.group, coordinator, strategy, info.state, info.num_members]
    return widths, header, row


def states_text(info: Any, verbose: bool) -> str:
    widths, header, row = states_table(info, verbose)
    return "\n" + _fmt(widths, header) + "\n" + _fmt(widths, row) + "\n"


def print_states(infos: list[Any], verbose: bool, out: Any) -> int:
    rc = 0
    for info in infos:
        show, code = _should_print(info.group, info.state, 1, out)
        rc = max(rc, code)
        if show and out.rich:
            _, header, row = states_table(info, verbose)
            out.table(header, _rich_rows(header, [row]))
        elif show and not out.json:
            out.write(states_text(info, verbose))
    if out.json:
        out.document(infos)
    return rc


# --------------------------------------------------------------------------------------------------
# reset / delete


def reset_text(offsets: dict[str, dict[Any, int]]) -> str:
    gw = max([15] + [len(g) for g in offsets])
    tw = max([15] + [len(tp.topic) for o in offsets.values() for tp in o])
    widths: list[int | None] = [gw, tw, 10, None]
    text = ""
    if offsets:
        text += "\n" + _fmt(widths, ["GROUP", "TOPIC", "PARTITION", "NEW-OFFSET"])
    for group, assignment in offsets.items():
        for tp, offset in assignment.items():
            text += "\n" + _fmt(widths, [group, tp.topic, tp.partition, offset])
    return text + "\n"


def print_reset(result: Any, export: bool, single_group: bool, service: Any, out: Any) -> int:
    for line in result.warnings:
        out.error_line(f"WARN {line}")
    for line in result.errors:
        out.error_line(f"Error: {line}")
    if out.json:
        out.document({
            "groups": {g: [{"topic": tp.topic, "partition": tp.partition, "offset": o} for tp, o in a.items()]
                       for g, a in result.offsets.items()},
            "errors": result.errors,
        })
    else:
        for line in result.notices:
            out.line(line)
        if export:
            out.line(service.export_offsets_csv(result, single_group))
        else:
            out.write(reset_text(result.offsets))
    return 1 if result.errors else 0


def print_delete_groups(result: Any, out: Any) -> int:
    from kafkapy.tools.consumer_groups import java_error_text

    if out.json:
        out.document({"deleted": result.deleted, "failed": {g: java_error_text(e) for g, e in result.failed.items()}})
    elif not result.failed:
        out.line("Deletion of requested consumer groups (" + ", ".join(f"'{g}'" for g in result.deleted)
                 + ") was successful.")
    if not result.failed:
        return 0
    out.error_line("Error: Deletion of some consumer groups failed:")
    for group, err in result.failed.items():
        out.error_line(f"* Group '{group}' could not be deleted due to: {java_error_text(err)}")
    if result.deleted and not out.json:
        out.line("\nThese consumer groups were deleted successfully: " + ", ".join(f"'{g}'" for g in result.deleted))
    return 1


_TOP_LEVEL_MESSAGE_ERRORS = ("INVALID_GROUP_ID", "GROUP_ID_NOT_FOUND", "GROUP_AUTHORIZATION_FAILED", "NON_EMPTY_GROUP")
_PARTITION_LEVEL_ERRORS = ("GROUP_SUBSCRIBED_TO_TOPIC", "TOPIC_AUTHORIZATION_FAILED", "UNKNOWN_TOPIC_OR_PARTITION")


def print_delete_offsets(result: DeleteOffsetsResult, out: Any) -> int:
    from kafkapy.tools.consumer_groups import GROUP_EXCEPTIONS, java_error_text

    rc = 0
    top = result.error
    if top is None:
        if not out.json:
            out.line(f"Request succeeded for deleting offsets from group {result.group}.")
    else:
        rc = 1
        name = top.name
        if name in _TOP_LEVEL_MESSAGE_ERRORS:
            out.error_line("Error: " + GROUP_EXCEPTIONS[name][1])
        elif name in _PARTITION_LEVEL_ERRORS:
            out.error_line("Error: Encountered some partition-level error, see the follow-up details.")
        else:
            out.error_line(f"Error: Encountered some unknown error: {name}")

    def status(err: KafkaError | None) -> str:
        if err is None:
            return "Successful"
        name = err.name
        if name in GROUP_EXCEPTIONS:  # Kafka shows the error's own message, not the broker's detail
            return f"Error: org.apache.kafka.common.errors.{GROUP_EXCEPTIONS[name][0]}: {GROUP_EXCEPTIONS[name][1]}"
        return "Error: " + java_error_text(err)

    items = sorted(result.partitions.items(), key=lambda kv: kv[0].topic + str(kv[0].partition))
    if out.json:
        out.document({"group": result.group, "error": None if top is None else top.name,
                      "partitions": [{"topic": tp.topic, "partition": tp.partition, "status": status(err)}
                                     for tp, err in items]})
        return rc
    tw = max([15] + [len(tp.topic) for tp, _ in items])
    widths: list[int | None] = [tw, 10, 15]
    text = "\n" + _fmt(widths, ["TOPIC", "PARTITION", "STATUS"])
    for tp, err in items:
        text += "\n" + _fmt(widths, [tp.topic, tp.partition if tp.partition >= 0 else MISSING, status(err)])
    out.write(text + "\n")
    return rc
