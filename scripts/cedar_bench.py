#!/usr/bin/env python3
"""Cedar (cedarpy) peer of `cordon-bench policy`: times the same request mix with Cedar.

Reads a JSON request mix (written by `cordon-bench policy`; a file path, or `-` for stdin):

    {"repetitions": 200, "warmup": 20,
     "policies": [{"name": "corporate-baseline", "cedar": "scripts/cedar/corporate-baseline.cedar",
                   "requests": [{"action": "pasteboard.paste",
                                 "app": {"id": "org.other.chat", "managed": false},
                                 "peer": {"id": "com.example.notes", "managed": true},
                                 "location": null, "contentType": null, "length": 120}, ...]}]}

and prints one JSON object on stdout: per policy the batch size, the median and p99 nanoseconds
per decision (each repetition is one `is_authorized_batch` call over the whole mix: its time
divided by the batch size), the same for the Rust engine alone (cedarpy's per-request
`authz_duration_micros` metric, which leaves out the Python binding) and every decision, in
request order, so the caller can check that Cedar and Cordon decide the same.

The Cedar model (see scripts/cedar/README.md): principal App::"<app id>", action
Action::"<cordon action>", resource App::"<peer id>" (App::"(none)" when the request has no peer),
context {contentType, location, length} with the request's non-null values. Every app entity has
one attribute, `managed`, from the request's facts. The policy set and the entities are parsed
once (cedarpy's PolicySet and Entities handles), as Cordon compiles its policy once; the request
dicts are built before timing.

Exit status: 0 on success, 3 when cedarpy is not installed (install it with
`python3 -m pip install cedarpy`), 2 on any other failure (a policy that does not parse, an
evaluation error: Cedar skips a policy whose condition errors, so the decision would not be the
rules' and the run must not count).
"""

import json
import sys
import time

NO_PEER = "(none)"


def fail(message: str, status: int = 2) -> None:
    print(f"cedar_bench.py: {message}", file=sys.stderr)
    sys.exit(status)


try:
    import cedarpy
except ImportError:
    fail("cedarpy is not installed; install it with: python3 -m pip install cedarpy", 3)


def cedarpy_version() -> str:
    try:
        from importlib.metadata import version

        return version("cedarpy")
    except Exception:  # noqa: BLE001 - the version is informative only
        return "unknown"


def app_uid(app_id: str) -> dict:
    return {"type": "App", "id": app_id}


def entities_for(requests: list) -> list:
    """One App entity per app the requests name, with its `managed` fact; conflicting facts fail."""
    managed = {NO_PEER: False}
    for request in requests:
        for facts in (request["app"], request.get("peer")):
            if facts is None:
                continue
            known = managed.setdefault(facts["id"], facts["managed"])
            if known != facts["managed"]:
                fail(f"app {facts['id']!r} is both managed and unmanaged in the request mix")
    return [{"uid": app_uid(app_id), "attrs": {"managed": flag}, "parents": []} for app_id, flag in managed.items()]


def cedar_request(request: dict) -> dict:
    peer = request.get("peer")
    context = {}
    for key in ("contentType", "location", "length"):
        if request.get(key) is not None:
            context[key] = request[key]
    return {
        "principal": app_uid(request["app"]["id"]),
        "action": {"type": "Action", "id": request["action"]},
        "resource": app_uid(peer["id"] if peer is not None else NO_PEER),
        "context": context,
    }


def percentile_index(count: int, fraction_percent: int) -> int:
    """The index `cordon-bench` uses: count * p / 100, clamped."""
    return min(count - 1, count * fraction_percent // 100)


def engine_nanoseconds(results: list) -> float:
    """The Rust engine's own time per decision in one batch: the mean of cedarpy's
    `authz_duration_micros` metric (whole microseconds per request), without building the
    requests from Python objects or returning the results."""
    total = sum(result.metrics.get("authz_duration_micros", 0) for result in results)
    return total * 1000 / len(results)


def run_policy(spec: dict, repetitions: int, warmup: int) -> dict:
    try:
        with open(spec["cedar"], encoding="utf-8") as handle:
            policy_set = cedarpy.PolicySet.from_str(handle.read())
    except (OSError, ValueError) as error:
        fail(f"{spec['cedar']}: {error}")
    requests = spec["requests"]
    if not requests:
        fail(f"{spec['name']}: the request mix is empty")
    entities = cedarpy.Entities.from_json_str(json.dumps(entities_for(requests)))
    batch = [cedar_request(request) for request in requests]

    results = cedarpy.is_authorized_batch(batch, policy_set, entities)
    for request, result in zip(requests, results):
        errors = list(result.diagnostics.errors)
        if errors:
            fail(f"{spec['name']}: evaluation error on {json.dumps(request)}: {errors}")
    decisions = [bool(result.allowed) for result in results]

    for _ in range(warmup):
        cedarpy.is_authorized_batch(batch, policy_set, entities)
    samples = []
    engine_samples = []
    for _ in range(repetitions):
        start = time.perf_counter_ns()
        results = cedarpy.is_authorized_batch(batch, policy_set, entities)
        samples.append((time.perf_counter_ns() - start) / len(batch))
        engine_samples.append(engine_nanoseconds(results))
    samples.sort()
    engine_samples.sort()
    return {
        "name": spec["name"],
        "batchSize": len(batch),
        "repetitions": repetitions,
        "medianNanoseconds": samples[len(samples) // 2],
        "p99Nanoseconds": samples[percentile_index(len(samples), 99)],
        "engineMedianNanoseconds": engine_samples[len(engine_samples) // 2],
        "engineP99Nanoseconds": engine_samples[percentile_index(len(engine_samples), 99)],
        "decisions": decisions,
    }


def main() -> None:
    if len(sys.argv) != 2 or sys.argv[1] in ("-h", "--help"):
        print(__doc__.strip().splitlines()[0], file=sys.stderr)
        print("usage: cedar_bench.py REQUESTS.json | -", file=sys.stderr)
        sys.exit(0 if len(sys.argv) == 2 else 2)
    try:
        if sys.argv[1] == "-":
            mix = json.load(sys.stdin)
        else:
            with open(sys.argv[1], encoding="utf-8") as handle:
                mix = json.load(handle)
    except (OSError, ValueError) as error:
        fail(f"cannot read the request mix: {error}")
    repetitions = int(mix.get("repetitions", 200))
    warmup = int(mix.get("warmup", repetitions // 10))
    if repetitions < 1:
        fail("repetitions must be at least 1")
    report = {
        "engine": "cedarpy",
        "version": cedarpy_version(),
        "policies": [run_policy(spec, repetitions, warmup) for spec in mix["policies"]],
    }
    json.dump(report, sys.stdout)
    sys.stdout.write("\n")


if __name__ == "__main__":
    main()
