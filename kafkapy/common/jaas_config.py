"""Kafka's inline JAAS text (`sasl.jaas.config`): one login module, a control flag, `key="value"` options.

Example: `org.apache.kafka.common.security.plain.PlainLoginModule required username="admin"
password="admin-secret" user_alice="alice-secret";`. Values are double-quoted (backslash escapes)
or bare tokens. Parsing only; pure and thread-safe.
"""

from __future__ import annotations

import re
from typing import NamedTuple

_OPTION = re.compile(r'\s*([A-Za-z0-9_.\-$]+)\s*=\s*("(?:[^"\\]|\\.)*"|[^\s;"]+)')


class JaasConfigError(ValueError):
    pass


class JaasConfig(NamedTuple):
    login_module: str
    control_flag: str
    options: dict[str, str]


def parse_jaas_config(text: str) -> JaasConfig:
    s = text.strip()
    m = re.match(r"([A-Za-z0-9_.$]+)\s+(required|requisite|sufficient|optional)\b", s)
    if m is None:
        raise JaasConfigError("Invalid JAAS config: expected '<LoginModule> <flag> key=\"value\" ... ;'")
    pos = m.end()
    options: dict[str, str] = {}
    while True:
        om = _OPTION.match(s, pos)
        if om is None:
            break
        value = om.group(2)
        if value.startswith('"'):
            value = re.sub(r"\\(.)", r"\1", value[1:-1])
        options[om.group(1)] = value
        pos = om.end()
    rest = s[pos:].strip()
    if rest not in (";", ""):
        raise JaasConfigError(f"Invalid JAAS config near {rest[:20]!r}")
    if rest != ";":
        raise JaasConfigError("Invalid JAAS config: missing the terminating ';'")
    return JaasConfig(m.group(1), m.group(2), options)
