#!/usr/bin/env python3
"""python-tuf's own client (tuf.ngclient.Updater, the reference implementation) refreshing from a
repository directory made by `cordon fleet`, as a device would.

    python3 ngclient_fetch.py DIR ROOT METADATA_DIR PATH...

DIR is the repository directory (what the admin uploads), served through a FetcherInterface that
reads files (a missing file is an HTTP 404). ROOT is the trusted root the client ships with; it is
used only when METADATA_DIR holds no root.json yet: METADATA_DIR is ngclient's own cache and is kept
between runs, so a second run updates from what the first trusted. Every PATH is looked up and
downloaded. Prints one JSON object:

    {"ok": true, "error": null, "detail": "", "trusted": {"root": 1, ...},
     "targets": {"policies/10-base.json": {"length": 12, "sha256": "..."}}, "missing": [...]}

and exits 0 (the caller reads "ok"); a usage error exits 2.
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

BASE_URL = "https://fleet-repository.invalid/"
TARGETS_URL = BASE_URL + "targets/"
ROLES = ("root", "timestamp", "snapshot", "targets", "commands")


class DirectoryFetcher(FetcherInterface):
    """Serves BASE_URL/<path> from <directory>/<path>; a missing file is a 404."""

    def __init__(self, directory: str):
        self.directory = os.path.realpath(directory)

    def _fetch(self, url: str) -> Iterator[bytes]:
        if not url.startswith(BASE_URL):
            raise exceptions.DownloadHTTPError(f"not this repository: {url}", 404)
        relative = url[len(BASE_URL):]
        path = os.path.realpath(os.path.join(self.directory, relative))
        if not path.startswith(self.directory + os.sep) or not os.path.isfile(path):
            raise exceptions.DownloadHTTPError(f"{relative} not found", 404)
        with open(path, "rb") as f:
            return iter([f.read()])


def trusted_versions(metadata_dir: str) -> dict:
    versions = {}
    for role in ROLES:
        path = os.path.join(metadata_dir, f"{role}.json")
        if os.path.exists(path):
            with open(path, "rb") as f:
                versions[role] = Metadata.from_bytes(f.read()).signed.version
    return versions


def main(argv: list[str]) -> int:
    if len(argv) < 4:
        print(__doc__, file=sys.stderr)
        return 2
    directory, root, metadata_dir, paths = argv[1], argv[2], argv[3], argv[4:]
    os.makedirs(metadata_dir, exist_ok=True)
    bootstrap = None
    if not os.path.exists(os.path.join(metadata_dir, "root.json")):
        with open(root, "rb") as f:
            bootstrap = f.read()
    result = {"ok": True, "error": None, "detail": "", "targets": {}, "missing": []}
    with tempfile.TemporaryDirectory(prefix="ngclient-targets-") as target_dir:
        try:
            updater = Updater(metadata_dir, BASE_URL, target_dir, TARGETS_URL, DirectoryFetcher(directory),
                              bootstrap=bootstrap)
            updater.refresh()
            for path in paths:
                info = updater.get_targetinfo(path)
                if info is None:
                    result["missing"].append(path)
                    continue
                with open(updater.download_target(info), "rb") as f:
                    data = f.read()
                result["targets"][path] = {"length": len(data), "sha256": hashlib.sha256(data).hexdigest()}
        except (exceptions.RepositoryError, exceptions.DownloadError) as e:
            result.update(ok=False, error=type(e).__name__, detail=str(e))
    result["trusted"] = trusted_versions(metadata_dir)
    print(json.dumps(result, sort_keys=True))
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
