"""A child's stderr, scrubbed line by line: a secret split across two reads is still replaced, in the log file and
in the tail alike, and an unfinished last line is kept (scrubbed) once the child closes its stderr."""

import sys
from pathlib import Path

import pytest

from kairox._rpc import ChildProcess
from kairox._rpc._process import StderrTail
from kairox.config import SecretScrubber

pytestmark = [pytest.mark.anyio, pytest.mark.timeout(60)]

SECRET = "S3cret-value-0042"


def _scrubber() -> SecretScrubber:
    scrubber = SecretScrubber()
    scrubber.add(SECRET)
    return scrubber


def test_a_secret_split_across_reads_is_replaced_in_the_log_and_the_tail(tmp_path: Path) -> None:
    log = tmp_path / "server.log"
    tail = StderrTail(4096, log, scrub=_scrubber().text)
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
        [sys.executable, "-c", code], stderr_log=log, scrub_stderr=_scrubber().text, pipe_stdin=False
    ) as child:
        assert await child.wait(30) == 0
    assert log.read_text().endswith(" <redacted> end")
    assert SECRET not in child.stderr.text()
