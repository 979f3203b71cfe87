"""A cleaner 'killed' after each file operation of a pass (rename, replace, unlink): reopening the log with
recovery leaves no .cleaned/.swap/.deleted file and a correct log (every record at its original offset,
each key's latest value present), cleaned or not."""

from __future__ import annotations

import os

import pytest

from kafkapy.common.time import MockTime
from kafkapy.storage.log import Log
from tests.unit.storage.storage_helpers import START_MS, config
from tests.unit.storage.test_log_cleaner import COMPACT, all_records, fill, make_cleaner


class SimulatedCrash(BaseException):
    pass


class CrashAfter:
    """Counts os.rename/os.replace/os.unlink calls; the n-th and every later one raises (the process is dead)."""

    def __init__(self, monkeypatch: pytest.MonkeyPatch, n: int | None) -> None:
        self.n = n
        self.count = 0
        for name in ("rename", "replace", "unlink"):
            real = getattr(os, name)
            monkeypatch.setattr(os, name, self._wrap(real))

    def _wrap(self, real):  # type: ignore[no-untyped-def]
        def op(*args, **kwargs):  # type: ignore[no-untyped-def]
            if self.n is not None and self.count >= self.n:
                raise SimulatedCrash(f"killed before file operation {self.count}")
            self.count += 1
            return real(*args, **kwargs)
        return op


def build(path: str, time: MockTime) -> tuple[Log, dict, list]:
    lg = Log.open(path, config(**COMPACT), time)
    latest = fill(lg, rounds=12, keys=6)
    latest.update(fill(lg, rounds=3, keys=9))
    return lg, latest, all_records(lg)


def check_correct(path: str, time: MockTime, latest: dict, original: list) -> list:
    reopened = Log.open(path, config(**COMPACT), time, had_clean_shutdown=False)
    try:
        leftovers = [n for n in os.listdir(path) if n.endswith((".cleaned", ".swap", ".deleted"))]
        assert not leftovers
        records = all_records(reopened)
        assert set(records) <= set(original)
        offsets = [r[0] for r in records]
        assert offsets == sorted(set(offsets))
        last_by_key = {}
        for off, k, v in records:
            last_by_key[k] = (off, v)
        assert last_by_key == latest
        assert reopened.log_end_offset == original[-1][0] + 1
        for off, _k, _v in records:  # every kept offset is found through the rebuilt indexes
            assert reopened.read(off, 1 << 20).records is not None
        return records
    finally:
        reopened.close()


def count_file_ops(tmp_path, monkeypatch) -> int:
    time = MockTime(START_MS)
    path = str(tmp_path / "count" / "t-0")
    lg, _, _ = build(path, time)
    with monkeypatch.context() as m:
        counter = CrashAfter(m, None)
        assert make_cleaner(lg, time).clean_once()
    return counter.count


def test_kill_after_each_file_operation_leaves_a_correct_log(tmp_path, monkeypatch) -> None:
    total = count_file_ops(tmp_path, monkeypatch)
    assert total >= 8  # .cleaned -> .swap, old -> .deleted, unlinks, .swap -> final, checkpoint
    outcomes = set()
    for n in range(total + 1):
        time = MockTime(START_MS)
        path = str(tmp_path / f"crash-{n}" / "t-0")
        lg, latest, original = build(path, time)
        cleaner = make_cleaner(lg, time)
        with monkeypatch.context() as m:
            CrashAfter(m, n)
            try:
                cleaner.clean_once()
            except SimulatedCrash:
                pass
        records = check_correct(path, time, latest, original)
        outcomes.add(len(records) == len(latest))
    assert outcomes == {True, False}  # some kills rolled the pass back, later ones completed it
