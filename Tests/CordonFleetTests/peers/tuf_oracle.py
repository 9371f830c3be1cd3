#!/usr/bin/env python3
"""The test oracle for the TUF scenarios: python-tuf's own client (tuf.ngclient.Updater) run
against a scenario's steps, exactly as a device would run it.

Each step serves the files of OUTDIR/<name>/steps/NN/remote through a FetcherInterface (a
missing file is an HTTP 404), keeps its trusted metadata in one metadata directory for all the
steps of a scenario (ngclient's own cache, as on a device), calls refresh(), then looks up every
asked target path (get_targetinfo) and downloads each one it finds (download_target).

Used by tuf_scenarios.py at generation time; also runnable on a generated scenario:
    python3 tuf_oracle.py OUTDIR/<name>
"""
import hashlib
import json
import os
import sys
import tempfile
from collections.abc import Iterator

from tuf.api import exceptions
from tuf.api.metadata import Metadata
from tuf.ngclient import FetcherInterface, Updater

# The oracle's repository address: nothing is fetched from it, DirectoryFetcher maps it to a directory.
BASE_URL = "https://tuf-repository.invalid/"
TARGETS_URL = BASE_URL + "targets/"
ROLES = ("root", "timestamp", "snapshot", "targets", "commands")


class DirectoryFetcher(FetcherInterface):
    """Serves BASE_URL/<path> from <remote>/<path>; a missing file is a 404, like a web server."""

    def __init__(self, remote: str):
        self.remote = os.path.realpath(remote)
        self.fetched: list[str] = []

    def _fetch(self, url: str) -> Iterator[bytes]:
        if not url.startswith(BASE_URL):
            raise exceptions.DownloadHTTPError(f"not this repository: {url}", 404)
        relative = url[len(BASE_URL):]
        self.fetched.append(relative)
        path = os.path.realpath(os.path.join(self.remote, relative))
        if not path.startswith(self.remote + os.sep) or not os.path.isfile(path):
            raise exceptions.DownloadHTTPError(f"{relative} not found", 404)
        with open(path, "rb") as f:
            return iter([f.read()])


class Outcome:
    """What ngclient did on one step."""

    def __init__(self):
        self.oracle = "ok"              # "ok" or the exception's class name
        self.detail = ""                # the exception's message
        self.targets: dict[str, dict] = {}   # path -> {"length", "sha256", ...} as downloaded
        self.trusted: dict[str, int] = {}    # role -> version in the metadata directory afterwards
        self.fetched: list[str] = []


def trusted_versions(metadata_dir: str) -> dict[str, int]:
    """The versions of the metadata ngclient keeps in its metadata directory."""
    versions = {}
    for role in ROLES:
        path = os.path.join(metadata_dir, f"{role}.json")
        if os.path.exists(path):
            with open(path, "rb") as f:
                versions[role] = Metadata.from_bytes(f.read()).signed.version
    return versions


def run_step(metadata_dir: str, remote: str, paths: list[str], bootstrap: bytes | None) -> Outcome:
    """One update cycle. bootstrap is the shipped root on the first step, None afterwards (ngclient
    then starts from the root.json of its metadata directory)."""
    outcome = Outcome()
    fetcher = DirectoryFetcher(remote)
    with tempfile.TemporaryDirectory(prefix="tuf-oracle-targets-") as target_dir:
        try:
            updater = Updater(metadata_dir, BASE_URL, target_dir, TARGETS_URL, fetcher, bootstrap=bootstrap)
            updater.refresh()
            # Every metadata first (the delegated role included), then the target files.
            found = {path: updater.get_targetinfo(path) for path in paths}
            for path, info in found.items():
                if info is None:
                    continue
                with open(updater.download_target(info), "rb") as f:
                    data = f.read()
                entry = {"length": len(data)}
                for algorithm in info.hashes:
                    entry[algorithm] = hashlib.new(algorithm, data).hexdigest()
                outcome.targets[path] = entry
        except (exceptions.RepositoryError, exceptions.DownloadError) as e:
            outcome.oracle = type(e).__name__
            outcome.detail = str(e)
    outcome.trusted = trusted_versions(metadata_dir)
    outcome.fetched = fetcher.fetched
    return outcome


def run_scenario(directory: str) -> list[Outcome]:
    """Every step of a generated scenario, in order, with one metadata directory."""
    with open(os.path.join(directory, "expect.json")) as f:
        expect = json.load(f)
    with open(os.path.join(directory, "trusted", "root.json"), "rb") as f:
        bootstrap = f.read()
    outcomes = []
    with tempfile.TemporaryDirectory(prefix="tuf-oracle-metadata-") as metadata_dir:
        for number, step in enumerate(expect["steps"], start=1):
            remote = os.path.join(directory, "steps", f"{number:02d}", "remote")
            outcomes.append(run_step(metadata_dir, remote, step["paths"], bootstrap if number == 1 else None))
    return outcomes


if __name__ == "__main__":
    for number, result in enumerate(run_scenario(sys.argv[1]), start=1):
        print(f"step {number:02d}: {result.oracle} {result.detail} trusted={result.trusted}")
