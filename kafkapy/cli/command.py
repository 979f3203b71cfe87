"""The framework every `kafkapy <tool>` module plugs into: flag parsing, common flags, exit codes.

A tool's cli module is:

    from kafkapy.cli.command import ToolParser, ToolError, UsageError, run

    def build_parser() -> ToolParser:
        p = ToolParser("get-offsets", "An interactive shell for getting topic-partition offsets.")
        p.add_bootstrap_server()                       # --bootstrap-server / --broker-list
        p.add_command_config()                         # --command-config FILE -> args.command_config
        p.add_argument("--topic", metavar="<topic>")
        return p

    def execute(args, out) -> int:                     # out: kafkapy.cli.render.Renderer
        from kafkapy.tools import get_offsets          # logic returning dataclasses, client/ only
        result = get_offsets.get_offsets(...)
        if out.json: out.document(result) else: out.line(...)
        return 0

    def main(argv: list[str]) -> int:
        return run(build_parser(), argv, execute)

Conventions (DESIGN.md "Tools and CLI"): Kafka's long flag names and aliases (both `--flag value` and
`--flag=value`); every tool has `--output text|json`, `--verbose`, `--help`, `--version`.
Exit codes: 0 ok; 1 runtime error, one line "Error: ..." on stderr (traceback only with --verbose or
KAFKAPY_DEBUG=1) - raise ToolError here, kafkapy.tools.ToolFailure in tool logic, anything else is
reported as "Error: <ExceptionType>: <message>" (KafkaErrors as "Error: <KAFKA_NAME>: <message>"); 2 usage error, one line "kafkapy <tool>: error: ..." on stderr; 130 on Ctrl-C; 143 on SIGTERM (which
unwinds the tool like Ctrl-C, so its `finally` work runs, as Kafka's shutdown hooks do).
A closed stdout pipe (`| head`) ends the tool quietly with 0, as Kafka's Java tools do.

Flags are parsed here with argparse, which follows joptsimple's rules one-to-one (unambiguous prefixes,
`--flag=value`, repeated flags, single-dash `-daemon`) and Kafka's error wording; the Typer tree
(kafkapy/cli/main.py) dispatches to the tool and derives completion from this parser
(kafkapy/cli/parser_params.py). `--help` is rendered with Rich (kafkapy/cli/tool_help.py); a mistyped
flag gets Click's "Did you mean --x?" suggestion (difflib over the parser's long flags).
Thread-safety: one parse and one run per process, from the main thread.
"""

from __future__ import annotations

import argparse
import contextlib
import os
import signal
import sys
import threading
from collections.abc import Callable, Iterator, Sequence
from typing import Any

from kafkapy.tools import ToolFailure

USAGE_EXIT = 2
ERROR_EXIT = 1
INTERRUPTED_EXIT = 130
TERMINATED_EXIT = 143  # 128 + SIGTERM, what a JVM tool exits with after its shutdown hooks ran


class Terminated(KeyboardInterrupt):
    """SIGTERM turned into an exception, so a tool unwinds as on Ctrl-C (Kafka's shutdown hooks: the
    console consumer still prints `Processed a total of N messages`)."""


def _raise_terminated(signum: int, frame: object) -> None:
    raise Terminated()


@contextlib.contextmanager
def _sigterm_unwinds() -> Iterator[None]:
    """While a tool runs, SIGTERM raises Terminated in the main thread (the default would kill the process
    without running `finally` blocks). Tools that handle SIGTERM themselves (server-start) install their
    own handler inside and restore this one."""
    if threading.current_thread() is not threading.main_thread():
        yield
        return
    try:
        previous = signal.signal(signal.SIGTERM, _raise_terminated)
    except (ValueError, OSError):  # no signals here (embedded interpreter)
        yield
        return
    try:
        yield
    finally:
        signal.signal(signal.SIGTERM, previous)


class UsageError(Exception):
    """Bad flags or a bad combination of flags: one line on stderr, exit 2."""


class ToolError(Exception):
    """An expected runtime failure: one line on stderr, exit `exit_code` (1).

    The line is "Error: <message>" unless prefixed=False, for tools whose Kafka wording has its own
    lead-in (e.g. "Error while executing topic command : ...").
    """

    def __init__(self, message: str, exit_code: int = ERROR_EXIT, prefixed: bool = True) -> None:
        super().__init__(message)
        self.message = message
        self.exit_code = exit_code
        self.prefixed = prefixed


class _KafkaHelpFormatter(argparse.HelpFormatter):
    def __init__(self, prog: str) -> None:
        super().__init__(prog, max_help_position=40, width=110)


class ToolParser(argparse.ArgumentParser):
    """argparse with Kafka's conventions: errors raise UsageError instead of printing usage and exiting."""

    def __init__(self, tool: str, description: str | None = None, *, epilog: str | None = None) -> None:
        super().__init__(
            prog=f"kafkapy {tool}",
            description=description,
            epilog=epilog,
            formatter_class=_KafkaHelpFormatter,
            allow_abbrev=True,  # joptsimple accepts unambiguous prefixes of long options
        )
        self.tool = tool
        common = self.add_argument_group("common options")
        common.add_argument(
            "--output",
            choices=("text", "json"),
            default="text",
            help="text (Kafka's format; Rich tables on a terminal) or json (one document, or one object "
            "per line for streams)",
        )
        common.add_argument("--verbose", action="store_true", help="more detail; tracebacks on errors")
        common.add_argument("--version", action="version", version=_version(), help="print the version and exit")

    def error(self, message: str):  # type: ignore[override]
        raise UsageError(message)

    def parse_args(self, args=None, namespace=None):  # type: ignore[override]
        args = sys.argv[1:] if args is None else list(args)
        unknown = self._first_unknown_flag(args)
        if unknown is not None:  # before the required-flag checks, as joptsimple reports it
            raise UsageError(f"unrecognized arguments: {unknown}" + self._suggestion([unknown]))
        parsed, extras = self.parse_known_args(args, namespace)
        if extras:
            raise UsageError(f"unrecognized arguments: {' '.join(extras)}" + self._suggestion(extras))
        return parsed

    def _first_unknown_flag(self, args: Sequence[str]) -> str | None:
        """The first `--name[=value]` that names no flag (exactly or as an unambiguous prefix). Parsers with
        subcommands or a REMAINDER argument are left to argparse: their later flags are not this parser's."""
        if any(isinstance(a, argparse._SubParsersAction) or a.nargs == argparse.REMAINDER for a in self._actions):
            return None
        known = self._option_string_actions
        for token in args:
            if token == "--":
                return None
            if not token.startswith("--") or " " in token:  # argparse takes a token with a space as a value
                continue
            name = token.partition("=")[0]
            if name not in known and not (self.allow_abbrev and any(o.startswith(name) for o in known)):
                return name
        return None

    def _suggestion(self, extras: Sequence[str]) -> str:
        """Click's "Did you mean" for the first unknown flag (same difflib rule as click's parser)."""
        import difflib

        unknown = next((e.partition("=")[0] for e in extras if e.startswith("-")), None)
        if unknown is None:
            return ""
        known = [o for o in self._option_string_actions if o.startswith("--") or len(o) > 2]
        matches = difflib.get_close_matches(unknown, known)
        if not matches:
            return ""
        return f". Did you mean {matches[0]}?" if len(matches) == 1 else f" (Possible options: {', '.join(matches)})"

    def print_help(self, file=None) -> None:  # type: ignore[override]
        from kafkapy.cli.tool_help import print_help

        print_help(self, file if file is not None else sys.stdout)

    # --- Kafka's recurring flags -------------------------------------------------------------------

    def add_bootstrap_server(
        self, required: bool = True, aliases: Sequence[str] = ("--broker-list",), help: str | None = None
    ) -> argparse.Action:
        """`--bootstrap-server host:port[,host:port]` (KIP-499) with the older `--broker-list` alias."""
        return self.add_argument(
            "--bootstrap-server",
            *aliases,
            dest="bootstrap_server",
            metavar="<server(s) to connect to>",
            required=required,
            help=help or "REQUIRED: The Kafka server(s) to connect to, host:port[,host:port...]",
        )

    def add_command_config(
        self, aliases: Sequence[str] = (), help: str | None = None, dest: str = "command_config"
    ) -> argparse.Action:
        """`--command-config FILE` (Java .properties, passed to the client); aliases such as
        `--producer.config`, `--consumer.config`, `--admin.config` (renamed by KIP-1147)."""
        return self.add_argument(
            "--command-config",
            *aliases,
            dest=dest,
            metavar="<command config property file>",
            help=help or "Property file containing configs to be passed to the client.",
        )

    def add_property_list(
        self, flag: str, *aliases: str, dest: str | None = None, help: str | None = None
    ) -> argparse.Action:
        """A repeatable `--flag k=v` (e.g. --config, --property, --producer-property); values are kept as
        given, in order; use kafkapy.cli.properties.parse_key_values to turn them into a dict."""
        return self.add_argument(
            flag, *aliases, dest=dest, action="append", default=[], metavar="<key=value>", help=help
        )

    def parse(self, argv: Sequence[str]) -> argparse.Namespace:
        return self.parse_args(list(argv))


def _version() -> str:
    from kafkapy import __version__

    return __version__


def missing_argument(name: str) -> UsageError:
    """Kafka's CommandLineUtils.checkRequiredArgs message for an absent option (`name` without dashes)."""
    return UsageError(f'Missing required argument "[{name}]"')


def require_exactly_one(args: argparse.Namespace, flags: Sequence[str], message: str | None = None) -> str:
    """Kafka's "exactly one action" check; returns the flag given. `flags` are '--list'-style names."""
    given = [f for f in flags if getattr(args, f.lstrip("-").replace("-", "_").replace(".", "_"), None)]
    if len(given) != 1:
        raise UsageError(message or "Command must include exactly one action: " + ", ".join(flags))
    return given[0]


def _describe(exc: BaseException) -> str:
    """One line for an unexpected exception: KafkaErrors by Kafka's name, OSErrors by path."""
    if isinstance(exc, OSError) and exc.strerror:
        return f"{exc.strerror}: {exc.filename}" if exc.filename else exc.strerror
    from kafkapy.common.errors import KafkaError  # here: the CLI's start-up does not import the error classes

    text = str(exc)
    if isinstance(exc, KafkaError):
        return f"{exc.name}: {text}" if text and text != exc.name else exc.name
    return f"{type(exc).__name__}: {text}" if text else type(exc).__name__


def _one_line(text: str) -> str:
    return " ".join(text.split("\n")).strip()


def run(
    parser: ToolParser,
    argv: Sequence[str],
    execute: Callable[[argparse.Namespace, Any], int | None],
    *,
    stdout=None,
    stderr=None,
) -> int:
    """Parse `argv`, call `execute(args, renderer)`, and turn the outcome into Kafka-style exit codes."""
    err = stderr if stderr is not None else sys.stderr
    argv = list(argv)
    verbose = "--verbose" in argv or os.environ.get("KAFKAPY_DEBUG") == "1"
    try:
        args = parser.parse_args(argv)
    except UsageError as e:
        err.write(f"{parser.prog}: error: {_one_line(str(e))}\n")
        return USAGE_EXIT
    except SystemExit as e:  # --help / --version
        return e.code if isinstance(e.code, int) else 0

    from kafkapy.cli.render import Renderer

    out = Renderer(args.output, stream=stdout, err=err)
    try:
        with _sigterm_unwinds():
            rc = execute(args, out)
        out.flush()
        return 0 if rc is None else int(rc)
    except UsageError as e:
        err.write(f"{parser.prog}: error: {_one_line(str(e))}\n")
        return USAGE_EXIT
    except ToolError as e:
        _flush_quietly(out)
        err.write(("Error: " if e.prefixed else "") + _one_line(e.message) + "\n")
        if verbose:
            _traceback(err)
        return e.exit_code
    except ToolFailure as e:
        _flush_quietly(out)
        err.write("Error: " + _one_line(str(e)) + "\n")
        if verbose:
            _traceback(err)
        return ERROR_EXIT
    except Terminated:
        _flush_quietly(out)
        return TERMINATED_EXIT
    except KeyboardInterrupt:
        _flush_quietly(out)
        return INTERRUPTED_EXIT
    except BrokenPipeError:
        # The reader went away (`| head`): stop quietly; point stdout at /dev/null so the interpreter's
        # final flush does not raise again.
        from kafkapy.cli.render import silence_stdout

        silence_stdout()
        return 0
    except Exception as e:  # noqa: BLE001 - the one boundary that turns any failure into exit 1
        _flush_quietly(out)
        err.write("Error: " + _one_line(_describe(e)) + "\n")
        if verbose:
            _traceback(err)
        return ERROR_EXIT


def _traceback(err) -> None:
    import traceback

    traceback.print_exc(file=err)


def _flush_quietly(out) -> None:
    try:
        out.flush()
    except (BrokenPipeError, ValueError, OSError):
        from kafkapy.cli.render import silence_stdout

        silence_stdout()
