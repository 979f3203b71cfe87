"""ZooKeeper security as Kafka's broker and tools do it, against a real ZooKeeper with SASL enabled (Debian's
zookeeper: a server JAAS `Server` section with user_kafka=..., SASLAuthenticationProvider):

- a broker with zookeeper.set.acl=true and no JAAS login refuses to start with Kafka's SecurityException line;
- with -Djava.security.auth.login.config in KAFKA_OPTS it logs in (DIGEST-MD5) and every znode it created
  carries Kafka's ACLs (sasl:kafka ALL + world READ; /config/users and /config/brokers creator-only;
  /consumers open); an unauthenticated client can read but not write (NoAuth);
- `configs --zookeeper ... SCRAM-SHA-256=[password=...]` stores the salted credential, creator-only, and the
  broker authenticates confluent-kafka with it;
- zookeeper-security-migration secure then unsecure on a tree written without ACLs;
- the brokers share the ZooKeeper identity: after the controller's controlled shutdown the other broker takes
  over and rewrites the znodes the first one created.
One SASL ZooKeeper and one two-broker cluster for the module (the failover test runs last).
"""

from __future__ import annotations

import json
import os
import re
import subprocess
import sys
import uuid
from pathlib import Path
from typing import Any

import pytest

pytestmark = pytest.mark.timeout(180)

SASL_ALL = ("sasl", "kafka", 31)
WORLD_READ = ("world", "anyone", 1)
WORLD_ALL = ("world", "anyone", 31)
SCRAM_JAAS = "org.apache.kafka.common.security.scram.ScramLoginModule required;"


def _conftest(request: pytest.FixtureRequest) -> Any:
    return request.config.pluginmanager.get_plugin(str(Path(__file__).with_name("conftest.py")))


@pytest.fixture(scope="module")
def sasl_zk(request, tmp_path_factory):
    conftest = _conftest(request)
    if not (os.path.exists(conftest.ZK_JAR) and __import__("shutil").which("java")):
        pytest.skip("Debian's zookeeper package (and java) is not installed")
    base = tmp_path_factory.mktemp("sasl-zookeeper")
    server_jaas = base / "zk_server_jaas.conf"
    server_jaas.write_text('Server {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                           '  user_kafka="kafka-secret"\n  user_admin="admin-secret";\n};\n')
    client_jaas = base / "kafka_client_jaas.conf"
    client_jaas.write_text('// the broker\'s and the tools\' ZooKeeper login\nClient {\n'
                           '  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                           '  username="kafka"\n  password="kafka-secret";\n};\n')
    server = conftest.ZooKeeperServer(
        base, extra_cfg="authProvider.1=org.apache.zookeeper.server.auth.SASLAuthenticationProvider\n"
                        "requireClientAuthScheme=sasl\n",
        jvm_flags=(f"-Djava.security.auth.login.config={server_jaas}",))
    server.start()
    server.kafka_opts = f"-Djava.security.auth.login.config={client_jaas}"
    try:
        yield server
    finally:
        server.stop()


@pytest.fixture(scope="module")
def secure_cluster(request, sasl_zk, tmp_path_factory):
    conftest = _conftest(request)
    cluster = conftest.Cluster(sasl_zk, str(tmp_path_factory.mktemp("secure-zk-cluster")), {
        "zookeeper.set.acl": "true",
        "offsets.topic.replication.factor": "1",
        "transaction.state.log.replication.factor": "1",
    })
    cluster.env = {"KAFKA_OPTS": sasl_zk.kafka_opts}
    try:
        for broker_id in (0, 1):
            broker = cluster.add_broker(broker_id, start=False)
            broker.sasl_port = conftest.free_port()
            broker.overrides.update({
                "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{broker.sasl_port}",
                "sasl.enabled.mechanisms": "SCRAM-SHA-256",
                "listener.name.sasl_plaintext.scram-sha-256.sasl.jaas.config": SCRAM_JAAS,
            })
        cluster.start_all()
        yield cluster
    finally:
        cluster.stop_all()
        try:
            cluster.save_logs()
        except OSError:
            pass


def sasl_client(connect: str) -> Any:
    from kafkapy.zk.kafka_zk_client import KafkaZkClient
    from kafkapy.zk.zk_client_config import ZkClientAuth

    return KafkaZkClient(connect, connection_timeout_ms=20000, create_chroot=False,
                         auth=ZkClientAuth("DIGEST-MD5", "kafka", "kafka-secret"))


def acl_set(zk: Any, path: str) -> set[tuple[str, str, int]]:
    return {(a.scheme, a.id, a.perms) for a in zk.get_acls(path)[0]}


def walk(zk: Any, path: str = "/") -> list[str]:
    out, pending = [], [path]
    while pending and len(out) < 10000:
        node = pending.pop()
        out.append(node)
        pending.extend(("" if node == "/" else node) + "/" + c for c in zk.children(node))
    return out


def kafkapy(*args: str, kafka_opts: str | None = None) -> subprocess.CompletedProcess[str]:
    env = dict(os.environ)
    env.pop("KAFKA_OPTS", None)
    if kafka_opts is not None:
        env["KAFKA_OPTS"] = kafka_opts
    return subprocess.run([sys.executable, "-m", "kafkapy.cli.main", *args], capture_output=True, text=True,
                          timeout=60, env=env)


def test_set_acl_without_a_login_is_refused(request, sasl_zk, tmp_path):
    conftest = _conftest(request)
    cluster = conftest.Cluster(sasl_zk, str(tmp_path), {"zookeeper.set.acl": "true"})
    cluster.env = {"KAFKA_OPTS": ""}
    broker = cluster.add_broker(0, start=False)
    broker.start(wait=False)
    assert broker.proc is not None
    assert broker.proc.wait(60) == 1
    assert ("zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least "
            "zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not "
            "present and the verification of the JAAS login file failed [java.security.auth.login.config=null, "
            "zookeeper.sasl.client=default:true, zookeeper.sasl.clientconfig=default:Client]") in broker.output()


def test_every_znode_the_broker_created_has_kafkas_acls(secure_cluster):
    admin = secure_cluster.admin()
    try:
        from kafkapy.client.admin import NewTopic

        admin.create_topics([NewTopic("secured", 2, 1, configs={"retention.ms": "3600000"})])
    finally:
        admin.close()
    secure_cluster.wait_for(lambda: secure_cluster.partition_state("secured", 1), 30, what="partition states")
    zk = sasl_client(secure_cluster.zookeeper.connect)
    try:
        chroot = secure_cluster.chroot
        assert acl_set(zk, chroot) == {SASL_ALL, WORLD_READ}
        nodes = [p[len(chroot):] for p in walk(zk, chroot) if p != chroot]
        for must in ("/brokers/ids/0", "/brokers/ids/1", "/brokers/topics/secured/partitions/1/state", "/config/topics/secured",
                     "/controller", "/controller_epoch", "/cluster/id", "/config/users", "/config/brokers",
                     "/consumers", "/latest_producer_id_block"):
            assert must in nodes
        for node in nodes:
            acls = acl_set(zk, chroot + node)
            if node == "/consumers":
                assert acls == {WORLD_ALL}, node
            elif node.startswith(("/config/users", "/config/brokers")):
                assert acls == {SASL_ALL}, node
            else:
                assert acls == {SASL_ALL, WORLD_READ}, node
    finally:
        zk.close()


def test_an_unauthenticated_client_reads_but_cannot_write(secure_cluster):
    from kazoo.exceptions import NoAuthError

    anon = secure_cluster.zk()  # a plain kazoo client, no credentials
    data, _ = anon.get("/brokers/topics/secured")
    assert sorted(json.loads(data)["partitions"]) == ["0", "1"]
    with pytest.raises(NoAuthError):
        anon.set("/brokers/topics/secured", b'{"version":3,"partitions":{"0":[9]}}')
    with pytest.raises(NoAuthError):  # the attack of the finding: granting oneself an ACL in ZooKeeper
        anon.create("/kafka-acl/Cluster/kafka-cluster", b'{"version":1,"acls":[]}', makepath=True)
    with pytest.raises(NoAuthError):
        anon.delete("/controller")


def test_scram_through_zookeeper_is_salted_and_logs_in(secure_cluster):
    connect = secure_cluster.zk_connect
    r = kafkapy("configs", "--zookeeper", connect, "--entity-type", "users", "--entity-name", "bob", "--alter",
                "--add-config", "SCRAM-SHA-256=[password=bob-secret]", kafka_opts=secure_cluster.zookeeper.kafka_opts)
    assert (r.returncode, r.stdout, r.stderr) == (0, "Completed updating config for entity: user-principal 'bob'.\n", "")
    zk = sasl_client(secure_cluster.zookeeper.connect)
    try:
        path = secure_cluster.chroot + "/config/users/bob"
        raw, _ = zk.get(path)
        node = json.loads(raw)
        assert list(node) == ["version", "config"] and node["version"] == 1
        value = node["config"]["SCRAM-SHA-256"]
        assert re.fullmatch(r"salt=[A-Za-z0-9+/=]+,stored_key=[A-Za-z0-9+/=]{44},server_key=[A-Za-z0-9+/=]{44},"
                            r"iterations=4096", value), value
        assert b"bob-secret" not in raw
        assert acl_set(zk, path) == {SASL_ALL}
    finally:
        zk.close()
    from kazoo.exceptions import NoAuthError

    with pytest.raises(NoAuthError):
        secure_cluster.zk().get("/config/users/bob")

    confluent_kafka = pytest.importorskip("confluent_kafka")
    broker = secure_cluster.brokers[0]
    conf = {"bootstrap.servers": f"127.0.0.1:{broker.sasl_port}", "security.protocol": "SASL_PLAINTEXT",
            "sasl.mechanism": "SCRAM-SHA-256", "sasl.username": "bob", "sasl.password": "bob-secret"}
    producer = confluent_kafka.Producer({**conf, "message.timeout.ms": 20000})
    delivered: list[Any] = []
    producer.produce("secured", value=b"scram-via-zookeeper", partition=0,
                     on_delivery=lambda err, msg: delivered.append((err, msg.offset() if msg else None)))
    producer.flush(30)
    assert delivered == [(None, 0)]
    denied = confluent_kafka.Producer({**conf, "sasl.password": "wrong", "message.timeout.ms": 5000})
    errors: list[Any] = []
    denied.produce("secured", value=b"x", partition=0, on_delivery=lambda err, msg: errors.append(err))
    denied.flush(15)
    assert errors and errors[0] is not None


def test_security_migration_secure_then_unsecure(sasl_zk):
    from kazoo.client import KazooClient

    chroot = f"/legacy-{uuid.uuid4().hex[:8]}"
    anon = KazooClient(hosts=sasl_zk.connect, timeout=10)
    anon.start(30)
    try:  # a tree written without ACLs (zookeeper.set.acl=false)
        anon.create(chroot + "/brokers/topics/old", b'{"version":3,"partitions":{"0":[0]}}', makepath=True)
        anon.create(chroot + "/config/users/alice", b'{"version":1,"config":{}}', makepath=True)
    finally:
        anon.stop()
        anon.close()
    connect = sasl_zk.connect + chroot

    r = kafkapy("zookeeper-security-migration", "--zookeeper.acl", "secure", "--zookeeper.connect", connect)
    assert r.returncode == 1 and r.stdout == ""
    assert r.stderr.startswith("ERROR: No JAAS configuration file has been specified and no TLS client certificate "
                               "has been specified. Please make sure that you set the system property "
                               "java.security.auth.login.config"), r.stderr

    r = kafkapy("zookeeper-security-migration", "--zookeeper.acl", "secure", "--zookeeper.connect", connect,
                kafka_opts=sasl_zk.kafka_opts)
    missing = ("/admin,/cluster,/controller,/controller_epoch,/isr_change_notification,/latest_producer_id_block,"
               "/log_dir_event_notification,/delegation_token,/kafka-acl-extended,/migration,/feature,/kafka-acl,"
               "/kafka-acl-changes,/kafka-acl-extended/prefixed,/kafka-acl-extended-changes")
    assert (r.returncode, r.stderr) == (0, "")
    assert r.stdout == (f"Warning: The following secure root paths do not exist in ZooKeeper: {missing}\n"
                        "That might be due to an incorrect chroot is specified when executing the command.\n")
    zk = sasl_client(sasl_zk.connect)
    try:
        assert acl_set(zk, chroot) == {SASL_ALL, WORLD_READ}
        assert acl_set(zk, chroot + "/brokers/topics/old") == {SASL_ALL, WORLD_READ}
        assert acl_set(zk, chroot + "/config/users/alice") == {SASL_ALL}
        assert acl_set(zk, chroot + "/admin") == {SASL_ALL, WORLD_READ}  # missing roots are created
        assert zk.exists(chroot + "/controller") is None  # never created by the tool
    finally:
        zk.close()

    r = kafkapy("zookeeper-security-migration", "--zookeeper.acl", "unsecure", "--zookeeper.connect", connect,
                "--output", "json", kafka_opts=sasl_zk.kafka_opts)
    assert (r.returncode, r.stderr) == (0, ""), r.stderr
    doc = json.loads(r.stdout)
    assert doc["acl"] == "unsecure" and doc["missingRootPaths"] == ["/controller"] and not doc["aborted"]
    assert {"/", "/brokers/topics/old", "/config/users/alice", "/kafka-acl-extended/prefixed"} <= set(doc["paths"])
    zk = sasl_client(sasl_zk.connect)
    try:
        for node in walk(zk, chroot):
            assert acl_set(zk, node) == {WORLD_ALL}, node
    finally:
        zk.close()


def test_a_wrong_zookeeper_password_fails_in_one_line(sasl_zk, tmp_path):
    jaas = tmp_path / "wrong_jaas.conf"
    jaas.write_text('Client {\n  org.apache.zookeeper.server.auth.DigestLoginModule required\n'
                    '  username="kafka"\n  password="not-the-secret";\n};\n')
    r = kafkapy("zookeeper-shell", sasl_zk.connect, "ls", "/", kafka_opts=f"-Djava.security.auth.login.config={jaas}")
    assert (r.returncode, r.stderr.splitlines()[-1:]) == (1, ["KeeperErrorCode = AuthFailed for /"]), r.stderr


def test_zookeeper_shell_get_acl(secure_cluster):
    zk_connect = secure_cluster.zk_connect
    r = kafkapy("zookeeper-shell", zk_connect, "getAcl", "/brokers/topics/secured")
    assert r.returncode == 0, r.stderr
    assert r.stdout.splitlines()[-4:] == ["'sasl,'kafka", ": cdrwa", "'world,'anyone", ": r"]
    r = kafkapy("zookeeper-shell", zk_connect, "get", "/config/users/bob")
    assert (r.returncode, r.stderr) == (1, "Insufficient permission : /config/users/bob\n")
    r = kafkapy("zookeeper-shell", zk_connect, "getAcl", "/config/users/bob", kafka_opts=secure_cluster.zookeeper.kafka_opts)
    assert r.stdout.splitlines()[-2:] == ["'sasl,'kafka", ": cdrwa"]


def test_digest_credentials_own_what_they_create(sasl_zk):
    import base64
    import hashlib

    from kafkapy.zk.kafka_zk_client import KafkaZkClient, ZkNoAuthError
    from kafkapy.zk.zk_client_config import ZkClientAuth

    connect = f"{sasl_zk.connect}/digest-{uuid.uuid4().hex[:8]}"
    owner = KafkaZkClient(connect, connection_timeout_ms=20000, secure_acls=True,
                          auth=ZkClientAuth(digest=("alice:alice-pw",)))
    anon = KafkaZkClient(connect, connection_timeout_ms=20000)
    try:
        owner.create("/brokers/topics/d", b'{"version":3}', make_parents=True)
        hashed = base64.b64encode(hashlib.sha1(b"alice:alice-pw").digest()).decode()
        assert {(a.scheme, a.id, a.perms) for a in owner.get_acls("/brokers/topics/d")[0]} == {
            ("digest", f"alice:{hashed}", 31), WORLD_READ}
        assert anon.get("/brokers/topics/d")[0] == b'{"version":3}'
        with pytest.raises(ZkNoAuthError):
            anon.set("/brokers/topics/d", b"{}")
        anon.add_auth("digest", "alice:alice-pw")  # zkCli's addauth: now the same identity
        anon.set("/brokers/topics/d", b"{}")
    finally:
        owner.close()
        anon.close()


def test_configs_zookeeper_without_the_login_cannot_read_credentials(secure_cluster):
    login = secure_cluster.zookeeper.kafka_opts
    user = ("configs", "--zookeeper", secure_cluster.zk_connect, "--entity-type", "users", "--entity-name", "carol")
    r = kafkapy(*user, "--alter", "--add-config", "SCRAM-SHA-512=[iterations=8192,password=c]", kafka_opts=login)
    assert r.returncode == 0, r.stderr
    r = kafkapy(*user, "--describe")
    assert (r.returncode, r.stdout, r.stderr) == (1, "", "Error: Insufficient permission : /config/users/carol\n")
    r = kafkapy(*user, "--describe", kafka_opts=login)
    assert r.returncode == 0 and r.stdout.startswith("Configs for user-principal 'carol' are SCRAM-SHA-512=salt="), r
    assert r.stdout.endswith(",iterations=8192\n")


def test_the_other_broker_takes_over_the_secured_znodes(secure_cluster):
    from kafkapy.client.admin import NewTopic

    admin = secure_cluster.admin()
    try:
        admin.create_topics([NewTopic("moved", 1, 2)])
    finally:
        admin.close()
    secure_cluster.wait_for(lambda: sorted((secure_cluster.partition_state("moved", 0) or {}).get("isr", [])) == [0, 1],
                            30, what="both replicas in the ISR")
    old = secure_cluster.controller_id()
    assert old is not None
    other = 1 - old
    epoch = secure_cluster.zk_json("/controller_epoch")
    assert secure_cluster.brokers[old].stop() == 0  # controlled shutdown: leaders move, then /controller goes
    secure_cluster.wait_for(lambda: secure_cluster.controller_id() == other, 30, what="the other broker elected")
    assert secure_cluster.zk_json("/controller_epoch") == epoch + 1
    state = secure_cluster.wait_for(lambda: (s := secure_cluster.partition_state("moved", 0)) and s["leader"] == other
                                    and s, 30, what="leadership on the other broker")
    assert state["isr"] == [other]
