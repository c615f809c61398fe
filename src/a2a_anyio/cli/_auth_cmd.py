"""``auth login``, ``auth status`` and ``auth logout``: OAuth 2.0 sign-ins per agent, kept in
the token file (``a2a_anyio._token_file``) and sent by every later command to that agent."""

from __future__ import annotations

import argparse
import dataclasses
import time
from collections.abc import Callable
from typing import Any

from a2a_anyio._auth_card import CardAuth
from a2a_anyio._oauth import OAuth2Flow, TokenSet
from a2a_anyio._oauth_user import DeviceCode
from a2a_anyio._token_file import Login, TokenFile
from a2a_anyio.cli._context import Context, Target
from a2a_anyio.cli._errors import OK, UsageError


def add_commands(
    sub: Any,
    add: Callable[..., argparse.ArgumentParser],
    leaf: Callable[[argparse.ArgumentParser], object],
) -> None:
    """The ``auth`` command and its actions, on the command parser ``sub`` (``add`` makes a
    command's parser, ``leaf`` gives it the global options)."""
    p = add(
        sub, "auth", None, "sign in to agents with OAuth 2.0, and keep the sign-in",
        "Sign in to an agent whose card asks for OAuth 2.0 or OpenID Connect: the tokens are "
        "kept per agent in a file only you may read (0600, $A2A_ANYIO_TOKENS, else "
        "~/.config/a2a-anyio/tokens.json), refreshed when they expire, and sent by every "
        "later command to that agent (unless --bearer is given). --debug never shows them.",
    )  # fmt: skip
    asub = p.add_subparsers(dest="action", metavar="ACTION", required=True, parser_class=type(p))
    login = add(
        asub, "login", auth_login, "sign in to an agent (device code, or --browser)",
        "Sign in to AGENT as its card says (its OAuth 2.0 flow, or its OpenID Connect "
        "discovery document): by default with a device code (open the URL shown, type the "
        "code); with --browser, in your browser, which comes back to a port of 127.0.0.1.",
    )  # fmt: skip
    login.add_argument("agent_name", nargs="?", metavar="AGENT", help="the agent (else -a)")
    login.add_argument(
        "--client-id", metavar="ID", required=True,
        help="this program's client id at the agent's authorization server",
    )  # fmt: skip
    login.add_argument(
        "--browser", action="store_true",
        help="sign in with the browser (authorization code with PKCE) instead of a device code",
    )  # fmt: skip
    login.add_argument(
        "--port", type=int, default=0, metavar="PORT",
        help="with --browser: the port of 127.0.0.1 the browser comes back to (default: any)",
    )  # fmt: skip
    login.add_argument(
        "--trust-issuer", action="append", default=[], metavar="URL",
        help="an authorization server on another origin than the agent's that the card may "
        "name (repeatable)",
    )  # fmt: skip
    leaf(login)
    status = add(asub, "status", auth_status, "show the sign-ins kept (never the tokens)")
    status.add_argument("agent_name", nargs="?", metavar="AGENT", help="only this agent")
    leaf(status)
    logout = add(asub, "logout", auth_logout, "forget the sign-in to an agent")
    logout.add_argument("agent_name", nargs="?", metavar="AGENT", help="the agent (else -a)")
    leaf(logout)


def login_key(target: Target) -> str:
    """What a sign-in is kept under: the agent's URL."""
    return target.url


async def auth_login(ctx: Context) -> int:
    a = ctx.args
    target = ctx.target(a.agent_name)
    got: list[TokenSet] = []

    def on_code(code: DeviceCode) -> None:
        where = code.verification_uri_complete or code.verification_uri
        ctx.p.note(f"to sign in, open {where} and enter the code {code.user_code}")

    def on_tokens(tokens: TokenSet) -> None:
        ctx.debug.secrets.update(t for t in (tokens.access_token, tokens.refresh_token) if t)
        got.append(tokens)

    auth = CardAuth(
        client_id=a.client_id,
        on_device_code=None if a.browser else on_code,
        open_url=_browser(ctx) if a.browser else None,
        on_tokens=on_tokens,
        trusted_issuers=a.trust_issuer,
        redirect_port=a.port,
    )
    options = {**target.options, "auth": auth, "timeout": None}
    client = await ctx.client(dataclasses.replace(target, options=options))  # type: ignore[arg-type]
    await client.authenticate()
    flow = next((f for f in auth.chosen or () if isinstance(f, OAuth2Flow)), None)
    if flow is None or not got:
        raise UsageError(f"{target.name}'s card asks for no OAuth 2.0 sign-in")
    TokenFile().put(login_key(target), Login(flow.token_url, flow.client_id, got[-1]))
    ctx.p.note(f"signed in to {target.name}{_expiry(got[-1])}")
    return OK


def _browser(ctx: Context) -> Callable[[str], object]:
    import webbrowser

    import anyio.to_thread

    async def open_url(url: str) -> None:
        ctx.p.note(f"opening the browser to sign in; if it does not open, visit {url}")
        await anyio.to_thread.run_sync(webbrowser.open, url)

    return open_url


async def auth_status(ctx: Context) -> int:
    logins = TokenFile().read()
    if ctx.args.agent_name:
        key = login_key(ctx.target(ctx.args.agent_name))
        logins = {k: v for k, v in logins.items() if k == key}
    rows = [_row(agent, login) for agent, login in sorted(logins.items())]
    if ctx.p.json_mode:
        ctx.p.json(rows)
    elif not rows:
        ctx.p.note("no sign-in kept")
    else:
        for row in rows:
            ctx.p.line(
                f"{row['agent']}: client {row['client_id']} at {row['token_url']}; "
                f"{row['state']}{'' if row['refreshable'] else ', no refresh token'}"
            )
    return OK


def _row(agent: str, login: Login) -> dict[str, Any]:
    expires = login.tokens.expires_at
    left = None if expires is None else expires - time.time()
    state = (
        "valid" if left is None else f"valid for {int(left)} s" if left > 0 else "expired"
    )  # fmt: skip
    return {
        "agent": agent,
        "client_id": login.client_id,
        "token_url": login.token_url,
        "scope": login.tokens.scope,
        "state": state,
        "refreshable": bool(login.tokens.refresh_token),
    }


async def auth_logout(ctx: Context) -> int:
    target = ctx.target(ctx.args.agent_name)
    store = TokenFile()
    key = login_key(target)
    if store.get(key) is None:
        ctx.p.note(f"no sign-in kept for {target.name}")
        return OK
    store.put(key, None)
    ctx.p.note(f"signed out of {target.name}")
    return OK


def _expiry(tokens: TokenSet) -> str:
    if tokens.expires_at is None:
        return ""
    return f" (the token is valid for {int(tokens.expires_at - time.time())} s)"
