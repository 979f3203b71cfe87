"""inter.broker.listener.name on a SASL_SSL listener: two ZooKeeper-mode brokers replicate, elect and report
ISR changes over TLS + SASL/PLAIN (the replica fetcher, the controller's channel and AlterPartition all log in
as User:admin), while clients use a PLAINTEXT listener."""

from __future__ import annotations

import importlib.util
import sys
import time
from pathlib import Path

import pytest

_CERTS = Path(__file__).resolve().parents[1] / "interop" / "security" / "security_certs.py"
_spec = importlib.util.spec_from_file_location("kafkapy_cluster_security_certs", _CERTS)
assert _spec is not None and _spec.loader is not None
security_certs = importlib.util.module_from_spec(_spec)
sys.modules[_spec.name] = security_certs
_spec.loader.exec_module(security_certs)


def free_port() -> int:
    import socket

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]

pytestmark = pytest.mark.timeout(240)

JAAS = ('org.apache.kafka.common.security.plain.PlainLoginModule required username="admin" password="admin-secret" '
        'user_admin="admin-secret";')


@pytest.fixture(scope="module")
def secure_cluster(zookeeper, tmp_path_factory, request):
    # This directory's conftest (its Cluster class), without importing a module named "conftest".
    Cluster = request.config.pluginmanager.get_plugin(str(Path(__file__).with_name("conftest.py"))).Cluster
    base = tmp_path_factory.mktemp("secure-cluster")
    pki = security_certs.generate(base / "pki")
    cluster = Cluster(zookeeper, str(base))
    try:
        for broker_id in (0, 1):
            broker = cluster.add_broker(broker_id, start=False)
            broker.overrides.update({
                "listeners": f"PLAINTEXT://127.0.0.1:{broker.port},INTERNAL://127.0.0.1:{free_port()}",
                "listener.security.protocol.map": "PLAINTEXT:PLAINTEXT,INTERNAL:SASL_SSL",
                "inter.broker.listener.name": "INTERNAL",
                "sasl.mechanism.inter.broker.protocol": "PLAIN",
                "listener.name.internal.sasl.enabled.mechanisms": "PLAIN",
                "listener.name.internal.plain.sasl.jaas.config": JAAS,
                "ssl.keystore.location": str(pki.broker),
                "ssl.truststore.location": str(pki.ca),
            })
        cluster.start_all()
        yield cluster
    finally:
        cluster.stop_all()


def test_replication_over_a_sasl_ssl_inter_broker_listener(secure_cluster):
    from kafkapy.client.admin import AdminClient, NewTopic
    from kafkapy.client.producer import KafkaProducer

    admin = AdminClient({"bootstrap.servers": secure_cluster.bootstrap})
    try:
        admin.create_topics([NewTopic("replicated", 1, 2)])
        secure_cluster.wait_for(lambda: sorted(secure_cluster.describe("replicated").get(0, (None, [], []))[2])
                                == [0, 1], 30, what="ISR of both brokers")
    finally:
        admin.close()
    producer = KafkaProducer({"bootstrap.servers": secure_cluster.bootstrap, "acks": "all"})
    try:
        futures = [producer.send("replicated", value=b"r-%d" % i) for i in range(20)]
        producer.flush(30)
        assert [f.result(30).offset for f in futures] == list(range(20))  # acks=all: the follower fetched them
    finally:
        producer.close()
    time.sleep(0.1)
    assert sorted(secure_cluster.describe("replicated")[0][2]) == [0, 1]
