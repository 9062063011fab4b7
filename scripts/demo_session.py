"""``make demo``'s recorded session: run ``kairox run ...`` on a pseudo-terminal, as at a person's terminal, show
everything it prints, and answer its approval question the way a person would type it (``o``: allow once).

Usage: python scripts/demo_session.py ANSWER -- COMMAND ARGS...   (exits with the command's exit code)
"""

import os
import select
import subprocess
import sys
import time

PROMPT = b"answer: "
TIMEOUT_SEC = 120.0


def main() -> int:
    if len(sys.argv) < 4 or sys.argv[2] != "--":
        print(__doc__, file=sys.stderr)
        return 2
    answer, command = sys.argv[1], sys.argv[3:]
    master, slave = os.openpty()
    child = subprocess.Popen(command, stdin=slave, stdout=slave, stderr=slave, start_new_session=True)
    os.close(slave)
    seen = b""
    deadline = time.monotonic() + TIMEOUT_SEC
    try:
        while time.monotonic() < deadline:
            ready, _, _ = select.select([master], [], [], 1.0)
            if not ready:
                if child.poll() is not None:
                    break
                continue
            try:
                chunk = os.read(master, 4096)
            except OSError:  # the command ended and closed its terminal
                break
            if not chunk:
                break
            sys.stdout.buffer.write(chunk)
            sys.stdout.flush()
            seen += chunk
            if PROMPT in seen:
                seen = b""
                time.sleep(0.3)  # as a person reads the question; the terminal echoes what is typed
                os.write(master, answer.encode() + b"\n")
            seen = seen[-len(PROMPT) :] if PROMPT not in seen else seen
        else:
            print(f"\ndemo: the session did not end in {TIMEOUT_SEC:.0f} s; stopping it", file=sys.stderr)
        return child.wait(timeout=10)
    finally:
        if child.poll() is None:
            child.kill()
            child.wait(10)
        os.close(master)


if __name__ == "__main__":
    sys.exit(main())
