"""spark/partition_reader without a Spark session: the pipelined read (worker connection, next Fetch in
flight, shared record walker, compiled column build) returns exactly what the former per-task read and the
Arrow-kernel build (kafkapy.reader=kernels) return, and exactly what confluent-kafka produced; consecutive
tasks in one worker reuse one client and its connection."""

from __future__ import annotations

import pyarrow as pa
from spark_helpers import create_topic, produce

from kafkapy.common.topic_partition import TopicPartition
from kafkapy.spark import partition_reader
from kafkapy.spark.partition_reader import RangeRead, read_range
from kafkapy.spark.schema import arrow_schema, struct_type


def test_pipelined_read_equals_the_former_read_and_reuses_the_connection(kafkapy_broker) -> None:
    bootstrap, topic = kafkapy_broker.bootstrap, "reader-pipelined"
    create_topic(bootstrap, topic, 1)
    msgs = [{"value": b"v%d-" % i + b"z" * (i % 300), "key": None if i % 9 == 0 else b"k%d" % i, "partition": 0,
             "headers": [("h", b"%d" % i)] if i % 5 == 0 else None} for i in range(20000)]
    produce(bootstrap, topic, msgs, **{"compression.type": "zstd", "linger.ms": 50})
    tp = TopicPartition(topic, 0)
    kafka = {"bootstrap.servers": bootstrap, "max.partition.fetch.bytes": "65536"}  # many fetches
    tables = {}
    for reader in ("per-task", "kernels", "pipelined"):
        for headers in (False, True):
            schema = arrow_schema(struct_type(headers))
            spec = RangeRead(kafka, headers, True, 30000, reader)
            tables[(reader, headers)] = pa.Table.from_batches(list(read_range(spec, tp, 150, 19850, schema)), schema)
    for headers in (False, True):
        assert tables[("per-task", headers)].equals(tables[("pipelined", headers)])
        assert tables[("kernels", headers)].equals(tables[("pipelined", headers)])
    t = tables[("pipelined", False)]
    assert t.column("offset").to_pylist() == list(range(150, 19850))
    assert t.column("value").to_pylist() == [m["value"] for m in msgs[150:19850]]
    assert t.column("key").to_pylist() == [m["key"] for m in msgs[150:19850]]
    t = tables[("pipelined", True)]
    assert t.column("offset").to_pylist() == list(range(150, 19850))
    assert t.column("value").to_pylist() == [m["value"] for m in msgs[150:19850]]
    assert t.column("key").to_pylist() == [m["key"] for m in msgs[150:19850]]
    assert [[(h["key"], h["value"]) for h in hs] for hs in t.column("headers").to_pylist()] == [
        m["headers"] or [] for m in msgs[150:19850]]

    clients = [c for k, c in partition_reader._clients.items() if dict(k) == kafka]
    assert len(clients) == 1
    conn = clients[0].get_connection(clients[0].cluster.leader_for(tp))
    spec = RangeRead(kafka, False, True, 30000)
    version = clients[0].metadata.version
    assert sum(b.num_rows for b in read_range(spec, tp, 0, 100, arrow_schema(struct_type(False)))) == 100
    assert clients[0].metadata.version == version  # the next task starts from the metadata it has
    assert [c for k, c in partition_reader._clients.items() if dict(k) == kafka] == clients
    assert clients[0].get_connection(clients[0].cluster.leader_for(tp)) is conn
