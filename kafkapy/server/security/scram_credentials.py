"""SCRAM credentials in the metadata store, as Kafka keeps them in ZooKeeper: under the user's config
node `/config/users/<user>` the key `SCRAM-SHA-256` / `SCRAM-SHA-512` holds
`salt=<b64>,stored_key=<b64>,server_key=<b64>,iterations=<n>` (ScramCredentialUtils). Other keys
of that node (client quotas) are kept as they are.

`ScramCredentialStore(store)`: `lookup(mechanism, user)` (read on every SCRAM login, so a change is
seen at once by every broker sharing the store), `alter(deletions, upsertions)` and `describe(users)`
with Kafka's per-user validation and error codes. Thread-safe as the store is; alterations of one
request are applied user by user (each user's node in one write).
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any, NamedTuple

from kafkapy.common import scram
from kafkapy.common.errors import (
    DuplicateResourceError,
    KafkaError,
    ResourceNotFoundError,
    UnacceptableCredentialError,
    UnsupportedSaslMechanismError,
)

USERS = "users"
MECHANISM_IDS = {1: "SCRAM-SHA-256", 2: "SCRAM-SHA-512"}
MECHANISM_NUMBERS = {name: number for number, name in MECHANISM_IDS.items()}


class Deletion(NamedTuple):
    user: str
    mechanism: int


class Upsertion(NamedTuple):
    user: str
    mechanism: int
    iterations: int
    salt: bytes
    salted_password: bytes


class ScramCredentialStore:
    def __init__(self, store: Any) -> None:
        self._store = store

    def lookup(self, mechanism: str, user: str) -> scram.ScramCredential | None:
        text = self._store.get_entity_config(USERS, user).get(mechanism)
        if not text:
            return None
        try:
            return scram.ScramCredential.from_config_string(text)
        except scram.ScramError:
            return None

    def describe(self, users: list[str] | None) -> list[tuple[str, KafkaError | None, list[tuple[int, int]]]]:
        """[(user, error, [(mechanism id, iterations)])]: every user with credentials when users is None."""
        if users is None:
            names = [u for u in self._store.entity_names(USERS) if self._infos(u)]
            return [(u, None, self._infos(u)) for u in names]
        seen: dict[str, int] = {}
        for u in users:
            seen[u] = seen.get(u, 0) + 1
        out: list[tuple[str, KafkaError | None, list[tuple[int, int]]]] = []
        for u in dict.fromkeys(users):
            if seen[u] > 1:
                out.append((u, DuplicateResourceError(f"Cannot describe SCRAM credentials for the same user "
                                                      f"twice in a single request: {u}"), []))
                continue
            infos = self._infos(u)
            if not infos:
                out.append((u, ResourceNotFoundError(f"Attempt to describe a user credential that does not "
                                                     f"exist: {u}"), []))
            else:
                out.append((u, None, infos))
        return out

    def _infos(self, user: str) -> list[tuple[int, int]]:
        configs = self._store.get_entity_config(USERS, user)
        infos = []
        for number, name in MECHANISM_IDS.items():
            text = configs.get(name)
            if text:
                try:
                    infos.append((number, scram.ScramCredential.from_config_string(text).iterations))
                except scram.ScramError:
                    continue
        return infos

    def alter(self, deletions: Iterable[Deletion], upsertions: Iterable[Upsertion]) -> dict[str, KafkaError | None]:
        items: list[Deletion | Upsertion] = [*deletions, *upsertions]
        results: dict[str, KafkaError | None] = {}
        counts: dict[tuple[str, int], int] = {}
        for item in items:
            counts[(item.user, item.mechanism)] = counts.get((item.user, item.mechanism), 0) + 1
        for item in items:
            if item.user in results:
                continue
            if counts[(item.user, item.mechanism)] > 1:
                results[item.user] = DuplicateResourceError("A user credential cannot be altered twice in the "
                                                             "same request")
            elif not item.user:
                results[item.user] = UnacceptableCredentialError("Username must not be empty")
            elif item.mechanism not in MECHANISM_IDS:
                results[item.user] = UnsupportedSaslMechanismError("Unknown SCRAM mechanism")
            elif isinstance(item, Upsertion) and item.iterations < scram.MIN_ITERATIONS:
                results[item.user] = UnacceptableCredentialError("Too few iterations")
            elif isinstance(item, Upsertion) and item.iterations > scram.MAX_ITERATIONS:
                results[item.user] = UnacceptableCredentialError("Too many iterations")
        by_user: dict[str, list[Deletion | Upsertion]] = {}
        for item in items:
            if item.user not in results:
                by_user.setdefault(item.user, []).append(item)
        for user, items in by_user.items():
            configs = dict(self._store.get_entity_config(USERS, user))
            error: KafkaError | None = None
            for item in items:
                name = MECHANISM_IDS[item.mechanism]
                if isinstance(item, Deletion):
                    if name not in configs:
                        error = ResourceNotFoundError("Attempt to delete a user credential that does not exist")
                        break
                    del configs[name]
                else:
                    credential = scram.ScramCredential.from_salted_password(
                        scram.MECHANISMS[name], bytes(item.salted_password), bytes(item.salt), item.iterations)
                    configs[name] = credential.to_config_string()
            if error is None:
                self._store.set_entity_config(USERS, user, configs)
            results[user] = error
        return results
