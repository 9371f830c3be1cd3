#!/usr/bin/env python3
"""Writes the TUF repository scenarios Cordon's Swift TUF verifier is tested against.

    python3 tuf_scenarios.py OUTDIR [--only NAME]

One directory per scenario (README.md next to this file describes them):

    OUTDIR/<name>/expect.json          what the client must do at each step (and what python-tuf did)
    OUTDIR/<name>/trusted/root.json    the root the client ships with
    OUTDIR/<name>/steps/NN/remote/...  the files the server serves at step NN

Metadata is made with python-tuf's tuf.api.metadata and signed with fresh Ed25519 keys on every
run (no key is written anywhere). Expiries are relative to the real clock: valid is now + 7 days,
expired is now - 1 hour. Every step is then run through python-tuf's own client (tuf_oracle.py);
a scenario whose intended outcome python-tuf does not share fails the run (exit status 1).
"""
import argparse
import hashlib
import json
import os
import shutil
import sys
import tempfile
import time
from dataclasses import dataclass, field
from datetime import datetime, timedelta, timezone

from securesystemslib.signer import CryptoSigner
from tuf.api.metadata import (
    DelegatedRole,
    Delegations,
    MetaFile,
    Metadata,
    Role,
    Root,
    Snapshot,
    TargetFile,
    Targets,
    Timestamp,
)
from tuf.api.serialization.json import JSONSerializer

sys.path.insert(0, os.path.dirname(os.path.abspath(__file__)))
import tuf_oracle  # noqa: E402

DEVICE = hashlib.sha256(b"device-1").hexdigest()
COMMAND_PATH = f"commands/{DEVICE}.json"
# What the client looks up at every step: both policies and this device's command.
PATHS = ["policies/base.json", "policies/mail.json", COMMAND_PATH]
TOP_ROLES = ("root", "timestamp", "snapshot", "targets")

NOW = datetime.now(timezone.utc)
VALID = NOW + timedelta(days=7)
EXPIRED = NOW - timedelta(hours=1)

# The python-tuf exception each error kind of the Swift verifier corresponds to.
ORACLE_FOR_ERROR = {
    "threshold": "UnsignedMetadataError",
    "expired": "ExpiredMetadataError",
    "rollback": "BadVersionNumberError",
    "versionMismatch": "BadVersionNumberError",
    "length": "DownloadLengthMismatchError",
    "hash": "LengthOrHashMismatchError",
    "malformed": "DeserializationError",
    "notFound": "DownloadHTTPError",
}


# ---------------------------------------------------------------------------------------------
# Bytes, keys, signing

def new_key() -> CryptoSigner:
    return CryptoSigner.generate_ed25519()


def body(value) -> bytes:
    """A small JSON target file (its content does not matter to TUF)."""
    return json.dumps(value, sort_keys=True).encode()


def sign(signed, signers) -> bytes:
    """The metadata file: `signed` with one signature per signer (over canonical JSON of signed),
    serialized as python-tuf writes it."""
    metadata = Metadata(signed)
    for signer in signers:
        metadata.sign(signer, append=True)
    return JSONSerializer(compact=False).serialize(metadata)


def duplicate_first_signature(data: bytes) -> bytes:
    """The same file with its first signature listed twice (python-tuf's Metadata keeps
    signatures in a dict by key id, so this is done on the JSON)."""
    document = json.loads(data)
    document["signatures"].append(dict(document["signatures"][0]))
    return json.dumps(document, indent=1, separators=(",", ": "), sort_keys=True).encode()


def meta_file(version: int, data: bytes, length: bool, hashes) -> MetaFile:
    """A snapshot/timestamp entry: always the version, optionally length and hashes of data."""
    full = MetaFile.from_data(version, data, list(hashes) or ["sha256"])
    return MetaFile(version, full.length if length else None, full.hashes if hashes else None)


# ---------------------------------------------------------------------------------------------
# One helper per role

def root_role(version, keys, thresholds, expires) -> Root:
    root = Root(version=version, expires=expires, consistent_snapshot=True,
                unrecognized_fields={"x-cordon": {"wipeThreshold": 2}})
    for role in TOP_ROLES:
        root.roles[role] = Role([], thresholds[role])
        for signer in keys[role]:
            root.add_key(signer.public_key, role)
    return root


def timestamp_role(version, snapshot_meta: MetaFile, expires) -> Timestamp:
    return Timestamp(version=version, expires=expires, snapshot_meta=snapshot_meta)


def snapshot_role(version, meta: dict, expires) -> Snapshot:
    return Snapshot(version=version, expires=expires, meta=meta)


def targets_role(version, files: dict, expires, commands_keys) -> Targets:
    """The top-level targets: the policies, and the delegation of commands/* to `commands`."""
    delegation = DelegatedRole("commands", [k.public_key.keyid for k in commands_keys], 1,
                               terminating=True, paths=["commands/*"])
    delegations = Delegations({k.public_key.keyid: k.public_key for k in commands_keys},
                              roles={"commands": delegation})
    return Targets(version=version, expires=expires, targets=files, delegations=delegations)


def commands_role(version, files: dict, expires) -> Targets:
    """The delegated targets role `commands`: one command file per device."""
    return Targets(version=version, expires=expires, targets=files)


# ---------------------------------------------------------------------------------------------
# The repository (the signing side and what its server holds)

@dataclass
class Release:
    """What one publish() signed: the metadata files and the target files."""
    files: dict            # remote path -> bytes
    metadata: dict         # role -> bytes of that role's file
    targets: dict          # target path -> TargetFile (targets and commands together)

    def expected(self) -> dict:
        """expect.json's `targets`: every target path with its length and hashes."""
        return {path: {"length": info.length, **info.hashes} for path, info in self.targets.items()}


class Repository:
    """Keys, thresholds and target contents as the repository's admins hold them. Everything
    published stays on the server (served) like a consistent-snapshot repository's old versions."""

    def __init__(self):
        self.keys = {role: [new_key()] for role in (*TOP_ROLES, "commands")}
        self.thresholds = {role: 1 for role in TOP_ROLES}
        self.policies = {"policies/base.json": body({"version": 1, "rules": {}}),
                         "policies/mail.json": body({"version": 1, "rules": {"mail": "allow"}})}
        self.commands = {COMMAND_PATH: body({"kind": "lock", "counter": 1})}
        self.served: dict[str, bytes] = {}

    def add_root(self, version=None, signers=None, expires=VALID, file_version=None) -> bytes:
        """Signs a root from the current keys (by the current root keys unless signers is given)
        and serves it as <file_version or version>.root.json. The first is the shipped root."""
        if version is None:
            version = 1 + max((int(name.split(".")[0]) for name in self.served if name.endswith(".root.json")),
                              default=0)
        data = sign(root_role(version, self.keys, self.thresholds, expires),
                    self.keys["root"] if signers is None else signers)
        self.served[f"{file_version or version}.root.json"] = data
        return data

    def publish(self, timestamp=1, snapshot=1, targets=1, commands=1, *, expires=None, signers=None,
                target_hashes=("sha256",), meta_length=False, meta_hashes=(),
                snapshot_length=False, snapshot_hashes=()) -> Release:
        """Signs commands, targets, snapshot and timestamp at the given versions and serves them.
        meta_*: what snapshot says about targets.json and commands.json besides the version;
        snapshot_*: what timestamp says about snapshot.json besides the version."""
        expires = {role: VALID for role in ("timestamp", "snapshot", "targets", "commands")} | (expires or {})
        signers = dict(self.keys) | (signers or {})
        files, metadata, described = {}, {}, {}

        def target_files(contents):
            infos = {}
            for path, content in contents.items():
                infos[path] = TargetFile.from_data(path, content, list(target_hashes))
                for prefixed in infos[path].get_prefixed_paths():
                    files[f"targets/{prefixed}"] = content
            described.update(infos)
            return infos

        metadata["commands"] = sign(commands_role(commands, target_files(self.commands), expires["commands"]),
                                    signers["commands"])
        metadata["targets"] = sign(targets_role(targets, target_files(self.policies), expires["targets"],
                                                self.keys["commands"]), signers["targets"])
        meta = {"targets.json": meta_file(targets, metadata["targets"], meta_length, meta_hashes),
                "commands.json": meta_file(commands, metadata["commands"], meta_length, meta_hashes)}
        metadata["snapshot"] = sign(snapshot_role(snapshot, meta, expires["snapshot"]), signers["snapshot"])
        snapshot_meta = meta_file(snapshot, metadata["snapshot"], snapshot_length, snapshot_hashes)
        metadata["timestamp"] = sign(timestamp_role(timestamp, snapshot_meta, expires["timestamp"]),
                                     signers["timestamp"])

        files[f"{commands}.commands.json"] = metadata["commands"]
        files[f"{targets}.targets.json"] = metadata["targets"]
        files[f"{snapshot}.snapshot.json"] = metadata["snapshot"]
        files["timestamp.json"] = metadata["timestamp"]
        self.served.update(files)
        return Release(files, metadata, described)

    def serve(self) -> dict:
        """A copy of what the server holds now (a step may then tamper with it)."""
        return dict(self.served)


# ---------------------------------------------------------------------------------------------
# Scenarios

@dataclass
class Step:
    remote: dict
    outcome: str                 # "accept" or "refuse"
    targets: dict | None = None  # accept: what the client sees
    trusted: dict | None = None  # accept: trusted versions afterwards
    error: str | None = None     # refuse: the Swift verifier's error kind
    role: str | None = None      # refuse: which role (or "target")
    oracle: str | None = None    # refuse: python-tuf's exception when it is not ORACLE_FOR_ERROR[error]
    note: str | None = None


@dataclass
class Scenario:
    name: str
    attack: str
    description: str
    shipped_root: bytes
    steps: list = field(default_factory=list)


def versions(root=1, timestamp=1, snapshot=1, targets=1, commands=1) -> dict:
    return {"root": root, "timestamp": timestamp, "snapshot": snapshot, "targets": targets, "commands": commands}


def accept(remote, release: Release, trusted: dict, note=None) -> Step:
    return Step(remote, "accept", targets=release.expected(), trusted=trusted, note=note)


def refuse(remote, error, role, oracle=None, note=None) -> Step:
    return Step(remote, "refuse", error=error, role=role, oracle=oracle, note=note)


def valid():
    repo = Repository()
    shipped = repo.add_root()
    release = repo.publish()
    return Scenario("valid", "none: an honest repository (client workflow, spec 5.3-5.7)",
                    "Root, timestamp, snapshot, targets and the delegated commands role, all valid.",
                    shipped, [accept(repo.serve(), release, versions())])


def valid_hashes_lengths():
    repo = Repository()
    shipped = repo.add_root()
    both = ("sha256", "sha512")
    release = repo.publish(target_hashes=both, meta_length=True, meta_hashes=both,
                           snapshot_length=True, snapshot_hashes=both)
    return Scenario("valid-hashes-lengths",
                    "none: lengths and hashes checked (spec 5.5.1-5.5.2, 5.6.1-5.6.2, 5.7.3)",
                    "Timestamp gives snapshot's length, sha256 and sha512; snapshot gives them for targets "
                    "and commands; target files carry sha256 and sha512 (served under both prefixes).",
                    shipped, [accept(repo.serve(), release, versions())])


def policy_update():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    repo.policies["policies/base.json"] = body({"version": 2, "rules": {"usb": "deny"}})
    second = repo.publish(timestamp=2, snapshot=2, targets=2)
    assert second.targets["policies/base.json"].hashes != first.targets["policies/base.json"].hashes
    return Scenario("policy-update", "none: an update (spec 5.4-5.7)",
                    "Step 2 publishes targets v2 with a changed policies/base.json (new hash).",
                    shipped, [step1, accept(repo.serve(), second, versions(timestamp=2, snapshot=2, targets=2))])


def command_issued():
    repo = Repository()
    shipped = repo.add_root()
    repo.commands = {}
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    repo.commands = {COMMAND_PATH: body({"kind": "lock", "counter": 1})}
    second = repo.publish(timestamp=2, snapshot=2, commands=2)
    return Scenario("command-issued", "none: a delegated role's update (spec 5.6.7)",
                    "Step 1 has no command for the device; step 2's commands v2 adds it.",
                    shipped, [step1, accept(repo.serve(), second, versions(timestamp=2, snapshot=2, commands=2))])


def freeze_expired_timestamp():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    repo.publish(timestamp=2, expires={"timestamp": EXPIRED})
    return Scenario("freeze-expired-timestamp", "indefinite freeze attack (spec 5.4.4)",
                    "Step 2 serves a validly signed timestamp v2 whose expiry is past.",
                    shipped, [step1, refuse(repo.serve(), "expired", "timestamp")])


def rollback_timestamp():
    repo = Repository()
    shipped = repo.add_root()
    old = repo.publish()
    first = repo.publish(timestamp=2)
    step1 = accept(repo.serve(), first, versions(timestamp=2))
    remote = repo.serve()
    remote["timestamp.json"] = old.metadata["timestamp"]
    return Scenario("rollback-timestamp", "rollback attack (spec 5.4.3.1)",
                    "Step 1 trusts timestamp v2; step 2 serves the old timestamp v1.",
                    shipped, [step1, refuse(remote, "rollback", "timestamp")])


def rollback_snapshot():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish()
    first = repo.publish(timestamp=2, snapshot=2)
    step1 = accept(repo.serve(), first, versions(timestamp=2, snapshot=2))
    repo.publish(timestamp=3, snapshot=1)
    return Scenario("rollback-snapshot", "rollback attack (spec 5.4.3.2)",
                    "Step 1 trusts snapshot v2; step 2's validly signed timestamp v3 names snapshot v1 "
                    "(1.snapshot.json is served).",
                    shipped, [step1, refuse(repo.serve(), "rollback", "snapshot",
                                            note="the new timestamp lowers snapshot's version; python-tuf "
                                                 "refuses it while updating the timestamp")])


def rollback_targets():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish(targets=2)
    step1 = accept(repo.serve(), first, versions(targets=2))
    repo.publish(timestamp=2, snapshot=2, targets=1)
    return Scenario("rollback-targets", "rollback attack (spec 5.5.5)",
                    "Step 1 trusts targets v2; step 2's new timestamp v2 and snapshot v2 list targets v1.",
                    shipped, [step1, refuse(repo.serve(), "rollback", "snapshot",
                                            note="the new snapshot lowers targets.json's version")])


def mix_and_match():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    repo.policies["policies/base.json"] = body({"version": 2, "rules": {"usb": "deny"}})
    repo.publish(timestamp=2, snapshot=2, targets=2)
    remote = repo.serve()
    remote["2.targets.json"] = first.metadata["targets"]
    return Scenario("mix-and-match", "mix-and-match attack (spec 5.6.4)",
                    "Step 2's snapshot names targets v2, but 2.targets.json is the validly signed old targets "
                    "(signed version 1).",
                    shipped, [step1, refuse(remote, "versionMismatch", "targets")])


def endless_target():
    repo = Repository()
    shipped = repo.add_root()
    release = repo.publish()
    remote = repo.serve()
    for prefixed in release.targets["policies/base.json"].get_prefixed_paths():
        remote[f"targets/{prefixed}"] += b" " * 16384
    return Scenario("endless-target", "endless data attack (spec 5.7.3)",
                    "policies/base.json is served with 16384 bytes more than targets says.",
                    shipped, [refuse(remote, "length", "target")])


def endless_snapshot():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish(snapshot_length=True)
    remote = repo.serve()
    remote["1.snapshot.json"] += b" " * 65536  # still valid JSON: only the length gives it away
    return Scenario("endless-snapshot", "endless data attack (spec 5.5.1)",
                    "Timestamp gives snapshot's length; 1.snapshot.json is served 65536 bytes longer.",
                    shipped, [refuse(remote, "length", "snapshot")])


def wrong_target_hash():
    repo = Repository()
    shipped = repo.add_root()
    release = repo.publish()
    remote = repo.serve()
    for prefixed in release.targets["policies/base.json"].get_prefixed_paths():
        tampered = bytearray(remote[f"targets/{prefixed}"])
        tampered[-1] ^= 0x01
        remote[f"targets/{prefixed}"] = bytes(tampered)
    return Scenario("wrong-target-hash", "arbitrary installation attack (spec 5.7.3)",
                    "policies/base.json is served with the right length and one byte changed.",
                    shipped, [refuse(remote, "hash", "target")])


def untrusted_key_targets():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish(signers={"targets": [new_key()]})
    return Scenario("untrusted-key-targets", "arbitrary software attack (spec 5.6.3)",
                    "targets is signed by a key root does not list, and not by targets' key.",
                    shipped, [refuse(repo.serve(), "threshold", "targets")])


def untrusted_key_commands():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish(signers={"commands": [new_key()]})
    return Scenario("untrusted-key-commands", "arbitrary software attack on a delegated role (spec 5.6.3, 5.6.7)",
                    "commands is signed by a key the targets delegation does not list.",
                    shipped, [refuse(repo.serve(), "threshold", "commands")])


def threshold_targets():
    repo = Repository()
    repo.keys["targets"].append(new_key())
    repo.thresholds["targets"] = 2
    shipped = repo.add_root()
    repo.publish(signers={"targets": repo.keys["targets"][:1]})
    return Scenario("threshold-targets", "compromise of fewer keys than the threshold (spec 5.6.3)",
                    "Root gives targets two keys and threshold 2; only one of them signs.",
                    shipped, [refuse(repo.serve(), "threshold", "targets")])


def duplicate_signature():
    repo = Repository()
    repo.keys["targets"].append(new_key())
    repo.thresholds["targets"] = 2
    shipped = repo.add_root()
    release = repo.publish(signers={"targets": repo.keys["targets"][:1]})
    remote = repo.serve()
    remote["1.targets.json"] = duplicate_first_signature(release.metadata["targets"])
    return Scenario("duplicate-signature", "threshold counts one signature per key id (spec 5.6.3)",
                    "Targets threshold 2 with two keys; 1.targets.json lists the one key's signature twice.",
                    shipped, [refuse(remote, "threshold", "targets", oracle="DeserializationError",
                                     note="python-tuf refuses a file with two signatures by one key id "
                                          "while parsing it")])


def root_rotation():
    repo = Repository()
    shipped = repo.add_root()
    repo.keys["targets"] = [new_key()]
    repo.add_root()                      # 2: new targets key, signed by the (unchanged) root key
    old_root = repo.keys["root"]
    repo.keys["root"] = [new_key()]
    repo.add_root(signers=old_root + repo.keys["root"])   # 3: new root key, signed by v2's and v3's
    release = repo.publish()
    return Scenario("root-rotation", "none: root and targets key rotation (spec 5.3.1-5.3.9, 6.1)",
                    "Shipped root v1; 2.root.json rotates the targets key; 3.root.json rotates the root key "
                    "(signed by v2's and v3's root keys). Metadata is signed by v3's keys.",
                    shipped, [accept(repo.serve(), release, versions(root=3))])


def root_rotation_skip():
    repo = Repository()
    shipped = repo.add_root()
    old_root = repo.keys["root"]
    for role in TOP_ROLES:
        repo.keys[role] = [new_key()]
    repo.add_root(version=3, signers=old_root + repo.keys["root"])
    repo.publish()
    return Scenario("root-rotation-skip", "arbitrary software attack: a root version skipped (spec 5.3.3, 5.4.2)",
                    "Shipped root v1; the server has 3.root.json (every key new) but no 2.root.json, and "
                    "metadata signed by v3's keys. The client stays on root v1, which does not know them.",
                    shipped, [refuse(repo.serve(), "threshold", "timestamp")])


def root_version_mismatch():
    repo = Repository()
    shipped = repo.add_root()
    repo.add_root(version=3, file_version=2)
    repo.publish()
    return Scenario("root-version-mismatch", "rollback attack on root: the next root must be version N+1 (spec 5.3.5)",
                    "2.root.json is validly signed but its signed version is 3.",
                    shipped, [refuse(repo.serve(), "versionMismatch", "root")])


def root_not_signed_by_old():
    repo = Repository()
    shipped = repo.add_root()
    repo.keys["root"] = [new_key()]
    repo.add_root()                      # 2: new root key, signed by it alone
    repo.publish()
    return Scenario("root-not-signed-by-old",
                    "arbitrary software attack: new root not signed by the trusted root's keys (spec 5.3.4)",
                    "2.root.json rotates the root key and is signed only by the new key.",
                    shipped, [refuse(repo.serve(), "threshold", "root")])


def root_expired():
    repo = Repository()
    shipped = repo.add_root()
    repo.add_root(expires=EXPIRED)
    repo.publish()
    return Scenario("root-expired", "indefinite freeze attack on root (spec 5.3.10)",
                    "Shipped root v1 is valid; the final root, 2.root.json, is validly signed and expired.",
                    shipped, [refuse(repo.serve(), "expired", "root",
                                     note="an intermediate root is trusted and kept before the final root's "
                                          "expiry is checked (spec 5.3.7-5.3.10): root v2 stays trusted")])


def fast_forward_recovery():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    attacked = repo.serve()
    attacked["timestamp.json"] = sign(timestamp_role(1000000, MetaFile(1), VALID), repo.keys["timestamp"])
    step2 = Step(attacked, "accept", targets=step1.targets, trusted=versions(timestamp=1000000),
                 note="validly signed by the timestamp key: nothing tells it from an honest timestamp")
    repo.publish(timestamp=2)
    step3 = refuse(repo.serve(), "rollback", "timestamp",
                   note="the honest timestamp v2 is lower than the attacker's v1000000")
    repo.keys["timestamp"] = [new_key()]
    repo.keys["snapshot"] = [new_key()]
    repo.add_root()                      # 2: new timestamp and snapshot keys
    release = repo.publish(timestamp=1, snapshot=2)
    step4 = accept(repo.serve(), release, versions(root=2, timestamp=1, snapshot=2),
                   note="the rotation discards the trusted timestamp and snapshot (spec 5.3.11)")
    return Scenario("fast-forward-recovery", "fast-forward attack and its recovery (spec 5.4.3.1, 5.3.11)",
                    "Step 2: an attacker holding the timestamp key signs timestamp v1000000 (accepted, it is "
                    "validly signed). Step 3: the honest timestamp v2 is refused as a rollback. Step 4: the "
                    "admins publish 2.root.json with new timestamp and snapshot keys and timestamp v1.",
                    shipped, [step1, step2, step3, step4])


def expired_snapshot():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish(expires={"snapshot": EXPIRED})
    return Scenario("expired-snapshot", "indefinite freeze attack (spec 5.5.6)",
                    "Snapshot v1 is validly signed and expired.",
                    shipped, [refuse(repo.serve(), "expired", "snapshot")])


def expired_targets():
    repo = Repository()
    shipped = repo.add_root()
    repo.publish(expires={"targets": EXPIRED})
    return Scenario("expired-targets", "indefinite freeze attack (spec 5.6.5)",
                    "Targets v1 is validly signed and expired.",
                    shipped, [refuse(repo.serve(), "expired", "targets")])


def missing_snapshot():
    repo = Repository()
    shipped = repo.add_root()
    first = repo.publish()
    step1 = accept(repo.serve(), first, versions())
    repo.publish(timestamp=2, snapshot=2)
    remote = repo.serve()
    del remote["2.snapshot.json"]
    return Scenario("missing-snapshot", "a file the timestamp names is missing (spec 5.5.1)",
                    "Step 2's timestamp v2 names snapshot v2; the server has no 2.snapshot.json "
                    "(1.snapshot.json is still there).",
                    shipped, [step1, refuse(remote, "notFound", "snapshot")])


SCENARIOS = [
    valid, valid_hashes_lengths, policy_update, command_issued,
    freeze_expired_timestamp, rollback_timestamp, rollback_snapshot, rollback_targets, mix_and_match,
    endless_target, endless_snapshot, wrong_target_hash,
    untrusted_key_targets, untrusted_key_commands, threshold_targets, duplicate_signature,
    root_rotation, root_rotation_skip, root_version_mismatch, root_not_signed_by_old, root_expired,
    fast_forward_recovery, expired_snapshot, expired_targets, missing_snapshot,
]


# ---------------------------------------------------------------------------------------------
# Writing a scenario and checking it against the oracle

def write_files(directory: str, files: dict) -> None:
    for relative, data in files.items():
        path = os.path.join(directory, relative)
        os.makedirs(os.path.dirname(path), exist_ok=True)
        with open(path, "wb") as f:
            f.write(data)


def disagreement(step: Step, result: tuf_oracle.Outcome) -> str | None:
    """Why python-tuf's result differs from the step's intended outcome, or None."""
    if step.outcome == "accept":
        if result.oracle != "ok":
            return f"python-tuf refused: {result.oracle}: {result.detail}"
        if result.targets != step.targets:
            return f"targets differ: {result.targets} != {step.targets}"
        if result.trusted != step.trusted:
            return f"trusted differ: {result.trusted} != {step.trusted}"
        return None
    wanted = step.oracle or ORACLE_FOR_ERROR[step.error]
    if result.oracle != wanted:
        return f"python-tuf said {result.oracle} ({result.detail}), wanted {wanted}"
    return None


def generate(scenario: Scenario, outdir: str) -> list:
    """Writes the scenario, runs the oracle over its steps, writes expect.json.
    Returns one (step number, step, oracle result, disagreement) per step."""
    directory = os.path.join(outdir, scenario.name)
    shutil.rmtree(directory, ignore_errors=True)
    write_files(directory, {"trusted/root.json": scenario.shipped_root})
    rows, steps = [], []
    with tempfile.TemporaryDirectory(prefix="tuf-oracle-metadata-") as metadata_dir:
        for number, step in enumerate(scenario.steps, start=1):
            remote = os.path.join(directory, "steps", f"{number:02d}", "remote")
            write_files(remote, step.remote)
            result = tuf_oracle.run_step(metadata_dir, remote, PATHS,
                                         scenario.shipped_root if number == 1 else None)
            rows.append((number, step, result, disagreement(step, result)))
            entry = {"outcome": step.outcome}
            if step.outcome == "accept":
                entry["targets"] = step.targets
            else:
                entry["error"] = step.error
                entry["role"] = step.role
            # After a refusal too: what python-tuf keeps (roles verified before the refused one are
            # kept, as the spec's persist steps say).
            entry["trusted"] = result.trusted
            entry["paths"] = PATHS
            entry["oracle"] = result.oracle
            if result.detail:
                entry["oracleDetail"] = result.detail
            if step.note:
                entry["note"] = step.note
            steps.append(entry)
    expect = {"name": scenario.name, "attack": scenario.attack, "description": scenario.description,
              "device": DEVICE, "steps": steps}
    with open(os.path.join(directory, "expect.json"), "w") as f:
        json.dump(expect, f, indent=2, sort_keys=False)
        f.write("\n")
    return rows


def main() -> int:
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("outdir")
    parser.add_argument("--only", metavar="NAME", help="write only this scenario")
    args = parser.parse_args()
    builders = {builder.__name__.replace("_", "-"): builder for builder in SCENARIOS}
    if args.only is not None and args.only not in builders:
        parser.error(f"no scenario {args.only!r}; there are: {', '.join(builders)}")
    started = time.monotonic()
    os.makedirs(args.outdir, exist_ok=True)
    table, failures = [], 0
    for name, builder in builders.items():
        if args.only is not None and name != args.only:
            continue
        scenario = builder()
        assert scenario.name == name, (scenario.name, name)
        for number, step, result, problem in generate(scenario, args.outdir):
            intended = "accept" if step.outcome == "accept" else f"refuse {step.error}/{step.role}"
            table.append((name, f"{number:02d}", intended, result.oracle, "ok" if problem is None else "NO"))
            if problem is not None:
                failures += 1
                print(f"{name} step {number:02d}: {problem}", file=sys.stderr)
    widths = [max(len(row[i]) for row in table + [("scenario", "step", "intended", "python-tuf", "agrees")])
              for i in range(5)]
    for row in [("scenario", "step", "intended", "python-tuf", "agrees")] + table:
        print("  ".join(cell.ljust(width) for cell, width in zip(row, widths)).rstrip())
    print(f"{len({row[0] for row in table})} scenarios, {len(table)} steps, {failures} disagreeing, "
          f"{time.monotonic() - started:.2f} s")
    return 1 if failures else 0


if __name__ == "__main__":
    sys.exit(main())
