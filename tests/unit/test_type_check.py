"""mypy over every package of kafkapy passes ([tool.mypy] in pyproject.toml, generated messages
excluded), as `make lint` runs it.

Here too so that a change breaking the typed handler boundary shows up with the unit tests, like the
generator's --check in tests/unit/protocol. Warm runs reuse .mypy_cache (about a second); a cold run ~10 s.
"""

from __future__ import annotations

import importlib.util
import subprocess
import sys
from pathlib import Path

import pytest

REPO = Path(__file__).resolve().parents[2]


@pytest.mark.skipif(importlib.util.find_spec("mypy") is None, reason="mypy is in the test extra")
def test_mypy_passes() -> None:
    r = subprocess.run([sys.executable, "-m", "mypy"], cwd=REPO, capture_output=True, text=True, timeout=240)
    assert r.returncode == 0, r.stdout[-4000:] + r.stderr[-2000:]
