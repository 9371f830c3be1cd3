#!/usr/bin/env python3
"""A TLS test peer for CordonChannelTests: listens on a free 127.0.0.1 port, prints
"PORT <n>" once it listens, and serves until its stdin closes.

Modes: www (HTTP/1.1 200), h2 (HTTP/2 through the h2 library, ALPN h2), garbage (TLS, then
bytes that are not HTTP), midstream (TLS, a head promising 100000 bytes, 10 of them, close),
stall (TCP accepted, never a byte), stall-response (TLS, the request read, no answer),
nottls (bytes that are not TLS), flaky (the first connection nottls, then www)."""
import socket
import ssl
import sys
import threading

mode, cert, key = sys.argv[1], sys.argv[2], sys.argv[3]
held = []
count = [0]
lock = threading.Lock()


def context(alpn):
    ctx = ssl.SSLContext(ssl.PROTOCOL_TLS_SERVER)
    ctx.load_cert_chain(cert, key)
    ctx.set_alpn_protocols(alpn)
    return ctx


h1 = context(["http/1.1"])
h2ctx = context(["h2"])


def read_head(conn):
    data = b""
    while b"\r\n\r\n" not in data:
        chunk = conn.recv(4096)
        if not chunk:
            return None
        data += chunk
    return data


def serve_www(raw):
    conn = h1.wrap_socket(raw, server_side=True)
    # One request after another on the connection (keep-alive) until the client asks to close.
    while True:
        head = read_head(conn)
        if head is None:
            conn.close()
            return
        path = head.split(b" ")[1].decode()
        body = ("hello " + path + "\n").encode()
        closing = b"connection: close" in head.lower()
        conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Type: text/plain\r\nContent-Length: %d\r\n%s\r\n"
                     % (len(body), b"Connection: close\r\n" if closing else b"") + body)
        if closing:
            conn.close()
            return


def serve_h2(raw):
    import h2.config
    import h2.connection
    import h2.events
    conn = h2ctx.wrap_socket(raw, server_side=True)
    h2conn = h2.connection.H2Connection(config=h2.config.H2Configuration(client_side=False))
    h2conn.initiate_connection()
    conn.sendall(h2conn.data_to_send())
    while True:
        data = conn.recv(65535)
        if not data:
            return
        for event in h2conn.receive_data(data):
            if isinstance(event, h2.events.RequestReceived):
                headers = dict(event.headers)
                path = headers.get(b":path", b"/").decode()
                body = ("h2 hello " + path + "\n").encode()
                h2conn.send_headers(event.stream_id, [(":status", "200"), ("content-length", str(len(body))),
                                                      ("content-type", "text/plain")])
                h2conn.send_data(event.stream_id, body, end_stream=True)
        conn.sendall(h2conn.data_to_send())


def handle(raw):
    with lock:
        count[0] += 1
        number = count[0]
    try:
        if mode == "www" or (mode == "flaky" and number > 1):
            serve_www(raw)
        elif mode == "h2":
            serve_h2(raw)
        elif mode == "garbage":
            conn = h1.wrap_socket(raw, server_side=True)
            read_head(conn)
            conn.sendall(b"\x00\x01\x02 this is not HTTP at all \xff\xfe\r\n\r\n")
            conn.close()
        elif mode == "midstream":
            conn = h1.wrap_socket(raw, server_side=True)
            read_head(conn)
            conn.sendall(b"HTTP/1.1 200 OK\r\nContent-Length: 100000\r\n\r\n0123456789")
            conn.close()
        elif mode == "stall":
            held.append(raw)
        elif mode == "stall-response":
            conn = h1.wrap_socket(raw, server_side=True)
            read_head(conn)
            held.append(conn)
        elif mode in ("nottls", "flaky"):
            raw.sendall(b"SSH-2.0-not-tls garbage\r\n" * 4)
            raw.close()
    except (OSError, ssl.SSLError):
        pass


def main():
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
    listener.bind(("127.0.0.1", 0))
    listener.listen(64)
    print("PORT %d" % listener.getsockname()[1], flush=True)

    def accept():
        while True:
            raw, _ = listener.accept()
            threading.Thread(target=handle, args=(raw,), daemon=True).start()

    threading.Thread(target=accept, daemon=True).start()
    sys.stdin.read()


main()
