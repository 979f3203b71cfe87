"""The dispatcher: tool registry, not-implemented tools, aliases, kafka-run-class names, help."""

from __future__ import annotations

import sys
import types
from pathlib import Path

import pytest

from kafkapy.cli import main as cli_main

DESIGN = Path(__file__).resolve().parents[4] / "shared" / "DESIGN.md"


def test_help_lists_every_tool(capsys):
    assert cli_main.main(["--help"]) == 0
    out = capsys.readouterr().out
    assert out.startswith("usage: kafkapy <tool>")
    for tool in cli_main.TOOLS:
        assert f"  {tool} " in out


def test_no_arguments_is_a_usage_error(capsys):
    assert cli_main.main([]) == 2
    assert "usage: kafkapy <tool>" in capsys.readouterr().err


def test_version(capsys):
    from kafkapy import __version__

    assert cli_main.main(["--version"]) == 0
    assert capsys.readouterr().out == __version__ + "\n"


def test_unknown_tool_is_one_line_exit_2(capsys):
    assert cli_main.main(["frobnicate", "--x"]) == 2
    err = capsys.readouterr().err
    assert err == "kafkapy: unknown tool 'frobnicate' (kafkapy --help lists the tools)\n"


def test_missing_tool_module_reports_not_implemented(monkeypatch, capsys):
    monkeypatch.setitem(cli_main.TOOLS, "fake-tool", ("kafkapy.cli.no_such_module_xyz", "test"))
    assert cli_main.main(["fake-tool", "--bootstrap-server", "x:1"]) == 1
    captured = capsys.readouterr()
    assert captured.err == "kafkapy: fake-tool is not implemented yet\n"
    assert captured.out == ""


def test_missing_dependency_of_an_existing_tool_is_not_hidden(monkeypatch):
    mod = types.ModuleType("kafkapy.cli._fake_broken_tool")

    def broken_main(argv):
        import kafkapy_no_such_dependency  # noqa: F401

    mod.main = broken_main
    monkeypatch.setitem(sys.modules, "kafkapy.cli._fake_broken_tool", mod)
    monkeypatch.setitem(cli_main.TOOLS, "broken", ("kafkapy.cli._fake_broken_tool", "test"))
    with pytest.raises(ModuleNotFoundError):
        cli_main.main(["broken"])


def test_tool_receives_remaining_argv_and_its_return_code(monkeypatch):
    seen = []
    mod = types.ModuleType("kafkapy.cli._fake_ok_tool")
    mod.main = lambda argv: seen.append(argv) or 7
    monkeypatch.setitem(sys.modules, "kafkapy.cli._fake_ok_tool", mod)
    monkeypatch.setitem(cli_main.TOOLS, "ok-tool", ("kafkapy.cli._fake_ok_tool", "test"))
    assert cli_main.main(["ok-tool", "--topic", "t", "--config=a=b"]) == 7
    assert seen == [["--topic", "t", "--config=a=b"]]


def test_kafka_script_names_are_aliases(monkeypatch):
    seen = []
    monkeypatch.setattr(cli_main, "run_tool", lambda tool, argv: seen.append((tool, argv)) or 0)
    assert cli_main.main(["kafka-topics.sh", "--list"]) == 0
    assert cli_main.main(["zookeeper-shell.sh", "localhost:2181"]) == 0
    assert seen == [("topics", ["--list"]), ("zookeeper-shell", ["localhost:2181"])]


def test_run_class_maps_kafka_class_names(monkeypatch):
    seen = []
    monkeypatch.setattr(cli_main, "run_tool", lambda tool, argv: seen.append((tool, argv)) or 0)
    assert cli_main.run_class_main(["kafka.tools.GetOffsetShell", "--topic", "t"]) == 0
    assert cli_main.run_class_main(["-name", "kafkaServer", "-loggc", "-daemon", "kafka.Kafka", "s.properties"]) == 0
    assert cli_main.run_class_main(["kafka.tools.DumpLogSegments", "--files", "a.log"]) == 0
    assert seen == [
        ("get-offsets", ["--topic", "t"]),
        ("server-start", ["-daemon", "s.properties"]),
        ("dump-log", ["--files", "a.log"]),
    ]


def test_run_class_unknown_class(capsys):
    assert cli_main.main(["run-class", "kafka.tools.JmxTool"]) == 1
    assert capsys.readouterr().err == "kafkapy: run-class: unknown class kafka.tools.JmxTool\n"


DESIGN_TOOLS = [
    "server-start", "server-stop", "topics", "configs", "console-producer", "console-consumer",
    "consumer-groups", "reassign-partitions", "leader-election", "preferred-replica-election",
    "producer-perf-test", "consumer-perf-test", "dump-log", "log-dirs", "delete-records", "get-offsets",
    "broker-api-versions", "verifiable-producer", "verifiable-consumer", "replica-verification",
    "mirror-maker", "zookeeper-shell", "zookeeper-server-start", "zookeeper-server-stop", "spark-submit",
]


def test_registry_covers_designs_tool_list():
    assert [t for t in DESIGN_TOOLS if t not in cli_main.TOOLS] == []
    if DESIGN.exists():
        section = DESIGN.read_text().split("## Tools and CLI", 1)[1].split("`scripts/kafka-<tool>.sh`")[0]
        for tool in DESIGN_TOOLS:
            assert tool.replace("zookeeper-server-stop", "zookeeper-server-start/stop") in section, tool


def test_every_registered_module_name_follows_the_convention():
    for tool, (target, summary) in cli_main.TOOLS.items():
        module, _, func = target.partition(":")
        assert module.startswith("kafkapy.cli."), tool
        assert summary
        if not func:
            assert module == "kafkapy.cli." + tool.replace("-", "_"), tool
