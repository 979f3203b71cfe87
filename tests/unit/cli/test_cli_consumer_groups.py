"""consumer-groups pure pieces: Kafka's date-time/duration parsing, reset-plan CSV, and the exact text layouts."""

from __future__ import annotations

import io

import pytest

from kafkapy.cli import consumer_groups_render as R
from kafkapy.cli.render import Renderer
from kafkapy.client.metadata import Node
from kafkapy.common.topic_partition import TopicPartition as TP
from kafkapy.tools import ToolFailure
from kafkapy.tools.consumer_groups import (
    GroupInformation,
    GroupMembers,
    GroupOffsets,
    MemberAssignmentState,
    PartitionAssignmentState,
    hash_ordered_tps,
)
from kafkapy.tools.group_offsets_resetter import (
    ResetArgumentError,
    export_csv,
    parse_datetime,
    parse_duration_ms,
    parse_topic_partitions,
    read_reset_plan,
)


def test_datetime_like_kafka_utils_get_date_time() -> None:
    assert parse_datetime("2023-11-14T22:13:20.000") == 1_700_000_000_000
    assert parse_datetime("2023-11-14T22:13:20.123Z") == 1_700_000_000_123
    assert parse_datetime("2023-11-14T22:13:20") == 1_700_000_000_000
    assert parse_datetime("2023-11-14T23:13:20.000+01:00") == 1_700_000_000_000
    assert parse_datetime("2023-11-14T17:13:20.000-0500") == 1_700_000_000_000
    with pytest.raises(ResetArgumentError, match="does not contain a 'T'"):
        parse_datetime("2023-11-14 22:13:20")
    with pytest.raises(ToolFailure, match="Unparseable date"):
        parse_datetime("2023-13-14T22:13:20.000")


@pytest.mark.parametrize("text,ms", [("PT0.5S", 500), ("P1DT2H3M4.005S", 93_784_005), ("-PT10M", -600_000),
                                     ("pt1h", 3_600_000), ("P2D", 172_800_000), ("PT-1.5S", -1_500)])
def test_duration_like_java_duration_parse(text: str, ms: int) -> None:
    assert parse_duration_ms(text) == ms


@pytest.mark.parametrize("bad", ["P", "PT", "1H", "P1H", "PT1.5.5S"])
def test_bad_durations(bad: str) -> None:
    with pytest.raises(ToolFailure):
        parse_duration_ms(bad)


def test_topic_partition_args_and_reset_plan_csv() -> None:
    assert parse_topic_partitions("t:0,2") == [TP("t", 0), TP("t", 2)]
    with pytest.raises(ResetArgumentError, match="Invalid topic arg 't:0:1', expected topic name and partitions"):
        parse_topic_partitions("t:0:1")
    with pytest.raises(ResetArgumentError, match="Invalid partition 'x' specified in topic arg 't:x'"):
        parse_topic_partitions("t:x")
    assert read_reset_plan("t,0,5\nt,1,7\n\n", ["g"]) == {"g": {TP("t", 0): 5, TP("t", 1): 7}}
    assert read_reset_plan("g1,t,0,5\ng2,t,0,6\n", ["g1", "g2"]) == {"g1": {TP("t", 0): 5}, "g2": {TP("t", 0): 6}}
    assert read_reset_plan("g1,t,0,5\n", ["g1"]) == {"g1": {TP("t", 0): 5}}
    assert export_csv([("t", 0, 5), ("a,b", 1, 2), ('q"', 2, 3)]) == 't,0,5\n"a,b",1,2\n"q""",2,3\n'


def test_reset_rows_follow_java_hashmap_order() -> None:
    # TopicPartition.hashCode = 31 * (31 + partition) + topic.hashCode(); a 16-bucket HashMap.
    tps = [TP("orders", p) for p in range(3)] + [TP("payments-long-topic-name", 0)]
    assert hash_ordered_tps(tps) == [TP("payments-long-topic-name", 0), TP("orders", 0), TP("orders", 1),
                                     TP("orders", 2)]


def renderer() -> tuple[Renderer, io.StringIO, io.StringIO]:
    out, err = io.StringIO(), io.StringIO()
    return Renderer("text", stream=out, err=err), out, err


NODE = Node(0, "127.0.0.1", 9092)


def test_offsets_layout_with_missing_values() -> None:
    rows = [PartitionAssignmentState("g", NODE, "orders", 0, 12, 1, "consumer-1-a", "/127.0.0.1", "c1", 13),
            PartitionAssignmentState("g", NODE, "a-very-long-topic-name", 3, None, None, None, None, None, None)]
    out, text, err = renderer()
    assert R.print_offsets([GroupOffsets("g", "Stable", rows)], False, out) == 0
    assert err.getvalue() == ""
    assert text.getvalue() == (
        "\nGROUP           TOPIC                  PARTITION  CURRENT-OFFSET  LOG-END-OFFSET  LAG             "
        "CONSUMER-ID     HOST            CLIENT-ID"
        "\ng               orders                 0          12              13              1               "
        "consumer-1-a    /127.0.0.1      c1"
        "\ng               a-very-long-topic-name 3          -               -               -               "
        "-               -               -\n")


def test_state_messages_and_missing_group() -> None:
    out, text, err = renderer()
    assert R.print_offsets([GroupOffsets("gone", "Dead", []), GroupOffsets("idle", "Empty", []),
                            GroupOffsets("busy", "PreparingRebalance", [])], False, out) == 1
    assert text.getvalue() == ""
    assert err.getvalue() == ("Error: Consumer group 'gone' does not exist.\n\nConsumer group 'idle' has no active "
                              "members.\n\nWarning: Consumer group 'busy' is rebalancing.\n")


def test_members_layout_with_instance_ids_and_verbose() -> None:
    members = [MemberAssignmentState("g", "m-1", "/10.0.0.1", "client", "static-instance-1", 2,
                                     [TP("t", 1), TP("t", 0), TP("s", 4)])]
    out, text, _ = renderer()
    R.print_members([GroupMembers("g", "Stable", members)], True, out)
    assert text.getvalue() == (
        "\nGROUP           CONSUMER-ID     GROUP-INSTANCE-ID HOST            CLIENT-ID       #PARTITIONS     "
        "CURRENT-EPOCH   CURRENT-ASSIGNMENT   TARGET-EPOCH    TARGET-ASSIGNMENT   \n"
        "g               m-1             static-instance-1 /10.0.0.1       client          2               "
        "-               s:4;t:0,1            -               -                   \n")


def test_state_layout_and_reset_and_list_layouts() -> None:
    assert R.states_text(GroupInformation("g", NODE, "", "Empty", 0), False) == (
        "\nGROUP           COORDINATOR (ID)          ASSIGNMENT-STRATEGY  STATE                #MEMBERS"
        "\ng               127.0.0.1:9092  (0)       -                    Empty                0\n")
    assert R.reset_text({"g": {TP("t", 0): 5}}) == (
        "\nGROUP           TOPIC           PARTITION  NEW-OFFSET\ng               t               0          5\n")
    assert R.reset_text({}) == "\n"

    class Listing:
        def __init__(self, group_id: str, state: str) -> None:
            self.group_id, self.state, self.type = group_id, state, "Classic"

    assert R.group_info_text([Listing("g", "Stable")], True, True) == (
        "GROUP                     TYPE                 STATE               \n"
        "g                         Classic              Stable              \n")
