"""pytest collects tests/ in rootdir mode (no packages): two test modules with one basename cannot both be
collected in one run ("import file mismatch"), which only a full run shows. Keep every basename unique."""

from __future__ import annotations

from collections import Counter
from pathlib import Path

TESTS = Path(__file__).resolve().parents[1]


def test_every_test_module_basename_is_unique() -> None:
    names = Counter(p.name for p in TESTS.rglob("test_*.py"))
    assert [n for n, c in names.items() if c > 1] == []
