"""S8: install from a folder, a git repository and an archive URL; validated first, atomic, through the gate."""

import http.server
import io
import os
import subprocess
import tarfile
import threading
import zipfile
from collections.abc import Iterator
from pathlib import Path

import pytest
from tests.helpers import kairox
from tests.skills.conftest import WriteSkill

from kairox._rpc._fetch import SourceKind, classify_source
from kairox.config import resolve_config
from kairox.policy import ApprovalAnswer, ApprovalRequest, UnattendedApprover
from kairox.registry import registry_settings
from kairox.skills import SkillInstallDeniedError, SkillInstallError, install_skill, policy_authorizer
from kairox.skills._load import parse_skill_file


def _allow(path: Path) -> bool:
    return True


def _tree(root: Path) -> list[str]:
    return sorted(str(p.relative_to(root)) for p in root.rglob("*")) if root.exists() else []


@pytest.fixture
def source(tmp_path: Path, write_skill: WriteSkill) -> Path:
    skill = write_skill(tmp_path / "src", "pr-review", "Review pull requests.", extra="keywords: [review]")
    (skill.parent / "checklist.md").write_text("- tests\n", encoding="utf-8")
    return skill.parent


@pytest.mark.anyio
async def test_install_from_a_local_folder(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "home" / "skills"
    asked: list[Path] = []

    async def authorize(path: Path) -> bool:
        asked.append(path)
        return True

    installed = await install_skill(str(source), dest_root=dest, authorize=authorize)
    assert (installed.name, installed.path, installed.kind, asked) == (
        "pr-review",
        dest / "pr-review",
        SourceKind.LOCAL,
        [dest / "pr-review"],
    )
    assert _tree(dest) == ["pr-review", "pr-review/SKILL.md", "pr-review/checklist.md"]
    assert parse_skill_file(dest / "pr-review" / "SKILL.md").skill is not None

    with pytest.raises(SkillInstallError) as again:
        await install_skill(str(source), dest_root=dest, authorize=_allow)
    assert (again.value.message, again.value.hint) == (
        f"a skill is already installed at {dest / 'pr-review'}",
        "pass --force to replace it",
    )
    (source / "SKILL.md").write_text("---\nname: pr-review\ndescription: Second version.\n---\n", encoding="utf-8")
    await install_skill(str(source), dest_root=dest, authorize=_allow, replace=True)
    assert "Second version." in (dest / "pr-review" / "SKILL.md").read_text(encoding="utf-8")
    assert _tree(dest) == ["pr-review", "pr-review/SKILL.md", "pr-review/checklist.md"]  # no staging left


def test_sources_are_classified(tmp_path: Path) -> None:
    assert classify_source("https://github.com/acme/skills/tree/main/skills/pdf") == (
        SourceKind.GIT,
        "https://github.com/acme/skills.git",
        "skills/pdf",
        "main",
    )
    assert classify_source("https://github.com/acme/skills/blob/v2/pdf/SKILL.md") == (
        SourceKind.GIT,
        "https://github.com/acme/skills.git",
        "pdf",
        "v2",
    )
    assert classify_source("https://example.com/s/pdf.tar.gz?sig=1#pdf") == (
        SourceKind.ARCHIVE,
        "https://example.com/s/pdf.tar.gz?sig=1",
        "pdf",
        None,
    )
    assert classify_source("git@github.com:acme/skills.git") == (
        SourceKind.GIT,
        "git@github.com:acme/skills.git",
        None,
        None,
    )
    assert classify_source("git+https://host/x") == (SourceKind.GIT, "https://host/x", None, None)
    assert classify_source(str(tmp_path)) == (SourceKind.LOCAL, str(tmp_path), None, None)
    assert classify_source(f"file://{tmp_path}") == (SourceKind.LOCAL, str(tmp_path), None, None)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_install_from_a_file_git_repository(tmp_path: Path, write_skill: WriteSkill) -> None:
    repo = tmp_path / "repo"
    write_skill(repo / "skills", "pr-review", "Review pull requests.")
    write_skill(repo / "skills", "changelog", "Write the changelog.")
    git = ["git", "-c", "user.name=t", "-c", "user.email=t@example.invalid", "-C", str(repo)]
    subprocess.run(["git", "init", "-q", str(repo)], check=True)
    subprocess.run([*git, "add", "."], check=True)
    subprocess.run([*git, "commit", "-q", "-m", "skills"], check=True)
    url = f"file://{repo}"
    assert classify_source(url) == (SourceKind.GIT, url, None, None)
    dest = tmp_path / "dest"

    with pytest.raises(SkillInstallError) as several:
        await install_skill(url, dest_root=dest, authorize=_allow)
    assert several.value.message == "the source holds several skills (changelog, pr-review)"
    assert not dest.exists()

    installed = await install_skill(f"{url}#skills/pr-review", dest_root=dest, authorize=_allow)
    assert (installed.kind, installed.path) == (SourceKind.GIT, dest / "pr-review")
    by_name = await install_skill(url, dest_root=dest, authorize=_allow, name="changelog")
    assert by_name.path == dest / "changelog"
    assert _tree(dest) == ["changelog", "changelog/SKILL.md", "pr-review", "pr-review/SKILL.md"]


class _Quiet(http.server.SimpleHTTPRequestHandler):
    def log_message(self, format: str, *args: object) -> None:
        pass


@pytest.fixture
def served(tmp_path: Path) -> Iterator[tuple[str, Path]]:
    """A static file server on 127.0.0.1 over a temp folder, stopped after the test."""
    folder = tmp_path / "www"
    folder.mkdir()

    def handler(*args: object, **kwargs: object) -> _Quiet:
        return _Quiet(*args, directory=str(folder), **kwargs)  # type: ignore[arg-type]

    server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
    thread = threading.Thread(target=server.serve_forever, daemon=True)
    thread.start()
    try:
        yield f"http://127.0.0.1:{server.server_address[1]}", folder
    finally:
        server.shutdown()
        server.server_close()
        thread.join(timeout=5)


@pytest.mark.anyio
@pytest.mark.timeout(60)
async def test_install_from_zip_and_tar_gz_archives_over_http(served: tuple[str, Path], tmp_path: Path) -> None:
    base, www = served
    skill_md = b"---\nname: pdf\ndescription: Fill PDF forms.\n---\nSteps.\n"
    with zipfile.ZipFile(www / "pdf.zip", "w") as bundle:
        bundle.writestr("pdf-main/SKILL.md", skill_md)
        bundle.writestr("pdf-main/forms/fields.md", b"fields\n")
    with tarfile.open(www / "xlsx.tar.gz", "w:gz") as bundle:
        data = skill_md.replace(b"pdf", b"xlsx").replace(b"PDF forms", b"spreadsheets")
        info = tarfile.TarInfo("SKILL.md")
        info.size = len(data)
        bundle.addfile(info, io.BytesIO(data))
    dest = tmp_path / "dest"
    zipped = await install_skill(f"{base}/pdf.zip", dest_root=dest, authorize=_allow)
    tarred = await install_skill(f"{base}/xlsx.tar.gz", dest_root=dest, authorize=_allow)
    assert (zipped.kind, zipped.path, tarred.kind, tarred.path) == (
        SourceKind.ARCHIVE,
        dest / "pdf",
        SourceKind.ARCHIVE,
        dest / "xlsx",
    )
    assert _tree(dest) == ["pdf", "pdf/SKILL.md", "pdf/forms", "pdf/forms/fields.md", "xlsx", "xlsx/SKILL.md"]

    with pytest.raises(SkillInstallError) as missing:
        await install_skill(f"{base}/absent.zip", dest_root=dest, authorize=_allow)
    assert missing.value.message == f"download of {base}/absent.zip failed: HTTP 404"


@pytest.mark.anyio
async def test_archive_entries_leaving_the_folder_are_refused(served: tuple[str, Path], tmp_path: Path) -> None:
    base, www = served
    with zipfile.ZipFile(www / "evil.zip", "w") as bundle:
        bundle.writestr("SKILL.md", b"---\nname: evil\ndescription: d\n---\n")
        bundle.writestr("../outside.txt", b"x")
    with pytest.raises(SkillInstallError) as refused:
        await install_skill(f"{base}/evil.zip", dest_root=tmp_path / "dest", authorize=_allow)
    assert refused.value.message == "evil.zip: entry '../outside.txt' leaves the archive folder; refused"
    assert not (tmp_path / "dest").exists()


@pytest.mark.anyio
async def test_invalid_skill_is_refused_with_the_reason_and_leaves_nothing(tmp_path: Path) -> None:
    bad = tmp_path / "bad"
    bad.mkdir()
    (bad / "SKILL.md").write_text("---\nname: bad\n---\nno description\n", encoding="utf-8")
    dest = tmp_path / "home" / "skills"
    with pytest.raises(SkillInstallError) as refused:
        await install_skill(str(bad), dest_root=dest, authorize=_allow)
    assert refused.value.message == f"{bad / 'SKILL.md'} is not a valid skill"
    assert (
        refused.value.hint == f"{bad / 'SKILL.md'}:2: no `description`: a skill needs one to be offered "
        "(add `description:` saying what the skill does and when to use it)"
    )
    assert not (tmp_path / "home").exists()


@pytest.mark.anyio
async def test_denied_write_and_failed_copy_leave_nothing(source: Path, tmp_path: Path) -> None:
    dest = tmp_path / "home" / "skills"
    with pytest.raises(SkillInstallDeniedError):
        await install_skill(str(source), dest_root=dest, authorize=lambda path: False)
    assert not (tmp_path / "home").exists()

    os.symlink(source / "missing-file", source / "dangling")  # inside the folder, but copying it fails
    with pytest.raises(SkillInstallError) as failed:
        await install_skill(str(source), dest_root=dest, authorize=_allow)
    assert failed.value.message.startswith(f"copying the skill to {dest / 'pr-review'} failed: {source / 'dangling'}: ")
    assert failed.value.message.endswith("; nothing was installed")
    assert not (tmp_path / "home").exists()


def test_cli_install_outside_writable_roots_asks_and_is_denied_without_a_terminal(
    source: Path, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    private_tmp = workspace / "tmp"
    private_tmp.mkdir()
    env = {"TMPDIR": str(private_tmp)}  # so the temp root does not cover $KAIROX_HOME
    denied = kairox("skills", "install", str(source), cwd=workspace, env=env)
    assert denied.code == 4, denied.stderr
    assert (
        "is inside" in denied.stderr and "Kairox's own configuration and trust store" in denied.stderr
    )  # its home is protected whole
    assert "approval required" in denied.stderr
    assert f"kairox: writing {isolated_home / 'skills' / 'pr-review'} was not allowed" in denied.stderr
    assert not (isolated_home / "skills").exists()

    protected = kairox("skills", "install", str(source), "--scope", "workspace", cwd=workspace, env=env)
    assert protected.code == 4
    assert "inside a .kairox folder, which is always asked about before a write" in protected.stderr
    assert not (workspace / ".kairox").exists()

    approved = kairox("skills", "install", str(source), "--yes", "--json", cwd=workspace, env=env)
    assert approved.code == 0, approved.stderr
    assert f"approved by --yes: install the skill at {isolated_home / 'skills' / 'pr-review'}" in approved.stderr
    assert approved.json() == {
        "name": "pr-review",
        "path": str(isolated_home / "skills" / "pr-review"),
        "source": str(source),
        "kind": "local",
        "scope": "user",
    }
    listed = kairox("skills", "list", "--json", cwd=workspace).json()
    assert [s["name"] for s in listed["skills"]] == ["pr-review"]


def test_cli_install_into_the_user_store_asks_even_inside_the_writable_roots(
    source: Path, tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    run = kairox(
        "-c",
        f'policy.writable_roots=["{isolated_home}"]',
        "skills",
        "install",
        str(source),
        cwd=workspace,
        env={"TMPDIR": str(tmp_path)},
    )
    assert run.code == 4, run.stderr  # $KAIROX_HOME is Kairox's own folder: a write there is asked about, roots or not
    assert (
        f"{isolated_home / 'skills' / 'pr-review'} is inside {isolated_home}, Kairox's own configuration" in run.stderr
    ), run.stderr
    assert not (isolated_home / "skills").exists()


class _RecordingApprover:
    def __init__(self, approve: bool) -> None:
        self.approve = approve
        self.requests: list[ApprovalRequest] = []

    async def request_approval(self, request: ApprovalRequest) -> ApprovalAnswer:
        self.requests.append(request)
        return ApprovalAnswer(approved=True) if self.approve else ApprovalAnswer.deny("no")


@pytest.mark.anyio
async def test_policy_gate_asks_the_approver_only_outside_the_writable_roots(source: Path, tmp_path: Path) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    resolved = resolve_config(workspace)
    outside = Path("/var/lib/kairox-never-written/skills")
    denying = _RecordingApprover(approve=False)
    with pytest.raises(SkillInstallDeniedError):
        await install_skill(
            str(source),
            dest_root=outside,
            authorize=policy_authorizer(registry_settings(resolved).policy, approver=denying),
        )
    [request] = denying.requests
    assert (request.tool, request.arguments) == ("fs.write", {"path": str(outside / "pr-review")})
    assert "outside the writable roots" in request.reason
    assert not outside.exists()

    inside = workspace / "vendor" / "skills"
    approving = _RecordingApprover(approve=True)
    installed = await install_skill(
        str(source),
        dest_root=inside,
        authorize=policy_authorizer(registry_settings(resolved).policy, approver=approving),
    )
    assert (installed.path, approving.requests) == (inside / "pr-review", [])

    denied_by_rule = resolve_config(workspace, cli_overrides=[f'policy.rules.deny=["fs.write({workspace}/locked/**)"]'])
    with pytest.raises(SkillInstallDeniedError):
        await install_skill(
            str(source),
            dest_root=workspace / "locked",
            authorize=policy_authorizer(registry_settings(denied_by_rule).policy, approver=approving),
        )
    assert approving.requests == []  # a deny rule is final: nobody is asked


@pytest.mark.anyio
async def test_policy_gate_protects_kairox_home_and_an_unattended_yes_refuses_it(
    tmp_path: Path, isolated_home: Path
) -> None:
    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    resolved = resolve_config(workspace, cli_overrides=[f'policy.writable_roots=["{isolated_home}"]'])  # inside a root
    settings = registry_settings(resolved).policy
    for target, said in (
        (isolated_home / "kairox.toml", "your user configuration"),
        (isolated_home / "trusted_workspaces.json", "Kairox's own"),
    ):
        asked = _RecordingApprover(approve=True)
        assert await policy_authorizer(settings, approver=asked)(target) is True  # a person at a prompt may approve it
        [request] = asked.requests
        assert request.source == "protected_path" and said in request.reason, request
        inner = _RecordingApprover(approve=True)
        notes: list[str] = []
        unattended = UnattendedApprover(inner, who="--yes")
        assert await policy_authorizer(settings, approver=unattended, notify=notes.append)(target) is False
        assert inner.requests == []  # refused before anyone answers
        [note] = notes
        assert "--yes does not approve writes to protected paths" in note and str(target) in note, note


@pytest.mark.anyio
async def test_archive_that_unpacks_far_beyond_its_size_is_refused_and_leaves_nothing(
    served: tuple[str, Path], tmp_path: Path
) -> None:
    base, www = served
    with zipfile.ZipFile(www / "bomb.zip", "w", compression=zipfile.ZIP_DEFLATED) as bundle:
        bundle.writestr("SKILL.md", b"---\nname: bomb\ndescription: d\n---\n")
        bundle.writestr("zeros.bin", bytes(1_000_000))
    with tarfile.open(www / "bomb.tar.gz", "w:gz") as bundle:
        info = tarfile.TarInfo("zeros.bin")
        info.size = 1_000_000
        bundle.addfile(info, io.BytesIO(bytes(1_000_000)))

    refusals = []
    for name in ("bomb.zip", "bomb.tar.gz"):
        with pytest.raises(SkillInstallError) as refused:
            await install_skill(f"{base}/{name}", dest_root=tmp_path / "dest", authorize=_allow, max_bytes=100_000)
        refusals.append(refused.value.message)

    assert refusals == [
        "bomb.zip unpacks to more than 400000 bytes; refused",
        "bomb.tar.gz unpacks to more than 400000 bytes; refused",
    ]
    assert not (tmp_path / "dest").exists()


@pytest.mark.anyio
async def test_damaged_archives_are_refused_with_the_reason(tmp_path: Path) -> None:
    skill = tmp_path / "s"
    skill.mkdir()
    (skill / "SKILL.md").write_text("---\ndescription: d\n---\n")
    (skill / "noise.bin").write_bytes(bytes(range(256)) * 40)
    with tarfile.open(tmp_path / "whole.tar.gz", "w:gz") as bundle:
        bundle.add(skill, arcname="s")
    (tmp_path / "cut.tar.gz").write_bytes((tmp_path / "whole.tar.gz").read_bytes()[:600])
    with zipfile.ZipFile(tmp_path / "whole.zip", "w") as bundle:
        bundle.writestr("SKILL.md", b"---\ndescription: d\n---\n")
    data = bytearray((tmp_path / "whole.zip").read_bytes())
    data[40] ^= 0xFF  # inside the member's data: its CRC no longer matches
    (tmp_path / "bad.zip").write_bytes(bytes(data))

    messages = []
    for name in ("cut.tar.gz", "bad.zip"):
        with pytest.raises(SkillInstallError) as refused:
            await install_skill((tmp_path / name).as_uri(), dest_root=tmp_path / "dest", authorize=_allow)
        messages.append(refused.value.message.split(":")[0])

    assert messages == ["cut.tar.gz is damaged", "bad.zip is damaged"]
    assert not (tmp_path / "dest").exists()


@pytest.mark.anyio
async def test_install_yes_approves_only_the_skills_own_write_into_its_store(
    tmp_path: Path, isolated_home: Path
) -> None:
    from kairox.cli._skills_cmds import _write_gate

    workspace = tmp_path / "repo"
    (workspace / ".git").mkdir(parents=True)
    resolved = resolve_config(workspace)
    store = isolated_home / "skills"
    authorize = _write_gate(resolved, pre_approved=True, store=store)
    assert await authorize(store / "pr-review") is True  # the install named on the command line, into its store
    assert await authorize(store / "pr-review.md") is True
    # anything else the gate asks: --yes's usual answer, which never approves a protected path
    assert await authorize(isolated_home / "kairox.toml") is False
    assert await authorize(store / "pr-review" / "hooks" / "x") is False  # not a skill of the store: deeper inside it
    assert await authorize(workspace / ".kairox" / "skills" / "pr-review") is False  # another store than the one named
    assert not any(p.exists() for p in (store, workspace / ".kairox"))  # the gate only decides; nothing was written
