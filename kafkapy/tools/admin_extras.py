"""Admin operations kafka-configs needs that kafkapy.client.admin.AdminClient does not offer (yet):
client quotas (DescribeClientQuotas / AlterClientQuotas), SCRAM credentials
(DescribeUserScramCredentials / AlterUserScramCredentials) and group listing (ListGroups).

Each function takes an AdminClient and sends one request through its NetworkClient to the least
loaded broker (as Java's KafkaAdminClient does for these APIs), retrying retriable errors within
default.api.timeout.ms. Kept separate so the client engineer can fold them into AdminClient later.
SCRAM upsertions are salted client side: SaltedPassword = PBKDF2-HMAC(password, salt, iterations)
(RFC 5802's Hi()), as Kafka's ScramFormatter does.

Thread-safety: as the AdminClient's (one blocking request at a time per call).
"""

from __future__ import annotations

import hashlib
import os
from collections.abc import Mapping, Sequence
from dataclasses import dataclass
from typing import Any

# ClientQuotaEntity types and ClientQuotaFilterComponent match types (wire values).
USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_ANY = 2

SCRAM_MECHANISMS = {"SCRAM-SHA-256": (1, "sha256", 4096), "SCRAM-SHA-512": (2, "sha512", 4096)}
SCRAM_NAMES = {v[0]: k for k, v in SCRAM_MECHANISMS.items()}


@dataclass(frozen=True)
class QuotaComponent:
    entity_type: str  # USER / CLIENT_ID / IP
    match_type: int  # MATCH_EXACT / MATCH_DEFAULT / MATCH_ANY
    match: str | None = None


@dataclass(frozen=True)
class ScramCredentialInfo:
    mechanism: str
    iterations: int


def _call(admin: Any, api_key: int, build: Any, handle: Any, what: str) -> Any:
    timeout = admin.default_api_timeout_ms
    client = admin.client

    def attempt() -> Any:
        node = client.least_loaded_node()
        return handle(client.request(node, build, timeout, api_key=api_key))

    return client.with_retries(attempt, timeout, what)


def _raise(code: int, message: str | None) -> None:
    if code:
        from kafkapy.client.errors import error_from_code

        raise error_from_code(code, message)


def describe_client_quotas(
    admin: Any, components: Sequence[QuotaComponent], strict: bool = True
) -> list[tuple[dict[str, str | None], dict[str, float]]]:
    """[(entity {type: name or None for the default}, {quota key: value})] in the broker's order."""
    from kafkapy.protocol import messages as M

    def build(version: int) -> Any:
        R = M.DescribeClientQuotasRequest
        return R(components=[R.ComponentData(entity_type=c.entity_type, match_type=c.match_type, match=c.match)
                             for c in components], strict=strict)

    def handle(resp: Any) -> list[tuple[dict[str, str | None], dict[str, float]]]:
        _raise(resp.error_code, resp.error_message)
        return [({e.entity_type: e.entity_name for e in entry.entity}, {v.key: v.value for v in entry.values})
                for entry in resp.entries or []]

    return _call(admin, 48, build, handle, "describeClientQuotas")


def alter_client_quotas(
    admin: Any, entity: Mapping[str, str | None], ops: Mapping[str, float | None], validate_only: bool = False
) -> None:
    """Set (value) or remove (None) quota keys of one entity."""
    from kafkapy.protocol import messages as M

    def build(version: int) -> Any:
        R = M.AlterClientQuotasRequest
        return R(entries=[R.EntryData(
            entity=[R.EntityData(entity_type=t, entity_name=n) for t, n in entity.items()],
            ops=[R.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None) for k, v in ops.items()],
        )], validate_only=validate_only)

    def handle(resp: Any) -> None:
        for entry in resp.entries:
            _raise(entry.error_code, entry.error_message)

    _call(admin, 49, build, handle, "alterClientQuotas")


def list_groups(admin: Any) -> list[str]:
    """Group ids the broker we ask knows (Kafka asks every broker; one broker suffices for a single
    coordinator and for any cluster that answers ListGroups from a shared state)."""
    from kafkapy.protocol import messages as M

    def build(version: int) -> Any:
        return M.ListGroupsRequest()

    def handle(resp: Any) -> list[str]:
        _raise(resp.error_code, None)
        return [g.group_id for g in resp.groups]

    groups: set[str] = set()
    cluster = admin.client.update_metadata([], admin.default_api_timeout_ms)
    for node in sorted(cluster.brokers) or [admin.client.least_loaded_node()]:
        resp = admin.client.request(node, build, admin.default_api_timeout_ms, api_key=16)
        groups.update(handle(resp))
    return sorted(groups)


def describe_user_scram_credentials(
    admin: Any, users: Sequence[str] | None = None
) -> dict[str, list[ScramCredentialInfo] | Exception]:
    from kafkapy.protocol import messages as M

    def build(version: int) -> Any:
        R = M.DescribeUserScramCredentialsRequest
        return R(users=None if not users else [R.UserName(name=u) for u in users])

    def handle(resp: Any) -> dict[str, list[ScramCredentialInfo] | Exception]:
        _raise(resp.error_code, resp.error_message)
        out: dict[str, list[ScramCredentialInfo] | Exception] = {}
        for r in resp.results:
            if r.error_code:
                from kafkapy.client.errors import error_from_code

                out[r.user] = error_from_code(r.error_code, r.error_message)
            else:
                out[r.user] = [ScramCredentialInfo(SCRAM_NAMES.get(c.mechanism, "UNKNOWN"), c.iterations)
                               for c in r.credential_infos]
        return out

    return _call(admin, 50, build, handle, "describeUserScramCredentials")


def salted_password(mechanism: str, password: bytes, salt: bytes, iterations: int) -> bytes:
    _, digest, _ = SCRAM_MECHANISMS[mechanism]
    return hashlib.pbkdf2_hmac(digest, password, salt, iterations)


def alter_user_scram_credentials(
    admin: Any, user: str, upsertions: Mapping[str, tuple[int, bytes]], deletions: Sequence[str]
) -> None:
    """upsertions: {mechanism: (iterations, password bytes)}; deletions: mechanism names."""
    from kafkapy.protocol import messages as M

    salted = {}
    for mech, (iterations, password) in upsertions.items():
        salt = os.urandom(32)
        salted[mech] = (iterations, salt, salted_password(mech, password, salt, iterations))

    def build(version: int) -> Any:
        R = M.AlterUserScramCredentialsRequest
        return R(
            deletions=[R.ScramCredentialDeletion(name=user, mechanism=SCRAM_MECHANISMS[m][0]) for m in deletions],
            upsertions=[R.ScramCredentialUpsertion(name=user, mechanism=SCRAM_MECHANISMS[m][0], iterations=i,
                                                   salt=s, salted_password=p) for m, (i, s, p) in salted.items()],
        )

    def handle(resp: Any) -> None:
        for r in resp.results:
            _raise(r.error_code, r.error_message)

    _call(admin, 51, build, handle, "alterUserScramCredentials")
