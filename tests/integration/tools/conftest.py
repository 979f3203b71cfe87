"""Fixtures for the online tools' integration tests.

- `cli(*argv, stdin=b"", env=None)`: runs `kafkapy <argv>` in-process through the Typer app with Click's testing
  runner (typer.testing.CliRunner), stdin fed from bytes, `env` set for the run; returns
  CliResult(rc, out: bytes, err: str).
- `any_broker`: module-scoped, parametrized over kafkapy's own in-process broker (`kafkapy_broker`
  from tests/conftest.py) and Tansu (an independent Kafka-protocol broker; `tansu_broker` from
  tests/interop/client/conftest.py, skipped when not installed); yields (kind, bootstrap).
- `unique_topic`: a fresh topic name per test.
"""

from __future__ import annotations

import importlib.util
import uuid
from dataclasses import dataclass
from pathlib import Path

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app

_TANSU = Path(__file__).resolve().parents[2] / "interop" / "client" / "conftest.py"
_spec = importlib.util.spec_from_file_location("kafkapy_tool_tests_tansu_fixtures", _TANSU)
assert _spec is not None and _spec.loader is not None
_tansu = importlib.util.module_from_spec(_spec)
_spec.loader.exec_module(_tansu)
tansu_broker = _tansu.tansu_broker  # re-exported fixture (session scope)


@dataclass
class CliResult:
    rc: int
    out: bytes
    err: str

    @property
    def text(self) -> str:
        return self.out.decode("utf-8")

    @property
    def lines(self) -> list[str]:
        return self.text.splitlines()


@pytest.fixture
def cli():
    runner = CliRunner()

    def run(*argv: str, stdin: bytes = b"", env: dict[str, str] | None = None) -> CliResult:
        r = runner.invoke(app, list(argv), input=stdin, env=env, catch_exceptions=False, prog_name="kafkapy")
        return CliResult(r.exit_code, r.stdout_bytes, r.stderr_bytes.decode("utf-8", errors="replace"))

    return run


@pytest.fixture(scope="module", params=["kafkapy", "tansu"])
def any_broker(request: pytest.FixtureRequest) -> tuple[str, str]:
    if request.param == "tansu":
        return "tansu", request.getfixturevalue("tansu_broker")
    return "kafkapy", request.getfixturevalue("kafkapy_broker").bootstrap


@pytest.fixture
def unique_topic(request: pytest.FixtureRequest) -> str:
    base = "".join(c if c.isalnum() else "-" for c in request.node.name)[:40].strip("-")
    return f"{base}-{uuid.uuid4().hex[:6]}"
