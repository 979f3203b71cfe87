"""Java facts the online tools reproduce: String.hashCode, HashMap order, TopicFilter regexes,
exception names, Double.toString."""

from __future__ import annotations

import pytest

from kafkapy.common.errors import (
    InvalidConfigError,
    InvalidTopicExceptionError,
    KafkaStorageError,
    OffsetOutOfRangeError,
    TopicAuthorizationFailedError,
    UnknownTopicOrPartitionError,
)
from kafkapy.common.internal_topics import is_internal_topic
from kafkapy.tools import ToolFailure
from kafkapy.tools.configs import java_double
from kafkapy.tools.tool_support import (
    IncludeList,
    java_error_text,
    java_exception_name,
    java_hash_order,
    java_string_hash,
    topic_partition_hash,
)


def test_java_string_hash_matches_known_values():
    assert java_string_hash("") == 0
    assert java_string_hash("hello") == 99162322
    assert java_string_hash("version") == 351608024
    assert java_string_hash("polygenelubricants") == -2147483648  # the famous Integer.MIN_VALUE hash
    assert java_string_hash("\u00e9") == 0xE9


def test_topic_partition_hash():
    # 31 * (31 + partition) + "t1".hashCode() (3645)
    assert topic_partition_hash("t1", 0) == 4606
    assert topic_partition_hash("t1", 1) == 4637


def test_hash_order_matches_java_hashmaps_kafka_prints():
    # LogDirsCommand's maps (Jackson prints them in this order).
    assert java_hash_order(["version", "brokers"], java_string_hash) == ["brokers", "version"]
    assert java_hash_order(["logDir", "error", "partitions"], java_string_hash) == ["partitions", "error", "logDir"]
    assert java_hash_order(["partition", "size", "offsetLag", "isFuture"], java_string_hash) == [
        "partition", "size", "offsetLag", "isFuture"]
    # Small Integer keys iterate ascending.
    assert java_hash_order([3, 1, 2, 0], lambda i: i) == [0, 1, 2, 3]
    # Two partitions of one topic: bucket 13 ("t1-1") before bucket 14 ("t1-0").
    tps = [("t1", 0), ("t1", 1)]
    assert java_hash_order(tps, lambda tp: topic_partition_hash(*tp)) == [("t1", 1), ("t1", 0)]


def test_hash_order_sizing_changes_buckets():
    keys = list(range(20))
    # 20 entries: default map grows to 32 buckets, so 16..19 follow 15.
    assert java_hash_order(keys, lambda i: i) == keys
    # A 2-bucket table would interleave odds and evens (new HashMap<>(1) with one key stays tiny).
    assert java_hash_order([1, 0], lambda i: i, sizing="sized") == [0, 1]


def test_include_list_is_kafkas_topic_filter():
    f = IncludeList(" 'foo.*,bar' ")
    assert f.regex == "foo.*|bar"
    assert f.is_topic_allowed("foo1") and f.is_topic_allowed("bar")
    assert not f.is_topic_allowed("xbar")  # whole-name match
    assert IncludeList(".*").is_topic_allowed("__consumer_offsets")
    assert not IncludeList(".*").is_topic_allowed("__consumer_offsets", exclude_internal_topics=True)
    with pytest.raises(ToolFailure, match=r"\[ is an invalid regex"):
        IncludeList("[")


def test_internal_topics():
    assert is_internal_topic("__consumer_offsets") and is_internal_topic("__transaction_state")
    assert not is_internal_topic("_schemas")


@pytest.mark.parametrize(
    "err, name",
    [
        (UnknownTopicOrPartitionError(), "UnknownTopicOrPartitionException"),
        (OffsetOutOfRangeError(), "OffsetOutOfRangeException"),
        (KafkaStorageError(), "KafkaStorageException"),
        (InvalidConfigError(), "InvalidConfigurationException"),
        (TopicAuthorizationFailedError(), "TopicAuthorizationException"),
        (InvalidTopicExceptionError(), "InvalidTopicException"),
    ],
)
def test_java_exception_names(err, name):
    assert java_exception_name(err) == "org.apache.kafka.common.errors." + name


def test_java_error_text_uses_default_messages():
    assert java_error_text(OffsetOutOfRangeError()) == (
        "org.apache.kafka.common.errors.OffsetOutOfRangeException: "
        "The requested offset is not within the range of offsets maintained by the server.")
    assert java_error_text(OffsetOutOfRangeError("partition t-0"), default_message=True).endswith(
        "maintained by the server.")
    assert java_error_text(OffsetOutOfRangeError("custom")).endswith(": custom")


@pytest.mark.parametrize(
    "value, text",
    [(1024.0, "1024.0"), (0.5, "0.5"), (1e7, "1.0E7"), (12345678.9, "1.23456789E7"), (1e-4, "1.0E-4"),
     (0.001, "0.001"), (-2.5e10, "-2.5E10"), (0.0, "0.0"), (100.25, "100.25")],
)
def test_java_double_to_string(value, text):
    assert java_double(value) == text
