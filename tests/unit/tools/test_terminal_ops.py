"""Terminal rendering fixes of issue 17 item 12 that need no broker: the reassignment live view's final frame
shows the bytes really moved, and completion offers the values of enumerated flags."""

from __future__ import annotations

import io
import re

from kafkapy.client.admin_types import LogDirDescription, PartitionReassignment, ReplicaInfo
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.reassign_progress import PartitionProgress, completed

TP = TopicPartition("big", 0)
MIB = 1024 * 1024
ANSI = re.compile(r"\x1b\[[0-9;?]*[a-zA-Z]")


class MovingAdmin:
    """Two samples of a move from broker 0 to broker 1 (19 MiB, then 38 MiB of 38 MiB copied), then done."""

    def __init__(self) -> None:
        self.calls = 0

    def list_partition_reassignments(self, partitions):
        self.calls += 1
        if self.calls > 2:
            return {}
        return {TP: PartitionReassignment([0, 1], adding_replicas=[1], removing_replicas=[0])}

    def describe_log_dirs(self, brokers, topics):
        moved = 19 * MIB if self.calls == 1 else 38 * MIB
        sizes = {0: 38 * MIB, 1: moved}
        return {b: {"/d": LogDirDescription("/d", None, {TP: ReplicaInfo(sizes[b], 0, False)})} for b in brokers}


def test_final_frame_shows_the_bytes_moved(monkeypatch) -> None:
    from kafkapy.cli import reassign_progress_view
    from kafkapy.cli.render import Renderer

    monkeypatch.setenv("KAFKAPY_FORCE_TERMINAL", "1")
    monkeypatch.setenv("COLUMNS", "160")
    monkeypatch.setattr(reassign_progress_view, "REFRESH_S", 0.0)
    stream = io.StringIO()
    assert reassign_progress_view.watch_progress(MovingAdmin(), [TP], Renderer("text", stream=stream)) is True
    text = ANSI.sub("", stream.getvalue())
    captions = re.findall(r"([\d.]+ \w+) of ([\d.]+ \w+) moved", text)
    assert captions[-1] == ("38.0 MiB", "38.0 MiB")  # the final frame (was "1 B of 1 B")
    assert " 1 B " not in text


def test_completed_keeps_the_last_sampled_total() -> None:
    assert completed(PartitionProgress(20, 40), None) == PartitionProgress(40, 40)
    assert completed(None, 1234) == PartitionProgress(1234, 1234)  # finished before the first sample
    assert completed(None, None) == PartitionProgress(0, 0)


def test_completion_offers_enumerated_flag_values() -> None:
    from tests.unit.cli.test_cli_main import complete

    assert complete("kafkapy configs --entity-type ") == ["topics", "clients", "users", "brokers", "broker-loggers",
                                                          "ips", "client-metrics", "groups"]
    assert complete("kafkapy configs --entity-type broker") == ["brokers", "broker-loggers"]
    assert complete("kafkapy leader-election --election-type ") == ["preferred", "unclean"]
    assert complete("kafkapy acls --resource-pattern-type p") == ["prefixed"]
    assert complete("kafkapy get-offsets --time ea") == ["earliest", "earliest-local"]


def test_piped_help_has_no_boxes_and_whole_flag_names(monkeypatch) -> None:
    from kafkapy.cli import configs

    monkeypatch.setenv("COLUMNS", "50")
    monkeypatch.delenv("KAFKAPY_FORCE_TERMINAL", raising=False)
    out = io.StringIO()
    configs.build_parser().print_help(out)
    text = out.getvalue()
    assert not set("│╭╰─") & set(text)
    flags = {a for p in [configs.build_parser()] for a in p._option_string_actions}
    for line in text.splitlines():
        if line.startswith("  -"):
            names = re.split(r" [<{\[]", line)[0].strip().split(", ")
            assert set(names) <= flags, line  # a flag line holds whole flag names only
    assert "  --entity-type <type>" in text.splitlines()
    # help wraps at $COLUMNS; only a flag line or a single unbreakable word may be longer
    assert all(len(line) <= 50 or line.startswith("  -") or " " not in line.strip() for line in text.splitlines())
