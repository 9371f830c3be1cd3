#!/usr/bin/env python3
"""A live TUF repository for fleetd's end-to-end tests, made and changed with python-tuf.

    python3 fleet_repo.py init DIR                      keys, root v1, empty targets/commands, snapshot, timestamp
    python3 fleet_repo.py publish DIR NAME=PATH ...     the policy files (replacing the list); targets, snapshot, timestamp
    python3 fleet_repo.py command DIR DEVICE KIND [--app APP] [--expires-in S] [--counter N] [--devices ID,ID]
    python3 fleet_repo.py timestamp DIR [--expires-in S]
    python3 fleet_repo.py attack DIR NAME               expired-timestamp | rollback-timestamp | long-target | foreign-key

DIR/repo is what the server serves (consistent snapshots, hash-prefixed targets); DIR/root.json is
the root a machine ships with; DIR/state.json keeps the keys (test keys, never real ones), the
versions and each device's commands.
"""
import argparse
import hashlib
import json
import os
import sys
import time
from datetime import datetime, timedelta, timezone

from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey
from cryptography.hazmat.primitives import serialization
from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import (DelegatedRole, Delegations, MetaFile, Metadata, Role, Root, Snapshot, TargetFile,
                              Targets, Timestamp)
from tuf.api.serialization.json import JSONSerializer

ROLES = ("root", "timestamp", "snapshot", "targets", "commands")


def now():
    return datetime.now(timezone.utc).replace(microsecond=0)


def signer(seed_hex):
    return CryptoSigner(Ed25519PrivateKey.from_private_bytes(bytes.fromhex(seed_hex)))


def new_seed():
    key = Ed25519PrivateKey.generate()
    return key.private_bytes(serialization.Encoding.Raw, serialization.PrivateFormat.Raw,
                             serialization.NoEncryption()).hex()


def write(path, data):
    os.makedirs(os.path.dirname(path), exist_ok=True)
    tmp = path + ".tmp"
    with open(tmp, "wb") as f:
        f.write(data)
    os.chmod(tmp, 0o644)
    os.replace(tmp, path)


def sign(signed, seeds):
    metadata = Metadata(signed)
    for seed in seeds:
        metadata.sign(signer(seed), append=True)
    return JSONSerializer(compact=False).serialize(metadata)


class Repo:
    def __init__(self, directory):
        self.dir = directory
        self.repo = os.path.join(directory, "repo")
        with open(os.path.join(directory, "state.json")) as f:
            self.state = json.load(f)

    def save(self):
        write(os.path.join(self.dir, "state.json"), json.dumps(self.state, indent=1).encode())

    def seeds(self, role):
        return self.state["keys"][role]

    def expires(self, seconds=7 * 86400):
        return now() + timedelta(seconds=seconds)

    def targets_file(self, path, data):
        target = TargetFile.from_data(path, data, ["sha256"])
        digest = target.hashes["sha256"]
        directory, name = os.path.split(path)
        write(os.path.join(self.repo, "targets", directory, f"{digest}.{name}"), data)
        return target

    def write_targets(self):
        v = self.state["versions"]["targets"] = self.state["versions"]["targets"] + 1
        targets = Targets(version=v, expires=self.expires())
        for path, hexdata in sorted(self.state["policies"].items()):
            targets.targets[path] = self.targets_file(path, bytes.fromhex(hexdata))
        keys = {signer(s).public_key.keyid: signer(s).public_key for s in self.seeds("commands")}
        role = DelegatedRole("commands", list(keys), 1, True, paths=["commands/*"])
        targets.delegations = Delegations(keys, roles={"commands": role})
        self.data_targets = sign(targets, self.seeds("targets"))
        write(os.path.join(self.repo, f"{v}.targets.json"), self.data_targets)

    def write_commands(self, both_keys=False):
        # Both command keys are delegated (threshold 1); the second signs only when asked (a wipe of
        # several machines needs the root's wipe threshold, 2).
        seeds = self.seeds("commands") if both_keys else self.seeds("commands")[:1]
        v = self.state["versions"]["commands"] = self.state["versions"]["commands"] + 1
        commands = Targets(version=v, expires=self.expires())
        for device, entries in sorted(self.state["commands"].items()):
            document = {"_type": "cordon-commands", "device": device, "commands": entries}
            data = json.dumps(document, sort_keys=True, separators=(",", ":")).encode()
            path = f"commands/{device}.json"
            commands.targets[path] = self.targets_file(path, data)
        write(os.path.join(self.repo, f"{v}.commands.json"), sign(commands, seeds))

    def read(self, name):
        with open(os.path.join(self.repo, name), "rb") as f:
            return f.read()

    def write_snapshot_and_timestamp(self, timestamp_expires=None):
        v = self.state["versions"]
        v["snapshot"] += 1
        snapshot = Snapshot(version=v["snapshot"], expires=self.expires())
        snapshot.meta = {"targets.json": MetaFile(v["targets"]), "commands.json": MetaFile(v["commands"])}
        data = sign(snapshot, self.seeds("snapshot"))
        write(os.path.join(self.repo, f"{v['snapshot']}.snapshot.json"), data)
        self.write_timestamp(timestamp_expires)

    def write_timestamp(self, expires_in=None):
        v = self.state["versions"]
        v["timestamp"] += 1
        snapshot = self.read(f"{v['snapshot']}.snapshot.json")
        meta = MetaFile.from_data(v["snapshot"], snapshot, ["sha256"])
        timestamp = Timestamp(version=v["timestamp"], expires=self.expires(expires_in or 86400), snapshot_meta=meta)
        data = sign(timestamp, self.seeds("timestamp"))
        # Keep every timestamp, so an attack can replay an old one.
        write(os.path.join(self.dir, "timestamps", f"{v['timestamp']}.timestamp.json"), data)
        self.serve_timestamp(data)

    def serve_timestamp(self, data):
        path = os.path.join(self.repo, "timestamp.json")
        previous = int(os.stat(path).st_mtime) if os.path.exists(path) else 0
        write(path, data)
        # HTTP servers derive ETags from the modification time in seconds and the size: two versions
        # of equal size written in one second would share an ETag and a client's If-None-Match
        # would be answered 304. Each version gets a later second (as `cordon fleet` does).
        stamp = max(int(time.time()), previous + 1)
        os.utime(path, (stamp, stamp))


def init(directory):
    os.makedirs(directory, exist_ok=True)
    state = {"keys": {role: [new_seed()] for role in ROLES}, "policies": {}, "commands": {},
             "versions": {"root": 1, "targets": 0, "commands": 0, "snapshot": 0, "timestamp": 0}}
    state["keys"]["commands"].append(new_seed())  # a second command key, for wipes of several machines
    with open(os.path.join(directory, "state.json"), "w") as f:
        json.dump(state, f)
    repo = Repo(directory)
    root = Root(version=1, expires=now() + timedelta(days=365), consistent_snapshot=True,
                unrecognized_fields={"x-cordon": {"wipeThreshold": 2}})
    for role in ("root", "timestamp", "snapshot", "targets"):
        root.roles[role] = Role([], 1)
        for seed in repo.seeds(role):
            root.add_key(signer(seed).public_key, role)
    data = sign(root, repo.seeds("root"))
    write(os.path.join(repo.repo, "1.root.json"), data)
    write(os.path.join(directory, "root.json"), data)
    repo.write_targets()
    repo.write_commands()
    repo.write_snapshot_and_timestamp()
    repo.save()


def main():
    parser = argparse.ArgumentParser()
    sub = parser.add_subparsers(dest="what", required=True)
    p = sub.add_parser("init"); p.add_argument("dir")
    p = sub.add_parser("publish"); p.add_argument("dir"); p.add_argument("files", nargs="*")
    p = sub.add_parser("command"); p.add_argument("dir"); p.add_argument("device"); p.add_argument("kind")
    p.add_argument("--app"); p.add_argument("--expires-in", type=int, default=7 * 86400); p.add_argument("--counter", type=int)
    p.add_argument("--devices"); p.add_argument("--both-keys", action="store_true"); p.add_argument("--reason")
    p = sub.add_parser("timestamp"); p.add_argument("dir"); p.add_argument("--expires-in", type=int)
    p = sub.add_parser("attack"); p.add_argument("dir"); p.add_argument("name")
    args = parser.parse_args()
    if args.what == "init":
        init(args.dir)
        return
    repo = Repo(args.dir)
    if args.what == "publish":
        policies = {}
        for item in args.files:
            name, path = item.split("=", 1)
            with open(path, "rb") as f:
                policies[f"policies/{name}"] = f.read().hex()
        repo.state["policies"] = policies
        repo.write_targets()
        repo.write_snapshot_and_timestamp()
    elif args.what == "command":
        entries = repo.state["commands"].setdefault(args.device, [])
        counter = args.counter or (max([e["counter"] for e in entries], default=0) + 1)
        issued = now() - timedelta(seconds=5)
        entry = {"counter": counter, "kind": args.kind, "issued": issued.strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "expires": (issued + timedelta(seconds=args.expires_in)).strftime("%Y-%m-%dT%H:%M:%SZ"),
                 "machines": len(args.devices.split(",")) if args.devices else 1}
        if args.app:
            entry["app"] = args.app
        if args.reason:
            entry["reason"] = args.reason
        entries.append(entry)
        repo.write_commands(both_keys=args.both_keys)
        repo.write_snapshot_and_timestamp()
    elif args.what == "timestamp":
        repo.write_timestamp(args.expires_in)
    elif args.what == "attack":
        v = repo.state["versions"]
        if args.name == "expired-timestamp":
            repo.write_timestamp(-3600)
        elif args.name == "rollback-timestamp":
            # The server answers with an older, validly signed timestamp.
            with open(os.path.join(args.dir, "timestamps", f"{v['timestamp'] - 1}.timestamp.json"), "rb") as f:
                repo.serve_timestamp(f.read())
        elif args.name == "long-target":
            # Every policy file the targets list is served with 1 MiB more than promised.
            for root, _, files in os.walk(os.path.join(repo.repo, "targets", "policies")):
                for name in files:
                    with open(os.path.join(root, name), "ab") as f:
                        f.write(b" " * (1 << 20))
        elif args.name == "gzip-bomb":
            # Every policy file is replaced by 64 MiB of zeros gzipped (about 64 KiB); the test's
            # nginx labels target files `Content-Encoding: gzip`, as a hostile host would.
            import gzip
            bomb = gzip.compress(b"\0" * (64 << 20), compresslevel=9)
            for root, _, files in os.walk(os.path.join(repo.repo, "targets", "policies")):
                for name in files:
                    with open(os.path.join(root, name), "wb") as f:
                        f.write(bomb)
        elif args.name == "foreign-key":
            # New targets signed by a key the root does not list.
            saved = repo.state["keys"]["targets"]
            repo.state["keys"]["targets"] = [new_seed()]
            repo.state["policies"]["policies/99-evil.json"] = b'{"version": 1}'.hex()
            repo.write_targets()
            repo.state["keys"]["targets"] = saved
            repo.write_snapshot_and_timestamp()
        else:
            sys.exit(f"unknown attack {args.name}")
    repo.save()


if __name__ == "__main__":
    main()
