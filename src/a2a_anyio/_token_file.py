"""Sign-ins kept between runs: per agent, the tokens an OAuth 2.0 sign-in got and what
refreshes them, in one JSON file only its user may read or write (0600; a folder made for
it is 0700) under the user's config directory (``$A2A_ANYIO_TOKENS``, else
``$XDG_CONFIG_HOME/a2a-anyio/tokens.json``, ``~/.config/a2a-anyio/tokens.json``)."""

from __future__ import annotations

import contextlib
import json
import os
import stat
import tempfile
from collections.abc import Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from a2a_anyio._oauth import TokenSet
from a2a_anyio._oauth_user import OAuth2Login

#: The most a token file may hold: it keeps a few KiB per agent.
MAX_TOKEN_FILE_BYTES = 4 * 1024 * 1024


def default_path() -> Path:
    """Where sign-ins are kept."""
    named = os.environ.get("A2A_ANYIO_TOKENS")
    if named:
        return Path(named).expanduser()
    config_home = Path(os.environ.get("XDG_CONFIG_HOME") or Path.home() / ".config")
    return config_home / "a2a-anyio" / "tokens.json"


@dataclass(frozen=True, slots=True)
class Login:
    """One agent's sign-in: its tokens, and the token URL and client that refresh them."""

    token_url: str
    client_id: str | None
    tokens: TokenSet

    def to_dict(self) -> dict[str, Any]:
        return {"token_url": self.token_url, "client_id": self.client_id, **self.tokens.to_dict()}

    @classmethod
    def from_dict(cls, value: Any) -> Login:
        if not isinstance(value, dict) or not isinstance(value.get("token_url"), str):
            raise ValueError("a kept sign-in has no token URL")
        client_id = value.get("client_id")
        if client_id is not None and not isinstance(client_id, str):
            raise ValueError("a kept sign-in has a client_id that is not a str")
        return cls(value["token_url"], client_id, TokenSet.from_dict(value))


class TokenFile:
    """The sign-ins of every agent, keyed by the agent's URL."""

    def __init__(self, path: Path | None = None) -> None:
        self.path = path or default_path()

    def read(self) -> dict[str, Login]:
        """Every sign-in kept; ValueError naming the file when it is not one of ours or
        others may read it."""
        try:
            fd = os.open(self.path, os.O_RDONLY)
        except FileNotFoundError:
            return {}
        with os.fdopen(fd, "rb") as f:
            mode = os.fstat(f.fileno()).st_mode
            if os.name == "posix" and mode & (stat.S_IRWXG | stat.S_IRWXO):
                raise ValueError(
                    f"{self.path}: other users may read or write it: it holds tokens "
                    f"(chmod 600 {self.path}, or delete it and sign in again)"
                )
            data = f.read(MAX_TOKEN_FILE_BYTES + 1)
        if len(data) > MAX_TOKEN_FILE_BYTES:
            raise ValueError(f"{self.path}: larger than {MAX_TOKEN_FILE_BYTES} bytes")
        try:
            value = json.loads(data)
            agents = value["agents"]
            return {str(k): Login.from_dict(v) for k, v in agents.items()}
        except (ValueError, KeyError, TypeError, AttributeError) as exc:
            raise ValueError(f"{self.path}: not a token file of a2a-anyio ({exc})") from exc

    def get(self, agent: str) -> Login | None:
        return self.read().get(agent)

    def put(self, agent: str, login: Login | None) -> None:
        """Keep ``login`` for ``agent`` (None: forget it), rewriting the file at once."""
        logins = self.read()
        if login is None:
            logins.pop(agent, None)
        else:
            logins[agent] = login
        self._write({"agents": {k: v.to_dict() for k, v in sorted(logins.items())}})

    def _write(self, value: Any) -> None:
        folder = self.path.parent
        folder.mkdir(mode=0o700, parents=True, exist_ok=True)
        fd, temp = tempfile.mkstemp(dir=folder, prefix=".tokens-", suffix=".tmp")  # mode 0600
        try:
            with os.fdopen(fd, "w", encoding="utf-8") as f:
                json.dump(value, f, indent=2)
                f.write("\n")
            os.replace(temp, self.path)
        except BaseException:
            with contextlib.suppress(OSError):
                os.unlink(temp)
            raise

    def auth(
        self, agent: str, how: str, seen: Callable[[TokenSet], object] | None = None
    ) -> OAuth2Login | None:
        """An auth scheme that sends ``agent``'s kept tokens and keeps those that renew
        them; None when there is no sign-in. ``how`` says how to sign in again; ``seen`` is
        told every token set (a debug log hides them)."""
        login = self.get(agent)
        if login is None:
            return None
        if seen is not None:
            seen(login.tokens)

        def keep(tokens: TokenSet) -> None:
            if seen is not None:
                seen(tokens)
            self.put(agent, Login(login.token_url, login.client_id, tokens))

        return OAuth2Login(login.token_url, login.client_id, login.tokens, how=how, on_tokens=keep)
