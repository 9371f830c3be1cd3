#!/usr/bin/env bash
# The Debian packages' test (`make deb-test`, CI): builds them (scripts/make-deb.sh), runs lintian
# on both, installs them on this machine with dpkg, checks what landed where (owners, modes,
# stripped binaries and their debug files, units that `systemd-analyze verify` accepts, what the
# postinst enabled; one multi-call executable with cordond and cordon-fleetd linked to it), runs
# the installed programs, then removes and purges them and checks that
# nothing is left but what an admin put in /etc/cordon.
#
#   scripts/test-deb.sh [--no-build] [CORDON.deb CORDON-DBGSYM.deb]
#
# Needs root (dpkg -i), or sudo. Refuses to run where a cordon package is already installed (it
# would remove it) unless CORDON_DEB_TEST_FORCE=1. Works without systemd as PID 1 (the maintainer
# scripts then only make the enablement symlinks).
set -euo pipefail
cd "$(dirname "$0")/.."

if [ "$(id -u)" != 0 ]; then
    exec sudo --preserve-env=PATH,CORDON_DEB_TEST_FORCE,RELEASE_FLAGS,DEB_XZ_LEVEL "$0" "$@"
fi

started=$(date +%s)
step() { printf '\n== %s (%d s)\n' "$*" "$(($(date +%s) - started))"; }
fail() {
    echo "test-deb: FAIL: $*" >&2
    exit 1
}
# readelf's section table and notes, read whole (a pipe into grep -q would stop it early, and
# pipefail would count that against it); a debug file has no interpreter, which readelf reports.
sections() { readelf -SW "$1" 2>/dev/null || true; }
build_id() { readelf -n "$1" 2>/dev/null | awk '/Build ID:/ && !id { id = $3 } END { print id }'; }

build_args=()
debs=()
for argument in "$@"; do
    case $argument in
    --no-build) build_args+=(--no-build) ;;
    *.deb) debs+=("$argument") ;;
    *)
        echo "usage: $0 [--no-build] [CORDON.deb CORDON-DBGSYM.deb]" >&2
        exit 2
        ;;
    esac
done

if dpkg -s cordon >/dev/null 2>&1 || dpkg -s cordon-dbgsym >/dev/null 2>&1; then
    [ "${CORDON_DEB_TEST_FORCE:-}" = 1 ] ||
        fail "a cordon package is installed here; the test would remove it (CORDON_DEB_TEST_FORCE=1 to go on)"
    dpkg -P cordon-dbgsym cordon >/dev/null
fi

work=$(mktemp -d)
admin_files=()
installed=no
cleanup() {
    # A failed run leaves nothing installed either.
    if [ "$installed" = yes ]; then dpkg -P cordon-dbgsym cordon >/dev/null 2>&1 || true; fi
    if [ -n "${agent:-}" ]; then kill "$agent" 2>/dev/null || true; fi
    rm -rf "$work" ${user_home:+"$user_home"}
    # What the test wrote as an admin (purge leaves it, by design).
    for file in "${admin_files[@]}"; do rm -f "$file"; done
    if [ "${etc_existed:-yes}" = no ]; then
        rmdir /etc/cordon/policy.d /etc/cordon/trust /etc/cordon 2>/dev/null || true
    fi
}
trap cleanup EXIT
[ -e /etc/cordon ] && etc_existed=yes || etc_existed=no

if ((${#debs[@]} == 0)); then
    step "build the packages"
    # xz -1: the packages' files are the same as `make deb`'s, packed in a minute less.
    mapfile -t debs < <(DEB_XZ_LEVEL=${DEB_XZ_LEVEL:-1} scripts/make-deb.sh "${build_args[@]}" --out "$work/out" | tail -2)
fi
((${#debs[@]} == 2)) || fail "expected the cordon and cordon-dbgsym packages, got: ${debs[*]}"
deb=${debs[0]}
dbgsym=${debs[1]}
[[ $(basename "$deb") == cordon_*.deb && $(basename "$dbgsym") == cordon-dbgsym_*.deb ]] ||
    fail "give the packages in this order: cordon, cordon-dbgsym"
version=$(dpkg-deb -f "$deb" Version)

step "lintian (fails on errors and warnings; info and pedantic shown)"
# Root: lintian says it would rather not, but reads the packages all the same.
status=0
report=$(lintian --fail-on error,warning --display-info --pedantic --color never "$deb" "$dbgsym" 2>&1) || status=$?
grep -v '^running with root privileges is not recommended!$' <<<"$report" || echo "(no tags)"
[ "$status" = 0 ] || fail "lintian reports errors or warnings (above)"

step "install $(basename "$deb")"
installed=yes
dpkg -i "$deb"
[ "$(dpkg-query -W -f '${Status}' cordon)" = "install ok installed" ] || fail "cordon is not installed"

step "files, owners and modes"
check() { # path type mode
    local path=$1 type=$2 mode=$3 actual
    [ -e "$path" ] || fail "$path is missing"
    case $type in
    f) [ -f "$path" ] && [ ! -L "$path" ] || fail "$path is not a regular file" ;;
    d) [ -d "$path" ] || fail "$path is not a directory" ;;
    esac
    actual=$(stat -c '%U:%G %a' "$path")
    [ "$actual" = "root:root $mode" ] || fail "$path is $actual, expected root:root $mode"
}
binary=/usr/bin/cordon
check "$binary" f 755
table=$(sections "$binary")
grep -q ' \.debug_info ' <<<"$table" && fail "$binary is not stripped"
grep -q ' \.symtab ' <<<"$table" && fail "$binary keeps its symbol table"
grep -q ' \.gnu_debuglink ' <<<"$table" || fail "$binary has no debug link"
needed=$(objdump -p "$binary")
grep -q 'NEEDED.*libswift' <<<"$needed" && fail "$binary needs the Swift runtime as a library"
# The other two programs are the same executable under their names (Sources/cordon-multicall).
for program in cordond cordon-fleetd; do
    [ -L "/usr/bin/$program" ] && [ "$(readlink "/usr/bin/$program")" = cordon ] ||
        fail "/usr/bin/$program is not a symbolic link to cordon"
done
echo "installed size: $(dpkg-query -W -f '${Installed-Size}' cordon) KiB; /usr/bin/cordon: $(du -k "$binary" | cut -f1) KiB"
check /lib/systemd/system/cordon-fleetd.service f 644
check /usr/lib/systemd/user/cordond.service f 644
check /usr/lib/systemd/user/cordond.socket f 644
grep -qx 'ExecStart=/usr/bin/cordond' /usr/lib/systemd/user/cordond.service || fail "cordond.service does not run /usr/bin/cordond"
for directory in /etc/cordon /etc/cordon/policy.d /etc/cordon/trust /var/lib/cordon /var/lib/cordon/fleet; do
    check "$directory" d 755
done
for page in man1/cordon.1.gz man1/cordond.1.gz man8/cordon-fleetd.8.gz; do
    check "/usr/share/man/$page" f 644
done
check /usr/share/doc/cordon/copyright f 644
check /usr/share/doc/cordon/changelog.Debian.gz f 644
check /usr/share/doc/cordon/examples/fleet.json f 644
[ -z "$(dpkg-query -W -f '${Conffiles}' cordon)" ] || fail "the package has conffiles"

step "units: systemd-analyze verify"
man_args=()
if ! command -v man >/dev/null; then
    echo "note: no man here; the unit's Documentation= man page is not checked"
    man_args=(--man=no)
fi
output=$(systemd-analyze verify "${man_args[@]}" /lib/systemd/system/cordon-fleetd.service 2>&1) ||
    fail "systemd-analyze verify cordon-fleetd.service: $output"
[ -z "$output" ] || fail "systemd-analyze verify cordon-fleetd.service warns: $output"
runtime=$work/xdg-runtime
install -d -m 0700 "$runtime"
output=$(XDG_RUNTIME_DIR=$runtime HOME=$work/home systemd-analyze --user verify "${man_args[@]}" \
    /usr/lib/systemd/user/cordond.socket /usr/lib/systemd/user/cordond.service 2>&1) ||
    fail "systemd-analyze --user verify cordond: $output"
[ -z "$output" ] || fail "systemd-analyze --user verify cordond warns: $output"
for page in cordon.1 cordond.1 cordon-fleetd.8; do
    warnings=$(LC_ALL=C.UTF-8 MANROFFSEQ='' MANWIDTH=80 man --warnings -E UTF-8 -l "/usr/share/man/man${page##*.}/$page.gz" 2>&1 >/dev/null || true)
    [ -z "$warnings" ] || fail "man $page: $warnings"
done

step "what the postinst enabled"
[ -L /etc/systemd/system/multi-user.target.wants/cordon-fleetd.service ] ||
    fail "cordon-fleetd.service is not enabled"
[ ! -e /etc/systemd/user/sockets.target.wants/cordond.socket ] ||
    fail "cordond.socket was enabled for every user"
[ ! -e /etc/systemd/user/default.target.wants/cordond.service ] ||
    fail "cordond.service was enabled for every user"

step "the installed programs run"
# Each name runs its own program (the usage line names it).
for program in cordon cordond cordon-fleetd; do
    usage=$("/usr/bin/$program" --help) || fail "$program --help"
    grep -q "^USAGE: $program " <<<"$usage" || fail "$program --help is not $program's: $(head -3 <<<"$usage")"
done
state=$(mktemp -d)
device=$(/usr/bin/cordon-fleetd id --state-dir "$state") || fail "cordon-fleetd id"
[[ $device =~ ^[0-9a-f]{64}$ ]] || fail "cordon-fleetd id printed '$device'"
[ "$(/usr/bin/cordon-fleetd id --state-dir "$state")" = "$device" ] || fail "the device id changed"
output=$(/usr/bin/cordon-fleetd run --once --config "$work/none.json" --state-dir "$state" 2>&1) &&
    fail "cordon-fleetd run without settings succeeded"
grep -q "cannot read $work/none.json" <<<"$output" || fail "cordon-fleetd run without settings: $output"
rm -rf "$state"
echo "device id: $device"

step "the installed agent serves an ordinary user (init, unlock, lock, a policy push, the audit's times, logout)"
# As a user would run it, without test mode: uid 65534 with its own XDG directories. The audit's
# times are written and read through the ICU data the release build links (docs/PERFORMANCE.md,
# "Install size"): ISO 8601 in UTC both ways.
# Its own directory: $work is root's (mode 0700), which uid 65534 cannot enter.
home=$(mktemp -d /tmp/cordon-deb-user.XXXXXX)
user_home=$home
chown 65534:65534 "$home"
install -d -o 65534 -g 65534 -m 0700 "$home/run"
as_user() {
    setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME="$home" \
        XDG_RUNTIME_DIR="$home/run" XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" "$@"
}
# Not through as_user: a function run in the background is a subshell of its own, and killing it
# would leave the agent running. setpriv and env exec, so $! is the agent.
setpriv --reuid=65534 --regid=65534 --clear-groups env -i PATH=/usr/bin:/bin HOME="$home" \
    XDG_RUNTIME_DIR="$home/run" XDG_DATA_HOME="$home/data" XDG_CONFIG_HOME="$home/config" \
    /usr/bin/cordond >"$work/cordond.log" 2>&1 &
agent=$!
for _ in $(seq 100); do [ -S "$home/run/cordon/agent.sock" ] && break || sleep 0.1; done
[ -S "$home/run/cordon/agent.sock" ] || fail "cordond made no socket: $(cat "$work/cordond.log")"
printf '%s\n%s\n' 'deb test passcode' 'deb test passcode' | as_user /usr/bin/cordon init --passcode-stdin >/dev/null ||
    fail "cordon init"
printf '%s\n' 'deb test passcode' | as_user /usr/bin/cordon unlock --passcode-stdin || fail "cordon unlock"
as_user /usr/bin/cordon lock || fail "cordon lock"
# A policy change is audited: a user file that shortens the idle timeout.
printf '{"schema": "cordon.policy.v1", "lock": {"idleTimeoutSeconds": 120}}\n' >"$home/short.json"
chown 65534:65534 "$home/short.json"
as_user /usr/bin/cordon policy push "$home/short.json" >/dev/null || fail "cordon policy push"
since=$(date -u -d '-1 hour' +%Y-%m-%dT%H:%M:%SZ)
audit=$(as_user /usr/bin/cordon audit --since "$since") || fail "cordon audit --since $since"
python3 - "$audit" <<'EOF' || fail "cordon audit: $audit"
import datetime, sys
rows = sys.argv[1].splitlines()[1:]
assert any("policy.apply" in row for row in rows), "no policy.apply record"
for row in rows:
    when = datetime.datetime.strptime(row.split()[0], "%Y-%m-%dT%H:%M:%S.%fZ")
    assert abs((datetime.datetime.utcnow() - when).total_seconds()) < 600, row
EOF
as_user /usr/bin/cordon logout >/dev/null || fail "cordon logout"
grep -q '"state" *: *"lockedNoKey"' <<<"$(as_user /usr/bin/cordon status --json)" || fail "not logged out"
kill "$agent"
wait "$agent" || true
agent=
echo "$(($(wc -l <<<"$audit") - 1)) audit records since $since"

step "install $(basename "$dbgsym")"
dpkg -i "$dbgsym"
id=$(build_id /usr/bin/cordon)
debug=/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
check "$debug" f 644
debug_files=("$debug")
grep -q ' \.debug_info ' <<<"$(sections "$debug")" || fail "$debug has no debug information"
[ "$(build_id "$debug")" = "$id" ] || fail "$debug's build id"
link=$(readelf --string-dump=.gnu_debuglink /usr/bin/cordon 2>/dev/null | awk '/\]/ && !name { name = $3 } END { print name }')
[ "$link" = "$(basename "$debug")" ] || fail "cordon's debug link names '$link'"
dpkg-query -W -f '${Build-Ids}\n' cordon-dbgsym | grep -q . || fail "cordon-dbgsym has no Build-Ids field"

step "what fleetd and an admin leave behind, then remove"
# As fleetd would: its state naming a policy it installed, that policy, one it installed that an
# admin has since edited, the agents' handoff files; and a policy of the admin's own.
install -d -m 0700 /var/lib/cordon-fleetd
printf '{"installed":{"fleet-a.json":"%s","fleet-b.json":"%s"},"taken":{}}' \
    "$(printf '{"a":1}' | sha256sum | cut -d' ' -f1)" "$(printf '{"b":1}' | sha256sum | cut -d' ' -f1)" \
    >/var/lib/cordon-fleetd/state.json
printf '{"a":1}' >/etc/cordon/policy.d/fleet-a.json
printf '{"b":2}' >/etc/cordon/policy.d/fleet-b.json
printf '{}' >/etc/cordon/policy.d/admin.json
install -d /var/lib/cordon/fleet/commands
printf '{}' >/var/lib/cordon/fleet/status.json
admin_files=(/etc/cordon/policy.d/fleet-a.json /etc/cordon/policy.d/fleet-b.json /etc/cordon/policy.d/admin.json)

dpkg -r cordon-dbgsym
for debug in "${debug_files[@]}"; do
    [ ! -e "$debug" ] || fail "$debug is left after dpkg -r cordon-dbgsym"
done
dpkg -r cordon
for path in /usr/bin/cordon /usr/bin/cordond /usr/bin/cordon-fleetd /lib/systemd/system/cordon-fleetd.service \
    /usr/lib/systemd/user/cordond.service /usr/lib/systemd/user/cordond.socket /usr/share/doc/cordon \
    /usr/share/man/man8/cordon-fleetd.8.gz; do
    [ ! -e "$path" ] || fail "$path is left after dpkg -r"
done
[ -f /var/lib/cordon-fleetd/state.json ] || fail "dpkg -r removed fleetd's state (only a purge may)"
[ -f /etc/cordon/policy.d/admin.json ] || fail "dpkg -r removed an admin's policy"

step "purge"
dpkg -P cordon
dpkg -P cordon-dbgsym >/dev/null 2>&1 || true
for path in /var/lib/cordon-fleetd /var/lib/cordon /etc/systemd/system/multi-user.target.wants/cordon-fleetd.service \
    /etc/systemd/system/cordon-fleetd.service /etc/cordon/policy.d/fleet-a.json; do
    [ ! -e "$path" ] && [ ! -L "$path" ] || fail "$path is left after dpkg -P"
done
[ -f /etc/cordon/policy.d/admin.json ] || fail "the purge removed an admin's policy"
[ -f /etc/cordon/policy.d/fleet-b.json ] || fail "the purge removed a policy an admin had edited"
! dpkg -s cordon >/dev/null 2>&1 || fail "dpkg still knows cordon after the purge"
! dpkg -s cordon-dbgsym >/dev/null 2>&1 || fail "dpkg still knows cordon-dbgsym after the purge"

step "passed: $version installs, verifies, runs and removes cleanly"
