# Cordon: `make demo` for a narrated run, `make test` for the whole suite.
SWIFT ?= swift
LINT_PATHS = Package.swift Sources Tests examples Fuzz Benchmarks/Package.swift Benchmarks/Benchmarks

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
# User units: where systemctl --user finds them for the default prefix, else under the prefix.
UNITDIR ?= $(if $(filter $(HOME)/.local,$(PREFIX)),$(HOME)/.config/systemd/user,$(PREFIX)/lib/systemd/user)

.PHONY: all deps build release release-multicall lint format policy-files test test-tsan demo bench bench-micro bench-micro-build fuzz fuzz-smoke soak install install-debug deb deb-test print-release-flags clean

all: build

deps:
	@scripts/install-deps.sh

# The package's targets treat warnings as errors (Package.swift, `strict`): a warning in the
# project's sources fails this build and `make test`; the dependencies' warnings do not.
build: deps
	$(SWIFT) build

# Release binaries carry the Swift runtime and Foundation (no /opt/swift needed where they are
# installed), export no symbols, and, where the toolchain has lld and glibc reads DT_RELR
# (2.36+), pack their relative relocations: together about 8 MB less resident memory idle
# (docs/PERFORMANCE.md). They also skip the run-time exclusivity checks
# (-enforce-exclusivity=unchecked: about 2% of the agent's samples per call, docs/PERFORMANCE.md,
# "Round trips"); every test build (debug, ThreadSanitizer) keeps them, so an overlapping access
# still fails there.
#
# Every module, the dependencies' too, is built with -cross-module-optimization: their functions
# are serialized into their modules, so a caller in another module inlines and specializes them
# (swift-crypto's HMAC over SHA-1, NIO's buffer writes, a Codable conformance): about 3 µs less
# agent time per data call (docs/PERFORMANCE.md, "Cross-module optimization").
#
# They also fetch concrete type metadata through direct accessors rather than by mangled name
# (no run-time demangling, no conformance scan to check a generic argument's requirements), and,
# with lld, put every function in a section of its own, place the functions an idle agent runs
# next to each other (scripts/cordond.order, from scripts/order-file.sh), gather the functions
# without a symbol, which it cannot name (scripts/text-layout.ld), and drop the sections nothing
# references: the pages a started, unlocked agent touches hold its own code rather than
# its neighbours' (docs/PERFORMANCE.md, "Resident memory" and "Socket-activated startup").
LLD := $(shell dirname "$$(readlink -f "$$(command -v $(SWIFT))")")/ld.lld
RELR_OK := $(shell getconf GNU_LIBC_VERSION 2>/dev/null | awk '{ split($$2, v, "."); print (v[1] > 2 || (v[1] == 2 && v[2] >= 36)) ? "yes" : "no" }')
LAYOUT_FLAGS = -Xswiftc -Xfrontend -Xswiftc -function-sections -Xcc -ffunction-sections \
	-Xlinker --symbol-ordering-file=$(CURDIR)/scripts/cordond.order -Xlinker --no-warn-symbol-ordering \
	-Xlinker --gc-sections -Xlinker -T -Xlinker $(CURDIR)/scripts/text-layout.ld
# ICU's data: the static Foundation links all of it (34 MB); release builds link the part Cordon
# can reach instead (scripts/icu-data.py, 3 MB: the root and English locales, time-zone rules,
# normalization; no collation, converters, other locales or localized names; docs/PERFORMANCE.md,
# "Install size"), as the toolchain's symbol by --defsym, so the archive's copy is never pulled in.
# ICU_DATA=full keeps the toolchain's. A new object removes the release executables, which SwiftPM
# would not otherwise link again (it does not track a file named only in linker flags).
ICU_DATA ?= trimmed
ICU_OBJECT = $(CURDIR)/.build/icu/icudata.o
ICU_SYMBOL := $(shell nm --defined-only "$$(dirname "$$(dirname "$$(readlink -f "$$(command -v $(SWIFT))")")")/lib/swift_static/linux/lib_FoundationICU.a" 2>/dev/null | awk '$$2 == "R" && $$3 ~ /^icudt[0-9]+_dat$$/ { print $$3; exit }')
ICU_FLAGS = $(if $(and $(filter trimmed,$(ICU_DATA)),$(ICU_SYMBOL)),-Xlinker $(ICU_OBJECT) -Xlinker --defsym -Xlinker $(ICU_SYMBOL)=cordon_$(ICU_SYMBOL))
RELEASE_FLAGS = --static-swift-stdlib -Xlinker --no-export-dynamic -Xswiftc -enforce-exclusivity=unchecked \
	-Xswiftc -cross-module-optimization \
	-Xswiftc -Xfrontend -Xswiftc -disable-concrete-type-metadata-mangled-name-accessors $(ICU_FLAGS) \
	$(if $(and $(wildcard $(LLD)),$(filter yes,$(RELR_OK))),-Xswiftc -use-ld=lld -Xlinker -z -Xlinker pack-relative-relocs $(LAYOUT_FLAGS))

$(ICU_OBJECT): scripts/icu-data.py
	SWIFT=$(SWIFT) scripts/icu-data.py $@
	rm -f $(addprefix .build/release/,cordon-multicall cordon cordond cordon-fleetd cordon-bench)

release: deps $(if $(ICU_FLAGS),$(ICU_OBJECT))
	$(SWIFT) build -c release $(RELEASE_FLAGS)

# The JSON Schema and the built-in default are generated from the settings' declarations
# (Sources/CordonPolicy/PolicyKeys*.swift); a test fails when these files fall behind.
policy-files: build
	.build/debug/cordon policy schema > policies/cordon.policy.v1.schema.json
	.build/debug/cordon policy schema --default > policies/default.json

# Also refuses the standard library's Mutex: ThreadSanitizer cannot see its contended path, so
# state is kept behind CordonLocking's `Locked` (docs/ARCHITECTURE.md, "Threads and confinement").
lint:
	$(SWIFT) format lint --strict -r $(LINT_PATHS)
	@! grep -rnE '\bMutex[<(]' --include='*.swift' Sources Tests examples \
		|| { echo "use CordonLocking's Locked, not Synchronization.Mutex (ThreadSanitizer cannot see it)"; exit 1; }

format:
	$(SWIFT) format format -i -r $(LINT_PATHS)

# The whole suite: formatting, unit tests, server tests over real sockets, and
# end-to-end tests that run the built cordond and cordon binaries. At most TEST_WIDTH tests run at
# once: unbounded, a 2-core machine had a hundred daemons, buses and TPM simulators starting
# together, and waits meant for a slow machine ran out.
TEST_WIDTH ?= 12
test: build lint
	$(SWIFT) test --experimental-maximum-parallelization-width $(TEST_WIDTH)
	CORDON_LOAD_TESTS=1 $(SWIFT) test --skip-build --filter LoadTests

# ThreadSanitizer over the in-process agent (server tests through real sockets), the SDK and its
# pinned channel (NIO, NIOSSL, the key gate): loop confinement and every hop to the store pool
# checked for data races. A build of its own in .build-tsan (a few minutes the first time); any
# report fails the run.
# Only those suites and what they need are built (CORDON_TEST_TARGETS, read by Package.swift; the
# manifest is evaluated afresh so a cached plan of the whole package is never used).
comma := ,
space := $(eval) $(eval)
TSAN_SUITES = CordonServerTests CordonKitTests CordonChannelTests
TSAN_ENV = CORDON_TEST_TARGETS=$(subst $(space),$(comma),$(TSAN_SUITES))
test-tsan: deps
	$(TSAN_ENV) $(SWIFT) build --build-tests --sanitize=thread --scratch-path .build-tsan --manifest-cache none
	$(TSAN_ENV) TSAN_OPTIONS="halt_on_error=1 second_deadlock_stack=1" $(SWIFT) test --skip-build --sanitize=thread \
		--experimental-maximum-parallelization-width $(TEST_WIDTH) --scratch-path .build-tsan --manifest-cache none \
		--filter '$(subst $(space),|,$(TSAN_SUITES))'

# libFuzzer targets (Fuzz/README.md): each runs FUZZ_SECONDS (default 60).
fuzz:
	scripts/fuzz.sh

# About 15 s per target; fails with the crashing input's path (CI runs it after the tests).
fuzz-smoke:
	scripts/fuzz.sh --smoke

# Ten minutes (SOAK_SECONDS) of mixed load against the release cordond; fails unless its memory stays flat.
soak: release
	scripts/soak.sh

demo: build
	@scripts/demo.sh

# Every benchmark with a target appends it to BENCH_SUMMARY (--summary); the run ends with one
# table of all targets (median, spread across runs, runs met, met or not), also written as
# Markdown beside it for docs/PERFORMANCE.md.
BENCH = .build/release/cordon-bench
BENCH_SUMMARY ?= .build/bench-summary.jsonl
# rtt and coldread measure what an ordinary user's hardened app gets: as root the agent's per-call
# check takes root's path (docs/PERFORMANCE.md, "Round trips"), so under root they run as nobody,
# who must be able to read the repository; the summary file is made writable for it.
BENCH_AS_USER = $(if $(filter 0,$(shell id -u)),setpriv --reuid=65534 --regid=65534 --clear-groups env HOME=/tmp)
bench: release
	@python3 -c "import cedarpy" 2>/dev/null || python3 -m pip install -q cedarpy 2>/dev/null || python3 -m pip install -q --break-system-packages cedarpy
	rm -f $(BENCH_SUMMARY)
	touch $(BENCH_SUMMARY) && chmod 0666 $(BENCH_SUMMARY)
	$(BENCH_AS_USER) $(BENCH) rtt --summary $(BENCH_SUMMARY)
	$(BENCH) policy --summary $(BENCH_SUMMARY)
	$(BENCH) startup --summary $(BENCH_SUMMARY)
	$(BENCH) fanout --subscribers 10,100,1000 --svg docs/fanout.svg --summary $(BENCH_SUMMARY)
	$(BENCH) memory --summary $(BENCH_SUMMARY)
	$(BENCH) storage --summary $(BENCH_SUMMARY)
	$(BENCH_AS_USER) $(BENCH) coldread --summary $(BENCH_SUMMARY)
	$(BENCH) verify --summary $(BENCH_SUMMARY)
	$(BENCH) identity-down --summary $(BENCH_SUMMARY)
	$(BENCH) enforce --apps 100
	$(BENCH) tokens
	$(BENCH) anchor
	$(BENCH) fleet-poll --devices 10000 --interval 6 --summary $(BENCH_SUMMARY)
	$(BENCH) summary $(BENCH_SUMMARY) --markdown > $(basename $(BENCH_SUMMARY)).md
	@echo; echo "summary of every target ($(BENCH_SUMMARY); Markdown: $(basename $(BENCH_SUMMARY)).md):"
	@$(BENCH) summary $(BENCH_SUMMARY)

# Microbenchmarks with allocation counts (ordo-one/benchmark), a package of its own.
bench-micro:
	cd Benchmarks && $(SWIFT) package --disable-sandbox benchmark --no-progress

# Only builds the microbenchmarks (debug), so a renamed type cannot leave them broken (CI runs it).
# In the root package's build directory: the same checkouts and flags, so Cordon's modules and
# swift-crypto built by `make build` are reused and only the benchmark tooling compiles (40 s, not 4 min).
bench-micro-build: deps
	cd Benchmarks && $(SWIFT) build --scratch-path ../.build

# The one executable `make install` and the Debian package install (Sources/cordon-multicall): it
# runs cordon, cordond or cordon-fleetd by the name it is run under. Three executables of their
# own would each carry the Swift runtime, Foundation and its ICU data (docs/PERFORMANCE.md,
# "Install size").
MULTICALL = .build/release/cordon-multicall
STAGE = .build/release/install
release-multicall: deps $(if $(ICU_FLAGS),$(ICU_OBJECT))
	$(SWIFT) build -c release $(RELEASE_FLAGS) --product cordon-multicall

# Installs one stripped executable, $(BINDIR)/cordon, with cordond and cordon-fleetd as symbolic
# links to it, and the systemd user units (for that cordond) in $(UNITDIR), then prints how to
# enable them. Its debug information is split off into $(STAGE)/cordon.debug (the executable names
# it in .gnu_debuglink); `make install-debug` puts it where gdb looks, $(BINDIR)/.debug.
# cordon-bench is not installed (run it from .build/release).
install: release-multicall
	install -d "$(STAGE)" "$(BINDIR)"
	objcopy --only-keep-debug --compress-debug-sections $(MULTICALL) $(STAGE)/cordon.debug
	strip --remove-section=.comment --remove-section=.note --strip-unneeded -o $(STAGE)/cordon $(MULTICALL)
	cd $(STAGE) && objcopy --add-gnu-debuglink=cordon.debug cordon
	install -m 0755 $(STAGE)/cordon "$(BINDIR)/cordon"
	ln -sfn cordon "$(BINDIR)/cordond"
	ln -sfn cordon "$(BINDIR)/cordon-fleetd"
	"$(BINDIR)/cordon" setup --user --unit-dir "$(UNITDIR)" --cordond-path "$(BINDIR)/cordond"

install-debug:
	install -d "$(BINDIR)/.debug"
	install -m 0644 $(STAGE)/cordon.debug "$(BINDIR)/.debug/cordon.debug"

# Debian packages (scripts/make-deb.sh): out/cordon_VERSION_ARCH.deb (the stripped multi-call
# executable as /usr/bin/cordon, cordond and cordon-fleetd linked to it, cordon-fleetd's system
# unit, cordond's user units, /etc/cordon, man pages) and out/cordon-dbgsym_VERSION_ARCH.deb (its
# debug symbols by build id), from a release build of cordon-multicall with RELEASE_FLAGS.
# `scripts/make-deb.sh --no-build` packs .build/release as it is.
deb: deps $(if $(ICU_FLAGS),$(ICU_OBJECT))
	RELEASE_FLAGS='$(RELEASE_FLAGS)' scripts/make-deb.sh

# Builds the packages, runs lintian, installs them with dpkg on this machine (root or sudo),
# checks them and removes them (scripts/test-deb.sh; CI runs it).
deb-test: deps $(if $(ICU_FLAGS),$(ICU_OBJECT))
	RELEASE_FLAGS='$(RELEASE_FLAGS)' scripts/test-deb.sh

print-release-flags: $(if $(ICU_FLAGS),$(ICU_OBJECT))
	@echo $(RELEASE_FLAGS)

clean:
	rm -rf .build .build-fuzz .build-tsan out
