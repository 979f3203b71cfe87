"""Each online tool's flag checks through the `kafkapy` Typer app (in-process, typer.testing.CliRunner):
exit 2 with one Kafka-worded line, before any connection is made."""

from __future__ import annotations

import pytest
from typer.testing import CliRunner

from kafkapy.cli.main import app

B = ["--bootstrap-server", "127.0.0.1:1"]


def run(capsys, argv):
    r = CliRunner().invoke(app, argv, catch_exceptions=False, prog_name="kafkapy")
    return r.exit_code, r.stdout, r.stderr


@pytest.mark.parametrize(
    "argv, message",
    [
        (["topics", *B], "Command must include exactly one action: --list, --describe, --create, --alter or --delete"),
        (["topics", "--list", "--describe", *B], "Command must include exactly one action"),
        (["topics", "--create", *B], 'Missing required argument "[topic]"'),
        (["topics", "--alter", "--topic", "t", *B], 'Missing required argument "[partitions]"'),
        (["topics", "--alter", "--topic", "t", "--partitions", "2", "--config", "a=b", *B],
         'Option combination "[bootstrap-server],[config]" can\'t be used with option "[alter]"'),
        (["topics", "--list", "--partitions", "2", *B], 'Option "[partitions]" can\'t be used with option "[list]"'),
        (["topics", "--describe", "--replication-factor", "2", *B],
         'Option "[replication-factor]" can\'t be used with option "[describe]"'),
        (["topics", "--create", "--topic", "t", "--replica-assignment", "0", "--partitions", "1", *B],
         'Option "[replica-assignment]" can\'t be used with option "[partitions]"'),
        (["topics", "--delete", "--topic", "t", "--if-not-exists", *B],
         'Option "[if-not-exists]" can\'t be used with option "[delete]"'),
        (["topics", "--describe", "--topics-with-overrides", "--under-replicated-partitions", *B],
         'Option "[under-replicated-partitions]" can\'t be used with option "[topics-with-overrides]"'),
        (["topics", "--list"], "the following arguments are required: --bootstrap-server"),
        (["configs", "--describe", "--topic", "t"], "Either --bootstrap-server or --bootstrap-controller must be "
                                                    "specified."),
        (["configs", "--topic", "t", *B], "Command must include exactly one action: --describe, --alter"),
        (["configs", "--describe", *B], "At least one entity type must be specified"),
        (["configs", "--describe", "--entity-type", "widgets", *B], "Invalid entity type widgets"),
        (["configs", "--describe", "--topic", "t", "--broker", "0", *B],
         "Only 'users' and 'clients' entity types may be specified together"),
        (["configs", "--describe", "--entity-type", "topics", "--topic", "t", *B],
         "Duplicate entity type(s) specified: topics"),
        (["configs", "--describe", "--entity-name", "x", "--topic", "t", *B],
         "--entity-{type,name,default} should not be used in conjunction with specific entity flags"),
        (["configs", "--alter", "--topic", "t", *B],
         "At least one of --add-config, --add-config-file, or --delete-config must be specified with --alter"),
        (["configs", "--alter", "--entity-type", "topics", "--add-config", "a=1", *B],
         "An entity name must be specified with --alter of topics"),
        (["configs", "--describe", "--broker", "x", *B],
         "The entity name for brokers must be a valid integer broker id, but it is: x"),
        (["configs", "--describe", "--broker-logger", "0", "--add-config", "a=1", *B],
         'Option "[describe]" can\'t be used with option "[add-config]"'),
        (["configs", "--describe", "--entity-type", "broker-loggers", *B],
         "An entity name must be specified with --describe of broker-loggers"),
        (["console-consumer", *B], "Exactly one of the following arguments is required: [topic], [include]"),
        (["console-consumer", "--topic", "t", "--offset", "5", *B], "The partition is required when offset is "
                                                                     "specified."),
        (["console-consumer", "--include", "t.*", "--partition", "0", *B],
         "The topic is required when partition is specified."),
        (["console-consumer", "--topic", "t", "--partition", "0", "--offset", "3", "--from-beginning", *B],
         "Options from-beginning and offset cannot be specified together."),
        (["console-consumer", "--topic", "t", "--partition", "0", "--offset", "-4", *B],
         "The provided offset value '-4' is incorrect. Valid values are 'earliest', 'latest', or a non-negative long."),
        (["console-consumer", "--topic", "t", "--partition", "0", "--group", "g", *B],
         "Options group and partition cannot be specified together."),
        (["console-consumer", "--topic", "t", "--group", "a", "--consumer-property", "group.id=b", *B],
         "Detected group ids: 'a', 'b'"),
        (["console-consumer", "--topic", "t", "--formatter", "com.example.F", *B], "com.example.F"),
        (["console-consumer", "--topic", "t"], 'Missing required argument "[bootstrap-server]"'),
        (["console-producer", *B], "the following arguments are required: --topic"),
        (["console-producer", "--topic", "t"], "Missing required option(s) [bootstrap-server]"),
        (["log-dirs", *B], 'Missing required argument "[describe]"'),
        (["delete-records", *B], "the following arguments are required: --offset-json-file"),
        (["broker-api-versions"], "the following arguments are required: --bootstrap-server"),
        (["get-offsets"], "the following arguments are required: --bootstrap-server"),
    ],
)
def test_usage_errors_exit_2_with_one_line(capsys, argv, message):
    rc, out, err = run(capsys, argv)
    assert rc == 2, err
    assert out == ""
    assert err.count("\n") == 1 and err.startswith(f"kafkapy {argv[0]}: error: ")
    assert message in err


def test_run_time_argument_errors_exit_1(capsys, tmp_path):
    bad = tmp_path / "offsets.json"
    bad.write_text('{"partitions":[{"topic":"a","partition":0,"offset":1},{"topic":"a","partition":0,"offset":2}]}')
    rc, out, err = run(capsys, ["delete-records", *B, "--offset-json-file", str(bad)])
    assert (rc, out, err) == (1, "", "Error: Offset json file contains duplicate topic partitions: a-0\n")
    rc, out, err = run(capsys, ["delete-records", *B, "--offset-json-file", str(tmp_path / "missing.json")])
    assert rc == 1 and "missing.json (No such file or directory)" in err
    rc, out, err = run(capsys, ["topics", "--create", "--topic", "t", "--config", "novalue", *B])
    assert (rc, out) == (1, "")
    assert err == ('Error while executing topic command : requirement failed: Invalid topic config: all configs to be '
                   'added must be in the format "key=val".\n')
    rc, out, err = run(capsys, ["configs", "--alter", "--topic", "t", "--add-config", "a=1=2", *B])
    assert rc == 1 and err.startswith("Invalid entity config: all configs to be added must be in the format")
    rc, out, err = run(capsys, ["console-producer", "--topic", "t", *B, "--property", "null.marker=\t",
                                "--property", "parse.key=true"])
    assert (rc, err) == (1, "org.apache.kafka.common.KafkaException: null.marker and key.separator may not be equal\n")
    rc, out, err = run(capsys, ["console-producer", "--topic", "t", *B, "--line-reader", "com.example.Reader"])
    assert rc == 1 and "com.example.Reader" in err


@pytest.mark.parametrize("tool", ["topics", "configs", "console-producer", "console-consumer", "get-offsets",
                                  "broker-api-versions", "log-dirs", "delete-records"])
def test_help_lists_kafkas_flags(capsys, tool):
    rc, out, _ = run(capsys, [tool, "--help"])
    assert rc == 0
    assert "--bootstrap-server" in out and "--output" in out


def test_kafka_script_names_and_run_class_reach_the_tools(capsys):
    rc, _, err = run(capsys, ["kafka-topics.sh", "--list"])
    assert rc == 2 and err.startswith("kafkapy topics: error:")
    rc, _, err = run(capsys, ["run-class", "kafka.tools.GetOffsetShell"])
    assert rc == 2 and err.startswith("kafkapy get-offsets: error:")


def test_garbage_command_config_is_refused_before_connecting(capsys, tmp_path):
    garbage = tmp_path / "admin.properties"
    garbage.write_bytes(b"\x7fELF\x02\x01\x01\x00binary")
    for tool in (["topics", "--list"], ["consumer-groups", "--list"], ["get-offsets"]):
        rc, out, err = run(capsys, [*tool, *B, "--command-config", str(garbage)])
        assert (rc, out) == (1, ""), tool
        assert err.startswith(f"Error: {garbage} is not a properties file: line 1: ") and err.count("\n") == 1
