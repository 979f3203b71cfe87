"""The broker never dies of what a client sends: random well-formed requests for every API it serves,
and byte-mutated copies of them, fired at a live broker.

Well-formed requests with odd values (negative partitions, unknown topics and groups, empty and long
names, nulls wherever the schema allows them) reach the handlers; every one of them must get an
answer or a closed connection, never a crash: the handler-error log of KafkaApis ("Error handling")
must stay empty, and afterwards the broker still serves a produce/consume round trip. Mutated bytes
exercise the decoders: an undecodable request closes its connection only. Seeded, bounded in count.
"""

from __future__ import annotations

import logging
import random
import socket
import struct
import uuid
from typing import Any

from kafkapy.protocol.compiler import _struct_class
from kafkapy.protocol.header import RequestHeader, encode_request
from kafkapy.protocol.message import Struct
from kafkapy.protocol.messages import request_class
from kafkapy.protocol.schema import in_range
from kafkapy.server.apis import registry

# APIs that allocate in proportion to a number in the request (partition counts) are left to the
# admin tests: a random 2^31 partitions is a resource question, not a parsing one.
SKIP_WELL_FORMED = {19, 37}  # CreateTopics, CreatePartitions
# Controller-to-broker requests (LeaderAndIsr, StopReplica, UpdateMetadata, ControlledShutdown, AlterPartition)
# from a forged controller with a higher epoch are obeyed by Kafka too unless CLUSTER_ACTION is authorized
# (a fuzzed epoch of 2^31-1 fences the real controller): an authorization question, covered by the ACL
# tests, not a parsing one. Their decoders are covered by the protocol round-trip tests.
CONTROLLER_APIS = {4, 5, 6, 7, 56}
STRINGS = ["", "t", "fuzz", "__consumer_offsets", "x" * 300, "ü-topic", "a.b", "..", "grp"]
SMALL_INTS = [-2, -1, 0, 1, 2, 3, 7, 1000]
ROUNDS_PER_VERSION = 8
MUTATIONS_PER_REQUEST = 2


def _value(rng: random.Random, cls: type[Struct], f: Any, version: int, depth: int) -> Any:
    if in_range(f.nullable, version) and rng.random() < 0.15:
        return None
    if f.is_array:
        n = rng.choice([0, 1, 1, 2]) if depth < 3 else 0
        if f.is_struct:
            return [_instance(rng, _struct_class(cls, f), version, depth + 1) for _ in range(n)]
        return [_primitive(rng, f.elem) for _ in range(n)]
    if f.is_struct:
        return _instance(rng, _struct_class(cls, f), version, depth + 1)
    return _primitive(rng, f.type)


def _primitive(rng: random.Random, t: str) -> Any:
    if t in ("int8", "int16", "int32", "int64", "uint16", "uint32"):
        bits = {"int8": 7, "int16": 15, "int32": 31, "int64": 63, "uint16": 16, "uint32": 32}[t]
        signed = t.startswith("int")
        if rng.random() < 0.8:
            v = rng.choice(SMALL_INTS)
        else:
            v = rng.choice([2**bits - 1, -(2**bits) if signed else 0])
        return v if signed or v >= 0 else 0
    if t == "bool":
        return rng.random() < 0.5
    if t == "float64":
        return rng.choice([0.0, -1.0, 1e300])
    if t == "uuid":
        return rng.choice([uuid.UUID(int=0), uuid.uuid4()])
    if t == "string":
        return rng.choice(STRINGS)
    if t in ("bytes", "records"):
        return rng.choice([b"", b"\x00" * 5, bytes(rng.randrange(256) for _ in range(70))])
    raise AssertionError(t)


def _instance(rng: random.Random, cls: type[Struct], version: int, depth: int = 0) -> Struct:
    kwargs = {}
    for f in cls.FIELDS:
        if in_range(f.versions, version) or in_range(f.tagged, version):
            kwargs[f.name] = _value(rng, cls, f, version, depth)
    return cls(**kwargs)


def _frame(api_key: int, version: int, body: Struct) -> bytes:
    return encode_request(RequestHeader(api_key, version, 7, "fuzz"), body)


def _fire(port: int, frame: bytes) -> None:
    """Send one request and read whatever comes back within a short bound (an answer, a close, or
    nothing yet: long polls and joins legitimately wait)."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as s:
        s.sendall(frame)
        s.settimeout(0.3)
        try:
            s.recv(65536)
        except (TimeoutError, ConnectionResetError):
            pass


def test_random_requests_never_break_the_broker(broker_factory, caplog) -> None:
    from confluent_kafka import Consumer, Producer, TopicPartition

    handle = broker_factory(overrides={"group.initial.rebalance.delay.ms": "0"})
    port = handle.port
    rng = random.Random(20261121)
    frames = 0
    with caplog.at_level(logging.WARNING, logger="kafka.server.KafkaApis"):
        for api_key, spec in sorted(registry.supported().items()):
            if api_key in CONTROLLER_APIS:
                continue
            cls = request_class(api_key)
            for version in sorted({spec.min_version, spec.max_version, (spec.min_version + spec.max_version) // 2}):
                for _ in range(ROUNDS_PER_VERSION):
                    try:
                        frame = _frame(api_key, version, _instance(rng, cls, version))
                    except ValueError:
                        continue  # a value the version cannot carry: not a request a client could send
                    if api_key not in SKIP_WELL_FORMED:
                        _fire(port, frame)
                        frames += 1
                    for _ in range(MUTATIONS_PER_REQUEST):
                        mutated = bytearray(frame)
                        for _ in range(rng.randint(1, 4)):
                            pos = rng.randrange(8, len(mutated)) if len(mutated) > 8 else 4
                            mutated[pos] = rng.randrange(256)
                        struct.pack_into(">i", mutated, 0, len(mutated) - 4)  # keep the frame size honest
                        _fire(port, bytes(mutated))
                        frames += 1
    assert frames > 300
    handler_errors = [r.getMessage() for r in caplog.records if r.getMessage().startswith("Error handling")]
    assert handler_errors == []
    # The mutations did reach the decoders: undecodable requests closed their own connections.
    assert sum(r.getMessage().startswith("Closing connection") for r in caplog.records) > 20
    assert handle.server.is_started

    # Still a working broker: a produce/consume round trip with a real client.
    producer = Producer({"bootstrap.servers": handle.bootstrap, "acks": "all"})
    for i in range(10):
        producer.produce("after-fuzz", value=b"v%d" % i, partition=0)
    assert producer.flush(30) == 0
    consumer = Consumer({"bootstrap.servers": handle.bootstrap, "group.id": "after-fuzz",
                         "enable.auto.commit": False})
    consumer.assign([TopicPartition("after-fuzz", 0, 0)])
    got: list[bytes] = []
    for _ in range(100):
        msg = consumer.poll(0.2)
        if msg is not None and msg.error() is None:
            got.append(msg.value())
        if len(got) == 10:
            break
    consumer.close()
    assert got == [b"v%d" % i for i in range(10)]
