"""kafkapy consumers in groups against the kafkapy broker, alone and together with confluent-kafka.

One broker per module (group.initial.rebalance.delay.ms=0, short session timeouts, 3 offsets
partitions) so rebalances take tens of milliseconds. Each test uses its own topic and group.
The close-deadline test starts its own broker behind a proxy that can stop answering.
"""

from __future__ import annotations

import threading
import time
import uuid
from collections.abc import Iterator
from typing import Any

import pytest

from kafkapy.client.admin import AdminClient, NewTopic
from kafkapy.client.consumer import KafkaConsumer
from kafkapy.client.consumer_coordinator import (
    CommitFailedError,
    ConsumerRebalanceListener,
    OffsetAndMetadata,
)
from kafkapy.client.producer import KafkaProducer
from kafkapy.common.topic_partition import TopicPartition as TP

GROUP_BROKER_OVERRIDES = {
    "listeners": "PLAINTEXT://127.0.0.1:0",
    "num.network.threads": "2",
    "num.io.threads": "4",
    "group.initial.rebalance.delay.ms": "0",
    "group.min.session.timeout.ms": "500",
    "offsets.topic.num.partitions": "3",
    "offsets.topic.replication.factor": "1",
}

FAST = {"session.timeout.ms": 6000, "heartbeat.interval.ms": 100, "auto.offset.reset": "earliest",
        "fetch.max.wait.ms": 100}


class GroupBroker:
    def __init__(self, server: Any) -> None:
        self.server = server
        self.bootstrap = f"127.0.0.1:{server.bound_port()}"


@pytest.fixture(scope="module")
def group_broker(tmp_path_factory: pytest.TempPathFactory) -> Iterator[GroupBroker]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    props = dict(GROUP_BROKER_OVERRIDES, **{"log.dirs": str(tmp_path_factory.mktemp("groups"))})
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    try:
        yield GroupBroker(server)
    finally:
        server.shutdown()


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def make_topic(bootstrap: str, partitions: int, records: int, prefix: str = "grp") -> tuple[str, set[tuple[int, int, bytes]]]:
    """A topic with `records` keyed records; returns (name, {(partition, offset, value)})."""
    topic = unique(prefix)
    admin = AdminClient({"bootstrap.servers": bootstrap})
    try:
        admin.create_topics([NewTopic(topic, partitions, 1)])
    finally:
        admin.close()
    return topic, produce(bootstrap, topic, records)


def produce(bootstrap: str, topic: str, records: int) -> set[tuple[int, int, bytes]]:
    produced: set[tuple[int, int, bytes]] = set()
    if records:
        producer = KafkaProducer({"bootstrap.servers": bootstrap, "linger.ms": 5})
        try:
            futures = [producer.send(topic, key=f"k{i}".encode(), value=f"v{i}".encode()) for i in range(records)]
            producer.flush()
            for i, f in enumerate(futures):
                md = f.result(30)
                produced.add((md.partition, md.offset, f"v{i}".encode()))
        finally:
            producer.close()
    return produced


def consumer(bootstrap: str, group: str, **extra: Any) -> KafkaConsumer:
    return KafkaConsumer({"bootstrap.servers": bootstrap, "group.id": group, **FAST, **extra})


def poll_until(consumers: list[Any], done: Any, timeout_s: float = 30.0, step_ms: int = 100) -> dict[int, list]:
    """Poll every consumer in its own thread until done() is true; records per consumer index."""
    got: dict[int, list] = {i: [] for i in range(len(consumers))}
    stop = threading.Event()
    errors: list[BaseException] = []

    def run(i: int, c: Any) -> None:
        try:
            while not stop.is_set():
                got[i].extend(c.poll(step_ms))
        except BaseException as e:  # noqa: BLE001 - reported below
            errors.append(e)

    threads = [threading.Thread(target=run, args=(i, c), daemon=True) for i, c in enumerate(consumers)]
    for t in threads:
        t.start()
    deadline = time.monotonic() + timeout_s
    try:
        while time.monotonic() < deadline and not done(got) and not errors:
            time.sleep(0.02)
    finally:
        stop.set()
        for t in threads:
            t.join(10)
    if errors:
        raise errors[0]
    assert done(got), f"timed out: {[len(v) for v in got.values()]}"
    return got


def keyset(records: list[Any]) -> list[tuple[int, int, bytes]]:
    return [(r.partition, r.offset, r.value) for r in records]


class Recorder(ConsumerRebalanceListener):
    def __init__(self) -> None:
        self.events: list[tuple[str, list[TP]]] = []

    def on_partitions_revoked(self, revoked: list[TP]) -> None:
        self.events.append(("revoked", list(revoked)))

    def on_partitions_assigned(self, assigned: list[TP]) -> None:
        self.events.append(("assigned", list(assigned)))

    def on_partitions_lost(self, lost: list[TP]) -> None:
        self.events.append(("lost", list(lost)))


# --------------------------------------------------------------------------------------------------


@pytest.mark.parametrize("strategy", ["range", "roundrobin", "org.apache.kafka.clients.consumer.StickyAssignor",
                                      "cooperative-sticky"])
def test_group_members_split_partitions_and_read_each_record_once(group_broker: GroupBroker, strategy: str) -> None:
    topic, _ = make_topic(group_broker.bootstrap, 4, 0)
    group = unique("split")
    cs = [consumer(group_broker.bootstrap, group, **{"partition.assignment.strategy": strategy,
                                                     "enable.auto.commit": False}) for _ in range(2)]
    try:
        for c in cs:
            c.subscribe([topic])
        # Both members must be in the group before the records count: wait for a 2/2 split first.
        poll_until(cs, lambda got: all(len(c.assignment()) == 2 for c in cs))
        produced = produce(group_broker.bootstrap, topic, 400)
        got = poll_until(cs, lambda got: sum(len(v) for v in got.values()) >= 400)
        time.sleep(0.2)
        got2 = poll_until(cs, lambda got: True)
        a0, a1 = (c.assignment() for c in cs)
    finally:
        for c in cs:
            c.close()
    assert not a0 & a1 and a0 | a1 == {TP(topic, p) for p in range(4)}
    for i, a in enumerate((a0, a1)):
        assert {TP(r.topic, r.partition) for r in got[i]} == a
    assert sorted(keyset(got[0] + got[1])) == sorted(produced)  # each record exactly once
    assert got2 == {0: [], 1: []}


def test_commit_sync_and_resume(group_broker: GroupBroker) -> None:
    topic, produced = make_topic(group_broker.bootstrap, 3, 90)
    group = unique("resume")
    c = consumer(group_broker.bootstrap, group, **{"enable.auto.commit": False, "max.poll.records": 10})
    c.subscribe([topic])
    first: list[Any] = []
    deadline = time.monotonic() + 20
    while len(first) < 40 and time.monotonic() < deadline:
        first += c.poll(200)
    c.commit_sync()
    positions = {tp: c.position(tp) for tp in c.assignment()}
    committed = c.committed(sorted(positions))
    assert {tp: om.offset for tp, om in committed.items()} == positions
    assert all(isinstance(om, OffsetAndMetadata) and om.leader_epoch == 0 for om in committed.values())
    c.close()

    c2 = consumer(group_broker.bootstrap, group, **{"enable.auto.commit": False})
    c2.subscribe([topic])
    rest = poll_until([c2], lambda got: len(first) + len(got[0]) >= 90)[0]
    c2.close()
    assert sorted(keyset(first) + keyset(rest)) == sorted(produced)  # nothing read twice, nothing skipped
    # explicit offsets with metadata, then committed() from a consumer with manual assignment
    c3 = consumer(group_broker.bootstrap, group)
    c3.assign([TP(topic, 0)])
    p0 = committed[TP(topic, 0)].offset
    assert c3.committed([TP(topic, 0)])[TP(topic, 0)].offset == p0
    assert c3.position(TP(topic, 0)) == p0  # positions of assigned partitions start at the committed offset
    c3.commit_sync({TP(topic, 0): OffsetAndMetadata(7, "meta")})
    assert c3.committed([TP(topic, 0)])[TP(topic, 0)] == OffsetAndMetadata(7, "meta", None)
    assert c3.position(TP(topic, 0)) == p0  # committing does not move the position
    c3.close()


def test_auto_commit_and_commit_async_callback(group_broker: GroupBroker) -> None:
    topic, produced = make_topic(group_broker.bootstrap, 2, 50)
    group = unique("auto")
    c = consumer(group_broker.bootstrap, group, **{"auto.commit.interval.ms": 100})
    c.subscribe([topic])
    poll_until([c], lambda got: len(got[0]) >= 50)
    results: list[Any] = []
    c.commit_async(callback=lambda offsets, exc: results.append((offsets, exc)))
    deadline = time.monotonic() + 10
    while not results and time.monotonic() < deadline:
        c.poll(50)
    assert results and results[0][1] is None
    ends = {TP(topic, p): max(o for part, o, _ in produced if part == p) + 1 for p in range(2)}
    assert {tp: om.offset for tp, om in results[0][0].items()} == ends
    c.close()  # auto commit on close
    c2 = consumer(group_broker.bootstrap, group)
    assert {tp: om.offset for tp, om in c2.committed(list(ends)).items()} == ends
    c2.close()


def test_eager_rebalance_listener_sees_revoke_then_assign(group_broker: GroupBroker) -> None:
    topic, _ = make_topic(group_broker.bootstrap, 4, 0)
    group = unique("eager")
    r1, r2 = Recorder(), Recorder()
    c1 = consumer(group_broker.bootstrap, group, **{"partition.assignment.strategy": "range"})
    c1.subscribe([topic], listener=r1)
    poll_until([c1], lambda got: len(c1.assignment()) == 4)
    c2 = consumer(group_broker.bootstrap, group, **{"partition.assignment.strategy": "range"})
    c2.subscribe([topic], listener=r2)
    poll_until([c1, c2], lambda got: len(c1.assignment()) == 2 and len(c2.assignment()) == 2)
    all4 = [TP(topic, p) for p in range(4)]
    assert r1.events == [("assigned", all4), ("revoked", all4), ("assigned", all4[:2])]
    assert r2.events == [("assigned", all4[2:])]
    c2.close()
    assert r2.events[-1] == ("revoked", all4[2:])
    poll_until([c1], lambda got: len(c1.assignment()) == 4)
    c1.close()


def test_cooperative_rebalance_revokes_only_moved_partitions(group_broker: GroupBroker) -> None:
    topic, _ = make_topic(group_broker.bootstrap, 6, 0)
    group = unique("coop")
    conf = {"partition.assignment.strategy": "cooperative-sticky"}
    r1, r2 = Recorder(), Recorder()
    c1 = consumer(group_broker.bootstrap, group, **conf)
    c1.subscribe([topic], listener=r1)
    poll_until([c1], lambda got: len(c1.assignment()) == 6)
    c2 = consumer(group_broker.bootstrap, group, **conf)
    c2.subscribe([topic], listener=r2)
    poll_until([c1, c2], lambda got: len(c1.assignment()) == 3 and len(c2.assignment()) == 3)
    all6 = {TP(topic, p) for p in range(6)}
    kept = c1.assignment()
    revoked = [tp for kind, tps in r1.events if kind == "revoked" for tp in tps]
    assert sorted(revoked) == sorted(all6 - kept)  # only what moved to c2
    assert set(revoked) == c2.assignment()
    assert r1.events[0] == ("assigned", sorted(all6))
    assert ("assigned", []) in r1.events[1:]  # the follow-up rebalance adds nothing to c1
    assert [e for e in r2.events if e[1]] == [("assigned", sorted(c2.assignment()))]
    c1.close()
    c2.close()


def test_max_poll_interval_leaves_group_and_commit_fails(group_broker: GroupBroker) -> None:
    topic, _ = make_topic(group_broker.bootstrap, 2, 10)
    group = unique("slow")
    rec = Recorder()
    slow = consumer(group_broker.bootstrap, group, **{"max.poll.interval.ms": 600, "enable.auto.commit": False})
    slow.subscribe([topic], listener=rec)
    poll_until([slow], lambda got: len(got[0]) >= 10)
    other = consumer(group_broker.bootstrap, group)
    other.subscribe([topic])
    # `slow` stops polling: after 600 ms its heartbeat thread leaves the group, `other` takes everything.
    poll_until([other], lambda got: len(other.assignment()) == 2, timeout_s=20)
    with pytest.raises(CommitFailedError):
        slow.commit_sync()
    slow.poll(0)  # rejoins; its old partitions were lost, not revoked
    assert rec.events[0] == ("assigned", [TP(topic, 0), TP(topic, 1)])
    assert rec.events[1] == ("lost", [TP(topic, 0), TP(topic, 1)])
    other.close()
    slow.close()


def test_static_member_rejoins_without_rebalance(group_broker: GroupBroker) -> None:
    topic, _ = make_topic(group_broker.bootstrap, 4, 0)
    group = unique("static")
    conf = {"partition.assignment.strategy": "range"}
    a = consumer(group_broker.bootstrap, group, **conf, **{"group.instance.id": "a"})
    b = consumer(group_broker.bootstrap, group, **conf, **{"group.instance.id": "b"})
    for c in (a, b):
        c.subscribe([topic])
    poll_until([a, b], lambda got: len(a.assignment()) == 2 and len(b.assignment()) == 2)
    before = (sorted(a.assignment()), sorted(b.assignment()))
    generation = b._coordinator.generation.generation_id
    a.close()  # a static member does not leave: no rebalance for b
    a2 = consumer(group_broker.bootstrap, group, **conf, **{"group.instance.id": "a"})
    a2.subscribe([topic])
    poll_until([a2, b], lambda got: len(a2.assignment()) == 2)
    assert (sorted(a2.assignment()), sorted(b.assignment())) == before
    assert b._coordinator.generation.generation_id == generation
    a2.close()
    b.close()


def test_pattern_subscription_and_unsubscribe(group_broker: GroupBroker) -> None:
    prefix = unique("pat")
    admin = AdminClient({"bootstrap.servers": group_broker.bootstrap})
    admin.create_topics([NewTopic(f"{prefix}-a", 2, 1), NewTopic(f"{prefix}-b", 1, 1), NewTopic(f"x{prefix}", 1, 1)])
    admin.close()
    c = consumer(group_broker.bootstrap, unique("pattern"))
    c.subscribe(pattern=f"{prefix}-.*")
    poll_until([c], lambda got: len(c.assignment()) == 3)
    assert c.assignment() == {TP(f"{prefix}-a", 0), TP(f"{prefix}-a", 1), TP(f"{prefix}-b", 0)}
    assert c.subscription() == {f"{prefix}-a", f"{prefix}-b"}
    c.unsubscribe()
    assert c.assignment() == set()
    with pytest.raises(ValueError, match="not subscribed"):
        c.poll(0)
    c.close()


# --------------------------------------------------------------------------------------------------
# the same group with confluent-kafka (librdkafka) members


@pytest.mark.parametrize("first", ["kafkapy", "confluent"])  # the first member becomes the group leader
@pytest.mark.parametrize("strategy", ["range", "roundrobin", "cooperative-sticky"])
def test_kafkapy_and_confluent_share_a_group(group_broker: GroupBroker, strategy: str, first: str) -> None:
    ck = pytest.importorskip("confluent_kafka")
    topic, _ = make_topic(group_broker.bootstrap, 4, 0)
    group = unique("mixed")
    ours = consumer(group_broker.bootstrap, group, **{"partition.assignment.strategy": strategy,
                                                      "enable.auto.commit": False})
    theirs = ck.Consumer({"bootstrap.servers": group_broker.bootstrap, "group.id": group,
                          "partition.assignment.strategy": strategy, "session.timeout.ms": 6000,
                          "heartbeat.interval.ms": 100, "auto.offset.reset": "earliest",
                          "enable.auto.commit": False, "fetch.wait.max.ms": 100})
    their_assignment: set[TP] = set()

    def on_assign(c: Any, parts: list[Any]) -> None:
        if strategy == "cooperative-sticky":
            their_assignment.update(TP(p.topic, p.partition) for p in parts)
            c.incremental_assign(parts)
        else:
            their_assignment.clear()
            their_assignment.update(TP(p.topic, p.partition) for p in parts)
            c.assign(parts)

    def on_revoke(c: Any, parts: list[Any]) -> None:
        if strategy == "cooperative-sticky":
            their_assignment.difference_update(TP(p.topic, p.partition) for p in parts)
            c.incremental_unassign(parts)
        else:
            their_assignment.clear()
            c.unassign()

    class ConfluentPoller:
        def poll(self, timeout_ms: int) -> list[Any]:
            out = []
            for m in theirs.consume(50, timeout_ms / 1000):
                if m.error() is None:
                    out.append(m)
            return out

    try:
        if first == "kafkapy":
            ours.subscribe([topic])
            poll_until([ours], lambda got: len(ours.assignment()) == 4)
            theirs.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
        else:
            theirs.subscribe([topic], on_assign=on_assign, on_revoke=on_revoke)
            poll_until([ConfluentPoller()], lambda got: len(their_assignment) == 4)
            ours.subscribe([topic])
        poll_until([ours, ConfluentPoller()], lambda got: len(ours.assignment()) == 2 and len(their_assignment) == 2)
        assert not ours.assignment() & their_assignment
        assert ours._coordinator.is_leader == (first == "kafkapy")
        produced = produce(group_broker.bootstrap, topic, 200)
        got = poll_until([ours, ConfluentPoller()], lambda got: len(got[0]) + len(got[1]) >= 200)
        mine_parts, their_parts = set(ours.assignment()), set(their_assignment)
    finally:
        theirs.close()
        ours.close()
    mine = [(r.partition, r.offset, r.value) for r in got[0]]
    other = [(m.partition(), m.offset(), m.value()) for m in got[1]]
    assert {TP(topic, p) for p, _, _ in mine} == mine_parts
    assert {TP(topic, p) for p, _, _ in other} == their_parts
    assert sorted(mine + other) == sorted(produced)  # every record exactly once across both clients


def test_poll_zero_loop_joins_and_reads(group_broker: GroupBroker) -> None:
    topic, produced = make_topic(group_broker.bootstrap, 2, 20)
    c = consumer(group_broker.bootstrap, unique("zero"))
    c.subscribe([topic])
    got: list[Any] = []
    deadline = time.monotonic() + 20
    while len(got) < 20 and time.monotonic() < deadline:
        got += c.poll(0)
        time.sleep(0.005)
    c.close()
    assert sorted(keyset(got)) == sorted(produced)


def test_subscribed_invalid_topic_raises_from_poll_then_valid_topics_flow(group_broker: GroupBroker) -> None:
    from kafkapy.common.errors import InvalidTopicExceptionError

    topic, produced = make_topic(group_broker.bootstrap, 2, 6)
    c = consumer(group_broker.bootstrap, unique("invalid"))
    try:
        c.subscribe([topic, "bad/x"])
        start = time.monotonic()
        with pytest.raises(InvalidTopicExceptionError) as e:
            c.poll(10000)
        assert time.monotonic() - start < 5
        assert e.value.message == "Invalid topics: [bad/x]"
        # Raised once per metadata response that reports it (Java's Metadata): the valid topic still flows.
        got = poll_until([c], lambda got: len(got[0]) >= 6)
        assert sorted(keyset(got[0])) == sorted(produced)
    finally:
        c.close()


# --------------------------------------------------------------------------------------------------
# close() under an unresponsive coordinator


class BlackHoleProxy:
    """Loopback TCP forwarder to `target_port` until black_hole(); from then on it reads and drops
    everything in both directions, keeping every connection open (a coordinator that stopped answering)."""

    def __init__(self) -> None:
        import socket

        self.listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
        self.listener.bind(("127.0.0.1", 0))
        self.listener.listen(16)
        self.port = self.listener.getsockname()[1]
        self.target_port = 0
        self.holed = threading.Event()
        self.stopped = threading.Event()
        self.sockets: list[Any] = [self.listener]
        self.threads = [threading.Thread(target=self._accept, daemon=True)]
        self.threads[0].start()

    def _accept(self) -> None:
        import select
        import socket

        while not self.stopped.is_set():
            if not select.select([self.listener], [], [], 0.1)[0]:
                continue
            client, _ = self.listener.accept()
            upstream = socket.create_connection(("127.0.0.1", self.target_port), timeout=5)
            self.sockets += [client, upstream]
            for src, dst in ((client, upstream), (upstream, client)):
                t = threading.Thread(target=self._pump, args=(src, dst), daemon=True)
                self.threads.append(t)
                t.start()

    def _pump(self, src: Any, dst: Any) -> None:
        import select

        while not self.stopped.is_set():
            try:
                if not select.select([src], [], [], 0.1)[0]:
                    continue
                data = src.recv(65536)
                if not data:
                    return
                if not self.holed.is_set():
                    dst.sendall(data)
            except OSError:
                return

    def black_hole(self) -> None:
        self.holed.set()

    def close(self) -> None:
        self.stopped.set()
        for t in self.threads:
            t.join(2)
        for s in self.sockets:
            s.close()


@pytest.fixture
def proxied_broker(tmp_path: Any) -> Iterator[tuple[BlackHoleProxy, str]]:
    """A broker that advertises the proxy's port, so every client connection (coordinator too) passes it."""
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    proxy = BlackHoleProxy()
    props = dict(GROUP_BROKER_OVERRIDES, **{"log.dirs": str(tmp_path / "logs"),
                                            "advertised.listeners": f"PLAINTEXT://127.0.0.1:{proxy.port}"})
    server = KafkaServer(KafkaConfig.from_properties(None, props))
    server.startup()
    proxy.target_port = server.bound_port()
    try:
        yield proxy, f"127.0.0.1:{proxy.port}"
    finally:
        proxy.close()
        server.shutdown()


def test_close_with_unresponsive_coordinator_honours_timeout(proxied_broker: tuple[BlackHoleProxy, str]) -> None:
    proxy, bootstrap = proxied_broker
    topic, produced = make_topic(bootstrap, 1, 3)
    # Auto commit on close (a commit that never gets an answer) then LeaveGroup: both share close's deadline.
    c = consumer(bootstrap, unique("close"), **{"enable.auto.commit": True, "auto.commit.interval.ms": 60000})
    c.subscribe([topic])
    got = poll_until([c], lambda got: len(got[0]) >= 3)
    assert sorted(keyset(got[0])) == sorted(produced)
    assert c._coordinator.generation_if_stable() is not None
    proxy.black_hole()
    start = time.monotonic()
    c.close(timeout_ms=2000)
    elapsed = time.monotonic() - start
    assert 1.5 < elapsed < 4, elapsed  # it did wait for the commit, but not past the deadline
