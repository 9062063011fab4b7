"""A host Unix socket (like ``docker.sock``) for Kairox's sandbox tests: it listens on PATH (mode 0777, so every
user may connect) and appends a line to MARKER for every connection it
accepts (with the peer's pid and command line). It prints ``ready`` once
listening, removes PATH when done and exits by itself after ``--lifetime`` seconds.

Run: python tests/servers/unix_marker.py PATH MARKER [--lifetime SECONDS]
"""

import argparse
import os
import socket
import struct
import sys
import time


def peer(conn: socket.socket) -> str:
    """Who connected: pid and command line (from the peer's credentials), for the test's message."""
    pid = struct.unpack("3i", conn.getsockopt(socket.SOL_SOCKET, socket.SO_PEERCRED, struct.calcsize("3i")))[0]
    try:
        with open(f"/proc/{pid}/cmdline", "rb") as cmdline:
            words = cmdline.read().split(b"\0")
        return f"pid={pid} " + " ".join(" ".join(w.decode(errors="replace") for w in words).split())  # one line
    except OSError:
        return f"pid={pid}"


def main() -> None:
    parser = argparse.ArgumentParser()
    parser.add_argument("path")
    parser.add_argument("marker")
    parser.add_argument("--lifetime", type=float, default=120.0)
    args = parser.parse_args()
    server = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
    server.bind(args.path)
    os.chmod(args.path, 0o777)
    server.listen(16)
    print("ready", flush=True)
    deadline = time.monotonic() + args.lifetime
    try:
        while (left := deadline - time.monotonic()) > 0:
            server.settimeout(min(left, 1.0))
            try:
                conn, _ = server.accept()
            except TimeoutError:
                continue
            with open(args.marker, "a", encoding="utf-8") as marker:
                marker.write(f"connected {peer(conn)}\n")
            conn.close()
    finally:
        server.close()
        os.unlink(args.path)
    sys.exit(0)


if __name__ == "__main__":
    main()
