#!/usr/bin/env bash
# Builds the Debian packages (`make deb`): cordon_VERSION_ARCH.deb (one stripped multi-call
# executable, /usr/bin/cordon, with cordond and cordon-fleetd as symbolic links to it; fleetd's system unit, cordond's user units, /etc/cordon, man pages, maintainer
# scripts) and cordon-dbgsym_VERSION_ARCH.deb (their debug symbols by build id, as dh_strip lays
# them out), with dpkg-deb from a staging tree: no debhelper, no debian/ directory in the repository.
#
#   scripts/make-deb.sh [--no-build] [--bin-dir DIR] [--out DIR]
#
# --no-build packs what .build/release (or --bin-dir) already holds: iterating on the packaging
# costs no release build. The packages go to out/ (or --out). The version is $CORDON_VERSION, else `git describe --tags`, else
# 0.0~gitYYYYMMDD.HASH (the commit's date), with the Debian revision -1. The release flags are the
# Makefile's RELEASE_FLAGS ($RELEASE_FLAGS when make passes them): the Swift runtime and
# Foundation are linked in statically (--static-swift-stdlib), so the package needs only Debian's
# libraries, which dpkg-shlibdeps turns into Depends.
set -euo pipefail
cd "$(dirname "$0")/.."
root=$PWD

build=yes
out=$root/out
bin_dir=.build/release
while (($#)); do
    case $1 in
    --no-build) build=no ;;
    --out)
        out=$2
        shift
        ;;
    --bin-dir)
        bin_dir=$2
        build=no
        shift
        ;;
    *)
        echo "usage: $0 [--no-build] [--bin-dir DIR] [--out DIR]" >&2
        exit 2
        ;;
    esac
    shift
done

# One executable runs all three programs, by the name it is run under (Sources/cordon-multicall):
# three of their own would each carry the Swift runtime, Foundation and its ICU data
# (docs/PERFORMANCE.md, "Install size").
product=cordon-multicall
programs=(cordon cordond cordon-fleetd)
# xz's preset: 6 (dpkg-deb's default) for packages to publish; scripts/test-deb.sh packs with 1,
# about five times faster for 17% more bytes (the same files either way).
xz_level=${DEB_XZ_LEVEL:-6}
started=$SECONDS
phase() { echo "make-deb: $* ($((SECONDS - started)) s)" >&2; }
maintainer=${DEB_MAINTAINER:-Cordon developers <cordon@example.org>}
arch=$(dpkg --print-architecture)

# Version: Debian-valid (digits first; ~ sorts a snapshot before its release).
if [ -n "${CORDON_VERSION:-}" ]; then
    upstream=$CORDON_VERSION
elif described=$(git describe --tags 2>/dev/null); then
    upstream=${described#v}
    upstream=${upstream//-/+}
else
    upstream="0.0~git$(git log -1 --format=%cd --date=format:%Y%m%d).$(git rev-parse --short=7 HEAD)"
fi
version="$upstream-1"
# Reproducible: every date in the packages is the commit's.
export SOURCE_DATE_EPOCH=${SOURCE_DATE_EPOCH:-$(git log -1 --format=%ct)}

if [ "$build" = yes ]; then
    phase "building $product (release)"
    if [ -z "${RELEASE_FLAGS+set}" ]; then
        RELEASE_FLAGS=$(make -s --no-print-directory print-release-flags)
    fi
    # shellcheck disable=SC2086 # the flags are words
    swift build -c release $RELEASE_FLAGS --product "$product"
fi
[ -x "$bin_dir/$product" ] || {
    echo "make-deb: $bin_dir/$product is missing (run without --no-build)" >&2
    exit 1
}

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
pkg=$work/cordon
dbg=$work/cordon-dbgsym
umask 022

phase "splitting debug symbols and stripping"
# --- Binary: debug symbols split off by build id, then stripped (dh_strip's layout) ----------
install -d "$pkg/usr/bin" "$dbg/usr/lib/debug/.build-id"
binary=$pkg/usr/bin/cordon
install -m 0755 "$bin_dir/$product" "$binary"
if grep -q 'NEEDED.*libswift' <<<"$(objdump -p "$binary")"; then
    echo "make-deb: $product links the Swift runtime dynamically; build with --static-swift-stdlib" >&2
    exit 1
fi
id=$(readelf -n "$binary" | awk '/Build ID:/ && !id { id = $3 } END { print id }')
if [ -z "$id" ]; then
    echo "make-deb: $product has no GNU build id (link with --build-id)" >&2
    exit 1
fi
install -d "$dbg/usr/lib/debug/.build-id/${id:0:2}"
debug=$dbg/usr/lib/debug/.build-id/${id:0:2}/${id:2}.debug
objcopy --only-keep-debug --compress-debug-sections "$binary" "$debug"
chmod 0644 "$debug"
strip --remove-section=.comment --remove-section=.note --strip-unneeded "$binary"
objcopy --add-gnu-debuglink="$debug" "$binary"
build_ids=("$id")
# cordond and cordon-fleetd: the same file under their names (the units and D-Bus name them).
for program in "${programs[@]:1}"; do
    ln -s cordon "$pkg/usr/bin/$program"
done

phase "staging"
# --- systemd units ------------------------------------------------------------------------------
install -d "$pkg/lib/systemd/system" "$pkg/usr/lib/systemd/user"
install -m 0644 systemd/cordon-fleetd.service "$pkg/lib/systemd/system/"
install -m 0644 systemd/cordond.socket "$pkg/usr/lib/systemd/user/"
# The repository's user unit runs ~/.local/bin/cordond (make install); the package's runs /usr/bin's.
sed 's|^ExecStart=%h/.local/bin/cordond$|ExecStart=/usr/bin/cordond|' systemd/cordond.service \
    >"$pkg/usr/lib/systemd/user/cordond.service"
grep -qx 'ExecStart=/usr/bin/cordond' "$pkg/usr/lib/systemd/user/cordond.service" || {
    echo "make-deb: systemd/cordond.service's ExecStart changed; update the substitution" >&2
    exit 1
}
chmod 0644 "$pkg/usr/lib/systemd/user/cordond.service"

# --- Directories: admin settings (no conffiles: the admins' files, not the package's) ----------
# /etc/cordon/policy.d: admin policies (fleetd installs the repository's here too);
# /etc/cordon/trust: the policy signers' public keys; /var/lib/cordon/fleet: fleetd's handoff to
# the agents (root's, world-readable). fleetd's own state (/var/lib/cordon-fleetd, 0700) is made
# by systemd (StateDirectory=).
install -d -m 0755 "$pkg/etc/cordon" "$pkg/etc/cordon/policy.d" "$pkg/etc/cordon/trust" \
    "$pkg/var/lib/cordon" "$pkg/var/lib/cordon/fleet"

# --- Documentation ------------------------------------------------------------------------------
doc=$pkg/usr/share/doc/cordon
install -d "$doc/examples"
cat >"$doc/examples/fleet.json" <<'EOF'
{
  "repository": "https://fleet.example.com/cordon/",
  "caFile": "/etc/cordon/fleet-ca.pem",
  "intervalSeconds": 300,
  "reportURL": "https://fleet.example.com/reports/"
}
EOF
chmod 0644 "$doc/examples/fleet.json"

changelog_date=$(date -u -R -d "@$SOURCE_DATE_EPOCH")
{
    printf 'cordon (%s) unstable; urgency=medium\n\n' "$version"
    printf '  * Package built from commit %s.\n\n' "$(git rev-parse --short=12 HEAD)"
    printf ' -- %s  %s\n' "$maintainer" "$changelog_date"
} | gzip -9n >"$doc/changelog.Debian.gz"
chmod 0644 "$doc/changelog.Debian.gz"

scripts/deb-copyright.sh >"$doc/copyright"
chmod 0644 "$doc/copyright"

# Man pages: a short hand-written head, then the program's own --help (so they never fall behind).
# cordon and cordond are users' programs (section 1; cordond like gpg-agent, a per-user daemon);
# cordon-fleetd is the machine's service (section 8).
manpage() { # name section summary description files see-also [subcommands]
    local name=$1 section=$2 summary=$3 description=$4 binary=$pkg/usr/bin/$1
    local upper
    upper=$(tr '[:lower:]-' '[:upper:]_' <<<"$name")
    {
        printf '.TH %s %s "%s" "cordon %s" "Cordon"\n' "$upper" "$section" \
            "$(date -u -d "@$SOURCE_DATE_EPOCH" +%Y-%m-%d)" "$upstream"
        printf '.SH NAME\n%s \\- %s\n' "$name" "$summary"
        printf '.SH DESCRIPTION\n%s\n' "$description"
        printf '.SH OPTIONS\nThe output of\n.B %s \\-\\-help\n(each subcommand takes\n.BR \\-\\-help ,\ntoo):\n.PP\n.nf\n' "$name"
        # Escapes: backslashes, leading dots and quotes (requests), hyphens (minus signs).
        "$binary" --help 2>&1 | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" -e 's/-/\\-/g'
        printf '.fi\n'
        for subcommand in ${7:-}; do
            printf '.SS %s\n.nf\n' "$subcommand"
            "$binary" "$subcommand" --help 2>&1 | sed -e 's/\\/\\e/g' -e "s/^\([.']\)/\\\\\&\1/" -e 's/-/\\-/g'
            printf '.fi\n'
        done
        printf '.SH FILES\n%s\n' "${5:-}"
        printf '.SH SEE ALSO\n%s\n' "${6:-}"
    } | gzip -9n >"$pkg/usr/share/man/man$section/$name.$section.gz"
    chmod 0644 "$pkg/usr/share/man/man$section/$name.$section.gz"
}
install -d "$pkg/usr/share/man/man1" "$pkg/usr/share/man/man8"
manpage cordon 1 "the Cordon app-container command-line interface" \
    'Talks to the per-user agent, \fBcordond\fR(1): unlock and lock the container, register apps, apply and check policies, tokens, identity and posture.' \
    '.TP
.I /etc/cordon/policy.d
Admin policies.
.TP
.I /etc/cordon/trust
Public keys of the policy signers.' \
    '\fBcordond\fR(1), \fBcordon-fleetd\fR(8)'
manpage cordond 1 "the Cordon agent, one per user" \
    'Holds the container'"'"'s key behind a passcode and a lock, and answers the apps and \fBcordon\fR(1) on a socket. It runs as a systemd user service, socket-activated: \fBsystemctl \-\-user enable \-\-now cordond.socket\fR.' \
    '.TP
.I /usr/lib/systemd/user/cordond.service, cordond.socket
The user units.
.TP
.I /etc/cordon/policy.d
Admin policies, watched.
.TP
.I /var/lib/cordon/fleet
Commands and status from \fBcordon\-fleetd\fR(8).' \
    '\fBcordon\fR(1), \fBcordon-fleetd\fR(8), \fBsystemctl\fR(1)'
manpage cordon-fleetd 8 "fetch the admins' signed policies and commands for this machine" \
    'One system service per machine (\fIcordon\-fleetd.service\fR): polls the admins'"'"' signed repository (TUF) over HTTPS, installs its verified policies in \fI/etc/cordon/policy.d\fR and hands its verified commands to the agents. SIGUSR1 (\fBsystemctl reload cordon\-fleetd\fR) polls at once. \fBcordon\-fleetd id\fR prints the device id. The service starts only once \fI/etc/cordon/fleet.json\fR exists.' \
    '.TP
.I /etc/cordon/fleet.json
Settings (see \fI/usr/share/doc/cordon/examples/fleet.json\fR).
.TP
.I /etc/cordon/fleet\-root.json
The trusted root metadata.
.TP
.I /var/lib/cordon\-fleetd
The device key, trusted metadata and audit log (0700).
.TP
.I /var/lib/cordon/fleet
Commands and status for the agents.' \
    '\fBcordon\fR(1), \fBcordond\fR(1)' "run id"

# --- Maintainer scripts -------------------------------------------------------------------------
install -d "$pkg/DEBIAN"
for script in postinst prerm postrm; do
    install -m 0755 "packaging/debian/$script" "$pkg/DEBIAN/$script"
done

# --- Lintian overrides --------------------------------------------------------------------------
install -d "$pkg/usr/share/lintian/overrides"
install -m 0644 packaging/debian/cordon.lintian-overrides "$pkg/usr/share/lintian/overrides/cordon"

# --- control ------------------------------------------------------------------------------------
# Depends from the binaries' shared libraries, by dpkg-shlibdeps in a throwaway debian/ directory.
# tpm-udev: the unit runs fleetd in the tss group it creates (libtss2's packages depend on it too).
shlib=$work/shlibdeps
install -d "$shlib/debian"
printf 'Source: cordon\n\nPackage: cordon\nArchitecture: any\n' >"$shlib/debian/control"
depends=$(cd "$shlib" && dpkg-shlibdeps -O "$pkg/usr/bin/cordon" 2>"$work/shlibdeps.log" |
    sed -n 's/^shlibs:Depends=//p') || {
    cat "$work/shlibdeps.log" >&2
    exit 1
}
installed_size=$(du -sk --exclude=DEBIAN "$pkg" | cut -f1)
cat >"$pkg/DEBIAN/control" <<EOF
Package: cordon
Version: $version
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $installed_size
Depends: $depends, tpm-udev
Section: admin
Priority: optional
Description: app-container runtime: wrapped apps' keys behind a passcode and a lock
 Cordon keeps each user's data-encryption key behind a passcode and a lock in a
 per-user agent, cordond (a socket-activated systemd user service), and serves
 the user's wrapped apps over a Unix socket: each app gets its own key when the
 user unlocks and must halt its I/O when the container locks. cordon is the
 command line.
 .
 cordon-fleetd, one system service per machine, fetches the admins' signed
 policies and commands (a TUF repository on any HTTPS host), verifies them and
 hands them to the agents. It starts only once /etc/cordon/fleet.json exists.
EOF

# --- dbgsym: what dh_strip makes ----------------------------------------------------------------
install -d "$dbg/DEBIAN" "$dbg/usr/share/doc"
ln -s cordon "$dbg/usr/share/doc/cordon-dbgsym"
cat >"$dbg/DEBIAN/control" <<EOF
Package: cordon-dbgsym
Source: cordon
Version: $version
Auto-Built-Package: debug-symbols
Architecture: $arch
Maintainer: $maintainer
Installed-Size: $(du -sk --exclude=DEBIAN "$dbg" | cut -f1)
Depends: cordon (= $version)
Section: debug
Priority: optional
Description: debug symbols for cordon
Build-Ids: ${build_ids[*]}
EOF

# md5sums, as dh_md5sums writes them (no conffiles to leave out).
for tree in "$pkg" "$dbg"; do
    (cd "$tree" && find . -path ./DEBIAN -prune -o -type f -print | sed 's|^\./||' | LC_ALL=C sort |
        xargs -r md5sum >DEBIAN/md5sums)
    chmod 0644 "$tree/DEBIAN/md5sums"
done

# --- Pack ---------------------------------------------------------------------------------------
# Every file's time is the commit's (with SOURCE_DATE_EPOCH dpkg-deb also clamps to it).
find "$pkg" "$dbg" -exec touch -h -d "@$SOURCE_DATE_EPOCH" {} +
mkdir -p "$out"
phase "packing"
dpkg-deb --root-owner-group -Zxz -z"$xz_level" --build "$pkg" "$out/cordon_${version}_${arch}.deb" >/dev/null
dpkg-deb --root-owner-group -Zxz -z"$xz_level" --build "$dbg" "$out/cordon-dbgsym_${version}_${arch}.deb" >/dev/null
phase "done"
echo "$out/cordon_${version}_${arch}.deb"
echo "$out/cordon-dbgsym_${version}_${arch}.deb"
