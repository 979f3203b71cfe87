"""The README's promises about errors (issue 17 item 13), checked on every tool of the TOOLS table: a usage error
is one `kafkapy <tool>: error: ...` line on stderr, nothing on stdout, exit 2. The exceptions the README names:
spark-submit hands its flags to Spark's spark-submit, run-class takes a Kafka class name first. The README states
the target version and the deliberate differences from Kafka."""

from __future__ import annotations

from pathlib import Path

from typer.testing import CliRunner

from kafkapy.cli.main import TOOLS, app

README = (Path(__file__).resolve().parents[3] / "README.md").read_text()
EXCEPTIONS = {"spark-submit", "run-class"}


def test_usage_errors_are_one_line_on_stderr_with_exit_2() -> None:
    for tool in sorted(set(TOOLS) - EXCEPTIONS):
        r = CliRunner().invoke(app, [tool, "--no-such-flag"], catch_exceptions=False, prog_name="kafkapy")
        err = r.stderr_bytes.decode()
        assert (r.exit_code, r.stdout_bytes) == (2, b""), (tool, err)
        assert len(err.splitlines()) == 1 and err.startswith(f"kafkapy {tool}: error: "), (tool, err)


def test_readme_states_the_target_and_the_exceptions() -> None:
    assert "The target is Apache Kafka 3.9, the last ZooKeeper-era release" in README
    for tool in ("spark-submit", "run-class", "server-start", "zookeeper-server-start"):
        assert f"`{tool}`" in README
    for difference in ("usage errors exit with 2", "Kafka's TopicCommand prints", "refused on `--bootstrap-server`"):
        assert difference in README
