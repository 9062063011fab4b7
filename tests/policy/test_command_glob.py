"""What an allow rule's command glob covers: the program (and git's subcommand) as whole words, globs inside the
arguments as written; deny and ask rules keep matching as plain globs."""

from pathlib import Path

import pytest

from kairox.config import ApprovalPolicy, PolicyConfig, SandboxPolicy
from kairox.policy import PolicyEngine, PolicySettings, Rule, Verdict
from kairox.policy._shell import split_command
from kairox.tools import BUILTIN_SPECS

SHELL = next(spec for spec in BUILTIN_SPECS if spec.name == "shell.exec")


def _engine(tmp_path: Path, *patterns: tuple[str, str]) -> PolicyEngine:
    rules = [
        Rule(action=action, pattern=pattern, layer="user", file="kairox.toml", line=i)
        for i, (action, pattern) in enumerate(patterns, start=1)
    ]
    config = PolicyConfig(approval_policy=ApprovalPolicy.UNTRUSTED, sandbox_policy=SandboxPolicy.WORKSPACE_WRITE)
    return PolicyEngine(
        PolicySettings.from_config(
            config, workspace=tmp_path, rules=rules, home=tmp_path / "home", temp_dir=tmp_path / "tmp"
        )
    )


COVERED = [
    ("ls*", "ls"),
    ("ls*", "ls -la"),
    ("ls:*", "ls -la src"),
    ("ls *", "ls -la"),
    ("ls -la*", "ls -lah"),
    ("git status*", "git status"),
    ("git status*", "git status --short"),
    ("git status:*", "git -C . --no-pager status -s"),
    ("git*", "git log --oneline"),
    ("git log -1*", "git log -1 --format=%H"),
    ("npm run test*", "npm run test:unit"),
    ("npm run test*", "npm run test -- --watch=false"),
    ("rm build/*", "rm build/a.o"),
    ("python3 -m pytest*", "python3 -m pytest -q tests"),
    ("cargo build*", "cargo build --release"),
    ("l[s]*", "ls -la"),
    ("echo [[]x]", "echo [x]"),
]


@pytest.mark.parametrize(("glob", "line"), COVERED)
def test_an_allow_rule_covers_its_program_with_any_arguments(tmp_path: Path, glob: str, line: str) -> None:
    decision = _engine(tmp_path, ("allow", f"shell.exec({glob})")).decide(SHELL, {"command": line})
    assert decision.verdict is Verdict.ALLOW, decision.reason


NOT_COVERED = [
    ("ls*", "lsof -i"),
    ("ls*", "lsblk"),
    ("ls:*", "lsattr x"),
    ("cat*", "catman"),
    ("tr*", "truncate -s 0 victim"),
    ("sh*", "shred victim"),
    ("pip*", "pipx run anything"),
    ("python*", "python3 -c 1"),
    ("npm*", "npx cowsay"),
    ("git status*", "git status-marker"),
    ("git status:*", "git statusx"),
    ("git log*", "git log-all"),
    ("cargo build*", "cargo build-deps"),
    ("kubectl get*", "kubectl get-secrets"),
    ("l?*", "lsof x"),
    ("ls *", "ls"),
    ("git*status", "git status"),
    ("* --version", "rm -rf x --version"),
]


@pytest.mark.parametrize(("glob", "line"), NOT_COVERED)
def test_a_star_glued_to_the_program_or_subcommand_never_extends_it(tmp_path: Path, glob: str, line: str) -> None:
    decision = _engine(tmp_path, ("allow", f"shell.exec({glob})")).decide(SHELL, {"command": line})
    assert decision.verdict is Verdict.ASK, decision.reason


@pytest.mark.parametrize(
    ("glob", "line"),
    [("rm*", "rmdir build"), ("ls*", "lsof -i"), ("git push*", "git push-all"), ("git push*", "git -C . push-all")],
)
@pytest.mark.parametrize("action", ["deny", "ask"])
def test_deny_and_ask_rules_keep_matching_as_plain_globs(tmp_path: Path, glob: str, line: str, action: str) -> None:
    decision = _engine(tmp_path, (action, f"shell.exec({glob})")).decide(SHELL, {"command": line})
    assert decision.verdict is (Verdict.DENY if action == "deny" else Verdict.ASK)
    assert decision.rule is not None and decision.rule.pattern == f"shell.exec({glob})"


@pytest.mark.parametrize(
    ("pattern", "said"),
    [
        ("shell.exec(ls*)", "'ls' with any arguments (not another program whose name starts with 'ls')"),
        (
            "shell.exec(git status:*)",
            "'git status' with any arguments (not another subcommand whose name starts with 'status')",
        ),
        (
            "shell.exec(npm run test*)",
            "commands matching 'npm run test*' (the program 'npm' "
            "as a whole word, a '*' in the arguments spanning words)",
        ),
    ],
)
def test_the_approval_prompt_says_what_a_command_rule_covers(tmp_path: Path, pattern: str, said: str) -> None:
    assert _engine(tmp_path).describe_rule(SHELL, pattern) == (
        f"every command line whose commands are all {said}, run as "
        "written: no redirection or option that writes a file, "
        "no sudo, ssh or container exec, no variables that change what runs"
    )


@pytest.mark.parametrize(
    ("line", "pieces"),
    [
        ("ssh host rm -rf x", ("rm -rf x",)),
        ("ssh -p 22 -i key user@host rm x", ("rm x",)),
        ("ssh -tp 22 host rm x", ("rm x",)),
        ("ssh -p22 host -l me rm x", ("rm x",)),
        ("ssh host -- rm x", ("rm x",)),
        ("ssh host 'cd /srv && rm -rf x'", ("cd /srv", "rm -rf x")),
        ("ssh host echo 'a;rm x'", ("echo a", "rm x")),
        ("ssh host 'echo $(rm x)'", ("rm x", "echo $SUBST")),
        ("ssh -o ProxyCommand='nc %h %p' host ls", ("nc %h %p", "ls")),
        ("ssh -oLocalCommand=touch\\ x host ls", ("touch x", "ls")),
        ("ssh -o 'RemoteCommand rm x' host", ("rm x",)),
        ("sshpass -p pw ssh host rm x", ("rm x",)),
        ("docker exec -it -u root box rm -rf x", ("rm -rf x",)),
        ("docker -H unix:///run/d.sock exec box rm x", ("rm x",)),
        ("docker container exec --env A=1 box rm x", ("rm x",)),
        ("docker run --rm -v /:/host alpine rm x", ("rm x",)),
        ("docker run --entrypoint rm alpine -rf x", ("rm -rf x",)),
        ("docker run --entrypoint=rm alpine x", ("rm x",)),
        ("docker compose -f a.yml exec -u root web rm x", ("rm x",)),
        ("docker-compose run --rm web rm x", ("rm x",)),
        ("podman exec box rm x", ("rm x",)),
        ("kubectl exec pod -- rm x", ("rm x",)),
        ("kubectl -n prod exec -it pod -c app -- rm x", ("rm x",)),
        ("kubectl run tmp --image=busybox --restart=Never -- rm x", ("rm x",)),
        ("oc exec pod -- sh -c 'rm x'", ("rm x",)),
    ],
)
def test_the_command_run_on_another_host_or_in_a_container_is_a_command_of_the_line(
    line: str, pieces: tuple[str, ...]
) -> None:
    command = split_command(line)
    assert (command.pieces, command.privileged, command.hidden) == (pieces, True, None)


@pytest.mark.parametrize(
    ("line", "reason"),
    [
        ("ssh host", "ssh without a remote command runs a login shell on the host, reading commands from its input"),
        (
            "echo 'rm x' | ssh -T host",
            "ssh without a remote command runs a login shell on the host, reading commands from its input",
        ),
        ('ssh host "$CMD"', "a command name is only known when the line runs"),
        ('ssh host "$(cat commands.txt)"', "a command name is only known when the line runs"),
        ("ssh host bash < script.sh", "bash runs commands from its input, which the rules cannot see"),
        ("docker exec -i box sh < script.sh", "sh runs commands from its input, which the rules cannot see"),
        ('kubectl exec pod -- sh -c "$CMD"', "a command name is only known when the line runs"),
        (
            "ssh -F ./ssh_config host ls",
            "ssh -F ./ssh_config reads a config file whose ProxyCommand, "
            "LocalCommand or Match exec the rules cannot see",
        ),
        (
            "ssh -vF cfg host ls",
            "ssh -F cfg reads a config file whose ProxyCommand, LocalCommand or Match exec the rules cannot see",
        ),
        ("ssh -I ./token.so host ls", "ssh -I ./token.so loads a library into ssh, code the rules cannot see"),
        (
            "ssh -o PKCS11Provider=./token.so host ls",
            "ssh -o PKCS11Provider=./token.so loads a library into ssh, code the rules cannot see",
        ),
    ],
)
def test_a_remote_command_the_splitter_cannot_see_is_hidden(line: str, reason: str) -> None:
    assert split_command(line).hidden == reason


@pytest.mark.parametrize(
    "line", ["docker ps -a", "docker logs box", "kubectl get pods -n prod", "git push origin main"]
)
def test_other_subcommands_of_container_tools_are_plain_commands(line: str) -> None:
    command = split_command(line)
    assert (command.pieces, command.privileged) == ((line,), False)
