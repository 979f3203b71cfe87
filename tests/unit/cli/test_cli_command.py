"""The tool framework: Kafka-style flags, common options, exit codes and one-line errors."""

from __future__ import annotations

import io
from dataclasses import dataclass

import pytest

from kafkapy.cli.command import ToolError, ToolParser, UsageError, require_exactly_one, run
from kafkapy.cli.properties import load_properties, parse_key_values, split_config_list
from kafkapy.cli.render import Renderer, to_jsonable
from kafkapy.common.errors import UnknownTopicOrPartitionError
from kafkapy.tools import ToolFailure


def make_parser() -> ToolParser:
    p = ToolParser("demo", "A demo tool.")
    p.add_bootstrap_server()
    p.add_command_config(aliases=("--producer.config",))
    p.add_argument("--topic")
    p.add_argument("--partitions", type=int)
    p.add_argument("--list", action="store_true")
    p.add_argument("--describe", action="store_true")
    p.add_property_list("--config")
    return p


def call(argv, execute, stdout=None):
    out, err = stdout or io.StringIO(), io.StringIO()
    rc = run(make_parser(), argv, execute, stdout=out, stderr=err)
    return rc, out.getvalue(), err.getvalue()


def test_kafka_flag_spellings_and_aliases():
    seen = {}

    def execute(args, out):
        seen.update(vars(args))
        return 0

    rc, _, err = call(
        ["--broker-list", "h:1", "--topic=t1", "--config", "a=1", "--config=b=x=y", "--producer.config", "p.props",
         "--partitions", "3"],
        execute,
    )  # fmt: skip
    assert (rc, err) == (0, "")
    assert seen["bootstrap_server"] == "h:1"
    assert seen["topic"] == "t1"
    assert seen["config"] == ["a=1", "b=x=y"]
    assert seen["command_config"] == "p.props"
    assert seen["partitions"] == 3
    assert seen["output"] == "text" and seen["verbose"] is False


def test_unambiguous_prefixes_are_accepted_like_joptsimple():
    seen = {}
    rc, _, _ = call(["--bootstrap", "h:1", "--desc"], lambda a, o: seen.update(vars(a)))
    assert rc == 0 and seen["bootstrap_server"] == "h:1" and seen["describe"] is True


def test_usage_errors_are_one_line_and_exit_2():
    rc, out, err = call(["--topic", "t"], lambda a, o: 0)
    assert rc == 2 and out == ""
    assert err == "kafkapy demo: error: the following arguments are required: --bootstrap-server/--broker-list\n"

    rc, _, err = call(["--bootstrap-server", "h:1", "--partitions", "x"], lambda a, o: 0)
    assert rc == 2
    assert err == "kafkapy demo: error: argument --partitions: invalid int value: 'x'\n"

    rc, _, err = call(["--bootstrap-server", "h:1", "--xyzzy"], lambda a, o: 0)
    assert rc == 2 and err == "kafkapy demo: error: unrecognized arguments: --xyzzy\n"


def test_usage_error_raised_by_the_tool():
    def execute(args, out):
        require_exactly_one(args, ["--list", "--describe"])

    rc, _, err = call(["--bootstrap-server", "h:1", "--list", "--describe"], execute)
    assert rc == 2
    assert err == "kafkapy demo: error: Command must include exactly one action: --list, --describe\n"
    rc, _, _ = call(["--bootstrap-server", "h:1", "--list"], execute)
    assert rc == 0


def test_help_exits_0(capsys):
    rc = run(make_parser(), ["--help"], lambda a, o: 1)
    assert rc == 0
    out = capsys.readouterr().out
    assert "Usage: kafkapy demo --bootstrap-server" in out and "A demo tool." in out
    assert "--bootstrap-server, --broker-list" in out and "--output {text,json}" in out and "Common options" in out


def test_help_lists_subcommands_and_their_flags_are_left_to_them(capsys):
    import argparse

    p = ToolParser("demo-sub", "With subcommands.")
    p.add_bootstrap_server()
    sub = p.add_subparsers(dest="command", title="commands", metavar="COMMAND", required=True,
                           parser_class=argparse.ArgumentParser)  # fmt: skip
    sub.add_parser("list", help="list the things")
    sub.add_parser("describe", help="describe one thing").add_argument("--thing-id", required=True)
    seen = {}
    rc = run(p, ["--bootstrap-server", "h:1", "describe", "--thing-id", "7"], lambda a, o: seen.update(vars(a)))
    assert rc == 0 and seen["command"] == "describe" and seen["thing_id"] == "7"
    assert run(p, ["--help"], lambda a, o: 1) == 0
    out = capsys.readouterr().out
    assert "Usage: kafkapy demo-sub --bootstrap-server" in out and "COMMAND" in out
    # piped: plain text, no boxes; each subcommand on its line, its help indented below
    assert "│" not in out and "╭" not in out
    lines = out.splitlines()
    assert lines[lines.index("  list") + 1] == "        list the things"
    assert lines[lines.index("  describe") + 1] == "        describe one thing"


def test_runtime_errors_are_one_line_exit_1_without_traceback():
    def tool_error(args, out):
        out.line("partial output")
        raise ToolError("Topic 'x' does not exist as expected")

    rc, out, err = call(["--bootstrap-server", "h:1"], tool_error)
    assert (rc, out, err) == (1, "partial output\n", "Error: Topic 'x' does not exist as expected\n")

    def failure(args, out):
        raise ToolFailure("corrupt\nsegment")

    assert call(["--bootstrap-server", "h:1"], failure)[1:] == ("", "Error: corrupt segment\n")

    def unexpected(args, out):
        raise RuntimeError("boom")

    assert call(["--bootstrap-server", "h:1"], unexpected) == (1, "", "Error: RuntimeError: boom\n")

    def missing_file(args, out):
        open("/nonexistent/dir/file.properties")

    assert call(["--bootstrap-server", "h:1"], missing_file)[2] == (
        "Error: No such file or directory: /nonexistent/dir/file.properties\n"
    )


def test_kafka_errors_are_reported_by_kafka_name():
    def execute(args, out):
        raise UnknownTopicOrPartitionError("This server does not host this topic-partition.")

    assert call(["--bootstrap-server", "h:1"], execute)[2] == (
        "Error: UNKNOWN_TOPIC_OR_PARTITION: This server does not host this topic-partition.\n"
    )

    def bare(args, out):
        raise UnknownTopicOrPartitionError()

    assert call(["--bootstrap-server", "h:1"], bare)[2] == "Error: UNKNOWN_TOPIC_OR_PARTITION\n"

    class LooksLikeKafkaError(Exception):  # a name and a code do not make a KafkaError
        code = 3
        name = "UNKNOWN_TOPIC_OR_PARTITION"

    def lookalike(args, out):
        raise LooksLikeKafkaError("x")

    assert call(["--bootstrap-server", "h:1"], lookalike)[2] == "Error: LooksLikeKafkaError: x\n"


def test_unprefixed_tool_error_and_custom_exit_code():
    def execute(args, out):
        raise ToolError("Error while executing topic command : boom", exit_code=3, prefixed=False)

    assert call(["--bootstrap-server", "h:1"], execute) == (3, "", "Error while executing topic command : boom\n")


def test_verbose_prints_the_traceback():
    def execute(args, out):
        raise RuntimeError("boom")

    rc, _, err = call(["--bootstrap-server", "h:1", "--verbose"], execute)
    assert rc == 1
    lines = err.splitlines()
    assert lines[0] == "Error: RuntimeError: boom"
    assert lines[1] == "Traceback (most recent call last):" and lines[-1] == "RuntimeError: boom"


def test_ctrl_c_exits_130_quietly():
    def execute(args, out):
        raise KeyboardInterrupt

    assert call(["--bootstrap-server", "h:1"], execute) == (130, "", "")


def test_broken_pipe_ends_quietly():
    class ClosedPipe(io.StringIO):
        def write(self, s):
            raise BrokenPipeError(32, "Broken pipe")

    def execute(args, out):
        for i in range(10):
            out.line(str(i))

    rc, _, err = call(["--bootstrap-server", "h:1"], execute, stdout=ClosedPipe())
    assert (rc, err) == (0, "")


@dataclass
class OffsetResult:
    topic: str
    partition: int
    log_end_offset: int
    key: bytes | None


def test_output_json_document_and_stream():
    def execute(args, out):
        assert out.json
        out.document([OffsetResult("t", 0, 5, b"k")])
        out.emit(OffsetResult("t", 1, 7, None))

    rc, out, _ = call(["--bootstrap-server", "h:1", "--output", "json"], execute)
    assert rc == 0
    assert out.splitlines() == [
        '[{"topic":"t","partition":0,"logEndOffset":5,"key":"k"}]',
        '{"topic":"t","partition":1,"logEndOffset":7,"key":null}',
    ]


def test_output_choice_is_validated():
    rc, _, err = call(["--bootstrap-server", "h:1", "--output", "yaml"], lambda a, o: 0)
    assert rc == 2 and err.startswith("kafkapy demo: error: argument --output: invalid choice: 'yaml'")


def test_to_jsonable():
    import enum

    class Color(enum.IntEnum):
        RED = 1

    assert to_jsonable({"a": (1, 2), "b": {3, 1}, "c": Color.RED, "d": b"\xff", "e": None}) == {
        "a": [1, 2], "b": [1, 3], "c": "RED", "d": "\ufffd", "e": None,
    }  # fmt: skip

    class Custom:
        def __json__(self):
            return {"x": 1}

    assert to_jsonable([Custom()]) == [{"x": 1}]


def test_renderer_plain_when_piped():
    buf = io.StringIO()
    r = Renderer("text", stream=buf, err=io.StringIO())
    assert not r.rich and not r.json
    r.table(["TOPIC", "PARTITION"], [["t", 0]], text_lines=["Topic: t\tPartition: 0"])
    r.table(["A", "B"], [["x", None]])
    with r.progress(100, "work") as advance:
        advance(50)
    assert buf.getvalue() == "Topic: t\tPartition: 0\nx \n"


def test_renderer_uses_rich_on_a_terminal(monkeypatch):
    class Tty(io.StringIO):
        def isatty(self):
            return True

    monkeypatch.delenv("KAFKAPY_PLAIN", raising=False)
    monkeypatch.setenv("TERM", "xterm")
    buf = Tty()
    r = Renderer("text", stream=buf)
    assert r.rich
    r.table(["TOPIC", "PARTITION"], [["orders", 0]], text_lines=["never printed"])
    text = buf.getvalue()
    assert "TOPIC" in text and "orders" in text and "never printed" not in text
    monkeypatch.setenv("KAFKAPY_PLAIN", "1")
    assert not Renderer("text", stream=Tty()).rich


def test_forced_terminal_progress_draws_the_bar_below_the_lines_only_when_asked(monkeypatch, capsys):
    monkeypatch.delenv("KAFKAPY_PLAIN", raising=False)
    monkeypatch.setenv("KAFKAPY_FORCE_TERMINAL", "stdout")
    r = Renderer("text", err=io.StringIO())
    assert r.rich
    with r.progress(10, "producing", share_stdout=True) as advance:
        r.line("5 records sent, 1.0 records/sec")
        advance(10)
    text = capsys.readouterr().out
    assert "5 records sent, 1.0 records/sec\n" in text and "producing" in text and "\x1b[" in text
    with r.progress(10, "dump-log") as advance:  # a tool printing a line per batch: no bar on its stdout
        r.line("baseOffset: 0")
        advance(10)
    assert capsys.readouterr().out == "baseOffset: 0\n"


def test_parse_key_values():
    assert parse_key_values(["a=1", "b=x=y", "key.separator= ", "a=2"]) == {"a": "2", "b": "x=y", "key.separator": " "}
    with pytest.raises(UsageError, match="Invalid --config value 'novalue'"):
        parse_key_values(["novalue"], "--config")


def test_split_config_list_groups_bracketed_values():
    assert split_config_list("k1=v1,k2=[v1,v2],k3=v3") == {"k1": "v1", "k2": "v1,v2", "k3": "v3"}
    with pytest.raises(UsageError):
        split_config_list("k1")


def test_load_properties(tmp_path):
    f = tmp_path / "client.properties"
    f.write_text("# comment\nbootstrap.servers=h:1\nsecurity.protocol : PLAINTEXT\nlong=a\\\n   b\n")
    assert load_properties(str(f)) == {"bootstrap.servers": "h:1", "security.protocol": "PLAINTEXT", "long": "ab"}
    with pytest.raises(ToolError, match=r"missing.properties \(No such file or directory\)"):
        load_properties(str(tmp_path / "missing.properties"))


def test_a_file_that_is_not_a_properties_file_is_refused(tmp_path):
    text = tmp_path / "notes.txt"
    text.write_text("bootstrap.servers=h:1\n# fine so far\nthis is not a properties file\n")
    with pytest.raises(ToolError) as e:
        load_properties(str(text))
    assert e.value.message == (f"{text} is not a properties file: line 3: 'this is not a properties file' "
                               "(expected key=value)")
    binary = tmp_path / "client.bin"
    binary.write_bytes(b"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR")
    with pytest.raises(ToolError, match=r"client.bin is not a properties file: line 1: "):
        load_properties(str(binary))
    latin1 = tmp_path / "latin1.properties"
    latin1.write_bytes("client.id=caf\u00e9\nsasl.jaas.config=a \\\n  b;\n".encode("latin-1"))
    assert load_properties(str(latin1)) == {"client.id": "caf\u00e9", "sasl.jaas.config": "a b;"}


def test_negative_numbers_are_values_not_flags():
    p = ToolParser("get-offsets-like")
    p.add_argument("--time")
    p.add_argument("--shift-by", type=int)
    args = p.parse(["--time", "-1", "--shift-by", "-5"])
    assert args.time == "-1" and args.shift_by == -5
