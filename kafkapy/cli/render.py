"""Output for every tool: Kafka's plain text (byte-exact when piped), Rich on a terminal, or JSON.

`Renderer(output)` is handed to each tool's `execute(args, out)`:
- `out.json`: True for `--output json`. Then `out.document(obj)` writes one JSON document and
  `out.emit(obj)` one JSON object per line (streams: dump-log, console-consumer, perf reports).
- `out.line(text)`: one line of Kafka's text format (written as is; never styled).
- `out.table(columns, rows, text_lines, title)`: a Rich table (rounded box, bold header, cells given
  as `Styled(value, style)` coloured) on a terminal; otherwise `text_lines` (Kafka's exact text) is
  written. `out.rich` says whether Rich output is in effect.
- `out.progress(total, description, share_stdout=False)`: a context manager yielding `advance(n)`: a
  Rich progress bar on stderr when stderr is a terminal and stdout is not; with share_stdout (tools
  printing a few report lines, the perf tests) also when stdout is the terminal, drawn there with the
  tool's lines printed above it; a no-op otherwise (piped output stays exact).
- `to_jsonable(obj)`: dataclasses -> dicts with camelCase keys (Kafka's JSON vocabulary: baseOffset,
  logEndOffset), bytes -> str (UTF-8, invalid bytes replaced), enums -> name, sets -> sorted lists.
  A class may define `__json__(self)` to choose its own form.

Rich is imported only when a terminal will show it. KAFKAPY_PLAIN=1 (or TERM=dumb, NO_COLOR has no
effect on layout) forces Kafka's plain text on a terminal too; KAFKAPY_FORCE_TERMINAL=stdout|stderr|1
renders as if that stream (1: both) were a terminal (Rich's force_terminal), for tests and `| less -R`.
Thread-safety: a Renderer is used from the thread that runs the tool.
"""

from __future__ import annotations

import contextlib
import enum
import json
import os
import sys
from collections.abc import Callable, Iterable, Iterator, Sequence
from typing import Any, NamedTuple


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


def _cell(value: Any) -> str:
    return "" if value is None else str(value)


def _plain_forced() -> bool:
    return os.environ.get("KAFKAPY_PLAIN") == "1" or os.environ.get("TERM") == "dumb"


class Styled(NamedTuple):
    """A table cell with a Rich style (e.g. "red" for a partition without a leader); plain text ignores it."""

    value: Any
    style: str


def _forced_terminal(name: str) -> bool:
    forced = os.environ.get("KAFKAPY_FORCE_TERMINAL", "")
    return forced in ("1", "all") or forced == name


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
        self._force_out = _forced_terminal("stdout")
        self._force_err = _forced_terminal("stderr")
        self.rich = not self.json and self._out_is_terminal() and not _plain_forced()
        self._console = None

    def _out_is_terminal(self) -> bool:
        return self._force_out or _isatty(self.stream)

    def _err_is_terminal(self) -> bool:
        return self._force_err or _isatty(self.err)

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

            self._console = Console(file=self.stream, highlight=False, force_terminal=self._force_out or None)
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
            from rich import box
            from rich.table import Table
            from rich.text import Text

            table = Table(box=box.ROUNDED, header_style="bold cyan", border_style="dim")
            for name in columns:  # a narrow terminal folds long values; it never cuts them to "…"
                table.add_column(name, overflow="fold")
            for row in rows:
                table.add_row(*(Text(_cell(v.value), style=v.style) if isinstance(v, Styled) else Text(_cell(v))
                                for v in row))  # fmt: skip
            if title:  # above the table, not inside it: a long title must not be wrapped to the table's width
                self.console().print(Text(title, style="bold"))
            self.console().print(table)
            return
        if text_lines is None:
            self.lines(" ".join(_cell(v.value if isinstance(v, Styled) else v) for v in row) for row in rows)
        else:
            self.lines(text_lines() if callable(text_lines) else text_lines)

    @contextlib.contextmanager
    def progress(
        self, total: float | None, description: str = "", share_stdout: bool = False
    ) -> Iterator[Callable[[float], None]]:
        """Yields advance(n). A Rich bar on stderr when stderr is a terminal and stdout is not; with
        share_stdout also on a terminal stdout, where Rich prints the tool's lines above the bar (only for
        tools writing a few lines: every line goes through Rich then)."""
        if self.json or _plain_forced():
            yield lambda n: None
            return
        if self._out_is_terminal():
            if not share_stdout or self._stream is not None:  # a fixed stream cannot be proxied
                yield lambda n: None
                return
            target, redirect = sys.stdout, True
        elif self._err_is_terminal():
            # stdout is a file or pipe: never proxy it (that would move output onto the terminal).
            target, redirect = self.err, False
        else:
            yield lambda n: None
            return
        import time

        from rich.console import Console
        from rich.progress import Progress

        console = Console(file=target, force_terminal=(self._force_out if redirect else self._force_err) or None)
        with Progress(console=console, transient=True, redirect_stdout=redirect, redirect_stderr=False) as bar:
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


def silence_stdout() -> None:
    """Point stdout at /dev/null (after a broken pipe), so the interpreter's final flush does not fail."""
    try:
        devnull = os.open(os.devnull, os.O_WRONLY)
        os.dup2(devnull, sys.stdout.fileno())
        os.close(devnull)
    except (OSError, ValueError, AttributeError):  # stdout replaced by a test double: nothing to silence
        pass
