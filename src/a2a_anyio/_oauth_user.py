"""OAuth 2.0 flows in which a user signs in: device code (RFC 8628), authorization code with
PKCE (RFC 7636) and a loopback redirect (RFC 8252), and a login kept from before that only
refreshes."""

from __future__ import annotations

import base64
import hashlib
import inspect
import json
import math
import secrets
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any
from urllib.parse import parse_qs, urlencode, urlsplit

import anyio
from anyio.abc import SocketStream

from a2a_anyio._auth import FormPoster
from a2a_anyio._errors import A2AAuthError, A2AProtocolError, shown
from a2a_anyio._oauth import DEVICE_CODE, OAuth2Flow, TokenError, TokenSet, check_url

#: How long the loopback redirect waits for the browser, unless told.
DEFAULT_LOGIN_WAIT = 300.0
_MAX_REQUEST_HEAD = 16 * 1024


async def _called(function: Callable[..., Any], *args: Any) -> None:
    result = function(*args)
    if inspect.isawaitable(result):
        await result


@dataclass(frozen=True, slots=True)
class DeviceCode:
    """What the user needs to sign in on another device: open ``verification_uri`` and type
    ``user_code`` (or open ``verification_uri_complete``, which holds it), within
    ``expires_in`` seconds."""

    user_code: str
    verification_uri: str
    verification_uri_complete: str | None
    expires_in: float


class OAuth2DeviceCode(OAuth2Flow):
    """OAuth 2.0 device authorization (RFC 8628), for a CLI or a device with no browser:
    ``on_code`` (sync or async) is called with a ``DeviceCode`` to show the user, then the
    token endpoint is polled until the user has signed in (within the call's deadline). The
    tokens are then refreshed with the refresh token, and the user asked again only when it
    no longer works."""

    _kind = "OAuth2DeviceCode"

    def __init__(
        self,
        device_authorization_url: str,
        token_url: str,
        client_id: str,
        *,
        on_code: Callable[[DeviceCode], object],
        client_secret: str | None = None,
        scopes: Sequence[str] = (),
        **options: Any,
    ) -> None:
        check_url(f"{self._kind} device_authorization_url", device_authorization_url)
        self.device_authorization_url = device_authorization_url
        self.on_code = on_code
        super().__init__(token_url, client_id, client_secret, scopes, **options)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """Ask for a device code, show it (``on_code``), poll until the user signed in."""
        form = {"client_id": self.client_id or "", **self._scope_form()}
        if self.client_secret is not None:
            form["client_secret"] = self.client_secret
        url = self.device_authorization_url
        status, body = await post_form(url, form)
        device_code, code, interval = _device_answer(status, body, url)
        await _called(self.on_code, code)
        with anyio.move_on_after(code.expires_in):
            while True:
                await anyio.sleep(interval)
                try:
                    return await self.token_request(
                        post_form, {"grant_type": DEVICE_CODE, "device_code": device_code}
                    )
                except TokenError as exc:
                    if exc.error == "authorization_pending":
                        continue
                    if exc.error == "slow_down":
                        interval += 5  # RFC 8628 section 3.5
                        continue
                    raise
        raise A2AAuthError("the device code expired before the user signed in", status_code=401)


def _device_answer(status: int, body: bytes, url: str) -> tuple[str, DeviceCode, float]:
    where = shown(url, 200)
    if status != 200:
        raise A2AAuthError(
            f"the device authorization endpoint {where} refused the client", status_code=status
        )
    try:
        value = json.loads(body)
    except ValueError:
        value = None
    if not isinstance(value, dict):
        raise A2AProtocolError(f"bad device authorization response from {where}")
    device_code, user_code = value.get("device_code"), value.get("user_code")
    uri, complete = value.get("verification_uri"), value.get("verification_uri_complete")
    expires, interval = value.get("expires_in", 600), value.get("interval", 5)
    texts = (device_code, user_code, uri)
    if not all(isinstance(t, str) and t and t.isprintable() and len(t) < 2048 for t in texts):
        raise A2AProtocolError(f"bad device authorization response from {where}")
    for uri_value in (uri, complete):  # shown to the user: printable, http(s)
        if uri_value is not None and (
            not isinstance(uri_value, str)
            or not uri_value.isprintable()
            or len(uri_value) > 2048
            or urlsplit(uri_value).scheme not in ("http", "https")
        ):
            raise A2AProtocolError(f"bad device authorization response from {where}: bad URI")
    numbers = (expires, interval)
    if not all(
        isinstance(n, (int, float)) and not isinstance(n, bool) and math.isfinite(n) and n >= 0
        for n in numbers
    ):
        raise A2AProtocolError(f"bad device authorization response from {where}: bad numbers")
    assert isinstance(device_code, str) and isinstance(user_code, str) and isinstance(uri, str)
    code = DeviceCode(user_code, uri, complete, min(float(expires), 3600.0))
    return device_code, code, min(max(float(interval), 1.0), 60.0)


class OAuth2AuthorizationCode(OAuth2Flow):
    """OAuth 2.0 authorization code with PKCE (S256) and a loopback redirect, for a CLI or a
    desktop app: the client listens on 127.0.0.1 (``redirect_port``, 0: any free port),
    ``open_url`` (sync or async; by default the system's browser) opens the authorization
    URL, and the code the browser brings back is exchanged for tokens. Waits at most
    ``wait`` seconds for the browser (and the call's deadline)."""

    _kind = "OAuth2AuthorizationCode"

    def __init__(
        self,
        authorization_url: str,
        token_url: str,
        client_id: str,
        *,
        open_url: Callable[[str], object] | None = None,
        client_secret: str | None = None,
        scopes: Sequence[str] = (),
        redirect_port: int = 0,
        redirect_path: str = "/callback",
        wait: float = DEFAULT_LOGIN_WAIT,
        **options: Any,
    ) -> None:
        check_url(f"{self._kind} authorization_url", authorization_url)
        if not redirect_path.startswith("/"):
            raise ValueError("redirect_path must start with '/'")
        self.authorization_url = authorization_url
        self.open_url = open_url
        self.redirect_port = redirect_port
        self.redirect_path = redirect_path
        self.wait = wait
        super().__init__(token_url, client_id, client_secret, scopes, **options)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """Open the authorization URL, wait for the code on the loopback, exchange it."""
        verifier = secrets.token_urlsafe(48)
        challenge = base64.urlsafe_b64encode(hashlib.sha256(verifier.encode()).digest())
        state = secrets.token_urlsafe(24)
        listener = await anyio.create_tcp_listener(
            local_host="127.0.0.1", local_port=self.redirect_port
        )
        async with listener:
            port = listener.extra(anyio.abc.SocketAttribute.local_port)
            redirect_uri = f"http://127.0.0.1:{port}{self.redirect_path}"
            query = {
                "response_type": "code",
                "client_id": self.client_id or "",
                "redirect_uri": redirect_uri,
                "code_challenge": challenge.decode().rstrip("="),
                "code_challenge_method": "S256",
                "state": state,
                **self._scope_form(),
            }
            sep = "&" if urlsplit(self.authorization_url).query else "?"
            url = self.authorization_url + sep + urlencode(query)
            code = await self._wait_for_code(listener, url, state)
        form = {
            "grant_type": "authorization_code",
            "code": code,
            "redirect_uri": redirect_uri,
            "code_verifier": verifier,
        }
        return await self.token_request(post_form, form)

    async def _wait_for_code(self, listener: Any, url: str, state: str) -> str:
        got: list[str | A2AAuthError] = []
        done = anyio.Event()

        async def serve(stream: SocketStream) -> None:
            async with stream:
                answer = _callback(await _read_head(stream), self.redirect_path, state)
                if answer is None:
                    await stream.send(_page(404, "Not found."))
                    return
                got.append(answer)
                ok = isinstance(answer, str)
                text = "Signed in: you can close this window." if ok else "Sign-in failed."
                await stream.send(_page(200 if ok else 400, text))
                done.set()

        async with anyio.create_task_group() as group:
            group.start_soon(listener.serve, serve)
            await _called(self.open_url or _browser, url)
            with anyio.move_on_after(self.wait):
                await done.wait()
            group.cancel_scope.cancel()
        if not got:
            raise A2AAuthError("no answer from the browser in time to sign in", status_code=401)
        if isinstance(got[0], A2AAuthError):
            raise got[0]
        return got[0]


async def _read_head(stream: SocketStream) -> bytes:
    head = b""
    with anyio.move_on_after(10):
        while b"\r\n\r\n" not in head and len(head) < _MAX_REQUEST_HEAD:
            try:
                head += await stream.receive()
            except (anyio.EndOfStream, anyio.BrokenResourceError):
                break
    return head


def _callback(head: bytes, path: str, state: str) -> str | A2AAuthError | None:
    """The code of a redirect to ``path`` with ``state``, an error for a redirect that
    brings none, None for any other request (a browser asking for its icon)."""
    line = head.split(b"\r\n", 1)[0].decode("latin-1")
    parts = line.split(" ")
    if len(parts) != 3 or parts[0] != "GET":
        return None
    target = urlsplit(parts[1])
    if target.path != path:
        return None
    query = parse_qs(target.query)
    if query.get("state", [""])[0] != state:
        return A2AAuthError("the sign-in redirect holds the wrong state", status_code=401)
    if "code" not in query:
        error = query.get("error", ["no code"])[0]
        return A2AAuthError(f"sign-in refused: {shown(error, 64)}", status_code=401)
    return query["code"][0]


def _page(status: int, text: str) -> bytes:
    body = f"<!doctype html><title>a2a-anyio</title><p>{text}</p>".encode()
    reason = {200: "OK", 400: "Bad Request", 404: "Not Found"}[status]
    return (
        f"HTTP/1.1 {status} {reason}\r\nContent-Type: text/html; charset=utf-8\r\n"
        f"Content-Length: {len(body)}\r\nConnection: close\r\n\r\n"
    ).encode() + body


async def _browser(url: str) -> None:
    import webbrowser

    await anyio.to_thread.run_sync(webbrowser.open, url)


class OAuth2Login(OAuth2Flow):
    """Tokens from an earlier sign-in (``tokens``), refreshed with their refresh token; when
    that no longer works, ``A2AAuthError`` says to sign in again (``how``)."""

    _kind = "OAuth2Login"

    def __init__(
        self,
        token_url: str,
        client_id: str | None,
        tokens: TokenSet,
        *,
        how: str = "sign in again",
        **options: Any,
    ) -> None:
        self.how = how
        super().__init__(token_url, client_id, tokens=tokens, **options)

    async def obtain(self, post_form: FormPoster) -> TokenSet:
        """No new tokens without the user: ``A2AAuthError`` says how to sign in again."""
        raise A2AAuthError(f"the sign-in has expired: {self.how}", status_code=401)
