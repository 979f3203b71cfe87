"""dump-log over logs written by transactions (confluent-kafka producer against an in-process broker): the
data and COMMIT/ABORT control batches with --print-data-log exactly as Kafka's DumpLogSegments prints them,
the .txnindex entry of the aborted transaction, the producer .snapshot written at shutdown, and
__transaction_state records decoded with --transaction-log-decoder."""

from __future__ import annotations

import glob
import json
import os
import re
import sys
import time
from pathlib import Path

import pytest

confluent_kafka = pytest.importorskip("confluent_kafka")
from confluent_kafka import Producer  # noqa: E402
from confluent_kafka.admin import AdminClient, NewTopic  # noqa: E402

from kafkapy.common.topic_partition import TopicPartition as BrokerTopicPartition  # noqa: E402

sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "interop"))
from txn_support import start_txn_broker  # noqa: E402


@pytest.fixture(scope="module")
def txn_log_dir(tmp_path_factory) -> str:
    log_dir = str(tmp_path_factory.mktemp("dump-txn"))
    broker = start_txn_broker(log_dir)
    try:
        admin = AdminClient({"bootstrap.servers": broker.bootstrap})
        for f in admin.create_topics([NewTopic("dl", 1, 1)]).values():
            f.result(30)
        p = Producer({"bootstrap.servers": broker.bootstrap, "transactional.id": "dl-txn"})
        p.init_transactions(30)
        p.begin_transaction()
        p.produce("dl", b"v1", key=b"k1")
        p.commit_transaction(30)
        p.begin_transaction()
        p.produce("dl", b"v2", key=b"k2")
        p.flush(10)
        p.abort_transaction(30)
        log = broker.server.replica_manager.get_partition(BrokerTopicPartition("dl", 0)).log
        deadline = time.monotonic() + 10
        while log.log_end_offset < 4 and time.monotonic() < deadline:
            time.sleep(0.05)
    finally:
        broker.server.shutdown()
    return log_dir


def test_control_batches_and_transactional_data(cli, txn_log_dir) -> None:
    seg = os.path.join(txn_log_dir, "dl-0", f"{0:020d}.log")
    r = cli("dump-log", "--files", seg, "--print-data-log")
    assert r.rc == 0, r.err
    lines = [re.sub(r"(CreateTime: )\d+", r"\g<1>T", re.sub(r"crc: \d+", "crc: C", line)) for line in r.lines]
    assert lines[2:] == [
        "baseOffset: 0 lastOffset: 0 count: 1 baseSequence: 0 lastSequence: 0 producerId: 0 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 0 CreateTime: T size: 72 magic: 2 compresscodec: none crc: C isvalid: true",
        "| offset: 0 CreateTime: T keySize: 2 valueSize: 2 sequence: 0 headerKeys: [] key: k1 payload: v1",
        "baseOffset: 1 lastOffset: 1 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty "
        "position: 72 CreateTime: T size: 78 magic: 2 compresscodec: none crc: C isvalid: true",
        "| offset: 1 CreateTime: T keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: COMMIT "
        "coordinatorEpoch: 0",
        "baseOffset: 2 lastOffset: 2 count: 1 baseSequence: 1 lastSequence: 1 producerId: 0 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: true isControl: false deleteHorizonMs: OptionalLong.empty "
        "position: 150 CreateTime: T size: 72 magic: 2 compresscodec: none crc: C isvalid: true",
        "| offset: 2 CreateTime: T keySize: 2 valueSize: 2 sequence: 1 headerKeys: [] key: k2 payload: v2",
        "baseOffset: 3 lastOffset: 3 count: 1 baseSequence: -1 lastSequence: -1 producerId: 0 producerEpoch: 0 "
        "partitionLeaderEpoch: 0 isTransactional: true isControl: true deleteHorizonMs: OptionalLong.empty "
        "position: 222 CreateTime: T size: 78 magic: 2 compresscodec: none crc: C isvalid: true",
        "| offset: 3 CreateTime: T keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] endTxnMarker: ABORT "
        "coordinatorEpoch: 0",
    ]


def test_txnindex_and_snapshot(cli, txn_log_dir) -> None:
    r = cli("dump-log", "--files", os.path.join(txn_log_dir, "dl-0", f"{0:020d}.txnindex"))
    assert r.rc == 0, r.err
    assert r.lines[1] == "version: 0 producerId: 0 firstOffset: 2 lastOffset: 3 lastStableOffset: 4"
    r = cli("dump-log", "--files", os.path.join(txn_log_dir, "dl-0", f"{4:020d}.snapshot"))
    assert r.rc == 0, r.err
    assert r.lines[1].startswith("producerId: 0 producerEpoch: 0 coordinatorEpoch: 0 currentTxnFirstOffset: "
                                 "OptionalLong.empty ")


def test_transaction_log_decoder(cli, txn_log_dir) -> None:
    segments = [f for f in glob.glob(os.path.join(txn_log_dir, "__transaction_state-*", "*.log"))
                if os.path.getsize(f)]
    assert len(segments) == 1
    r = cli("dump-log", "--files", segments[0], "--transaction-log-decoder")
    assert r.rc == 0, r.err
    records = [line for line in r.lines if line.startswith("| offset: ")]
    states = []
    for line in records:
        key = json.loads(line.split(" key: ", 1)[1].split(" payload: ", 1)[0])
        payload = json.loads(line.split(" payload: ", 1)[1])
        assert key == {"type": "0", "data": {"transactionalId": "dl-txn"}}
        states.append(payload["data"]["transactionStatus"])
    # Empty, Ongoing, PrepareCommit, CompleteCommit, Ongoing, PrepareAbort, CompleteAbort
    assert states == [0, 1, 2, 4, 1, 3, 5]
