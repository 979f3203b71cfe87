"""StreamsResetter's pure parts: Kafka's internal-topic names, the reset-plan CSV and Java's member text."""

from __future__ import annotations

import pytest

from kafkapy.client.admin_groups import MemberDescription
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.tools.streams_resetter import (
    StreamsResetError,
    matches_internal_topic_format,
    member_text,
    parse_reset_plan_csv,
)


@pytest.mark.parametrize("name,internal", [
    ("app-store-changelog", True), ("app-KSTREAM-AGGREGATE-0000000003-repartition", True),
    ("app-x-subscription-registration-topic", True), ("app-x-subscription-response-topic", True),
    ("app-KTABLE-FK-JOIN-SUBSCRIPTION-REGISTRATION-0000000007-topic", True),
    ("app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-12-topic", True),
    ("app-output", False), ("changelog", False), ("app-KTABLE-FK-JOIN-SUBSCRIPTION-RESPONSE-x-topic", False),
])
def test_internal_topic_format(name: str, internal: bool) -> None:
    assert matches_internal_topic_format(name) is internal


def test_reset_plan_csv() -> None:
    assert parse_reset_plan_csv("a,0,5\nb,1,7") == {TopicPartition("a", 0): 5, TopicPartition("b", 1): 7}
    with pytest.raises(StreamsResetError, match="It is empty"):
        parse_reset_plan_csv("")
    with pytest.raises(StreamsResetError, match="TOPIC,PARTITION,OFFSET"):
        parse_reset_plan_csv("a,0")


def test_member_text_is_javas() -> None:
    m = MemberDescription("m-1", None, "c", "/127.0.0.1", [TopicPartition("t", 0), TopicPartition("t", 1)])
    assert member_text(m) == ("(memberId=m-1, groupInstanceId=null, clientId=c, host=/127.0.0.1, "
                              "assignment=(topicPartitions=t-0,t-1), targetAssignment=Optional.empty)")
