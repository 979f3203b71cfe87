"""Fault injection in the manner of Jepsen (issue 20): a 3-broker ZooKeeper cluster with brokers on 127.0.0.11-13,
each binding its outgoing connections to its own address (source_bind/sitecustomize.py), and link cuts made
with iptables DROP rules in a chain of this module's own (net_faults.py), removed in a finally block.
Each case runs acks=all producers (librdkafka, no retries, unique values) and a committing consumer group
over one RF-3 partition with min.insync.replicas=2 and unclean election off, applies its faults, heals, and
checks: every acknowledged record present exactly once at its acknowledged offset, every replica's log
byte-identical up to the high watermark (segment bytes compared), committed offsets never past the log end
and every record the group consumed still in the log at the offset it was read from.

Cases: issue 20's case 1 (an AlterPartition answer lost, then the leader SIGKILLed), case 2 (a divergent
replica: a leader cut from everything keeps taking acks=1 writes at its old epoch, then must truncate them),
leader isolated from its followers but not from ZooKeeper, leader isolated from ZooKeeper, controller
isolated, and lost responses in either direction between leader and follower.
Default run: short timeouts, each case once (about 2-3 minutes). KAFKAPY_FAULTS_LONG=1: Kafka's default
timeouts (replica.lag.time.max.ms, controller.socket.timeout.ms 30 s, 18 s ZooKeeper session) and each
case 5 times with different timings (KAFKAPY_FAULTS_ROUNDS overrides the count in either mode;
KAFKAPY_FAULTS_ADDRESS_BASE moves the brokers' addresses so two runs can share the machine).
"""

from __future__ import annotations

import glob
import os
import random
import re
import struct
import threading
import time
from collections.abc import Iterator
from dataclasses import dataclass, field
from typing import Any

import pytest
from net_faults import Endpoint, LinkFaults, iptables_usable

from kafkapy.client.admin_types import NewTopic
from kafkapy.record.memory_records import MemoryRecords

LONG = os.environ.get("KAFKAPY_FAULTS_LONG") == "1"
ROUNDS = int(os.environ.get("KAFKAPY_FAULTS_ROUNDS", "5" if LONG else "1"))
# Brokers live on 127.0.0.<base>..<base+2>: two runs at once need different bases (rules match addresses).
ADDRESS_BASE = int(os.environ.get("KAFKAPY_FAULTS_ADDRESS_BASE", "11"))
SHIM_DIR = os.path.join(os.path.dirname(os.path.abspath(__file__)), "source_bind")
if LONG:
    LAG_MS, CONTROLLER_TIMEOUT_MS, SESSION_MS = 30_000, 30_000, 18_000
else:
    LAG_MS, CONTROLLER_TIMEOUT_MS, SESSION_MS = 3_000, 1_500, 6_000
OVERRIDES = {
    "replica.lag.time.max.ms": str(LAG_MS),
    "controller.socket.timeout.ms": str(CONTROLLER_TIMEOUT_MS),
    "zookeeper.session.timeout.ms": str(SESSION_MS),
    "replica.socket.timeout.ms": "5000",
    "offsets.topic.num.partitions": "1",
    "group.initial.rebalance.delay.ms": "0",
    "unclean.leader.election.enable": "false",
}
TOPIC_CONFIGS = {"min.insync.replicas": "2", "unclean.leader.election.enable": "false"}
_HEADER = struct.Struct(">qi")  # baseOffset, batchLength
_LAST_OFFSET_DELTA = struct.Struct(">i")  # at byte 23 of a v2 batch


def address(broker_id: int) -> str:
    return f"127.0.0.{ADDRESS_BASE + broker_id}"


@dataclass
class FaultCluster:
    cluster: Any
    faults: LinkFaults
    zk_port: int
    wait_for: Any
    rng: random.Random = field(default_factory=lambda: random.Random(20))

    @property
    def ids(self) -> list[int]:
        return sorted(self.cluster.brokers)

    def port(self, b: int) -> int:
        return int(self.cluster.brokers[b].port)

    def bootstrap(self, only: int | None = None) -> str:
        return ",".join(f"{address(b)}:{self.port(b)}" for b in self.ids
                        if (only is None or b == only) and self.cluster.brokers[b].alive)

    def start(self, b: int) -> None:
        self.cluster.env = {"PYTHONPATH": SHIM_DIR, "KAFKAPY_TEST_SOURCE_ADDRESS": address(b)}
        self.cluster.brokers[b].start()

    def state(self, topic: str) -> dict[str, Any]:
        return self.cluster.partition_state(topic, 0) or {}

    def controller(self) -> int:
        c = self.cluster.controller_id()
        assert c is not None
        return int(c)

    def cut_from_zookeeper(self, b: int) -> list[list[str]]:
        zk = Endpoint("127.0.0.1", self.zk_port)
        return [self.faults.drop(Endpoint(address(b)), zk),
                self.faults.drop(Endpoint("127.0.0.1", self.zk_port), Endpoint(address(b)))]

    def isolate(self, b: int) -> list[list[str]]:
        rules = self.cut_from_zookeeper(b)
        for other in self.ids:
            if other != b:
                rules += self.faults.cut(address(b), address(other))
        return rules

    def create_topic(self, topic: str, replicas: list[int]) -> None:
        admin = self.cluster.admin(self.bootstrap())
        try:
            admin.create_topics([NewTopic(topic, replica_assignment={0: replicas}, configs=dict(TOPIC_CONFIGS))])
        finally:
            admin.close()
        self.wait_for(lambda: self.state(topic).get("leader") == replicas[0]
                      and sorted(self.state(topic).get("isr", [])) == sorted(replicas), 30, what=f"{topic} online")

    def wait_isr(self, topic: str, isr: list[int], timeout_s: float) -> None:
        self.wait_for(lambda: sorted(self.state(topic).get("isr", [])) == sorted(isr), timeout_s,
                      what=f"{topic}'s ISR in ZooKeeper to be {sorted(isr)} (now {self.state(topic)})")

    def hold(self, seconds: float) -> None:
        time.sleep(seconds * (self.rng.uniform(0.7, 1.3) if ROUNDS > 1 else 1.0))


@pytest.fixture(scope="module")
def fc(zookeeper: Any, tmp_path_factory: pytest.TempPathFactory) -> Iterator[FaultCluster]:
    if os.geteuid() != 0:
        pytest.skip("link cuts need root for iptables")
    problem = iptables_usable()
    assert problem is None, problem
    fixtures = type(zookeeper).__init__.__globals__  # tests/cluster/conftest.py's Cluster and wait_for
    cluster = fixtures["Cluster"](zookeeper, str(tmp_path_factory.mktemp("faults")), dict(OVERRIDES))
    faults = LinkFaults(f"KAFKAPY-FAULTS-{os.getpid()}")
    result = FaultCluster(cluster, faults, zookeeper.port, fixtures["wait_for"])
    try:
        for b in range(3):
            broker = cluster.add_broker(b, start=False)
            plain = broker.argv

            def argv(plain: Any = plain, b: int = b, port: int = broker.port) -> list[str]:
                return [a.replace(f"PLAINTEXT://127.0.0.1:{port}", f"PLAINTEXT://{address(b)}:{port}")
                        for a in plain()]

            broker.argv = argv
        for b in range(3):
            cluster.env = {"PYTHONPATH": SHIM_DIR, "KAFKAPY_TEST_SOURCE_ADDRESS": address(b)}
            cluster.brokers[b].start(wait=False)
        for b in range(3):
            cluster.brokers[b].wait_started()
        result.wait_for(lambda: cluster.registered_brokers() == [0, 1, 2] and cluster.controller_id() is not None,
                        30, what="3 brokers registered and a controller elected")
        create_offsets_topic(result)
        yield result
    finally:
        faults.close()
        cluster.stop_all()
        try:
            cluster.save_logs()
        except OSError:
            pass


def create_offsets_topic(fc: FaultCluster) -> None:
    """A group commit creates __consumer_offsets (RF 3), before any case depends on who leads it."""
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTP

    fc.create_topic("warm-up", [0, 1, 2])
    c = Consumer({"bootstrap.servers": fc.bootstrap(), "group.id": "warm-up", "enable.auto.commit": False})
    try:
        fc.wait_for(lambda: c.commit(offsets=[CTP("warm-up", 0, 0)], asynchronous=False) is not None
                    or True, 60, what="the first offset commit")
    finally:
        c.close()
    fc.wait_for(lambda: len((fc.cluster.partition_state("__consumer_offsets", 0) or {}).get("isr", [])) == 3, 30,
                what="__consumer_offsets-0 fully in sync")


# -- the workload -------------------------------------------------------------------------------------------

class Workload:
    """acks=all producer (unique values, no retries: a value is in the log at most once unless the broker
    duplicated it) and a committing consumer, each in a thread bounded in time."""

    def __init__(self, fc: FaultCluster, topic: str, max_s: float = 300.0) -> None:
        self.fc, self.topic, self.max_s = fc, topic, max_s
        self.acked: list[tuple[int, bytes]] = []
        self.failed = 0
        self.committed: list[int] = []
        self.consumed: list[tuple[int, bytes]] = []  # what the group read (below the HW at the time)
        self._stop = threading.Event()
        self._threads = [threading.Thread(target=self._produce, daemon=True),
                         threading.Thread(target=self._consume, daemon=True)]

    def __enter__(self) -> Workload:
        for t in self._threads:
            t.start()
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()

    def stop(self) -> None:
        self._stop.set()
        for t in self._threads:
            t.join(30)

    def _on_delivery(self, err: Any, msg: Any) -> None:
        if err is None:
            self.acked.append((msg.offset(), msg.value()))
        else:
            self.failed += 1

    def _produce(self) -> None:
        from confluent_kafka import Producer

        p = Producer({"bootstrap.servers": self.fc.bootstrap(), "acks": "all", "linger.ms": 0,
                      "enable.idempotence": False, "message.send.max.retries": 0, "message.timeout.ms": 4000,
                      "socket.timeout.ms": 3000, "topic.metadata.refresh.interval.ms": 1000,
                      "metadata.max.age.ms": 2000, "retry.backoff.ms": 100})
        deadline, seq = time.monotonic() + self.max_s, 0
        while not self._stop.is_set() and time.monotonic() < deadline:
            if len(p) < 500:
                p.produce(self.topic, value=b"%s-%08d" % (self.topic.encode(), seq), partition=0,
                          on_delivery=self._on_delivery)
                seq += 1
            p.poll(0.005)
        p.flush(15)

    def _consume(self) -> None:
        from confluent_kafka import Consumer, KafkaException
        from confluent_kafka import TopicPartition as CTP

        c = Consumer({"bootstrap.servers": self.fc.bootstrap(), "group.id": f"{self.topic}-group",
                      "enable.auto.commit": False, "auto.offset.reset": "earliest", "session.timeout.ms": 10000,
                      "socket.timeout.ms": 3000})
        c.assign([CTP(self.topic, 0, 0)])
        deadline = time.monotonic() + self.max_s
        try:
            while not self._stop.is_set() and time.monotonic() < deadline:
                msgs = c.consume(200, 0.2)
                good = [m for m in msgs if m.error() is None]
                self.consumed.extend((m.offset(), m.value()) for m in good)
                if good:
                    try:
                        c.commit(offsets=[CTP(self.topic, 0, good[-1].offset() + 1)], asynchronous=False)
                        self.committed.append(good[-1].offset() + 1)
                    except KafkaException:
                        pass  # the coordinator may be unreachable mid-fault: the next batch tries again
        finally:
            c.close()


# -- reading the replicas' logs from disk ------------------------------------------------------------------

def read_batches(log_dir: str, topic: str) -> list[tuple[int, int, bytes]]:
    """(base offset, last offset, bytes) of every complete batch in the partition's segments, in order."""
    out: list[tuple[int, int, bytes]] = []
    for path in sorted(glob.glob(os.path.join(log_dir, f"{topic}-0", "*.log"))):
        with open(path, "rb") as f:
            data = f.read()
        pos = 0
        while pos + 27 <= len(data):
            base, length = _HEADER.unpack_from(data, pos)
            if length <= 0 or pos + 12 + length > len(data):
                break
            last = base + _LAST_OFFSET_DELTA.unpack_from(data, pos + 23)[0]
            out.append((base, last, data[pos:pos + 12 + length]))
            pos += 12 + length
    return out


def high_watermark(fc: FaultCluster, topic: str) -> int:
    from confluent_kafka import Consumer
    from confluent_kafka import TopicPartition as CTP

    c = Consumer({"bootstrap.servers": fc.bootstrap(), "group.id": f"{topic}-hw"})
    try:
        return int(c.get_watermark_offsets(CTP(topic, 0), timeout=10)[1])
    finally:
        c.close()


def converge_and_check(fc: FaultCluster, topic: str, work: Workload) -> None:
    """After healing: every broker back in the ISR and at the same log end; then the three checks."""
    work.stop()
    replicas = fc.ids
    fc.wait_isr(topic, replicas, LAG_MS / 1000 * 2 + 60)
    hw = fc.wait_for(lambda: (h := high_watermark(fc, topic)) > 0 and all(
        (bs := read_batches(fc.cluster.brokers[b].log_dir, topic)) and bs[-1][1] + 1 == h for b in replicas) and h,
        60, what=f"every replica of {topic} at the high watermark")
    logs = {b: [x for x in read_batches(fc.cluster.brokers[b].log_dir, topic) if x[1] < hw] for b in replicas}
    reference = b"".join(x[2] for x in logs[replicas[0]])
    for b in replicas[1:]:
        assert b"".join(x[2] for x in logs[b]) == reference, f"replica {b} differs from replica {replicas[0]}"
    values: dict[int, bytes | None] = {}
    epochs: dict[int, int] = {}
    for batch in MemoryRecords(reference).batches():
        for r in batch.records():
            values[r.offset] = r.value
            epochs[r.offset] = batch.partition_leader_epoch
    assert work.acked, "nothing was acknowledged: the case tested nothing"
    lost = [(o, v) for o, v in work.acked if values.get(o) != v]
    assert not lost, f"{len(lost)} acknowledged records missing or moved, e.g. {lost[:5]} (HW {hw})"
    check_no_duplicates(values, epochs, work.acked)
    assert all(c <= hw for c in work.committed), f"a committed offset {max(work.committed)} past the log end {hw}"
    # What the group read (and committed past) is what the log holds: no consumer saw a record that went away.
    unread = [(o, v) for o, v in work.consumed if values.get(o) != v]
    assert not unread, f"{len(unread)} consumed records not in the final log, e.g. {unread[:5]}"


def check_no_duplicates(values: dict[int, bytes | None], epochs: dict[int, int],
                        acked: list[tuple[int, bytes]]) -> None:
    """Every acknowledged value once in the log, but for the one second copy Kafka's protocol allows a
    non-idempotent producer: a deposed leader appends a record, a follower that becomes the next leader has
    fetched it, and the deposed leader, made a follower before the ISR caught up, answers the waiting acks=all
    produce NOT_LEADER_OR_FOLLOWER (Kafka's DelayedProduce -> Partition.checkEnoughReplicasReachOffset);
    librdkafka reads that error as 'not persisted' and sends the record again to the new leader whatever
    message.send.max.retries says. Those copies have one shape only: the first copies are the last records of
    the deposed leader's epoch, the acknowledged copies the first records of the next epoch in the log, in the
    same order. Any other second copy (same epoch, a later copy in an older epoch, a copy in mid-epoch) fails."""
    where: dict[bytes | None, list[int]] = {}
    for o, v in values.items():
        where.setdefault(v, []).append(o)
    resent: dict[int, list[tuple[int, int]]] = {}  # the first copy's epoch -> (first copy, acknowledged copy)
    for o, v in acked:
        others = [x for x in where[v] if x != o]
        if not others:
            continue
        assert len(others) == 1 and others[0] < o and epochs[others[0]] < epochs[o], (
            f"acknowledged {v!r} at offset {o} (epoch {epochs[o]}) also at "
            f"{[(x, epochs[x]) for x in others]}")
        resent.setdefault(epochs[others[0]], []).append((others[0], o))
    for epoch, pairs in resent.items():
        pairs.sort()
        firsts, seconds = [a for a, _ in pairs], [b for _, b in pairs]
        epoch_end = max(x for x, e in epochs.items() if e == epoch)
        next_start = min(x for x, e in epochs.items() if x > epoch_end)
        assert firsts == list(range(epoch_end - len(pairs) + 1, epoch_end + 1)) and seconds == list(
            range(next_start, next_start + len(pairs))), (
            f"records of epoch {epoch} copied again, but not as the deposed leader's tail resent at the next "
            f"epoch's start: {pairs} (epoch {epoch} ends at {epoch_end}, the next starts at {next_start})")


def adopted_isr(fc: FaultCluster, broker: int, topic: str) -> set[int] | None:
    """The last ISR the broker's log says its partition adopted from an AlterPartition answer."""
    found = re.findall(rf"ISR of {re.escape(topic)}-0 updated to \[([0-9, ]*)\]", fc.cluster.brokers[broker].output())
    return {int(x) for x in found[-1].split(",")} if found else None


def others(fc: FaultCluster, *excluded: int) -> list[int]:
    return [b for b in fc.ids if b not in excluded]


def ensure_all_alive(fc: FaultCluster) -> None:
    for b in fc.ids:
        if not fc.cluster.brokers[b].alive:
            fc.start(b)
    fc.wait_for(lambda: fc.cluster.registered_brokers() == fc.ids, SESSION_MS / 1000 + 30, what="all registered")


# -- the cases --------------------------------------------------------------------------------------------

@pytest.mark.parametrize("run", range(ROUNDS))
def test_lost_alter_partition_answer_then_leader_killed(fc: FaultCluster, run: int) -> None:
    """Case 1: replicas [L, R, C], C the controller. R drops out of the ISR (L<->R cut); C's answers to L are
    dropped; L<->R heals, R catches up and C commits ISR [L, C, R] without L hearing it; L<->R is cut again
    and writes go on (acks=all); L is SIGKILLed and everything heals. R (first live ISR member) leads: no
    record L acknowledged may be missing, so L must never have acknowledged without R."""
    ensure_all_alive(fc)
    topic = f"case1-{run}"
    c = fc.controller()
    # L must propose nothing else meanwhile: only the request already on its connection reaches C (a new
    # connection's ApiVersions answer is dropped too), so L must not lead __consumer_offsets-0.
    offsets_leader = int(fc.cluster.partition_state("__consumer_offsets", 0)["leader"])
    if offsets_leader == c:
        leader, r = others(fc, c)
    else:
        leader, r = others(fc, c, offsets_leader)[0], offsets_leader
    fc.create_topic(topic, [leader, r, c])
    with Workload(fc, topic) as work:
        fc.hold(1)
        cut = fc.faults.cut(address(leader), address(r))
        fc.wait_isr(topic, [leader, c], LAG_MS / 1000 * 2 + 15)
        # ...and L has its answer (only the next one is to be lost).
        fc.wait_for(lambda: adopted_isr(fc, leader, topic) == {leader, c}, 15, what=f"{leader} adopting the shrink")
        fc.faults.drop(Endpoint(address(c), fc.port(c)), Endpoint(address(leader)))
        fc.faults.remove(*cut)
        fc.wait_isr(topic, [leader, c, r], 30)
        fc.faults.cut(address(leader), address(r))
        # Long enough for the old 5 attempts x controller.socket.timeout.ms to give up and fall back.
        fc.hold(5 * CONTROLLER_TIMEOUT_MS / 1000 + 3)
        fc.cluster.brokers[leader].kill()
        fc.faults.heal()
        fc.wait_for(lambda: fc.state(topic).get("leader") == r, SESSION_MS / 1000 + 20, what=f"{r} leads {topic}")
        fc.hold(1)
        fc.start(leader)
    converge_and_check(fc, topic, work)


@pytest.mark.parametrize("run", range(ROUNDS))
def test_divergent_replica_truncates(fc: FaultCluster, run: int) -> None:
    """Case 2: the leader (not the controller) is cut from everything but its client: it takes acks=1 writes
    at its old epoch while the controller elects another ISR member. After healing it must truncate that
    suffix to the new leader's log (log-prefix property): replicas byte-identical up to the HW."""
    from confluent_kafka import Producer

    ensure_all_alive(fc)
    topic = f"case2-{run}"
    c = fc.controller()
    leader, r = others(fc, c)
    fc.create_topic(topic, [leader, r, c])
    with Workload(fc, topic) as work:
        fc.hold(1)
        fc.isolate(leader)
        zombie = Producer({"bootstrap.servers": fc.bootstrap(only=leader), "acks": 1, "linger.ms": 0,
                           "message.send.max.retries": 0, "message.timeout.ms": 3000})
        deadline = time.monotonic() + SESSION_MS / 1000 + 20
        while fc.state(topic).get("leader") == leader and time.monotonic() < deadline:
            zombie.produce(topic, value=b"zombie", partition=0)
            zombie.poll(0.01)
        assert fc.state(topic).get("leader") == r
        for _ in range(50):
            zombie.produce(topic, value=b"zombie", partition=0)
            zombie.poll(0.01)
        zombie.flush(5)
        fc.faults.heal()
    converge_and_check(fc, topic, work)


@pytest.mark.parametrize("run", range(ROUNDS))
def test_leader_isolated_from_followers_not_zookeeper(fc: FaultCluster, run: int) -> None:
    ensure_all_alive(fc)
    topic = f"leader-cut-{run}"
    c = fc.controller()
    leader, r = others(fc, c)
    fc.create_topic(topic, [leader, r, c])
    with Workload(fc, topic) as work:
        fc.hold(1)
        rules = fc.faults.cut(address(leader), address(r)) + fc.faults.cut(address(leader), address(c))
        fc.hold(LAG_MS / 1000 * 2 + 2)
        assert fc.state(topic).get("leader") == leader  # its ZooKeeper session lives: no election
        fc.faults.remove(*rules)
        fc.hold(2)
    converge_and_check(fc, topic, work)


@pytest.mark.parametrize("run", range(ROUNDS))
def test_leader_isolated_from_zookeeper(fc: FaultCluster, run: int) -> None:
    ensure_all_alive(fc)
    topic = f"leader-zk-{run}"
    c = fc.controller()
    leader, r = others(fc, c)
    fc.create_topic(topic, [leader, r, c])
    with Workload(fc, topic) as work:
        fc.hold(1)
        rules = fc.cut_from_zookeeper(leader)
        fc.wait_for(lambda: fc.state(topic).get("leader") not in (leader, None), SESSION_MS / 1000 + 20,
                    what=f"a new leader for {topic}")
        fc.hold(1)
        fc.faults.remove(*rules)
    converge_and_check(fc, topic, work)


@pytest.mark.parametrize("run", range(ROUNDS))
def test_controller_isolated(fc: FaultCluster, run: int) -> None:
    ensure_all_alive(fc)
    topic = f"controller-cut-{run}"
    c = fc.controller()
    x, y = others(fc, c)
    fc.create_topic(topic, [c, x, y])  # the controller also leads the partition
    with Workload(fc, topic) as work:
        fc.hold(1)
        rules = fc.cut_from_zookeeper(c)
        fc.wait_for(lambda: fc.cluster.controller_id() not in (c, None) and fc.state(topic).get("leader") != c,
                    SESSION_MS / 1000 + 20, what="a new controller and leader")
        fc.hold(1)
        fc.faults.remove(*rules)
    converge_and_check(fc, topic, work)


@pytest.mark.parametrize("run", range(ROUNDS))
def test_lost_responses_between_leader_and_follower(fc: FaultCluster, run: int) -> None:
    """The leader's fetch responses to a follower are lost, then the follower's requests are: the ISR may
    shrink and grow back, nothing acknowledged is lost."""
    ensure_all_alive(fc)
    topic = f"lost-responses-{run}"
    c = fc.controller()
    leader, r = others(fc, c)
    fc.create_topic(topic, [leader, r, c])
    with Workload(fc, topic) as work:
        fc.hold(1)
        answers = fc.faults.drop(Endpoint(address(leader), fc.port(leader)), Endpoint(address(r)))
        fc.hold(LAG_MS / 1000 + 1)
        fc.faults.remove(answers)
        requests = fc.faults.drop(Endpoint(address(r)), Endpoint(address(leader), fc.port(leader)))
        fc.hold(LAG_MS / 1000 + 1)
        fc.faults.remove(requests)
        fc.hold(2)
    converge_and_check(fc, topic, work)
