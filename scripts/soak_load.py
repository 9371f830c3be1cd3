#!/usr/bin/env python3
"""Mixed load against cordond for scripts/soak.sh, over the raw varlink socket.

Usage: soak_load.py SOCKET SECONDS PASSCODE

Threads, until SECONDS have passed: lock/unlock/logout cycles; apps registering, subscribing,
fetching their key, acknowledging revocations and leaving; Check calls (allowed and denied,
so audited); pasteboard copy/paste/clear; an event subscriber and an audit follower;
status/list/policy/audit queries; and garbage clients (junk, truncated, oversized frames).
Prints a JSON summary; exits 1 if a well-formed call got an error it should not have.
"""
import collections
import json
import os
import random
import socket
import sys
import threading
import time

PATH, SECONDS, PASSCODE = sys.argv[1], float(sys.argv[2]), sys.argv[3]
PACE = float(os.environ.get("SOAK_PACE", "0.002"))
DEADLINE = time.monotonic() + SECONDS
counts = collections.Counter()
errors = []
lock = threading.Lock()


def running():
    return time.monotonic() < DEADLINE


def note(name, error=None):
    with lock:
        counts[name] += 1
        if error is not None:
            counts["errors"] += 1
            if len(errors) < 20:
                errors.append(error)


class Conn:
    def __init__(self, timeout=30):
        self.sock = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        self.sock.settimeout(timeout)
        self.sock.connect(PATH)
        self.buf = b""

    def send(self, method, parameters=None, more=False):
        message = {"method": method}
        if parameters is not None:
            message["parameters"] = parameters
        if more:
            message["more"] = True
        self.sock.sendall(json.dumps(message).encode() + b"\0")

    def recv(self):
        while b"\0" not in self.buf:
            chunk = self.sock.recv(65536)
            if not chunk:
                raise ConnectionError("closed by cordond")
            self.buf += chunk
        message, _, self.buf = self.buf.partition(b"\0")
        return json.loads(message)

    def call(self, method, parameters=None, allowed=()):
        self.send(method, parameters)
        reply = self.recv()
        error = reply.get("error")
        note(method, None if error is None or error in allowed else "%s -> %s" % (method, error))
        return reply

    def close(self):
        self.sock.close()


def loop(body):
    def run():
        while running():
            try:
                body()
            except Exception as error:  # a transport failure on a well-formed client
                note("exceptions", "%s: %r" % (body.__name__, error))
                time.sleep(0.1)
            time.sleep(PACE)
    return threading.Thread(target=run, daemon=True)


def lifecycle():
    c = Conn()
    try:
        for _ in range(20):
            c.call("io.cordon.Agent.Unlock", {"passcode": PASSCODE})
            c.call("io.cordon.Agent.Lock")
            c.call("io.cordon.Agent.Unlock", {})  # within the grace: no passcode
            c.call("io.cordon.Agent.Logout")
            time.sleep(PACE * 10)
    finally:
        c.close()


def app():
    control = Conn()
    subscription = None
    try:
        registered = control.call("io.cordon.App.Register", {"appId": "com.example.soak%d" % random.randrange(10)})
        token = registered["parameters"]["token"]
        control.call("io.cordon.App.GetKey", allowed=("io.cordon.App.KeyUnavailable", "io.cordon.App.NotManaged"))
        subscription = Conn(timeout=0.2)
        subscription.send("io.cordon.App.Subscribe", {"token": token}, more=True)
        until = time.monotonic() + random.uniform(0.2, 1.0)
        while time.monotonic() < until:
            try:
                event = subscription.recv()["parameters"]["event"]
            except socket.timeout:
                continue
            note("event " + event["kind"])
            if event["kind"] == "EncryptionKeyUnavailable":
                control.call(
                    "io.cordon.App.Acknowledge", {"seq": event["seq"], "status": "halted"},
                    allowed=("io.cordon.App.UnknownSequence",))
    finally:
        control.close()
        if subscription:
            subscription.close()


CHECKS = [
    {"action": "pasteboard.paste", "target": "com.example.other"},
    {"action": "pasteboard.copy", "context": {"length": "100"}},
    {"action": "document.send", "target": "com.example.mail"},
    {"action": "document.save", "target": "/tmp/soak/out.txt"},
]


def checks():
    c = Conn()
    try:
        for _ in range(200):
            c.call("io.cordon.App.Check", random.choice(CHECKS))
            time.sleep(PACE)
    finally:
        c.close()


def pasteboard():
    c = Conn()
    try:
        for _ in range(100):
            text = "".join(random.choice("abcdefgh ") for _ in range(random.randrange(1, 4000)))
            c.call("io.cordon.Pasteboard.Copy", {"content": text})
            c.call("io.cordon.Pasteboard.Paste", allowed=("io.cordon.Pasteboard.Empty", "io.cordon.App.Denied"))
            if random.random() < 0.1:
                c.call("io.cordon.Pasteboard.Clear")
            time.sleep(PACE)
    finally:
        c.close()


def stream(method, parameters):
    c = Conn(timeout=1)
    try:
        c.send(method, parameters, more=True)
        while running():
            try:
                reply = c.recv()
            except socket.timeout:
                continue
            if "error" in reply:
                note(method + " ended", None if reply["error"].endswith("TooSlow") else reply["error"])
                return
            note(method + " item")
    finally:
        c.close()


def subscriber():
    stream("io.cordon.App.Subscribe", {})


def follower():
    stream("io.cordon.Audit.Follow", {"since": time.time()})


def queries():
    c = Conn()
    try:
        c.call("io.cordon.Agent.GetStatus")
        c.call("io.cordon.Agent.ListApps")
        c.call("io.cordon.Policy.GetEffective")
        c.call("io.cordon.Audit.Query", {"limit": 100})
        if random.random() < 0.1:
            c.call("io.cordon.Policy.Reload")
        time.sleep(0.05)
    finally:
        c.close()


GARBAGE = [
    bytes(random.randrange(1, 256) for _ in range(200)) + b"\0",
    b'{"method":"io.cordon.Agent.GetStatus","param',
    b"a" * 70000,
    b'{"hello": [1, 2]}\0',
    b'{"method":"io.cordon.Agent.NoSuchMethod"}\0\x01junk\0',
]


def garbage():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.settimeout(5)
    try:
        s.connect(PATH)
        s.sendall(random.choice(GARBAGE))
        s.shutdown(socket.SHUT_WR)
        while s.recv(65536):
            pass
        note("garbage")
    except OSError:
        note("garbage cut short")
    finally:
        s.close()
    time.sleep(0.02)


threads = [loop(body) for body in (lifecycle, app, app, checks, checks, pasteboard, subscriber, follower, queries,
                                   garbage, garbage)]
for thread in threads:
    thread.start()
for thread in threads:
    thread.join(SECONDS + 120)
print(json.dumps({"counts": dict(sorted(counts.items())), "errors": errors}, indent=1))
sys.exit(1 if counts["errors"] else 0)
