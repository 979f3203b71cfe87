"""Figures for the kafkapy Spark data source (not a test): read and write rows/s in local[2], before and
after (the former paths stay selectable: kafkapy.reader=per-task or kernels, kafkapy.writer=per-record), with
confluent-kafka's producer as the reference line, and the wall time of `kafkapy spark-submit` for the
clickstream batch example.

    .venv/bin/python bench/bench_spark.py [--records 1000000] [--value-bytes 100] [--rounds 2]

A kafkapy broker runs as a subprocess on 127.0.0.1 (bench_rebalance.start_broker, tmp log dir). Figures:
- produce (reference): confluent-kafka (librdkafka) producing the input, rows/s of its produce+flush;
- read: 1 M 100-byte records (4 partitions) read with format("kafkapy") into a grouped count
  (`groupBy("partition").count()`), rows/s = records / query seconds (the SparkSession is started before
  timing; best and all rounds printed), before (per-task: a connection per task, one fetch at a time, Python
  walk), before (kernels: pipelined on the worker's connection, the record walker's positions turned into
  columns by Arrow kernels) and after (pipelined, columns built in one compiled pass: spark/_arrow_columns.c,
  one arena per task written over by each response); the reader's 1 MiB socket buffer applies to all three,
  the leader cached on the worker's client to kernels and after;
  CPU is the least of the rounds, so its figure is read apart from the machine's load; and Spark's floor:
  the same grouped count over a Python source yielding prebuilt Arrow batches of the same schema and size
  (floor_source: no Kafka, no decoding);
- write: 1 M rows (`spark.range` -> key string, 100-byte value) written with format("kafkapy"),
  rows/s = rows / save seconds (acks=1, uncompressed, linger.ms=5), before (per-record) and after (batch),
  and after with kafka.compression.type=lz4;
- spark-submit: wall time of `kafkapy spark-submit examples/clickstream/clickstream_batch.py` over
  100 000 click events, from process start to exit (JVM, session, job, write).
"""

from __future__ import annotations

import argparse
import os
import shutil
import subprocess
import sys
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path
from typing import Any

REPO = Path(__file__).resolve().parents[1]


def create_topic(bootstrap: str, topic: str, partitions: int = 4) -> None:
    from confluent_kafka.admin import AdminClient, NewTopic

    admin = AdminClient({"bootstrap.servers": bootstrap})  # kept alive until the futures complete
    for f in admin.create_topics([NewTopic(topic, partitions, 1)]).values():
        f.result(30)


def produce_records(bootstrap: str, topic: str, n: int, size: int) -> None:
    from confluent_kafka import Producer

    create_topic(bootstrap, topic)
    producer = Producer({"bootstrap.servers": bootstrap, "linger.ms": 20, "batch.size": 1_000_000,
                         "queue.buffering.max.messages": 500_000, "enable.idempotence": False})
    value = b"x" * size
    for i in range(n):
        while True:
            try:
                producer.produce(topic, value=value, key=b"%d" % (i % 1000))
                break
            except BufferError:
                producer.poll(0.05)
        if i % 10000 == 0:
            producer.poll(0)
    if producer.flush(120):
        raise SystemExit("produce failed")


def floor_source(records: int, value_bytes: int) -> type:
    """A Python data source named bench-spark-floor yielding `records` rows of the Kafka source's schema in 4
    partitions, as Arrow batches built once per task (no Kafka, no decoding): what Spark itself spends on a
    Python source's rows (Arrow stream to the JVM, rows, the grouped count), the floor under the read figures.
    Defined here so that Spark pickles it by value to its workers."""
    from pyspark.sql.datasource import DataSource, DataSourceReader, InputPartition

    class FloorReader(DataSourceReader):
        def partitions(self) -> list:
            return [InputPartition(i) for i in range(4)]

        def read(self, partition: Any) -> Iterator[Any]:
            import pyarrow as pa

            from kafkapy.spark.schema import arrow_schema, struct_type

            schema = arrow_schema(struct_type(False))
            per_task, chunk = records // 4, 32768
            n = min(chunk, per_task)
            cols = {"key": pa.array([b"%d" % (i % 1000) for i in range(n)], pa.binary()),
                    "value": pa.array([b"x" * value_bytes] * n, pa.binary()),
                    "topic": pa.array(["bench-spark-in"] * n), "partition": pa.array([partition.value] * n, pa.int32()),
                    "offset": pa.array(range(n), pa.int64()),
                    "timestamp": pa.array([0] * n, pa.int64()).cast(schema.field("timestamp").type),
                    "timestampType": pa.array([0] * n, pa.int32())}
            batch = pa.RecordBatch.from_arrays([cols[f.name] for f in schema], schema=schema)
            for start in range(0, per_task, n):
                yield batch.slice(0, min(n, per_task - start))

    class FloorSource(DataSource):
        @classmethod
        def name(cls) -> str:
            return "bench-spark-floor"

        def schema(self) -> str:
            from kafkapy.spark.schema import BASE_DDL

            return BASE_DDL

        def reader(self, schema: Any) -> FloorReader:
            return FloorReader()

    return FloorSource


def tree_cpu_seconds(root: int) -> float:
    """CPU seconds (user + system, including reaped children) of `root` and every process under it: the
    Spark JVM and its Python workers, so a figure can be read apart from what other processes take."""
    tick = os.sysconf("SC_CLK_TCK")
    stats: dict[int, tuple[int, float]] = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open(f"/proc/{entry}/stat") as f:
                fields = f.read().rsplit(")", 1)[1].split()
        except OSError:
            continue
        ppid = int(fields[1])
        cpu = sum(int(x) for x in fields[11:15]) / tick  # utime stime cutime cstime
        stats[int(entry)] = (ppid, cpu)
    total, frontier = 0.0, [root]
    while frontier:
        pid = frontier.pop()
        total += stats.get(pid, (0, 0.0))[1]
        frontier += [c for c, (pp, _) in stats.items() if pp == pid]
    return total


def end_offsets_sum(bootstrap: str, topic: str) -> int:
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.topic_partition import TopicPartition

    with AdminClient({"bootstrap.servers": bootstrap}) as admin:
        parts = admin.describe_topics([topic])[topic].partitions
        found = admin.list_offsets({TopicPartition(topic, p.partition): "latest" for p in parts})
    return sum(v.offset for v in found.values())


def write_big_log_dir(log_dir: str, total_bytes: int, value_bytes: int, segment_bytes: int = 1 << 30) -> int:
    """A Kafka log dir of `total_bytes` in 4 topics x 2 partitions, 1 GiB segments with Kafka's .index
    (an entry per batch, every batch being over index.interval.bytes) and .timeindex, written straight to
    disk: one template batch of 500 records per partition, re-stamped per copy (baseOffset, base and max
    timestamp one second apart, CRC-32C recomputed). Returns the records written."""
    import struct

    from kafkapy.record.batch_header import CRC_OFFSET
    from kafkapy.record.crc import crc32c
    from kafkapy.record.memory_records_builder import MemoryRecordsBuilder

    per_batch = 500
    builder = MemoryRecordsBuilder()
    for i in range(per_batch):
        builder.append(i, b"key-%d" % (i % 50), bytes([97 + i % 26]) * value_bytes)
    template = bytearray(builder.build())
    size = len(template)
    tps = [(f"ops-{t}", p) for t in range(4) for p in range(2)]
    batches_per_tp = max(1, total_bytes // size // len(tps))
    per_segment = max(1, segment_bytes // size)
    t0 = (int(time.time()) - 7 * 86400 + 3600) * 1000  # inside the default 7-day retention
    written = 0
    for topic, part in tps:
        pdir = os.path.join(log_dir, f"{topic}-{part}")
        os.makedirs(pdir)
        for first in range(0, batches_per_tp, per_segment):
            n = min(per_segment, batches_per_tp - first)
            base = first * per_batch
            with open(os.path.join(pdir, f"{base:020d}.log"), "wb") as log, \
                    open(os.path.join(pdir, f"{base:020d}.index"), "wb") as index, \
                    open(os.path.join(pdir, f"{base:020d}.timeindex"), "wb") as tindex:
                for j in range(n):
                    offset = base + j * per_batch
                    ts = t0 + (first + j) * 1000
                    struct.pack_into(">q", template, 0, offset)
                    struct.pack_into(">qq", template, 27, ts, ts + per_batch - 1)
                    struct.pack_into(">I", template, CRC_OFFSET, crc32c(memoryview(template)[21:]))
                    log.write(template)
                    rel_last = offset + per_batch - 1 - base
                    index.write(struct.pack(">ii", rel_last, j * size))
                    tindex.write(struct.pack(">qi", ts + per_batch - 1, rel_last))
            written += n * per_batch
    return written


def bench_log_segments(spark, a) -> None:
    """kafkapy-log-segments over a generated >= --log-gb GB log dir (deleted afterwards)."""
    import kafkapy.spark

    free = shutil.disk_usage(tempfile.gettempdir()).free
    need = int(a.log_gb * 1e9)
    if free < 3 * need:
        print(f"log segments: skipped, {free / 1e9:.0f} GB free in {tempfile.gettempdir()} (need {3 * need / 1e9:.0f})")
        return
    log_dir = tempfile.mkdtemp(prefix="bench-spark-logs-")
    try:
        t = time.monotonic()
        records = write_big_log_dir(log_dir, need, a.value_bytes)
        on_disk = sum(e.stat().st_size for d in os.scandir(log_dir) for e in os.scandir(d.path))
        print(f"log segments: wrote {on_disk / 1e9:.2f} GB ({records:,} records, 8 partitions, 1 GiB segments) "
              f"in {time.monotonic() - t:.1f} s")
        kafkapy.spark.register(spark)
        df = spark.read.format("kafkapy-log-segments").load(log_dir)
        t, c = time.monotonic(), tree_cpu_seconds(spark.sparkContext._gateway.proc.pid)
        counts = df.groupBy("topic").count().collect()
        took = time.monotonic() - t
        cpu = tree_cpu_seconds(spark.sparkContext._gateway.proc.pid) - c
        assert sum(r["count"] for r in counts) == records, counts
        print(f"log segments: full scan into a per-topic count, local[2]: {records / took:,.0f} rows/s, "
              f"{on_disk / took / 1e6:,.0f} MB/s ({took:.1f} s); Spark CPU {cpu:.0f} s = "
              f"{records / (cpu / 2):,.0f} rows/s on 2 otherwise idle cores")
        from pyspark.sql import functions as F

        lo, hi = records // 8 // 2, records // 8 // 2 + 1_000_000
        t = time.monotonic()
        n = df.where((F.col("topic") == "ops-1") & (F.col("partition") == 0) & (F.col("offset") >= lo)
                     & (F.col("offset") < hi)).count()
        took = time.monotonic() - t
        assert n == hi - lo, n
        print(f"log segments: pushed-down topic/partition/offset range ({n:,} of {records:,} rows): {took:.2f} s")
    finally:
        shutil.rmtree(log_dir, ignore_errors=True)


def main(argv: list[str]) -> int:
    p = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    p.add_argument("--records", type=int, default=1_000_000)
    p.add_argument("--value-bytes", type=int, default=100)
    p.add_argument("--rounds", type=int, default=3)
    p.add_argument("--click-events", type=int, default=100_000)
    p.add_argument("--log-gb", type=float, default=5.0, help="size of the generated log dir (0: skip)")
    p.add_argument("--skip", default="", help="comma-separated parts to leave out: read,write,segments,submit")
    a = p.parse_args(argv)
    skip = set(a.skip.split(","))
    env = {"SPARK_LOCAL_IP": "127.0.0.1", "PYSPARK_PYTHON": sys.executable, "PYSPARK_DRIVER_PYTHON": sys.executable}
    os.environ.update(env)
    os.environ["PYTHONPATH"] = str(REPO) + (os.pathsep + os.environ["PYTHONPATH"] if os.environ.get("PYTHONPATH") else "")
    tmp = tempfile.mkdtemp(prefix="bench-spark-")
    from bench_rebalance import start_broker  # the same `kafkapy server-start` subprocess

    proc, port = start_broker(os.path.join(tmp, "data"), tmp, 0)
    bootstrap = f"127.0.0.1:{port}"
    try:
        t = time.monotonic()
        produce_records(bootstrap, "bench-spark-in", a.records, a.value_bytes)
        took = time.monotonic() - t
        print(f"produce (reference) {a.records} x {a.value_bytes} B records with confluent-kafka: "
              f"{a.records / took:,.0f} rows/s ({took:.1f} s, linger.ms=20); load average {os.getloadavg()[0]:.1f} "
              f"on {os.cpu_count()} cores")

        from pyspark.sql import SparkSession

        spark = (SparkSession.builder.master("local[2]").config("spark.ui.enabled", "false")
                 .config("spark.ui.showConsoleProgress", "false").config("spark.sql.shuffle.partitions", "2")
                 .config("spark.driver.memory", "1g").getOrCreate())
        spark.sparkContext.setLogLevel("ERROR")
        jvm = spark.sparkContext._gateway.proc.pid
        def measure(run) -> tuple[float, float]:
            t, c = time.monotonic(), tree_cpu_seconds(jvm) + tree_cpu_seconds(proc.pid)
            run()
            return time.monotonic() - t, tree_cpu_seconds(jvm) + tree_cpu_seconds(proc.pid) - c

        def report(kind: str, label: str, what: str, walls: list[float], cpus: list[float]) -> None:
            print(f"{kind} {label} ({what}), local[2]: best {a.records / min(walls):,.0f} rows/s (rounds: "
                  f"{', '.join(f'{a.records / s:,.0f}' for s in walls)}); CPU (Spark JVM + Python workers + broker) "
                  f"{min(cpus):.2f} s ({min(cpus) / a.records * 1e6:.2f} s per 1 M rows; rounds: "
                  f"{', '.join(f'{c:.2f}' for c in cpus)}) = {a.records / (min(cpus) / 2):,.0f} rows/s on 2 "
                  "otherwise idle cores")

        # Rounds alternate between the paths, so load from other processes weighs on both alike.
        readers = () if "read" in skip else (("before", "per-task"), ("before", "kernels"), ("after ", "pipelined"),
                                             ("floor ", "Spark's floor"))
        if readers:
            spark.dataSource.register(floor_source(a.records, a.value_bytes))
        read_times: dict[str, tuple[list[float], list[float]]] = {r: ([], []) for _, r in readers}
        for _ in range(a.rounds):
            for _label, reader in readers:
                if reader == "Spark's floor":
                    df = spark.read.format("bench-spark-floor").load()
                else:
                    df = (spark.read.format("kafkapy").option("kafka.bootstrap.servers", bootstrap)
                          .option("subscribe", "bench-spark-in").option("kafkapy.reader", reader).load())
                got: list = []
                wall, cpu = measure(lambda df=df, got=got: got.extend(df.groupBy("partition").count().collect()))
                assert sum(r["count"] for r in got) == a.records, got
                read_times[reader][0].append(wall)
                read_times[reader][1].append(cpu)
        for label, reader in readers:
            report("read ", label, f"{reader}, {a.records} rows into a grouped count", *read_times[reader])
        print(f"load average after the reads: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")

        out = spark.range(a.records).selectExpr("CAST(id % 1000 AS STRING) AS key",
                                                f"repeat('x', {a.value_bytes}) AS value")
        paths = () if "write" in skip else (("before", "per-record", "none"), ("after ", "batch", "none"),
                                            ("after ", "batch", "lz4"))
        write_times: dict[tuple[str, str], tuple[list[float], list[float]]] = {(w, c): ([], []) for _, w, c in paths}
        for i in range(a.rounds):
            for _label, writer, codec in paths:
                topic = f"bench-spark-out-{writer}-{codec}-{i}"
                create_topic(bootstrap, topic)
                wall, cpu = measure(lambda topic=topic, writer=writer, codec=codec: (
                    out.write.format("kafkapy").mode("append").option("kafka.bootstrap.servers", bootstrap)
                    .option("topic", topic).option("kafka.linger.ms", "5").option("kafka.acks", "1")
                    .option("kafka.compression.type", codec).option("kafkapy.writer", writer).save()))
                assert end_offsets_sum(bootstrap, topic) == a.records
                write_times[(writer, codec)][0].append(wall)
                write_times[(writer, codec)][1].append(cpu)
        for label, writer, codec in paths:
            report("write", label, f"{writer}, {codec}, {a.records} rows of {a.value_bytes} B to a topic",
                   *write_times[(writer, codec)])
        if a.log_gb > 0 and "segments" not in skip:
            bench_log_segments(spark, a)
        spark.stop()

        if "submit" not in skip:
            sys.path.insert(0, str(REPO / "examples" / "clickstream"))
            from clicks import click_events, produce_clicks

            produce_clicks(bootstrap, "bench-clicks", click_events(a.click_events), partitions=3)
            print(f"load average before spark-submit: {os.getloadavg()[0]:.1f} on {os.cpu_count()} cores")
            t = time.monotonic()
            done = subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "spark-submit",
                                   str(REPO / "examples" / "clickstream" / "clickstream_batch.py"),
                                   "--bootstrap-server", bootstrap, "--input", "bench-clicks", "--output", "bench-counts"],
                                  capture_output=True, text=True)
            wall = time.monotonic() - t
            if done.returncode != 0:
                raise SystemExit(done.stderr[-2000:])
            print(f"kafkapy spark-submit clickstream_batch.py ({a.click_events} events): {wall:.1f} s wall "
                  f"({done.stdout.strip().splitlines()[-1]})")
    finally:
        proc.terminate()
        proc.wait(60)
        shutil.rmtree(tmp, ignore_errors=True)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv[1:]))
