#!/usr/bin/env bash
# Builds the libFuzzer targets in Fuzz/ and runs each one.
#
#   scripts/fuzz.sh [--smoke] [--build-only] [TARGET...]
#
# TARGET is varlink-frame, varlink-message, policy, age-header, tokens or tuf (default: all six). Each runs for
# FUZZ_SECONDS (default 60; 15 with --smoke) from the seeds in Fuzz/corpus/TARGET and
# Fuzz/regressions/TARGET; what it discovers is kept in the build directory, not in git.
# Exits non-zero on the first crash or broken invariant and prints the saved input's path.
#
# Environment: FUZZ_SECONDS, FUZZ_BUILD_DIR (default .build-fuzz, git-ignored), SWIFTC
# (default: swiftc on PATH, else /opt/swift/usr/bin/swiftc), FUZZ_FLAGS (extra libFuzzer flags).
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
            sed -n '2,13p' "$0" | sed 's/^# \{0,1\}//'
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
    grep -E '^#[0-9]+[[:space:]]+(INITED|DONE)|^Done [0-9]+ runs|^stat::peak_rss_mb' "$log" || true
    if [ "$status" != 0 ]; then
        grep -E 'invariant broken|ERROR: (AddressSanitizer|libFuzzer)|Fatal error' "$log" | head -5 >&2 || true
        local saved
        saved=$(sed -n 's/.*Test unit written to \(.*\)$/\1/p' "$log" | tail -1)
        echo "fuzz.sh: $target FAILED (exit $status); crashing input: ${saved:-none saved, see $log}" >&2
        echo "fuzz.sh: replay with: $build/bin/$target ${saved:-<input>}" >&2
        return 1
    fi
}

mkdir -p "$build/lib" "$build/modules" "$build/bin"
for target in "${targets[@]}"; do build_fuzzer "$target"; done
[ "$build_only" = 1 ] && exit 0
failed=0
for target in "${targets[@]}"; do run_fuzzer "$target" || failed=1; done
exit "$failed"
