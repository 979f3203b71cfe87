"""How a Kafka process authenticates to ZooKeeper, read as Kafka's JaasUtils and ZooKeeper's ZKClientConfig read
it: Java system properties (`-Dk=v` in $KAFKA_OPTS, or given to server-start) and a JAAS login file.

System properties:
  java.security.auth.login.config   the JAAS file; its `Client` section (or the section named by
                                    zookeeper.sasl.clientconfig) holds the ZooKeeper login
  zookeeper.sasl.client             "true" (default) / "false": SASL to ZooKeeper on or off
  zookeeper.sasl.clientconfig       the JAAS section name (default `Client`)
JAAS file format (the Java Configuration file syntax):
  Client {
    org.apache.zookeeper.server.auth.DigestLoginModule required username="kafka" password="kafka-secret";
  };
DigestLoginModule (and Kafka's PlainLoginModule wording of it) gives SASL DIGEST-MD5; other login modules
(Kerberos) are refused with a line naming the module. `//` and `/* */` comments are allowed.
Pure parsing plus file reads; thread-safe.
"""

from __future__ import annotations

import os
import re
import shlex
from collections.abc import Mapping
from dataclasses import dataclass, field

from kafkapy.common.jaas_config import JaasConfig, JaasConfigError, parse_jaas_config

JAVA_LOGIN_CONFIG_PARAM = "java.security.auth.login.config"
ENABLE_CLIENT_SASL_KEY = "zookeeper.sasl.client"
LOGIN_CONTEXT_NAME_KEY = "zookeeper.sasl.clientconfig"
DEFAULT_LOGIN_CONTEXT = "Client"
DIGEST_LOGIN_MODULES = ("org.apache.zookeeper.server.auth.DigestLoginModule",
                        "org.apache.kafka.common.security.plain.PlainLoginModule")


class ZkSecurityConfigError(Exception):
    """The ZooKeeper client security settings cannot be used (Kafka's KafkaException / SecurityException)."""


@dataclass(frozen=True)
class ZkClientAuth:
    """What a session sends when it opens: a SASL login and/or digest credentials (`user:password`)."""

    sasl_mechanism: str | None = None
    sasl_username: str = ""
    sasl_password: str = ""
    digest: tuple[str, ...] = field(default_factory=tuple)

    @property
    def authenticated(self) -> bool:
        return self.sasl_mechanism is not None or bool(self.digest)


def system_properties(env: Mapping[str, str] | None = None) -> dict[str, str]:
    """The `-Dkey=value` settings of $KAFKA_OPTS (what kafka-run-class.sh hands the JVM)."""
    opts = (os.environ if env is None else env).get("KAFKA_OPTS", "")
    props: dict[str, str] = {}
    for token in shlex.split(opts):
        if token.startswith("-D"):
            key, _, value = token[2:].partition("=")
            if key:
                props[key] = value
    return props


def parse_jaas_file(text: str) -> dict[str, list[JaasConfig]]:
    """`Name { <module> <flag> k="v" ...; ... };` sections -> their login module entries."""
    text = re.sub(r"/\*.*?\*/", " ", text, flags=re.S)
    text = re.sub(r"(?m)^\s*//.*$", " ", text)
    sections: dict[str, list[JaasConfig]] = {}
    pos = 0
    header = re.compile(r"\s*([A-Za-z0-9_.\-]+)\s*\{")
    while True:
        m = header.match(text, pos)
        if m is None:
            break
        end = text.find("}", m.end())
        if end < 0:
            raise ZkSecurityConfigError(f"JAAS section {m.group(1)} has no closing '}}'")
        entries = [e for e in re.findall(r'(?:[^;"]|"(?:[^"\\]|\\.)*")+;', text[m.end():end]) if e.strip(" \t\n;")]
        try:
            sections[m.group(1)] = [parse_jaas_config(e) for e in entries]
        except JaasConfigError as e:
            raise ZkSecurityConfigError(f"JAAS section {m.group(1)}: {e}") from None
        closing = re.compile(r"\s*\}\s*;?").match(text, end)
        pos = closing.end() if closing else end + 1
    if text[pos:].strip():
        raise ZkSecurityConfigError(f"Invalid JAAS file near {text[pos:pos + 30].strip()!r}")
    return sections


def zk_security_sys_config_string(props: Mapping[str, str]) -> str:
    """Kafka's JaasUtils.zkSecuritySysConfigString."""
    return (f"[{JAVA_LOGIN_CONFIG_PARAM}={props.get(JAVA_LOGIN_CONFIG_PARAM, 'null')}, "
            f"{ENABLE_CLIENT_SASL_KEY}={props.get(ENABLE_CLIENT_SASL_KEY, 'default:true')}, "
            f"{LOGIN_CONTEXT_NAME_KEY}={props.get(LOGIN_CONTEXT_NAME_KEY, 'default:' + DEFAULT_LOGIN_CONTEXT)}]")


def zk_client_auth(props: Mapping[str, str]) -> ZkClientAuth:
    """The SASL login JaasUtils.isZkSaslEnabled would find (none: an unauthenticated ZkClientAuth)."""
    sasl_enabled = props.get(ENABLE_CLIENT_SASL_KEY, "true").strip().lower() == "true"
    context = props.get(LOGIN_CONTEXT_NAME_KEY, DEFAULT_LOGIN_CONTEXT)
    path = props.get(JAVA_LOGIN_CONFIG_PARAM)
    if not path:
        return ZkClientAuth()
    try:
        with open(path, encoding="utf-8") as f:
            sections = parse_jaas_file(f.read())
    except (OSError, ZkSecurityConfigError) as e:
        raise ZkSecurityConfigError(f"Exception while loading Zookeeper JAAS login context "
                                    f"{zk_security_sys_config_string(props)}: {e}") from None
    entries = sections.get(context)
    if not entries:
        return ZkClientAuth()
    if not sasl_enabled:
        raise ZkSecurityConfigError(f"Exception while determining if ZooKeeper is secure "
                                    f"{zk_security_sys_config_string(props)}")
    entry = entries[0]
    if entry.login_module not in DIGEST_LOGIN_MODULES:
        raise ZkSecurityConfigError(f"JAAS section {context}: login module {entry.login_module} is not supported "
                                    f"(kafkapy authenticates to ZooKeeper with DigestLoginModule, SASL DIGEST-MD5)")
    return ZkClientAuth("DIGEST-MD5", entry.options.get("username", ""), entry.options.get("password", ""))


def require_secure_connection(set_acl: bool, auth: ZkClientAuth, props: Mapping[str, str]) -> None:
    """Kafka's KafkaZkClient.createZkClient check: zookeeper.set.acl needs an authenticated session."""
    if set_acl and not auth.authenticated:
        raise ZkSecurityConfigError(
            "zookeeper.set.acl is true, but ZooKeeper client TLS configuration identifying at least "
            "zookeeper.ssl.client.enable, zookeeper.clientCnxnSocket, and zookeeper.ssl.keystore.location was not "
            f"present and the verification of the JAAS login file failed {zk_security_sys_config_string(props)}")
