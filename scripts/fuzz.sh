#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each one.
#
#   scripts/fuzz.sh [--smoke] [--build-only] [TARGET...]
#
# TARGET is varlink-frame, varlink-message, policy, age-header, tokens or tuf (default: all six). Each runs for
# FUZZ_SECONDS (default 60; 15 with --smoke) from the seeds in Fuzz/corpus/TARGET and
# Fuzz/regressions/TARGET; what it discovers is kept in the build directory, not in git.
# Exits non-zero when any target crashes or breaks an invariant, and prints the saved input's path.
#
# Environment: FUZZ_SECONDS, FUZZ_JOBS (builds and runs at once; default: the CPUs), FUZZ_BUILD_DIR
# (default .build-fuzz, git-ignored), SWIFTC (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc),
# FUZZ_FLAGS (extra libFuzzer flags).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
cd "$root"

smoke=0
build_only=0
targets=()
for argument in "$@"; do
    case "$argument" in
        --smoke) smoke=1 ;;
        --build-only) build_only=1 ;;
        varlink-frame | varlink-message | policy | age-header | tokens | tuf) targets+=("$argument") ;;
        -h | --help)
            sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
            exit 0
            ;;
        *)
            echo "fuzz.sh: unknown argument '$argument' (see --help)" >&2
            exit 2
            ;;
    esac
done
[ ${#targets[@]} -gt 0 ] || targets=(varlink-frame varlink-message policy age-header tokens tuf)

if [ "$smoke" = 1 ]; then seconds=${FUZZ_SECONDS:-15}; else seconds=${FUZZ_SECONDS:-60}; fi
build=${FUZZ_BUILD_DIR:-$root/.build-fuzz}
swiftc=${SWIFTC:-$(command -v swiftc || echo /opt/swift/usr/bin/swiftc)}
export SWIFT_BACKTRACE=enable=no

# Instrument everything the fuzzers run: the pure modules and the checks.
flags=(-swift-version 6 -O -wmo -g -sanitize=fuzzer,address -parse-as-library)

# True when $1 is missing or older than any of the other files.
stale() {
    local output=$1
    shift
    [ -e "$output" ] || return 0
    [ -n "$(find "$@" -newer "$output" -print -quit)" ]
}

# The sources of module $1 the fuzzers build: all of them, but only CordonAge's parsing files
# (they need no swift-crypto, which plain swiftc cannot build here).
module_sources() {
    case "$1" in
        CordonAge)
            printf 'Sources/CordonAge/%s.swift\n' AgeError AgeBase64 Bech32 AgeStanza AgeHeader AgeHeaderParser \
                AgeArmor AgeArmorDecoder TypedBytes
            ;;
        CordonTokens)
            # The parsers only: the files that need swift-crypto (codes, decryption, import) are left out.
            printf 'Sources/CordonTokens/%s.swift\n' Base32 Base64 BoundedXML MigrationPayload OATHToken OTPAuthURI \
                PercentEncoding ProtobufReader SDTIDFile SecurIDCTF SecurIDToken TokenFormatError TokenInputLimit
            ;;
        Crypto)
            # swift-crypto's stand-in for the fuzzer (Fuzz/Shims/CryptoShim.swift says what it does).
            printf '%s\n' Fuzz/Shims/CryptoShim.swift
            ;;
        CordonFleet)
            # The verifier and parsers: the admin's signing side (real Ed25519 keys) is left out.
            find Sources/CordonFleet -name '*.swift' ! -name TUFSigningKey.swift ! -name TUFWriter.swift \
                ! -name 'FleetPushedCommands+Sign.swift' | sort
            ;;
        *) printf '%s\n' Sources/"$1"/*.swift ;;
    esac
}

# A static library and module for Sources/$1 (with -enable-testing: the checks may reach internals).
build_module() {
    local module=$1 library="$build/lib/lib$1.a"
    local sources
    mapfile -t sources < <(module_sources "$module")
    stale "$library" "${sources[@]}" "$0" || return 0
    echo "fuzz.sh: building $module (instrumented)"
    nice -n 15 "$swiftc" "${flags[@]}" -enable-testing -module-name "$module" -emit-module -I "$build/modules" \
        -emit-module-path "$build/modules/$module.swiftmodule" -emit-library -static -o "$library" "${sources[@]}"
}

# The fuzzer $1: its entry point, the checks it shares with the tests, the module it fuzzes and
# the modules that one imports (built first, linked too).
build_fuzzer() {
    local target=$1 entry checks module deps=()
    case "$target" in
        varlink-frame) entry=Fuzz/VarlinkFrameFuzz.swift module=CordonProtocol ;;
        varlink-message) entry=Fuzz/VarlinkMessageFuzz.swift module=CordonProtocol ;;
        policy) entry=Fuzz/PolicyFuzz.swift module=CordonPolicy deps=(CordonProtocol) ;;
        age-header) entry=Fuzz/AgeHeaderFuzz.swift module=CordonAge ;;
        tokens) entry=Fuzz/TokensFuzz.swift module=CordonTokens ;;
        tuf) entry=Fuzz/TUFFuzz.swift module=CordonFleet deps=(CordonProtocol Crypto) ;;
    esac
    checks=Tests/${module}Tests/FuzzRegressionTests.swift
    local dep libraries=() links=()
    for dep in "${deps[@]}"; do
        build_module "$dep"
        libraries+=("$build/lib/lib$dep.a")
        links+=(-l"$dep")
    done
    build_module "$module"
    stale "$build/bin/$target" "$entry" "$checks" "$build/lib/lib$module.a" "${libraries[@]}" || return 0
    echo "fuzz.sh: building $target"
    nice -n 15 "$swiftc" "${flags[@]}" -use-ld=lld -D CORDON_FUZZER -module-name "Fuzz_${target//-/_}" \
        -I "$build/modules" -L "$build/lib" -l"$module" "${links[@]}" -o "$build/bin/$target" "$entry" "$checks"
}

# Runs the fuzzer $1 for $seconds; on a crash prints the saved input and fails.
run_fuzzer() {
    local target=$1 work="$build/corpus/$1" artifacts="$build/artifacts/$1/" log="$build/logs/$1.log"
    local seeds=(Fuzz/corpus/"$target") dictionary=()
    [ -f Fuzz/"$target".dict ] && dictionary=(-dict="Fuzz/$target.dict")
    [ -d Fuzz/regressions/"$target" ] && seeds+=(Fuzz/regressions/"$target")
    mkdir -p "$work" "$artifacts" "$(dirname "$log")"
    echo "fuzz.sh: running $target for ${seconds}s (log: $log)"
    local status=0
    # shellcheck disable=SC2086 # FUZZ_FLAGS is a list of flags.
    nice -n 15 "$build/bin/$target" -max_total_time="$seconds" -timeout=10 -rss_limit_mb=2048 \
        -print_final_stats=1 -artifact_prefix="$artifacts" "${dictionary[@]}" ${FUZZ_FLAGS:-} \
        "$work" "${seeds[@]}" >"$log" 2>&1 || status=$?
    # Named by target: two run at once, and their lines interleave.
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::peak_rss_mb' "$log" | sed "s/^/$target: /" || true
    if [ "$status" != 0 ]; then
        grep -E 'invariant broken|ERROR: (AddressSanitizer|libFuzzer)|Fatal error' "$log" | head -5 >&2 || true
        local saved
        saved=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "fuzz.sh: $target FAILED (exit $status); crashing input: ${saved:-none saved, see $log}" >&2
        echo "fuzz.sh: replay with: $build/bin/$target ${saved:-<input>}" >&2
        return 1
    fi
}

# Runs the commands given as arguments (each a function and its argument, split on the space), at
# most $jobs at once; fails when any fails. Two at a time on a 2-core machine halves the build and
# the smoke run.
jobs=${FUZZ_JOBS:-$(nproc 2>/dev/null || echo 2)}
parallel() {
    local command pids=() failed=0 next=0
    for command in "$@"; do
        if [ $((${#pids[@]} - next)) -ge "$jobs" ]; then
            wait "${pids[next]}" || failed=1
            next=$((next + 1))
        fi
        # shellcheck disable=SC2086 # the function and its argument, split on purpose.
        $command &
        pids+=($!)
    done
    for ((; next < ${#pids[@]}; next++)); do wait "${pids[next]}" || failed=1; done
    return "$failed"
}

# The modules fuzzer $1 links: those its module imports, then its module.
modules_of() {
    case "$1" in
        varlink-frame | varlink-message) echo CordonProtocol ;;
        policy) echo CordonProtocol CordonPolicy ;;
        age-header) echo CordonAge ;;
        tokens) echo CordonTokens ;;
        tuf) echo CordonProtocol Crypto CordonFleet ;;
    esac
}

mkdir -p "$build/lib" "$build/modules" "$build/bin"
# The modules the targets need, those others import first (CordonPolicy and CordonFleet import
# CordonProtocol, CordonFleet the Crypto stand-in), then the fuzzers.
needed=" $(for target in "${targets[@]}"; do modules_of "$target"; done | tr '\n' ' ') "
for stage in "CordonProtocol Crypto CordonAge CordonTokens" "CordonPolicy CordonFleet"; do
    builds=()
    for module in $stage; do
        case "$needed" in *" $module "*) builds+=("build_module $module") ;; esac
    done
    [ ${#builds[@]} = 0 ] || parallel "${builds[@]}"
done
fuzzers=()
for target in "${targets[@]}"; do fuzzers+=("build_fuzzer $target"); done
parallel "${fuzzers[@]}"
[ "$build_only" = 1 ] && exit 0
runs=()
for target in "${targets[@]}"; do runs+=("run_fuzzer $target"); done
parallel "${runs[@]}"
