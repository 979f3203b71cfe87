"""KafkaPrincipal: who a connection authenticated as (Kafka's `User:alice`), shared by server and tools.

The broker attaches one to every request (TLS client certificate subject, SASL user, or
`User:ANONYMOUS` on unauthenticated listeners); the authorizer and quotas key on it. Text form is
Kafka's `<type>:<name>` (`KafkaPrincipal.from_string("User:alice")`). Immutable: thread-safe.
"""

from __future__ import annotations

from typing import NamedTuple

USER_TYPE = "User"


class KafkaPrincipal(NamedTuple):
    principal_type: str
    name: str

    def __str__(self) -> str:
        return f"{self.principal_type}:{self.name}"

    @classmethod
    def from_string(cls, text: str) -> KafkaPrincipal:
        """Parse `Type:name` (the name may contain ':'); raises ValueError without a type."""
        principal_type, sep, name = text.partition(":")
        if not sep or not principal_type:
            raise ValueError(f"expected a string in format principalType:principalName but got {text}")
        return cls(principal_type, name)

    @classmethod
    def user(cls, name: str) -> KafkaPrincipal:
        return cls(USER_TYPE, name)


ANONYMOUS = KafkaPrincipal(USER_TYPE, "ANONYMOUS")
