"""topics --describe with a partition filter on a terminal (issue 17 item 12): Kafka prints no topic header then,
so kafkapy draws one table with a Topic column instead of one nameless table per topic; piped, Kafka's lines."""

from __future__ import annotations

import re

TERMINAL = {"KAFKAPY_FORCE_TERMINAL": "1", "COLUMNS": "200"}
ANSI = re.compile(r"\x1b\[[0-9;]*m")


def test_filtered_describe_is_one_table_naming_the_topics(cli, kafkapy_broker, unique_topic) -> None:
    b = ["--bootstrap-server", kafkapy_broker.bootstrap]
    topics = [f"{unique_topic}-a", f"{unique_topic}-b"]
    for t in topics:
        assert cli("topics", "--create", "--topic", t, "--partitions", "2", *b).rc == 0
    pattern = f"{unique_topic}-.*"
    # one replica, min.insync.replicas=1: every partition is at its minimum ISR
    piped = cli("topics", "--describe", "--topic", pattern, "--at-min-isr-partitions", *b)
    assert piped.rc == 0 and len(piped.lines) == 4 and all(line.startswith("\tTopic: ") for line in piped.lines)
    r = cli("topics", "--describe", "--topic", pattern, "--at-min-isr-partitions", *b, env=TERMINAL)
    text = ANSI.sub("", r.out.decode())
    assert text.count("╭") == 1  # one table, not one per topic
    rows = [[c.strip() for c in line.strip().strip("│").split("│")] for line in text.splitlines()
            if line.startswith("│")]
    assert rows[0][:3] == ["Topic", "Partition", "Leader"]
    assert sorted((row[0], row[1]) for row in rows[1:]) == [(t, p) for t in topics for p in ("0", "1")]
