#!/usr/bin/env bash
# Regenerates scripts/cordond.order: the functions cordond runs when it starts, initializes,
# unlocks, serves its first calls, locks and unlocks, one mangled name per line. `make release`
# hands the file to lld (--symbol-ordering-file), which places those functions next to each
# other, so the pages an idle agent touches hold its own code instead of their neighbours'
# (docs/PERFORMANCE.md, "Memory"). A stale file is harmless: names it lists that no longer exist
# are skipped, and new functions go after the listed ones.
#
# Usage: make release && scripts/order-file.sh [path/to/cordond] && make release
# (the script removes the release executables: SwiftPM does not see the file change, and the
# second `make release` links them again with it).
# Needs valgrind (callgrind lists every function run) and Python's varlink (scripts/install-deps.sh).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cordond=${1:-$root/.build/release/cordond}
out=$root/scripts/cordond.order
command -v valgrind >/dev/null || { echo "order-file: valgrind is missing; hint: apt-get install valgrind" >&2; exit 2; }
[ -x "$cordond" ] || { echo "order-file: no cordond at $cordond; hint: run make release first" >&2; exit 2; }

work=$(mktemp -d)
trap 'kill "$daemon" 2>/dev/null || true; rm -rf "$work"' EXIT
mkdir -p "$work/admin"
echo '{"schema": "cordon.policy.v1", "apps": {"unknown": "trusted"}}' >"$work/admin/00-trust-unbound.json"
# valgrind cannot read the DWARF of a release build; the symbol table is enough.
strip --strip-debug -o "$work/cordond" "$cordond"
CORDON_INSECURE_FAST_KDF=1 valgrind --tool=callgrind --demangle=no --callgrind-out-file="$work/callgrind.out" \
    "$work/cordond" --runtime-dir "$work/run" --data-dir "$work/data" --config-dir "$work/config" \
    --admin-policy-dir "$work/admin" --trust-dir "$work/trust" --log-level warning --idle-timeout 0 \
    --test-mode 2>"$work/valgrind.log" &
daemon=$!
for _ in $(seq 120); do
    [ -S "$work/run/agent.sock" ] && break
    sleep 1
done
[ -S "$work/run/agent.sock" ] || { echo "order-file: cordond did not start under valgrind (see $work/valgrind.log)" >&2; exit 1; }
python3 "$root/scripts/order_drive.py" "$work/run/agent.sock"
kill -TERM "$daemon"
wait "$daemon" || true

# Every function callgrind saw run, in the order it first names them.
python3 - "$work/callgrind.out" "$out" <<'EOF'
import re
import sys

names, ran = {}, {}  # `ran` keeps its keys in the order they were first named
for line in open(sys.argv[1]):
    match = re.match(r"^(c?fn)=\((\d+)\)(?: (.*))?$", line.strip())
    if not match:
        continue
    kind, number, name = match.groups()
    if name:
        names[number] = name
    if kind == "fn" and number in names:
        ran.setdefault(names[number])
with open(sys.argv[2], "w") as out:
    out.write("\n".join(name for name in ran if not name.startswith("0x")) + "\n")
print(f"order-file: {len(ran)} functions written to {sys.argv[2]}")
EOF
# SwiftPM does not track the ordering file: without this the next `make release` would not link again.
rm -f "$root/.build/release/cordon-multicall" "$root/.build/release/cordond" "$root/.build/release/cordon" \
    "$root/.build/release/cordon-fleetd" "$root/.build/release/cordon-bench" "$root/.build/release/cordon-notes"
echo "order-file: run make release to link the executables with it"
