"""On a terminal the tabular tools draw Rich tables in colour and long work shows a Rich progress bar;
piped, the same runs write Kafka's bytes exactly. The terminal is forced with KAFKAPY_FORCE_TERMINAL
(Rich's force_terminal) at a fixed width, against kafkapy's in-process broker."""

from __future__ import annotations

import re

import pytest

TERMINAL = {"KAFKAPY_FORCE_TERMINAL": "1", "COLUMNS": "200"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def plain(text: bytes) -> str:
    return ANSI.sub("", text.decode("utf-8"))


@pytest.fixture
def topic(cli, kafkapy_broker, unique_topic) -> str:
    bs = kafkapy_broker.bootstrap
    assert cli("topics", "--create", "--topic", unique_topic, "--partitions", "2", "--bootstrap-server", bs).rc == 0
    r = cli("console-producer", "--bootstrap-server", bs, "--topic", unique_topic, "--property", "parse.key=true",
            stdin=b"".join(b"k\tv%d\n" % i for i in range(5)))  # one key: all five on one partition
    assert r.rc == 0, r.err
    return unique_topic


def rows(text: str) -> list[list[str]]:
    """The cells of a rounded Rich table's body and header lines."""
    return [[c.strip() for c in line.strip().strip("│").split("│")] for line in text.splitlines()
            if line.startswith("│")]  # fmt: skip


def test_topics_describe_is_a_table_on_a_terminal(cli, kafkapy_broker, topic):
    b = ["--bootstrap-server", kafkapy_broker.bootstrap]
    piped = cli("topics", "--describe", "--topic", topic, *b)
    assert piped.lines[0].startswith(f"Topic: {topic}\tTopicId: ") and "\x1b[" not in piped.text
    broker = kafkapy_broker.server.config.broker_id
    assert piped.lines[1:] == [f"\tTopic: {topic}\tPartition: {p}\tLeader: {broker}\tReplicas: {broker}\tIsr: "
                               f"{broker}\tElr: N/A\tLastKnownElr: N/A" for p in (0, 1)]  # fmt: skip
    r = cli("topics", "--describe", "--topic", topic, *b, env=TERMINAL)
    assert r.rc == 0 and "\x1b[1;36m" in r.text  # coloured (bold cyan) header cells
    text = plain(r.out)
    assert text.splitlines()[0] == piped.lines[0].replace("\t", "   ")  # Kafka's header fields as the title
    assert "╭" in text and "╰" in text
    b_id = str(broker)
    assert rows(text) == [["Partition", "Leader", "Replicas", "Isr", "Elr", "LastKnownElr"],
                          ["0", b_id, b_id, b_id, "N/A", "N/A"], ["1", b_id, b_id, b_id, "N/A", "N/A"]]  # fmt: skip
    # KAFKAPY_PLAIN=1 keeps Kafka's text on a terminal.
    assert cli("topics", "--describe", "--topic", topic, *b, env={**TERMINAL, "KAFKAPY_PLAIN": "1"}).out == piped.out


def test_get_offsets_and_log_dirs_tables(cli, kafkapy_broker, topic):
    b = ["--bootstrap-server", kafkapy_broker.bootstrap]
    piped = cli("get-offsets", "--topic", topic, *b)
    counts = dict(line.rsplit(":", 1)[0].rsplit(":", 1)[1:] + [line.rsplit(":", 1)[1]] for line in piped.lines)
    assert sorted(counts.values()) == ["0", "5"]
    r = cli("get-offsets", "--topic", topic, *b, env=TERMINAL)
    assert rows(plain(r.out)) == [["Topic", "Partition", "Offset"]] + [[topic, p, counts[p]] for p in ("0", "1")]

    piped = cli("log-dirs", "--describe", "--topic-list", topic, *b)
    broker = kafkapy_broker.server.config.broker_id
    assert piped.lines[2].startswith(f'{{"brokers":[{{"broker":{broker},"logDirs":[{{"partitions":[')
    r = cli("log-dirs", "--describe", "--topic-list", topic, *b, env=TERMINAL)
    text = plain(r.out)
    assert text.splitlines()[:2] == piped.lines[:2] and '{"brokers"' not in text
    table = rows(text)
    assert table[0] == ["Broker", "Log dir", "Error", "Partition", "Size", "Offset lag", "Future"]
    assert sorted(row[3] for row in table[1:]) == [f"{topic}-0", f"{topic}-1"]
    assert {row[0] for row in table[1:]} == {str(broker)} and {row[6] for row in table[1:]} == {"false"}


def test_consumer_groups_describe_table_shows_lag_in_colour(cli, kafkapy_broker, topic):
    b = ["--bootstrap-server", kafkapy_broker.bootstrap]
    group = topic + "-g"
    r = cli("console-consumer", *b, "--topic", topic, "--from-beginning", "--group", group, "--max-messages", "2",
            "--timeout-ms", "10000")  # fmt: skip
    assert r.rc == 0 and r.out == b"v0\nv1\n"
    r = cli("console-producer", *b, "--topic", topic, "--property", "parse.key=true", stdin=b"k\tw1\nk\tw2\nk\tw3\n")
    assert r.rc == 0  # three records behind the group's committed offset
    piped = cli("consumer-groups", *b, "--describe", "--group", group)
    assert piped.lines[1].split() == ["GROUP", "TOPIC", "PARTITION", "CURRENT-OFFSET", "LOG-END-OFFSET", "LAG",
                                      "CONSUMER-ID", "HOST", "CLIENT-ID"]  # fmt: skip
    r = cli("consumer-groups", *b, "--describe", "--group", group, env=TERMINAL)
    table = rows(plain(r.out))
    assert table[0] == piped.lines[1].split()
    body = sorted(table[1:], key=lambda row: row[2])
    piped_rows = sorted((line.split() for line in piped.lines[2:]), key=lambda row: row[2])
    assert body == piped_rows  # the same cells as Kafka's columns
    lagging = next(row for row in body if row[5] != "0")
    assert lagging[5] == "3" and re.search(r"\x1b\[33m3 *\x1b\[0m", r.text)  # lag 3 in yellow
    assert r.err == piped.err == f"\nConsumer group '{group}' has no active members.\n"


def test_dump_log_shows_progress_on_a_terminal_stderr_and_exact_bytes_on_stdout(cli, kafkapy_broker, topic):
    import glob
    import os

    segment = max(glob.glob(os.path.join(kafkapy_broker.log_dir, f"{topic}-*", "*.log")), key=os.path.getsize)
    piped = cli("dump-log", "--files", segment, "--print-data-log")
    r = cli("dump-log", "--files", segment, "--print-data-log", env={"KAFKAPY_FORCE_TERMINAL": "stderr"})
    assert (r.rc, r.out) == (0, piped.out)  # stdout (a pipe) is byte-exact while the bar is on stderr
    assert "dump-log" in r.err and "\x1b[" in r.err
