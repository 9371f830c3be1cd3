#!/usr/bin/env bash
# What a document share costs the agent (docs/PERFORMANCE.md, "Document hand-over"): a cordond on
# temporary directories, this machine's Python bound as two managed apps, and
# scripts/document_cost.py sharing a 2 GiB sparse file, 64 and 256 MiB of data, and 2 GiB of
# allocated blocks (refused), each timed, with the machine's shmem and the agent's peak RSS.
#
#   scripts/document-cost.sh                       # .build/release binaries
#   CORDON_BIN_DIR=.build/debug scripts/document-cost.sh
set -euo pipefail

cd "$(dirname "$0")/.."
BIN=${CORDON_BIN_DIR:-.build/release}
for binary in cordond cordon; do
    [ -x "$BIN/$binary" ] || { echo "document-cost: $BIN/$binary is missing (swift build -c release)" >&2; exit 2; }
done
work=$(mktemp -d /var/tmp/cordon-documents.XXXXXX)
daemon_pid=""
cleanup() {
    [ -n "$daemon_pid" ] && kill -9 "$daemon_pid" 2>/dev/null || true
    rm -rf "$work"
}
trap cleanup EXIT

python_exe=$(python3 -c 'import os, sys; print(os.path.realpath(sys.executable))')
mkdir -p "$work/admin" "$work/config" "$work/trust" "$work/files"
cat > "$work/admin/10-documents.json" <<JSON
{"schema": "cordon.policy.v1", "apps": {"managed": [
  {"id": "com.example.sender", "executables": ["$python_exe"]},
  {"id": "com.example.viewer", "executables": ["$python_exe"]}]},
 "passcode": {"minLength": 4, "allowSimple": true},
 "documents": {"sendTo": "any", "receiveFrom": "any"}}
JSON

export CORDON_SYSTEM_BUS_ADDRESS="unix:path=$work/no-bus" CORDON_SESSION_BUS_ADDRESS="unix:path=$work/no-bus"
"$BIN/cordond" --runtime-dir "$work/run" --data-dir "$work/data" --config-dir "$work/config" \
    --admin-policy-dir "$work/admin" --trust-dir "$work/trust" --idle-timeout 0 --insecure-fast-kdf --test-mode \
    --log-level notice --log-target stderr 2> "$work/cordond.log" &
daemon_pid=$!
export CORDON_SOCKET="$work/run/agent.sock"
for _ in $(seq 100); do "$BIN/cordon" status > /dev/null 2>&1 && break; sleep 0.1; done
echo 2468 | "$BIN/cordon" init --passcode-stdin > /dev/null

python3 scripts/document_cost.py "$CORDON_SOCKET" "$work/files" "$daemon_pid"
