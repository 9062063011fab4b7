"""The first process of a sandbox with ``network = "allowlist"`` (Y14), run as ``python -I -S _forwarder.py SOCKET
-- COMMAND ...``: it listens on 127.0.0.1 in the sandbox's own network namespace, points the proxy variables at
that port, and becomes the command. A process of its own, out of the command's way (the sandbox's init is its
parent, so it ends with the sandbox), hands each connection it accepts to the session's proxy through ``SOCKET``:
the connection itself, not its bytes. Standard library only; nothing of Kairox is imported inside the sandbox."""

import os
import socket
import sys

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")
"""Read by curl, pip, npm, git, Python's urllib and requests, and Node's fetch (with ``NODE_USE_ENV_PROXY``)."""


def hand_over(listener: socket.socket, proxy: str) -> None:
    """Pass every connection ``listener`` accepts to the proxy listening on ``proxy``; never returns."""
    while True:
        client, _ = listener.accept()
        try:
            with socket.socket(socket.AF_UNIX) as link:
                link.connect(proxy)
                socket.send_fds(link, [b"c"], [client.fileno()])
        except OSError:
            pass  # the proxy is gone: the client sees its connection closed
        finally:
            client.close()


def main(argv: list[str]) -> None:
    if len(argv) < 4 or argv[2] != "--":
        sys.exit("usage: _forwarder.py SOCKET -- COMMAND [ARGS...]")
    proxy, command = argv[1], argv[3:]
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    # every name through the proxy, localhost too: nothing is reached directly from in here
    os.environ.update(dict.fromkeys(PROXY_VARIABLES, url), NO_PROXY="", no_proxy="", NODE_USE_ENV_PROXY="1")
    if os.fork() == 0:
        if os.fork() == 0:
            null = os.open(os.devnull, os.O_RDWR)
            for fd in (0, 1, 2):  # the command's pipes close when the command ends, not when this does
                os.dup2(null, fd)
            hand_over(listener, proxy)
        os._exit(0)
    os.wait()
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        print(f"{command[0]}: {exc.strerror}", file=sys.stderr)
        sys.exit(127)


if __name__ == "__main__":
    main(sys.argv)
