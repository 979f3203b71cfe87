"""get-offsets, delete-records, log-dirs and broker-api-versions against real brokers."""

from __future__ import annotations

import json
import os
import re

import pytest


def create(cli, bs: str, topic: str, partitions: int = 1) -> None:
    assert cli("topics", "--create", "--topic", topic, "--partitions", str(partitions), "--bootstrap-server", bs).rc == 0


def produce(cli, bs: str, topic: str, lines: list[str], *extra: str) -> None:
    r = cli("console-producer", "--bootstrap-server", bs, "--topic", topic, *extra,
            stdin="".join(line + "\n" for line in lines).encode())
    assert r.rc == 0, r.err


def test_get_offsets_times_and_filters(cli, any_broker, unique_topic):
    kind, bs = any_broker
    create(cli, bs, unique_topic, partitions=12)
    # Three records to partition 10 and one to partition 2 (explicit partitions, through the client).
    from kafkapy.client.producer import KafkaProducer

    with KafkaProducer({"bootstrap.servers": bs, "linger.ms": 0}) as producer:
        for p, n in ((10, 3), (2, 1)):
            for i in range(n):
                producer.send(unique_topic, f"v{i}".encode(), partition=p, timestamp=1_700_000_000_000 + i).result(10)
    b = ["--bootstrap-server", bs]
    r = cli("get-offsets", "--topic", unique_topic, *b)
    expected = {0: 0, 1: 0, 2: 1, 10: 3, 11: 0}
    lines = r.lines
    # Sorted by the "topic-partition" string, as Kafka's TreeMap: -10 and -11 come before -2.
    assert lines == sorted(lines, key=lambda s: s.rsplit(":", 1)[0].replace(":", "-"))
    assert lines.index(f"{unique_topic}:10:3") < lines.index(f"{unique_topic}:2:1")
    got = {int(line.split(":")[1]): int(line.split(":")[2]) for line in lines}
    assert {p: got[p] for p in expected} == expected and len(got) == 12
    r = cli("get-offsets", "--topic-partitions", f"{unique_topic}:10,{unique_topic}:1-3", "--time", "earliest", *b)
    assert r.lines == [f"{unique_topic}:1:0", f"{unique_topic}:10:0", f"{unique_topic}:2:0"]
    if kind == "kafkapy":  # Tansu answers timestamp lookups with offset 0
        r = cli("get-offsets", "--topic", unique_topic, "--partitions", "10", "--time", "1700000000001", *b)
        assert r.lines == [f"{unique_topic}:10:1"]
        r = cli("get-offsets", "--topic", unique_topic, "--partitions", "10", "--time", "1800000000000", *b)
        assert (r.rc, r.out) == (0, b"")  # no record at or after that time: Kafka prints nothing
    r = cli("get-offsets", "--topic", unique_topic, "--partitions", "10,2", "--output", "json", *b)
    assert json.loads(r.out) == [{"topic": unique_topic, "partition": 10, "offset": 3},
                                 {"topic": unique_topic, "partition": 2, "offset": 1}]
    r = cli("get-offsets", "--topic", "no-topic-matches-this", *b)
    assert (r.rc, r.err) == (1, "Error occurred: Could not match any topic-partitions with the specified filters\n")
    r = cli("get-offsets", "--topic", "x", "--topic-partitions", "x:1", *b)
    assert (r.rc, r.err) == (1, "Error occurred: --topic-partitions cannot be used with --topic or --partitions\n")


def test_max_timestamp(cli, kafkapy_broker, unique_topic):
    bs = kafkapy_broker.bootstrap
    create(cli, bs, unique_topic)
    from kafkapy.client.producer import KafkaProducer

    with KafkaProducer({"bootstrap.servers": bs, "linger.ms": 0}) as producer:
        for ts in (5_000, 9_000, 7_000):
            producer.send(unique_topic, b"x", timestamp=ts).result(10)
    r = cli("get-offsets", "--topic", unique_topic, "--time", "max-timestamp", "--bootstrap-server", bs)
    assert r.lines == [f"{unique_topic}:0:1"]


def test_delete_records_then_earliest_offsets(cli, kafkapy_broker, unique_topic, tmp_path):
    bs = kafkapy_broker.bootstrap
    create(cli, bs, unique_topic, partitions=2)
    from kafkapy.client.producer import KafkaProducer

    with KafkaProducer({"bootstrap.servers": bs, "linger.ms": 0}) as producer:
        for p in (0, 1):
            for _i in range(5):
                producer.send(unique_topic, b"v", partition=p).result(10)
    spec = tmp_path / "offsets.json"
    spec.write_text(json.dumps({"partitions": [
        {"topic": unique_topic, "partition": 0, "offset": 3},
        {"topic": unique_topic, "partition": 1, "offset": 99},
        {"topic": "no-such-topic", "partition": 0, "offset": 1},
    ], "version": 1}))
    r = cli("delete-records", "--bootstrap-server", bs, "--offset-json-file", str(spec))
    assert r.rc == 0
    assert r.lines[:2] == ["Executing records delete operation", "Records delete operation completed:"]
    assert sorted(r.lines[2:]) == sorted([
        f"partition: {unique_topic}-0\tlow_watermark: 3",
        f"partition: {unique_topic}-1\terror: org.apache.kafka.common.errors.OffsetOutOfRangeException: The requested "
        "offset is not within the range of offsets maintained by the server.",
        "partition: no-such-topic-0\terror: org.apache.kafka.common.errors.UnknownTopicOrPartitionException: This "
        "server does not host this topic-partition.",
    ])
    r = cli("get-offsets", "--topic", unique_topic, "--time", "-2", "--bootstrap-server", bs)
    assert r.lines == [f"{unique_topic}:0:3", f"{unique_topic}:1:0"]
    spec.write_text(json.dumps({"partitions": [{"topic": unique_topic, "partition": 1, "offset": -1}]}))
    r = cli("delete-records", "--bootstrap-server", bs, "--offset-json-file", str(spec), "--output", "json")
    assert json.loads(r.out) == [{"topic": unique_topic, "partition": 1, "lowWatermark": 5, "error": None}]


def test_log_dirs(cli, kafkapy_broker, unique_topic):
    bs = kafkapy_broker.bootstrap
    create(cli, bs, unique_topic, partitions=2)
    produce(cli, bs, unique_topic, ["hello"] * 3, "--compression-codec", "none")
    r = cli("log-dirs", "--describe", "--bootstrap-server", bs, "--topic-list", unique_topic)
    assert r.rc == 0
    assert r.lines[:2] == ["Querying brokers for log directories information",
                           "Received log directory information from brokers 0"]
    doc = json.loads(r.lines[2])
    assert r.lines[2].startswith('{"brokers":[{"broker":0,"logDirs":[{"partitions":[{"partition":')
    assert r.lines[2].endswith(f',"error":null,"logDir":{json.dumps(kafkapy_broker.log_dir)}}}]}}],"version":1}}')
    parts = doc["brokers"][0]["logDirs"][0]["partitions"]
    sizes = {p["partition"]: p["size"] for p in parts}
    assert set(sizes) == {f"{unique_topic}-0", f"{unique_topic}-1"}
    on_disk = {f"{unique_topic}-{p}": sum(os.path.getsize(os.path.join(kafkapy_broker.log_dir, f"{unique_topic}-{p}", f))
                                          for f in os.listdir(os.path.join(kafkapy_broker.log_dir, f"{unique_topic}-{p}"))
                                          if f.endswith(".log")) for p in (0, 1)}
    assert sizes == on_disk and sum(sizes.values()) > 0
    assert all(p["offsetLag"] == 0 and p["isFuture"] is False for p in parts)
    r = cli("log-dirs", "--describe", "--bootstrap-server", bs, "--broker-list", "0,5")
    assert (r.rc, r.out) == (1, b"")
    assert r.err == "ERROR: The given brokers do not exist from --broker-list: 5. Current existent brokers: 0\n"
    r = cli("log-dirs", "--describe", "--bootstrap-server", bs, "--broker-list", "0", "--topic-list", "nothing-here",
            "--output", "json")
    assert json.loads(r.out)["brokers"][0]["logDirs"][0]["partitions"] == []


def test_broker_api_versions(cli, any_broker):
    kind, bs = any_broker
    r = cli("broker-api-versions", "--bootstrap-server", bs)
    assert r.rc == 0
    head, *apis, tail = r.lines
    assert re.fullmatch(r"127\.0\.0\.1:\d+ \(id: \d+ rack: null\) -> \(", head) and tail == ")"
    assert all(line.startswith("\t") for line in apis)
    assert all(line.endswith(",") for line in apis[:-1]) and not apis[-1].endswith(",")
    from kafkapy.client.admin import AdminClient
    from kafkapy.client.connection import our_version_range

    with AdminClient({"bootstrap.servers": bs}) as admin:
        lo, hi = admin.api_versions()[0]
    produce_line = f"\tProduce(0): {lo} to {hi} [usable: {min(hi, our_version_range(0)[1])}],"
    assert apis[0] == produce_line
    assert any(re.fullmatch(r"\t\w+\(\d+\): UNSUPPORTED,?", line) for line in apis)
    keys = [int(re.match(r"\t\w+\((\d+)\)", line).group(1)) for line in apis]
    assert keys == sorted(keys)
    r = cli("broker-api-versions", "--bootstrap-server", bs, "--output", "json")
    [broker] = json.loads(r.out)
    assert broker["apis"][0] == {"apiKey": 0, "name": "Produce", "minVersion": lo, "maxVersion": hi,
                                 "usable": min(hi, our_version_range(0)[1]), "unusable": None}


@pytest.mark.parametrize("tool", [["get-offsets"], ["log-dirs", "--describe"], ["broker-api-versions"]])
def test_command_config_is_read(cli, kafkapy_broker, tmp_path, tool):
    cfg = tmp_path / "c.properties"
    cfg.write_text("client.id=from-file\nrequest.timeout.ms=5000\n")
    r = cli(*tool, "--bootstrap-server", kafkapy_broker.bootstrap, "--command-config", str(cfg))
    assert r.rc == 0, r.err
    r = cli(*tool, "--bootstrap-server", kafkapy_broker.bootstrap, "--command-config", str(tmp_path / "nope"))
    assert r.rc == 1 and "nope (No such file or directory)" in r.err
