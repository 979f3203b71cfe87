"""The authorization matrix, in the manner of Kafka's AuthorizerIntegrationTest: every API the broker serves.

One broker (module scope) with `authorizer.class.name` set and a SASL_PLAINTEXT listener whose PLAIN users are
admin (a super user, who sets up the data), alice (never has an ACL) and bob (given, per row, exactly the ACLs of
that row; ACLs are written through the broker's AclAuthorizer, which reloads at once). Each table entry names an
API key, the version family it covers and the version it sends; it builds the request from the generated message
classes and reduces the response to what authorization decides: error codes per resource, or the data that must
stay hidden (the table: tests/integration/authorization_cases.py). Row one is alice with no ACL; the last row is
bob with exactly the ACLs Kafka 3.9's KafkaApis requires, answered as if no authorizer were there.
`test_every_served_api_has_an_entry` enumerates the handler registry: a handler (or a version) added later without
an entry in the table fails it. Also here: what refusals look like from outside (kafkapy configs' exit code, the
WriteTxnMarkers log line) and that no refused or unverified transactional batch leaves an open transaction.
"""

from __future__ import annotations

import logging
import subprocess
import sys
import time
from collections.abc import Callable, Iterator
from pathlib import Path
from typing import Any

import pytest
from authorization_cases import (
    CASES,
    DELETE_OFFSETS_GROUP,
    EXEMPT,
    GROUP,
    JAAS,
    PIDS,
    SETUP_TOPICS,
    TOPIC,
    TXN,
    TXN_TOPIC,
    USERS,
    A,
    Case,
    Env,
    T,
    X,
    add_partitions_v3,
    build_batch,
    create_token_request,
    init_pid_request,
    markers,
    markers_request,
    metadata_request,
    offset_commit_request,
    partition_codes,
    produce_codes,
)

from kafkapy.common.errors import ErrorCode as E
from kafkapy.common.topic_partition import TopicPartition
from kafkapy.protocol import messages as M
from kafkapy.protocol.api_keys import ApiKey
from kafkapy.record.memory_records_builder import MemoryRecordsBuilder
from kafkapy.server.apis import registry

# -- the broker ----------------------------------------------------------------------------------------------------

def _admin_setup(env: Env) -> None:
    R = M.CreateTopicsRequest
    created = env.call("admin", R(topics=[
        R.CreatableTopic(name=n, num_partitions=1, replication_factor=1, assignments=[], configs=[])
        for n in SETUP_TOPICS], timeout_ms=15000, validate_only=False), 7)
    assert [(t.name, t.error_code) for t in created.topics] == [(n, 0) for n in SETUP_TOPICS]
    env.doomed_id = created.topics[-1].topic_id
    if registry.load_handlers().get(ApiKey.CREATE_DELEGATION_TOKEN) is not None:
        env.version = 3
        token = env.call("admin", create_token_request(env), 3)
        assert token.error_code == 0
        env.carol_hmac = bytes(token.hmac)
    pid = env.call("admin", M.InitProducerIdRequest(transactional_id=None, transaction_timeout_ms=60000), 4)
    assert pid.error_code == 0
    PIDS[0] = env.producer_id = pid.producer_id
    # Two records from an idempotent producer: DescribeProducers shows it, OffsetForLeaderEpoch ends at 2.
    for seq in (0, 1):
        b = MemoryRecordsBuilder(producer_id=pid.producer_id, producer_epoch=pid.producer_epoch, base_sequence=seq)
        b.append(int(time.time() * 1000), None, b"admin")
        P = M.ProduceRequest
        resp = env.call("admin", P(transactional_id=None, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
            name=TOPIC, partition_data=[P.PartitionProduceData(index=0, records=b.build())])]), 9)
        assert produce_codes(resp) == (0,)
    # The coordinators' topics are created by FindCoordinator: retry until they answer (bounded in count and time).
    for key_type, key in ((0, GROUP), (1, TXN)):
        r = _until_ok(lambda key_type=key_type, key=key: env.call(
            "admin", M.FindCoordinatorRequest(key=key, key_type=key_type), 3), lambda r: r.error_code == 0)
        assert r.error_code == 0
    for group in (GROUP, DELETE_OFFSETS_GROUP):
        resp = _until_ok(lambda group=group: env.call("admin", offset_commit_request(group)(env), 8),
                         lambda r: partition_codes(r, "topics", "partitions") == (0,))
        assert partition_codes(resp, "topics", "partitions") == (0,)
    md = env.call("admin", metadata_request([TOPIC])(env), 12)
    env.topic_id = md.topics[0].topic_id
    assert _until_ok(lambda: env.call("admin", init_pid_request(TXN)(env), 4), lambda r: r.error_code == 0).error_code == 0


def _until_ok(call: Callable[[], Any], ok: Callable[[Any], bool], timeout_s: float = 20.0) -> Any:
    deadline = time.monotonic() + timeout_s
    for _ in range(400):
        r = call()
        if ok(r) or time.monotonic() > deadline:
            return r
        time.sleep(0.05)
    return r


@pytest.fixture(scope="module")
def env(tmp_path_factory: pytest.TempPathFactory) -> Iterator[Env]:
    from kafkapy.server.kafka_config import KafkaConfig
    from kafkapy.server.kafka_server import KafkaServer

    tmp: Path = tmp_path_factory.mktemp("authz-matrix")
    overrides = {
        "listeners": "PLAINTEXT://127.0.0.1:0,SASL_PLAINTEXT://127.0.0.1:0",
        "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,SASL_PLAINTEXT:SASL_PLAINTEXT",
        "inter.broker.listener.name": "PLAINTEXT",
        "log.dirs": str(tmp / "data"),
        "sasl.enabled.mechanisms": "PLAIN",
        "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
        "authorizer.class.name": "kafka.security.authorizer.AclAuthorizer",
        "super.users": "User:admin;User:ANONYMOUS",
        "num.network.threads": "2",
        "num.io.threads": "4",
        "offsets.topic.num.partitions": "1",
        "transaction.state.log.num.partitions": "1",
        "auto.create.topics.enable": "false",
        "group.initial.rebalance.delay.ms": "0",
        "delegation.token.secret.key": "matrix-secret",
        "log.retention.check.interval.ms": "300000",
    }
    server = KafkaServer(KafkaConfig.from_properties(None, overrides))
    server.startup()
    e = Env(server, server.bound_port("SASL_PLAINTEXT"))
    try:
        _admin_setup(e)
        yield e
    finally:
        for conn in e.conns.values():
            conn.close()
        server.shutdown()


# -- the tests -----------------------------------------------------------------------------------------------------

def test_every_served_api_has_an_entry() -> None:
    """The guard: every API key and version the broker serves is covered by a case or a stated exemption."""
    served = {key: (spec.min_version, spec.max_version) for key, spec in registry.load_handlers().items()}
    covered: dict[int, set[int]] = {}
    for entry in (*CASES, *EXEMPT):
        covered.setdefault(int(entry.api), set()).update(range(entry.family[0], entry.family[1] + 1))
    missing = {ApiKey(k).name: f"v{lo}-{hi}" for k, (lo, hi) in served.items()
               if not set(range(lo, hi + 1)) <= covered.get(k, set())}
    assert missing == {}, f"served APIs without an authorization matrix entry: {missing}"
    for case in CASES:
        assert case.family[0] <= case.version <= case.family[1], case.id
        assert case.rows[0][0] == (), f"{case.id}: the first row is the principal without ACLs"


@pytest.mark.parametrize("case", CASES, ids=[c.id for c in CASES])
def test_authorization(env: Env, case: Case) -> None:
    """Each row at the family's first, chosen and last version: one rule per family."""
    if registry.load_handlers().get(int(case.api)) is None:
        # Not served (yet): then the broker must not advertise it either, and the guard has nothing to keep.
        advertised = env.call("alice", M.ApiVersionsRequest(), 0).api_keys
        assert int(case.api) not in {k.api_key for k in advertised}
        return
    for version in sorted({case.family[0], case.version, case.family[1]}):
        for i, (acls, expected) in enumerate(case.rows):
            user = "alice" if i == 0 else "bob"
            if i:
                env.grant(list(acls))
            try:
                env.version, env.case_label = version, case.label
                got = case.observe(env.call(user, case.build(env), version))
            finally:
                if i:
                    env.grant([])
            assert got == expected, \
                f"{case.id} v{version} as {user} with {[(rt.name, n, op.name) for rt, n, op in acls]}"


# -- what the refusals look like from outside ----------------------------------------------------------------------

def _configs_tool(env: Env, tmp: Path, user: str, *argv: str) -> subprocess.CompletedProcess:
    props = tmp / f"{user}.properties"
    props.write_text("security.protocol=SASL_PLAINTEXT\nsasl.mechanism=PLAIN\n"
                     "sasl.jaas.config=org.apache.kafka.common.security.plain.PlainLoginModule required "
                     f'username="{user}" password="{USERS[user]}";\n')
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", "configs", "--bootstrap-server",
                           f"127.0.0.1:{env.port}", "--command-config", str(props), *argv],
                          capture_output=True, text=True, timeout=60)


def test_refused_scram_and_quota_alterations_fail_the_tool(env: Env, tmp_path: Path) -> None:
    """Issue 15 finding 8: a refused alteration is an error (exit 1), never "Completed"."""
    scram = _configs_tool(env, tmp_path, "alice", "--alter", "--entity-type", "users", "--entity-name", "carol",
                          "--add-config", "SCRAM-SHA-256=[password=x]")
    assert scram.returncode == 1, (scram.stdout, scram.stderr)
    assert "Completed" not in scram.stdout
    assert scram.stderr.startswith("Error while executing config command with args"), scram.stderr
    assert "org.apache.kafka.common.errors.ClusterAuthorizationException" in scram.stderr, scram.stderr
    quota = _configs_tool(env, tmp_path, "alice", "--alter", "--entity-type", "users", "--entity-name", "carol",
                          "--add-config", "producer_byte_rate=1024")
    assert quota.returncode == 1, (quota.stdout, quota.stderr)
    assert "Completed" not in quota.stdout
    assert quota.stderr.startswith("Error while executing config command with args"), quota.stderr
    assert "org.apache.kafka.common.errors.ClusterAuthorizationException" in quota.stderr, quota.stderr
    described = env.call("admin", M.DescribeUserScramCredentialsRequest(users=None), 0)
    assert [r.user for r in described.results] == []


def test_refused_write_txn_markers_are_logged(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    with caplog.at_level(logging.WARNING, logger="kafka.server.KafkaApis"):
        assert markers(env.call("alice", markers_request(env), 1)) == (E.CLUSTER_AUTHORIZATION_FAILED,)
    refused = [r.getMessage() for r in caplog.records if "WriteTxnMarkers" in r.getMessage()]
    assert refused == ["WriteTxnMarkers from User:alice (client matrix-alice) refused: CLUSTER_ACTION on the "
                       "cluster is not authorized; 1 marker(s) not written"]


def test_refused_transactional_batches_leave_no_open_transaction(env: Env) -> None:
    """Issue 15 finding 3: after the refused transactional batches, read_committed sees up to the high watermark."""
    P = M.ProduceRequest
    env.grant([(T, TXN_TOPIC, A.WRITE)])
    try:
        for tid in (None, "tx-other"):
            resp = env.call("bob", P(transactional_id=tid, acks=1, timeout_ms=10000, topic_data=[P.TopicProduceData(
                name=TXN_TOPIC, partition_data=[P.PartitionProduceData(index=0, records=build_batch(env, True, 779))])]), 9)
            assert produce_codes(resp) == (E.TRANSACTIONAL_ID_AUTHORIZATION_FAILED,)
    finally:
        env.grant([])
    R = M.ListOffsetsRequest
    ends = []
    for isolation in (0, 1):
        resp = env.call("admin", R(replica_id=-1, isolation_level=isolation, topics=[R.ListOffsetsTopic(
            name=TXN_TOPIC, partitions=[R.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), 7)
        ends.append(resp.topics[0].partitions[0].offset)
    assert ends[0] == ends[1]
    log = env.server.services.replica_manager.get_leader_partition_or_error(TopicPartition(TXN_TOPIC, 0)).log
    assert log.producer_state_manager.active_producers() == [] or all(
        e.current_txn_first_offset in (None, -1) for e in log.producer_state_manager.active_producers())


def _txn_produce(env: Env, user: str, tid: str, pid: int, epoch: int, seq: int) -> tuple:
    P = M.ProduceRequest
    b = MemoryRecordsBuilder(producer_id=pid, producer_epoch=epoch, base_sequence=seq, is_transactional=True)
    b.append(int(time.time() * 1000), b"k", b"v")
    resp = env.call(user, P(transactional_id=tid, acks=-1, timeout_ms=10000, topic_data=[P.TopicProduceData(
        name=TXN_TOPIC, partition_data=[P.PartitionProduceData(index=0, records=b.build())])]), 9)
    p = resp.responses[0].partition_responses[0]
    return p.error_code, p.error_message


def _stable_ends(env: Env) -> tuple[int, int]:
    R = M.ListOffsetsRequest
    ends = []
    for isolation in (0, 1):
        resp = env.call("admin", R(replica_id=-1, isolation_level=isolation, topics=[R.ListOffsetsTopic(
            name=TXN_TOPIC, partitions=[R.ListOffsetsPartition(partition_index=0, timestamp=-1)])]), 7)
        ends.append(resp.topics[0].partitions[0].offset)
    return ends[0], ends[1]


def test_transactional_batch_outside_its_transaction_is_refused(env: Env) -> None:
    """KIP-890 (transaction.partition.verification.enable, Kafka 3.9's default): a principal allowed to write its own
    transactional id still cannot open a transaction the coordinator does not know of, which would pin the LSO."""
    env.grant([(X, "tx-bob", A.WRITE), (T, TXN_TOPIC, A.WRITE)])
    try:
        # A made-up producer id: the coordinator has no such mapping for the transactional id.
        assert _txn_produce(env, "bob", "tx-bob", 4242, 0, 0) == (E.INVALID_PRODUCER_ID_MAPPING, None)
        init = _until_ok(lambda: env.call("bob", init_pid_request("tx-bob")(env), 4), lambda r: r.error_code == 0)
        assert init.error_code == 0
        pid, epoch = init.producer_id, init.producer_epoch
        # The real producer id, but the partition was never added to the transaction.
        assert _txn_produce(env, "bob", "tx-bob", pid, epoch, 0) == (
            E.INVALID_TXN_STATE, "Partition was not added to the transaction")
        assert _stable_ends(env)[0] == _stable_ends(env)[1]
        # Added through AddPartitionsToTxn, the batch is taken; the abort then releases the LSO.
        R = M.AddPartitionsToTxnRequest
        added = env.call("bob", R(v3_and_below_transactional_id="tx-bob", v3_and_below_producer_id=pid,
                                  v3_and_below_producer_epoch=epoch, v3_and_below_topics=[
                                      R.AddPartitionsToTxnTopic(name=TXN_TOPIC, partitions=[0])]), 3)
        assert add_partitions_v3(added) == (0,)
        assert _txn_produce(env, "bob", "tx-bob", pid, epoch, 0) == (0, None)
        assert _txn_produce(env, "bob", "tx-bob", pid, epoch, 1) == (0, None)  # ongoing: no second verification
        hw, lso = _stable_ends(env)
        assert lso < hw
        ended = env.call("bob", M.EndTxnRequest(transactional_id="tx-bob", producer_id=pid, producer_epoch=epoch,
                                                committed=False), 3)
        assert ended.error_code == 0
    finally:
        env.grant([])
    ends = _until_ok(lambda: _stable_ends(env), lambda e: e[0] == e[1], timeout_s=10)
    assert ends[0] == ends[1]


def test_denials_are_audited_as_kafka_logs_them(env: Env, caplog: pytest.LogCaptureFixture) -> None:
    """kafka.authorizer.logger: a denied access the request asked for is one INFO line in Kafka's words; a filter
    that only hides (Metadata for all topics) logs nothing."""
    with caplog.at_level(logging.INFO, logger="kafka.authorizer.logger"):
        env.version = 12
        env.call("alice", metadata_request([TOPIC])(env), 12)
        named = [r.getMessage() for r in caplog.records if r.name == "kafka.authorizer.logger"]
        caplog.clear()
        env.call("alice", metadata_request(None)(env), 12)
        hidden = [r.getMessage() for r in caplog.records if r.name == "kafka.authorizer.logger"]
    assert named == ["Principal = User:alice is Denied Operation = Describe from host = 127.0.0.1 on resource = "
                     "Topic:LITERAL:t for request = Metadata with resourceRefCount = 1"]
    assert hidden == []
