"""The lazy command tree behind `kafkapy`: a Typer group whose commands come from the tool table.

`ToolGroup` is the Typer (click) group of the `kafkapy` app. A subclass binds `tools` (name ->
("module[:function]", summary)) and `run_tool(name, argv)`; then:
- `list_commands` is the table's order and `get_command` builds a `ToolCommand` from one row without
  importing anything, so `kafkapy --help` (Typer's Rich help, one line per tool) and
  `kafkapy <tool> ...` import only the tool that runs;
- Kafka's script names resolve to their tool (`kafkapy kafka-topics.sh --list`);
- an unknown tool is one line on stderr with Click's "Did you mean" and exit 2;
- `main()` turns every outcome into Kafka's exit codes (0 ok, 1 error, 2 usage, 130 Ctrl-C) with
  one line on stderr, in place of Typer's boxed error panels, in standalone mode (the console script,
  typer.testing.CliRunner) and not.

`ToolCommand` hands its raw arguments to the tool's `main(argv)`, whose ToolParser (argparse) parses
them with joptsimple's rules and Kafka's error wording. Its click params (what shell completion
offers after `kafkapy <tool> `) are derived from that parser on demand (kafkapy/cli/parser_params.py);
the parser is found by the `build_parser()` convention (`build_<x>_parser()` beside `<x>_main`).
Thread-safety: one tree per process, used from the main thread.
"""

from __future__ import annotations

import contextlib
import importlib
import os
import sys
from collections.abc import Sequence
from difflib import get_close_matches
from typing import Any

import typer
from typer import _click as click  # Typer >= 0.29 (pinned) vendors click; its classes are these
from typer.core import TyperCommand, TyperGroup

from kafkapy.cli.command import INTERRUPTED_EXIT, USAGE_EXIT


class UnknownTool(click.exceptions.UsageError):
    """`kafkapy <name>` where name is neither a tool nor a Kafka script name."""


def builder_name(target: str) -> tuple[str, str]:
    """("module", "build_parser"-style function) for a tool's "module[:function]" target."""
    module, _, func = target.partition(":")
    func = func or "main"
    prefix = func.removesuffix("main").rstrip("_")
    return module, f"build_{prefix}_parser" if prefix else "build_parser"


class ToolCommand(TyperCommand):
    """One tool: raw argv through to its main(); completion params derived from its parser."""

    def __init__(self, name: str, target: str, summary: str, group: ToolGroup) -> None:
        super().__init__(name, help=summary, short_help=summary, add_help_option=False)
        self.target = target
        self.group = group
        self._params: list | None = None

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        # argparse parses (joptsimple's prefixes, Kafka's messages); click keeps the raw list.
        ctx.args = list(args)
        return ctx.args

    def invoke(self, ctx) -> int:
        return self.group.run_tool(self.name or "", list(ctx.args))

    def get_params(self, ctx) -> list:
        if self._params is None:
            self._params = self._derived_params()
        return self._params

    def _derived_params(self) -> list:
        module_name, builder = builder_name(self.target)
        try:
            build = getattr(importlib.import_module(module_name), builder, None)
        except ImportError:  # a tool not implemented yet: nothing to complete
            return []
        if build is None:
            return []
        from kafkapy.cli.parser_params import typer_command

        return list(typer_command(build(), self.name or "").params)


class ToolGroup(TyperGroup):
    """`kafkapy`: commands looked up lazily in `tools`; Kafka-style errors and exit codes."""

    tools: dict[str, tuple[str, str]] = {}
    script_prefix = "kafka-"

    def __init__(self, **attrs: Any) -> None:
        if attrs.get("subcommand_metavar") is None:
            attrs["subcommand_metavar"] = "<tool> [flags...]"
        super().__init__(**attrs)
        self._commands: dict[str, ToolCommand] = {}

    def run_tool(self, tool: str, argv: list[str]) -> int:
        raise NotImplementedError

    # --- the lazy tree ---------------------------------------------------------------------------

    def canonical(self, name: str) -> str | None:
        """The tool for `name`: a tool name or Kafka's script name (kafka-topics.sh, zookeeper-shell.sh)."""
        if name in self.tools:
            return name
        alias = os.path.basename(name).removesuffix(".sh").removeprefix(self.script_prefix)
        return alias if alias in self.tools else None

    def list_commands(self, ctx) -> list[str]:
        return list(self.tools)

    def get_command(self, ctx, cmd_name: str) -> ToolCommand | None:
        tool = self.canonical(cmd_name)
        if tool is None:
            return None
        cmd = self._commands.get(tool)
        if cmd is None:
            target, summary = self.tools[tool]
            cmd = self._commands[tool] = ToolCommand(tool, target, summary, self)
        return cmd

    def parse_args(self, ctx, args: list[str]) -> list[str]:
        # `kafkapy <tool> ...` (no root option): hand over without processing the root's params, whose
        # Typer coercion would import pydantic (~100 ms) only to find them absent.
        if args and not args[0].startswith("-") and not ctx.resilient_parsing:
            ctx._protected_args, ctx.args = args[:1], args[1:]
            return ctx.args
        return super().parse_args(ctx, args)

    def resolve_command(self, ctx, args: list[str]):
        name = args[0]
        cmd = self.get_command(ctx, name)
        if cmd is None:
            if ctx.resilient_parsing:  # shell completion of a half-typed tool name
                return None, None, args[1:]
            matches = get_close_matches(name, list(self.tools))
            hint = f". Did you mean {', '.join(repr(m) for m in matches)}?" if matches else ""
            raise UnknownTool(f"unknown tool '{name}'{hint} (kafkapy --help lists the tools)", ctx)
        return cmd.name, cmd, args[1:]

    # --- Kafka's exit codes and one-line errors --------------------------------------------------

    def main(  # type: ignore[override]
        self,
        args: Sequence[str] | None = None,
        prog_name: str | None = None,
        complete_var: str | None = None,
        standalone_mode: bool = True,
        **extra: Any,
    ) -> Any:
        rc = self._run(list(sys.argv[1:] if args is None else args), prog_name or "kafkapy", complete_var, extra)
        if standalone_mode:
            sys.exit(rc)
        return rc

    def _run(self, args: list[str], prog_name: str, complete_var: str | None, extra: dict[str, Any]) -> int:
        self._main_shell_completion(extra, prog_name, complete_var)  # exits when the shell asks
        if not args:
            with contextlib.redirect_stdout(sys.stderr):  # Typer's Rich help prints to sys.stdout
                super().main(["--help"], prog_name, complete_var, standalone_mode=False, **extra)
            return USAGE_EXIT
        try:
            rv = super().main(args, prog_name, complete_var, standalone_mode=False, **extra)
        except UnknownTool as e:
            sys.stderr.write(f"{prog_name}: {_one_line(e.format_message())}\n")
            return USAGE_EXIT
        except click.exceptions.UsageError as e:
            sys.stderr.write(f"{prog_name}: error: {_one_line(e.format_message())}\n")
            return USAGE_EXIT
        except click.exceptions.ClickException as e:
            sys.stderr.write(f"{prog_name}: error: {_one_line(e.format_message())}\n")
            return e.exit_code
        except typer.Abort:
            return INTERRUPTED_EXIT
        except SystemExit as e:
            # Rich ends help printed into a closed pipe (`kafkapy --help | head -1`) with exit 1 after
            # pointing stdout at /dev/null; the tools end quietly with 0 there, as Kafka's do.
            if e.code == 1 and args[0] in ("-h", "--help"):
                return 0
            raise
        return 0 if rv is None else int(rv)


def _one_line(text: str) -> str:
    return " ".join(text.split())
