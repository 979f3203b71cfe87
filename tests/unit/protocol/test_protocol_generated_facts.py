"""Generated facts: errors, naming, legacy merge, unstable flags, and the generator's --check."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import pytest

from kafkapy.common.errors import (
    ERRORS_BY_CODE,
    CorruptMessageError,
    ErrorCode,
    KafkaError,
    UnknownServerError,
    UnknownTopicOrPartitionError,
    UnsupportedVersionError,
    error_for_code,
)
from kafkapy.protocol.messages import (
    REQUEST_CLASSES,
    RESPONSE_CLASSES,
    ConsumerProtocolSubscription,
    DescribeClusterResponse,
    FetchRequest,
    InitProducerIdRequest,
    LeaderAndIsrRequest,
    MetadataResponse,
    OffsetCommitKey,
    OffsetCommitValue,
    ProduceRequest,
    ShareFetchRequest,
)
from kafkapy.protocol.messages.group_coordinator import (
    KEY_CLASSES_BY_RECORD_TYPE,
    VALUE_CLASSES_BY_RECORD_TYPE,
)

REPO = Path(__file__).resolve().parents[3]


def test_errors() -> None:
    assert UnknownTopicOrPartitionError.code == 3 and UnknownTopicOrPartitionError.retriable
    assert UnknownTopicOrPartitionError.name == "UNKNOWN_TOPIC_OR_PARTITION"
    assert CorruptMessageError.code == 2 and UnsupportedVersionError.code == 35
    assert UnknownServerError.code == -1 and not UnknownServerError.retriable
    assert error_for_code(3) is UnknownTopicOrPartitionError
    assert error_for_code(12345) is UnknownServerError
    assert ERRORS_BY_CODE[35] is UnsupportedVersionError and 0 not in ERRORS_BY_CODE
    assert len(ERRORS_BY_CODE) == 133
    assert ErrorCode.NONE == 0 and ErrorCode.CORRUPT_MESSAGE == 2
    with pytest.raises(ValueError):
        error_for_code(0)
    err = UnknownTopicOrPartitionError("no such topic")
    assert isinstance(err, KafkaError) and err.message == "no such topic" and err.code == 3
    assert UnknownTopicOrPartitionError().message is None


def test_naming() -> None:
    topic = MetadataResponse.MetadataResponseTopic()
    assert topic.is_internal is False and topic.topic_id.int == 0
    assert MetadataResponse().cluster_id is None
    assert LeaderAndIsrRequest().is_kraft_controller is False
    assert InitProducerIdRequest().enable_2pc is False
    assert DescribeClusterResponse.DescribeClusterBroker().is_fenced is False
    p = ProduceRequest()
    assert (p.transactional_id, p.acks, p.timeout_ms, p.topic_data) == (None, 0, 0, [])
    assert FetchRequest().max_bytes == 0x7FFFFFFF


def test_legacy_merge_and_unstable_versions() -> None:
    assert ProduceRequest.VALID_VERSIONS == (0, 12)
    assert FetchRequest.VALID_VERSIONS == (0, 17)
    assert REQUEST_CLASSES[4] is LeaderAndIsrRequest and LeaderAndIsrRequest.VALID_VERSIONS == (0, 7)
    assert InitProducerIdRequest.LATEST_VERSION_UNSTABLE and ShareFetchRequest.LATEST_VERSION_UNSTABLE
    assert RESPONSE_CLASSES[22].LATEST_VERSION_UNSTABLE  # InitProducerIdResponse follows its request
    assert not ProduceRequest.LATEST_VERSION_UNSTABLE
    assert set(REQUEST_CLASSES) == set(RESPONSE_CLASSES) and len(REQUEST_CLASSES) == 91


def test_data_and_coordinator_schemas() -> None:
    assert ConsumerProtocolSubscription.API_KEY == -1 and ConsumerProtocolSubscription.VALID_VERSIONS == (0, 3)
    assert OffsetCommitKey.RECORD_TYPE == 1 and KEY_CLASSES_BY_RECORD_TYPE[1] is OffsetCommitKey
    assert VALUE_CLASSES_BY_RECORD_TYPE[1] is OffsetCommitValue
    key = OffsetCommitKey(group="g", topic="t", partition=3)
    assert key.encode(0) == bytes.fromhex("0001") + b"g" + bytes.fromhex("0001") + b"t" + bytes.fromhex("00000003")


def test_generator_check_passes_on_checked_in_files() -> None:
    r = subprocess.run([sys.executable, str(REPO / "scripts" / "gen_protocol.py"), "--check"],
                       capture_output=True, text=True, timeout=60)
    assert r.returncode == 0, r.stdout + r.stderr


def test_generator_check_detects_drift(tmp_path: Path) -> None:
    sys.path.insert(0, str(REPO / "scripts"))
    try:
        import gen_protocol
    finally:
        sys.path.pop(0)
    assert gen_protocol.snake("ClusterId") == "cluster_id"
    assert gen_protocol.snake("isKRaftController") == "is_kraft_controller"
    assert gen_protocol.snake("V3AndBelowTopics") == "v3_and_below_topics"
    assert gen_protocol.snake("ApiKeys") == "api_keys"
    files = gen_protocol.generate(gen_protocol.specs_dir())
    again = gen_protocol.generate(gen_protocol.specs_dir())
    assert files == again  # deterministic
    produce = gen_protocol.MESSAGES_DIR / "produce.py"
    assert produce.read_text() == files[produce]
    assert "about" not in files[produce].lower().replace("api key", "")
