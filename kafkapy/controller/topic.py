"""Kafka's topic name rules (org.apache.kafka.common.internals.Topic): legal names and '.'/'_' collisions.

A legal name is 1..249 characters of [a-zA-Z0-9._-] and not '.' or '..'. Metric names replace '.' with
'_', so 'a.b' and 'a_b' collide and may not both exist. Pure functions; thread-safe.
"""

from __future__ import annotations

import re

from kafkapy.common.errors import InvalidTopicExceptionError

MAX_NAME_LENGTH = 249
_LEGAL = re.compile(r"[a-zA-Z0-9._-]+")


def validate(name: str) -> None:
    """Raise InvalidTopicExceptionError with Kafka's message when name is not a legal topic name."""
    if not name:
        raise InvalidTopicExceptionError("Topic name is illegal, it can't be empty")
    if name in (".", ".."):
        raise InvalidTopicExceptionError('Topic name cannot be "." or ".."')
    if len(name) > MAX_NAME_LENGTH:
        raise InvalidTopicExceptionError(
            f"Topic name is illegal, it can't be longer than {MAX_NAME_LENGTH} characters, Topic name: {name}")
    if not _LEGAL.fullmatch(name):
        raise InvalidTopicExceptionError(
            f'Topic name "{name}" is illegal, it contains a character other than ASCII alphanumerics, '
            "'.', '_' and '-'")


def has_collision_chars(name: str) -> bool:
    return "_" in name or "." in name


def unify_collision_chars(name: str) -> str:
    return name.replace(".", "_")


def has_collision(a: str, b: str) -> bool:
    return unify_collision_chars(a) == unify_collision_chars(b)
