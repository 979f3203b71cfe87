"""The delegation token operations behind AdminClient's create/renew/expire/describe_delegation_token
(functions over the AdminClient's AdminCalls): CreateDelegationToken v0-3, RenewDelegationToken v0-2,
ExpireDelegationToken v0-2, DescribeDelegationToken v0-3, sent to the least loaded broker as Java's
KafkaAdminClient sends them. A broker error is raised as its KafkaError (e.g.
DelegationTokenRequestNotAllowedError over an unauthenticated connection).
`DelegationToken` mirrors Kafka's (TokenInformation + the HMAC; `hmac_base64` is the SCRAM password).

Thread-safety: as AdminClient (blocking calls, safe from several threads).
"""

from __future__ import annotations

import base64
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from kafkapy.client.admin_calls import AdminCalls
from kafkapy.client.errors import error_from_code
from kafkapy.common.kafka_principal import KafkaPrincipal
from kafkapy.protocol import messages as M

CREATE_DELEGATION_TOKEN = 38
RENEW_DELEGATION_TOKEN = 39
EXPIRE_DELEGATION_TOKEN = 40
DESCRIBE_DELEGATION_TOKEN = 41


@dataclass(frozen=True)
class DelegationToken:
    token_id: str
    hmac: bytes
    owner: KafkaPrincipal
    token_requester: KafkaPrincipal
    renewers: tuple[KafkaPrincipal, ...]
    issue_timestamp: int
    expiry_timestamp: int
    max_timestamp: int

    @property
    def hmac_base64(self) -> str:
        return base64.b64encode(self.hmac).decode()


def _raise(code: int) -> None:
    if code:
        raise error_from_code(code, None)


def create_delegation_token(calls: AdminCalls, renewers: Iterable[KafkaPrincipal] = (), max_lifetime_ms: int = -1,
                            owner: KafkaPrincipal | None = None, timeout_ms: float | None = None
                            ) -> DelegationToken:
    renewer_list = list(renewers)

    def build(version: int) -> Any:
        R = M.CreateDelegationTokenRequest
        return R(owner_principal_type=owner.principal_type if owner else None,
                 owner_principal_name=owner.name if owner else None,
                 renewers=[R.CreatableRenewers(principal_type=r.principal_type, principal_name=r.name)
                           for r in renewer_list], max_lifetime_ms=max_lifetime_ms)

    def handle(resp: M.CreateDelegationTokenResponse) -> DelegationToken:
        _raise(resp.error_code)
        token_owner = KafkaPrincipal(resp.principal_type, resp.principal_name)
        requester = (KafkaPrincipal(resp.token_requester_principal_type, resp.token_requester_principal_name)
                     if resp.token_requester_principal_name else token_owner)
        return DelegationToken(resp.token_id, bytes(resp.hmac), token_owner, requester, tuple(renewer_list),
                               resp.issue_timestamp_ms, resp.expiry_timestamp_ms, resp.max_timestamp_ms)

    return calls.call(None, build, CREATE_DELEGATION_TOKEN, timeout_ms, handle, "createDelegationToken")


def renew_delegation_token(calls: AdminCalls, hmac: bytes, renew_period_ms: int = -1,
                           timeout_ms: float | None = None) -> int:
    def build(version: int) -> Any:
        return M.RenewDelegationTokenRequest(hmac=hmac, renew_period_ms=renew_period_ms)

    def handle(resp: M.RenewDelegationTokenResponse) -> int:
        _raise(resp.error_code)
        return int(resp.expiry_timestamp_ms)

    return calls.call(None, build, RENEW_DELEGATION_TOKEN, timeout_ms, handle, "renewDelegationToken")


def expire_delegation_token(calls: AdminCalls, hmac: bytes, expiry_period_ms: int = -1,
                            timeout_ms: float | None = None) -> int:
    def build(version: int) -> Any:
        return M.ExpireDelegationTokenRequest(hmac=hmac, expiry_time_period_ms=expiry_period_ms)

    def handle(resp: M.ExpireDelegationTokenResponse) -> int:
        _raise(resp.error_code)
        return int(resp.expiry_timestamp_ms)

    return calls.call(None, build, EXPIRE_DELEGATION_TOKEN, timeout_ms, handle, "expireDelegationToken")


def describe_delegation_token(calls: AdminCalls, owners: Iterable[KafkaPrincipal] | None = None,
                              timeout_ms: float | None = None) -> list[DelegationToken]:
    """Tokens of `owners` (None or empty: every token the caller may see, as Java's client sends null)."""
    owner_list = list(owners or [])

    def build(version: int) -> Any:
        R = M.DescribeDelegationTokenRequest
        return R(owners=[R.DescribeDelegationTokenOwner(principal_type=o.principal_type, principal_name=o.name)
                         for o in owner_list] or None)

    def handle(resp: M.DescribeDelegationTokenResponse) -> list[DelegationToken]:
        _raise(resp.error_code)
        out = []
        for t in resp.tokens:
            token_owner = KafkaPrincipal(t.principal_type, t.principal_name)
            requester = (KafkaPrincipal(t.token_requester_principal_type, t.token_requester_principal_name)
                         if t.token_requester_principal_name else token_owner)
            out.append(DelegationToken(t.token_id, bytes(t.hmac), token_owner, requester,
                                       tuple(KafkaPrincipal(r.principal_type, r.principal_name) for r in t.renewers),
                                       t.issue_timestamp, t.expiry_timestamp, t.max_timestamp))
        return out

    return calls.call(None, build, DESCRIBE_DELEGATION_TOKEN, timeout_ms, handle, "describeDelegationToken")
