"""Producer state per partition: sequence checks, duplicates, transactions, LSO, .txnindex, .snapshot recovery."""

from __future__ import annotations

import os

import pytest
from storage_helpers import START_MS, batch, config, open_log

from kafkapy.common.errors import (
    InvalidProducerEpochError,
    InvalidTxnStateError,
    OutOfOrderSequenceNumberError,
    TransactionCoordinatorFencedError,
)
from kafkapy.common.time import MockTime
from kafkapy.record.control_record import ControlRecordType, build_end_txn_marker_batch
from kafkapy.storage.producer_state_manager import list_snapshot_offsets, read_snapshot
from kafkapy.storage.transaction_index import AbortedTxn, TransactionIndex

PID = 1000


def pbatch(seq: int, n: int = 1, epoch: int = 0, pid: int = PID, txn: bool = False) -> bytes:
    return batch(n, producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=txn)


def marker(kind: ControlRecordType, epoch: int = 0, coordinator_epoch: int = 0, pid: int = PID) -> bytes:
    return build_end_txn_marker_batch(kind, pid, epoch, coordinator_epoch, START_MS)


def test_sequences_in_order_duplicates_and_out_of_order(tmp_path):
    log = open_log(tmp_path / "t-0")
    assert log.append_as_leader(pbatch(0, 3), 0).first_offset == 0
    assert log.append_as_leader(pbatch(3, 2), 0).first_offset == 3
    dup = log.append_as_leader(pbatch(0, 3), 0)  # a retried batch: the original offsets, nothing written
    assert (dup.first_offset, dup.last_offset, dup.num_batches) == (0, 2, 0)
    assert log.log_end_offset == 5
    with pytest.raises(OutOfOrderSequenceNumberError):
        log.append_as_leader(pbatch(7), 0)
    with pytest.raises(OutOfOrderSequenceNumberError):  # a new epoch must start at sequence 0
        log.append_as_leader(pbatch(5, epoch=1), 0)
    log.append_as_leader(pbatch(0, epoch=1), 0)
    with pytest.raises(InvalidProducerEpochError):
        log.append_as_leader(pbatch(5, epoch=0), 0)
    assert log.log_end_offset == 6


def test_transactions_move_the_lso_and_aborts_go_to_the_txnindex(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(batch(2), 0)  # 0-1 plain
    log.append_as_leader(pbatch(0, 2, txn=True), 0)  # 2-3 open txn of PID
    log.append_as_leader(pbatch(0, 1, pid=2000, txn=True), 0)  # 4 open txn of 2000
    assert log.last_stable_offset == 2
    with pytest.raises(InvalidTxnStateError):
        log.append_as_leader(pbatch(2, 1, txn=False), 0)
    log.append_as_leader(marker(ControlRecordType.ABORT), 0, origin="coordinator")  # 5
    log.update_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 4  # 2000's transaction still holds it back
    log.append_as_leader(marker(ControlRecordType.COMMIT, pid=2000), 0, origin="coordinator")  # 6
    log.update_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 7
    assert log.active_segment.txn_index.all_aborted_txns() == [AbortedTxn(PID, 2, 5, 4)]
    assert log.collect_aborted_transactions(0, 7) == [AbortedTxn(PID, 2, 5, 4)]
    assert log.collect_aborted_transactions(6, 7) == []
    raw = open(os.path.join(log.dir, f"{0:020d}.txnindex"), "rb").read()
    assert raw == AbortedTxn(PID, 2, 5, 4).encode() and len(raw) == 34
    with pytest.raises(TransactionCoordinatorFencedError):
        log.append_as_leader(pbatch(2, 1, txn=True), 0)
        log.append_as_leader(marker(ControlRecordType.COMMIT, coordinator_epoch=-5), 0, origin="coordinator")


def test_lso_waits_for_the_high_watermark_after_a_marker(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.update_high_watermark(0)
    log.append_as_leader(pbatch(0, 2, txn=True), 0)
    log.append_as_leader(marker(ControlRecordType.COMMIT), 0, origin="coordinator")
    log.update_high_watermark(2)
    assert log.last_stable_offset == 0  # the marker is not replicated yet
    log.update_high_watermark(3)
    assert log.last_stable_offset == 3


def test_snapshot_on_roll_and_close_and_recovery_after_a_crash(tmp_path):
    time = MockTime(START_MS)
    cfg = config(internal_segment_bytes=400)
    log = open_log(tmp_path / "t-0", time, cfg)
    seq = 0
    for _ in range(6):
        log.append_as_leader(pbatch(seq, 3), 0)
        seq += 3
    log.append_as_leader(pbatch(0, 2, pid=7, txn=True), 0)  # open transaction at the tail
    open_first = log.log_end_offset - 2
    assert log.num_segments > 1
    snaps = list_snapshot_offsets(log.dir)
    assert snaps and snaps[-1] == log.active_segment.base_offset
    end = log.log_end_offset
    # A crash: no close, no snapshot at the end; the tail after the last snapshot is replayed.
    for s in log.segments:
        s.flush()
    reopened = open_log(tmp_path / "t-0", time, cfg, had_clean_shutdown=False)
    assert reopened.log_end_offset == end
    assert reopened.producer_state_manager.last_entry(PID).last_seq == seq - 1
    assert reopened.producer_state_manager.first_unstable_offset() == open_first
    assert reopened.append_as_leader(pbatch(seq - 3, 3), 0).num_batches == 0  # duplicate still detected
    with pytest.raises(OutOfOrderSequenceNumberError):
        reopened.append_as_leader(pbatch(seq + 1), 0)
    reopened.append_as_leader(marker(ControlRecordType.ABORT, pid=7), 0, origin="coordinator")
    reopened.close()
    entries = read_snapshot(os.path.join(reopened.dir, f"{reopened.log_end_offset:020d}.snapshot"))
    by_pid = {e.producer_id: e for e in entries}
    assert by_pid[PID].last_seq == seq - 1 and by_pid[7].current_txn_first_offset == -1
    again = open_log(tmp_path / "t-0", time, cfg)
    again.update_high_watermark(again.log_end_offset)
    assert again.producer_state_manager.first_unstable_offset() is None
    assert again.collect_aborted_transactions(0, again.log_end_offset) == [
        AbortedTxn(7, open_first, end, end + 1)]


def test_truncation_rebuilds_producer_state_and_txnindex(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(pbatch(0, 2, txn=True), 0)
    log.append_as_leader(marker(ControlRecordType.ABORT), 0, origin="coordinator")
    assert log.collect_aborted_transactions(0, 10)
    log.truncate_to(2)
    assert log.collect_aborted_transactions(0, 10) == []
    assert log.producer_state_manager.first_unstable_offset() == 0


def test_transaction_index_file_format(tmp_path):
    idx = TransactionIndex(0, str(tmp_path / "x.txnindex"))
    idx.append(AbortedTxn(5, 0, 10, 0))
    idx.append(AbortedTxn(6, 11, 20, 11))
    with pytest.raises(ValueError):
        idx.append(AbortedTxn(6, 1, 20, 11))
    again = TransactionIndex(0, str(tmp_path / "x.txnindex"))
    assert again.collect_aborted_txns(15, 30).aborted == [AbortedTxn(6, 11, 20, 11)]
    again.truncate_to(20)
    assert again.all_aborted_txns() == [AbortedTxn(5, 0, 10, 0)]


def test_idle_producers_expire_but_not_open_transactions(tmp_path):
    time = MockTime(START_MS)
    log = open_log(tmp_path / "t-0", time)
    log.append_as_leader(pbatch(0), 0)  # PID, last timestamp START_MS
    log.append_as_leader(pbatch(0, pid=9, txn=True), 0)  # open transaction
    assert log.remove_expired_producers(START_MS + 999, expiration_ms=1000) == 0
    assert log.remove_expired_producers(START_MS + 1000, expiration_ms=1000) == 1
    assert log.producer_state_manager.last_entry(PID) is None
    assert log.producer_state_manager.last_entry(9) is not None
    log.append_as_leader(pbatch(7), 0)  # a forgotten producer may start at any sequence again


def test_log_start_offset_drops_snapshots_of_deleted_segments(tmp_path):
    cfg = config(internal_segment_bytes=300)
    log = open_log(tmp_path / "t-0", MockTime(START_MS), cfg)
    for seq in range(0, 30, 3):
        log.append_as_leader(pbatch(seq, 3), 0)
    log.update_high_watermark(log.log_end_offset)
    before = list_snapshot_offsets(log.dir)
    assert len(before) >= 3
    target = log.segments[2].base_offset + 1
    log.maybe_increment_log_start_offset(target)
    assert list_snapshot_offsets(log.dir) == [o for o in before if o >= log.segments[0].base_offset]


def test_in_sequence_batches_take_the_fast_path_and_can_start_a_transaction(tmp_path):
    log = open_log(tmp_path / "t-0")
    log.append_as_leader(pbatch(0, 2), 0)  # 0-1, the general path (new producer)
    info = log.append_as_leader(pbatch(2, 3, txn=True), 0)  # 2-4, in sequence: fast path, starts a txn
    assert info.first_offset == 2
    log.update_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == 2
    entry = log.producer_state_manager.last_entry(PID)
    assert (entry.last_seq, entry.last_data_offset, entry.current_txn_first_offset) == (4, 4, 2)
    assert log.append_as_leader(pbatch(2, 3, txn=True), 0).num_batches == 0  # its retry is a duplicate
    log.append_as_leader(marker(ControlRecordType.COMMIT), 0, origin="coordinator")
    log.update_high_watermark(log.log_end_offset)
    assert log.last_stable_offset == log.log_end_offset
