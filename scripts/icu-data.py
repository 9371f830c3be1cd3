#!/usr/bin/env python3
"""The ICU data the release build links in place of the toolchain's (docs/PERFORMANCE.md, "Install size").

    scripts/icu-data.py OUTPUT.o [--swift SWIFT] [--list]

Foundation's static library `lib_FoundationICU.a` carries all of ICU's data as one read-only
symbol (`icudt76_dat`, 34 MB: converters, collation, break iteration, transliteration, every
locale's formats and the display names of every language, region, unit, currency and time zone).
Cordon's text is English and its times are ISO 8601 with the POSIX locale; it never collates,
transliterates, breaks words, converts a legacy encoding or shows a localized name. So this keeps
the data files (time-zone rules, normalization, properties, plural and number rules, likely
subtags), the root and English locales, and of the category directories only their root, English
and index bundles (none of collation and transliteration), and writes an object that defines
`cordon_icudt76_dat` with that package. The release link adds it with `--defsym icudt76_dat=cordon_icudt76_dat` (the Makefile's
ICU_FLAGS): the toolchain's symbol is then defined before any archive is read, so gold never pulls
the archive's copy in, and lld's copy, unreferenced, goes with --gc-sections. `--list` prints what
is kept and dropped.

A lookup of a dropped item behaves as ICU does for any missing data: the root or English
fallback, or U_MISSING_RESOURCE_ERROR for what has none (a converter or collator by name).
`make release ICU_DATA=full` links the toolchain's data unchanged.
"""

import argparse
import os
import re
import shutil
import struct
import subprocess
import sys
import tempfile

# Category directories dropped whole: collation and transliteration, which Cordon never asks for
# (a collator or transliterator then fails to open, as for any locale ICU lacks).
DROPPED_WHOLE = {"coll", "translit"}
# Category directories whose items are dropped but for the fallbacks (root, English, the index).
DROPPED_CATEGORIES = {"brkitr", "rbnf", "unit", "curr", "lang", "region", "zone"}
KEPT_IN_DROPPED = {"root.res", "en.res", "pool.res", "res_index.res"}


# A locale's own bundle at the top level (`de.res`, `sr_Latn_BA.res`): a language of two or three
# letters, then any script, region or variant; `root`, `pool` and the data files are longer names.
LOCALE_BUNDLE = re.compile(r"^[a-z]{2,3}(_[A-Za-z0-9]+)*\.res$")


def keep(name: str) -> bool:
    parts = name.split("/")
    base = parts[-1]
    if base.endswith(".cnv"):  # Legacy encodings' converters: Cordon speaks UTF-8 only.
        return False
    if len(parts) == 2 and LOCALE_BUNDLE.match(base):  # Cordon's text is English, its times ISO 8601.
        return base == "en.res" or base.startswith("en_")
    if len(parts) > 2 and parts[1] in DROPPED_WHOLE:
        return False
    if len(parts) > 2 and parts[1] in DROPPED_CATEGORIES:
        return base in KEPT_IN_DROPPED or base.startswith("en_US")
    return True


def toolchain_archive(swift: str) -> str:
    real = os.path.realpath(shutil.which(swift) or swift)
    usr = os.path.dirname(os.path.dirname(real))
    archive = os.path.join(usr, "lib", "swift_static", "linux", "lib_FoundationICU.a")
    if not os.path.exists(archive):
        sys.exit(f"icu-data: {archive} is missing (the static Foundation of the toolchain of '{swift}')")
    return archive


def packaged_data(archive: str, work: str) -> tuple[str, bytes]:
    """The data symbol's name and bytes from the archive's icu_packaged_data member."""
    member = "icu_packaged_data.cpp.o"
    subprocess.run(["ar", "x", archive, member], cwd=work, check=True)
    path = os.path.join(work, member)
    symbols = subprocess.run(["nm", "-S", path], capture_output=True, text=True, check=True).stdout.split()
    # nm -S: VALUE SIZE TYPE NAME; the member defines exactly one data symbol.
    names = [symbols[i + 3] for i in range(0, len(symbols) - 3, 4) if symbols[i + 2] in ("R", "r")]
    if len(names) != 1 or not names[0].startswith("icudt"):
        sys.exit(f"icu-data: expected one icudtNN_dat symbol in {member}, found {names}")
    copy = os.path.join(work, "rodata.bin")
    subprocess.run(["objcopy", "-O", "binary", "--only-section=.rodata", path, copy], check=True)
    with open(copy, "rb") as file:
        return names[0], file.read()


def entries(data: bytes) -> tuple[int, list[tuple[str, bytes]]]:
    """The package's header size and its items (name, bytes), in the table of contents' order."""
    header = struct.unpack_from("<H", data, 0)[0]
    if data[2:4] != b"\xda\x27" or data[12:16] != b"CmnD":
        sys.exit("icu-data: the toolchain's ICU data is not a common data package")
    count = struct.unpack_from("<I", data, header)[0]
    table = [struct.unpack_from("<II", data, header + 4 + 8 * i) for i in range(count)]
    items = []
    for index, (name_offset, data_offset) in enumerate(table):
        start = header + name_offset
        name = data[start : data.index(b"\0", start)].decode()
        end = table[index + 1][1] if index + 1 < count else len(data) - header
        items.append((name, data[header + data_offset : header + end]))
    return header, items


def repack(data: bytes, header: int, items: list[tuple[str, bytes]]) -> bytes:
    """A common data package of `items` under the original header (ICU's layout: the table of
    contents, the names, then each item 16-byte aligned)."""
    names = b"".join(name.encode() + b"\0" for name, _ in items)
    names_start = 4 + 8 * len(items)
    offset = names_start + len(names)
    body = bytearray()
    table = bytearray(struct.pack("<I", len(items)))
    name_offset = names_start
    for name, item in items:
        padding = (-(header + offset)) % 16
        body += b"\0" * padding
        offset += padding
        table += struct.pack("<II", name_offset, offset)
        name_offset += len(name.encode()) + 1
        body += item
        offset += len(item)
    return data[:header] + bytes(table) + names + bytes(body)


def main() -> None:
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("output")
    parser.add_argument("--swift", default=os.environ.get("SWIFT", "swift"))
    parser.add_argument("--list", action="store_true")
    arguments = parser.parse_args()

    with tempfile.TemporaryDirectory() as work:
        symbol, data = packaged_data(toolchain_archive(arguments.swift), work)
        header, items = entries(data)
        kept = [(name, item) for name, item in items if keep(name)]
        if arguments.list:
            for name, item in items:
                print(f"{'keep' if keep(name) else 'drop'} {len(item):9d} {name}")
        package = repack(data, header, kept)
        blob = os.path.join(work, "icudata.dat")
        with open(blob, "wb") as file:
            file.write(package)
        assembly = os.path.join(work, "icudata.s")
        own = "cordon_" + symbol
        with open(assembly, "w") as file:
            file.write(
                f'\t.section .rodata.{own},"a"\n\t.globl {own}\n\t.type {own},@object\n'
                f'\t.balign 16\n{own}:\n\t.incbin "{blob}"\n\t.size {own}, .-{own}\n'
                '\t.section .note.GNU-stack,"",@progbits\n'
            )
        os.makedirs(os.path.dirname(os.path.abspath(arguments.output)), exist_ok=True)
        clang = os.path.join(os.path.dirname(os.path.realpath(shutil.which(arguments.swift) or "swift")), "clang")
        subprocess.run([clang if os.path.exists(clang) else "cc", "-c", assembly, "-o", arguments.output], check=True)
    print(
        f"icu-data: {arguments.output}: {symbol}, {len(kept)} of {len(items)} items, "
        f"{len(package):,} of {len(data):,} bytes",
        file=sys.stderr,
    )


if __name__ == "__main__":
    main()
