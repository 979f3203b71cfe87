"""The Typer app: tool registry as a lazy command tree, help, completion, did-you-mean, aliases,
kafka-run-class names, not-implemented tools. Commands run in-process through typer.testing.CliRunner."""

from __future__ import annotations

import sys
import types

import pytest
from typer.testing import CliRunner

from kafkapy.cli import main as cli_main

runner = CliRunner()


def invoke(*argv: str, **kw):
    return runner.invoke(cli_main.app, list(argv), **kw)


def test_help_is_the_typer_tree_with_every_tool():
    r = invoke("--help")
    assert r.exit_code == 0
    assert "Usage: kafkapy [OPTIONS] <tool> [flags...]" in r.stdout
    assert "--install-completion" in r.stdout and "--show-completion" in r.stdout
    for tool, (_, summary) in cli_main.TOOLS.items():
        line = next(x for x in r.stdout.splitlines() if x.startswith(f"│ {tool} "))
        assert summary.split()[0] in line, tool


def test_help_word_and_help_of_one_tool(capsys):
    assert cli_main.main(["help"]) == 0
    assert "Commands" in capsys.readouterr().out
    assert cli_main.main(["help", "dump-log"]) == 0
    assert "Usage: kafkapy dump-log" in capsys.readouterr().out


def test_no_arguments_is_a_usage_error():
    r = invoke()
    assert r.exit_code == 2 and r.stdout == ""
    assert "Usage: kafkapy [OPTIONS] <tool> [flags...]" in r.stderr


def test_version():
    from kafkapy import __version__

    for argv in (["--version"], ["-V"]):
        r = invoke(*argv)
        assert (r.exit_code, r.stdout) == (0, __version__ + "\n")
    assert cli_main.main(["version"]) == 0


def test_unknown_tool_is_one_line_exit_2():
    r = invoke("frobnicate", "--x")
    assert r.exit_code == 2
    assert r.stderr == "kafkapy: unknown tool 'frobnicate' (kafkapy --help lists the tools)\n"


def test_mistyped_tool_gets_did_you_mean():
    r = invoke("topcs", "--list")
    assert r.exit_code == 2
    assert r.stderr == "kafkapy: unknown tool 'topcs'. Did you mean 'topics', 'top'? (kafkapy --help lists the tools)\n"


def test_mistyped_flag_gets_did_you_mean():
    # Reported before the required-flag check, as joptsimple does; one line, exit 2, nothing on stdout.
    r = invoke("topics", "--list", "--bootstrap-servr", "h:1")
    assert (r.exit_code, r.stdout) == (2, "")
    assert r.stderr == "kafkapy topics: error: unrecognized arguments: --bootstrap-servr. Did you mean --bootstrap-server?\n"
    r = invoke("topics", "--bootstrap-server=h:1", "--lsit")
    assert r.stderr == "kafkapy topics: error: unrecognized arguments: --lsit (Possible options: --list, --alter)\n"
    # Unambiguous prefixes are Kafka's flags, not typos (joptsimple accepts them).
    r = invoke("topics", "--bootstrap=127.0.0.1:1", "--desc", "--topic", "t", "--partitions", "2")
    assert r.stderr == "kafkapy topics: error: Option \"[partitions]\" can't be used with option \"[describe]\"\n"


def test_unknown_root_option_is_one_line_exit_2():
    r = invoke("--frobnicate")
    assert (r.exit_code, r.stderr) == (2, "kafkapy: error: No such option: --frobnicate\n")


def test_missing_tool_module_reports_not_implemented(monkeypatch):
    monkeypatch.setitem(cli_main.TOOLS, "fake-tool", ("kafkapy.cli.no_such_module_xyz", "test"))
    r = invoke("fake-tool", "--bootstrap-server", "x:1")
    assert (r.exit_code, r.stdout, r.stderr) == (1, "", "kafkapy: fake-tool is not implemented yet\n")


def test_missing_dependency_of_an_existing_tool_is_not_hidden(monkeypatch):
    mod = types.ModuleType("kafkapy.cli._fake_broken_tool")

    def broken_main(argv):
        import kafkapy_no_such_dependency  # noqa: F401

    mod.main = broken_main
    monkeypatch.setitem(sys.modules, "kafkapy.cli._fake_broken_tool", mod)
    monkeypatch.setitem(cli_main.TOOLS, "broken", ("kafkapy.cli._fake_broken_tool", "test"))
    with pytest.raises(ModuleNotFoundError):
        cli_main.main(["broken"])


def test_a_new_tool_row_is_a_command_with_its_flags_and_completion(monkeypatch):
    # What another tool's author does: one TOOLS row and a module with build_parser() and main(argv).
    from kafkapy.cli.command import ToolParser, run

    seen = []

    def build_parser():
        p = ToolParser("ok-tool", "A tool added by a row.")
        p.add_bootstrap_server()
        p.add_property_list("--config")
        p.add_argument("--mode", choices=("fast", "slow"))
        p.add_argument("-daemon", action="store_true")
        return p

    mod = types.ModuleType("kafkapy.cli._fake_ok_tool")
    mod.build_parser = build_parser
    mod.main = lambda argv: run(build_parser(), argv, lambda a, o: seen.append(vars(a)) or 7)
    monkeypatch.setitem(sys.modules, "kafkapy.cli._fake_ok_tool", mod)
    monkeypatch.setitem(cli_main.TOOLS, "ok-tool", ("kafkapy.cli._fake_ok_tool", "test"))
    r = invoke("ok-tool", "--broker-list", "h:1", "--config", "a=1", "--config=b=2", "-daemon", "--mode=fast")
    assert r.exit_code == 7, r.stderr
    assert seen[0]["bootstrap_server"] == "h:1" and seen[0]["config"] == ["a=1", "b=2"]
    assert seen[0]["daemon"] is True and seen[0]["mode"] == "fast"
    assert "ok-tool" in invoke("--help").stdout
    help_out = invoke("ok-tool", "--help").stdout
    assert "--bootstrap-server," in help_out and "--broker-list" in help_out and "{fast,slow}" in help_out
    assert complete("kafkapy ok-tool --mo") == ["--mode"]
    assert complete("kafkapy ok-tool --mode ") == ["fast", "slow"]
    assert complete("kafkapy ok-tool -da") == ["-daemon"]


def complete(line: str) -> list[str]:
    """What bash completion offers for `line` (Click's complete_bash protocol, in-process)."""
    words = line.split(" ")
    env = {"_KAFKAPY_COMPLETE": "complete_bash", "COMP_WORDS": line, "COMP_CWORD": str(len(words) - 1)}
    r = runner.invoke(cli_main.app, [], env=env, prog_name="kafkapy")
    assert r.exit_code == 0, r.stderr
    return [x for x in r.stdout.splitlines() if x]


def test_completion_of_tools_flags_and_values():
    assert complete("kafkapy top") == ["topics", "top"]
    assert "console-consumer" in complete("kafkapy con") and "consumer-groups" in complete("kafkapy con")
    assert complete("kafkapy topics --bootstrap") == ["--bootstrap-server"]
    assert complete("kafkapy topics --output ") == ["text", "json"]
    assert complete("kafkapy kafka-topics.sh --exclude") == ["--exclude-internal"]
    assert set(complete("kafkapy console-producer --producer")) >= {"--producer-property", "--producer.config"}


@pytest.fixture
def named_shell(monkeypatch, tmp_path):
    """--install-completion/--show-completion take the shell's name (Typer's switch for tests; by default
    they detect the running shell), and HOME is a temporary folder so nothing touches the user's rc files."""
    monkeypatch.setenv("_TYPER_COMPLETE_TEST_DISABLE_SHELL_DETECTION", "1")
    monkeypatch.setenv("HOME", str(tmp_path))
    return tmp_path


def test_show_completion_prints_the_script(named_shell):
    r = invoke("--show-completion", "bash")
    assert r.exit_code == 0
    assert "_KAFKAPY_COMPLETE=complete_bash" in r.stdout and "complete -o default -F _kafkapy_completion kafkapy" in r.stdout
    r = invoke("--show-completion", "zsh")
    assert r.exit_code == 0 and "#compdef kafkapy" in r.stdout


def test_install_completion_writes_the_shell_rc(named_shell):
    r = invoke("--install-completion", "bash")
    assert r.exit_code == 0, r.stdout + r.stderr
    script = named_shell / ".bash_completions" / "kafkapy.sh"
    assert "_KAFKAPY_COMPLETE=complete_bash" in script.read_text()
    assert str(script) in (named_shell / ".bashrc").read_text()


def test_tool_receives_remaining_argv_and_its_return_code(monkeypatch):
    seen = []
    mod = types.ModuleType("kafkapy.cli._fake_raw_tool")
    mod.main = lambda argv: seen.append(argv) or 7
    monkeypatch.setitem(sys.modules, "kafkapy.cli._fake_raw_tool", mod)
    monkeypatch.setitem(cli_main.TOOLS, "raw-tool", ("kafkapy.cli._fake_raw_tool", "test"))
    r = invoke("raw-tool", "--topic", "t", "--config=a=b", "-daemon", "--help")
    assert r.exit_code == 7
    assert seen == [["--topic", "t", "--config=a=b", "-daemon", "--help"]]
    assert complete("kafkapy raw-tool --to") == []  # no build_parser(): nothing to complete, no error


def test_kafka_script_names_are_aliases(monkeypatch):
    seen = []
    monkeypatch.setattr(cli_main, "run_tool", lambda tool, argv: seen.append((tool, argv)) or 0)
    assert invoke("kafka-topics.sh", "--list").exit_code == 0
    assert invoke("zookeeper-shell.sh", "localhost:2181").exit_code == 0
    assert invoke("/opt/kafka/bin/kafka-server-start.sh", "-daemon", "s.properties").exit_code == 0
    assert seen == [("topics", ["--list"]), ("zookeeper-shell", ["localhost:2181"]),
                    ("server-start", ["-daemon", "s.properties"])]  # fmt: skip


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


def test_run_class_unknown_class():
    r = invoke("run-class", "kafka.tools.StorageTool")
    assert (r.exit_code, r.stderr) == (1, "kafkapy: run-class: unknown class kafka.tools.StorageTool\n")


DESIGN_TOOLS = [
    "server-start", "server-stop", "topics", "configs", "console-producer", "console-consumer",
    "consumer-groups", "reassign-partitions", "leader-election", "preferred-replica-election",
    "producer-perf-test", "consumer-perf-test", "dump-log", "log-dirs", "delete-records", "get-offsets",
    "broker-api-versions", "verifiable-producer", "verifiable-consumer", "replica-verification",
    "mirror-maker", "zookeeper-shell", "zookeeper-server-start", "zookeeper-server-stop", "spark-submit",
]


def test_registry_covers_designs_tool_list():
    # DESIGN_TOOLS is the design card's "Tools and CLI" list (the card lives outside this repository).
    assert [t for t in DESIGN_TOOLS if t not in cli_main.TOOLS] == []


def test_every_registered_module_name_follows_the_convention():
    for tool, (target, summary) in cli_main.TOOLS.items():
        module, _, func = target.partition(":")
        assert module.startswith("kafkapy.cli."), tool
        assert summary
        if not func:
            assert module == "kafkapy.cli." + tool.replace("-", "_"), tool
