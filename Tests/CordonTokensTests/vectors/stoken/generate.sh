#!/usr/bin/env bash
# Regenerates securid.jsonl with the stoken CLI (Debian stoken 0.92-1): random tokens in each format
# stoken writes (v2 bare, v2 Android/iPhone URLs, v3, SDTID), some with a password and a device id,
# some 30-second 6-digit or PINless ones made from an SDTID template, and stoken's codes for them at
# fixed times with and without PINs. Each line: format, token, password, devid, pin, time, code.
set -euo pipefail
work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT
st() { timeout 10 stoken "$@" --batch </dev/null; }
times=(946771200 1234567890 1700000000 1700000030 1700000059 2000000000)
emit() { # format token password devid pin
    local format=$1 token=$2 password=$3 devid=$4 pin=$5 args=(--token="$2" --force)
    [ -n "$password" ] && args+=(--password="$password")
    [ -n "$devid" ] && args+=(--devid="$devid")
    [ -n "$pin" ] && args+=(--pin="$pin")
    for t in "${times[@]}"; do
        code=$(st tokencode "${args[@]}" --use-time="$t")
        python3 -c 'import json,sys; print(json.dumps(dict(zip(["format","token","password","devid","pin","time","code"], sys.argv[1:6]+[int(sys.argv[6]), sys.argv[7]]))))' \
            "$format" "$token" "$password" "$devid" "$pin" "$t" "$code"
    done
}
devid=1234567890ABCDEF1234567890ABCDEF12345678
for round in 1 2; do
    seed="$work/seed$round"
    st export --random --sdtid >"$seed.sdtid"
    emit v2 "$(st export --file="$seed.sdtid")" "" "" "12345$round"
    emit v2 "$(st export --file="$seed.sdtid" --new-password=pass$round --new-devid=$devid)" "pass$round" "$devid" "0000"
    emit v2-android "$(st export --file="$seed.sdtid" --android --new-devid=$devid)" "" "$devid" "9876"
    emit v2-iphone "$(st export --file="$seed.sdtid" --iphone)" "" "" "4321"
    emit v3 "$(st export --file="$seed.sdtid" --v3)" "" "" "87654321"
    emit v3 "$(st export --file="$seed.sdtid" --v3 --new-password=pass$round --new-devid=$devid)" "pass$round" "$devid" "1234"
    emit sdtid "$(st export --file="$seed.sdtid" --sdtid)" "" "" "2468"
    emit sdtid "$(st export --file="$seed.sdtid" --sdtid --new-password=pass$round)" "pass$round" "" "13579"
done
# 30-second, 6-digit tokens, PINless and with a PIN, from a template.
for pin in 0 1; do
    cat >"$work/template$pin.xml" <<XML
<?xml version="1.0"?>
<TKNBatch><TKNHeader><DefDigits>6</DefDigits><DefInterval>30</DefInterval><DefAddPIN>$pin</DefAddPIN><DefLocalPIN>$pin</DefLocalPIN><DefDeath>2035/12/31</DefDeath></TKNHeader><TKN/><TKNTrailer/></TKNBatch>
XML
    st issue --template="$work/template$pin.xml" >"$work/short$pin.sdtid"
    p=""; [ "$pin" = 1 ] && p=5555
    emit sdtid-30s "$(cat "$work/short$pin.sdtid")" "" "" "$p"
    emit v2-30s "$(st export --file="$work/short$pin.sdtid")" "" "" "$p"
    emit v3-30s "$(st export --file="$work/short$pin.sdtid" --v3)" "" "" "$p"
done
