"""PreEncodedList: a struct array whose elements' wire bytes the owner already holds.

A list of generated structs (it is a list: readers iterate, index and compare it as any other) that also
answers `encoded(version)`: the concatenated encodings of its elements in that version, or None when it
cannot vouch for them. The compiled encoder of a struct array (compiler.py) writes those bytes after the
array's length instead of encoding each element; None falls back to encoding them. Used where a large answer
repeats unchanged parts (a Metadata response's per-topic parts). Byte format: exactly each element's own
encoding in that version (flexible or classic as the message's version says), concatenated in list order.
Thread-safety: as the `encoded` callable given (the list itself must not be changed once built).
"""

from __future__ import annotations

from collections.abc import Callable, Iterable
from typing import Any

__all__ = ["PreEncodedList"]


class PreEncodedList(list):  # type: ignore[type-arg]
    __slots__ = ("_encoded",)

    def __init__(self, items: Iterable[Any], encoded: Callable[[int], bytes | None]) -> None:
        super().__init__(items)
        self._encoded = encoded

    def encoded(self, version: int) -> bytes | None:
        return self._encoded(version)
