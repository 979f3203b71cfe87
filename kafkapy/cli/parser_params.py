"""A tool's argparse parser seen as a Typer/click command: the params shell completion offers.

Each tool parses its own flags with `kafkapy.cli.command.ToolParser` (argparse keeps joptsimple's rules:
unambiguous prefixes, `--flag=value`, Kafka's error wording). This module derives the Typer command
tree's view of the same flags from that parser, so `kafkapy <tool> --<TAB>` completes Kafka's flags,
`--output <TAB>` offers `text json`, and path-like flags complete file names:

- a flag (nargs 0: store_true, store_const, count, custom zero-arg actions) -> a boolean option;
- `action="append"` / `"extend"` / nargs `+`/`*` -> a repeatable option;
- `choices` -> a Literal of the choices; `type=int`/`float` -> int/float; a metavar or dest naming a
  file, path or directory -> Path; anything else -> str;
- positionals -> arguments; argparse.SUPPRESS help -> hidden;
- an action with `completion_values` (set through `offer_values(action, values)`, for flags Kafka validates
  itself such as --entity-type or --time) -> completion offers those values, the type stays str.

The command is built through Typer's public API (a function whose signature carries
`Annotated[..., typer.Option(...)]` parameters), so Typer owns the click param classes.
Only completion and `get_params` use it: it is built on demand, never on a normal run.
Thread-safety: pure functions.
"""

from __future__ import annotations

import argparse
from pathlib import Path
from typing import Annotated, Any, Literal

_PATHLIKE = ("file", "path", "dir", ".properties", ".json", ".log")


def _is_flag(action: argparse.Action) -> bool:
    return action.nargs == 0


def _is_multiple(action: argparse.Action) -> bool:
    return isinstance(action, (argparse._AppendAction, argparse._ExtendAction)) or action.nargs in ("+", "*")


def _value_type(action: argparse.Action) -> Any:
    if action.choices:
        choices = tuple(str(c) for c in action.choices)
        return Literal.__getitem__(choices)  # Literal["a", "b"]
    if action.type in (int, float):
        return action.type
    named = f"{action.metavar or ''} {action.dest}".lower()
    if any(word in named for word in _PATHLIKE):
        return Path
    return str


def offer_values(action: argparse.Action, values: tuple[str, ...]) -> argparse.Action:
    """Mark `action` (what add_argument returned) so completion offers `values`; parsing is unchanged."""
    action.completion_values = values  # type: ignore[attr-defined]
    return action


def offer_flag_values(parser: argparse.ArgumentParser, flag: str, values: tuple[str, ...]) -> None:
    """offer_values for the parser's option `flag`."""
    offer_values(parser._option_string_actions[flag], values)


def _value_completer(values: tuple[str, ...]) -> Any:
    def complete(incomplete: str) -> list[str]:
        return [v for v in values if v.startswith(incomplete)]

    return complete


def _panel(group_title: str | None) -> str | None:
    if not group_title or group_title in ("options", "optional arguments", "positional arguments"):
        return None
    return group_title[:1].upper() + group_title[1:]


def _group_titles(parser: argparse.ArgumentParser) -> dict[int, str | None]:
    return {id(a): g.title for g in parser._action_groups for a in g._group_actions}


def _annotation(action: argparse.Action, panel: str | None) -> tuple[Any, Any]:
    """(annotation, default) of the function parameter standing for `action`."""
    import typer

    help_text = None if action.help == argparse.SUPPRESS else action.help
    hidden = action.help == argparse.SUPPRESS
    metavar = action.metavar if isinstance(action.metavar, str) else None
    if not action.option_strings:
        value: Any = _value_type(action)
        required = action.nargs not in ("?", "*")
        if _is_multiple(action):
            value = list[value]  # type: ignore[valid-type]
        info = typer.Argument(metavar=metavar or action.dest, help=help_text, hidden=hidden,
                              show_default=False)  # fmt: skip
        return Annotated[value if required else value | None, info], (... if required else None)
    if _is_flag(action):
        info = typer.Option(*action.option_strings, help=help_text, hidden=hidden, rich_help_panel=panel)
        return Annotated[bool, info], False
    value = _value_type(action)
    if _is_multiple(action):
        value = list[value]  # type: ignore[valid-type]
    offered = getattr(action, "completion_values", None)
    info = typer.Option(*action.option_strings, metavar=metavar, help=help_text, hidden=hidden,
                        rich_help_panel=panel, show_default=False,
                        autocompletion=_value_completer(offered) if offered else None)  # fmt: skip
    return Annotated[value | None, info], (... if action.required else None)


def typer_command(parser: argparse.ArgumentParser, name: str):
    """The Typer/click command whose params mirror `parser`'s arguments (help and version excluded)."""
    import inspect

    import typer
    import typer.main

    titles = _group_titles(parser)
    params: list[inspect.Parameter] = []
    annotations: dict[str, Any] = {}
    kind = inspect.Parameter.KEYWORD_ONLY
    for i, action in enumerate(parser._actions):
        if isinstance(action, (argparse._HelpAction, argparse._VersionAction)):
            continue
        annotation, default = _annotation(action, _panel(titles.get(id(action))))
        pname = f"arg{i}"
        annotations[pname] = annotation
        params.append(inspect.Parameter(pname, kind, default=default, annotation=annotation))

    def command(**_: Any) -> None:  # never called: the tool's own main() runs
        return None

    command.__signature__ = inspect.Signature(params)  # type: ignore[attr-defined]
    command.__annotations__ = annotations
    app = typer.Typer(add_completion=False)
    app.command(name=name, help=parser.description, context_settings={"help_option_names": ["-h", "--help"]})(
        command
    )
    return typer.main.get_command(app)
