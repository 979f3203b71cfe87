"""The client quota and user SCRAM credential operations behind AdminClient's methods of the same names
(functions over the AdminClient's AdminCalls): the `users` / `clients` / `ips` entities of kafka-configs.

`describe_client_quotas(components, strict)` (DescribeClientQuotas v0-1), `alter_client_quotas(
alterations, validate_only)` (AlterClientQuotas v0-1), `describe_user_scram_credentials(users)`
(DescribeUserScramCredentials v0) and `alter_user_scram_credentials(alterations)`
(AlterUserScramCredentials v0) go to the least loaded broker, as Java's KafkaAdminClient sends them.
Quota entities are maps {entity type: name, None = the default entity}; the types are Kafka's
(ClientQuotaEntity, ClientQuotaFilterComponent, ClientQuotaAlteration, ScramMechanism,
ScramCredentialInfo, UserScramCredentialsDescription, UserScramCredentialUpsertion/Deletion) as
NamedTuples (cheap to define: this module loads with every AdminClient).
SCRAM upsertions are salted client side as Kafka's ScramFormatter does: the salt is the base-36 text of
130 random bits, SaltedPassword = Hi(password, salt, iterations) = PBKDF2-HMAC-SHA-256/512 (RFC 5802).
Alterations Java refuses before sending (empty user name or password, unknown mechanism) fail that
user only, with UnacceptableCredentialError / UnsupportedSaslMechanismError.

Thread-safety: as AdminClient (blocking calls, safe from several threads).
"""

from __future__ import annotations

import enum
from collections.abc import Iterable, Mapping
from typing import Any, NamedTuple

from kafkapy.client.admin_calls import AdminCalls, error_or_none
from kafkapy.client.errors import error_from_code
from kafkapy.common.errors import KafkaError, UnacceptableCredentialError, UnsupportedSaslMechanismError
from kafkapy.protocol import messages as M

DESCRIBE_CLIENT_QUOTAS = 48
ALTER_CLIENT_QUOTAS = 49
DESCRIBE_USER_SCRAM_CREDENTIALS = 50
ALTER_USER_SCRAM_CREDENTIALS = 51

# ClientQuotaEntity types and ClientQuotaFilterComponent match types (wire values).
USER = "user"
CLIENT_ID = "client-id"
IP = "ip"
MATCH_EXACT = 0
MATCH_DEFAULT = 1
MATCH_ANY = 2


_TYPE_ORDER = {USER: 0, CLIENT_ID: 1, IP: 2}


class ClientQuotaEntity(NamedTuple):
    """A quota entity: (entity type, name or None for the default) pairs in one canonical order (user,
    client-id, ip, then others by name), so that equal maps are equal entities (Java compares the map)."""

    entries: tuple[tuple[str, str | None], ...]

    @classmethod
    def of(cls, entity: Mapping[str, str | None]) -> ClientQuotaEntity:
        return cls(tuple(sorted(entity.items(), key=lambda e: (_TYPE_ORDER.get(e[0], len(_TYPE_ORDER)), e[0]))))

    def as_dict(self) -> dict[str, str | None]:
        return dict(self.entries)


class ClientQuotaFilterComponent(NamedTuple):
    entity_type: str
    match_type: int = MATCH_ANY
    match: str | None = None

    @classmethod
    def of_entity(cls, entity_type: str, name: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_EXACT, name)

    @classmethod
    def of_default_entity(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_DEFAULT)

    @classmethod
    def of_entity_type(cls, entity_type: str) -> ClientQuotaFilterComponent:
        return cls(entity_type, MATCH_ANY)


class ClientQuotaAlteration(NamedTuple):
    """Set (a value) or remove (None) quota keys of one entity."""

    entity: ClientQuotaEntity
    ops: Mapping[str, float | None]


class ScramMechanism(enum.IntEnum):
    UNKNOWN = 0
    SCRAM_SHA_256 = 1
    SCRAM_SHA_512 = 2

    @property
    def mechanism_name(self) -> str:
        return "UNKNOWN" if self is ScramMechanism.UNKNOWN else self.name.replace("_", "-")

    @property
    def hash_name(self) -> str:
        return "sha256" if self is ScramMechanism.SCRAM_SHA_256 else "sha512"

    @property
    def min_iterations(self) -> int:
        return 4096

    @classmethod
    def from_mechanism_name(cls, name: str) -> ScramMechanism:
        """Kafka's ScramMechanism.fromMechanismName: UNKNOWN for anything else."""
        for m in (cls.SCRAM_SHA_256, cls.SCRAM_SHA_512):
            if m.mechanism_name == name:
                return m
        return cls.UNKNOWN


class ScramCredentialInfo(NamedTuple):
    mechanism: ScramMechanism
    iterations: int


class UserScramCredentialsDescription(NamedTuple):
    name: str
    credential_infos: list[ScramCredentialInfo]


class UserScramCredentialUpsertion(NamedTuple):
    user: str
    credential_info: ScramCredentialInfo
    password: bytes | str
    salt: bytes | None = None  # None: a fresh random salt


class UserScramCredentialDeletion(NamedTuple):
    user: str
    mechanism: ScramMechanism


def salted_password(mechanism: ScramMechanism, password: bytes | str, salt: bytes, iterations: int) -> bytes:
    """RFC 5802's Hi(): PBKDF2-HMAC with the mechanism's hash (Kafka's ScramFormatter.hi)."""
    from kafkapy.common.scram import salted_password as hi  # hashlib set-up paid only by SCRAM upsertions

    return hi(mechanism.hash_name, password, salt, iterations)


def random_salt() -> bytes:
    from kafkapy.common.scram import random_salt as salt

    return salt()


def _raise_first(values: Iterable[Any], raise_errors: bool) -> None:
    if raise_errors:
        for v in values:
            if isinstance(v, KafkaError):
                raise v


def describe_client_quotas(
    calls: AdminCalls, components: Iterable[ClientQuotaFilterComponent], strict: bool = False, timeout_ms: float | None = None,
) -> dict[ClientQuotaEntity, dict[str, float]]:
    comps = list(components)

    def build(version: int) -> Any:
        R = M.DescribeClientQuotasRequest
        return R(components=[R.ComponentData(entity_type=c.entity_type, match_type=c.match_type, match=c.match)
                             for c in comps], strict=strict)

    def handle(resp: M.DescribeClientQuotasResponse) -> dict[ClientQuotaEntity, dict[str, float]]:
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        return {
            ClientQuotaEntity.of({e.entity_type: e.entity_name for e in entry.entity}):
                {v.key: v.value for v in entry.values}
            for entry in resp.entries or []
        }

    return calls.call(None, build, DESCRIBE_CLIENT_QUOTAS, timeout_ms, handle, "describeClientQuotas")

def alter_client_quotas(
    calls: AdminCalls, alterations: Iterable[ClientQuotaAlteration], validate_only: bool = False,
    timeout_ms: float | None = None, raise_errors: bool = True,
) -> dict[ClientQuotaEntity, KafkaError | None]:
    alts = [a if isinstance(a.entity, ClientQuotaEntity) else a._replace(entity=ClientQuotaEntity.of(a.entity))
            for a in alterations]

    def build(version: int) -> Any:
        R = M.AlterClientQuotasRequest
        return R(entries=[R.EntryData(
            entity=[R.EntityData(entity_type=t, entity_name=n) for t, n in a.entity.entries],
            ops=[R.OpData(key=k, value=0.0 if v is None else float(v), remove=v is None) for k, v in a.ops.items()],
        ) for a in alts], validate_only=validate_only)

    def handle(resp: M.AlterClientQuotasResponse) -> dict[ClientQuotaEntity, KafkaError | None]:
        return {
            ClientQuotaEntity.of({e.entity_type: e.entity_name for e in entry.entity}):
                error_or_none(entry.error_code, entry.error_message)
            for entry in resp.entries
        }

    out = calls.call(None, build, ALTER_CLIENT_QUOTAS, timeout_ms, handle, "alterClientQuotas")
    _raise_first(out.values(), raise_errors)
    return out

def describe_user_scram_credentials(
    calls: AdminCalls, users: Iterable[str] | None = None, timeout_ms: float | None = None, raise_errors: bool = True,
) -> dict[str, UserScramCredentialsDescription | KafkaError]:
    names = list(users or [])

    def build(version: int) -> Any:
        R = M.DescribeUserScramCredentialsRequest
        return R(users=[R.UserName(name=u) for u in names] if names else None)

    def handle(resp: M.DescribeUserScramCredentialsResponse) -> dict[str, UserScramCredentialsDescription | KafkaError]:
        if resp.error_code:
            raise error_from_code(resp.error_code, resp.error_message)
        out: dict[str, UserScramCredentialsDescription | KafkaError] = {}
        for r in resp.results:
            if r.error_code:
                out[r.user] = error_from_code(r.error_code, r.error_message)
            else:
                infos = [ScramCredentialInfo(ScramMechanism(c.mechanism) if c.mechanism in (1, 2)
                                             else ScramMechanism.UNKNOWN, c.iterations)
                         for c in r.credential_infos]
                out[r.user] = UserScramCredentialsDescription(r.user, infos)
        return out

    out = calls.call(None, build, DESCRIBE_USER_SCRAM_CREDENTIALS, timeout_ms, handle,
                     "describeUserScramCredentials")
    _raise_first(out.values(), raise_errors)
    return out

def alter_user_scram_credentials(
    calls: AdminCalls, alterations: Iterable[UserScramCredentialUpsertion | UserScramCredentialDeletion],
    timeout_ms: float | None = None, raise_errors: bool = True,
) -> dict[str, KafkaError | None]:
    alts = list(alterations)
    out: dict[str, KafkaError | None] = {}
    refused: dict[str, KafkaError] = {}
    salted: dict[int, tuple[bytes, bytes]] = {}  # index of an upsertion -> (salt, salted password)
    for i, a in enumerate(alts):
        mechanism = a.mechanism if isinstance(a, UserScramCredentialDeletion) else a.credential_info.mechanism
        if not a.user:
            refused[a.user] = UnacceptableCredentialError("Username must not be empty")
        elif mechanism == ScramMechanism.UNKNOWN:
            refused[a.user] = UnsupportedSaslMechanismError("Unknown SCRAM mechanism")
        elif isinstance(a, UserScramCredentialUpsertion):
            if not a.password:
                refused[a.user] = UnacceptableCredentialError("Password must not be empty")
                continue
            salt = a.salt if a.salt is not None else random_salt()
            salted[i] = (salt, salted_password(mechanism, a.password, salt, a.credential_info.iterations))
    sendable = [(i, a) for i, a in enumerate(alts) if a.user not in refused]

    def build(version: int) -> Any:
        R = M.AlterUserScramCredentialsRequest
        return R(
            deletions=[R.ScramCredentialDeletion(name=a.user, mechanism=int(a.mechanism))
                       for _i, a in sendable if isinstance(a, UserScramCredentialDeletion)],
            upsertions=[R.ScramCredentialUpsertion(
                name=a.user, mechanism=int(a.credential_info.mechanism), iterations=a.credential_info.iterations,
                salt=salted[i][0], salted_password=salted[i][1])
                for i, a in sendable if isinstance(a, UserScramCredentialUpsertion)],
        )

    def handle(resp: M.AlterUserScramCredentialsResponse) -> dict[str, KafkaError | None]:
        return {r.user: error_or_none(r.error_code, r.error_message) for r in resp.results}

    if sendable:
        out.update(calls.call(None, build, ALTER_USER_SCRAM_CREDENTIALS, timeout_ms, handle,
                              "alterUserScramCredentials"))
    out.update(refused)
    _raise_first(out.values(), raise_errors)
    return out
