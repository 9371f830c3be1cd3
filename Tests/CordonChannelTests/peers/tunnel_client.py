#!/usr/bin/env python3
"""A client of a `cordon run --tunnel` Unix socket, for the tunnel end-to-end tests.

hold PATH: one keep-alive request, prints "open <status line>", then waits for the tunnel to
close the connection and prints "cut" (or "more" if bytes came instead).
get PATH: one request with Connection: close; prints the status line and body, or
"closed <n> bytes" when the connection closed without an HTTP answer."""
import socket
import sys

mode, path = sys.argv[1], sys.argv[2]
conn = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
conn.connect(path)


def read_response():
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None, data
        data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    length = 0
    for line in head.split(b"\r\n")[1:]:
        name, _, value = line.partition(b":")
        if name.strip().lower() == b"content-length":
            length = int(value)
    while len(body) < length:
        chunk = conn.recv(4096)
        if not chunk:
            break
        body += chunk
    return head.split(b"\r\n")[0].decode(), body


if mode == "hold":
    conn.sendall(b"GET /held HTTP/1.1\r\nHost: tunnel\r\n\r\n")
    status, _ = read_response()
    print("open %s" % status, flush=True)
    rest = conn.recv(4096)
    print("cut" if not rest else "more", flush=True)
else:
    try:
        conn.sendall(b"GET /get HTTP/1.1\r\nHost: tunnel\r\nConnection: close\r\n\r\n")
        status, body = read_response()
    except OSError:
        status, body = None, b""
    if status is None:
        print("closed %d bytes" % len(body), flush=True)
    else:
        print(status, body.decode().strip(), flush=True)
