"""kafkajs (Node.js client, pinned in tests/interop/js/package-lock.json) against an in-process kafkapy broker.

`node js/kafkajs_roundtrip.js BOOTSTRAP TOPIC` creates a 3-partition topic, produces 1,000 keyed
messages with headers in 10 acks=all sends (the 4th gzip-compressed), reads them back in a consumer
group, fetches topic and group offsets and deletes the topic; it prints a JSON summary. This test
rebuilds every expected value on its own: the partition of each key (Kafka's murmur2, which kafkajs 2.x
uses by default), per-partition offsets and digests of the consumed lines, and the codec of every
stored batch, read from the deleted partition directories the broker keeps for
log.segment.delete.delay.ms. It also pins the API versions kafkajs negotiates and that the broker
logged no warning while serving it.

Skipped only when node or npm is not installed; `make test-deps` runs `npm ci` in tests/interop/js,
and this test runs it too when node_modules is missing.
"""

from __future__ import annotations

import glob
import hashlib
import json
import logging
import os
import shutil
import struct
import subprocess
import threading
from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy.client.partitioner import partition_for_key
from kafkapy.protocol.api_keys import ApiKey

JS_DIR = os.path.join(os.path.dirname(__file__), "js")
SCRIPT = os.path.join(JS_DIR, "kafkajs_roundtrip.js")
N, BATCHES, GZIP_BATCH, PARTITIONS = 1000, 10, 3, 3
NODE_DEADLINE_S = 90  # the script exits by itself after 60 s
# What kafkajs 2.2.4 negotiates from our ApiVersions answer: its highest version of each API.
NEGOTIATED = {"API_VERSIONS": 2, "METADATA": 6, "CREATE_TOPICS": 3, "PRODUCE": 7, "FIND_COORDINATOR": 2,
              "JOIN_GROUP": 5, "SYNC_GROUP": 3, "HEARTBEAT": 3, "FETCH": 11, "LIST_OFFSETS": 3,
              "OFFSET_COMMIT": 5, "OFFSET_FETCH": 4, "LEAVE_GROUP": 3, "DELETE_TOPICS": 1}

pytestmark = pytest.mark.skipif(shutil.which("node") is None or shutil.which("npm") is None,
                                reason="node and npm are not installed (needed to run kafkajs)")


@pytest.fixture(scope="module")
def kafkajs_installed() -> str:
    if not os.path.isfile(os.path.join(JS_DIR, "node_modules", "kafkajs", "package.json")):
        proc = subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=JS_DIR, capture_output=True,
                              text=True, timeout=300)
        assert proc.returncode == 0, f"npm ci failed in {JS_DIR}:\n{proc.stdout}\n{proc.stderr}"
    with open(os.path.join(JS_DIR, "node_modules", "kafkajs", "package.json")) as f:
        return json.load(f)["version"]


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    log_dir = str(tmp_path_factory.mktemp("kafkajs"))
    props = {"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "2", "num.io.threads": "4",
             "log.dirs": log_dir, "group.initial.rebalance.delay.ms": "0", "offsets.topic.num.partitions": "3",
             "auto.create.topics.enable": "false",
             # Deleted partitions stay on disk (renamed *-delete) long enough to inspect their batches.
             "log.segment.delete.delay.ms": "600000"}
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    # Record (api, version) of every request the broker handles.
    used: dict[str, set[int]] = {}
    lock = threading.Lock()
    handle = server.apis.handle

    def recording_handle(request: Any) -> None:
        with lock:
            used.setdefault(ApiKey(request.api_key).name, set()).add(request.api_version)
        handle(request)

    server.apis.handle = recording_handle
    try:
        yield server, log_dir, used
    finally:
        server.shutdown()


def message(i: int) -> tuple[str, str, dict[str, str]]:
    """The script's message i (key, value, headers)."""
    return f"key-{i}", f"value-{i}|" * (1 + i % 5), {"seq": str(i), "origin": "kafkajs"}


def expected_partitions() -> dict[int, list[int]]:
    """Message indexes per partition, in send (= offset) order."""
    out: dict[int, list[int]] = {p: [] for p in range(PARTITIONS)}
    for i in range(N):
        out[partition_for_key(message(i)[0].encode(), PARTITIONS)].append(i)
    return out


def digest(indexes: list[int]) -> str:
    h = hashlib.sha256()
    for offset, i in enumerate(indexes):
        key, value, headers = message(i)
        hs = ",".join(f"{k}={headers[k]}" for k in sorted(headers))
        h.update(f"{offset}|{key}|{value}|{hs}\n".encode())
    return h.hexdigest()


def stored_batches(log_dir: str, topic: str, partition: int) -> list[tuple[int, int, int]]:
    """(base offset, record count, codec) of every batch in the partition's (deleted) log directory."""
    dirs = glob.glob(os.path.join(log_dir, f"{topic}-{partition}.*-delete")) + \
        glob.glob(os.path.join(log_dir, f"{topic}-{partition}"))
    assert len(dirs) == 1, dirs
    out = []
    for path in sorted(glob.glob(os.path.join(dirs[0], "*.log"))):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 61 <= len(data):
            base_offset, length = struct.unpack_from(">qi", data, pos)
            (attributes,) = struct.unpack_from(">h", data, pos + 21)
            (count,) = struct.unpack_from(">i", data, pos + 57)
            out.append((base_offset, count, attributes & 0x7))
            pos += 12 + length
    return out


def test_kafkajs_roundtrip(broker: Any, kafkajs_installed: str, caplog: pytest.LogCaptureFixture) -> None:
    server, log_dir, used = broker
    caplog.set_level(logging.WARNING)
    assert kafkajs_installed == "2.2.4"
    topic = "kafkajs-roundtrip"
    proc = subprocess.run(["node", SCRIPT, f"127.0.0.1:{server.bound_port()}", topic], capture_output=True,
                          text=True, timeout=NODE_DEADLINE_S, env=dict(os.environ, KAFKAJS_NO_PARTITIONER_WARNING="1"))
    assert proc.returncode == 0, f"kafkajs_roundtrip.js exited {proc.returncode}:\n{proc.stderr[-5000:]}"
    summary = json.loads(proc.stdout)

    by_partition = expected_partitions()
    ends = {p: len(ix) for p, ix in by_partition.items()}
    assert all(ends.values())
    assert summary["created"] is True
    assert summary["leaders"] == [[p, 0] for p in range(PARTITIONS)]
    assert summary["consumedTotal"] == N
    per_batch = N // BATCHES
    for p, indexes in by_partition.items():
        got = summary["partitions"][str(p)]
        base_offsets = [sum(1 for i in indexes if i < b * per_batch) for b in range(BATCHES)]
        assert got == {"count": ends[p], "first": 0, "last": ends[p] - 1, "contiguous": True,
                       "digest": digest(indexes), "baseOffsets": base_offsets}, p
        counts = [sum(1 for i in indexes if b * per_batch <= i < (b + 1) * per_batch) for b in range(BATCHES)]
        codecs = [1 if b == GZIP_BATCH else 0 for b in range(BATCHES)]
        assert stored_batches(log_dir, topic, p) == list(zip(base_offsets, counts, codecs, strict=True)), p
    assert summary["topicOffsets"] == [{"partition": p, "low": 0, "high": ends[p], "offset": ends[p]}
                                       for p in range(PARTITIONS)]
    assert summary["groupOffsets"] == [{"topic": topic, "partition": p, "offset": ends[p]}
                                       for p in range(PARTITIONS)]
    assert summary["topicRemainsAfterDelete"] is False

    required = set(NEGOTIATED) - {"HEARTBEAT"}  # a heartbeat is due only every 3 s
    assert required <= set(used) <= set(NEGOTIATED)
    assert {api: sorted(v) for api, v in used.items()} == {api: [NEGOTIATED[api]] for api in used}
    warned = [f"{r.name}: {r.getMessage()}" for r in caplog.records
              if r.name.startswith("kafka.") and r.levelno >= logging.WARNING]
    assert warned == []
