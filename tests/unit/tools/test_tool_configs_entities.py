"""kafka-configs' users/clients/ips paths through an AdminClient over a fake network client: the requests
sent (quotas, SCRAM) and Kafka's text for what comes back."""

from __future__ import annotations

import hashlib

import pytest

from kafkapy.cli import configs as cli_configs
from kafkapy.client.admin import AdminClient
from kafkapy.protocol import messages as M
from kafkapy.tools import configs


class FakeClient:
    def __init__(self, responses):
        self.responses = responses
        self.sent = []

    def least_loaded_node(self):
        return 0

    def node_address(self, node):
        return ("127.0.0.1", 9092)

    def request(self, node, build, timeout, api_key, max_version=None, min_version=None):
        req = build(1 if api_key in (48, 49) else 0)
        self.sent.append((api_key, req))
        return self.responses[api_key](req)

    def with_retries(self, call, timeout, what):
        return call()

    def close(self):
        pass


def FakeAdmin(responses):
    admin = AdminClient({"bootstrap.servers": "127.0.0.1:9"})
    admin.client = FakeClient(responses)
    return admin


def quotas_response(entries):
    R = M.DescribeClientQuotasResponse
    return lambda req: R(error_code=0, entries=[
        R.EntryData(entity=[R.EntityData(entity_type=t, entity_name=n) for t, n in entity],
                    values=[R.ValueData(key=k, value=v) for k, v in values])
        for entity, values in entries])


def test_describe_user_quotas_and_scram():
    S = M.DescribeUserScramCredentialsResponse
    admin = FakeAdmin({
        48: quotas_response([([("user", "alice")], [("producer_byte_rate", 1024.0), ("consumer_byte_rate", 2e7)])]),
        50: lambda req: S(results=[S.DescribeUserScramCredentialsResult(
            user="alice", credential_infos=[S.CredentialInfo(mechanism=1, iterations=4096)])]),
    })
    results = configs.describe(admin, ["users"], ["alice"])
    assert cli_configs.describe_lines(results) == [
        "Quota configs for user-principal 'alice' are producer_byte_rate=1024.0, consumer_byte_rate=2.0E7",
        "SCRAM credential configs for user-principal 'alice' are SCRAM-SHA-256=iterations=4096",
    ]
    (_, quota_req), (_, scram_req) = admin.client.sent
    assert [(c.entity_type, c.match_type, c.match) for c in quota_req.components] == [("user", 0, "alice")]
    assert quota_req.strict is True
    assert [u.name for u in scram_req.users] == ["alice"]


def test_describe_default_client_quota_has_no_scram():
    admin = FakeAdmin({48: quotas_response([([("client-id", None)], [("request_percentage", 50.0)])])})
    assert cli_configs.describe_lines(configs.describe(admin, ["clients"], [""])) == [
        "Quota configs for the default client-id are request_percentage=50.0"]
    assert [(c.entity_type, c.match_type) for c in admin.client.sent[0][1].components] == [("client-id", 1)]


def test_alter_user_and_client_quotas():
    R = M.AlterClientQuotasResponse
    admin = FakeAdmin({
        48: quotas_response([([("user", "bob"), ("client-id", "c1")], [("producer_byte_rate", 10.0)])]),
        49: lambda req: R(entries=[R.EntryData(error_code=0)]),
    })
    line = configs.alter(admin, ["users", "clients"], ["bob", "c1"], {"consumer_byte_rate": "2048"},
                         ["producer_byte_rate"])
    assert line == "Completed updating config for user bob."
    alter = admin.client.sent[-1][1]
    [entry] = alter.entries
    assert [(e.entity_type, e.entity_name) for e in entry.entity] == [("user", "bob"), ("client-id", "c1")]
    assert [(o.key, o.value, o.remove) for o in entry.ops] == [("consumer_byte_rate", 2048.0, False),
                                                               ("producer_byte_rate", 0.0, True)]
    with pytest.raises(configs.ConfigArgumentError, match="Invalid config\\(s\\): request_percentage"):
        configs.alter(admin, ["users"], ["bob"], {}, ["request_percentage"])
    with pytest.raises(configs.ConfigArgumentError, match="Cannot parse quota configuration value for "
                       "producer_byte_rate: fast"):
        configs.alter(admin, ["clients"], ["c1"], {"producer_byte_rate": "fast"}, [])
    with pytest.raises(configs.ConfigArgumentError, match="Only quota configs can be added for 'clients'"):
        configs.alter(admin, ["clients"], ["c1"], {"retention.ms": "1"}, [])


def test_alter_scram_credentials_salts_the_password():
    R = M.AlterUserScramCredentialsResponse
    admin = FakeAdmin({51: lambda req: R(results=[R.AlterUserScramCredentialsResult(user="alice")])})
    line = configs.alter(admin, ["users"], ["alice"], {"SCRAM-SHA-512": "iterations=8192,password=s3cret"},
                         ["SCRAM-SHA-256"])
    assert line == "Completed updating config for user alice."
    req = admin.client.sent[-1][1]
    assert [(d.name, d.mechanism) for d in req.deletions] == [("alice", 1)]
    [up] = req.upsertions
    assert (up.name, up.mechanism, up.iterations) == ("alice", 2, 8192)
    assert up.salted_password == hashlib.pbkdf2_hmac("sha512", b"s3cret", up.salt, 8192)
    with pytest.raises(configs.ConfigArgumentError, match="Iterations 100 is less than the minimum 4096"):
        configs.alter(admin, ["users"], ["alice"], {"SCRAM-SHA-256": "iterations=100,password=x"}, [])
    with pytest.raises(configs.ConfigArgumentError, match="Cannot alter both quota and SCRAM"):
        configs.alter(admin, ["users"], ["alice"], {"SCRAM-SHA-256": "password=x", "producer_byte_rate": "1"}, [])


def test_ip_quotas_only_accept_connection_rates():
    with pytest.raises(configs.ConfigArgumentError, match="Only connection quota configs can be added for 'ips'"):
        configs.alter(FakeAdmin({}), ["ips"], ["1.2.3.4"], {"producer_byte_rate": "1"}, [])
