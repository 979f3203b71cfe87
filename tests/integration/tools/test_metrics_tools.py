"""Broker metrics end to end (issue 16): one broker with `prometheus.listener`, real clients producing, the
Prometheus text served at /metrics, and the tools reading it: `kafkapy jmx --one-time`, `kafkapy top --once`,
`kafkapy e2e-latency`, `kafkapy cluster cluster-id|unregister`."""

from __future__ import annotations

import glob
import json
import os
import re
import threading
import time
import urllib.request
from collections.abc import Iterator
from typing import Any

import pytest
from confluent_kafka import Producer

from kafkapy.record.memory_records import MemoryRecords

TOPIC = "orders"


@pytest.fixture(scope="module")
def broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Any]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = {"listeners": "PLAINTEXT://127.0.0.1:0", "num.network.threads": "2", "num.io.threads": "4",
             "log.dirs": str(tmp_path_factory.mktemp("metrics-broker")),
             "prometheus.listener": "http://127.0.0.1:0"}
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    try:
        yield server
    finally:
        server.shutdown()


@pytest.fixture(scope="module")
def produced(broker: Any) -> int:
    """1,000 records to TOPIC with librdkafka, acknowledged; returns their count."""
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port()}", "linger.ms": 20,
                         "acks": "all"})
    for i in range(1000):
        producer.produce(TOPIC, value=b"record-%04d" % i, key=b"k%d" % (i % 7))
    assert producer.flush(30) == 0
    return 1000


def metrics_url(broker: Any) -> str:
    return f"http://127.0.0.1:{broker.broker_metrics.endpoint.port}"


def scrape(broker: Any) -> dict[str, float]:
    text = urllib.request.urlopen(metrics_url(broker) + "/metrics", timeout=10).read().decode()
    samples = {}
    for line in text.splitlines():
        if line and not line.startswith("#"):
            name, _, value = line.rpartition(" ")
            samples[name] = float(value)
    return samples


def wait_scrape(broker: Any, key: str, expected: float, timeout_s: float = 10.0) -> dict[str, float]:
    deadline = time.monotonic() + timeout_s
    while True:
        samples = scrape(broker)
        if samples.get(key) == expected or time.monotonic() > deadline:
            return samples
        time.sleep(0.1)


def segment_batch_bytes(broker: Any, topic: str) -> int:
    total = 0
    for path in glob.glob(os.path.join(broker.config.log_dirs[0], f"{topic}-0", "*.log")):
        with open(path, "rb") as f:
            total += sum(b.size_in_bytes for b in MemoryRecords(f.read()).batches())
    return total


def test_prometheus_serves_kafka_metric_names(broker: Any, produced: int) -> None:
    key = f'kafka_server_brokertopicmetrics_messagesin_total{{topic="{TOPIC}"}}'
    samples = wait_scrape(broker, key, 1000.0)
    assert samples[key] == 1000.0
    assert samples["kafka_server_brokertopicmetrics_messagesin_total"] == 1000.0  # all topics: no label
    batch_bytes = segment_batch_bytes(broker, TOPIC)
    assert batch_bytes > 1000 * len(b"record-0000")
    assert samples[f'kafka_server_brokertopicmetrics_bytesin_total{{topic="{TOPIC}"}}'] == batch_bytes
    assert samples[f'kafka_log_log_size{{partition="0",topic="{TOPIC}"}}'] == batch_bytes
    assert samples[f'kafka_log_log_logendoffset{{partition="0",topic="{TOPIC}"}}'] == 1000.0
    assert samples["kafka_server_replicamanager_underreplicatedpartitions"] == 0.0
    assert samples["kafka_server_replicamanager_partitioncount"] >= 1.0
    assert samples["kafka_controller_kafkacontroller_activecontrollercount"] == 1.0
    assert samples["kafka_controller_kafkacontroller_offlinepartitionscount"] == 0.0
    assert samples["kafka_controller_kafkacontroller_globaltopiccount"] >= 1.0
    produce_requests = [v for k, v in samples.items()
                        if k.startswith('kafka_network_requestmetrics_requests_total{request="Produce",version=')]
    assert produce_requests and sum(produce_requests) >= 1
    for q in ("0.50", "0.75", "0.95", "0.98", "0.99", "0.999"):
        assert samples[f'kafka_network_requestmetrics_totaltimems{{quantile="{q}",request="Produce"}}'] > 0
    assert samples['kafka_network_requestmetrics_totaltimems_count{request="Produce"}'] == sum(produce_requests)
    assert samples['kafka_network_requestmetrics_errors_total{error="NONE",request="Produce"}'] >= 1
    assert 0.0 <= samples["kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent"] <= 1.0
    assert 0.0 <= samples["kafka_network_socketserver_networkprocessoravgidlepercent"] <= 1.0
    for name in ("max_buffer_utilization_percent", "max_clean_time_secs", "cleaner_recopy_percent", "deadthreadcount"):
        assert samples[f"kafka_log_logcleaner_{name}"] >= 0.0
    assert samples["kafka_server_kafkaserver_brokerstate"] == 3.0


def test_bytes_out_counts_what_consumers_fetched(broker: Any, produced: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    batch_bytes = segment_batch_bytes(broker, TOPIC)
    before = scrape(broker).get(f'kafka_server_brokertopicmetrics_bytesout_total{{topic="{TOPIC}"}}', 0.0)
    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port()}", "group.id": "bytes-out",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition(TOPIC, 0, 0)])
    seen, deadline = 0, time.monotonic() + 20
    try:
        while seen < 1000 and time.monotonic() < deadline:
            msg = consumer.poll(0.5)
            if msg is not None and not msg.error():
                seen += 1
    finally:
        consumer.close()
    assert seen == 1000
    samples = scrape(broker)
    assert samples[f'kafka_server_brokertopicmetrics_bytesout_total{{topic="{TOPIC}"}}'] - before >= batch_bytes
    assert samples[f'kafka_server_brokertopicmetrics_totalfetchrequests_total{{topic="{TOPIC}"}}'] >= 1
    assert samples["kafka_server_brokertopicmetrics_failedfetchrequests_total"] == 0.0
    assert any(k.startswith('kafka_network_requestmetrics_requests_total{request="FetchConsumer",') for k in samples)


def test_consumer_lag_where_the_broker_coordinates_the_group(broker: Any, produced: int) -> None:
    from confluent_kafka import Consumer, TopicPartition

    consumer = Consumer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port()}", "group.id": "lagging",
                         "enable.auto.commit": False})
    try:
        consumer.commit(offsets=[TopicPartition(TOPIC, 0, 400)], asynchronous=False)
    finally:
        consumer.close()
    key = f'kafka_coordinator_group_groupmetadatamanager_consumerlag{{group="lagging",partition="0",topic="{TOPIC}"}}'
    samples = scrape(broker)
    end = samples[f'kafka_log_log_logendoffset{{partition="0",topic="{TOPIC}"}}']
    assert samples[key] == end - 400
    assert samples["kafka_coordinator_group_groupmetadatamanager_numgroups"] >= 1


def test_jmx_one_time_prints_the_counter(broker: Any, produced: int, cli: Any) -> None:
    wait_scrape(broker, f'kafka_server_brokertopicmetrics_messagesin_total{{topic="{TOPIC}"}}', 1000.0)
    mbean = f"kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic={TOPIC}"
    r = cli("jmx", "--jmx-url", metrics_url(broker), "--object-name", mbean, "--attributes", "Count",
            "--one-time", "true")
    assert r.rc == 0, r.err
    assert "Trying to connect to JMX url: " + metrics_url(broker) in r.err
    header, row = r.lines
    assert header == f'"time","{mbean}:Count"'
    stamp, count = row.split(",")
    assert count == "1000" and abs(int(stamp) / 1000 - time.time()) < 60
    r = cli("jmx", "--jmx-url", metrics_url(broker) + "/metrics", "--object-name",
            "kafka.server:type=ReplicaManager,name=Under*,*", "--report-format", "tsv", "--one-time",
            "--date-format", "yyyy-MM-dd")
    assert r.rc == 0, r.err
    lines = dict(line.split("\t") for line in r.lines)
    assert re.fullmatch(r"\d{4}-\d\d-\d\d", lines["time"])
    assert lines["kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions:Value"] == "0"
    assert lines["kafka.server:type=ReplicaManager,name=UnderMinIsrPartitionCount:Value"] == "0"
    r = cli("jmx", "--jmx-url", metrics_url(broker), "--object-name", mbean, "--one-time", "--output", "json")
    doc = json.loads(r.lines[0])
    assert doc[f"{mbean}:Count"] == 1000 and doc[f"{mbean}:EventType"] == "messages"


def test_top_once_shows_rates_and_partition_health(broker: Any, produced: int, cli: Any) -> None:
    producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port()}", "linger.ms": 0})
    stop = threading.Event()

    def produce() -> None:
        deadline = time.monotonic() + 20
        while not stop.is_set() and time.monotonic() < deadline:
            producer.produce(TOPIC, value=b"x" * 100)
            producer.poll(0)
            time.sleep(0.002)
        producer.flush(10)

    thread = threading.Thread(target=produce, daemon=True)
    thread.start()
    try:
        r = cli("top", "--bootstrap-server", f"127.0.0.1:{broker.bound_port()}", "--metrics-url",
                metrics_url(broker), "--once", "--interval", "1")
    finally:
        stop.set()
        thread.join(30)
    assert r.rc == 0, r.err
    lines = r.lines
    assert lines[0].endswith("1 brokers up, 0 under-replicated, 0 offline partitions")
    assert f"0\t127.0.0.1\t{broker.bound_port()}\t-\tyes\tup" in lines
    row = next(line.split("\t") for line in lines if line.startswith(TOPIC + "\t"))
    assert row[1:5] == ["1", "0", "0", "0"]  # partitions, under-replicated, under-min-ISR, offline
    assert float(row[5].replace(",", "")) > 0 and float(row[6].replace(",", "")) > 0  # msgs and bytes in/s
    assert any(line.startswith("Produce\t") for line in lines)
    assert any(line.startswith("REQUEST-HANDLER-IDLE\t") and "%" in line for line in lines)
    # Without --metrics-url: messages in/s from log end offsets, no bytes, latency or idle figures.
    r = cli("top", "--bootstrap-server", f"127.0.0.1:{broker.bound_port()}", "--once", "--interval", "0.3",
            "--output", "json")
    assert r.rc == 0, r.err
    doc = json.loads(r.text)
    row = next(t for t in doc["topics"] if t["topic"] == TOPIC)
    assert row["partitions"] == 1 and row["msgs_in"] is not None and row["bytes_in"] is None
    assert doc["requests"] == [] and doc["handler_idle_pct"] is None


def test_e2e_latency_runs_against_the_broker(broker: Any, cli: Any) -> None:
    r = cli("e2e-latency", f"127.0.0.1:{broker.bound_port()}", "latency-topic", "30", "all", "64")
    assert r.rc == 0, r.err
    lines = r.lines
    assert lines[0] == ('Topic "latency-topic" does not exist. Will create topic with 1 partition(s) and '
                        "replication factor = 1")
    assert re.fullmatch(r"0\t\d+\.\d+(E-?\d+)?", lines[1])
    assert re.fullmatch(r"Avg latency: \d+\.\d{4} ms", lines[2])
    assert re.fullmatch(r"Percentiles: 50th = \d+, 99th = \d+, 99.9th = \d+", lines[3])
    r = cli("e2e-latency", f"127.0.0.1:{broker.bound_port()}", "latency-topic", "3", "0", "64")
    assert r.rc == 1 and "Latency testing requires synchronous acknowledgement. Please use 1 or all" in r.err
    r = cli("e2e-latency", f"127.0.0.1:{broker.bound_port()}", "latency-topic")
    assert r.rc == 1 and r.err.startswith("USAGE: java org.apache.kafka.tools.EndToEndLatency broker_list topic")


def test_cluster_tool(broker: Any, cli: Any) -> None:
    r = cli("cluster", "cluster-id", "--bootstrap-server", f"127.0.0.1:{broker.bound_port()}")
    assert r.rc == 0, r.err
    assert r.lines == [f"Cluster ID: {broker.metadata_cache.get_cluster_id()}"]
    r = cli("cluster", "unregister", "-b", f"127.0.0.1:{broker.bound_port()}", "--id", "3")
    assert r.lines == ["The target cluster does not support the broker unregistration API."]
    r = cli("cluster", "cluster-id", "-b", f"127.0.0.1:{broker.bound_port()}", "--output", "json")
    assert json.loads(r.text) == {"cluster_id": broker.metadata_cache.get_cluster_id()}


def test_quota_sensors_once_a_produce_quota_is_set(broker: Any, produced: int) -> None:
    from kafkapy.client.admin_quotas import ClientQuotaAlteration, ClientQuotaEntity
    from kafkapy.tools.tool_support import admin_client

    admin = admin_client(f"127.0.0.1:{broker.bound_port()}")
    try:
        admin.alter_client_quotas([ClientQuotaAlteration(ClientQuotaEntity.of({"client-id": "quota-app"}),
                                                         {"producer_byte_rate": 1_000_000.0})])
    finally:
        admin.close()
    key = 'kafka_server_quota_throttle_time{clientId="quota-app",resource="Produce",user="ANONYMOUS"}'
    deadline = time.monotonic() + 20
    samples: dict[str, float] = {}
    while key not in samples and time.monotonic() < deadline:
        producer = Producer({"bootstrap.servers": f"127.0.0.1:{broker.bound_port()}", "client.id": "quota-app"})
        producer.produce(TOPIC, value=b"q" * 100)
        assert producer.flush(10) == 0
        samples = scrape(broker)
    assert samples[key] == 0.0  # 100 bytes: far under 1 MB/s, never throttled
    assert 'kafka_server_quota_byte_rate{clientId="quota-app",resource="Produce",user="ANONYMOUS"}' in samples


def test_top_rich_view_renders(broker: Any, produced: int) -> None:
    import io

    from rich.console import Console

    from kafkapy.cli.top import rich_view
    from kafkapy.tools.tool_support import admin_client
    from kafkapy.tools.top import Top

    admin = admin_client(f"127.0.0.1:{broker.bound_port()}")
    try:
        top = Top(admin, [metrics_url(broker)])
        top.snapshot()
        snap = top.snapshot()
    finally:
        admin.close()
    buf = io.StringIO()
    Console(file=buf, width=140, force_terminal=False).print(rich_view(snap))
    text = buf.getvalue()
    assert "Brokers" in text and "Topics" in text and TOPIC in text and "Requests (p99 ms" in text
