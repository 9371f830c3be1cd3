# Cordon: `make demo` for a narrated run, `make test` for the whole suite.
SWIFT ?= swift
LINT_PATHS = Package.swift Sources Tests examples

PREFIX ?= $(HOME)/.local
BINDIR ?= $(PREFIX)/bin
# User units: where systemctl --user finds them for the default prefix, else under the prefix.
UNITDIR ?= $(if $(filter $(HOME)/.local,$(PREFIX)),$(HOME)/.config/systemd/user,$(PREFIX)/lib/systemd/user)

.PHONY: all deps build release lint format test demo bench install clean

all: build

deps:
	@scripts/install-deps.sh

build: deps
	$(SWIFT) build

release: deps
	$(SWIFT) build -c release

lint:
	$(SWIFT) format lint --strict -r $(LINT_PATHS)

format:
	$(SWIFT) format format -i -r $(LINT_PATHS)

# The whole suite: formatting, unit tests, server tests over real sockets, and
# end-to-end tests that run the built cordond and cordon binaries.
test: build lint
	$(SWIFT) test

demo: build
	@scripts/demo.sh

bench: release
	.build/release/cordon-bench rtt
	.build/release/cordon-bench policy
	.build/release/cordon-bench startup

# Installs cordond, cordon and cordon-bench in $(BINDIR) and the systemd user units (for that
# cordond) in $(UNITDIR), then prints how to enable them.
install: release
	install -d "$(BINDIR)"
	install -m 0755 .build/release/cordond .build/release/cordon .build/release/cordon-bench "$(BINDIR)"
	"$(BINDIR)/cordon" setup --user --unit-dir "$(UNITDIR)" --cordond-path "$(BINDIR)/cordond"

clean:
	rm -rf .build
