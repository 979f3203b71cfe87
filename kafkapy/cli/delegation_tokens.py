"""`kafkapy delegation-tokens` (kafka-delegation-tokens.sh, DelegationTokenCommand): --create, --renew,
--expire or --describe delegation tokens over a SASL (or mutual-TLS) connection given by --command-config.

Flags and text are Kafka 3.9's: `Calling create token operation with renewers :[User:bob] ,
max-life-time-period :-1`, `Created delegation token with tokenId : <id>` and the token table; `Calling
renew token operation with hmac :<hmac> , renew-time-period :<ms>` then `Completed renew operation. New
expiry date : <yyyy-MM-ddTHH:mm>` (no final newline, as Kafka's printf); expire likewise; `Calling describe
token operation for current user.` (or `for owners: [...]`), `Total number of tokens : <n>` and the table.
--output json: the token(s) (tools/delegation_tokens.token_json) or {"expiryTimestamp": ms}.
Broker refusals (DELEGATION_TOKEN_REQUEST_NOT_ALLOWED over PLAINTEXT, ..._AUTH_DISABLED, ..._OWNER_MISMATCH)
are one line on stderr, exit 1. Thread-safety: one run per call, main thread.
"""

from __future__ import annotations

import argparse
from typing import TYPE_CHECKING, Any

from kafkapy.cli.command import ToolError, ToolParser, UsageError, missing_argument, require_exactly_one, run

if TYPE_CHECKING:
    from kafkapy.client.admin import AdminClient

ACTIONS = ("--create", "--renew", "--expire", "--describe")
# Kafka's checkInvalidArgs: options each action refuses.
INVALID = {
    "create": ("hmac", "renew_time_period", "expiry_time_period"),
    "renew": ("renewer_principal", "max_life_time_period", "expiry_time_period", "owner_principal"),
    "expire": ("max_life_time_period", "renew_time_period", "owner_principal"),
    "describe": ("renew_time_period", "max_life_time_period", "hmac", "expiry_time_period"),
}


def build_parser() -> ToolParser:
    p = ToolParser("delegation-tokens", "This tool helps to create, renew, expire, or describe delegation tokens.")
    p.add_bootstrap_server(required=False, aliases=(), help="REQUIRED: server(s) to use for bootstrapping.")
    p.add_command_config(help="REQUIRED: A property file containing configs to be passed to Admin Client. Token "
                         "management operations are allowed in secure mode only. This config file is used to pass "
                         "security related configs.")
    p.add_argument("--create", action="store_true",
                   help="Create a new delegation token. Use --renewer-principal option to pass renewer principals.")
    p.add_argument("--renew", action="store_true",
                   help="Renew delegation token. Use --renew-time-period option to set renew time period.")
    p.add_argument("--expire", action="store_true",
                   help="Expire delegation token. Use --expiry-time-period option to expire the token.")
    p.add_argument("--describe", action="store_true",
                   help="Describe delegation tokens for the given principals. Use --owner-principal to pass "
                   "owner/renewer principals. If --owner-principal option is not supplied, all the user-owned "
                   "tokens and tokens where the user has Describe permissions will be returned.")
    p.add_argument("--owner-principal", action="append", metavar="<String>",
                   help="owner is a Kafka principal. They should be in principalType:name format.")
    p.add_argument("--renewer-principal", action="append", metavar="<String>",
                   help="renewer is a Kafka principal. They should be in principalType:name format.")
    p.add_argument("--max-life-time-period", type=int, metavar="<Long>",
                   help="Max life period for the token in milliseconds. If the value is -1, then token max life "
                   "time will default to the server side config value of (delegation.token.max.lifetime.ms).")
    p.add_argument("--renew-time-period", type=int, metavar="<Long>",
                   help="Renew time period in milliseconds. If the value is -1, then the renew time period will "
                   "default to the server side config value of (delegation.token.expiry.time.ms).")
    p.add_argument("--expiry-time-period", type=int, metavar="<Long>",
                   help="Expiry time period in milliseconds. If the value is -1, then the token will get "
                   "invalidated immediately.")
    p.add_argument("--hmac", metavar="<String>", help="HMAC of the delegation token")
    return p


def _check_args(args: argparse.Namespace, action: str) -> None:
    for flag, dest in (("--bootstrap-server", "bootstrap_server"), ("--command-config", "command_config")):
        if getattr(args, dest) is None:
            raise missing_argument(flag.lstrip("-"))
    required = {"create": ("max_life_time_period",), "renew": ("hmac", "renew_time_period"),
                "expire": ("hmac", "expiry_time_period"), "describe": ()}[action]
    for dest in required:
        if getattr(args, dest) is None:
            raise missing_argument(dest.replace("_", "-"))
    for dest in INVALID[action]:
        if getattr(args, dest) is not None:
            raise UsageError(f"Option \"[{action}]\" can't be used with option \"[{dest.replace('_', '-')}]\"")


def execute(args: argparse.Namespace, out: Any) -> int:
    from kafkapy.cli.properties import load_properties
    from kafkapy.tools import delegation_tokens as dt
    from kafkapy.tools.tool_support import admin_client

    action = require_exactly_one(args, ACTIONS, "Command must include exactly one action: --create, --renew, "
                                                "--expire or --describe").lstrip("-")
    _check_args(args, action)
    try:
        owners = dt.parse_principals(args.owner_principal)
        renewers = dt.parse_principals(args.renewer_principal)
    except dt.DelegationTokenToolError as e:
        raise ToolError(str(e)) from e
    props = load_properties(args.command_config)
    admin = admin_client(args.bootstrap_server, props)
    try:
        return _run(action, args, out, admin, owners, renewers)
    except dt.DelegationTokenToolError as e:
        raise ToolError(str(e)) from e
    finally:
        admin.close()


def _run(action: str, args: argparse.Namespace, out: Any, admin: AdminClient, owners: list, renewers: list) -> int:
    from kafkapy.tools import delegation_tokens as dt

    text = not out.json
    if action == "create":
        if text:
            out.line(f"Calling create token operation with renewers :{dt.java_list(renewers)} , "
                     f"max-life-time-period :{args.max_life_time_period}")
        token = dt.create(admin, renewers, args.max_life_time_period, owners[0] if owners else None)
        if not text:
            out.document(dt.token_json(token))
            return 0
        out.line(f"Created delegation token with tokenId : {token.token_id}")
        out.write(dt.token_table([token]))
    elif action in ("renew", "expire"):
        period = args.renew_time_period if action == "renew" else args.expiry_time_period
        if text:
            what = "renew-time-period" if action == "renew" else "expire-time-period"
            out.line(f"Calling {action} token operation with hmac :{args.hmac} , {what} :{period}")
        expiry = dt.renew(admin, args.hmac, period) if action == "renew" else dt.expire(admin, args.hmac, period)
        if not text:
            out.document({"expiryTimestamp": expiry})
            return 0
        out.write(f"Completed {action} operation. New expiry date : {dt.java_date(expiry)}")
    else:
        if text:
            out.line("Calling describe token operation for current user." if not owners else
                     f"Calling describe token operation for owners: {dt.java_list(owners)}")
        tokens = dt.describe(admin, owners)
        if not text:
            out.document([dt.token_json(t) for t in tokens])
            return 0
        out.write(f"Total number of tokens : {len(tokens)}")
        out.write(dt.token_table(tokens))
    return 0


def main(argv: list[str]) -> int:
    return run(build_parser(), argv, execute)
