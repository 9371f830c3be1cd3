#!/usr/bin/env bash
# Installs what Cordon needs to build and test on Debian/Ubuntu, or says exactly what to install.
# System: libsystemd-dev, libsqlite3-dev, pkg-config, util-linux (setpriv), python3 + pip,
# systemd (systemd-socket-activate and systemd-analyze for the socket-activation and unit tests),
# dbus-daemon, python3-dbus and python3-gi (the private bus and logind stand-in of the lock-trigger tests),
# bubblewrap (the Flatpak-style sandboxes of the sandbox identity tests),
# age (the reference age CLI the CordonAge interop tests and `cordon-bench storage --file` run against),
# zlib1g-dev (inflates the compressed C2SP age test vectors in CordonAgeTests),
# oathtool and stoken (the HOTP/TOTP and SecurID peers CordonTokensTests compare codes with),
# libtss2-dev (the TPM Software Stack CordonTPM links), swtpm and swtpm-tools (the TPM 2.0 simulator the TPM
# tests start), tpm2-tools (the reference the TPM tests check the simulator's state with).
# Python (test peers): varlink, jsonschema, rsa-ct-kip (RSA's CT-KIP client and fake server the CT-KIP
# import tests provision from; it brings flask and pycryptodome), authlib and flask (the local OAuth 2.0
# identity provider of CordonIdentityTests), h2 (the HTTP/2 peer of CordonChannelTests), tuf (python-tuf, the reference
# TUF client the CordonFleetTests scenarios are made with and checked against); openssl and curl (the certificates
# and the reference verifier of CordonChannelTests); valgrind and binutils' strip (callgrind
# lists the functions scripts/order-file.sh puts first in a release cordond); gcc (builds the
# user-written library the injection attack test preloads); nginx-light (the HTTPS host of the fleet
# repository in FleetdEndToEndTests); prometheus (the real Prometheus and its promtool that scrape and check
# fleetd's and cordond's metrics in FleetdMetricsEndToEndTests and AgentMetricsFileTests);
# prometheus-node-exporter (the textfile collector that reads the agents' metrics files in
# AgentMetricsFileTests); lintian, dpkg-dev (dpkg-shlibdeps), init-system-helpers
# (deb-systemd-helper) and man-db (systemd-analyze verify reads the unit's man page) for
# `make deb` and `make deb-test` (scripts/make-deb.sh, scripts/test-deb.sh), with binutils'
# objcopy, readelf and strip; libnats-dev (the official NATS C client CNATS wraps) and nats-server (the
# JetStream server CordonNATSTests run against); socat (the
# TLS server and the plain client of the tunnel's half-close test in CordonRunTests); libssl-dev (libcrypto:
# the Diffie-Hellman, HKDF and AES-128-CBC of CCordonBench's Secret Service client) and gnome-keyring (the
# Secret Service peer `cordon-bench rtt` measures Storage.Get against), keepassxc (the second one, run headless).
set -euo pipefail

# One package per line (parallel work adds lines, not edits them).
packages=(
    libsystemd-dev libsqlite3-dev pkg-config util-linux python3 python3-pip systemd dbus-daemon python3-dbus python3-gi
    bubblewrap
    age
    zlib1g-dev
    oathtool
    stoken
    libtss2-dev
    swtpm
    swtpm-tools
    tpm2-tools
    fprintd
    libfprint-2-2
    python3-dbusmock
    openssl
    curl
    valgrind
    binutils
    gcc
    nginx-light
    lintian
    dpkg-dev
    init-system-helpers
    man-db
    libnats-dev
    nats-server
    prometheus
    prometheus-node-exporter
    socat
    libssl-dev
    gnome-keyring
    keepassxc
)
missing=()
for package in "${packages[@]}"; do
    dpkg -s "$package" >/dev/null 2>&1 || missing+=("$package")
done

if ((${#missing[@]})); then
    if command -v apt-get >/dev/null 2>&1; then
        sudo=""
        if [ "$(id -u)" != 0 ]; then
            if command -v sudo >/dev/null 2>&1; then sudo="sudo"; else
                echo "missing system packages: ${missing[*]}" >&2
                echo "install them as root: apt-get install -y ${missing[*]}" >&2
                exit 1
            fi
        fi
        echo "installing system packages: ${missing[*]}"
        $sudo apt-get update -qq
        DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq "${missing[@]}" >/dev/null
    else
        echo "missing system packages: ${missing[*]} (install them with your package manager)" >&2
        exit 1
    fi
fi

# The Python varlink client is the third-party peer in the end-to-end tests.
python=${PYTHON:-python3}
if ! "$python" -c "import varlink" >/dev/null 2>&1; then
    echo "installing the Python varlink client"
    "$python" -m pip install -q varlink 2>/dev/null || "$python" -m pip install -q --break-system-packages varlink
fi

# The suites run their Python peers as an ordinary user (docs/THREAT-MODEL.md), with Debian's
# interpreter: a root-only interpreter (pyenv under /root) is out of that user's reach. The varlink
# client (pure Python) goes where Debian's interpreter looks too.
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import varlink" >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    target=$(/usr/bin/python3 -c "import site; print(site.getsitepackages()[0])")
    echo "installing the Python varlink client for /usr/bin/python3 in $target"
    $sudo mkdir -p "$target"
    $sudo "$python" -m pip install -q --no-deps --target "$target" varlink 2>/dev/null \
        || $sudo "$python" -m pip install -q --break-system-packages --no-deps --target "$target" varlink
fi

# The Python JSON Schema validator checks that policies/cordon.policy.v1.schema.json and the
# Swift policy parser agree on every shipped policy and invalid fixture.
if ! "$python" -c "import jsonschema" >/dev/null 2>&1; then
    echo "installing the Python jsonschema validator"
    "$python" -m pip install -q jsonschema 2>/dev/null || "$python" -m pip install -q --break-system-packages jsonschema
fi

# RSA's CT-KIP dialect: the fake server the CT-KIP import tests provision from, and its client.
if ! "$python" -c "import rsa_ct_kip, flask, Crypto" >/dev/null 2>&1; then
    echo "installing the Python rsa-ct-kip package"
    "$python" -m pip install -q rsa-ct-kip==0.6.0 2>/dev/null || "$python" -m pip install -q --break-system-packages rsa-ct-kip==0.6.0
fi

# authlib and Flask serve the local OAuth 2.0 identity provider (device grant, code + PKCE, rotating
# refresh tokens, revocation) that CordonIdentityTests drive the identity state machines against.
if ! "$python" -c "import authlib, flask" >/dev/null 2>&1; then
    echo "installing authlib and Flask (the tests' identity provider)"
    "$python" -m pip install -q authlib flask 2>/dev/null || "$python" -m pip install -q --break-system-packages authlib flask
fi

# The benchmarks run the agent and its peers as an ordinary user (cordon-bench rtt as uid 65534,
# docs/PERFORMANCE.md), and that user's python3 is Debian's: the identity provider needs authlib,
# joserfc and Flask there too, installed system-wide (/usr/local), readable by every user.
if [ -x /usr/bin/python3 ] && ! /usr/bin/python3 -c "import authlib, joserfc, flask" >/dev/null 2>&1; then
    sudo=""
    if [ "$(id -u)" != 0 ]; then sudo="sudo"; fi
    echo "installing authlib, joserfc and Flask for /usr/bin/python3 (the benchmarks' identity provider)"
    $sudo /usr/bin/python3 -m pip install -q authlib joserfc flask 2>/dev/null \
        || $sudo /usr/bin/python3 -m pip install -q --break-system-packages authlib joserfc flask
fi

# PyPI cryptography: examples/posture-verify/verify.py, the backend's check of a signed posture
# report, which the end-to-end tests run against reports from a real agent.
if ! "$python" -c "import cryptography.hazmat.primitives.asymmetric.ed25519" >/dev/null 2>&1; then
    echo "installing the Python cryptography package"
    "$python" -m pip install -q cryptography 2>/dev/null || "$python" -m pip install -q --break-system-packages cryptography
fi

# PyPI h2: the HTTP/2 server of Tests/CordonChannelTests/peers/tls_peer.py (SecureChannel's HTTP/2 test).
if ! "$python" -c "import h2.connection" >/dev/null 2>&1; then
    echo "installing the Python h2 package"
    "$python" -m pip install -q h2 2>/dev/null || "$python" -m pip install -q --break-system-packages h2
fi

# PyPI tuf (python-tuf): Tests/CordonFleetTests/peers/tuf_scenarios.py signs the TUF repositories the
# Swift TUF verifier is tested against (its Ed25519 keys need the cryptography package above), and
# tuf_oracle.py runs python-tuf's client (ngclient) over them.
if ! "$python" -c "import tuf.ngclient" >/dev/null 2>&1; then
    echo "installing the Python tuf package"
    "$python" -m pip install -q tuf 2>/dev/null || "$python" -m pip install -q --break-system-packages tuf
fi
