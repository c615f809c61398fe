"""A real OAuth 2.0 / OpenID Connect authorization server for the tests, built on Authlib.

Run as a process: ``python -m tests.oauth.server`` prints ``READY <port>`` and serves on
127.0.0.1 until stdin closes. It offers client credentials, authorization code with PKCE
(S256, required), device code (RFC 8628), refresh tokens (rotated), JWT bearer assertions
(RFC 7523), token exchange (RFC 8693), introspection (RFC 7662), and both discovery
documents (OpenID Connect and RFC 8414).

The user "alice" is always signed in: ``/authorize`` approves at once (the browser of a test
is an HTTP client that follows the redirect), and ``POST /device`` with ``user_code``
approves a device. ``POST /_control`` changes the server for a test: ``lifetime`` (seconds
an access token lives), ``revoke`` (every access token, refresh tokens kept),
``revoke_refresh`` (refresh tokens too), ``deny`` (refuse the next device approvals).
"""

from __future__ import annotations

import os
import secrets
import sys
import threading
import time
from typing import Any

os.environ.setdefault("AUTHLIB_INSECURE_TRANSPORT", "1")  # plain http on 127.0.0.1

from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc6749.errors import InvalidGrantError, InvalidRequestError
from authlib.oauth2.rfc7523 import JWTBearerGrant
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc7662 import IntrospectionEndpoint
from authlib.oauth2.rfc8628 import (
    DeviceAuthorizationEndpoint,
    DeviceCodeGrant,
    DeviceCredentialDict,
)
from flask import Flask, jsonify, request
from joserfc.jwk import ECKey
from werkzeug.serving import make_server

TOKEN_EXCHANGE = "urn:ietf:params:oauth:grant-type:token-exchange"
ACCESS_TOKEN_TYPE = "urn:ietf:params:oauth:token-type:access_token"
ALL_GRANTS = (
    "client_credentials", "authorization_code", "refresh_token",
    DeviceCodeGrant.GRANT_TYPE, JWTBearerGrant.GRANT_TYPE, TOKEN_EXCHANGE,
)  # fmt: skip


class User:
    def __init__(self, name: str) -> None:
        self.name = name

    def get_user_id(self) -> str:
        return self.name


ALICE = User("alice")


class Client(ClientMixin):
    def __init__(self, client_id: str, secret: str | None, public_key: Any = None) -> None:
        self.client_id = client_id
        self.secret = secret
        self.public_key = public_key

    def get_client_id(self) -> str:
        return self.client_id

    def get_default_redirect_uri(self) -> None:
        return None

    def get_allowed_scope(self, scope: str | None) -> str:
        return scope or ""

    def check_redirect_uri(self, redirect_uri: str) -> bool:
        # A native app's loopback redirect, any port (RFC 8252 section 7.3).
        return redirect_uri.startswith("http://127.0.0.1:")

    def check_client_secret(self, client_secret: str) -> bool:
        return self.secret is not None and secrets.compare_digest(self.secret, client_secret)

    def check_endpoint_auth_method(self, method: str, endpoint: str) -> bool:
        if self.secret is None:
            return method == "none"
        return method in ("client_secret_basic", "client_secret_post")

    def check_response_type(self, response_type: str) -> bool:
        return response_type == "code"

    def check_grant_type(self, grant_type: str) -> bool:
        return grant_type in ALL_GRANTS


class Token(dict[str, Any]):
    def check_client(self, client: Client) -> bool:
        return bool(self["client_id"] == client.get_client_id())

    def get_scope(self) -> str:
        return str(self.get("scope", ""))

    def get_expires_in(self) -> int:
        return int(self["expires_in"])

    def is_expired(self) -> bool:
        return time.time() >= self["issued_at"] + self["expires_in"]

    def is_revoked(self) -> bool:
        return bool(self.get("revoked"))

    def is_refresh_token_valid(self) -> bool:
        return not self.get("refresh_revoked")


class State:
    def __init__(self) -> None:
        self.lock = threading.Lock()
        self.lifetime = 3600
        self.deny = False
        self.tokens: dict[str, Token] = {}
        self.refresh: dict[str, Token] = {}
        self.codes: dict[str, dict[str, Any]] = {}
        self.devices: dict[str, DeviceCredentialDict] = {}
        self.approved: dict[str, bool] = {}
        self.issued: dict[str, int] = {}  # grant type -> how many tokens
        key = ECKey.generate_key("P-256", private=True)
        self.signer_key = key.as_pem(private=True).decode()
        self.clients = {
            "service": Client("service", "service-secret"),
            "cli": Client("cli", None),
            "signer": Client("signer", None, key.as_dict(private=False)),
        }


def build(issuer_holder: list[str]) -> Flask:
    state = State()
    app = Flask(__name__)
    app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True

    def save_token(token: dict[str, Any], req: Any) -> None:
        record = Token(
            token,
            client_id=req.client.get_client_id(),
            user=req.user.get_user_id() if req.user else None,
            issued_at=time.time(),
            audience=req.payload.data.get("audience") or req.payload.data.get("resource"),
        )
        with state.lock:
            state.tokens[token["access_token"]] = record
            if "refresh_token" in token:
                state.refresh[token["refresh_token"]] = record
            grant = req.payload.grant_type or "?"
            state.issued[grant] = state.issued.get(grant, 0) + 1

    server = AuthorizationServer(app, query_client=state.clients.get, save_token=save_token)
    server.register_token_generator(
        "default",
        _generator(state),
    )

    class AuthorizationCode(grants.AuthorizationCodeGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")

        def save_authorization_code(self, code: str, req: Any) -> None:
            state.codes[code] = {
                "client_id": req.client.get_client_id(),
                "redirect_uri": req.payload.redirect_uri,
                "scope": req.payload.scope,
                "challenge": req.payload.data.get("code_challenge"),
                "method": req.payload.data.get("code_challenge_method"),
            }

        def query_authorization_code(self, code: str, client: Client) -> Any:
            item = state.codes.get(code)
            if item is None or item["client_id"] != client.get_client_id():
                return None
            return _Code(code, item)

        def delete_authorization_code(self, code: Any) -> None:
            state.codes.pop(code.code, None)

        def authenticate_user(self, code: Any) -> User:
            return ALICE

    class Refresh(grants.RefreshTokenGrant):
        TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
        INCLUDE_NEW_REFRESH_TOKEN = True

        def authenticate_refresh_token(self, refresh_token: str) -> Token | None:
            token = state.refresh.get(refresh_token)
            return token if token is not None and token.is_refresh_token_valid() else None

        def authenticate_user(self, token: Token) -> User:
            return ALICE

        def revoke_old_credential(self, token: Token) -> None:
            token["refresh_revoked"] = True

    class Device(DeviceCodeGrant):
        def query_device_credential(self, device_code: str) -> Any:
            return state.devices.get(device_code)

        def query_user_grant(self, user_code: str) -> tuple[User, bool] | None:
            if user_code not in state.approved:
                return None
            return ALICE, state.approved[user_code]

        def should_slow_down(self, credential: Any) -> bool:
            return False

    class DeviceEndpoint(DeviceAuthorizationEndpoint):
        CLIENT_AUTH_METHODS = ("client_secret_basic", "client_secret_post", "none")
        INTERVAL = 1

        def get_verification_uri(self) -> str:
            return issuer_holder[0] + "/device"

        def save_device_credential(self, client_id: str, scope: str, data: Any) -> None:
            item = DeviceCredentialDict(client_id=client_id, scope=scope, **data)
            item["expires_at"] = time.time() + data["expires_in"]
            state.devices[data["device_code"]] = item

    class Bearer(JWTBearerGrant):
        def resolve_issuer_client(self, issuer: str) -> Client | None:
            return state.clients.get(issuer)

        def resolve_client_public_key(self, client: Client) -> Any:
            if client.public_key is None:
                raise InvalidGrantError(description="the client has no key")
            return client.public_key

        def authenticate_user(self, subject: str | None) -> User | None:
            return User(subject) if subject else None

        def has_granted_permission(self, client: Client, user: User | None) -> bool:
            return True

        def get_audiences(self) -> list[str]:
            return [issuer_holder[0] + "/token", issuer_holder[0]]

    class Exchange(grants.BaseGrant, grants.TokenEndpointMixin):
        GRANT_TYPE = TOKEN_EXCHANGE
        TOKEN_ENDPOINT_AUTH_METHODS = ("client_secret_basic", "client_secret_post")

        def validate_token_request(self) -> None:
            data = self.request.payload.data
            if data.get("subject_token_type") != ACCESS_TOKEN_TYPE:
                raise InvalidRequestError("subject_token_type must be an access token")
            subject = state.tokens.get(str(data.get("subject_token")))
            if subject is None or subject.is_expired() or subject.is_revoked():
                raise InvalidGrantError(description="the subject token is not active")
            self.request.client = self.authenticate_token_endpoint_client()
            self.request.user = User(subject["user"] or subject["client_id"])

        def create_token_response(self) -> tuple[int, Any, Any]:
            token = self.generate_token(
                user=self.request.user, scope=self.request.payload.scope,
                include_refresh_token=False,
            )  # fmt: skip
            token["issued_token_type"] = ACCESS_TOKEN_TYPE
            self.save_token(token)
            return 200, token, self.TOKEN_RESPONSE_HEADER

    class Introspect(IntrospectionEndpoint):
        CLIENT_AUTH_METHODS = ("client_secret_basic", "client_secret_post")

        def query_token(self, token: str, hint: str | None) -> Token | None:
            return state.tokens.get(token)

        def introspect_token(self, token: Token) -> dict[str, Any]:
            return {
                "active": True,
                "client_id": token["client_id"],
                "scope": token.get_scope(),
                "sub": token["user"],
                "aud": token["audience"],
                "exp": int(token["issued_at"] + token["expires_in"]),
            }

        def check_permission(self, token: Token, client: Client, req: Any) -> bool:
            return True

    server.register_grant(grants.ClientCredentialsGrant)
    server.register_grant(AuthorizationCode, [CodeChallenge(required=True)])
    server.register_grant(Refresh)
    server.register_grant(Device)
    server.register_grant(Bearer)
    server.register_grant(Exchange)
    server.register_endpoint(DeviceEndpoint)
    server.register_endpoint(Introspect)

    def metadata() -> dict[str, Any]:
        issuer = issuer_holder[0]
        return {
            "issuer": issuer,
            "authorization_endpoint": issuer + "/authorize",
            "token_endpoint": issuer + "/token",
            "device_authorization_endpoint": issuer + "/device_authorization",
            "introspection_endpoint": issuer + "/introspect",
            "grant_types_supported": list(ALL_GRANTS),
            "response_types_supported": ["code"],
            "code_challenge_methods_supported": ["S256"],
            "token_endpoint_auth_methods_supported": [
                "client_secret_basic", "client_secret_post", "none",
            ],
            "subject_types_supported": ["public"],
            "id_token_signing_alg_values_supported": ["ES256"],
            "jwks_uri": issuer + "/jwks",
        }  # fmt: skip

    @app.get("/.well-known/openid-configuration")
    @app.get("/.well-known/oauth-authorization-server")
    def discovery() -> Any:
        return jsonify(metadata())

    @app.get("/authorize")
    def authorize() -> Any:
        return server.create_authorization_response(grant_user=ALICE)

    @app.post("/token")
    def token() -> Any:
        return server.create_token_response()

    @app.post("/device_authorization")
    def device_authorization() -> Any:
        return server.create_endpoint_response(DeviceEndpoint.ENDPOINT_NAME)

    @app.post("/device")
    def device() -> Any:
        code = request.form.get("user_code", "")
        if not any(d["user_code"] == code for d in state.devices.values()):
            return jsonify({"error": "unknown user code"}), 404
        state.approved[code] = not state.deny
        return jsonify({"approved": state.approved[code]})

    @app.post("/introspect")
    def introspect() -> Any:
        return server.create_endpoint_response(Introspect.ENDPOINT_NAME)

    @app.post("/_control")
    def control() -> Any:
        form = request.form
        with state.lock:
            if "lifetime" in form:
                state.lifetime = int(form["lifetime"])
            if "deny" in form:
                state.deny = form["deny"] == "1"
            for record in state.tokens.values():
                if "revoke" in form or "revoke_refresh" in form:
                    record["revoked"] = True
                if "revoke_refresh" in form:
                    record["refresh_revoked"] = True
        return jsonify({"issued": state.issued, "signer_key": state.signer_key})

    return app


class _Code:
    def __init__(self, code: str, item: dict[str, Any]) -> None:
        self.code = code
        self.item = item

    def get_redirect_uri(self) -> str:
        return str(self.item["redirect_uri"])

    def get_scope(self) -> str:
        return str(self.item["scope"] or "")

    def get_nonce(self) -> None:
        return None

    def get_auth_time(self) -> None:
        return None

    def get_acr(self) -> None:
        return None

    def get_amr(self) -> None:
        return None

    @property
    def code_challenge(self) -> str | None:
        return self.item["challenge"]

    @property
    def code_challenge_method(self) -> str | None:
        return self.item["method"]


def _generator(state: State) -> Any:
    from authlib.oauth2.rfc6750 import BearerTokenGenerator

    def expires(client: Any, grant_type: str) -> int:
        return state.lifetime

    return BearerTokenGenerator(
        access_token_generator=lambda *a, **k: secrets.token_urlsafe(24),
        refresh_token_generator=lambda *a, **k: secrets.token_urlsafe(24),
        expires_generator=expires,
    )


def main() -> None:
    import logging

    logging.getLogger("werkzeug").setLevel(logging.ERROR)  # no line per request
    holder = [""]
    app = build(holder)
    http = make_server("127.0.0.1", 0, app, threaded=True)
    holder[0] = f"http://127.0.0.1:{http.server_port}"
    threading.Thread(target=http.serve_forever, daemon=True).start()
    print(f"READY {http.server_port}", flush=True)
    sys.stdin.read()  # until the test closes it
    http.shutdown()


if __name__ == "__main__":
    main()
