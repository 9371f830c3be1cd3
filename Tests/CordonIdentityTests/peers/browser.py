#!/usr/bin/env python3
"""A browser stand-in for the loopback flow (RFC 8252): GETs the URL it is given, as `xdg-open`
or `$BROWSER` would open it, and follows the provider's redirect to the loopback listener.

  browser.py URL            follow the redirect to the listener, print its answer's status
  browser.py --location URL print the redirect's Location without following it

Only redirects to 127.0.0.1 are followed: the stand-in never leaves the machine.
"""

import sys
import time
import urllib.error
import urllib.parse
import urllib.request


class NoRedirect(urllib.request.HTTPRedirectHandler):
    def redirect_request(self, req, fp, code, msg, headers, newurl):
        return None


def location(url):
    opener = urllib.request.build_opener(NoRedirect)
    deadline = time.monotonic() + 10
    while True:
        try:
            response = opener.open(url, timeout=10)
            raise SystemExit("no redirect: HTTP %d" % response.status)
        except urllib.error.HTTPError as error:
            if error.code in (301, 302, 303, 307, 308):
                return error.headers["Location"]
            raise
        except urllib.error.URLError:
            # The provider may still be starting.
            if time.monotonic() > deadline:
                raise
            time.sleep(0.05)


def main(argv):
    if len(argv) == 3 and argv[1] == "--location":
        print(location(argv[2]))
        return 0
    if len(argv) != 2:
        raise SystemExit("usage: browser.py [--location] URL")
    target = location(argv[1])
    if urllib.parse.urlsplit(target).hostname != "127.0.0.1":
        raise SystemExit("refusing to follow a redirect off the loopback address")
    with urllib.request.urlopen(target, timeout=10) as response:
        print(response.status)
    return 0


if __name__ == "__main__":
    sys.exit(main(sys.argv))
