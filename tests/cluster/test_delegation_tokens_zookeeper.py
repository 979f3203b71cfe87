"""Delegation tokens in ZooKeeper mode: two brokers sharing `delegation.token.secret.key`; a token created through
broker 0 is stored at /delegation_token/tokens/<id> as Kafka's version-3 JSON, logs in (SCRAM tokenauth, kafkapy's
client) on broker 1 as its owner, is described and expired through broker 1, and its znode goes; each change leaves Kafka's
/delegation_token/token_changes/token_change_<seq> notification."""

from __future__ import annotations

import socket
import time
from pathlib import Path

import pytest

pytestmark = pytest.mark.timeout(240)

SECRET = "cluster-token-secret"
JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required user_alice="alice-secret" '
        'user_bob="bob-secret";')


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


@pytest.fixture(scope="module")
def token_cluster(zookeeper, tmp_path_factory, request):
    Cluster = request.config.pluginmanager.get_plugin(str(Path(__file__).with_name("conftest.py"))).Cluster
    cluster = Cluster(zookeeper, str(tmp_path_factory.mktemp("token-cluster")))
    sasl_ports = {}
    try:
        for broker_id in (0, 1):
            broker = cluster.add_broker(broker_id, start=False)
            sasl_ports[broker_id] = free_port()
            broker.overrides.update({
                "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},SASL_PLAINTEXT://127.0.0.1:{sasl_ports[broker_id]}",
                "inter.broker.listener.name": "PLAINTEXT",
                "sasl.enabled.mechanisms": "PLAIN,SCRAM-SHA-256",
                "listener.name.sasl_plaintext.plain.sasl.jaas.config": JAAS,
                "delegation.token.secret.key": SECRET,
            })
        cluster.start_all()
        yield cluster, sasl_ports
    finally:
        cluster.stop_all()


def admin(port: int, **conf: str):
    from kafkapy.client.admin import AdminClient

    return AdminClient({"bootstrap.servers": f"127.0.0.1:{port}", "security.protocol": "SASL_PLAINTEXT", **conf})


def test_token_created_on_one_broker_works_on_the_other(token_cluster):
    from kafkapy.common.kafka_principal import KafkaPrincipal

    cluster, ports = token_cluster
    alice = {"sasl.mechanism": "PLAIN", "sasl.username": "alice", "sasl.password": "alice-secret"}
    on_0 = admin(ports[0], **alice)
    try:
        token = on_0.create_delegation_token([KafkaPrincipal.user("bob")])
    finally:
        on_0.close()
    stored = cluster.zk_json(f"/delegation_token/tokens/{token.token_id}")
    assert {k: stored[k] for k in ("version", "owner", "tokenRequester", "renewers", "tokenId")} == {
        "version": 3, "owner": "User%3Aalice", "tokenRequester": "User%3Aalice", "renewers": ["User%3Abob"],
        "tokenId": token.token_id}
    jaas = (f'org.apache.kafka.common.security.scram.ScramLoginModule required username="{token.token_id}" '
            f'password="{token.hmac_base64}" tokenauth="true";')
    by_token = admin(ports[1], **{"sasl.mechanism": "SCRAM-SHA-256", "sasl.jaas.config": jaas})
    try:
        assert by_token.list_topics() is not None
    finally:
        by_token.close()
    on_1 = admin(ports[1], **alice)
    try:
        assert [t.token_id for t in on_1.describe_delegation_token()] == [token.token_id]
        assert on_1.expire_delegation_token(token.hmac, -1) <= int(time.time() * 1000)
        assert on_1.describe_delegation_token() == []
    finally:
        on_1.close()
    assert cluster.zk_json(f"/delegation_token/tokens/{token.token_id}") is None
    # Kafka's change notifications (what Java brokers sharing the ZooKeeper reload their token cache from):
    # one for the creation, one for the removal, each carrying the token id.
    changes = sorted(cluster.zk().get_children("/delegation_token/token_changes"))
    assert len(changes) == 2 and all(c.startswith("token_change_") and len(c) == 23 for c in changes)
    assert {cluster.zk().get(f"/delegation_token/token_changes/{c}")[0] for c in changes} == {token.token_id.encode()}
