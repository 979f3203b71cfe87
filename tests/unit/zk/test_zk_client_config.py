"""kafkapy.zk: the JAAS / system-property reading of Kafka's JaasUtils, the secure-ACL start-up check, Kafka's
default ACLs per path (ZkData.defaultAcls) and the SCRAM credential that configs --zookeeper writes."""

from __future__ import annotations

import pytest

from kafkapy.common import scram
from kafkapy.zk import zk_data
from kafkapy.zk.zk_client_config import (
    ZkClientAuth,
    ZkSecurityConfigError,
    parse_jaas_file,
    require_secure_connection,
    system_properties,
    zk_client_auth,
)

JAAS = """/* brokers and tools */
KafkaServer {
  org.apache.kafka.common.security.plain.PlainLoginModule required
  username="admin" password="admin-secret";
};
// ZooKeeper login
Client {
  org.apache.zookeeper.server.auth.DigestLoginModule required
  username="kafka"
  password="kafka;secret";
};
"""


def test_system_properties_from_kafka_opts() -> None:
    env = {"KAFKA_OPTS": "-Xmx1g -Djava.security.auth.login.config='/etc/kafka/zk jaas.conf' "
                         "-Dzookeeper.sasl.client=true -verbose"}
    assert system_properties(env) == {"java.security.auth.login.config": "/etc/kafka/zk jaas.conf",
                                      "zookeeper.sasl.client": "true"}
    assert system_properties({}) == {}


def test_jaas_file_sections() -> None:
    sections = parse_jaas_file(JAAS)
    assert list(sections) == ["KafkaServer", "Client"]
    client = sections["Client"][0]
    assert client.login_module == "org.apache.zookeeper.server.auth.DigestLoginModule"
    assert client.control_flag == "required"
    assert client.options == {"username": "kafka", "password": "kafka;secret"}
    with pytest.raises(ZkSecurityConfigError):
        parse_jaas_file("Client { org.apache.zookeeper.server.auth.DigestLoginModule required username=\"x\";")


def test_client_auth_as_jaas_utils_reads_it(tmp_path) -> None:
    path = tmp_path / "jaas.conf"
    path.write_text(JAAS)
    props = {"java.security.auth.login.config": str(path)}
    assert zk_client_auth(props) == ZkClientAuth("DIGEST-MD5", "kafka", "kafka;secret")
    # another section name through zookeeper.sasl.clientconfig: KafkaServer holds a (PLAIN-style) digest login
    assert zk_client_auth(props | {"zookeeper.sasl.clientconfig": "KafkaServer"}).sasl_username == "admin"
    assert zk_client_auth(props | {"zookeeper.sasl.clientconfig": "Missing"}) == ZkClientAuth()
    assert zk_client_auth({}) == ZkClientAuth()
    with pytest.raises(ZkSecurityConfigError) as e:  # a login present but SASL switched off: Kafka refuses
        zk_client_auth(props | {"zookeeper.sasl.client": "false"})
    assert str(e.value) == (f"Exception while determining if ZooKeeper is secure [java.security.auth.login.config="
                            f"{path}, zookeeper.sasl.client=false, zookeeper.sasl.clientconfig=default:Client]")
    kerberos = tmp_path / "krb.conf"
    kerberos.write_text("Client { com.sun.security.auth.module.Krb5LoginModule required useKeyTab=true; };")
    with pytest.raises(ZkSecurityConfigError, match="Krb5LoginModule is not supported"):
        zk_client_auth({"java.security.auth.login.config": str(kerberos)})


def test_set_acl_needs_an_authenticated_session() -> None:
    require_secure_connection(False, ZkClientAuth(), {})
    require_secure_connection(True, ZkClientAuth("DIGEST-MD5", "kafka", "pw"), {})
    with pytest.raises(ZkSecurityConfigError) as e:
        require_secure_connection(True, ZkClientAuth(), {})
    assert str(e.value) == (
        "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least "
        "zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not present "
        "and the verification of the JAAS login file failed [java.security.auth.login.config=null, "
        "zookeeper.sasl.client=default:true, zookeeper.sasl.clientconfig=default:Client]")


def test_default_acls_per_path() -> None:
    creator_all = zk_data.ZkAcl(31, "auth", "")
    world_read = zk_data.ZkAcl(1, "world", "anyone")
    world_all = zk_data.ZkAcl(31, "world", "anyone")
    assert zk_data.default_acls(False, "/config/users/bob") == (world_all,)
    assert zk_data.default_acls(True, "/brokers/topics/t") == (creator_all, world_read)
    assert zk_data.default_acls(True, "/consumers") == (world_all,)
    assert zk_data.default_acls(True, "/consumers/g") == (creator_all, world_read)
    for sensitive in ("/config/users", "/config/users/bob", "/config/brokers/0", "/delegation_token/tokens/x"):
        assert zk_data.default_acls(True, sensitive) == (creator_all,), sensitive
    assert zk_data.default_acls(True, "/delegation_token") == (creator_all, world_read)


def test_scram_credential_of_configs_zookeeper() -> None:
    from kafkapy.tools.zk_configs import scram_credential

    text = scram_credential("SCRAM-SHA-256", "iterations=8192,password=bob-secret")
    cred = scram.ScramCredential.from_config_string(text)
    assert cred.iterations == 8192 and "bob-secret" not in text
    assert cred == scram.ScramCredential.from_password("sha256", "bob-secret", cred.salt, 8192)
    assert scram.ScramCredential.from_config_string(scram_credential("SCRAM-SHA-512", "password=x")).iterations == 4096
    from kafkapy.tools import ToolFailure

    with pytest.raises(ToolFailure, match="Iterations 100 is less than the minimum 4096 required for SCRAM-SHA-256"):
        scram_credential("SCRAM-SHA-256", "iterations=100,password=x")
    with pytest.raises(ToolFailure, match="Invalid credential property SCRAM-SHA-256=secret"):
        scram_credential("SCRAM-SHA-256", "secret")
