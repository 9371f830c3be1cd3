#!/usr/bin/env bash
# A narrated run of Cordon on temporary directories: the agent, the CLI and the notes app.
set -euo pipefail
cd "$(dirname "$0")/.."
bin=.build/debug
demo=$(mktemp -d /tmp/cordon-demo.XXXXXX)
export CORDON_SOCKET="$demo/run/agent.sock"
passcode="demo-passcode-2468"

say() { printf '\n\033[1m== %s\033[0m\n' "$*"; }
cleanup() {
    [ -n "${notes_pid:-}" ] && kill "$notes_pid" 2>/dev/null || true
    [ -n "${ticker_pid:-}" ] && kill "$ticker_pid" 2>/dev/null || true
    [ -n "${daemon_pid:-}" ] && kill "$daemon_pid" 2>/dev/null || true
    wait 2>/dev/null || true
    rm -rf "$demo"
}
trap cleanup EXIT

say "An admin policy for the demo: unbound apps are trusted (by default an unbound app gets no key; docs/THREAT-MODEL.md)"
mkdir -p "$demo/admin"
echo '{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}' > "$demo/admin/10-demo.json"

say "Starting cordond on $demo (socket $CORDON_SOCKET)"
"$bin/cordond" --runtime-dir "$demo/run" --data-dir "$demo/data" --config-dir "$demo/config" \
    --admin-policy-dir "$demo/admin" --trust-dir "$demo/trust" --ack-deadline-ms 2000 --test-mode >"$demo/cordond.log" 2>&1 &
daemon_pid=$!
for _ in $(seq 1 200); do [ -S "$CORDON_SOCKET" ] && break; sleep 0.05; done
"$bin/cordon" status

say "Setting the passcode (scrypt is tuned to ~250 ms on this machine)"
echo "$passcode" | "$bin/cordon" init --passcode-stdin
"$bin/cordon" status

say "Starting the notes app: it registers and waits, locked and without a key"
"$bin/cordon-notes" --dir "$demo" --data-dir "$demo/data" --interval-ms 400 &
notes_pid=$!
sleep 1

say "Wrapping an unmodified program (quick integration): cordon run keeps it frozen until the key is there"
"$bin/cordon" run --app com.example.ticker -- examples/quick-integration/ticker.sh "$demo/ticker.log" &
ticker_pid=$!
sleep 1

say "Unlocking: the app receives its own key and starts writing encrypted notes; the ticker runs"
echo "$passcode" | "$bin/cordon" unlock --passcode-stdin
sleep 1.5
"$bin/cordon" apps
echo "ticker: $(wc -l < "$demo/ticker.log") lines so far"

say "Locking: DidLock; the key stays in memory, so the app may finish its work"
"$bin/cordon" lock
sleep 1

say "Unlocking again: within the re-authentication grace a managed app may come back without the passcode; the CLI asks for it"
echo "$passcode" | "$bin/cordon" unlock --passcode-stdin
sleep 1

say "Logging out: EncryptionKeyUnavailable; the app closes its file, drops the key and acknowledges; the ticker is frozen"
"$bin/cordon" logout
sleep 1
"$bin/cordon" apps
"$bin/cordon" status
ticker=$("$bin/cordon" apps --json | python3 -c 'import json,sys; print(next(a["pid"] for a in json.load(sys.stdin) if a["appId"] == "com.example.ticker"))')
echo "ticker (pid $ticker): $(grep State /proc/"$ticker"/status), $(wc -l < "$demo/ticker.log") lines"
sleep 1
echo "one second later: still $(wc -l < "$demo/ticker.log") lines"

say "Unlocking again: the key returns, the app resumes and the ticker is thawed"
echo "$passcode" | "$bin/cordon" unlock --passcode-stdin
sleep 1.2
echo "ticker: $(grep State /proc/"$ticker"/status), $(wc -l < "$demo/ticker.log") lines"

say "Stopping the wrapped program: cordon run forwards SIGTERM to it and exits with its status"
kill -TERM "$ticker_pid"
status=0
wait "$ticker_pid" || status=$?
ticker_pid=""
echo "cordon run exited with $status (128 + SIGTERM)"

say "Stopping cordond (SIGTERM): a revocation for every app, then the app halts"
kill -TERM "$daemon_pid"
wait "$daemon_pid" || true
daemon_pid=""
wait "$notes_pid" || true
notes_pid=""

say "The agent's log (no passcode or key ever appears in it)"
cat "$demo/cordond.log"
say "Done"
