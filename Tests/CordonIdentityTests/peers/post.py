#!/usr/bin/env python3
"""post.py URL METHOD BODY-FILE OUTPUT-FILE [CONTENT-TYPE]: sends the body in BODY-FILE to URL (a form
unless CONTENT-TYPE says otherwise, e.g. application/json for CPA) and writes the status on the
first line of OUTPUT-FILE, then the body: the tests' HTTP client (the agent's own client is not in
this module). Retries a refused connection for up to 10 s (the provider starting)."""

import sys
import time
import urllib.error
import urllib.request


def main(argv):
    url, method, body_file, output_file = argv[1:5]
    content_type = argv[5] if len(argv) > 5 else "application/x-www-form-urlencoded"
    with open(body_file, "rb") as handle:
        body = handle.read()
    request = urllib.request.Request(
        url, data=None if method == "GET" else body, method=method,
        headers={"Content-Type": content_type},
    )
    deadline = time.monotonic() + 10
    while True:
        try:
            with urllib.request.urlopen(request, timeout=10) as response:
                status, payload = response.status, response.read()
            break
        except urllib.error.HTTPError as error:
            status, payload = error.code, error.read()
            break
        except urllib.error.URLError:
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)
    with open(output_file, "wb") as handle:
        handle.write(b"%d\n" % status + payload)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
