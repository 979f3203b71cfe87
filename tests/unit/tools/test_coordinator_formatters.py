"""console-consumer's internal-topic formatters against Kafka 3.9's own test vectors
(OffsetMessageFormatterTest, GroupMetadataMessageFormatterTest, TransactionLogMessageFormatterTest) and the
Scala formatters' toString layouts."""

from __future__ import annotations

import struct
from types import SimpleNamespace

import pytest

from kafkapy.protocol.messages import group_coordinator as g
from kafkapy.protocol.messages import transaction_coordinator as t
from kafkapy.tools import ToolFailure
from kafkapy.tools.console_consumer import build_formatter
from kafkapy.tools.coordinator_formatters import deprecation_warning, scala_hash_order
from kafkapy.tools.tool_support import java_string_hash


def prefixed(version: int, msg, encode_version: int | None = None) -> bytes:
    """MessageUtil.toVersionPrefixedByteBuffer: int16 version + the struct (the schema's own version range)."""
    lo, hi = type(msg).VALID_VERSIONS
    v = encode_version if encode_version is not None else max(lo, min(version, hi))
    return struct.pack(">h", version) + msg.encode(v)


def rec(key: bytes | None, value: bytes | None):
    return SimpleNamespace(key=key, value=value, topic="TOPIC", partition=0, offset=0)


OFFSET_KEY = g.OffsetCommitKey(group="group-id", topic="foo", partition=1)
OFFSET_VALUE = g.OffsetCommitValue(offset=100, leader_epoch=10, metadata="metadata", commit_timestamp=1234,
                                   expire_timestamp=-1)
GROUP_KEY = g.GroupMetadataKey(group="group-id")
MEMBER = g.GroupMetadataValue.MemberMetadata(member_id="member-1", client_id="client-1", client_host="host-1",
                                             rebalance_timeout=1000, session_timeout=1500,
                                             group_instance_id="group-instance-1", subscription=b"\x00\x01",
                                             assignment=b"\x01\x02")
GROUP_VALUE = g.GroupMetadataValue(protocol_type="consumer", generation=1, protocol="range", leader="leader",
                                   members=[MEMBER], current_state_timestamp=1234)
TXN_KEY = t.TransactionLogKey(transactional_id="TXNID")
TXN_VALUE = t.TransactionLogValue(producer_id=100, producer_epoch=50, transaction_timeout_ms=500,
                                  transaction_status=4, transaction_partitions=[],
                                  transaction_last_update_timestamp_ms=1000, transaction_start_timestamp_ms=750)
OFFSETS = "org.apache.kafka.tools.consumer.OffsetsMessageFormatter"
GROUPS = "org.apache.kafka.tools.consumer.GroupMetadataMessageFormatter"
TXNS = "org.apache.kafka.tools.consumer.TransactionLogMessageFormatter"
OFFSET_V0_KEY = '{"key":{"version":0,"data":{"group":"group-id","topic":"foo","partition":1}},'


@pytest.mark.parametrize(("key", "value", "expected"), [
    (prefixed(10, OFFSET_KEY), prefixed(10, OFFSET_VALUE, 4),
     '{"key":{"version":10,"data":"unknown"},"value":{"version":10,"data":"unknown"}}'),
    (prefixed(0, OFFSET_KEY), prefixed(0, OFFSET_VALUE),
     OFFSET_V0_KEY + '"value":{"version":0,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234}}}'),
    (prefixed(0, OFFSET_KEY), prefixed(1, OFFSET_VALUE),
     OFFSET_V0_KEY + '"value":{"version":1,"data":{"offset":100,"metadata":"metadata","commitTimestamp":1234,'
                     '"expireTimestamp":-1}}}'),
    (prefixed(0, OFFSET_KEY), prefixed(3, OFFSET_VALUE),
     OFFSET_V0_KEY + '"value":{"version":3,"data":{"offset":100,"leaderEpoch":10,"metadata":"metadata",'
                     '"commitTimestamp":1234}}}'),
    (prefixed(5, OFFSET_KEY), prefixed(4, OFFSET_VALUE),
     '{"key":{"version":5,"data":"unknown"},"value":{"version":4,"data":{"offset":100,"leaderEpoch":10,'
     '"metadata":"metadata","commitTimestamp":1234}}}'),
    (prefixed(0, OFFSET_KEY), prefixed(5, OFFSET_VALUE, 4), OFFSET_V0_KEY + '"value":{"version":5,"data":"unknown"}}'),
    (prefixed(0, OFFSET_KEY), None, OFFSET_V0_KEY + '"value":null}'),
    (None, None, '{"key":null,"value":null}'),
    (prefixed(2, GROUP_KEY), prefixed(2, GROUP_VALUE), ""),
])
def test_offsets_json_formatter_matches_kafka(key, value, expected) -> None:
    assert build_formatter(OFFSETS, {}).format(rec(key, value)) == expected.encode()


def test_group_metadata_and_transaction_log_json_formatters_match_kafka() -> None:
    fmt = build_formatter(GROUPS, {})
    assert fmt.format(rec(prefixed(2, GROUP_KEY), prefixed(3, GROUP_VALUE))) == (
        b'{"key":{"version":2,"data":{"group":"group-id"}},"value":{"version":3,"data":{"protocolType":"consumer",'
        b'"generation":1,"protocol":"range","leader":"leader","currentStateTimestamp":1234,"members":[{"memberId":'
        b'"member-1","groupInstanceId":"group-instance-1","clientId":"client-1","clientHost":"host-1",'
        b'"rebalanceTimeout":1000,"sessionTimeout":1500,"subscription":"AAE=","assignment":"AQI="}]}}}')
    assert fmt.format(rec(prefixed(2, GROUP_KEY), prefixed(0, GROUP_VALUE))) == (
        b'{"key":{"version":2,"data":{"group":"group-id"}},"value":{"version":0,"data":{"protocolType":"consumer",'
        b'"generation":1,"protocol":"range","leader":"leader","members":[{"memberId":"member-1","clientId":'
        b'"client-1","clientHost":"host-1","sessionTimeout":1500,"subscription":"AAE=","assignment":"AQI="}]}}}')
    assert fmt.format(rec(prefixed(0, OFFSET_KEY), prefixed(1, OFFSET_VALUE))) == b""
    txn = build_formatter(TXNS, {})
    value = ('"value":{"version":1,"data":{"producerId":100,"producerEpoch":50,"transactionTimeoutMs":500,'
             '"transactionStatus":4,"transactionPartitions":[],"transactionLastUpdateTimestampMs":1000,'
             '"transactionStartTimestampMs":750}}}')
    assert txn.format(rec(prefixed(0, TXN_KEY), prefixed(1, TXN_VALUE))).decode() == (
        '{"key":{"version":0,"data":{"transactionalId":"TXNID"}},' + value)
    assert txn.format(rec(prefixed(1, TXN_KEY, 0), prefixed(1, TXN_VALUE))).decode() == (
        '{"key":{"version":1,"data":"unknown"},' + value)
    assert txn.format(rec(prefixed(0, TXN_KEY), prefixed(5, TXN_VALUE, 1))) == (
        b'{"key":{"version":0,"data":{"transactionalId":"TXNID"}},"value":{"version":5,"data":"unknown"}}')


def test_scala_offsets_formatter_text() -> None:
    fmt = build_formatter("kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter", {})
    assert fmt.format(rec(prefixed(1, OFFSET_KEY), prefixed(3, OFFSET_VALUE))) == (
        b"[group-id,foo,1]::OffsetAndMetadata(offset=100, leaderEpoch=Optional[10], metadata=metadata, "
        b"commitTimestamp=1234, expireTimestamp=None)\n")
    v1 = g.OffsetCommitValue(offset=7, metadata="", commit_timestamp=5, expire_timestamp=99)
    assert fmt.format(rec(prefixed(0, OFFSET_KEY), prefixed(1, v1))) == (
        b"[group-id,foo,1]::OffsetAndMetadata(offset=7, leaderEpoch=Optional.empty, metadata=, "
        b"commitTimestamp=5, expireTimestamp=Some(99))\n")
    assert fmt.format(rec(prefixed(1, OFFSET_KEY), None)) == b"[group-id,foo,1]::NULL\n"
    assert fmt.format(rec(prefixed(2, GROUP_KEY), prefixed(3, GROUP_VALUE))) == b""
    assert fmt.format(rec(None, prefixed(3, OFFSET_VALUE))) == b""
    with pytest.raises(ToolFailure, match="Unknown offset message version: 9"):
        fmt.format(rec(prefixed(1, OFFSET_KEY), prefixed(9, OFFSET_VALUE, 4)))


def test_scala_group_metadata_and_transaction_formatters_text() -> None:
    fmt = build_formatter("kafka.coordinator.group.GroupMetadataManager$GroupMetadataMessageFormatter", {})
    assert fmt.format(rec(prefixed(2, GROUP_KEY), prefixed(3, GROUP_VALUE))) == (
        b"group-id::GroupMetadata(groupId=group-id, generation=1, protocolType=Some(consumer), currentState=Stable, "
        b"members=HashMap(member-1 -> MemberMetadata(memberId=member-1, groupInstanceId=Some(group-instance-1), "
        b"clientId=client-1, clientHost=host-1, sessionTimeoutMs=1500, rebalanceTimeoutMs=1000, "
        b"supportedProtocols=List(range))))\n")
    empty = g.GroupMetadataValue(protocol_type="", generation=0, protocol=None, leader=None, members=[],
                                 current_state_timestamp=-1)
    assert fmt.format(rec(prefixed(2, GROUP_KEY), prefixed(3, empty))) == (
        b"group-id::GroupMetadata(groupId=group-id, generation=0, protocolType=None, currentState=Empty, "
        b"members=HashMap())\n")
    assert fmt.format(rec(prefixed(2, GROUP_KEY), None)) == b"group-id::NULL\n"

    txn = build_formatter("kafka.coordinator.transaction.TransactionLog$TransactionLogMessageFormatter", {})
    ongoing = t.TransactionLogValue(
        producer_id=1000, producer_epoch=0, transaction_timeout_ms=60000, transaction_status=1,
        transaction_partitions=[t.TransactionLogValue.PartitionsSchema(topic="tx-out", partition_ids=[0, 1])],
        transaction_last_update_timestamp_ms=20, transaction_start_timestamp_ms=10)
    assert txn.format(rec(prefixed(0, TXN_KEY), prefixed(1, ongoing))) == (
        b"TXNID::TransactionMetadata(transactionalId=TXNID, producerId=1000, producerEpoch=0, txnTimeoutMs=60000, "
        b"state=Ongoing, pendingState=None, topicPartitions=HashSet(tx-out-0, tx-out-1), txnStartTimestamp=10, "
        b"txnLastUpdateTimestamp=20)\n")
    assert txn.format(rec(prefixed(0, TXN_KEY), None)) == b"TXNID::NULL\n"
    assert txn.format(rec(prefixed(3, TXN_KEY, 0), None)) == b"unknown::version=3\n"


def test_scala_hash_order_buckets_by_improved_hash() -> None:
    # "a".."c" hash 97..99: buckets 1..3 of 16, in that order whatever the insertion order
    assert scala_hash_order(["c", "a", "b"], java_string_hash) == ["a", "b", "c"]
    # 11 entries fit 16 buckets (16 lands in bucket 0); the 12th doubles the table to 32 (16 in bucket 16)
    assert scala_hash_order(list(range(16, 5, -1)), lambda i: i) == [16, *range(6, 16)]
    assert scala_hash_order(list(range(16, 4, -1)), lambda i: i) == list(range(5, 17))


def test_deprecation_warnings_name_the_replacement() -> None:
    assert deprecation_warning("kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter") == (
        "WARNING: kafka.coordinator.group.GroupMetadataManager$OffsetsMessageFormatter is deprecated and will be "
        "removed in the next major release. Please use org.apache.kafka.tools.consumer.OffsetsMessageFormatter "
        "instead")
    assert deprecation_warning(OFFSETS) is None
