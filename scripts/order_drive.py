#!/usr/bin/env python3
"""Drives a cordond through what its order file should cover (scripts/order-file.sh).

Initialize, unlock, status, a policy decision, an app's registration with its storage and
a token code, a lock and an unlock: the code an idle agent and its first clients run.
Errors are printed and the run goes on: under valgrind some calls are refused (it lacks
pidfd_send_signal, so no app registers), and their refusal paths are worth covering too.
"""
import base64
import sys

import varlink

PASSCODE = "order-passcode-4711"


def attempt(what, call, **parameters):
    try:
        return call(**parameters)
    except Exception as error:  # noqa: BLE001 - every refusal is printed and the run goes on
        print(f"{what}: {type(error).__name__} {str(error)[:160]}", file=sys.stderr)
        return None


def main(socket):
    with varlink.Client(address="unix:" + socket) as client:
        agent = client.open("io.cordon.Agent")
        attempt("Initialize", agent.Initialize, passcode=PASSCODE)
        if agent.GetStatus()["status"]["state"] != "unlocked":
            attempt("Unlock", agent.Unlock, passcode=PASSCODE)
        for _ in range(3):
            agent.GetStatus()
        app = client.open("io.cordon.App")
        attempt("Register", app.Register, appId="com.example.order")
        connection = app._connection
        for _ in range(3):
            attempt(
                "Check", app.Check, action="pasteboard.paste", target="com.example.mail", context={"length": "120"}
            )
        storage = client.open("io.cordon.Storage", connection=connection)
        record = base64.b64encode(b"Z" * 1024).decode()
        for _ in range(3):
            attempt("Storage.Put", storage.Put, name="record", value=record)
            attempt("Storage.Get", storage.Get, name="record")
        tokens = client.open("io.cordon.Tokens", connection=connection)
        attempt("Tokens.Code", tokens.Code, serial="none")
        attempt("Lock", agent.Lock)
        attempt("Unlock", agent.Unlock, passcode=PASSCODE)
        print(agent.GetStatus()["status"]["state"])


if __name__ == "__main__":
    main(sys.argv[1])
