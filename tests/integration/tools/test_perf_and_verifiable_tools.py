"""producer-perf-test, consumer-perf-test, verifiable-producer and verifiable-consumer end to end: the counts
they print match what really landed in the log (read back with the client) and what the group committed."""

from __future__ import annotations

import json
import re
import time

from kafkapy.common.topic_partition import TopicPartition

FINAL = re.compile(r"^(\d+) records sent, \d+\.\d{6} records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d{2} ms avg latency, "
                   r"\d+\.\d{2} ms max latency, \d+ ms 50th, \d+ ms 95th, \d+ ms 99th, \d+ ms 99\.9th\.$")
WINDOW = re.compile(r"^(\d+) records sent, \d+\.\d records/sec \(\d+\.\d{2} MB/sec\), \d+\.\d ms avg latency, "
                    r"\d+\.\d ms max latency\.$")
HEADER = ("start.time, end.time, data.consumed.in.MB, MB.sec, data.consumed.in.nMsg, nMsg.sec, rebalance.time.ms, "
          "fetch.time.ms, fetch.MB.sec, fetch.nMsg.sec")
DATE = r"\d{4}-\d\d-\d\d \d\d:\d\d:\d\d:\d{3}"
NUM = r"\d+\.\d{4}"


def create(cli, bootstrap: str, topic: str, partitions: int) -> None:
    r = cli("topics", "--create", "--topic", topic, "--partitions", str(partitions), "--replication-factor", "1",
            "--bootstrap-server", bootstrap)
    assert r.rc == 0, r.err


def read_all(bootstrap: str, topic: str, partitions: int, expected: int, check_end_offsets: bool = True) -> list:
    """Every record of the topic, read with the client; exactly `expected` of them, each offset once."""
    from kafkapy.client.consumer import KafkaConsumer

    consumer = KafkaConsumer({"bootstrap.servers": bootstrap, "auto.offset.reset": "earliest"})
    try:
        tps = [TopicPartition(topic, p) for p in range(partitions)]
        consumer.assign(tps)
        if check_end_offsets:  # (Tansu answers ListOffsets(latest) with stale offsets)
            assert sum(consumer.end_offsets(tps).values()) == expected
        records: list = []
        deadline = time.monotonic() + 20
        while len(records) < expected and time.monotonic() < deadline:
            records += consumer.poll(500)
        records += consumer.poll(100)  # nothing more may arrive
        assert len(records) == expected == len({(r.partition, r.offset) for r in records})
        return records
    finally:
        consumer.close()


def perf(cli, bootstrap: str, topic: str, *extra: str):
    return cli("producer-perf-test", "--topic", topic, "--bootstrap-server", bootstrap, *extra)


def test_producer_perf_test_counts_and_records_land(cli, any_broker, unique_topic):
    kind, bs = any_broker
    create(cli, bs, unique_topic, 2)
    before = int(time.time() * 1000)
    r = perf(cli, bs, unique_topic, "--num-records", "5000", "--record-size", "100", "--throughput", "-1",
             "--producer-props", "acks=1", "linger.ms=5")
    after = int(time.time() * 1000)
    assert (r.rc, r.err) == (0, "")
    m = FINAL.match(r.lines[-1])
    assert m and m.group(1) == "5000", r.text
    assert all(WINDOW.match(line) for line in r.lines[:-1])
    records = read_all(bs, unique_topic, 2, 5000, check_end_offsets=kind == "kafkapy")
    payloads = {rec.value for rec in records}
    assert len(payloads) == 1  # one payload reused for every record, as Kafka's --record-size
    (payload,) = payloads
    assert len(payload) == 100 and set(payload) <= set(range(ord("A"), ord("Z") + 1))
    assert all(rec.key is None and before <= rec.timestamp <= after for rec in records)


def test_payload_file_and_monotonic_payloads(cli, kafkapy_broker, unique_topic, tmp_path):
    bs = kafkapy_broker.bootstrap
    create(cli, bs, unique_topic, 1)
    payload_file = tmp_path / "payloads.txt"
    payload_file.write_text("alpha|beta|gamma|")
    r = perf(cli, bs, unique_topic, "--num-records", "300", "--payload-file", str(payload_file), "--payload-delimiter",
             r"\|", "--throughput", "-1")
    assert r.rc == 0, r.err
    assert r.lines[:2] == [f"Reading payloads from: {payload_file}", "Number of messages read: 3"]
    assert FINAL.match(r.lines[-1]).group(1) == "300"
    values = [rec.value for rec in read_all(bs, unique_topic, 1, 300)]
    assert len(values) == 300 and set(values) == {b"alpha", b"beta", b"gamma"}

    topic2 = unique_topic + "-mono"
    create(cli, bs, topic2, 1)
    r = perf(cli, bs, topic2, "--num-records", "200", "--payload-monotonic", "--throughput", "-1")
    assert r.rc == 0 and FINAL.match(r.lines[-1]).group(1) == "200"
    values = [rec.value for rec in read_all(bs, topic2, 1, 200)]
    assert values == [str(i).encode() for i in range(200)]  # one partition: send order


def test_throttled_run_prints_windows_metrics_and_json(cli, kafkapy_broker, unique_topic):
    bs = kafkapy_broker.bootstrap
    create(cli, bs, unique_topic, 1)
    r = perf(cli, bs, unique_topic, "--num-records", "600", "--record-size", "10", "--throughput", "3000",
             "--reporting-interval", "40", "--warmup-records", "100", "--print-metrics")
    assert r.rc == 0, r.err
    lines = r.lines
    assert lines[0] == "Warmup first 100 records. Steady state results will print after the complete test summary."
    finals = [i for i, line in enumerate(lines) if FINAL.match(line)]
    assert len(finals) == 1 and FINAL.match(lines[finals[0]]).group(1) == "600"
    steady = lines[finals[0] + 1]
    assert re.match(r"^500 steady state records sent, ", steady), steady
    windows = [line for line in lines[1:finals[0]] if WINDOW.match(line)]
    assert windows, lines  # 600 records at 3000/s take ~200 ms: several 40 ms windows
    assert "In steady state." in lines
    metrics = lines[finals[0] + 2:]
    assert metrics[0] == "" and metrics[1].startswith("Metric Name ") and metrics[1].endswith("   Value")
    assert any(re.match(r"^producer-metrics:record-send-total:\{client-id=perf-producer-client\} +: 600\.000$", m)
               for m in metrics)

    r = perf(cli, bs, unique_topic, "--num-records", "400", "--record-size", "10", "--throughput", "2000",
             "--reporting-interval", "40", "--output", "json")
    assert r.rc == 0, r.err
    events = [json.loads(line) for line in r.lines]
    assert {e["type"] for e in events[:-1]} == {"window"}
    total = events[-1]
    assert total["type"] == "total" and total["records"] == 400 and total["bytes"] == 4000
    assert total["elapsedMs"] >= 150  # throttled to ~2000 records/s
    assert read_all(bs, unique_topic, 1, 1000)[-1].offset == 999


def test_consumer_perf_test_reads_what_was_produced(cli, broker_factory, unique_topic):
    bs = broker_factory(overrides={"group.initial.rebalance.delay.ms": "0"}).bootstrap
    create(cli, bs, unique_topic, 2)
    assert perf(cli, bs, unique_topic, "--num-records", "5000", "--record-size", "100", "--throughput", "-1").rc == 0

    r = cli("consumer-perf-test", "--bootstrap-server", bs, "--topic", unique_topic, "--messages", "5000",
            "--group", "perf-a")
    assert (r.rc, r.err) == (0, "")
    assert r.lines[0] == HEADER
    m = re.match(rf"^({DATE}), ({DATE}), ({NUM}), ({NUM}), (\d+), ({NUM}), (\d+), (-?\d+), ({NUM}|NaN|Infinity), "
                 rf"({NUM}|NaN|Infinity)$", r.lines[1])
    assert m and len(r.lines) == 2, r.text
    assert (m.group(3), m.group(5)) == ("0.4768", "5000")  # 500,000 bytes in MiB

    r = cli("consumer-perf-test", "--broker-list", bs, "--include", unique_topic + ".*", "--messages", "5000",
            "--hide-header", "--output", "json", "--print-metrics")
    assert r.rc == 0, r.err
    events = [json.loads(line) for line in r.lines]
    total = next(e for e in events if e["type"] == "total")
    assert (total["messages"], total["bytes"]) == (5000, 500000)
    metrics = next(e for e in events if e["type"] == "metrics")["metrics"]
    assert metrics["consumer-fetch-manager-metrics:records-consumed-total:{client-id=perf-consumer-client}"] == 5000.0

    r = cli("consumer-perf-test", "--bootstrap-server", bs, "--topic", unique_topic, "--messages", "6000",
            "--timeout", "700", "--show-detailed-stats", "--reporting-interval", "1", "--group", "perf-b")
    assert r.rc == 0, r.err
    assert r.lines[0].startswith("time, threadId, data.consumed.in.MB, ")
    assert r.lines[-1] == ("WARNING: Exiting before consuming the expected number of messages: timeout (700 ms) "
                           "exceeded. You can use the --timeout option to increase the timeout.")
    progress = r.lines[1:-1]
    assert progress and all(re.match(rf"^{DATE}, 0, {NUM}, {NUM}, \d+, {NUM}, \d+, -?\d+, {NUM}, {NUM}$", line)
                            for line in progress), r.text


def test_verifiable_producer_then_consumer(cli, broker_factory, unique_topic):
    bs = broker_factory(overrides={"group.initial.rebalance.delay.ms": "0"}).bootstrap
    create(cli, bs, unique_topic, 2)
    r = cli("verifiable-producer", "--bootstrap-server", bs, "--topic", unique_topic, "--max-messages", "200",
            "--repeating-keys", "3", "--value-prefix", "9")
    assert (r.rc, r.err) == (0, "")
    events = [json.loads(line) for line in r.lines]
    assert [e["name"] for e in events[:1] + events[-2:]] == ["startup_complete", "shutdown_complete", "tool_data"]
    sent = [e for e in events if e["name"] == "producer_send_success"]
    assert sorted(e["value"] for e in sent) == sorted(f"9.{i}" for i in range(200))
    assert all(e["key"] == str(int(e["value"].split(".")[1]) % 3) for e in sent)
    assert list(sent[0]) == ["timestamp", "name", "key", "value", "topic", "partition", "offset"]
    per_partition: dict[int, list[int]] = {}
    for e in sent:
        per_partition.setdefault(e["partition"], []).append(e["offset"])
    assert all(sorted(offs) == list(range(len(offs))) for offs in per_partition.values())
    tool_data = events[-1]
    assert (tool_data["sent"], tool_data["acked"], tool_data["target_throughput"]) == (200, 200, -1)
    landed = {(rec.partition, rec.offset): (rec.key, rec.value) for rec in read_all(bs, unique_topic, 2, 200)}
    assert landed == {(e["partition"], e["offset"]): (e["key"].encode(), e["value"].encode()) for e in sent}

    r = cli("verifiable-consumer", "--bootstrap-server", bs, "--topic", unique_topic, "--group-id", "verify-group",
            "--max-messages", "200", "--session-timeout", "10000")
    assert (r.rc, r.err) == (0, "")
    events = [json.loads(line) for line in r.lines]
    names = [e["name"] for e in events]
    assert names[0] == "startup_complete" and names[-1] == "shutdown_complete"
    assigned = next(e for e in events if e["name"] == "partitions_assigned")
    assert sorted(p["partition"] for p in assigned["partitions"]) == [0, 1]
    consumed = [p for e in events if e["name"] == "records_consumed" for p in e["partitions"]]
    assert sum(p["count"] for p in consumed) == 200
    commits = [e for e in events if e["name"] == "offsets_committed"]
    assert commits and all(e["success"] for e in commits)
    last_commit: dict[int, int] = {}
    for e in commits:
        for o in e["offsets"]:
            last_commit[o["partition"]] = o["offset"]
    assert last_commit == {p: len(offs) for p, offs in per_partition.items()}
    assert "partitions_revoked" in names

    from kafkapy.tools.tool_support import admin_client

    admin = admin_client(bs)
    try:
        committed = admin.list_consumer_group_offsets("verify-group")
    finally:
        admin.close()
    assert {tp.partition: om.offset for tp, om in committed.items()} == last_commit
