#!/bin/sh
# An "unmodified program": it knows nothing of Cordon. It appends a numbered line to a file
# every 200 ms. Wrapped with `cordon run`, it is frozen while the container has no key.
out=${1:-ticker.log}
n=0
while :; do
    n=$((n + 1))
    echo "tick $n $(date +%T.%N | cut -c1-12)" >> "$out"
    sleep 0.2
done
