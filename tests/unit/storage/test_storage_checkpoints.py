"""Checkpoint files, partition.metadata, meta.properties and the leader-epoch cache, byte for byte."""

from __future__ import annotations

import os
import uuid

import pytest

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.storage.checkpoint_file import (
    LeaderEpochCheckpointFile,
    OffsetCheckpointFile,
    PartitionMetadataFile,
    uuid_from_kafka_string,
    uuid_to_kafka_string,
)
from kafkapy.storage.errors import KafkaStorageError
from kafkapy.storage.leader_epoch_file_cache import LeaderEpochFileCache
from kafkapy.storage.meta_properties import (
    MetaProperties,
    generate_directory_id,
    read_clean_shutdown_file,
    read_java_properties,
    read_meta_properties,
    write_clean_shutdown_file,
    write_meta_properties,
)


def test_offset_checkpoint_exact_bytes_and_round_trip(tmp_path):
    path = str(tmp_path / "recovery-point-offset-checkpoint")
    f = OffsetCheckpointFile(path)
    assert f.read() == {}
    offsets = {TopicPartition("orders", 1): 42, TopicPartition("orders", 0): 7, TopicPartition("__consumer_offsets", 3): 0}
    f.write(offsets)
    assert open(path, "rb").read() == b"0\n3\n__consumer_offsets 3 0\norders 0 7\norders 1 42\n"
    assert f.read() == offsets
    assert not os.path.exists(path + ".tmp")
    f.write({})
    assert open(path, "rb").read() == b"0\n0\n"


@pytest.mark.parametrize("content", [b"1\n0\n", b"0\n2\nt 0 5\n", b"0\n1\nt 0\n", b"0\n1\nt x 5\n", b"zero\n"])
def test_malformed_checkpoint_raises_storage_error(tmp_path, content):
    path = tmp_path / "cp"
    path.write_bytes(content)
    with pytest.raises(KafkaStorageError):
        OffsetCheckpointFile(str(path)).read()


def test_leader_epoch_checkpoint_bytes(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    LeaderEpochCheckpointFile(path).write([(0, 0), (3, 120)])
    assert open(path, "rb").read() == b"0\n2\n0 0\n3 120\n"
    assert LeaderEpochCheckpointFile(path).read() == [(0, 0), (3, 120)]


def test_leader_epoch_cache_semantics(tmp_path):
    path = str(tmp_path / "leader-epoch-checkpoint")
    cache = LeaderEpochFileCache(LeaderEpochCheckpointFile(path))
    assert cache.assign(1, 0)
    assert not cache.assign(1, 5)  # same epoch, later offset: no change
    assert cache.assign(2, 10)
    assert cache.assign(4, 20)
    assert open(path, "rb").read() == b"0\n3\n1 0\n2 10\n4 20\n"
    assert cache.epoch_for_offset(9) == 1 and cache.epoch_for_offset(10) == 2 and cache.epoch_for_offset(99) == 4
    assert cache.end_offset_for(2, 30) == (2, 20)
    assert cache.end_offset_for(3, 30) == (2, 20)
    assert cache.end_offset_for(4, 30) == (4, 30)
    assert cache.end_offset_for(0, 30) == (0, 0)
    assert cache.end_offset_for(-1, 30) == (-1, -1)
    assert cache.end_offset_for(5, 30) == (-1, -1)
    cache.assign(3, 15)  # a lower epoch with a lower offset drops the later entries
    assert cache.epoch_entries() == [(1, 0), (2, 10), (3, 15)]
    cache.truncate_from_end(12)
    assert cache.epoch_entries() == [(1, 0), (2, 10)]
    cache.truncate_from_start(11)
    assert cache.epoch_entries() == [(2, 11)]
    assert LeaderEpochFileCache(LeaderEpochCheckpointFile(path)).epoch_entries() == [(2, 11)]
    cache.clear_and_flush()
    assert open(path, "rb").read() == b"0\n0\n"


def test_kafka_uuid_strings_and_partition_metadata(tmp_path):
    topic_id = uuid.UUID("0f6f8f3e-6a1b-4bd1-9c1e-3f4f5a6b7c8d")
    text = uuid_to_kafka_string(topic_id)
    assert len(text) == 22 and "=" not in text and uuid_from_kafka_string(text) == topic_id
    assert uuid_to_kafka_string(uuid.UUID(int=0)) == "AAAAAAAAAAAAAAAAAAAAAA"
    path = str(tmp_path / "partition.metadata")
    PartitionMetadataFile(path).write(topic_id)
    assert open(path, "rb").read() == f"version: 0\ntopic_id: {text}\n".encode()
    assert PartitionMetadataFile(path).read() == topic_id


def test_meta_properties_kraft_and_zk(tmp_path):
    dir_id = generate_directory_id()
    assert len(dir_id) == 22 and not dir_id.startswith("-")
    write_meta_properties(str(tmp_path), MetaProperties(1, "MkU3OEVBNTcwNTJENDM2Qk", 3, dir_id))
    text = (tmp_path / "meta.properties").read_text()
    lines = text.splitlines()
    assert lines[0] == "#" and lines[1].startswith("#")
    assert lines[2:] == ["node.id=3", f"directory.id={dir_id}", "version=1", "cluster.id=MkU3OEVBNTcwNTJENDM2Qk"]
    assert read_meta_properties(str(tmp_path)) == MetaProperties(1, "MkU3OEVBNTcwNTJENDM2Qk", 3, dir_id)
    zk = tmp_path / "zk"
    zk.mkdir()
    write_meta_properties(str(zk), MetaProperties(0, "abc", 7))
    assert "broker.id=7" in (zk / "meta.properties").read_text()
    assert read_meta_properties(str(zk)) == MetaProperties(0, "abc", 7)
    assert read_java_properties("# c\n! c2\nkey = value\nother:x\n") == {"key": "value", "other": "x"}


def test_clean_shutdown_marker(tmp_path):
    assert read_clean_shutdown_file(str(tmp_path)) is None
    write_clean_shutdown_file(str(tmp_path), 12)
    assert (tmp_path / ".kafka_cleanshutdown").read_bytes() == b'{"version":"0","broker_epoch":"12"}'
    assert read_clean_shutdown_file(str(tmp_path)) == 12
