"""kafkapy dump-log over real segment files: Kafka's exact lines, and exactly what is wrong in corrupt copies.

Segments are built from record/ batches with the offsets a log would give them (and, where storage/ is
importable, written by kafkapy.storage.Log itself); indexes are written in Kafka's byte format.
"""

from __future__ import annotations

import json
import os
import struct
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app
from kafkapy.record.control_record import ControlRecordType, build_end_txn_marker_batch
from kafkapy.record.legacy_record import LegacyRecordBatchBuilder
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

T0 = 1700000000000


def dump(capsys, *argv: str) -> tuple[int, list[str], list[str]]:
    """`kafkapy dump-log <argv>` in-process through the Typer app (typer.testing.CliRunner)."""
    r = CliRunner().invoke(app, ["dump-log", *argv], catch_exceptions=False, prog_name="kafkapy")
    return r.exit_code, r.stdout.splitlines(), r.stderr.splitlines()


def crc_of(batch: bytes) -> int:
    return struct.unpack_from(">I", batch, 17)[0]


def batch_a(base: int = 0) -> bytes:
    """3 records, no compression: null key, a header on the last."""
    b = MemoryRecordsBuilder(base_offset=base, partition_leader_epoch=2)
    b.append(T0, None, b"hello")
    b.append(T0 + 1, b"k1", b"hello")
    b.append(T0 + 2, b"k2", b"hello", [("h1", b"x"), ("h2", None)])
    return b.build()


def batch_b(base: int = 3) -> bytes:
    """2 records, gzip, idempotent producer 7 epoch 0 from sequence 10."""
    b = MemoryRecordsBuilder(base_offset=base, compression=1, producer_id=7, producer_epoch=0, base_sequence=10,
                             partition_leader_epoch=2)  # fmt: skip
    b.append(T0 + 1000, b"key", b"v0")
    b.append(T0 + 1001, b"key", None)
    return b.build()


def batch_line(batch: bytes, *, position: int, base: int, last: int, count: int, codec: str = "none",
               base_seq: int = -1, last_seq: int = -1, pid: int = -1, epoch: int = -1, ple: int = 2,
               txn: bool = False, control: bool = False, max_ts: int, valid: bool = True) -> str:  # fmt: skip
    return (
        f"baseOffset: {base} lastOffset: {last} count: {count} baseSequence: {base_seq} lastSequence: {last_seq} "
        f"producerId: {pid} producerEpoch: {epoch} partitionLeaderEpoch: {ple} isTransactional: {str(txn).lower()} "
        f"isControl: {str(control).lower()} deleteHorizonMs: OptionalLong.empty position: {position} "
        f"CreateTime: {max_ts} size: {len(batch)} magic: 2 compresscodec: {codec} crc: {crc_of(batch)} "
        f"isvalid: {str(valid).lower()}"
    )


@pytest.fixture
def segment(tmp_path: Path) -> tuple[Path, bytes, bytes]:
    a, b = batch_a(), batch_b()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(a + b)
    return path, a, b


def test_print_data_log_exact_lines(segment, capsys):
    path, a, b = segment
    rc, out, err = dump(capsys, "--files", str(path), "--print-data-log")
    assert (rc, err) == (0, [])
    assert out == [
        f"Dumping {path}",
        "Log starting offset: 0",
        batch_line(a, position=0, base=0, last=2, count=3, max_ts=T0 + 2),
        f"| offset: 0 CreateTime: {T0} keySize: -1 valueSize: 5 sequence: -1 headerKeys: [] payload: hello",
        f"| offset: 1 CreateTime: {T0 + 1} keySize: 2 valueSize: 5 sequence: -1 headerKeys: [] key: k1 payload: hello",
        f"| offset: 2 CreateTime: {T0 + 2} keySize: 2 valueSize: 5 sequence: -1 headerKeys: [h1,h2] key: k2 payload: hello",
        batch_line(b, position=len(a), base=3, last=4, count=2, codec="gzip", base_seq=10, last_seq=11, pid=7,
                   epoch=0, max_ts=T0 + 1001),  # fmt: skip
        f"| offset: 3 CreateTime: {T0 + 1000} keySize: 3 valueSize: 2 sequence: 10 headerKeys: [] key: key payload: v0",
        f"| offset: 4 CreateTime: {T0 + 1001} keySize: 3 valueSize: -1 sequence: 11 headerKeys: [] key: key",
    ]


def test_shallow_iteration_prints_batches_only(segment, capsys):
    path, a, b = segment
    rc, out, _ = dump(capsys, "--files", str(path))
    assert rc == 0 and len(out) == 4 and out[2].startswith("baseOffset: 0 ") and out[3].startswith("baseOffset: 3 ")


def test_skip_record_metadata(segment, capsys):
    path, _, _ = segment
    _, out, _ = dump(capsys, "--files", str(path), "--print-data-log", "--skip-record-metadata")
    assert [line for line in out if line.startswith("|")] == [
        "| payload: hello", "| key: k1 payload: hello", "| key: k2 payload: hello", "| key: key payload: v0",
        "| key: key",
    ]


def test_deep_iteration_without_contents(segment, capsys):
    path, _, _ = segment
    _, out, _ = dump(capsys, "--files", str(path), "--deep-iteration")
    assert out[3] == f"| offset: 0 CreateTime: {T0} keySize: -1 valueSize: 5 sequence: -1 headerKeys: []"


def test_decoders(tmp_path, capsys):
    b = MemoryRecordsBuilder()
    b.append(T0, struct.pack(">i", -5), struct.pack(">q", 2**40))
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    _, out, _ = dump(capsys, "--files", str(path), "--key-decoder-class", "org.apache.kafka.tools.api.IntegerDecoder",
                     "--value-decoder-class=kafka.serializer.LongDecoder")  # fmt: skip
    assert out[3].endswith(" key: -5 payload: 1099511627776")
    rc, out, err = dump(capsys, "--files", str(path), "--value-decoder-class", "com.example.MyDecoder")
    assert rc == 1 and out == [f"Dumping {path}"]
    assert err == ["Error: Failed to load decoder class com.example.MyDecoder"]


def test_non_consecutive_offsets_are_reported_as_kafka_does(tmp_path, capsys):
    # A compacted-looking segment at base 100: Kafka starts its check from -1, so "-1 is followed by 100"
    # is part of its report too.
    a = batch_a(base=100)
    b = batch_b(base=110)
    path = tmp_path / "00000000000000000100.log"
    path.write_bytes(a + b)
    rc, out, err = dump(capsys, "--files", str(path), "--deep-iteration")
    assert rc == 0 and out[1] == "Log starting offset: 100"
    assert err == [f"Non-consecutive offsets in {path}", "  -1 is followed by 100", "  102 is followed by 110"]


def test_flipped_byte_makes_the_batch_invalid(segment, tmp_path, capsys):
    path, a, b = segment
    data = bytearray(path.read_bytes())
    flip = data.index(b"hello", 61) + 1  # inside the first record's value
    data[flip] ^= 0xFF
    bad = tmp_path / "corrupt" / "00000000000000000000.log"
    bad.parent.mkdir()
    bad.write_bytes(bytes(data))
    rc, out, err = dump(capsys, "--files", str(bad), "--print-data-log")
    assert (rc, err) == (0, [])
    assert out[2] == batch_line(a, position=0, base=0, last=2, count=3, max_ts=T0 + 2, valid=False)
    assert out[3].endswith("payload: h\ufffdllo")  # the stored bytes, decoded as Kafka's StringDecoder does
    assert out[6] == batch_line(b, position=len(a), base=3, last=4, count=2, codec="gzip", base_seq=10,
                                last_seq=11, pid=7, epoch=0, max_ts=T0 + 1001)  # fmt: skip


def test_truncated_tail_is_reported_as_invalid_bytes(segment, tmp_path, capsys):
    path, a, b = segment
    torn = tmp_path / "torn" / "00000000000000000000.log"
    torn.parent.mkdir()
    torn.write_bytes(path.read_bytes()[:-10])
    rc, out, err = dump(capsys, "--files", str(torn))
    assert (rc, err) == (0, [])
    assert out == [
        f"Dumping {torn}",
        "Log starting offset: 0",
        batch_line(a, position=0, base=0, last=2, count=3, max_ts=T0 + 2),
        f"Found {len(b) - 10} invalid bytes at the end of 00000000000000000000.log",
    ]


def test_max_bytes_limits_the_read_without_an_invalid_bytes_report(segment, capsys):
    path, a, _ = segment
    rc, out, err = dump(capsys, "--files", str(path), "--max-bytes", str(len(a) + 20))
    assert (rc, err) == (0, [])
    assert out == [f"Dumping {path}", "Log starting offset: 0",
                   batch_line(a, position=0, base=0, last=2, count=3, max_ts=T0 + 2)]  # fmt: skip


def test_zero_filled_tail_stops_with_kafkas_error(segment, tmp_path, capsys):
    path, a, b = segment
    zeroed = tmp_path / "z" / "00000000000000000000.log"
    zeroed.parent.mkdir()
    zeroed.write_bytes(path.read_bytes() + bytes(64))
    rc, out, err = dump(capsys, "--files", str(zeroed))
    assert rc == 1 and len(out) == 4
    assert err == [f"Error: Found record size 0 smaller than minimum record overhead (14) in file {zeroed}."]


def write_index(path: Path, base: int, entries: list[tuple[int, int]], zero_tail: int = 0) -> None:
    path.write_bytes(b"".join(struct.pack(">ii", o - base, p) for o, p in entries) + bytes(8 * zero_tail))


def write_time_index(path: Path, base: int, entries: list[tuple[int, int]]) -> None:
    path.write_bytes(b"".join(struct.pack(">qi", ts, o - base) for ts, o in entries))


def test_offset_index_dump_and_mismatches(segment, capsys):
    path, a, b = segment
    index = path.with_suffix(".index")
    write_index(index, 0, [(2, 0), (4, len(a))], zero_tail=3)  # preallocated, untrimmed: zeros stop the dump
    rc, out, err = dump(capsys, "--files", str(index))
    assert (rc, out, err) == (0, [f"Dumping {index}", "offset: 2 position: 0", f"offset: 4 position: {len(a)}"], [])

    write_index(index, 0, [(1, 0), (3, len(a)), (4, len(a))])
    rc, out, err = dump(capsys, "--files", str(index))
    assert rc == 0 and out[1:] == ["offset: 1 position: 0", f"offset: 3 position: {len(a)}",
                                   f"offset: 4 position: {len(a)}"]  # fmt: skip
    assert err == [f"Mismatches in :{index}", "  Index offset: 3, log offset: 4", "  Index offset: 1, log offset: 2"]

    rc, out, err = dump(capsys, "--files", str(index), "--verify-index-only")
    assert out == [f"Dumping {index}"] and err[0] == f"Mismatches in :{index}"


def test_offset_index_empty_and_sanity_check(segment, capsys):
    path, a, _ = segment
    index = path.with_suffix(".index")
    index.write_bytes(b"")
    assert dump(capsys, "--files", str(index)) == (0, [f"Dumping {index}", f"{index} is empty."], [])
    write_index(index, 0, [(2, 0)])
    assert dump(capsys, "--files", str(index), "--index-sanity-check")[1] == [
        f"Dumping {index}", f"{index} passed sanity check."
    ]
    index.write_bytes(struct.pack(">ii", 2, 0) + b"\x00")
    rc, out, err = dump(capsys, "--files", str(index), "--index-sanity-check")
    assert rc == 1
    assert err == [f"Error: Index file {index} is corrupt, found 9 bytes which is neither positive nor a multiple of 8"]


def test_index_sanity_check_fails_an_index_lookups_cannot_use(segment, capsys):
    # Kafka's own two checks pass these (the last entry is not below the base offset, the size is whole
    # entries); the check fails them, exit 1, with one line naming the file and the entry.
    path, a, b = segment
    index = path.with_suffix(".index")
    write_index(index, 0, [(4, len(a)), (2, 0)], zero_tail=2)
    rc, out, err = dump(capsys, "--files", str(index), "--index-sanity-check")
    assert (rc, out) == (1, [f"Dumping {index}"])
    assert err == [f"Error: Corrupt index found, index file {index} has entry 1 (offset 2, position 0) out of "
                   f"order after (offset 4, position {len(a)})"]
    write_index(index, 0, [(2, 0), (4, len(a) + len(b) + 100)])
    rc, _, err = dump(capsys, "--files", str(index), "--index-sanity-check")
    assert rc == 1 and err == [f"Error: Corrupt index found, index file {index} has entry 1 (offset 4, position "
                               f"{len(a) + len(b) + 100}) beyond the log's {len(a) + len(b)} bytes"]
    write_index(index, 0, [(2, 0), (4, len(a))], zero_tail=5)  # a healthy preallocated index still passes
    assert dump(capsys, "--files", str(index), "--index-sanity-check") == (
        0, [f"Dumping {index}", f"{index} passed sanity check."], [])


def test_time_index_dump_and_reports(segment, capsys):
    path, a, b = segment
    index, tindex = path.with_suffix(".index"), path.with_suffix(".timeindex")
    write_index(index, 0, [(2, 0), (4, len(a))])
    write_time_index(tindex, 0, [(T0 + 2, 2), (T0 + 1001, 4)])
    assert dump(capsys, "--files", str(tindex)) == (
        0, [f"Dumping {tindex}", f"timestamp: {T0 + 2} offset: 2", f"timestamp: {T0 + 1001} offset: 4"], []
    )
    # wrong timestamp, an offset that is not a batch's last offset, and a timestamp going backwards
    write_time_index(tindex, 0, [(T0 + 5, 2), (T0 + 1, 3), (T0 + 1, 4)])
    rc, out, err = dump(capsys, "--files", str(tindex))
    assert rc == 0 and len(out) == 4
    assert err == [
        f"Found timestamp mismatch in :{tindex}",
        f"  Index timestamp: {T0 + 5}, log timestamp: {T0 + 2}",
        f"  Index timestamp: {T0 + 1}, log timestamp: {T0 + 1001}",
        f"Found out of order timestamp in :{tindex}",
        f"  Index timestamp: {T0 + 1}, Previously indexed timestamp: {T0 + 1}",
        "The following indexed offsets are not found in the log.",
        "Indexed offset: 3, found log offset: 4",
    ]
    write_time_index(tindex, 0, [(T0 + 9, 2), (T0 + 1, 4)])
    rc, _, err = dump(capsys, "--files", str(tindex), "--index-sanity-check")
    assert rc == 1 and err == [
        f"Error: Corrupt time index found, time index file ({tindex}) has non-zero size but the last timestamp "
        f"is {T0 + 1} which is less than the first timestamp {T0 + 9}"
    ]


def test_txn_index(tmp_path, capsys):
    path = tmp_path / "00000000000000000000.txnindex"
    path.write_bytes(struct.pack(">hqqqq", 0, 7, 3, 9, 2) + struct.pack(">hqqqq", 0, 8, 10, 12, 10))
    assert dump(capsys, "--files", str(path))[1] == [
        f"Dumping {path}",
        "version: 0 producerId: 7 firstOffset: 3 lastOffset: 9 lastStableOffset: 2",
        "version: 0 producerId: 8 firstOffset: 10 lastOffset: 12 lastStableOffset: 10",
    ]


def test_unknown_files_are_ignored_on_stderr(tmp_path, capsys):
    other = tmp_path / "leader-epoch-checkpoint"
    other.write_text("0\n")
    assert dump(capsys, "--files", str(other)) == (0, [f"Dumping {other}"], [f"Ignoring unknown file {other}"])


def test_transaction_control_batch(tmp_path, capsys):
    data = MemoryRecordsBuilder(base_offset=0, producer_id=9, producer_epoch=1, base_sequence=0,
                                is_transactional=True, partition_leader_epoch=2)  # fmt: skip
    data.append(T0, b"k", b"v")
    data = data.build()
    marker = build_end_txn_marker_batch(ControlRecordType.COMMIT, 9, 1, 3, T0 + 5, base_offset=1,
                                        partition_leader_epoch=2)  # fmt: skip
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(data + marker)
    rc, out, _ = dump(capsys, "--files", str(path), "--print-data-log")
    assert rc == 0
    assert out[2] == batch_line(data, position=0, base=0, last=0, count=1, base_seq=0, last_seq=0, pid=9, epoch=1,
                                txn=True, max_ts=T0)  # fmt: skip
    assert out[3] == f"| offset: 0 CreateTime: {T0} keySize: 1 valueSize: 1 sequence: 0 headerKeys: [] key: k payload: v"
    assert out[4] == batch_line(marker, position=len(data), base=1, last=1, count=1, pid=9, epoch=1, txn=True,
                                control=True, max_ts=T0 + 5)  # fmt: skip
    assert out[5] == (f"| offset: 1 CreateTime: {T0 + 5} keySize: 4 valueSize: 6 sequence: -1 headerKeys: [] "
                      "endTxnMarker: COMMIT coordinatorEpoch: 3")  # fmt: skip


def test_legacy_magic_0_and_1_segments(tmp_path, capsys):
    v1 = LegacyRecordBatchBuilder(1, base_offset=0)
    v1.append(T0, b"a", b"one")
    v1.append(T0 + 1, None, b"two")
    v1 = v1.build()
    v0 = LegacyRecordBatchBuilder(0, compression=1, base_offset=2)
    v0.append(-1, b"b", b"three")
    v0.append(-1, b"c", b"four")
    v0 = v0.build()
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(v1 + v0)
    rc, out, err = dump(capsys, "--files", str(path), "--print-data-log")
    assert (rc, err) == (0, [])

    def crc_at(buf: bytes, pos: int) -> int:
        return struct.unpack_from(">I", buf, pos + 12)[0]

    first_size = 12 + struct.unpack_from(">i", v1, 8)[0]
    assert out[2:5] == [
        f"offset: 0 position: 0 CreateTime: {T0} size: {first_size} magic: 1 compresscodec: none "
        f"crc: {crc_at(v1, 0)} isvalid: true",
        f"| offset: 0 CreateTime: {T0} keySize: 1 valueSize: 3 isValid: true crc: {crc_at(v1, 0)} key: a payload: one",
        f"offset: 1 position: {first_size} CreateTime: {T0 + 1} size: {len(v1) - first_size} magic: 1 "
        f"compresscodec: none crc: {crc_at(v1, first_size)} isvalid: true",
    ]
    assert out[6] == (f"offset: 3 position: {len(v1)} NoTimestampType: -1 size: {len(v0)} magic: 0 "
                      f"compresscodec: gzip crc: {crc_at(v0, 0)} isvalid: true")  # fmt: skip
    assert out[7].startswith("| offset: 2 NoTimestampType: -1 keySize: 1 valueSize: 5 isValid: true crc: ")
    assert out[7].endswith(" key: b payload: three")
    assert out[8].endswith(" key: c payload: four") and len(out) == 9


def test_output_json_one_object_per_line(segment, capsys):
    path, a, b = segment
    write_index(path.with_suffix(".index"), 0, [(3, len(a))])
    rc, out, err = dump(capsys, "--files", f"{path},{path.with_suffix('.index')}", "--print-data-log",
                        "--output", "json")  # fmt: skip
    assert rc == 0 and err == []
    objs = [json.loads(line) for line in out]
    assert [o["type"] for o in objs] == ["dumping", "logStartingOffset", "batch", "record", "record", "record",
                                         "batch", "record", "record", "dumping", "indexEntry", "indexMismatches"]  # fmt: skip
    assert objs[2] == {
        "type": "batch", "position": 0, "magic": 2, "baseOffset": 0, "lastOffset": 2, "count": 3,
        "baseSequence": -1, "lastSequence": -1, "producerId": -1, "producerEpoch": -1, "partitionLeaderEpoch": 2,
        "isTransactional": False, "isControl": False, "deleteHorizonMs": None, "timestampType": "CreateTime",
        "maxTimestamp": T0 + 2, "size": len(a), "compressCodec": "none", "crc": crc_of(a), "isValid": True,
    }  # fmt: skip
    assert objs[5] == {"type": "record", "offset": 2, "timestampType": "CreateTime", "timestamp": T0 + 2,
                       "keySize": 2, "valueSize": 5, "magic": 2, "sequence": -1, "headerKeys": ["h1", "h2"],
                       "key": "k2", "payload": "hello"}  # fmt: skip
    assert objs[-1] == {"type": "indexMismatches", "file": str(path.with_suffix(".index")), "mismatches": [[3, 4]]}


def test_offsets_decoder(tmp_path, capsys):
    gc = pytest.importorskip("kafkapy.protocol.messages.group_coordinator")
    data = pytest.importorskip("kafkapy.protocol.messages.data")
    key = struct.pack(">h", 1) + gc.OffsetCommitKey(group="g1", topic="orders", partition=0).encode(0)
    value = struct.pack(">h", 3) + gc.OffsetCommitValue(offset=42, leader_epoch=5, metadata="m",
                                                         commit_timestamp=T0).encode(3)  # fmt: skip
    sub = struct.pack(">h", 0) + data.ConsumerProtocolSubscription(topics=["orders"]).encode(0)
    member = gc.GroupMetadataValue.MemberMetadata(member_id="c-1", client_id="c", client_host="/127.0.0.1",
                                                  rebalance_timeout=300000, session_timeout=45000,
                                                  subscription=sub, assignment=b"")  # fmt: skip
    gkey = struct.pack(">h", 2) + gc.GroupMetadataKey(group="g1").encode(0)
    gvalue = struct.pack(">h", 3) + gc.GroupMetadataValue(protocol_type="consumer", generation=1, protocol="range",
                                                          leader="c-1", current_state_timestamp=T0,
                                                          members=[member]).encode(3)  # fmt: skip
    b = MemoryRecordsBuilder()
    b.append(T0, key, value)
    b.append(T0, key, None)
    b.append(T0, gkey, gvalue)
    b.append(T0, struct.pack(">h", 99) + b"x", b"y")
    path = tmp_path / "00000000000000000000.log"
    path.write_bytes(b.build())
    rc, out, _ = dump(capsys, "--files", str(path), "--offsets-decoder")
    assert rc == 0
    contents = [line.split(" headerKeys: [] ", 1)[1] for line in out[3:]]
    assert contents == [
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} '
        'payload: {"version":"3","data":{"offset":42,"leaderEpoch":5,"metadata":"m","commitTimestamp":1700000000000}}',
        'key: {"type":"1","data":{"group":"g1","topic":"orders","partition":0}} payload: <DELETE>',
        'key: {"type":"2","data":{"group":"g1"}} payload: {"version":"3","data":{"protocolType":"consumer",'
        '"generation":1,"protocol":"range","leader":"c-1","currentStateTimestamp":1700000000000,"members":[{'
        '"memberId":"c-1","groupInstanceId":null,"clientId":"c","clientHost":"/127.0.0.1","rebalanceTimeout":300000,'
        '"sessionTimeout":45000,"subscription":{"topics":["orders"],"userData":null},"assignment":""}]}}',
        "key: Unknown record type 99 at offset 3, skipping.",
    ]


def test_segment_written_by_storage_log(tmp_path, capsys):
    try:
        from kafkapy.common.time import MockTime
        from kafkapy.storage.log import Log
        from kafkapy.storage.log_config import LogConfig
    except ImportError as e:  # storage/ not landed in this checkout
        pytest.skip(f"kafkapy.storage.Log unavailable: {e}")
    d = tmp_path / "orders-0"
    log = Log.open(str(d), LogConfig.from_props({"index.interval.bytes": "1"}), MockTime(T0, 0))
    sizes = []
    for i in range(4):
        b = MemoryRecordsBuilder()
        b.append(T0 + 10 * i, b"k", b"v%d" % i)
        b.append(T0 + 10 * i + 1, b"k", b"w%d" % i)
        sizes.append(log.append_as_leader(b.build(), 3, T0).valid_bytes)
    log.roll()
    log.close()
    seg = d / "00000000000000000000"
    files = ",".join(str(seg) + s for s in (".log", ".index", ".timeindex"))
    rc, out, err = dump(capsys, "--files", files, "--deep-iteration")
    assert (rc, err) == (0, [])  # no mismatches, no invalid bytes, consecutive offsets
    batches = [line for line in out if line.startswith("baseOffset:")]
    assert [line.split(" count:")[0] for line in batches] == [
        f"baseOffset: {2 * i} lastOffset: {2 * i + 1}" for i in range(4)
    ]
    assert all(" partitionLeaderEpoch: 3 " in line and line.endswith("isvalid: true") for line in batches)
    index_lines = out[out.index(f"Dumping {seg}.index") + 1 : out.index(f"Dumping {seg}.timeindex")]
    positions = [sum(sizes[:i]) for i in range(4)]
    assert index_lines and all(
        line == f"offset: {2 * i + 1} position: {positions[i]}" for line in index_lines
        for i in [int(line.split()[1]) // 2]
    )
    time_lines = out[out.index(f"Dumping {seg}.timeindex") + 1 :]
    assert time_lines and all(line == f"timestamp: {T0 + 10 * (int(line.split()[3]) // 2) + 1} offset: "
                                      f"{line.split()[3]}" for line in time_lines)  # fmt: skip
    assert os.path.getsize(str(seg) + ".log") == sum(sizes)


def snapshot_bytes(entries: list[tuple[int, ...]], version: int = 1) -> bytes:
    from kafkapy.record.crc import crc32c

    body = struct.pack(">i", len(entries)) + b"".join(struct.pack(">qhiqiqiq", *e) for e in entries)
    return struct.pack(">hI", version, crc32c(body)) + body


def test_producer_snapshot(tmp_path, capsys):
    path = tmp_path / "00000000000000000042.snapshot"
    # (pid, epoch, lastSeq, lastOffset, offsetDelta, timestamp, coordinatorEpoch, currentTxnFirstOffset)
    path.write_bytes(snapshot_bytes([(7, 1, 11, 41, 3, T0, 2, 38), (8, 0, 2, 40, 4, T0 + 1, -1, -1),
                                     (9, 0, -1, -1, 0, T0 + 2, -1, -1)]))  # fmt: skip
    rc, out, err = dump(capsys, "--files", str(path))
    assert (rc, err) == (0, [])
    assert out == [
        f"Dumping {path}",
        f"producerId: 7 producerEpoch: 1 coordinatorEpoch: 2 currentTxnFirstOffset: OptionalLong[38] lastTimestamp: {T0} "
        f"firstSequence: 8 lastSequence: 11 lastOffset: 41 offsetDelta: 3 timestamp: {T0}",
        f"producerId: 8 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: "
        f"{T0 + 1} firstSequence: {2**31 - 2} lastSequence: 2 lastOffset: 40 offsetDelta: 4 timestamp: {T0 + 1}",
        f"producerId: 9 producerEpoch: 0 coordinatorEpoch: -1 currentTxnFirstOffset: OptionalLong.empty lastTimestamp: "
        f"{T0 + 2}",
    ]
    data = bytearray(path.read_bytes())
    stored = struct.unpack_from(">I", data, 2)[0]
    data[-1] ^= 1
    path.write_bytes(bytes(data))
    from kafkapy.record.crc import crc32c

    rc, out, err = dump(capsys, "--files", str(path))
    assert (rc, out) == (0, [f"Dumping {path}"])
    assert err == [f"Snapshot is corrupt (CRC is no longer valid). Stored crc: {stored}. "
                   f"Computed crc: {crc32c(bytes(data[6:]))}"]  # fmt: skip
    path.write_bytes(snapshot_bytes([], version=2))
    assert dump(capsys, "--files", str(path))[2] == ["Snapshot contained an unknown file version 2"]
