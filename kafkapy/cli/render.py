"""Output for every tool: Kafka's plain text (byte-exact when piped), Rich on a terminal, or JSON.

`Renderer(output)` is handed to each tool's `execute(args, out)`:
- `out.json`: True for `--output json`. Then `out.document(obj)` writes one JSON document and
  `out.emit(obj)` one JSON object per line (streams: dump-log, console-consumer, perf reports).
- `out.line(text)`: one line of Kafka's text format (written as is; never styled).
- `out.table(columns, rows, text_lines)`: a Rich table on a terminal; otherwise `text_lines` (Kafka's
  exact text) is written. `out.rich` says whether Rich output is in effect.
- `out.progress(total, description)`: a context manager yielding `advance(n)`; a Rich progress bar on
  stderr when stderr is a terminal, a no-op otherwise (plain when piped).
- `to_jsonable(obj)`: dataclasses -> dicts with camelCase keys (Kafka's JSON vocabulary: baseOffset,
  logEndOffset), bytes -> str (UTF-8, invalid bytes replaced), enums -> name, sets -> sorted lists.
  A class may define `__json__(self)` to choose its own form.

Rich is imported only when a terminal will show it. KAFKAPY_PLAIN=1 (or TERM=dumb, NO_COLOR has no
effect on layout) forces Kafka's plain text on a terminal too.
Thread-safety: a Renderer is used from the thread that runs the tool.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any


def _camel(name: str) -> str:
    head, *rest = name.split("_")
    return head + "".join(p[:1].upper() + p[1:] for p in rest)


def to_jsonable(obj: Any) -> Any:
    """Turn tool results (dataclasses, NamedTuples, bytes, enums, ...) into JSON-ready values."""
    if isinstance(obj, enum.Enum):
        return obj.name
    if obj is None or isinstance(obj, (bool, int, float, str)):
        return obj
    custom = getattr(obj, "__json__", None)
    if custom is not None and callable(custom):
        return to_jsonable(custom())
    fields = getattr(obj, "__dataclass_fields__", None)
    if fields is not None:
        return {_camel(name): to_jsonable(getattr(obj, name)) for name in fields}
    if isinstance(obj, dict):
        return {str(k): to_jsonable(v) for k, v in obj.items()}
    if isinstance(obj, tuple) and hasattr(obj, "_fields"):  # NamedTuple
        return {_camel(name): to_jsonable(getattr(obj, name)) for name in obj._fields}
    if isinstance(obj, (bytes, bytearray, memoryview)):
        return bytes(obj).decode("utf-8", errors="replace")
    if isinstance(obj, (set, frozenset)):
        return sorted((to_jsonable(v) for v in obj), key=lambda v: (str(type(v)), v))
    if isinstance(obj, (list, tuple)):
        return [to_jsonable(v) for v in obj]
    return str(obj)


def dumps(obj: Any, indent: int | None = None) -> str:
    return json.dumps(to_jsonable(obj), indent=indent, ensure_ascii=False, separators=(",", ":") if indent is None else None)


def _plain_forced() -> bool:
    return os.environ.get("KAFKAPY_PLAIN") == "1" or os.environ.get("TERM") == "dumb"


def _isatty(stream) -> bool:
    try:
        return bool(stream.isatty())
    except (AttributeError, ValueError):
        return False


class Renderer:
    def __init__(self, output: str = "text", stream=None, err=None) -> None:
        self.output = output
        self.json = output == "json"
        self._stream = stream  # None: look up sys.stdout at write time (Rich's Live may redirect it)
        self._err = err
        self.rich = not self.json and _isatty(self.stream) and not _plain_forced()
        self._console = None

    @property
    def stream(self):
        return self._stream if self._stream is not None else sys.stdout

    @property
    def err(self):
        return self._err if self._err is not None else sys.stderr

    # --- plain text ------------------------------------------------------------------------------

    def line(self, text: str = "") -> None:
        self.stream.write(text + "\n")

    def write(self, text: str) -> None:
        self.stream.write(text)

    def lines(self, texts: Iterable[str]) -> None:
        write = self.stream.write
        for t in texts:
            write(t + "\n")

    def error_line(self, text: str) -> None:
        """A diagnostic line on stderr (Kafka prints reports such as index mismatches there)."""
        self.stream.flush()
        self.err.write(text + "\n")

    def flush(self) -> None:
        self.stream.flush()

    # --- JSON ------------------------------------------------------------------------------------

    def document(self, obj: Any) -> None:
        """One JSON document (pretty-printed on a terminal, compact when piped)."""
        self.stream.write(dumps(obj, indent=2 if _isatty(self.stream) else None) + "\n")

    def emit(self, obj: Any) -> None:
        """One JSON object on one line (for streams of results)."""
        self.stream.write(dumps(obj) + "\n")

    # --- Rich ------------------------------------------------------------------------------------

    def console(self):
        if self._console is None:
            from rich.console import Console

            self._console = Console(file=self.stream, highlight=False)
        return self._console

    def table(
        self,
        columns: Sequence[str],
        rows: Iterable[Sequence[Any]],
        text_lines: Iterable[str] | Callable[[], Iterable[str]] | None = None,
        title: str | None = None,
    ) -> None:
        """Rich table on a terminal; Kafka's `text_lines` otherwise (default: space-joined rows)."""
        if self.rich:
            from rich.table import Table

            table = Table(*columns, title=title, box=None, header_style="bold", pad_edge=False)
            for row in rows:
                table.add_row(*("" if v is None else str(v) for v in row))
            self.console().print(table)
            return
        if text_lines is None:
            self.lines(" ".join("" if v is None else str(v) for v in row) for row in rows)
        else:
            self.lines(text_lines() if callable(text_lines) else text_lines)

    @contextlib.contextmanager
    def progress(self, total: float | None, description: str = "") -> Iterator[Callable[[float], None]]:
        """Yields advance(n). A Rich bar on stderr only when stderr is a terminal and stdout is not
        (so it never interleaves with output on the same screen)."""
        if self.json or _plain_forced() or not _isatty(self.err) or _isatty(self.stream):
            yield lambda n: None
            return
        import time

        from rich.console import Console
        from rich.progress import Progress

        # stdout is a file or pipe here: never proxy it (that would move output onto the terminal).
        with Progress(console=Console(file=self.err), transient=True, redirect_stdout=False) as bar:
            task = bar.add_task(description, total=total)
            pending = [0.0, time.monotonic()]

            def advance(n: float) -> None:
                pending[0] += n
                now = time.monotonic()
                if now - pending[1] >= 0.1:  # Rich redraws at 10 Hz; batch the updates per-call work
                    bar.advance(task, pending[0])
                    pending[0], pending[1] = 0.0, now

            yield advance
            bar.advance(task, pending[0])
