"""The hot-path recorders' queues and folds: BrokerTopicStats per-topic rows, RequestMetrics rows per request
type, and the batch reservoir's order-statistics draw (kafkapy.metrics.histogram._top_priorities)."""

from __future__ import annotations

import random
from types import SimpleNamespace

import pytest

from kafkapy.common.time import MockTime
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.metrics import MetricsRegistry, metric_name
from kafkapy.metrics.histogram import RESERVOIR_SIZE, HistogramSet, _top_priorities
from kafkapy.protocol.messages import ProduceResponse
from kafkapy.server.broker_topic_stats import BrokerTopicStats
from kafkapy.server.request_metrics import RequestMetrics


def _count(registry: MetricsRegistry, name: str, **tags: object) -> int:
    meter = registry.get(metric_name("kafka.server", "BrokerTopicMetrics", name, **tags))
    return 0 if meter is None else meter.count


def test_topic_stats_fold_sums_each_topics_rows() -> None:
    registry = MetricsRegistry(MockTime())
    stats = BrokerTopicStats(registry)
    stats.on_append("a", 1000, 16)
    stats.on_append("a", 500, 4)
    stats.on_append("b", 70, 1)
    fetched = {TopicPartition("a", 0): SimpleNamespace(records=b"x" * 300, error=0),
               TopicPartition("a", 1): SimpleNamespace(records=None, error=6),
               TopicPartition("b", 0): SimpleNamespace(records=b"y" * 40, error=0)}
    stats.on_fetch_response(fetched, from_follower=False)
    stats.on_fetch_response({TopicPartition("a", 0): SimpleNamespace(records=b"z" * 9, error=0)}, from_follower=True)
    registry.fold()
    assert (_count(registry, "BytesInPerSec", topic="a"), _count(registry, "MessagesInPerSec", topic="a"),
            _count(registry, "TotalProduceRequestsPerSec", topic="a")) == (1500, 20, 2)
    assert (_count(registry, "BytesInPerSec"), _count(registry, "MessagesInPerSec"),
            _count(registry, "TotalProduceRequestsPerSec")) == (1570, 21, 3)
    assert (_count(registry, "BytesOutPerSec", topic="a"), _count(registry, "BytesOutPerSec", topic="b"),
            _count(registry, "BytesOutPerSec"), _count(registry, "ReplicationBytesOutPerSec")) == (300, 40, 340, 9)
    assert (_count(registry, "TotalFetchRequestsPerSec", topic="a"), _count(registry, "TotalFetchRequestsPerSec"),
            _count(registry, "FailedFetchRequestsPerSec", topic="a"), _count(registry, "FailedFetchRequestsPerSec"),
            _count(registry, "FailedFetchRequestsPerSec", topic="b")) == (3, 4, 1, 1, 0)
    registry.fold()  # nothing queued twice
    assert _count(registry, "BytesInPerSec") == 1570
    stats.on_append("b", 5, 1)
    stats.remove_topic("b")  # a deleted topic's queued rows go with its meters
    registry.fold()
    assert _count(registry, "BytesInPerSec", topic="b") == 0 and _count(registry, "BytesInPerSec") == 1570


def _request(api_key: int, version: int, start: int, frame: bytes, follower: bool = False) -> SimpleNamespace:
    return SimpleNamespace(request=SimpleNamespace(start_ns=start, dequeue_ns=start + 2_000_000, frame=frame),
                           header=SimpleNamespace(api_key=api_key, api_version=version, client_id="c"),
                           handler_ns=3_000_000, quota_exempt=follower)


def test_request_rows_fold_into_each_request_types_metrics() -> None:
    time = MockTime()
    registry = MetricsRegistry(time)
    metrics = RequestMetrics(registry)
    ok = ProduceResponse(responses=[ProduceResponse.TopicProduceResponse(name="a", partition_responses=[
        ProduceResponse.PartitionProduceResponse(index=0, error_code=0)])])
    failed = ProduceResponse(responses=[ProduceResponse.TopicProduceResponse(name="a", partition_responses=[
        ProduceResponse.PartitionProduceResponse(index=0, error_code=0),
        ProduceResponse.PartitionProduceResponse(index=1, error_code=6)])])
    start = time.nanoseconds() - 10_000_000  # arrived 10 ms ago; dequeued at +2 ms, handled for 3 ms
    metrics.record(_request(0, 9, start, b"p" * 100), ok, start + 6_000_000, 0)
    metrics.record(_request(0, 9, start, b"p" * 300), failed, start + 6_000_000, 0)
    metrics.record(_request(0, 7, start, b"p" * 50), None, start + 6_000_000, 0)
    metrics.record(_request(1, 12, start, b"f" * 70, follower=True), None, start + 8_000_000, 0)
    registry.fold()

    def get(name: str, **tags: object) -> dict[str, float | int | str]:
        metric = registry.get(metric_name("kafka.network", "RequestMetrics", name, **tags))
        assert metric is not None, (name, tags)
        attributes: dict[str, float | int | str] = metric.attributes()
        return attributes

    assert get("RequestsPerSec", request="Produce", version=9)["Count"] == 2
    assert get("RequestsPerSec", request="Produce", version=7)["Count"] == 1
    total = get("TotalTimeMs", request="Produce")
    assert (total["Count"], total["Min"], total["Max"], total["StdDev"]) == (3, 10.0, 10.0, 0.0)
    assert get("RequestQueueTimeMs", request="Produce")["Mean"] == 2.0
    assert get("LocalTimeMs", request="Produce")["Mean"] == 3.0
    assert get("RemoteTimeMs", request="Produce")["Mean"] == 1.0  # send start 6 ms - (dequeue 2 + local 3)
    assert get("ResponseSendTimeMs", request="Produce")["Mean"] == 4.0  # end (now) - send start
    assert (get("RequestBytes", request="Produce")["Mean"], get("RequestBytes", request="Produce")["Max"]) == (150.0,
                                                                                                               300.0)
    assert get("ErrorsPerSec", request="Produce", error="NONE")["Count"] == 3  # acks=0 counts as NONE
    assert get("ErrorsPerSec", request="Produce", error="NOT_LEADER_OR_FOLLOWER")["Count"] == 1
    assert get("RequestsPerSec", request="FetchFollower", version=12)["Count"] == 1
    assert get("RequestsPerSec", request="Fetch", version=12)["Count"] == 1
    assert get("RemoteTimeMs", request="FetchFollower")["Mean"] == 3.0


def test_top_priorities_are_the_batchs_largest_above_the_floor() -> None:
    rnd = random.Random(7).random
    # Reservoir not full (floor 0): the batch's RESERVOIR_SIZE largest priorities, largest first.
    top = _top_priorities(100_000, 1.0, 0.0, rnd)
    assert len(top) == RESERVOIR_SIZE and top == sorted(top, reverse=True)
    assert len(_top_priorities(10, 1.0, 0.0, rnd)) == 10
    # A full reservoir whose floor is 200: a priority 1 / u beats it when u < 1/200; of 100,000 events about
    # 500 do (binomial, sd 22).
    counts = [len(_top_priorities(100_000, 1.0, 200.0, rnd)) for _ in range(20)]
    assert min(_top_priorities(100_000, 1.0, 200.0, rnd)) > 200.0
    assert 480 < sum(counts) / len(counts) < 520 and all(400 < c < 600 for c in counts)


def test_batch_reservoir_keeps_a_uniform_sample_of_one_batch() -> None:
    time = MockTime()
    hs = HistogramSet(1, time)
    random.seed(11)
    hs.update_batch([list(range(100_000))], time.nanoseconds())
    values = hs.members[0].values()
    assert len(values) == RESERVOIR_SIZE and len(set(values)) == RESERVOIR_SIZE
    assert 40_000 < hs.members[0].percentile(0.5) < 60_000  # a uniform sample's median (sd ~1,500)
    attrs = hs.members[0].attributes()
    assert (attrs["Count"], attrs["Min"], attrs["Max"], attrs["Mean"]) == (100_000, 0.0, 99_999.0, 49_999.5)


def test_compiled_draw_gives_the_same_priorities_and_uniform_distinct_events() -> None:
    """kafkapy/metrics/_reservoir.c draws the priorities _top_priorities draws from the same uniforms, and picks
    distinct event indices uniformly (both the rejection and the shuffle branch)."""
    from kafkapy.metrics import histogram

    assert histogram._compiled_draw is not None and histogram.draw is histogram._compiled_draw
    for n, weight, floor in ((100_000, 1.0, 0.0), (10, 1.0, 0.0), (100_000, 1.3, 200.0), (1_500, 2.0, 0.0)):
        priorities, picked = histogram._compiled_draw(n, weight, floor, RESERVOIR_SIZE, random.Random(5).random)
        assert priorities == _top_priorities(n, weight, floor, random.Random(5).random)
        assert len(set(picked)) == len(picked) == len(priorities) and all(0 <= i < n for i in picked)
    rnd = random.Random(3).random
    for n, floor, rounds in ((10, 0.0, 2_000), (5_000, 4_000.0, 400)):  # all 10 picked; about 1 in 4,000
        hits = [0] * n
        for _ in range(rounds):
            for i in histogram._compiled_draw(n, 1.0, floor, RESERVOIR_SIZE, rnd)[1]:
                hits[i] += 1
        if n == 10:
            assert hits == [rounds] * 10
        else:  # ~1.25 picks per round over 5,000 events: each half of the range gets about half
            assert 0.4 < sum(hits[:2_500]) / sum(hits) < 0.6
    for n, expected in ((10, 900), (5, 1_800)):  # 3 of n: rejection (n > 2k) and shuffle (n <= 2k) (sd < 30)
        picks = [0] * n
        for _ in range(3_000):
            p, idx = histogram._compiled_draw(n, 1.0, 0.0, 3, rnd)
            assert len(p) == 3 and len(set(idx)) == 3
            for i in idx:
                picks[i] += 1
        assert all(abs(c - expected) < 150 for c in picks), picks


def test_compiled_offer_keeps_the_heap_the_python_offer_keeps() -> None:
    """kafkapy/metrics/_reservoir.c's offer: the same entries as heapq pushes/replaces give (a valid min-heap by
    priority), filling first, then replacing the smallest, stopping at the first priority under the floor."""
    from kafkapy.metrics import histogram

    assert histogram._compiled_offer is not None and histogram.offer is histogram._compiled_offer
    rnd = random.Random(9)
    heaps: dict[str, list[tuple[float, tuple[float, ...]]]] = {"c": [], "py": []}
    for batch in range(40):
        priorities = sorted((rnd.uniform(0, 10 + batch) for _ in range(rnd.randrange(1, 300))), reverse=True)
        rows = [(p * 2.0, float(batch)) for p in priorities]
        histogram._compiled_offer(heaps["c"], 500, priorities, rows)
        histogram._offer_py(heaps["py"], 500, priorities, rows)
        assert sorted(heaps["c"]) == sorted(heaps["py"])
        h = heaps["c"]
        assert all(h[(i - 1) // 2][0] <= h[i][0] for i in range(1, len(h)))
    assert len(heaps["c"]) == 500
    with pytest.raises(TypeError):
        histogram._compiled_offer([(1, "not a float priority")], 1, [2.0], [()])
