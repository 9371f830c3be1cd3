#!/usr/bin/env bash
# Soak test: SOAK_SECONDS (default 600) of mixed load against a release cordond on temporary
# directories (scripts/soak_load.py: lock/unlock/logout cycles, app registrations and
# subscriptions, Check calls, pasteboard copy/paste, an event subscriber, an audit follower,
# queries, garbage clients), sampling the daemon's RSS every SOAK_INTERVAL seconds (default 5)
# into a CSV.
#
# Fails when the daemon dies, a well-formed call gets an error it should not, or memory is not
# flat. Flat: the samples of the first SOAK_WARMUP seconds (default 60, at least a tenth of the
# run) are dropped as warm-up; the rest is cut in thirds; the median RSS of the last third must
# be within SOAK_TOLERANCE_PCT percent (default 10) of the first third's median.
#
#   scripts/soak.sh                          # .build/release binaries, 10 minutes
#   SOAK_SECONDS=180 CORDON_BIN_DIR=.build-x/release scripts/soak.sh
#
# Output: $SOAK_OUT (default .build/soak): rss.csv (elapsed_s,rss_kib,fds,threads), load.json,
# cordond.log.
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${CORDON_BIN_DIR:-.build/release}
SECONDS_TOTAL=${SOAK_SECONDS:-600}
INTERVAL=${SOAK_INTERVAL:-5}
WARMUP=${SOAK_WARMUP:-60}
TOLERANCE=${SOAK_TOLERANCE_PCT:-10}
OUT=${SOAK_OUT:-.build/soak}
PASSCODE=2468

for binary in cordond cordon; do
    [ -x "$BIN/$binary" ] || { echo "soak: $BIN/$binary is missing (swift build -c release)" >&2; exit 2; }
done
mkdir -p "$OUT"
OUT=$(cd "$OUT" && pwd)
work=$(mktemp -d /tmp/cordon-soak.XXXXXX)
daemon_pid=""
cleanup() {
    [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

# Apps com.example.soak0..9 are managed when this Python registers them; a missed
# acknowledgement is only reported (never a freeze of the load generator).
python_exe=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
mkdir -p "$work/admin" "$work/config" "$work/trust"
python3 - "$python_exe" > "$work/admin/10-soak.json" <<'EOF'
import json, sys
apps = [{"id": "com.example.soak%d" % i, "executables": [sys.argv[1]]} for i in range(10)]
print(json.dumps({"schema": "cordon.policy.v1", "apps": {"managed": apps},
                  "lock": {"onAckTimeout": "report"}, "pasteboard": {"copyOut": "managed"}}))
EOF

export CORDON_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" CORDON_SESSION_BUS_ADDRESS="unix:path=$work/no-bus"
"$BIN/cordond" --runtime-dir "$work/run" --data-dir "$work/data" --config-dir "$work/config" \
    --admin-policy-dir "$work/admin" --trust-dir "$work/trust" --idle-timeout 0 --insecure-fast-kdf --test-mode \
    --log-level notice --log-target stderr 2> "$OUT/cordond.log" &
daemon_pid=$!
export CORDON_SOCKET="$work/run/agent.sock"
for _ in $(seq 100); do "$BIN/cordon" status > /dev/null 2>&1 && break; sleep 0.1; done
echo "$PASSCODE" | "$BIN/cordon" init --passcode-stdin > /dev/null

echo "soak: ${SECONDS_TOTAL}s of mixed load against $BIN/cordond (pid $daemon_pid), RSS every ${INTERVAL}s"
python3 scripts/soak_load.py "$CORDON_SOCKET" "$SECONDS_TOTAL" "$PASSCODE" > "$OUT/load.json" &
load_pid=$!

echo "elapsed_s,rss_kib,fds,threads" > "$OUT/rss.csv"
start=$(date +%s)
while kill -0 "$load_pid" 2>/dev/null; do
    kill -0 "$daemon_pid" 2>/dev/null || break
    rss=$(awk '/^VmRSS/ {print $2}' "/proc/$daemon_pid/status")
    threads=$(awk '/^Threads/ {print $2}' "/proc/$daemon_pid/status")
    fds=$(ls "/proc/$daemon_pid/fd" | wc -l)
    echo "$(($(date +%s) - start)),$rss,$fds,$threads" >> "$OUT/rss.csv"
    sleep "$INTERVAL"
done

status=0
wait "$load_pid" || status=$?
if ! kill -0 "$daemon_pid" 2>/dev/null; then
    echo "soak: FAIL: cordond died; see $OUT/cordond.log" >&2
    exit 1
fi
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=""
if [ "$status" != 0 ]; then
    echo "soak: FAIL: the load generator saw errors:" >&2
    python3 -c 'import json, sys; [print("  " + e) for e in json.load(open(sys.argv[1]))["errors"]]' "$OUT/load.json" >&2
    exit 1
fi

python3 - "$OUT/rss.csv" "$WARMUP" "$TOLERANCE" "$OUT/load.json" <<'EOF'
import csv, json, statistics, sys
path, warmup, tolerance, load = sys.argv[1], float(sys.argv[2]), float(sys.argv[3]), sys.argv[4]
rows = [(float(r["elapsed_s"]), int(r["rss_kib"])) for r in csv.DictReader(open(path))]
total = rows[-1][0] if rows else 0
warm = max(warmup, total / 10)
steady = [rss for t, rss in rows if t >= warm]
if len(steady) < 6:
    sys.exit("soak: FAIL: too few samples after the warm-up (%d); run longer" % len(steady))
third = len(steady) // 3
first, last = statistics.median(steady[:third]), statistics.median(steady[-third:])
growth = (last - first) / first * 100
calls = sum(v for k, v in json.load(open(load))["counts"].items() if k.startswith("io.cordon"))
print("soak: %d samples over %ds; warm-up %ds dropped; RSS KiB: min %d, max %d, first-third median %d, "
      "last-third median %d (%+.1f%%, tolerance %.0f%%); %d calls answered"
      % (len(rows), total, warm, min(r[1] for r in rows), max(r[1] for r in rows), first, last, growth,
         tolerance, calls))
if growth > tolerance:
    sys.exit("soak: FAIL: memory grew %.1f%% (more than %.0f%%)" % (growth, tolerance))
print("soak: PASS: memory is flat")
EOF
