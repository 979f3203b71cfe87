"""Batch reads with `format("kafkapy")`: exactly the records confluent-kafka produced (keys, values,
headers, offsets, timestamps), offset ranges, timestamp ranges, minPartitions, and Spark's wording for
bad options and lost data."""

from __future__ import annotations

import datetime as dt
import json
import time

import pytest
from spark_helpers import create_topic, produce

# An hour ago, on a whole second: older timestamps would let retention.ms (7 days) delete the segments.
T0 = (int(time.time()) - 3600) * 1000
N = 600
PARTITIONS = 3


def message(i: int) -> dict:
    return {
        "key": None if i % 10 == 3 else b"k%d" % i,
        "value": None if i % 97 == 5 else b"v%d-" % i + bytes(range(i % 50)),
        "partition": i % PARTITIONS,
        "headers": [("idx", b"%d" % i), ("none", None)] if i % 4 == 0 else None,
        "timestamp": T0 + i * 1000,
    }


@pytest.fixture(scope="module")
def topic(kafkapy_broker) -> dict:
    name = "spark-batch"
    create_topic(kafkapy_broker.bootstrap, name, PARTITIONS)
    msgs = [message(i) for i in range(N)]
    positions = produce(kafkapy_broker.bootstrap, name, msgs, **{"compression.type": "lz4"})
    return {"name": name, "messages": msgs, "positions": positions, "bootstrap": kafkapy_broker.bootstrap}


def read(spark, topic: dict, **options: str):
    r = spark.read.format("kafkapy").option("kafka.bootstrap.servers", topic["bootstrap"])
    for k, v in options.items():
        r = r.option(k, v)
    return r.load()


def expected_rows(topic: dict, include=lambda i, p, o: True) -> list[tuple]:
    out = []
    for i, (m, (p, o)) in enumerate(zip(topic["messages"], topic["positions"], strict=True)):
        if include(i, p, o):
            out.append((p, o, m["key"], m["value"], T0 + i * 1000))
    return sorted(out)


def test_schema_is_sparks_kafka_schema(spark, topic) -> None:
    df = read(spark, topic, subscribe=topic["name"])
    assert df.schema.simpleString() == (
        "struct<key:binary,value:binary,topic:string,partition:int,offset:bigint,timestamp:timestamp,"
        "timestampType:int>"
    )
    df = read(spark, topic, subscribe=topic["name"], includeHeaders="true")
    assert df.schema.simpleString().endswith(",headers:array<struct<key:string,value:binary>>>")


def test_batch_read_returns_exactly_the_produced_records(spark, topic) -> None:
    rows = read(spark, topic, subscribe=topic["name"], includeHeaders="true").collect()
    assert len(rows) == N
    got = sorted((r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000)) for r in rows)
    assert got == expected_rows(topic)
    assert {r.topic for r in rows} == {topic["name"]}
    assert {r.timestampType for r in rows} == {0}
    by_offset = {(r.partition, r.offset): r for r in rows}
    for i, m in enumerate(topic["messages"]):
        r = by_offset[topic["positions"][i]]
        want = [(k, v) for k, v in (m["headers"] or [])]
        assert [(h.key, h.value) for h in r.headers] == want
    # Offsets of each partition are 0..n-1 without gaps.
    for p in range(PARTITIONS):
        assert sorted(r.offset for r in rows if r.partition == p) == list(range(N // PARTITIONS))


def test_offset_range_and_assign(spark, topic) -> None:
    starting = json.dumps({topic["name"]: {"0": 10, "1": -2}})
    ending = json.dumps({topic["name"]: {"0": 25, "1": 3}})
    assign = json.dumps({topic["name"]: [0, 1]})
    rows = read(spark, topic, assign=assign, startingOffsets=starting, endingOffsets=ending).collect()
    got = sorted((r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000)) for r in rows)
    assert got == expected_rows(topic, lambda i, p, o: (p == 0 and 10 <= o < 25) or (p == 1 and o < 3))


def test_timestamp_range(spark, topic) -> None:
    start, end = T0 + 100_000, T0 + 130_000  # messages 100..129
    rows = read(spark, topic, subscribePattern="spark-b.*", startingTimestamp=str(start),
                endingOffsetsByTimestamp=json.dumps({topic["name"]: {str(p): end for p in range(PARTITIONS)}}),
                ).collect()
    got = sorted((r.partition, r.offset, r.key, r.value, int(r.timestamp.timestamp() * 1000)) for r in rows)
    assert got == expected_rows(topic, lambda i, p, o: 100 <= i < 130)
    assert min(r.timestamp for r in rows) == dt.datetime.fromtimestamp(start / 1000)


def test_min_partitions_splits_ranges_and_grouped_count(spark, topic) -> None:
    df = read(spark, topic, subscribe=topic["name"], minPartitions="7")
    assert df.rdd.getNumPartitions() >= 7
    counts = {r.partition: r["count"] for r in df.groupBy("partition").count().collect()}
    assert counts == {p: N // PARTITIONS for p in range(PARTITIONS)}


@pytest.mark.parametrize("options, wording", [
    ({"subscribe": "x", "kafka.bootstrap.servers": None},
     "Option 'kafka.bootstrap.servers' must be specified for configuring Kafka consumer"),
    ({}, "One of the following options must be specified for Kafka source: subscribe, subscribepattern, assign"),
    ({"subscribe": "spark-batch", "startingOfsets": "earliest"}, "Unknown option 'startingofsets'"),
    ({"subscribe": "spark-batch", "startingOffsets": "latest"},
     "starting offset can't be latest for batch queries on Kafka"),
    ({"subscribe": "spark-batch", "startingOffsets": '{"spark-batch":{"0":0,"1":0,"2":0,"9":0}}'},
     "If startingOffsets contains specific offsets, you must specify all TopicPartitions."),
])
def test_bad_options_fail_with_sparks_wording(spark, topic, options, wording) -> None:
    r = spark.read.format("kafkapy")
    opts = {"kafka.bootstrap.servers": topic["bootstrap"], **options}
    for k, v in opts.items():
        if v is not None:
            r = r.option(k, v)
    with pytest.raises(Exception) as info:
        r.load().collect()
    text = str(info.value)
    assert wording in text
    assert "Traceback" not in text  # Spark's one-line wording, not a worker's Python traceback


def test_lost_offsets_fail_or_skip_as_failondataloss_says(spark, topic) -> None:
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.topic_partition import TopicPartition

    create_topic(topic["bootstrap"], "spark-lost", 1)
    produce(topic["bootstrap"], "spark-lost", [{"value": b"r%d" % i, "timestamp": T0 + i} for i in range(20)])
    with AdminClient({"bootstrap.servers": topic["bootstrap"]}) as admin:
        admin.delete_records({TopicPartition("spark-lost", 0): 8})
    starting = json.dumps({"spark-lost": {"0": 3}})
    with pytest.raises(Exception) as info:
        read(spark, topic, subscribe="spark-lost", startingOffsets=starting).collect()
    text = str(info.value)
    assert "Cannot fetch offset 3 (TopicPartition: spark-lost-0): the earliest offset in the log is 8." in text
    assert 'set the source option "failOnDataLoss" to "false"' in text and "Traceback" not in text
    rows = read(spark, topic, subscribe="spark-lost", startingOffsets=starting, failOnDataLoss="false").collect()
    assert sorted((r.offset, r.value) for r in rows) == [(i, b"r%d" % i) for i in range(8, 20)]


def test_log_segment_analytics_reads_the_brokers_log_dir_offline(spark, topic, kafkapy_broker) -> None:
    """The log-segment example's report over this module's broker log dir, against kafkapy's decoder."""
    import datetime as dt
    import os
    import sys
    from pathlib import Path

    import kafkapy.spark
    from kafkapy.record.memory_records import MemoryRecords

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "log_segments"))
    from log_segment_analytics import partition_report

    kafkapy.spark.register(spark)
    log_dir = kafkapy_broker.log_dir
    report = partition_report(spark.read.format("kafkapy-log-segments").load(log_dir)).collect()
    got = {(r.topic, r.partition): (r.segments, r.batches, r.records, r.bytes, r.keys, r.first, r.last, r.codecs)
           for r in report if r.topic == topic["name"]}
    want = {}
    for p in range(PARTITIONS):
        pdir = os.path.join(log_dir, f"{topic['name']}-{p}")
        segs = [f for f in os.listdir(pdir) if f.endswith(".log")]
        batches = list(MemoryRecords(b"".join(Path(pdir, f).read_bytes() for f in sorted(segs))).batches())
        recs = [r for b in batches for r in b.records()]
        stamps = [dt.datetime.fromtimestamp(r.timestamp / 1000) for r in recs]
        want[(topic["name"], p)] = (len(segs), len(batches), len(recs), sum(b.size_in_bytes for b in batches),
                                    len({r.key for r in recs if r.key is not None}), min(stamps), max(stamps),
                                    sorted({b.compression.lower_name for b in batches}))
    assert got == want
    assert all(v[2] == N // PARTITIONS and v[7] == ["lz4"] for v in got.values())


@pytest.fixture(scope="module")
def generated_log_dir(tmp_path_factory) -> tuple[str, list]:
    """examples/log_segments/generate_log_dir.py's topics (1 MiB segments: several per partition) and every
    record decoded with kafkapy's record reader: (topic, partition, offset, timestamp ms, key, value size,
    producer id, batch base offset, batch bytes)."""
    import os
    import sys
    from pathlib import Path

    from kafkapy.record.memory_records import MemoryRecords

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "log_segments"))
    from generate_log_dir import generate_log_dir

    log_dir = str(tmp_path_factory.mktemp("segments"))
    generate_log_dir(log_dir, segment_bytes=256 * 1024)
    rows = []
    for name in sorted(os.listdir(log_dir)):
        topic, _, part = name.rpartition("-")
        pdir = Path(log_dir, name)
        for f in sorted(pdir.glob("*.log")):
            for b in MemoryRecords(f.read_bytes()).batches():
                for r in b.records():
                    rows.append((topic, int(part), r.offset, r.timestamp, r.key,
                                 -1 if r.value is None else len(r.value), b.producer_id, b.base_offset, b.size_in_bytes))
    return log_dir, rows


def test_log_segments_push_down_reads_only_needed_segments_and_ranges(spark, generated_log_dir) -> None:
    """Filters on topic, partition, offset and timestamp: the rows equal the decoded records that match;
    the planned input partitions are only that partition's segments, the first one narrowed by its index."""
    import os

    from pyspark.sql import functions as F
    from pyspark.sql.datasource import EqualTo, GreaterThanOrEqual, In, LessThan

    import kafkapy.spark
    from kafkapy.spark.log_segments import SCHEMA, LogSegmentsReader

    log_dir, rows = generated_log_dir
    kafkapy.spark.register(spark)
    clicks1 = sorted(r for r in rows if r[0] == "clicks" and r[1] == 1)
    lo, hi = clicks1[len(clicks1) // 3][2], clicks1[2 * len(clicks1) // 3][2]
    df = (spark.read.format("kafkapy-log-segments").load(log_dir)
          .where((F.col("topic") == "clicks") & (F.col("partition") == 1) & (F.col("offset") >= lo)
                 & (F.col("offset") < hi)))
    got = sorted((r.offset, r.valueSize, r.key, r.batchBaseOffset) for r in df.collect())
    assert got == [(r[2], r[5], r[4], r[7]) for r in clicks1 if lo <= r[2] < hi]

    reader = LogSegmentsReader([log_dir], SCHEMA)
    filters = [EqualTo(("topic",), "clicks"), In(("partition",), (1,)), GreaterThanOrEqual(("offset",), lo),
               LessThan(("offset",), hi)]
    assert list(reader.pushFilters(filters)) == filters  # Spark re-checks every row
    parts = [p.range for p in reader.partitions()]
    assert {(p.topic, p.partition) for p in parts} == {("clicks", 1)}
    segments = sorted(int(n[:-4]) for n in os.listdir(f"{log_dir}/clicks-1") if n.endswith(".log"))
    assert len(segments) > 3 and len(parts) < len(segments)
    assert parts[0].start > 0 and parts[0].base_offset <= lo
    assert parts[-1].end > 0 or parts[-1].base_offset == segments[-1]

    # Timestamps: from a time in the middle of orders-0; rolled segments wholly before it are skipped.
    orders0 = sorted((r for r in rows if r[0] == "orders" and r[1] == 0), key=lambda r: r[2])
    since = orders0[len(orders0) // 2][3]
    df = (spark.read.format("kafkapy-log-segments").load(log_dir)
          .where((F.col("topic") == "orders") & (F.col("timestamp") >= F.lit(since / 1000).cast("timestamp"))))
    got = sorted((r.partition, r.offset) for r in df.collect())
    assert got == sorted((r[1], r[2]) for r in rows if r[0] == "orders" and r[3] >= since)
    reader = LogSegmentsReader([log_dir], SCHEMA)
    list(reader.pushFilters([EqualTo(("topic",), "orders"), EqualTo(("partition",), 0),
                             GreaterThanOrEqual(("timestamp",), dt.datetime.fromtimestamp(since / 1000, dt.UTC))]))
    planned = [p.range for p in reader.partitions()]
    all_segments = len([n for n in os.listdir(f"{log_dir}/orders-0") if n.endswith(".log")])
    assert len(planned) < all_segments and planned[0].start > 0


def test_log_segments_ops_reports(spark, generated_log_dir) -> None:
    """The example's ops questions over the generated dir: records and bytes per topic and hour, the largest
    keys, producers by id, each against the records decoded directly."""
    import sys
    from collections import Counter, defaultdict
    from pathlib import Path

    import kafkapy.spark

    sys.path.insert(0, str(Path(__file__).resolve().parents[2] / "examples" / "log_segments"))
    from log_segment_analytics import hourly_report, largest_keys, producers_report

    log_dir, rows = generated_log_dir
    kafkapy.spark.register(spark)
    records = spark.read.format("kafkapy-log-segments").load(log_dir)
    batches: dict = {}
    for r in rows:
        b = batches.setdefault((r[0], r[1], r[7]), [0, r[8], 0])
        b[0] += 1
        b[2] = max(b[2], r[3])
    hourly: dict = defaultdict(lambda: [0, 0])
    for (topic, _p, _b), (n, size, ts) in batches.items():
        h = hourly[(topic, ts - ts % 3_600_000)]
        h[0] += n
        h[1] += size
    # PySpark hands timestamps back as naive local times: .timestamp() reads them back the same way.
    got = {(r.topic, int(r.hour.timestamp() * 1000)): [r.records, r.bytes] for r in hourly_report(records).collect()}
    assert got == {k: v for k, v in hourly.items()}
    sizes: Counter = Counter()
    for r in rows:
        if r[4] is not None:
            sizes[(r[0], r[4])] += max(r[5], 0)
    top = sorted(sizes.items(), key=lambda kv: (-kv[1], kv[0]))[:5]
    assert [((r.topic, r.key), r.valueBytes) for r in largest_keys(records, 5).collect()] == top
    by_pid = Counter(r[6] for r in rows)
    assert {r.producerId: r.records for r in producers_report(records).collect()} == dict(by_pid)
