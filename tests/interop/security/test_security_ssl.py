"""TLS listeners with real clients: confluent-kafka (librdkafka), kafka-python and kafkapy's own client
over SSL; the mTLS principal (certificate subject, ssl.principal.mapping.rules); and the bad TLS
inputs (a plaintext client on the TLS port, no or an untrusted client certificate where one is
required), each refused alone while the broker keeps serving."""

from __future__ import annotations

import socket
import ssl
import time

import pytest
from security_helpers import ck_roundtrip, kafkapy_roundtrip, run_tool

pytestmark = pytest.mark.timeout(120)


def _ck_ssl(broker, listener: str = "SSL", cert: bool = False, rogue: bool = False, **extra) -> dict:
    pki = broker.pki
    conf = {"bootstrap.servers": broker.bootstrap(listener), "security.protocol": "SSL",
            "ssl.ca.location": str(pki.ca), **extra}
    if cert or rogue:
        conf["ssl.certificate.location"] = str(pki.rogue_cert if rogue else pki.client_cert)
        conf["ssl.key.location"] = str(pki.rogue_key if rogue else pki.client_key)
    return conf


def test_confluent_kafka_over_ssl(secure_broker):
    got = ck_roundtrip(_ck_ssl(secure_broker, **{"client.id": "ck-ssl"}), "ssl-ck", 300)
    assert got == [b"ssl-ck-%d" % i for i in range(300)]
    # No client certificate on a listener that only requests one: User:ANONYMOUS.
    assert secure_broker.principals_of("ck-ssl") == {("SSL", "User:ANONYMOUS")}


def test_kafka_python_over_ssl(secure_broker):
    from kafka import KafkaConsumer, KafkaProducer, TopicPartition

    conf = {"bootstrap_servers": secure_broker.bootstrap("SSL"), "security_protocol": "SSL",
            "ssl_cafile": str(secure_broker.pki.ca)}
    producer = KafkaProducer(**conf)
    for i in range(200):
        producer.send("ssl-kp", value=b"kp-%d" % i)
    producer.flush(30)
    producer.close()
    consumer = KafkaConsumer(**conf, consumer_timeout_ms=10000)
    tp = TopicPartition("ssl-kp", 0)
    consumer.assign([tp])
    consumer.seek_to_beginning(tp)
    got = []
    for record in consumer:
        got.append((record.offset, record.value))
        if len(got) == 200:
            break
    consumer.close()
    assert got == [(i, b"kp-%d" % i) for i in range(200)]


def test_kafkapy_client_over_ssl_with_a_large_fetch(secure_broker):
    conf = {"bootstrap.servers": secure_broker.bootstrap("SSL"), "security.protocol": "SSL",
            "ssl.truststore.location": str(secure_broker.pki.ca)}
    payload = bytes(range(256)) * 200  # 51 KB values: fetch responses span many TLS records
    values = [payload + b"%d" % i for i in range(100)]
    assert kafkapy_roundtrip(conf, "ssl-own", values) == list(enumerate(values))


def test_mtls_principal_from_the_certificate_subject(secure_broker):
    conf = _ck_ssl(secure_broker, cert=True, **{"client.id": "ck-cert"})
    assert ck_roundtrip(conf, "ssl-cert", 20) == [b"ssl-cert-%d" % i for i in range(20)]
    # DEFAULT mapping: the subject's RFC 2253 distinguished name.
    assert secure_broker.principals_of("ck-cert") == {("SSL", "User:CN=client,OU=eng,O=kafkapy,C=US")}
    conf = _ck_ssl(secure_broker, "MTLS", cert=True, **{"client.id": "ck-mtls"})
    assert ck_roundtrip(conf, "ssl-mtls", 20) == [b"ssl-mtls-%d" % i for i in range(20)]
    # listener.name.mtls.ssl.principal.mapping.rules: RULE:^CN=([^,]*),OU=([^,]*),.*$/$1@$2/L
    assert secure_broker.principals_of("ck-mtls") == {("MTLS", "User:client@eng")}


def _ssl_client_context(broker, cert: bool = False, rogue: bool = False) -> ssl.SSLContext:
    ctx = ssl.create_default_context(cafile=str(broker.pki.ca))
    if cert:
        ctx.load_cert_chain(str(broker.pki.client_cert), str(broker.pki.client_key))
    if rogue:
        ctx.load_cert_chain(str(broker.pki.rogue_cert), str(broker.pki.rogue_key))
    return ctx


def _api_versions_over(sock) -> bytes:
    from kafkapy.protocol.header import RequestHeader, encode_request
    from kafkapy.protocol.messages.api_versions import ApiVersionsRequest

    sock.sendall(encode_request(RequestHeader(18, 0, 7, "probe"), ApiVersionsRequest()))
    size = int.from_bytes(_recv_exactly(sock, 4), "big")
    return _recv_exactly(sock, size)


def _recv_exactly(sock, n: int) -> bytes:
    buf = b""
    while len(buf) < n:
        chunk = sock.recv(n - len(buf))
        if not chunk:
            raise ConnectionError("closed")
        buf += chunk
    return buf


def _closed_by_broker(sock, timeout: float = 5.0) -> bool:
    sock.settimeout(timeout)
    try:
        while True:
            data = sock.recv(4096)
            if not data:
                return True
    except (ConnectionError, ssl.SSLError):
        return True
    except TimeoutError:
        return False


def _broker_still_serves(broker) -> None:
    with socket.create_connection(("127.0.0.1", broker.port("SSL")), timeout=10) as raw:
        with _ssl_client_context(broker).wrap_socket(raw, server_hostname="localhost") as tls:
            frame = _api_versions_over(tls)
    assert int.from_bytes(frame[:4], "big") == 7  # correlation id echoed


def test_plaintext_client_on_a_tls_port_is_refused_alone(secure_broker, caplog):
    caplog.set_level("INFO", logger="org.apache.kafka.common.network.Selector")
    from kafkapy.protocol.header import RequestHeader, encode_request
    from kafkapy.protocol.messages.api_versions import ApiVersionsRequest

    with socket.create_connection(("127.0.0.1", secure_broker.port("SSL")), timeout=10) as sock:
        sock.sendall(encode_request(RequestHeader(18, 0, 1, "plain"), ApiVersionsRequest()))
        assert _closed_by_broker(sock)
    _broker_still_serves(secure_broker)
    lines = [r.getMessage() for r in caplog.records if "Failed authentication" in r.getMessage()]
    assert len(lines) == 1 and "SSL handshake failed" in lines[0]


@pytest.mark.parametrize("case", ["no-certificate", "untrusted-ca"])
def test_client_certificate_refused_on_a_required_listener(secure_broker, caplog, case):
    caplog.set_level("INFO", logger="org.apache.kafka.common.network.Selector")
    ctx = _ssl_client_context(secure_broker, rogue=case == "untrusted-ca")
    with socket.create_connection(("127.0.0.1", secure_broker.port("MTLS")), timeout=10) as raw:
        with pytest.raises((ssl.SSLError, ConnectionError)):
            with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
                # TLS 1.3: the client learns of the refusal on its first read.
                _api_versions_over(tls)
    _broker_still_serves(secure_broker)
    lines = [r.getMessage() for r in caplog.records if "Failed authentication" in r.getMessage()]
    assert len(lines) == 1, lines


def test_kafkapy_client_rejects_an_untrusted_broker(secure_broker, tmp_path):
    from kafkapy.client.admin import AdminClient
    from kafkapy.common.errors import KafkaError

    # Trusting only the rogue CA's client certificate (not our CA): the handshake must fail.
    admin = AdminClient({"bootstrap.servers": secure_broker.bootstrap("SSL"), "security.protocol": "SSL",
                         "ssl.truststore.location": str(secure_broker.pki.rogue_cert),
                         "default.api.timeout.ms": 3000, "request.timeout.ms": 3000})
    try:
        with pytest.raises(KafkaError) as info:
            admin.list_topics(timeout_ms=3000)
        assert "SSL handshake" in str(info.value) or "certificate" in str(info.value).lower()
    finally:
        admin.close()


def test_kafkapy_client_and_tools_with_a_client_certificate(secure_broker, tmp_path):
    from kafkapy.client.admin import AdminClient

    pki = secure_broker.pki
    admin = AdminClient({"bootstrap.servers": secure_broker.bootstrap("MTLS"), "security.protocol": "SSL",
                         "ssl.truststore.location": str(pki.ca), "ssl.keystore.location": str(pki.client),
                         "client.id": "own-mtls"})
    try:
        admin.list_topics()
    finally:
        admin.close()
    assert secure_broker.principals_of("own-mtls") == {("MTLS", "User:client@eng")}
    config = tmp_path / "mtls.properties"
    config.write_text(f"security.protocol=SSL\nssl.truststore.type=PEM\nssl.truststore.location={pki.ca}\n"
                      f"ssl.keystore.type=PEM\nssl.keystore.location={pki.client}\n")
    r = run_tool("topics", "--bootstrap-server", secure_broker.bootstrap("MTLS"), "--command-config", str(config),
                 "--create", "--topic", "mtls-tool")
    assert r.rc == 0, r.err
    assert r.out.strip() == "Created topic mtls-tool."


def test_enabled_protocols_and_cipher_suites(secure_broker, caplog):
    caplog.set_level("INFO", logger="org.apache.kafka.common.network.Selector")
    ctx = _ssl_client_context(secure_broker)
    with socket.create_connection(("127.0.0.1", secure_broker.port("TLS12")), timeout=10) as raw:
        with ctx.wrap_socket(raw, server_hostname="localhost") as tls:
            assert tls.version() == "TLSv1.2"
            assert tls.cipher()[0] == "ECDHE-ECDSA-AES256-GCM-SHA384"
            assert int.from_bytes(_api_versions_over(tls)[:4], "big") == 7
    ctx13 = _ssl_client_context(secure_broker)
    ctx13.minimum_version = ssl.TLSVersion.TLSv1_3
    with socket.create_connection(("127.0.0.1", secure_broker.port("TLS12")), timeout=10) as raw:
        with pytest.raises(ssl.SSLError):
            ctx13.wrap_socket(raw, server_hostname="localhost")
    _broker_still_serves(secure_broker)
    lines = [r.getMessage() for r in caplog.records if "Failed authentication" in r.getMessage()]
    assert len(lines) == 1 and "SSL handshake failed" in lines[0]


def test_tls_close_is_answered_with_close_notify(secure_broker):
    """asyncio (aiokafka) waits up to 30 s for the broker's close_notify when it closes a TLS connection."""
    import asyncio

    from kafkapy.protocol.header import RequestHeader, encode_request
    from kafkapy.protocol.messages.api_versions import ApiVersionsRequest

    async def roundtrip_and_close() -> float:
        reader, writer = await asyncio.open_connection("127.0.0.1", secure_broker.port("SSL"), server_hostname="localhost",
                                                       ssl=_ssl_client_context(secure_broker))
        writer.write(encode_request(RequestHeader(18, 0, 7, "closer"), ApiVersionsRequest()))
        size = int.from_bytes(await reader.readexactly(4), "big")
        await reader.readexactly(size)
        start = time.monotonic()
        writer.close()
        await writer.wait_closed()
        return time.monotonic() - start

    assert asyncio.run(asyncio.wait_for(roundtrip_and_close(), 10)) < 5
