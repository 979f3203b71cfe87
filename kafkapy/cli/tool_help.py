"""`kafkapy <tool> --help`: a tool's flags rendered with Rich, in the look of the Typer tree's help.

Reads the tool's argparse parser (kafkapy.cli.command.ToolParser): usage, description, then one panel
per argument group ("Options", "Common options", ...) listing every flag with its aliases
(`--bootstrap-server, --broker-list`), its metavar in Kafka's words (`<server(s) to connect to>`), a
`*` for required flags, and the help text. Flag names never wrap or get cut; the help column wraps.
On a terminal the panels are coloured. Piped (or KAFKAPY_PLAIN=1, TERM=dumb) the help is plain text with no
boxes: each flag with its aliases and metavar on a line of its own, never split, and its help below, indented
and wrapped at $COLUMNS (80) without breaking words or hyphenated flag names.
Thread-safety: called once per process from the main thread.
"""

from __future__ import annotations

import argparse
from typing import IO


def _metavar(action: argparse.Action) -> str:
    if action.nargs == 0:
        return ""
    if action.choices:
        return "{" + ",".join(str(c) for c in action.choices) + "}"
    if not action.option_strings:
        return ""
    metavar = action.metavar if isinstance(action.metavar, str) else action.dest.upper()
    if action.nargs == "?":
        return f"[{metavar}]"
    if action.nargs in ("+", "*"):
        return f"{metavar} ..."
    return metavar


def _names(action: argparse.Action) -> str:
    if action.option_strings:
        return ", ".join(action.option_strings)
    return action.metavar if isinstance(action.metavar, str) else action.dest


def _usage(parser: argparse.ArgumentParser) -> str:
    positionals = [_names(a) if a.required else f"[{_names(a)}]" for a in parser._actions if not a.option_strings]
    required = [f"{a.option_strings[0]} {_metavar(a)}" for a in parser._actions if a.option_strings and a.required]
    return " ".join([parser.prog, *required, "[flags...]", *positionals])


def _rows(action: argparse.Action) -> list[tuple[str, str, str]]:
    """(flags, metavar, help) rows for one action; a subcommand action lists each subcommand."""
    if isinstance(action, argparse._SubParsersAction):
        return [(choice.dest, "", choice.help or "") for choice in action._choices_actions]
    return [(_names(action), _metavar(action), action.help or "")]


def _panel_title(title: str | None) -> str:
    if not title or title in ("optional arguments", "options"):
        return "Options"
    if title == "positional arguments":
        return "Arguments"
    return title[:1].upper() + title[1:]


def _plain(parser: argparse.ArgumentParser, file: IO[str]) -> None:
    import os
    import shutil
    import textwrap

    width = max(40, int(os.environ.get("COLUMNS") or 0) or shutil.get_terminal_size((80, 24)).columns)

    def wrap(text: str, indent: str) -> list[str]:
        return textwrap.wrap(text, width=width - 1, initial_indent=indent, subsequent_indent=indent,
                             break_long_words=False, break_on_hyphens=False) or [indent.rstrip()]

    lines = [f"Usage: {_usage(parser)}", ""]
    if parser.description:
        lines += wrap(parser.description, "") + [""]
    expand = parser._get_formatter()._expand_help
    groups = sorted(parser._action_groups, key=lambda g: g.title != "positional arguments")
    for group in groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        if not actions:
            continue
        lines.append(f"{_panel_title(group.title)}:")
        for a in actions:
            required = " (required)" if a.required and a.option_strings else ""
            for names, metavar, help_text in _rows(a):
                lines.append(f"  {names}{' ' + metavar if metavar else ''}{required}")
                if help_text and not isinstance(a, argparse._SubParsersAction):
                    help_text = expand(a)
                if help_text:
                    lines += wrap(help_text, " " * 8)
        lines.append("")
    if parser.epilog:
        lines += wrap(parser.epilog, "") + [""]
    try:
        file.write("\n".join(lines))
        file.flush()
    except BrokenPipeError:  # `--help | head`: end quietly
        from kafkapy.cli.render import silence_stdout

        silence_stdout()


def _on_terminal(file: IO[str]) -> bool:
    from kafkapy.cli.render import _forced_terminal, _isatty, _plain_forced

    return not _plain_forced() and (_forced_terminal("stdout") or _isatty(file))


def print_help(parser: argparse.ArgumentParser, file: IO[str]) -> None:
    if not _on_terminal(file):
        _plain(parser, file)
        return
    from rich.console import Console, Group
    from rich.padding import Padding
    from rich.panel import Panel
    from rich.table import Table
    from rich.text import Text

    class _Console(Console):
        def on_broken_pipe(self) -> None:  # `--help | head`: end quietly (Rich would exit 1)
            from kafkapy.cli.render import silence_stdout

            silence_stdout()

    console = _Console(file=file, highlight=False)
    parts: list = [Padding(Text.assemble(("Usage: ", "yellow"), (_usage(parser), "bold")), (1, 1, 0, 1))]
    if parser.description:
        parts.append(Padding(Text(parser.description), (1, 1, 1, 1)))
    # The flag column fits the longest flag with its aliases (up to 40 columns), so names are not cut.
    widest = max((len(_names(a)) for a in parser._actions), default=10)
    expand = parser._get_formatter()._expand_help  # argparse's %(default)s substitution
    groups = sorted(parser._action_groups, key=lambda g: g.title != "positional arguments")
    for group in groups:
        actions = [a for a in group._group_actions if a.help != argparse.SUPPRESS]
        if not actions:
            continue
        table = Table.grid(padding=(0, 1), expand=True)
        table.add_column(no_wrap=True, width=1)
        table.add_column(width=min(max(widest, 28), 40), overflow="fold")
        table.add_column(ratio=1, overflow="fold")
        for a in actions:
            required = Text("*", style="red") if a.required and a.option_strings else Text("")
            for names, metavar, help_text in _rows(a):
                flags = Text(names, style="bold cyan")
                if metavar:
                    flags.append(" " + metavar, style="yellow")
                if help_text and not isinstance(a, argparse._SubParsersAction):
                    help_text = expand(a)  # argparse's %(default)s substitution
                table.add_row(required, flags, Text(help_text))
        parts.append(Panel(table, title=_panel_title(group.title), title_align="left", border_style="dim"))
    if parser.epilog:
        parts.append(Padding(Text(parser.epilog), (0, 1)))
    console.print(Group(*parts))
