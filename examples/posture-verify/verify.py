#!/usr/bin/env python3
"""Checks a Cordon posture report as a backend would (docs/PROTOCOL.md, "Signed posture reports").

    verify.py REPORT PUBLIC_KEY NONCE

REPORT is what `cordon posture report` (or io.cordon.Posture.Report) returned; PUBLIC_KEY is the
device's key from `cordon posture key`, trusted out of band (never the report's own publicKey);
NONCE is the one the backend sent. Prints the verified payload; exits 1 when anything is wrong.
"""
import base64, json, sys
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PublicKey

report = json.load(open(sys.argv[1]))
key = Ed25519PublicKey.from_public_bytes(base64.b64decode(open(sys.argv[2]).read().split()[-1]))
payload = base64.b64decode(report["payload"])
try:
    assert report["format"] == "cordon.posture.report.v1"
    key.verify(base64.b64decode(report["signature"]), b"cordon.posture.report.v1\x00" + payload)
except Exception as error:  # InvalidSignature, a wrong format
    sys.exit(f"rejected: {error!r}")
claims = json.loads(payload)  # read only the bytes that were signed, never re-encoded
if claims["nonce"] != sys.argv[3]:
    sys.exit(f"rejected: nonce {claims['nonce']!r} is not {sys.argv[3]!r} (a replay)")
print(json.dumps(claims, sort_keys=True))
