"""The mTLS principal: a client certificate's subject as an RFC 2253 distinguished name, mapped by
Kafka's `ssl.principal.mapping.rules` (SslPrincipalMapper).

DN text: RDNs most specific first (`CN=client,OU=eng,O=Example,C=US`), attribute keywords as
Java's X500Principal prints them (CN, C, L, ST, O, OU, STREET, DC, UID; others as their OID),
`,+"\\<>;` and a leading `#`/space or trailing space escaped with a backslash.
Rules: a comma-separated list of `RULE:pattern/replacement/[LU]` and `DEFAULT`; the first rule whose
pattern matches the whole DN wins (`$1` group references, L/U lower/upper-cases the result);
DEFAULT keeps the DN; no match keeps the DN too (as Kafka's DEFAULT fallback).
Immutable after construction: thread-safe.
"""

from __future__ import annotations

import re
from typing import Any

_KEYWORDS = {
    "commonName": "CN", "countryName": "C", "localityName": "L", "stateOrProvinceName": "ST",
    "organizationName": "O", "organizationalUnitName": "OU", "streetAddress": "STREET",
    "domainComponent": "DC", "userId": "UID", "emailAddress": "1.2.840.113549.1.9.1",
    "serialNumber": "2.5.4.5", "title": "2.5.4.12", "surname": "2.5.4.4", "givenName": "2.5.4.42",
}  # fmt: skip
_RULE = re.compile(r"(DEFAULT)|RULE:([^/]*)/([^/]*)/([LU])?")


def _escape(value: str) -> str:
    out = re.sub(r'([,+"\\<>;])', r"\\\1", value)
    if out.startswith(("#", " ")):
        out = "\\" + out
    if out.endswith(" ") and not out.endswith("\\ "):
        out = out[:-1] + "\\ "
    return out


def distinguished_name(subject: Any) -> str:
    """RFC 2253 text of `ssl.getpeercert()["subject"]` (a tuple of RDNs, least specific first)."""
    rdns = []
    for rdn in reversed(subject or ()):
        rdns.append("+".join(f"{_KEYWORDS.get(k, k)}={_escape(str(v))}" for k, v in rdn))
    return ",".join(rdns)


def _substitute(replacement: str, groups: tuple[str | None, ...]) -> str:
    """Java's Matcher.replaceAll `$n` references (a missing group is empty)."""

    def group(g: re.Match[str]) -> str:
        i = int(g.group(1))
        return (groups[i] if i < len(groups) else None) or ""

    return re.sub(r"\$(\d)", group, replacement)


class SslPrincipalMapper:
    def __init__(self, rules: str | None) -> None:
        self.rules: list[tuple[re.Pattern[str], str, str] | None] = []  # None = DEFAULT
        text = (rules or "DEFAULT").strip()
        pos = 0
        for m in _RULE.finditer(text):
            if text[pos : m.start()].strip(" ,"):
                raise ValueError(f"Invalid rule: {text[pos:m.start()].strip(' ,')}")
            pos = m.end()
            if m.group(1):
                self.rules.append(None)
            else:
                self.rules.append((re.compile(m.group(2)), m.group(3), m.group(4) or ""))
        if text[pos:].strip(" ,"):
            raise ValueError(f"Invalid rule: {text[pos:].strip(' ,')}")

    def get_name(self, dn: str) -> str:
        for rule in self.rules:
            if rule is None:
                return dn
            pattern, replacement, case = rule
            m = pattern.fullmatch(dn)
            if m is None:
                continue
            name = _substitute(replacement, (m.group(0), *m.groups()))
            if case == "L":
                name = name.lower()
            elif case == "U":
                name = name.upper()
            return name
        return dn
