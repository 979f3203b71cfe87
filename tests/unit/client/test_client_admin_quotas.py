"""AdminClient client quotas and SCRAM credentials over a scripted fake broker: the bytes of what is sent
(components, entities, ops, Kafka's salt format and salted password) and the per-entity / per-user results."""

from __future__ import annotations

import hashlib
import re
from typing import Any

import pytest
from client_fake_broker import api_versions_response, metadata_response

from kafkapy.client.admin import (
    AdminClient,
    ClientQuotaAlteration,
    ClientQuotaEntity,
    ClientQuotaFilterComponent,
    ScramCredentialInfo,
    ScramMechanism,
    UserScramCredentialDeletion,
    UserScramCredentialsDescription,
    UserScramCredentialUpsertion,
)
from kafkapy.client.admin_quotas import random_salt, salted_password
from kafkapy.client.connection import our_version_range
from kafkapy.common.errors import (
    ErrorCode,
    InvalidRequestError,
    ResourceNotFoundError,
    UnacceptableCredentialError,
    UnsupportedSaslMechanismError,
)
from kafkapy.protocol import messages as M

TABLE = {k: our_version_range(k) for k in (3, 18, 48, 49, 50, 51)}


@pytest.fixture
def admin_for(fake_broker):
    admins: list[AdminClient] = []

    def start(answer: Any) -> tuple[AdminClient, Any]:
        port: list[int] = []

        def handle(header: Any, body: Any) -> Any:
            if header.api_key == 18:
                return api_versions_response(TABLE)
            if header.api_key == 3:
                return metadata_response(port[0])
            return answer(header, body)

        broker = fake_broker(handle)
        port.append(broker.port)
        admin = AdminClient({"bootstrap.servers": f"127.0.0.1:{broker.port}"})
        admins.append(admin)
        return admin, broker

    yield start
    for a in admins:
        a.close()


def bodies(broker: Any, api_key: int) -> list[Any]:
    return [b for k, _v, b in broker.requests if k == api_key]


def test_describe_client_quotas(admin_for) -> None:
    R = M.DescribeClientQuotasResponse

    def answer(header: Any, body: Any) -> Any:
        return R(error_code=0, error_message=None, entries=[
            R.EntryData(entity=[R.EntityData(entity_type="client-id", entity_name="c1"),
                                R.EntityData(entity_type="user", entity_name=None)],
                        values=[R.ValueData(key="producer_byte_rate", value=1024.0)]),
            R.EntryData(entity=[R.EntityData(entity_type="user", entity_name="alice")],
                        values=[R.ValueData(key="request_percentage", value=50.0)])])

    admin, broker = admin_for(answer)
    found = admin.describe_client_quotas([ClientQuotaFilterComponent.of_default_entity("user"),
                                          ClientQuotaFilterComponent.of_entity("client-id", "c1"),
                                          ClientQuotaFilterComponent.of_entity_type("ip")], strict=True)
    default_user_c1 = ClientQuotaEntity.of({"user": None, "client-id": "c1"})
    assert found == {default_user_c1: {"producer_byte_rate": 1024.0},
                     ClientQuotaEntity.of({"user": "alice"}): {"request_percentage": 50.0}}
    assert default_user_c1.entries == (("user", None), ("client-id", "c1"))  # one order whatever the map's
    [req] = bodies(broker, 48)
    assert [(c.entity_type, c.match_type, c.match) for c in req.components] == [
        ("user", 1, None), ("client-id", 0, "c1"), ("ip", 2, None)]
    assert req.strict is True


def test_describe_client_quotas_raises_the_response_error(admin_for) -> None:
    R = M.DescribeClientQuotasResponse
    admin, _ = admin_for(lambda h, b: R(error_code=ErrorCode.INVALID_REQUEST, error_message="bad filter",
                                        entries=None))
    with pytest.raises(InvalidRequestError, match="bad filter"):
        admin.describe_client_quotas([ClientQuotaFilterComponent.of_entity_type("nope")])


def test_alter_client_quotas_per_entity(admin_for) -> None:
    R = M.AlterClientQuotasResponse

    def answer(header: Any, body: Any) -> Any:
        return R(entries=[R.EntryData(error_code=0 if e.entity[0].entity_name != "bad" else ErrorCode.INVALID_REQUEST,
                                      error_message=None, entity=[R.EntityData(entity_type=x.entity_type,
                                                                               entity_name=x.entity_name)
                                                                  for x in e.entity]) for e in body.entries])

    admin, broker = admin_for(answer)
    good = ClientQuotaEntity.of({"client-id": "c1", "user": "bob"})
    bad = ClientQuotaEntity.of({"user": "bad"})
    out = admin.alter_client_quotas([ClientQuotaAlteration(good, {"consumer_byte_rate": 2048, "producer_byte_rate": None}),
                                     ClientQuotaAlteration(bad, {"request_percentage": 1.5})],
                                    validate_only=True, raise_errors=False)
    assert out[good] is None and isinstance(out[bad], InvalidRequestError)
    [req] = bodies(broker, 49)
    assert req.validate_only is True
    first = req.entries[0]
    assert [(e.entity_type, e.entity_name) for e in first.entity] == [("user", "bob"), ("client-id", "c1")]
    assert [(o.key, o.value, o.remove) for o in first.ops] == [("consumer_byte_rate", 2048.0, False),
                                                               ("producer_byte_rate", 0.0, True)]
    with pytest.raises(InvalidRequestError):
        admin.alter_client_quotas([ClientQuotaAlteration(bad, {"request_percentage": 1.5})])


def test_describe_user_scram_credentials(admin_for) -> None:
    S = M.DescribeUserScramCredentialsResponse

    def answer(header: Any, body: Any) -> Any:
        return S(error_code=0, error_message=None, results=[
            S.DescribeUserScramCredentialsResult(user="alice", error_code=0, error_message=None, credential_infos=[
                S.CredentialInfo(mechanism=1, iterations=4096), S.CredentialInfo(mechanism=2, iterations=8192)]),
            S.DescribeUserScramCredentialsResult(user="bob", error_code=ErrorCode.RESOURCE_NOT_FOUND,
                                                 error_message="Attempt to describe a user credential that does "
                                                 "not exist: bob", credential_infos=[])])

    admin, broker = admin_for(answer)
    out = admin.describe_user_scram_credentials(["alice", "bob"], raise_errors=False)
    assert out["alice"] == UserScramCredentialsDescription("alice", [
        ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192)])
    assert out["alice"].credential_infos[1].mechanism.mechanism_name == "SCRAM-SHA-512"
    assert isinstance(out["bob"], ResourceNotFoundError)
    with pytest.raises(ResourceNotFoundError, match="does not exist: bob"):
        admin.describe_user_scram_credentials(["alice", "bob"])
    admin.describe_user_scram_credentials(raise_errors=False)
    assert [None if b.users is None else [u.name for u in b.users] for b in bodies(broker, 50)] == [
        ["alice", "bob"], ["alice", "bob"], None]


def test_alter_user_scram_credentials_salts_as_kafka_and_refuses_bad_alterations(admin_for) -> None:
    R = M.AlterUserScramCredentialsResponse

    def answer(header: Any, body: Any) -> Any:
        users = dict.fromkeys([d.name for d in body.deletions] + [u.name for u in body.upsertions])
        return R(results=[R.AlterUserScramCredentialsResult(user=u, error_code=0, error_message=None) for u in users])

    admin, broker = admin_for(answer)
    out = admin.alter_user_scram_credentials([
        UserScramCredentialDeletion("alice", ScramMechanism.SCRAM_SHA_256),
        UserScramCredentialUpsertion("alice", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_512, 8192), "s3cret"),
        UserScramCredentialUpsertion("carol", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), b"pw",
                                     salt=b"fixed-salt"),
        UserScramCredentialDeletion("dave", ScramMechanism.UNKNOWN),
        UserScramCredentialUpsertion("erin", ScramCredentialInfo(ScramMechanism.SCRAM_SHA_256, 4096), ""),
    ], raise_errors=False)
    assert out["alice"] is None and out["carol"] is None
    assert isinstance(out["dave"], UnsupportedSaslMechanismError) and str(out["dave"]) == "Unknown SCRAM mechanism"
    assert isinstance(out["erin"], UnacceptableCredentialError) and str(out["erin"]) == "Password must not be empty"
    [req] = bodies(broker, 51)
    assert [(d.name, d.mechanism) for d in req.deletions] == [("alice", 1)]
    alice, carol = req.upsertions
    assert (alice.name, alice.mechanism, alice.iterations) == ("alice", 2, 8192)
    assert re.fullmatch(rb"[0-9a-z]{1,26}", alice.salt)  # 130 random bits in base 36
    assert alice.salted_password == hashlib.pbkdf2_hmac("sha512", b"s3cret", alice.salt, 8192)
    assert (carol.salt, carol.salted_password) == (b"fixed-salt", hashlib.pbkdf2_hmac("sha256", b"pw", b"fixed-salt",
                                                                                     4096))
    with pytest.raises(UnacceptableCredentialError, match="Username must not be empty"):
        admin.alter_user_scram_credentials([UserScramCredentialDeletion("", ScramMechanism.SCRAM_SHA_256)])
    assert len(bodies(broker, 51)) == 1  # nothing left to send


def test_scram_helpers() -> None:
    assert ScramMechanism.from_mechanism_name("SCRAM-SHA-256") is ScramMechanism.SCRAM_SHA_256
    assert ScramMechanism.from_mechanism_name("SCRAM-SHA-1") is ScramMechanism.UNKNOWN
    assert salted_password(ScramMechanism.SCRAM_SHA_256, "pencil", b"salt", 4096) == hashlib.pbkdf2_hmac(
        "sha256", b"pencil", b"salt", 4096)
    assert len({random_salt() for _ in range(20)}) == 20
