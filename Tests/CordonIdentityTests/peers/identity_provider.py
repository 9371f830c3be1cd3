#!/usr/bin/env python3
"""A local OAuth 2.0 identity provider for the identity tests, built on authlib and Flask.

Serves the device authorization grant (RFC 8628), the authorization code grant with PKCE
(RFC 7636, S256 required) to loopback redirect URIs on any port (RFC 8252 section 7.3), rotating
refresh tokens and revocation (RFC 7009) for one public client, `cordon-test`. With scope `openid`
the code grant also issues an OpenID Connect ID token (authlib's OpenIDCode, RS256, the `nonce` of
the authorization request), verifiable with the key set at `GET /jwks`. Binds 127.0.0.1 on a
free port (or the port given as the argument) and prints `PORT <n>` once it listens; exits when
its standard input closes.

The test drives what a user would do through admin endpoints:
  POST /admin/device   user_code=...&action=approve|deny|expire
  POST /admin/config   slow_down=0|1  omit_expires_in=0|1  malformed=0|1  deny_authorization=0|1
                       short_lived=0|1 (expires_in 30: always within a client's refresh margin)
                       unavailable=0|1 (POST /token answers HTTP 503, a provider that is down)
                       hold_token=0|1 (POST /token waits until it is set to 0 again: a provider
                       that accepts and does not answer)
                       jwks_other=0|1 (/jwks serves another key under the signing key's kid)
                       rotated=0|1 (ID tokens signed, and /jwks served, with a new key, kid idp-2)
                       device_id_token=0|1 (the device grant's token response carries an ID token)
                       discovery_wrong_issuer=0|1  discovery_malformed=0|1  discovery_insecure=0|1
                       discovery_no_token=0|1  discovery_moved=0|1 (what
                       /.well-known/openid-configuration serves: another issuer, not JSON, an
                       http token endpoint on a non-loopback host, no token_endpoint, or
                       device/token endpoints that answer 404)
  POST /admin/revoke_all                every token revoked (a refresh is then refused)
  GET  /admin/state    {"revoked": [...], "refresh_tokens": n, "issued": n, "jwks_fetches": n,
                        "discovery_fetches": n, "token_requests": n, "held_token_requests": n}
                       (token_requests: every POST /token; held_token_requests: those waiting now)

OpenID Connect Discovery 1.0: GET /.well-known/openid-configuration serves the provider's
metadata (issuer http://127.0.0.1:<port>), its endpoints built from the issuer.
  POST /admin/id_token key=good|other|hs256-public|none  aud=...  iss=...  iat=...  exp=...  nonce=...
                       {"id_token": ...}: an ID token for the test's own clock; `other` signs with a
                       key that is not in /jwks under the same kid, `hs256-public` is the algorithm
                       confusion attack (HMAC keyed with the public key), `none` is unsigned
"""

import base64
import hashlib
import hmac

import json
import os
import signal
import sys
import threading
import time

from authlib.common.security import generate_token
from authlib.integrations.flask_oauth2 import AuthorizationServer
from authlib.oauth2.rfc6749 import ClientMixin, grants
from authlib.oauth2.rfc7009 import RevocationEndpoint
from authlib.oauth2.rfc7636 import CodeChallenge
from authlib.oauth2.rfc8628 import DeviceAuthorizationEndpoint, DeviceCodeGrant, DeviceCredentialDict
from authlib.oidc.core import UserInfo
from authlib.oidc.core.grants import OpenIDCode
from flask import Flask, Response, jsonify, request
from joserfc import jwt
from joserfc.jwk import KeySet, RSAKey
from werkzeug.serving import make_server

CLIENT_ID = "cordon-test"
USER = {"id": 1, "name": "alice"}

app = Flask(__name__)
app.config["OAUTH2_REFRESH_TOKEN_GENERATOR"] = True
config = {
    "slow_down": False,
    "omit_expires_in": False,
    "malformed": False,
    "deny_authorization": False,
    "short_lived": False,
    "jwks_other": False,
    "rotated": False,
    "device_id_token": False,
    "discovery_wrong_issuer": False,
    "discovery_malformed": False,
    "discovery_insecure": False,
    "discovery_no_token": False,
    "discovery_moved": False,
    "unavailable": False,
    "hold_token": False,
}
jwks_fetches = [0]
token_requests = [0]
held_token_requests = [0]
counters_lock = threading.Lock()
token_release = threading.Event()
token_release.set()
discovery_fetches = [0]
device_credentials = {}  # device_code -> DeviceCredentialDict
user_grants = {}  # user_code -> approved (bool)
codes = {}  # code -> dict
tokens = []  # dicts with access_token, refresh_token, revoked
revoked = []
port_holder = {}
KID = "idp-1"
signing_key = RSAKey.generate_key(2048, parameters={"kid": KID, "alg": "RS256", "use": "sig"})
other_key = RSAKey.generate_key(2048, parameters={"kid": KID, "alg": "RS256", "use": "sig"})
rotated_key = RSAKey.generate_key(2048, parameters={"kid": "idp-2", "alg": "RS256", "use": "sig"})


def current_key():
    return rotated_key if config["rotated"] else signing_key


def issuer():
    return "http://127.0.0.1:%d" % port_holder["port"]


class Client(ClientMixin):
    def get_client_id(self):
        return CLIENT_ID

    def get_default_redirect_uri(self):
        return None

    def get_allowed_scope(self, scope):
        return scope or ""

    def check_redirect_uri(self, redirect_uri):
        # RFC 8252 section 7.3: any port on the loopback address, path /callback.
        prefix = "http://127.0.0.1:"
        if not redirect_uri.startswith(prefix):
            return False
        port, _, path = redirect_uri[len(prefix):].partition("/")
        return port.isdigit() and path == "callback"

    def check_client_secret(self, client_secret):
        return False

    def check_endpoint_auth_method(self, method, endpoint):
        return method == "none"

    def check_response_type(self, response_type):
        return response_type == "code"

    def check_grant_type(self, grant_type):
        return grant_type in (
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
        )


CLIENT = Client()


class Token(dict):
    def check_client(self, client):
        return client.get_client_id() == CLIENT_ID

    def get_scope(self):
        return self.get("scope", "")

    def get_expires_in(self):
        return self.get("expires_in", 0)

    def is_expired(self):
        return False

    def is_revoked(self):
        return self.get("revoked", False)

    def get_user(self):
        return USER


def query_client(client_id):
    return CLIENT if client_id == CLIENT_ID else None


def save_token(token, req):
    tokens.append(Token(token))


server = AuthorizationServer(app, query_client=query_client, save_token=save_token)


class AuthorizationCode(dict):
    def __getattr__(self, name):  # CodeChallenge reads code_challenge(_method) as attributes
        try:
            return self[name]
        except KeyError:
            raise AttributeError(name) from None

    def get_redirect_uri(self):
        return self["redirect_uri"]

    def get_scope(self):
        return self["scope"]

    def get_nonce(self):
        return self.get("nonce")

    def get_auth_time(self):
        return None

    def get_acr(self):
        return None

    def get_amr(self):
        return None


class CodeGrant(grants.AuthorizationCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def save_authorization_code(self, code, req):
        codes[code] = AuthorizationCode(
            code=code,
            redirect_uri=req.payload.redirect_uri,
            scope=req.payload.scope,
            code_challenge=req.payload.data.get("code_challenge"),
            code_challenge_method=req.payload.data.get("code_challenge_method"),
            nonce=req.payload.data.get("nonce"),
        )

    def query_authorization_code(self, code, client):
        return codes.get(code)

    def delete_authorization_code(self, authorization_code):
        codes.pop(authorization_code["code"], None)

    def authenticate_user(self, authorization_code):
        return USER


class RefreshGrant(grants.RefreshTokenGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]
    INCLUDE_NEW_REFRESH_TOKEN = True  # rotation

    def authenticate_refresh_token(self, refresh_token):
        for token in tokens:
            if token.get("refresh_token") == refresh_token and not token.get("revoked"):
                return token
        return None

    def authenticate_user(self, credential):
        return USER

    def revoke_old_credential(self, credential):
        credential["revoked"] = True
        revoked.append("refresh")


class DeviceGrant(DeviceCodeGrant):
    TOKEN_ENDPOINT_AUTH_METHODS = ["none"]

    def query_device_credential(self, device_code):
        return device_credentials.get(device_code)

    def query_user_grant(self, user_code):
        if user_code in user_grants:
            return USER, user_grants[user_code]
        return None

    def should_slow_down(self, credential):
        return config["slow_down"]


class DeviceEndpoint(DeviceAuthorizationEndpoint):
    CLIENT_AUTH_METHODS = ["none"]

    def get_verification_uri(self):
        return "http://127.0.0.1:%d/activate" % port_holder["port"]

    def save_device_credential(self, client_id, scope, data):
        credential = DeviceCredentialDict(client_id=client_id, scope=scope, **data)
        credential["expires_at"] = time.time() + data["expires_in"]
        device_credentials[data["device_code"]] = credential


class Revocation(RevocationEndpoint):
    CLIENT_AUTH_METHODS = ["none"]

    def query_token(self, token_string, token_type_hint):
        for token in tokens:
            if token_string in (token.get("access_token"), token.get("refresh_token")):
                return token
        return None

    def revoke_token(self, token, req):
        token["revoked"] = True
        revoked.append(req.form.get("token_type_hint") or "token")


class IDToken(OpenIDCode):
    def resolve_client_private_key(self, client):
        return current_key()

    def get_client_algorithm(self, client):
        return "RS256"

    def get_client_claims(self, client):
        return {"iss": issuer(), "aud": [CLIENT_ID]}

    def get_encode_header(self, client):
        return {"alg": "RS256", "kid": current_key().kid}

    def exists_nonce(self, nonce, req):
        return False

    def generate_user_info(self, user, scope):
        return UserInfo(sub=str(user["id"]), name=user["name"], preferred_username=user["name"])


server.register_grant(CodeGrant, [CodeChallenge(required=True), IDToken()])
server.register_grant(RefreshGrant)
server.register_grant(DeviceGrant)
server.register_endpoint(DeviceEndpoint)
server.register_endpoint(Revocation)


@app.route("/device_authorization", methods=["POST"])
def device_authorization():
    return server.create_endpoint_response(DeviceEndpoint.ENDPOINT_NAME)


@app.route("/authorize", methods=["GET"])
def authorize():
    # The user approves at once (or refuses, when the test says so).
    grant_user = None if config["deny_authorization"] else USER
    return server.create_authorization_response(grant_user=grant_user)


@app.route("/token", methods=["POST"])
def issue_token():
    with counters_lock:
        token_requests[0] += 1
    if not token_release.is_set():
        with counters_lock:
            held_token_requests[0] += 1
        token_release.wait()
        with counters_lock:
            held_token_requests[0] -= 1
    if config["unavailable"]:
        return Response("down for maintenance", status=503, content_type="text/plain")
    if config["malformed"]:
        return Response("<html>not json</html>", status=200, content_type="text/html")
    response = server.create_token_response()
    if config["omit_expires_in"] and response.status_code == 200:
        body = json.loads(response.get_data())
        body.pop("expires_in", None)
        return jsonify(body)
    if config["short_lived"] and response.status_code == 200:
        body = json.loads(response.get_data())
        body["expires_in"] = 30
        return jsonify(body)
    device = request.form.get("grant_type") == "urn:ietf:params:oauth:grant-type:device_code"
    if config["device_id_token"] and device and response.status_code == 200:
        body = json.loads(response.get_data())
        if "openid" in body.get("scope", "").split():
            now = int(time.time())
            claims = {
                "iss": issuer(),
                "sub": str(USER["id"]),
                "aud": CLIENT_ID,
                "iat": now,
                "exp": now + 600,
                "preferred_username": USER["name"],
            }
            body["id_token"] = jwt.encode({"alg": "RS256", "kid": current_key().kid}, claims, current_key())
        return jsonify(body)
    return response


@app.route("/.well-known/openid-configuration", methods=["GET"])
def openid_configuration():
    discovery_fetches[0] += 1
    if config["discovery_malformed"]:
        return Response("<html>not json</html>", status=200, content_type="text/html")
    base = issuer()
    moved = base + "/moved" if config["discovery_moved"] else base
    document = {
        "issuer": "https://idp.attacker.example" if config["discovery_wrong_issuer"] else base,
        "authorization_endpoint": base + "/authorize",
        "device_authorization_endpoint": moved + "/device_authorization",
        "token_endpoint": "http://idp.example/token" if config["discovery_insecure"] else moved + "/token",
        "revocation_endpoint": base + "/revoke",
        "jwks_uri": base + "/jwks",
        "response_types_supported": ["code"],
        "subject_types_supported": ["public"],
        "id_token_signing_alg_values_supported": ["RS256"],
        "grant_types_supported": [
            "authorization_code",
            "refresh_token",
            "urn:ietf:params:oauth:grant-type:device_code",
        ],
        "code_challenge_methods_supported": ["S256"],
        "token_endpoint_auth_methods_supported": ["none"],
    }
    if config["discovery_no_token"]:
        del document["token_endpoint"]
    return jsonify(document)


@app.route("/revoke", methods=["POST"])
def revoke():
    return server.create_endpoint_response(Revocation.ENDPOINT_NAME)


@app.route("/jwks", methods=["GET"])
def jwks():
    jwks_fetches[0] += 1
    key = other_key if config["jwks_other"] else current_key()
    return jsonify(KeySet([key]).as_dict(private=False))


def b64url(data):
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@app.route("/admin/id_token", methods=["POST"])
def admin_id_token():
    form = request.form
    claims = {
        "iss": form.get("iss", issuer()),
        "sub": "1",
        "aud": form.getlist("aud") or [CLIENT_ID],
        "iat": int(form["iat"]),
        "exp": int(form["exp"]),
        "name": USER["name"],
    }
    if "nonce" in form:
        claims["nonce"] = form["nonce"]
    key = form.get("key", "good")
    if key in ("good", "other"):
        token = jwt.encode({"alg": "RS256", "kid": KID}, claims, signing_key if key == "good" else other_key)
    else:
        # Forgeries no JOSE library will make: HS256 keyed with the public key's PEM, and "none".
        alg = "HS256" if key == "hs256-public" else "none"
        header = b64url(json.dumps({"alg": alg, "kid": KID}).encode())
        payload = b64url(json.dumps(claims).encode())
        signing_input = ("%s.%s" % (header, payload)).encode()
        secret = signing_key.as_pem(private=False)
        signature = hmac.new(secret, signing_input, hashlib.sha256).digest() if alg == "HS256" else b""
        token = "%s.%s.%s" % (header, payload, b64url(signature))
    return jsonify({"id_token": token})


@app.route("/admin/device", methods=["POST"])
def admin_device():
    user_code = request.form["user_code"]
    action = request.form["action"]
    if action == "expire":
        for credential in device_credentials.values():
            if credential["user_code"] == user_code:
                credential["expires_at"] = time.time() - 1
    else:
        user_grants[user_code] = action == "approve"
    return jsonify({})


@app.route("/admin/revoke_all", methods=["POST"])
def admin_revoke_all():
    for token in tokens:
        token["revoked"] = True
    return jsonify({})


@app.route("/admin/config", methods=["POST"])
def admin_config():
    for key in config:
        if key in request.form:
            config[key] = request.form[key] == "1"
    if config["hold_token"]:
        token_release.clear()
    else:
        token_release.set()
    return jsonify(config)


@app.route("/admin/state", methods=["GET"])
def admin_state():
    return jsonify(
        {
            "revoked": revoked,
            "issued": len(tokens),
            "live_refresh_tokens": sum(1 for t in tokens if t.get("refresh_token") and not t.get("revoked")),
            "jwks_fetches": jwks_fetches[0],
            "discovery_fetches": discovery_fetches[0],
            "token_requests": token_requests[0],
            "held_token_requests": held_token_requests[0],
        }
    )


def exit_when_stdin_closes():
    # The test holds our stdin: when it ends (or dies), so do we.
    sys.stdin.buffer.read()
    os._exit(0)


def main():
    # The test runner's threads block SIGTERM and children inherit the mask: unblock it.
    signal.pthread_sigmask(signal.SIG_UNBLOCK, [signal.SIGTERM])
    signal.signal(signal.SIGTERM, signal.SIG_DFL)
    port = int(sys.argv[1]) if len(sys.argv) > 1 else 0
    http = make_server("127.0.0.1", port, app, threaded=True)
    port_holder["port"] = http.server_port
    print("PORT %d" % http.server_port, flush=True)
    threading.Thread(target=exit_when_stdin_closes, daemon=True).start()
    http.serve_forever()


if __name__ == "__main__":
    sys.exit(main())
