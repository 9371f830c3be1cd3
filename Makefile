# Cordon: `make demo` for a narrated run, `make test` for the whole suite.
SWIFT ?= swift
LINT_PATHS = Package.swift Sources Tests examples

.PHONY: all deps build release lint format test demo bench clean

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

clean:
	rm -rf .build
