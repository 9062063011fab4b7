"""A child's stderr, scrubbed line by line: a secret split across two reads is still replaced, in the log file and
in the tail alike, and an unfinished last line is kept (scrubbed) once the child closes its stderr."""

import sys
from pathlib import Path

import pytest

from kairox._rpc._process import ChildProcess, StderrTail
from kairox.config import SecretScrubber

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SECRET = "S3cret-value-0042"


def _scrubber() -> SecretScrubber:
    scrubber = SecretScrubber()
    scrubber.add(SECRET)
    return scrubber


def test_a_secret_split_across_reads_is_replaced_in_the_log_and_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    tail = StderrTail(4096, log, scrub=_scrubber())
    for chunk in (b"starting\nusing token S3cr", b"et-value-0042 now\n", b"last words S3cret-val", b"ue-0042"):
        tail.feed(chunk)
    assert SECRET not in tail.text()
    tail.close()
    kept = log.read_text()
    assert kept == "starting\nusing token <redacted> now\nlast words <redacted>"
    assert tail.text() == kept


async def test_a_child_that_prints_its_secret_leaves_no_trace_of_it(tmp_path: Path) -> None:
    log = tmp_path / "child.log"
    code = (
        f"import sys; sys.stderr.write('a' * 70000 + ' {SECRET[:5]}"
        f"'); sys.stderr.flush(); sys.stderr.write('{SECRET[5:]} end')"
    )
    async with ChildProcess(
        [sys.executable, "-c", code], stderr_log=log, scrub_stderr=_scrubber(), pipe_stdin=False
    ) as child:
        assert await child.wait(30) == 0
    assert log.read_text().endswith(" <redacted> end")
    assert SECRET not in child.stderr.text()


@pytest.mark.parametrize("at", [1, 5, len(SECRET) - 1])
def test_a_line_longer_than_the_limit_is_never_let_out_with_half_a_secret(tmp_path: Path, at: int) -> None:
    log = tmp_path / "server.log"
    tail = StderrTail(4096, log, scrub=_scrubber())
    # the limit falls inside the secret: the first read fills it with the secret's first `at` characters
    tail.feed(b"x" * (4096 - at) + SECRET[:at].encode())
    shown = tail.text()
    tail.feed(SECRET[at:].encode() + b" and more, no newline yet " + "é".encode() * 3000)
    tail.close()
    kept = log.read_text()
    for part in (kept, shown, tail.text()):
        assert SECRET[: max(at, 3)] not in part.replace("x" * 8, "")
    assert kept == "x" * (4096 - at) + "<redacted> and more, no newline yet " + "é" * 3000


def test_a_long_line_is_cut_after_a_whole_secret_and_before_what_may_start_one() -> None:
    scrubber = _scrubber()
    whole = "y" * 100 + SECRET + "z"
    assert scrubber.safe_end(whole) == 100 + len(SECRET), "a secret the text holds whole is never cut in two"
    assert scrubber.safe_end("y" * 100) == 100 - (len(SECRET) - 1), "held back: no more than a secret's length"
    assert scrubber.safe_end("y" * 100 + SECRET[:4]) <= 100
    assert SecretScrubber().safe_end("y" * 100) == 100, "with no secret to find, nothing is held back"
