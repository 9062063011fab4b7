"""Whether read rules hide a repository's history: only when it may hold what they hide, and when that cannot be
told (fail closed). Real git repositories in temp folders."""

import time
from pathlib import Path

import pytest
from tests.helpers import git

from kairox.policy import Rule, read_mask
from kairox.sandbox._readmask import MaskedReads

SHORT_SETTLE_NS = 50_000_000
"""A settle window the tests can wait out."""


def repository(ws: Path, *committed: str) -> None:
    """A repository with a tracked file and ``committed`` (then removed from the index), and an ignored ``.env``."""
    ws.mkdir(parents=True, exist_ok=True)
    git(ws, "init", "-q", "-b", "main")
    (ws / ".gitignore").write_text(".env\n")
    (ws / "notes.txt").write_text("plain\n")
    git(ws, "add", ".")
    git(ws, "commit", "-qm", "first")
    for name in committed:
        (ws / name).parent.mkdir(parents=True, exist_ok=True)
        (ws / name).write_text(f"old {name}\n")
        git(ws, "add", "-f", name)
        git(ws, "commit", "-qm", f"add {name}")
        git(ws, "rm", "-rq", "--cached", name)
        git(ws, "commit", "-qm", f"untrack {name}")
    (ws / ".env").write_text("now\n")


def masked(ws: Path, *patterns: str, budget: float | None = None) -> MaskedReads:
    mask = read_mask(tuple(Rule(action="deny", pattern=p) for p in patterns), workspace=ws, home=ws.parent / "home")
    assert mask is not None
    if budget is not None:
        mask.history.budget = budget
    return mask.work_out()


def history_hidden(found: MaskedReads, ws: Path) -> bool:
    return ws / ".git" / "objects" in found.hidden.folders


def test_a_history_that_never_held_a_hidden_path_stays_but_message_files_and_conflicts_go(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws, "config/.env.example", "sub/key.txt")
    (ws / ".git" / "COMMIT_EDITMSG").write_text("x")
    (ws / ".git" / "rr-cache").mkdir()

    found = masked(ws, "fs.read(**/.env)", "fs.read(./.env)", "fs.read(*.pem)", "fs.read(sub/other/**)")

    assert found.hidden.folders == (ws / ".git" / "rr-cache",)
    assert found.hidden.files == (ws / ".env", ws / ".git" / "COMMIT_EDITMSG")
    assert found.hidden.notes == ()


@pytest.mark.parametrize(
    ("committed", "pattern"),
    [
        ("deep/er/.env", "fs.read(**/.env)"),
        ("sub/.env", "fs.read(sub/.env)"),
        ("secrets/a/b.txt", "fs.read(secrets/**)"),
        (".ssh/id_rsa", "fs.read(.ssh)"),  # a name rule naming a folder covers what is inside it
        ("certs/site.pem", "fs.read(*.pem)"),
        ("certs/site.kem", "fs.read(*.[kp]em)"),  # a class: every path is listed, the rule's matcher decides
    ],
)
def test_a_history_that_held_a_path_a_rule_covers_is_hidden(tmp_path: Path, committed: str, pattern: str) -> None:
    ws = tmp_path / "ws"
    repository(ws, committed)

    found = masked(ws, pattern)

    assert history_hidden(found, ws)
    assert found.hidden.notes == (
        f"the history of the git repository at {ws} is hidden (deny "
        f"rule '{pattern}' reaches it, and a repository keeps "
        "what it ever held): git commands that read objects (status, "
        "log, diff, show, clone) fail here; run them outside "
        "the sandbox, or narrow the rule to paths outside the repository",
    )


def test_a_literal_rule_looks_at_its_own_path_only(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws, "other/.env", "sub/.env.old")

    assert not history_hidden(masked(ws, "fs.read(sub/.env)"), ws)


def reason(found: MaskedReads) -> str:
    (note,) = found.hidden.notes
    return note.split("could not be told: ", 1)[1].split("): git commands", 1)[0]


def test_past_its_budget_the_history_is_hidden(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws)

    found = masked(ws, "fs.read(**/.env)", budget=0)

    assert history_hidden(found, ws) and reason(found) == "its history could not be checked within 0 s"


def test_without_git_the_history_is_hidden(tmp_path: Path, monkeypatch: pytest.MonkeyPatch) -> None:
    ws = tmp_path / "ws"
    repository(ws)
    monkeypatch.setenv("PATH", str(tmp_path / "no-bin"))

    found = masked(ws, "fs.read(**/.env)")

    assert history_hidden(found, ws) and reason(found) == "git is not installed, so its history could not be checked"


def test_a_corrupt_repository_hides_its_history(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws)
    tree = git(ws, "rev-parse", "HEAD^{tree}")
    (ws / ".git" / "objects" / tree[:2] / tree[2:]).unlink()

    found = masked(ws, "fs.read(**/.env)")

    assert history_hidden(found, ws) and reason(found).startswith("`git diff-tree` failed: "), reason(found)


def test_grafts_a_ref_to_a_blob_borrowed_stores_and_pending_patches_hide_the_history(tmp_path: Path) -> None:
    grafted, tagged, patched, origin = (
        tmp_path / "grafted",
        tmp_path / "tagged",
        tmp_path / "patched",
        tmp_path / "origin",
    )
    for ws in (grafted, tagged, patched, origin):
        repository(ws)
    (grafted / ".git" / "info" / "grafts").write_text(git(grafted, "rev-parse", "HEAD") + "\n")
    git(tagged, "tag", "loose", git(tagged, "hash-object", "-w", "notes.txt"))
    (patched / ".git" / "rebase-apply").mkdir()
    borrowing = tmp_path / "borrowing"
    git(tmp_path, "clone", "-q", "--shared", str(origin), str(borrowing))  # origin's other branches are not walked

    reasons = [reason(masked(ws, "fs.read(**/.env)")) for ws in (grafted, tagged, patched, borrowing)]

    assert reasons == [
        "grafts (info/grafts) change what a walk of its history sees",
        "a ref names a file's content directly, with no path to check",
        "patches of a `git am` or rebase (rebase-apply) may not be in its history yet",
        "it borrows objects from other stores (objects/info/alternates), whose histories are not walked",
    ]


def test_the_answer_is_kept_until_the_repository_or_the_hidden_file_changes(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws)
    mask = read_mask((Rule(action="deny", pattern="fs.read(**/.env)"),), workspace=ws, home=tmp_path / "home")
    assert mask is not None
    mask.history.settle_ns = SHORT_SETTLE_NS
    time.sleep(2 * SHORT_SETTLE_NS / 1e9)  # the repository's files had settled: their statuses show the next change

    first, again = mask.work_out(), mask.work_out()
    (ws / ".env").write_text("now, changed\n")
    git(ws, "hash-object", "-w", ".env")  # its content stored with no name: found by content
    changed = mask.work_out()

    assert not history_hidden(first, ws) and not history_hidden(again, ws) and history_hidden(changed, ws)
    assert mask.history.walks == 2


def test_an_answer_is_not_kept_while_the_repository_has_just_changed(tmp_path: Path) -> None:
    # a status taken within the settle window could stay the same through the next write: the check runs again
    ws = tmp_path / "ws"
    repository(ws)
    mask = read_mask((Rule(action="deny", pattern="fs.read(**/.env)"),), workspace=ws, home=tmp_path / "home")
    assert mask is not None
    mask.work_out(), mask.work_out()
    assert mask.history.walks == 2


def test_a_repository_configuration_cannot_make_the_check_run_a_program(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws)
    marker = tmp_path / "ran"
    program = tmp_path / "program.sh"
    program.write_text(f"#!/bin/sh\ntouch {marker}\n")
    program.chmod(0o755)
    for key, value in [
        ("core.fsmonitor", str(program)),
        ("core.sshCommand", str(program)),
        ("core.pager", str(program)),
        ("log.showSignature", "true"),
        ("gpg.program", str(program)),
        ("diff.external", str(program)),
        ("core.repositoryFormatVersion", "1"),
        ("extensions.partialClone", "origin"),
        ("remote.origin.promisor", "true"),
        ("remote.origin.url", "ssh://example.invalid/repo"),
    ]:
        git(ws, "config", key, value)
    git(ws, "update-index", "--fsmonitor")
    tree = git(ws, "rev-parse", "HEAD^{tree}")
    (ws / ".git" / "objects" / tree[:2] / tree[2:]).unlink()  # missing: a partial clone would fetch it
    marker.unlink(missing_ok=True)  # setting the fsmonitor up ran it

    found = masked(ws, "fs.read(**/.env)")

    assert not marker.exists()
    assert history_hidden(found, ws) and reason(found).startswith("`git diff-tree` failed: "), reason(found)


def test_another_worktrees_refs_in_a_reftable_hide_the_history(tmp_path: Path) -> None:
    ws = tmp_path / "ws"
    repository(ws)
    git(ws, "worktree", "add", "-q", "--detach", str(tmp_path / "linked"))
    (ws / ".git" / "worktrees" / "linked" / "reftable").mkdir()  # where the reftable format keeps its own refs

    found = masked(ws, "fs.read(**/.env)")

    assert (
        reason(found) == "another worktree keeps its own refs (refs/bisect, "
        "refs/worktree) in a reftable, which the check does not read"
    )
    assert history_hidden(found, ws)
