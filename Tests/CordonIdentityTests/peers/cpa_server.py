#!/usr/bin/env python3
"""A CPA 1.0 authorization provider (ETSI TS 103 407, EBU Cross-Platform Authentication) for the
identity tests, on Flask.

It answers as the EBU reference provider (github.com/ebu/cpa-auth-provider: routes/registration.js,
routes/association.js, routes/access-token.js, routes/token/*.js) and as the exchanges the EBU iOS
client recorded (cpa-ios-stubs/, checked by CPAServerTests.swift): JSON requests only,

  POST /register   {client_name, software_id, software_version} -> 201 {client_id, client_secret}
  POST /associate  {client_id, client_secret, domain}
                   -> 200 {device_code, user_code, verification_uri, interval, expires_in}
                      (no user_code once the client is paired with a user: the user only confirms)
  POST /token      grant_type http://tech.ebu.ch/cpa/1.0/client_credentials
                      -> 200 {access_token, token_type, expires_in, domain, domain_display_name[, user_name]}
                   grant_type http://tech.ebu.ch/cpa/1.0/device_code (+ device_code)
                      -> 202 {"reason": "authorization_pending"} until the user pairs,
                         400 {"error": "slow_down" | "cancelled" | "expired" | "invalid_client", ...},
                         then 200 with the user token (user_name)

Binds 127.0.0.1 on the port given as the argument (or a free one), prints `PORT <n>` once it
listens, and exits when its standard input closes. What the user or the test does goes through
admin endpoints (form-encoded):

  POST /admin/pair    user_code=... (or device_code=...) &action=approve|deny|expire[&user_name=...]
  POST /admin/config  fail=0|1 (HTTP 500 on every CPA endpoint)  slow_down=0|1  malformed=0|1
                      short_lived=0|1 (expires_in 30: always within a client's renewal margin)
  GET  /admin/state   {"clients": n, "tokens": n, "issued": n, "pairings": n, "paired_clients": n}
"""

import os
import secrets
import signal
import sys
import threading
import time
import uuid

from flask import Flask, Response, jsonify, request
from werkzeug.serving import make_server

CLIENT_CREDENTIALS = "http://tech.ebu.ch/cpa/1.0/client_credentials"
DEVICE_CODE = "http://tech.ebu.ch/cpa/1.0/device_code"
TOKEN_LIFETIME = 2591999  # 30 days less a second, as recorded
PAIRING_LIFETIME = 3599
POLL_INTERVAL = 5
DOMAINS = {"cpa.rts.ch": "RTS - HbbTV demo", "cpa.ebu.ch": "EBU - CPA demo"}

app = Flask(__name__)
app.json.sort_keys = False
lock = threading.Lock()
config = {"fail": False, "slow_down": False, "malformed": False, "short_lived": False}
clients = {}  # client_id -> {"secret", "name", "user"}
pairings = {}  # device_code -> {"client_id", "domain", "user_code", "state", "user", "expires_at"}
tokens = {}  # (client_id, domain) -> token
issued = [0]  # tokens sent, renewals included
next_client = [407]
port_holder = {}


def error(status, code, description):
    return jsonify({"error": code, "error_description": description}), status


def no_store(response, status=200):
    response = jsonify(response)
    response.status_code = status
    response.headers["Cache-Control"] = "no-store"
    response.headers["Pragma"] = "no-cache"
    return response


def json_body(fields):
    """The request's JSON object when it has exactly `fields`, all strings (the reference
    provider's JSON schemas: required, additionalProperties false); None otherwise."""
    if not request.is_json:
        return None
    body = request.get_json(silent=True)
    if not isinstance(body, dict) or set(body) != set(fields):
        return None
    if not all(isinstance(body[name], str) for name in fields):
        return None
    return body


@app.before_request
def failing():
    if request.path.startswith("/admin/"):
        return None
    if config["fail"]:
        return Response("Internal Server Error", status=500, content_type="text/html")
    if config["malformed"]:
        return Response("<html>not json</html>", status=200, content_type="text/html")
    return None


@app.route("/register", methods=["POST"])
def register():
    body = json_body(["client_name", "software_id", "software_version"])
    if body is None:
        return error(400, "invalid_request", "Invalid request")
    with lock:
        client_id = str(next_client[0])
        next_client[0] += 1
        clients[client_id] = {"secret": secrets.token_hex(16), "name": body["client_name"], "user": None}
        return jsonify({"client_id": client_id, "client_secret": clients[client_id]["secret"]}), 201


def find_client(body):
    client = clients.get(body["client_id"])
    if client is None or client["secret"] != body["client_secret"]:
        return None
    return client


@app.route("/associate", methods=["POST"])
def associate():
    body = json_body(["client_id", "client_secret", "domain"])
    if body is None:
        return error(400, "invalid_request", "Invalid request")
    with lock:
        client = find_client(body)
        if client is None:
            return error(400, "invalid_client", "Client %s not found" % body["client_id"])
        if body["domain"] not in DOMAINS:
            return error(400, "invalid_request", "Domain %s not found" % body["domain"])
        device_code = str(uuid.uuid4())
        user_code = "".join(secrets.choice("ABCDEFGHJKLMNPQRSTUVWXYZabcdefghijkmnpqrstuvwxyz23456789") for _ in range(8))
        pairings[device_code] = {
            "client_id": body["client_id"],
            "domain": body["domain"],
            "user_code": user_code,
            "state": "pending",
            "user": client["user"],
            "expires_at": time.time() + PAIRING_LIFETIME,
        }
        answer = {"device_code": device_code}
        if client["user"] is None:
            # Must pair with a user account.
            answer["user_code"] = user_code
        # With a user already: ask the user's permission (no code to enter).
        answer.update(
            {
                "verification_uri": "http://127.0.0.1:%d/verify" % port_holder["port"],
                "interval": POLL_INTERVAL,
                "expires_in": PAIRING_LIFETIME,
            }
        )
        return no_store(answer)


def send_token(client_id, domain, user):
    token = secrets.token_hex(16)
    tokens[(client_id, domain)] = token
    issued[0] += 1
    answer = {
        "access_token": token,
        "token_type": "bearer",
        "expires_in": 30 if config["short_lived"] else TOKEN_LIFETIME,
        "domain": domain,
        "domain_display_name": DOMAINS[domain],
    }
    if user is not None:
        answer["user_name"] = user
    return no_store(answer)


@app.route("/token", methods=["POST"])
def token():
    body = request.get_json(silent=True) if request.is_json else None
    if not isinstance(body, dict) or "grant_type" not in body:
        return error(400, "invalid_request", "Missing grant type")
    grant = body["grant_type"]
    if grant == CLIENT_CREDENTIALS:
        body = json_body(["grant_type", "client_id", "client_secret", "domain"])
        if body is None:
            return error(400, "invalid_request", "Invalid request")
        with lock:
            client = find_client(body)
            if client is None:
                return error(400, "invalid_client", "Unknown client: %s" % body["client_id"])
            if body["domain"] not in DOMAINS:
                return error(400, "invalid_request", "Unknown domain: %s" % body["domain"])
            return send_token(body["client_id"], body["domain"], client["user"])
    if grant == DEVICE_CODE:
        body = json_body(["grant_type", "client_id", "client_secret", "device_code", "domain"])
        if body is None:
            return error(400, "invalid_request", "Invalid request")
        with lock:
            client = find_client(body)
            if client is None:
                return error(400, "invalid_client", "Unknown client: %s" % body["client_id"])
            pairing = pairings.get(body["device_code"])
            if pairing is None or pairing["client_id"] != body["client_id"]:
                return error(400, "invalid_request", "Pairing code not found")
            if pairing["domain"] != body["domain"]:
                return error(400, "invalid_request", "Pairing code domain mismatch")
            if config["slow_down"]:
                return error(400, "slow_down", "Requests are too fast. Slow down")
            if time.time() > pairing["expires_at"]:
                return error(400, "expired", "Pairing code expired")
            if pairing["state"] == "denied":
                return error(400, "cancelled", "User denied access")
            if pairing["state"] == "pending":
                return jsonify({"reason": "authorization_pending"}), 202
            del pairings[body["device_code"]]
            client["user"] = pairing["user"]
            return send_token(body["client_id"], pairing["domain"], pairing["user"])
    return error(400, "invalid_request", "Unsupported grant type: %s" % grant)


@app.route("/admin/pair", methods=["POST"])
def admin_pair():
    action = request.form["action"]
    with lock:
        if "device_code" in request.form:
            matches = [pairings[request.form["device_code"]]] if request.form["device_code"] in pairings else []
        else:
            matches = [p for p in pairings.values() if p["user_code"] == request.form["user_code"]]
        if not matches:
            return jsonify({"error": "no such user code"}), 404
        for pairing in matches:
            if action == "expire":
                pairing["expires_at"] = time.time() - 1
            elif action == "deny":
                pairing["state"] = "denied"
            else:
                pairing["state"] = "verified"
                pairing["user"] = pairing["user"] or request.form.get("user_name", "james@nowhere.com")
    return jsonify({})


@app.route("/admin/config", methods=["POST"])
def admin_config():
    for key in config:
        if key in request.form:
            config[key] = request.form[key] == "1"
    return jsonify(config)


@app.route("/admin/state", methods=["GET"])
def admin_state():
    with lock:
        return jsonify(
            {
                "clients": len(clients),
                "tokens": len(tokens),
                "issued": issued[0],
                "pairings": len(pairings),
                "paired_clients": sum(1 for c in clients.values() if c["user"] is not None),
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
