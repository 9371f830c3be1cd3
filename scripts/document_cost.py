#!/usr/bin/env python3
"""What a document share costs the agent, for scripts/document-cost.sh.

Usage: document_cost.py SOCKET DIRECTORY DAEMON_PID

Registers a sender and a receiver (this Python, bound managed), then for each file made in
DIRECTORY — a 2 GiB sparse file, dense files of 64 and 256 MiB (the limit), and 2 GiB of
allocated blocks (refused) — times the ShareDocument call, reads the machine's shmem (the
snapshot's pages: /proc/meminfo Shmem, before, while the snapshot waits, and after the receiver
closed it) and the agent's peak RSS (VmHWM), and checks what the receiver got (size, blocks).
Prints one JSON line per file, then the shmem left above the start once all are closed.
"""
import array
import json
import os
import socket
import sys
import time

PATH, DIRECTORY, PID = sys.argv[1], sys.argv[2], sys.argv[3]
pending = {}


def connect():
    s = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    s.connect(PATH)
    return s


def send(s, method, parameters=None, more=False):
    message = {"method": method, "parameters": parameters or {}}
    if more:
        message["more"] = True
    s.sendall(json.dumps(message).encode() + b"\0")


def read(s):
    data = pending.pop(s, b"")
    while b"\0" not in data:
        data += s.recv(65536)
    message, rest = data.split(b"\0", 1)
    pending[s] = rest
    return json.loads(message.decode())


def call(s, method, parameters=None):
    send(s, method, parameters)
    return read(s)


def kib(path, field):
    for line in open(path):
        if line.startswith(field + ":"):
            return int(line.split()[1])
    return 0


viewer = connect()
token = call(viewer, "io.cordon.App.Register", {"appId": "com.example.viewer"})["parameters"]["token"]
events = connect()
send(events, "io.cordon.App.Subscribe", {"token": token}, more=True)
read(events)
sender = connect()
call(sender, "io.cordon.App.Register", {"appId": "com.example.sender"})


def fetch():
    document = read(events)["parameters"]["event"]["document"]
    s = connect()
    send(s, "io.cordon.App.OpenDocument", {"id": document["id"], "token": token})
    data, fds = b"", []
    while not data.endswith(b"\0"):
        message, ancillary, _, _ = s.recvmsg(65536, socket.CMSG_SPACE(4))
        for level, kind, payload in ancillary:
            if level == socket.SOL_SOCKET and kind == socket.SCM_RIGHTS:
                fds += array.array("i", payload[:4]).tolist()
        data += message
    s.close()
    return fds[0]


def make(name, size, data):
    path = os.path.join(DIRECTORY, name)
    with open(path, "wb") as f:
        if data == "sparse":
            f.write(b"log start\n")
            f.truncate(size)
        elif data == "allocated":
            os.posix_fallocate(f.fileno(), 0, size)
        else:
            block = b"quarterly numbers, line after line\n" * 30000
            written = 0
            while written < size:
                written += f.write(block[: size - written])
    with open(path, "rb") as f:  # in the page cache, as a file just written by an app is
        while f.read(1 << 24):
            pass
    return path


baseline = kib("/proc/meminfo", "Shmem")
for name, size, data in [
    ("sparse-2g.log", 2 << 30, "sparse"),
    ("dense-64m.txt", 64 << 20, "dense"),
    ("dense-256m.txt", 256 << 20, "dense"),
    ("allocated-2g.bin", 2 << 30, "allocated"),
]:
    path = make(name, size, data)
    before = kib("/proc/meminfo", "Shmem")
    start = time.perf_counter()
    reply = call(sender, "io.cordon.App.ShareDocument", {"path": path, "target": "com.example.viewer"})
    elapsed = time.perf_counter() - start
    waiting = kib("/proc/meminfo", "Shmem")
    result = {"file": name, "size_mib": size >> 20, "share_ms": round(elapsed * 1000, 1),
              "error": reply.get("error"), "shmem_waiting_kib": waiting - before}
    if reply.get("error") is None:
        fd = fetch()
        status = os.fstat(fd)
        result["received_size_mib"] = status.st_size >> 20
        result["received_blocks_kib"] = status.st_blocks // 2
        os.close(fd)
    result["shmem_after_kib"] = kib("/proc/meminfo", "Shmem") - before
    result["agent_peak_rss_kib"] = kib("/proc/%s/status" % PID, "VmHWM")
    os.unlink(path)
    print(json.dumps(result), flush=True)

# Every snapshot fetched and closed: nothing is left in shmem (a close is released asynchronously:
# read again once the agent has answered one more call).
call(sender, "io.cordon.App.GetKey")
print(json.dumps({"shmem_left_kib": kib("/proc/meminfo", "Shmem") - baseline}), flush=True)
