"""First in a sandbox with ``network = "allowlist"`` (Y14), ``_forwarder.py SOCKET -- COMMAND ...`` listens on its
127.0.0.1, points the proxy variables there and becomes the command; a process of its own (its parent the sandbox's
init: it ends with the sandbox) hands each connection to the proxy at ``SOCKET``. ``_socket``: ``socket`` is slow."""

import _socket
import os
import sys

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")  # curl, pip, npm, git, urllib, Node


def main(proxy: str, command: list[str]) -> None:
    listener = _socket.socket(_socket.AF_INET, _socket.SOCK_STREAM)
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
            while True:
                client = listener._accept()[0]  # type: ignore[attr-defined]  # the raw descriptor
                link = _socket.socket(_socket.AF_UNIX, _socket.SOCK_STREAM)
                try:  # the connection itself, not its bytes; a proxy gone leaves the client's closed
                    link.connect(proxy)
                    link.sendmsg([b"c"], [(_socket.SOL_SOCKET, _socket.SCM_RIGHTS, client.to_bytes(4, sys.byteorder))])
                except OSError:
                    pass
                link.close()
                os.close(client)
        os._exit(0)
    os.wait()
    listener.close()
    try:
        os.execvp(command[0], command)
    except OSError as exc:
        sys.exit(f"{command[0]}: {exc.strerror}")


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[3:])  # SOCKET -- COMMAND ...
