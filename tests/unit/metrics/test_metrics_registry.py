"""kafkapy.metrics: Yammer Meter / Histogram semantics under MockTime, MBean names, the JMX exporter's Kafka
rules and the Prometheus collector's output."""

from __future__ import annotations

import math

from prometheus_client import generate_latest
from prometheus_client.registry import CollectorRegistry

from kafkapy.common.time import MockTime
from kafkapy.metrics import MetricsRegistry, metric_name, parse_mbean_name
from kafkapy.metrics.histogram import quantile
from kafkapy.metrics.jmx_rules import map_attribute
from kafkapy.metrics.meter import Meter
from kafkapy.metrics.metric_name import mbean_matches
from kafkapy.metrics.prometheus import KafkaCollector, mbeans_json


def test_meter_count_and_ewma_follow_yammer() -> None:
    time = MockTime()
    meter = Meter("messages", time=time)
    meter.mark(300)  # 300 events in the first 5 s tick: instant rate 60/s sets every average outright
    assert meter.one_minute_rate == 0.0
    time.advance(5_000)
    assert meter.count == 300
    assert meter.one_minute_rate == 60.0 and meter.fifteen_minute_rate == 60.0
    time.advance(60_000)  # twelve idle ticks decay the 1-minute average by exp(-1)
    assert math.isclose(meter.one_minute_rate, 60.0 * math.exp(-1.0), rel_tol=1e-9)
    assert math.isclose(meter.five_minute_rate, 60.0 * math.exp(-1.0 / 5), rel_tol=1e-9)
    assert math.isclose(meter.mean_rate, 300 / 65.0)
    attrs = meter.attributes()
    assert list(attrs)[:3] == ["Count", "EventType", "RateUnit"] and attrs["EventType"] == "messages"


def test_nanosecond_meter_rate_is_a_fraction() -> None:
    time = MockTime()
    idle = Meter("percent", "NANOSECONDS", time)
    time.advance(10_000)
    idle.mark(7_500_000_000)  # 7.5 s idle of 10 s
    assert math.isclose(idle.mean_rate, 0.75)


def test_histogram_stats_and_percentiles() -> None:
    registry = MetricsRegistry(MockTime())
    hist = registry.histogram(metric_name("kafka.network", "RequestMetrics", "TotalTimeMs", request="Produce"))
    for v in range(1, 101):
        hist.update(float(v))
    attrs = hist.attributes()
    assert attrs["Count"] == 100 and attrs["Min"] == 1.0 and attrs["Max"] == 100.0 and attrs["Mean"] == 50.5
    assert math.isclose(attrs["StdDev"], math.sqrt(sum((v - 50.5) ** 2 for v in range(1, 101)) / 99))
    assert attrs["50thPercentile"] == 50.5 and attrs["99thPercentile"] == 99.99 and attrs["999thPercentile"] == 100.0
    assert quantile([1.0, 2.0], 0.1) == 1.0


def test_reservoir_keeps_1028_values() -> None:
    registry = MetricsRegistry(MockTime())
    hist = registry.histogram(metric_name("kafka.log", "LogFlushStats", "LogFlushRateAndTimeMs"))
    for v in range(5000):
        hist.update(float(v))
    assert hist.count == 5000 and len(hist.values()) == 1028


def test_mbean_names_and_patterns() -> None:
    name = metric_name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="orders")
    assert name.mbean_name == "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=orders"
    assert metric_name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="").mbean_name == \
        "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec"
    assert parse_mbean_name(name.mbean_name) == name
    assert mbean_matches(name.mbean_name, "kafka.server:type=BrokerTopicMetrics,*")
    assert mbean_matches(name.mbean_name, "kafka.*:type=BrokerTopicMetrics,name=Messages*,*")
    assert not mbean_matches(name.mbean_name, "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec")
    assert mbean_matches(name.mbean_name, "kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=orders")


def test_jmx_exporter_rules() -> None:
    cases = {
        ("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec,topic=orders", "Count"):
            ("kafka_server_brokertopicmetrics_messagesin_total", "counter", (("topic", "orders"),)),
        ("kafka.network:type=RequestMetrics,name=RequestsPerSec,request=Produce,version=9", "Count"):
            ("kafka_network_requestmetrics_requests_total", "counter", (("request", "Produce"), ("version", "9"))),
        ("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Fetch", "99thPercentile"):
            ("kafka_network_requestmetrics_totaltimems", "gauge", (("request", "Fetch"), ("quantile", "0.99"))),
        ("kafka.network:type=RequestMetrics,name=TotalTimeMs,request=Fetch", "999thPercentile"):
            ("kafka_network_requestmetrics_totaltimems", "gauge", (("request", "Fetch"), ("quantile", "0.999"))),
        ("kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions", "Value"):
            ("kafka_server_replicamanager_underreplicatedpartitions", "gauge", ()),
        ("kafka.controller:type=KafkaController,name=ActiveControllerCount", "Value"):
            ("kafka_controller_kafkacontroller_activecontrollercount", "gauge", ()),
        ("kafka.server:type=KafkaRequestHandlerPool,name=RequestHandlerAvgIdlePercent", "MeanRate"):
            ("kafka_server_kafkarequesthandlerpool_requesthandleravgidle_percent", "gauge", ()),
        ("kafka.server:type=Produce,user=alice,client-id=app", "throttle-time"):
            ("kafka_server_quota_throttle_time", "gauge",
             (("resource", "Produce"), ("user", "alice"), ("clientId", "app"))),
        ("kafka.log:type=Log,name=Size,topic=orders,partition=3", "Value"):
            ("kafka_log_log_size", "gauge", (("topic", "orders"), ("partition", "3"))),
    }
    for (mbean, attr), expected in cases.items():
        assert tuple(map_attribute(mbean, attr)) == expected, mbean  # type: ignore[arg-type]
    assert map_attribute("kafka.server:type=BrokerTopicMetrics,name=MessagesInPerSec", "OneMinuteRate") is None


def test_collector_text_output() -> None:
    time = MockTime()
    registry = MetricsRegistry(time)
    registry.meter(metric_name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec"), "messages").mark(7)
    registry.meter(metric_name("kafka.server", "BrokerTopicMetrics", "MessagesInPerSec", topic="orders"),
                   "messages").mark(7)
    registry.gauge(metric_name("kafka.server", "ReplicaManager", "UnderReplicatedPartitions"), lambda: 2)
    registry.histogram(metric_name("kafka.network", "RequestMetrics", "TotalTimeMs", request="Produce")).update(3.0)
    prom = CollectorRegistry(auto_describe=False)
    prom.register(KafkaCollector(registry))  # type: ignore[arg-type]
    lines = set(generate_latest(prom).decode().splitlines())
    assert "# TYPE kafka_server_brokertopicmetrics_messagesin_total counter" in lines
    assert "kafka_server_brokertopicmetrics_messagesin_total 7.0" in lines
    assert 'kafka_server_brokertopicmetrics_messagesin_total{topic="orders"} 7.0' in lines
    assert "kafka_server_replicamanager_underreplicatedpartitions 2.0" in lines
    assert 'kafka_network_requestmetrics_totaltimems{quantile="0.99",request="Produce"} 3.0' in lines
    assert 'kafka_network_requestmetrics_totaltimems_count{request="Produce"} 1.0' in lines
    jmx = mbeans_json(registry, ["kafka.server:type=ReplicaManager,*"])
    assert jmx == {"kafka.server:type=ReplicaManager,name=UnderReplicatedPartitions": {"Value": 2}}


def test_error_counts_walk_every_error_field() -> None:
    from kafkapy.protocol.messages import FetchResponse, ProduceResponse
    from kafkapy.server.request_metrics import error_counts, error_name

    produce = ProduceResponse(responses=[ProduceResponse.TopicProduceResponse(name="a", partition_responses=[
        ProduceResponse.PartitionProduceResponse(index=0, error_code=0),
        ProduceResponse.PartitionProduceResponse(index=1, error_code=6)])])
    assert error_counts(produce) == {0: 1, 6: 1}
    fetch = FetchResponse(error_code=0, responses=[FetchResponse.FetchableTopicResponse(topic="a", partitions=[
        FetchResponse.PartitionData(partition_index=0, error_code=1)])])
    assert error_counts(fetch) == {0: 1, 1: 1}
    assert (error_name(0), error_name(6)) == ("NONE", "NOT_LEADER_OR_FOLLOWER")


def test_histogram_set_batch_keeps_yammer_stats() -> None:
    from kafkapy.metrics.histogram import HistogramSet

    time = MockTime()
    hs = HistogramSet(2, time)
    hs.update_batch([[float(v) for v in range(1, 101)], [2.0] * 100], time.nanoseconds())
    hs.update((101.0, 2.0))
    first, second = (h.attributes() for h in hs.members)
    assert first["Count"] == 101 and first["Min"] == 1.0 and first["Max"] == 101.0 and first["Mean"] == 51.0
    assert math.isclose(first["StdDev"], math.sqrt(sum((v - 51.0) ** 2 for v in range(1, 102)) / 100))
    assert first["50thPercentile"] == 51.0 and second["StdDev"] == 0.0 and second["99thPercentile"] == 2.0


def test_accumulators_fold_into_meters() -> None:
    import threading

    from kafkapy.metrics.meter import Accumulator, ThreadAccumulator

    acc, shared = Accumulator(), ThreadAccumulator()
    acc.mark(5)
    threads = [threading.Thread(target=lambda: [shared.mark(1) for _ in range(1000)]) for _ in range(4)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert (acc.drain(), acc.drain(), shared.drain(), shared.drain()) == (5, 0, 4000, 0)


def test_error_plans_find_every_code_the_general_walk_finds() -> None:
    """error_plan's parts (read by the recorder) reach the same error fields as error_counts, per shape."""
    from collections import Counter

    from kafkapy.protocol.messages import FetchResponse, MetadataResponse, ProduceResponse
    from kafkapy.server.request_metrics import error_counts, error_plan

    bodies = [
        ProduceResponse(responses=[ProduceResponse.TopicProduceResponse(name="a", partition_responses=[
            ProduceResponse.PartitionProduceResponse(index=0, error_code=0),
            ProduceResponse.PartitionProduceResponse(index=1, error_code=6)])]),
        FetchResponse(error_code=0, responses=[FetchResponse.FetchableTopicResponse(topic="a", partitions=[
            FetchResponse.PartitionData(partition_index=0, error_code=1)])]),
        MetadataResponse(topics=[MetadataResponse.MetadataResponseTopic(name="x", error_code=3, partitions=[
            MetadataResponse.MetadataResponsePartition(error_code=5)])]),
    ]
    for body in bodies:
        plan = error_plan(type(body))
        assert plan is not None
        codes: list[int] = []
        for kind, outer, inner in plan:
            if kind == 0:
                codes.append(getattr(body, outer))
            elif kind == 1:
                codes += [item.error_code for item in getattr(body, outer)]
            else:
                codes += [p.error_code for t in getattr(body, outer) for p in getattr(t, inner)]
        assert dict(Counter(c or 0 for c in codes)) == error_counts(body), type(body).__name__
