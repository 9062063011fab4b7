"""First in a sandbox with ``network = "allowlist"`` (Y14), ``_forwarder.py SOCKET -- COMMAND ...`` listens on its
127.0.0.1, points the proxy variables there, starts the command and hands each connection to the proxy at
``SOCKET`` until the command ends, then ends with its exit status: nothing of it outlives the command, whether or
not the sandbox's init is killed. ``_socket`` and ``_signal``: ``socket`` and ``signal`` are slow to import."""

import os
import signal
import socket
import sys

PROXY_VARIABLES = ("HTTP_PROXY", "HTTPS_PROXY", "http_proxy", "https_proxy")  # curl, pip, npm, git, urllib, Node


def ended(signum: int, frame: object) -> None:  # SIGCHLD: the command ended, and so does this, with its status
    done, status = os.waitpid(-1, os.WNOHANG)
    if done:
        code = os.waitstatus_to_exitcode(status)
        os._exit(code if code >= 0 else 128 - code)


def main(proxy: str, command: list[str]) -> None:
    listener = socket.socket(socket.AF_INET, socket.SOCK_STREAM)
    listener.bind(("127.0.0.1", 0))
    listener.listen(128)
    url = f"http://127.0.0.1:{listener.getsockname()[1]}"
    # every name through the proxy, localhost too: nothing is reached directly from in here
    os.environ.update(dict.fromkeys(PROXY_VARIABLES, url), NO_PROXY="", no_proxy="", NODE_USE_ENV_PROXY="1")
    signal.signal(signal.SIGCHLD, ended)  # before the fork: a command that ends at once is seen too
    if os.fork() == 0:
        signal.signal(signal.SIGCHLD, signal.SIG_DFL)
        listener.close()
        try:
            os.execvp(command[0], command)
        except OSError as exc:
            os.write(2, f"{command[0]}: {exc.strerror}\n".encode())
            os._exit(127)
    null = os.open(os.devnull, os.O_RDWR)
    for fd in (0, 1, 2):  # the command's pipes close when the command ends, not later
        os.dup2(null, fd)
    while True:
        client, _ = listener.accept()
        link = socket.socket(socket.AF_UNIX, socket.SOCK_STREAM)
        try:  # the connection itself, not its bytes; a proxy gone leaves the client's closed
            link.connect(proxy)
            socket.send_fds(link, [b"c"], [client.fileno()])
        except OSError:
            pass
        link.close()
        client.close()


if __name__ == "__main__":
    main(sys.argv[1], sys.argv[3:])  # SOCKET -- COMMAND ...
