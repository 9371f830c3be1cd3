#!/usr/bin/env python3
"""Where a function's samples go: its callers and its callees, from `perf script` output
(docs/PERFORMANCE.md, "Data calls on the loop", "Where the time goes, per call").

    perf record -F 4999 -g -p "$(pgrep -u 65534 -x cordond)" -o get.data -- sleep 6
    perf script -i get.data -F comm,tid,ip,sym | swift demangle --simplified > get.txt
    scripts/perf-callees.py get.txt 'StorageComponent.get(' [DEPTH]

Prints the share of all samples whose stack holds a frame containing the text (its outermost
occurrence counts, so recursion is not counted twice), then the frames that called it and the
DEPTH frames below it (default 1), each as a share of all samples.
"""

import collections
import re
import sys


def samples(path):
    """Each sample's frames, leaf first."""
    frames = []
    with open(path, errors="replace") as file:
        for line in file:
            line = line.rstrip("\n")
            if not line.strip():
                if frames:
                    yield frames
                frames = []
            elif line[0] in " \t":
                parts = line.strip().split(" ", 1)
                frames.append(re.sub(r"\+0x[0-9a-f]+$", "", parts[-1])[:150])
            else:
                frames = []  # the sample's header line
    if frames:
        yield frames


def main():
    if len(sys.argv) < 3:
        sys.exit(__doc__)
    path, text = sys.argv[1], sys.argv[2]
    depth = int(sys.argv[3]) if len(sys.argv) > 3 else 1
    total = hits = 0
    callers, callees = collections.Counter(), collections.Counter()
    for frames in samples(path):
        total += 1
        found = [index for index, frame in enumerate(frames) if text in frame]
        if not found:
            continue
        hits += 1
        index = max(found)
        callees[" <- ".join(reversed(frames[max(0, index - depth) : index])) if index else "(self)"] += 1
        callers[frames[index + 1] if index + 1 < len(frames) else "(root)"] += 1
    if not total:
        sys.exit(f"{path}: no samples")
    print(f"{total} samples; {text}: {hits} ({100 * hits / total:.1f}%)")
    print("callers:")
    for frame, count in callers.most_common(5):
        print(f"  {100 * count / total:5.1f}% {frame}")
    print("callees:")
    for frame, count in callees.most_common(25):
        print(f"  {100 * count / total:5.1f}% {frame}")


if __name__ == "__main__":
    main()
