"""`kafkapy delegation-tokens` logic (Kafka's DelegationTokenCommand, kafka-delegation-tokens.sh): create,
renew, expire and describe delegation tokens through the AdminClient, and Kafka's text for them.

Text (byte for byte as the Java tool prints it): the token table is Java's
`%n%-15s %-30s %-15s %-15s %-25s %-15s %-15s %-15s%n` header (TOKENID HMAC OWNER REQUESTER RENEWERS
ISSUEDATE EXPIRYDATE MAXDATE) and the same format per token, dates as `yyyy-MM-dd'T'HH:mm` in local
time, renewers as Java's list text `[User:bob]`. JSON: `token_json(token)` = {"tokenId", "hmac" (base64),
"owner", "tokenRequester", "renewers", "issueTimestamp", "expiryTimestamp", "maxTimestamp"}.
Uses client/ only. Stateless: thread-safe.
"""

from __future__ import annotations

import base64
import binascii
import time
from collections.abc import Iterable
from typing import TYPE_CHECKING, Any

from kafkapy.client.admin_delegation_tokens import DelegationToken
from kafkapy.common.kafka_principal import KafkaPrincipal

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

HEADER = ("TOKENID", "HMAC", "OWNER", "REQUESTER", "RENEWERS", "ISSUEDATE", "EXPIRYDATE", "MAXDATE")


class DelegationTokenToolError(ValueError):
    pass


def parse_principals(values: Iterable[str] | None) -> list[KafkaPrincipal]:
    """Kafka's SecurityUtils.parseKafkaPrincipal over `--owner-principal` / `--renewer-principal` values."""
    out = []
    for value in values or []:
        text = value.strip()
        try:
            out.append(KafkaPrincipal.from_string(text))
        except ValueError:
            raise DelegationTokenToolError(f"expected a string in format principalType:principalName but got "
                                           f"{text}") from None
    return out


def decode_hmac(text: str) -> bytes:
    try:
        return base64.b64decode(text.strip(), validate=True)
    except (binascii.Error, ValueError):
        raise DelegationTokenToolError(f"Illegal base64 character in --hmac {text}") from None


def java_list(items: Iterable[object]) -> str:
    return "[" + ", ".join(str(i) for i in items) + "]"


def java_date(ms: int) -> str:
    return time.strftime("%Y-%m-%dT%H:%M", time.localtime(ms / 1000))


def _row(values: Iterable[str]) -> str:
    widths = (15, 30, 15, 15, 25, 15, 15, 15)
    return " ".join(f"{v:<{w}}" for v, w in zip(values, widths, strict=True))


def token_table(tokens: Iterable[DelegationToken]) -> str:
    """Kafka's printToken output, exactly (starts and ends with a newline)."""
    text = "\n" + _row(HEADER) + "\n"
    for t in tokens:
        text += "\n" + _row((t.token_id, t.hmac_base64, str(t.owner), str(t.token_requester),
                             java_list(t.renewers), java_date(t.issue_timestamp), java_date(t.expiry_timestamp),
                             java_date(t.max_timestamp))) + "\n"
    return text


def token_json(t: DelegationToken) -> dict[str, Any]:
    return {"tokenId": t.token_id, "hmac": t.hmac_base64, "owner": str(t.owner),
            "tokenRequester": str(t.token_requester), "renewers": [str(r) for r in t.renewers],
            "issueTimestamp": t.issue_timestamp, "expiryTimestamp": t.expiry_timestamp,
            "maxTimestamp": t.max_timestamp}


def create(admin: AdminClient, renewers: list[KafkaPrincipal], max_lifetime_ms: int,
           owner: KafkaPrincipal | None) -> DelegationToken:
    return admin.create_delegation_token(renewers, max_lifetime_ms, owner)


def renew(admin: AdminClient, hmac: str, renew_period_ms: int) -> int:
    return int(admin.renew_delegation_token(decode_hmac(hmac), renew_period_ms))


def expire(admin: AdminClient, hmac: str, expiry_period_ms: int) -> int:
    return int(admin.expire_delegation_token(decode_hmac(hmac), expiry_period_ms))


def describe(admin: AdminClient, owners: list[KafkaPrincipal]) -> list[DelegationToken]:
    return list(admin.describe_delegation_token(owners or None))
