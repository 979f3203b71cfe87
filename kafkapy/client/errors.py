"""Client-side exceptions that have no error code of their own on the wire.

Each subclasses the generated class of the Kafka error it corresponds to, so callers can catch
either (`DisconnectError` is a `NETWORK_EXCEPTION`, `KafkaTimeoutError` a `REQUEST_TIMED_OUT`,
both retriable, as Java's DisconnectException / TimeoutException are).
Stateless; thread-safe.
"""

from __future__ import annotations

from kafkapy.common.errors import (
    KafkaError,
    NetworkExceptionError,
    RequestTimedOutError,
    SaslAuthenticationFailedError,
    UnsupportedVersionError,
    error_for_code,
)

# KafkaError.__init_subclass__ sets code/name/retriable from the class keywords, so subclasses
# restate their parent's.
_NET = {"code": NetworkExceptionError.code, "name": NetworkExceptionError.name, "retriable": True}


class DisconnectError(NetworkExceptionError, **_NET):
    """The connection to a broker closed before the response arrived."""


class NoBrokersAvailableError(NetworkExceptionError, **_NET):
    """No bootstrap or known broker could be reached."""


class NotKafkaPeerError(DisconnectError, **_NET):
    """The peer answered the ApiVersions handshake with bytes that are not a Kafka response frame (an HTTP
    server, a TLS listener for a PLAINTEXT client, another protocol on that port)."""

    def __init__(self, message: str, detail: str = "") -> None:
        super().__init__(message)
        self.detail = detail


class BootstrapUnreachableError(
    NetworkExceptionError, code=NetworkExceptionError.code, name=NetworkExceptionError.name, retriable=False
):
    """Every bootstrap address refused the connection, did not resolve or is not a Kafka broker, and none
    was ever reached: the client gives up at once instead of retrying until its timeout."""


class KafkaTimeoutError(
    RequestTimedOutError, code=RequestTimedOutError.code, name=RequestTimedOutError.name, retriable=True
):
    """A request or a blocking client call did not complete in time."""


class ClientUnsupportedVersionError(
    UnsupportedVersionError, code=UnsupportedVersionError.code, name=UnsupportedVersionError.name, retriable=False
):
    """The broker's supported versions of an API do not overlap the versions this client speaks."""


class SslAuthenticationFailedError(
    SaslAuthenticationFailedError, code=SaslAuthenticationFailedError.code,
    name=SaslAuthenticationFailedError.name, retriable=False,
):
    """The TLS handshake failed (untrusted certificate, wrong host name, no common protocol): Java's
    SslAuthenticationException; like every AuthenticationException it is not retried."""


def raise_for_code(code: int, message: str | None = None) -> None:
    """Raise the KafkaError class for a non-zero error code (with the broker's message if any)."""
    if code:
        cls = error_for_code(code)
        raise cls(message) if message else cls()


def error_from_code(code: int, message: str | None = None) -> KafkaError:
    cls = error_for_code(code)
    return cls(message) if message else cls()
