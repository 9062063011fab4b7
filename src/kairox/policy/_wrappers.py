"""What the shell splitter knows about programs: wrappers that run another command, shells and interpreters,
git's global options, and environment variables that change what a program runs.

The lists come from what Linux systems ship (util-linux, coreutils, procps, sudo, and common tools); a wrapper
missing here is still caught by deny rules, since every tail of a wrapped line is matched too.
"""

import re
from dataclasses import dataclass


@dataclass(frozen=True, slots=True)
class Wrapper:
    """A program that runs the rest of its command line (or one option's value) as a command."""

    takes_value: frozenset[str] = frozenset()
    """Options followed by a separate value (``-u root``)."""
    positionals: int = 0
    """Words between the options and the command (``timeout 5 cmd``, ``chroot DIR cmd``, ``flock FILE cmd``)."""
    command_options: frozenset[str] = frozenset()
    """Options whose value is a whole command line (``su -c 'rm x'``, ``flock -c``, ``script -c``)."""
    privileged: bool = False
    """Runs the command with other authority: an allow rule for the command does not cover it wrapped."""
    input_arguments: bool = False
    """The command's arguments come from input (``xargs``): a shell run this way runs text the line does not show."""
    joins_rest: bool = False
    """The rest of the line is one command line, as ``sh -c`` would read it (``watch 'rm x'``)."""
    remote: bool = False
    """Runs the command on another host or in a container (``ssh host cmd``, ``docker exec c cmd``): outside the
    sandbox, under that side's accounts. Without a command, ``ssh`` runs a login shell that reads its input."""
    program_options: frozenset[str] = frozenset()
    """Options whose value is the program the command's words go to (``docker run --entrypoint rm IMAGE -rf x``)."""


def _words(text: str) -> frozenset[str]:
    return frozenset(text.split())


def _w(
    takes: str = "",
    *,
    positionals: int = 0,
    command: str = "",
    privileged: bool = False,
    input_arguments: bool = False,
    joins_rest: bool = False,
    remote: bool = False,
    program: str = "",
) -> Wrapper:
    """A wrapper whose options taking a value (``takes``), command options and program options are given as
    space-separated words."""
    return Wrapper(
        takes_value=_words(takes),
        positionals=positionals,
        command_options=_words(command),
        privileged=privileged,
        input_arguments=input_arguments,
        joins_rest=joins_rest,
        remote=remote,
        program_options=_words(program),
    )


_SSH = _w(
    "-B -b -c -D -E -e -F -I -i -J -L -l -m -O -o -p -Q -R -S -W -w",
    positionals=1,
    joins_rest=True,
    privileged=True,
    remote=True,
)

WRAPPERS: dict[str, Wrapper] = {
    # privilege and identity
    "sudo": _w(
        "-u -g -C -D -h -p -r -t -U -T -R --user --group --chdir --prompt --close-from --role --type --host "
        "--other-user --command-timeout --chroot",
        privileged=True,
    ),
    "doas": _w("-u -C", privileged=True),
    "pkexec": _w("--user", privileged=True),
    "su": _w(
        "-s --shell -g --group -G --supp-group -w --whitelist-environment",
        positionals=1,
        command="-c --command --session-command",
        privileged=True,
    ),
    "runuser": _w(
        "-u --user -g --group -G --supp-group -s --shell -w --whitelist-environment",
        command="-c --command --session-command",
        privileged=True,
    ),
    "sg": _w(positionals=1, command="-c", privileged=True),
    "setpriv": _w(
        "--reuid --regid --ruid --rgid --euid --egid --groups --inh-caps --ambient-caps --bounding-set "
        "--securebits --selinux-label --apparmor-profile --landlock-access --landlock-rule --pdeathsig "
        "--ptracer",
        privileged=True,
    ),
    "chroot": _w("--userspec --groups", positionals=1, privileged=True),
    "nsenter": _w("-t --target -S --setuid -G --setgid -w --wd -R --root -Z", privileged=True),
    "unshare": _w(
        "--map-user --map-group --map-users --map-groups --setuid -S --setgid -G --propagation --setgroups -R "
        "--root -w --wd --kill-child",
        privileged=True,
    ),
    "gosu": _w(positionals=1, privileged=True),
    "su-exec": _w(positionals=1, privileged=True),
    "setuidgid": _w(positionals=1, privileged=True),
    "chpst": _w("-u -U -b -e -/ -n -l -L -m -d -o -p -f -c -r -t", privileged=True),
    "runcon": _w("-u -r -t -l --user --role --type --range", privileged=True),
    "fakeroot": _w("-l --lib --faked -s -i", privileged=True),
    "systemd-run": _w(
        "-p --property -u --unit -E --setenv --uid --gid --nice -M --machine --slice --working-directory "
        "--description -H --host",
        privileged=True,
    ),
    "firejail": _w(),
    "bwrap": _w(
        "--bind --ro-bind --dev-bind --chdir --setenv --unsetenv --uid --gid --hostname --proc --dev --tmpfs "
        "--dir --symlink --file --cap-add --cap-drop --remount-ro --seccomp --info-fd --args --lock-file "
        "--sync-fd --block-fd --userns-block-fd"
    ),
    # scheduling, limits and timing (coreutils, util-linux, procps)
    "env": _w("-u --unset -C --chdir"),
    "nice": _w("-n --adjustment"),
    "renice": _w("-n --priority -g -p -u"),
    "nohup": _w(),
    "time": _w("-f --format -o --output"),
    "command": _w(),
    "builtin": _w(),
    "exec": _w("-a"),
    "stdbuf": _w("-i -o -e --input --output --error"),
    "ionice": _w("-c -n -p -P -u --class --classdata --pid --pgid --uid"),
    "setsid": _w(),
    "timeout": _w("-s --signal -k --kill-after", positionals=1),
    "flock": _w("-w --wait --timeout -E --conflict-exit-code", positionals=1, command="-c --command"),
    "taskset": _w(positionals=1),
    "chrt": _w("-T --sched-runtime -P --sched-period -D --sched-deadline", positionals=1),
    "prlimit": _w("-p --pid -o --output"),
    "script": _w(
        "-E --echo -I --log-in -O --log-out -B --log-io -T --log-timing -m --logging-format -o --output-limit",
        command="-c --command",
    ),
    "numactl": _w("-C -N -m -p -i -P --physcpubind --cpunodebind --membind --preferred --interleave"),
    "cgexec": _w("-g"),
    "setarch": _w(positionals=1),
    "linux32": _w(),
    "linux64": _w(),
    "watch": _w("-n --interval -d --differences -q --equexit -s --shotsfile", joins_rest=True),
    "xargs": _w(
        "-I -n -P -d -L -s -a -E --arg-file --delimiter --max-args --max-procs --max-lines --max-chars "
        "--replace --eof --process-slot-var",
        input_arguments=True,
    ),
    "parallel": _w("-j --jobs -S --sshlogin --joblog -a --arg-file -d --delimiter -I --colsep", input_arguments=True),
    "strace": _w("-o -e -p -P -s -u -E -a -b -I -O -S -X"),
    "ltrace": _w("-o -e -p -u -s -n -a -A -D -E -F -x -L"),
    "valgrind": _w(),
    "catchsegv": _w(),
    "faketime": _w("-m -p -f", positionals=1),
    "eatmydata": _w(),
    "nocache": _w(),
    "unbuffer": _w(),
    "caffeinate": _w("-t -w"),
    "trickle": _w("-u -d -w -t -l -n"),
    "proxychains": _w("-f"),
    "proxychains4": _w("-f"),
    "torsocks": _w("-u -p -a -P"),
    "tsocks": _w(),
    "sshpass": _w("-p -f -d -P"),
    "dbus-run-session": _w("--config-file --dbus-daemon"),
    "xvfb-run": _w("-n --server-num -s --server-args -f --auth-file -e --error-file -p --xauth-protocol"),
    # another host: ssh joins its remote command's words with spaces and the remote shell reads them as a line
    "ssh": _SSH,
    "slogin": _SSH,
    # the dynamic loader run as a program (`/lib64/ld-linux-x86-64.so.2 /bin/rm x`), under any of its names
    "ld.so": _w("--library-path --preload --audit --argv0 --inhibit-rpath --glibc-hwcaps-prefix --glibc-hwcaps-mask"),
    "ssh-agent": _w("-a -E -t -P -O"),
    "chronic": _w(),
    "ifne": _w(),
    "busybox": _w(),
    "toybox": _w(),
    "coreutils": _w(),
}

_CONTAINER_EXEC = _w(
    "-e --env --env-file -u --user -w --workdir --detach-keys", positionals=1, privileged=True, remote=True
)
_CONTAINER_RUN = _w(
    "-e --env --env-file -u --user -w --workdir -v --volume --mount --name -p --publish --network --net "
    "--entrypoint -h --hostname -l --label --platform --pull --cpus -m --memory --add-host --dns "
    "--cap-add --cap-drop --device --security-opt --tmpfs --ulimit --restart --pid --ipc --userns "
    "--cidfile --log-driver --log-opt --gpus --runtime --stop-signal --shm-size",
    positionals=1,
    privileged=True,
    remote=True,
    program="--entrypoint",
)
_COMPOSE_EXEC = _w("-e --env -u --user -w --workdir --index", positionals=1, privileged=True, remote=True)
_COMPOSE_RUN = _w(
    "-e --env -u --user -w --workdir -v --volume -p --publish -l --label --name --entrypoint --cap-add --cap-drop",
    positionals=1,
    privileged=True,
    remote=True,
    program="--entrypoint",
)
_KUBE_RUN = _w(
    "--image --env --port -l --labels --restart --overrides --image-pull-policy -n --namespace --context "
    "--kubeconfig --annotations --pod-running-timeout",
    positionals=1,
    privileged=True,
    remote=True,
)
_KUBE_EXEC = _w(
    "-c --container -f --filename --pod-running-timeout -n --namespace --context --kubeconfig",
    positionals=1,
    privileged=True,
    remote=True,
)


@dataclass(frozen=True, slots=True)
class _ExecTool:
    """A program whose subcommands run a command (``docker exec``,
    ``kubectl exec`` in a container, ``perf record`` here)."""

    global_values: frozenset[str]
    """Options before the subcommand that take a separate value (``docker -H HOST``, ``kubectl -n NS``)."""
    subcommands: dict[tuple[str, ...], Wrapper]


_DOCKER = _ExecTool(
    global_values=_words(
        "-H --host -c --context --config -l --log-level --tlscacert --tlscert --tlskey --url --connection "
        "--identity --root --runroot"
    ),
    subcommands={
        ("exec",): _CONTAINER_EXEC,
        ("container", "exec"): _CONTAINER_EXEC,
        ("run",): _CONTAINER_RUN,
        ("container", "run"): _CONTAINER_RUN,
    },
)
_COMPOSE = _ExecTool(
    global_values=_words("-f --file -p --project-name --project-directory --env-file --profile --ansi --parallel"),
    subcommands={("exec",): _COMPOSE_EXEC, ("run",): _COMPOSE_RUN},
)
_KUBECTL = _ExecTool(
    global_values=_words(
        "-n --namespace --context --kubeconfig --cluster --user -s --server --token --as --as-group "
        "--request-timeout --certificate-authority --client-certificate --client-key --tls-server-name "
        "--cache-dir -v"
    ),
    subcommands={("exec",): _KUBE_EXEC, ("run",): _KUBE_RUN},
)
_PERF_RUN = _w(
    "-e --event -o --output -F --freq -c --count -p --pid -t --tid -C --cpu -m --mmap-pages -u --uid -G "
    "--cgroup --filter -r --repeat -I --interval-print -x --field-separator --call-graph --switch-output "
    "--max-size -D --delay --control -T --timestamp -M --metrics"
)
_PERF = _ExecTool(
    global_values=frozenset({"--debug", "--buildid-dir", "--exec-path"}),
    subcommands={(sub,): _PERF_RUN for sub in ("record", "stat", "trace")}
    | {(group, "record"): _PERF_RUN for group in ("sched", "mem", "c2c", "lock", "kmem", "kwork", "kvm", "timechart")},
)
"""``perf record CMD``: a profiler runs its command as a wrapper
does (``perf stat``, ``perf trace``, ``perf sched record`` ...)."""
_EXEC_TOOLS = {
    "perf": _PERF,
    "docker": _DOCKER,
    "podman": _DOCKER,
    "nerdctl": _DOCKER,
    "docker-compose": _COMPOSE,
    "podman-compose": _COMPOSE,
    "kubectl": _KUBECTL,
    "oc": _KUBECTL,
}


def exec_subcommand(name: str, rest: list[str]) -> tuple[Wrapper, int] | None:
    """``docker exec`` / ``kubectl -n ns exec``: the wrapper its exec subcommand is, and how many words of ``rest``
    (global options and the subcommand) come before that subcommand's own options; None for other subcommands."""
    tool = _EXEC_TOOLS.get(name)
    if tool is None:
        return None
    index = 0
    while index < len(rest) and rest[index].startswith("-") and rest[index] != "--":
        option, eq, _ = rest[index].partition("=")
        index += 2 if option in tool.global_values and not eq else 1
    if tool is _DOCKER and rest[index : index + 1] == ["compose"]:  # `docker compose -f x.yml exec web cmd`
        found = exec_subcommand("docker-compose", rest[index + 1 :])
        return None if found is None else (found[0], index + 1 + found[1])
    for words, wrapper in tool.subcommands.items():
        if tuple(rest[index : index + len(words)]) == words:
            return wrapper, index + len(words)
    return None


_SSH_COMMAND_KEYS = frozenset({"proxycommand", "localcommand", "knownhostscommand", "remotecommand"})
"""``ssh -o`` keys whose value is a command line: a local one the user's shell runs, or the remote one."""
_SSH_LIBRARY_KEYS = frozenset({"pkcs11provider", "securitykeyprovider"})


def ssh_option(letter: str, value: str) -> tuple[str | None, str | None]:
    """What one ssh option runs: the command line of ``-o ProxyCommand=...`` (also ``LocalCommand``,
    ``KnownHostsCommand``, ``RemoteCommand``; ``-o 'KEY VALUE'`` too), and why the option hides code from the rules
    (a config file of the line's choosing, a library ssh loads), each None when there is none."""
    if letter == "F" and value not in ("none", "/dev/null"):
        return (
            None,
            f"ssh -F {value} reads a config file whose ProxyCommand, LocalCommand or Match exec the rules cannot see",
        )
    if letter == "I":
        return None, f"ssh -I {value} loads a library into ssh, code the rules cannot see"
    if letter != "o":
        return None, None
    key, _, command = value.replace("=", " ", 1).strip().partition(" ")
    key = key.lower()
    if key in _SSH_LIBRARY_KEYS:
        return None, f"ssh -o {value} loads a library into ssh, code the rules cannot see"
    return (command.strip() or None) if key in _SSH_COMMAND_KEYS else None, None


SUBCOMMAND_PROGRAMS = _words("git cargo gh kubectl oc docker podman helm")
"""Programs that run another program for a subcommand they do not know: ``PROGRAM-SUBCOMMAND`` from ``PATH``
(git, cargo, kubectl and oc plugins, docker and podman CLI plugins, helm plugins) or an alias or extension (git,
gh). An allow rule's ``*`` glued to such a subcommand (``git status*``) does not extend it."""


SHELLS = _words("bash sh zsh dash ksh mksh pdksh fish csh tcsh ash yash rbash posh elvish nu xonsh")
_INTERPRETER = re.compile(
    r"^(?:python[0-9.]*|pypy[0-9.]*|perl[0-9.]*|ruby[0-9.]*|irb|node|nodejs|deno|bun|php[0-9.]*|lua[0-9.]*|luajit|tclsh[0-9.]*"
    r"|wish|expect|Rscript|R|julia|guile|racket|sbcl|clisp|ghci|runghc|pwsh|powershell|osascript|jshell|groovy|scala|awk|gawk"
    r"|mawk|nawk|sqlite3|psql|mysql|gdb|lldb)$"
)
INLINE_CODE_OPTIONS = _words("-c -e -E -m -r --eval --command -x --exec -ex")
"""Options that give an interpreter its program on the command line (what follows is the program)."""
STDIN_PROGRAM = frozenset({"-", "/dev/stdin", "/dev/fd/0", "/proc/self/fd/0", "-s"})


def is_interpreter(name: str) -> bool:
    return name in SHELLS or _INTERPRETER.match(name) is not None


# --- git ---------------------------------------------------------------------------------------------------------

GIT_VALUE_OPTIONS = _words(
    "-C -c --git-dir --work-tree --namespace --super-prefix --config-env --exec-path --attr-source --list-cmds"
)
GIT_FLAGS = _words(
    "-p --paginate -P --no-pager --bare --no-replace-objects --no-lazy-fetch --no-optional-locks "
    "--no-advice --literal-pathspecs --glob-pathspecs --noglob-pathspecs --icase-pathspecs --html-path "
    "--man-path --info-path"
)
_GIT_CODE_KEYS = re.compile(
    r"^(?:alias\..*|core\.(?:fsmonitor|sshcommand|hookspath|pager|editor|askpass|gitproxy|alternaterefscommand|worktree)"
    r"|credential\..*helper|diff\.external|diff\..*\.(?:command|textconv)|merge\..*\.driver|filter\..*|gpg\.(?:.*\.)?program"
    r"|sequence\.editor|pager\..*|interactive\.difffilter|uploadpack\.packobjectshook|remote\..*\.(?:uploadpack|receivepack|vcs|proxy)"
    r"|protocol\..*|include\..*|includeif\..*|man\..*|web\.browser|browser\..*|sendemail\..*|ssh\..*|submodule\..*"
    r"|mergetool\..*|difftool\..*|receive\..*hook.*|http\..*|url\..*|init\.templatedir|safe\.directory|fetch\..*|trace2\..*)$",
    re.IGNORECASE,
)


def git_option_runs_code(option: str, value: str | None) -> bool:
    """Whether a git global option can make git run a program the line does not show."""
    if option == "--exec-path":
        return value is not None
    if option in ("-c", "--config-env"):
        key = (value or "").partition("=")[0].strip()
        return not key or _GIT_CODE_KEYS.match(key) is not None
    return False


# --- environment -------------------------------------------------------------------------------------------------

_HARMLESS_ENV = re.compile(
    r"^(?:LANG|LANGUAGE|LC_[A-Z]+|TZ|TERM|COLUMNS|LINES|NO_COLOR|FORCE_COLOR|CLICOLOR(?:_FORCE)?|CI|RUST_BACKTRACE|RUST_LOG"
    r"|PYTHONUNBUFFERED|PYTHONDONTWRITEBYTECODE|PYTHONHASHSEED|PYTHONIOENCODING|PYTHONUTF8|NODE_ENV|DEBUG|VERBOSE|QUIET|TIMEFORMAT)$"
)


def env_changes_what_runs(name: str) -> bool:
    """Whether setting ``name`` for a command may change which code it runs (``GIT_*``, ``LD_*``, ``PATH``,
    ``PYTHON*``, ``BASH_ENV`` ...). Only a short list of names known to be harmless is not."""
    return _HARMLESS_ENV.match(name) is None


HIDING_BUILTINS = _words("source . trap alias hash fc enable")
"""Builtins that run or redefine commands from text the line does not show as a command."""


# --- options that make a reading program write a file or run one -----------------------------------------------


@dataclass(frozen=True, slots=True)
class _Effects:
    """Options of one program that write a file or run another program."""

    writes_long: frozenset[str] = frozenset()
    """``--output=FILE`` / ``--output FILE``, and the prefixes GNU ``getopt_long`` accepts (``--out``)."""
    writes_short: str = ""
    """Letters, also inside a cluster (``sort -uo FILE``, ``-oFILE``)."""
    writes_words: frozenset[str] = frozenset()
    """Whole words (``find -delete``)."""
    runs_long: frozenset[str] = frozenset()
    runs_short: str = ""
    runs_words: frozenset[str] = frozenset()
    value_letters: str = ""
    """Short options that take a value: the rest of a cluster after one is that value (``sort -k1o``)."""


_EFFECTS: dict[str, _Effects] = {
    "sort": _Effects(
        writes_long=frozenset({"--output"}),
        writes_short="o",
        runs_long=frozenset({"--compress-program"}),
        value_letters="ktST",
    ),
    "find": _Effects(writes_words=frozenset({"-delete", "-fprint", "-fprint0", "-fprintf", "-fls"})),
    "rg": _Effects(runs_long=frozenset({"--pre"})),
    "tar": _Effects(
        runs_long=_words(
            "--to-command --use-compress-program --checkpoint-action --info-script --new-volume-script --rsh-command"
        ),
        runs_short="IF",
        value_letters="fCTXgKNVbHL",
    ),
    "zip": _Effects(runs_long=frozenset({"--unzip-command"}), runs_words=frozenset({"-TT"})),
    "rsync": _Effects(runs_long=frozenset({"--rsh", "--rsync-path"}), runs_short="e"),
    "man": _Effects(runs_long=frozenset({"--pager", "--html"}), runs_short="PH"),
    "sed": _Effects(writes_long=frozenset({"--in-place"}), writes_short="i", value_letters="efl"),
    "less": _Effects(writes_long=frozenset({"--log-file", "--LOG-FILE"}), writes_short="oO"),
    "git": _Effects(writes_long=frozenset({"--output"})),
    # git options that mean this for one subcommand only (`git log -O FILE` reads an order file)
    "git format-patch": _Effects(writes_long=frozenset({"--output", "--output-directory"}), writes_short="o"),
    "git grep": _Effects(runs_long=frozenset({"--open-files-in-pager"}), runs_short="O"),
}


def _long(word: str, names: frozenset[str]) -> bool:
    option = word.partition("=")[0]
    return len(option) > 2 and option.startswith("--") and any(name.startswith(option) for name in names)


def _short(word: str, letters: str, value_letters: str) -> bool:
    if not letters or not word.startswith("-") or word.startswith("--"):
        return False
    for letter in word[1:]:
        if letter in letters:
            return True
        if letter in value_letters:
            return False
    return False


_SED_ADDRESS = r"(?:\d+(?:~\d+)?|\$|/(?:[^/\\]|\\.)*/[IM]*)"
_SED_COMMAND = re.compile(
    rf"(?:^|[;\n{{}}])\s*(?:{_SED_ADDRESS}(?:\s*,\s*(?:{_SED_ADDRESS}|[+~]\d+))?)?\s*!?\s*([ewW])(?:\s|$|;)"
)
"""A sed command that runs a program (``e``) or writes a file (``w``, ``W``), after its address."""
_SED_SUBSTITUTE = re.compile(
    r"(?:^|[;\n{}])\s*(?:[^;\n{}]*?)s([^\s\\])(?:[^\\]|\\.)*?\1(?:[^\\]|\\.)*?\1([a-zA-Z0-9]*)"
)
"""``s/re/text/FLAGS``: the flags ``e`` (run the result) and ``w FILE`` (write)."""


def _sed_effect(words: list[str]) -> tuple[str, str] | None:
    """What a sed script on the line does besides printing: ``1e rm x`` and ``s/x/y/e`` run, ``w out`` writes."""
    scripts, index = [], 1
    while index < len(words):
        word = words[index]
        if word in ("-e", "--expression") and index + 1 < len(words):
            scripts.append(words[index + 1])
            index += 2
            continue
        if word.startswith("--expression="):
            scripts.append(word.partition("=")[2])
        elif not word.startswith("-"):
            scripts.append(
                word
            )  # the script when no -e was given; a file name otherwise, read as a script: more caution
        index += 1
    for script in scripts:
        command = _SED_COMMAND.search(script)
        if command is not None:
            return ("runs" if command.group(1) == "e" else "writes"), script
        for substitute in _SED_SUBSTITUTE.finditer(script):
            flags = substitute.group(2)
            if "e" in flags:
                return "runs", script
            if "w" in flags:
                return "writes", script
    return None


def option_effect(name: str, words: list[str]) -> tuple[str, str] | None:
    """``("writes", WORD)`` when an option makes this reading program write a file (``git log --output=x``,
    ``sort -o x``, ``find -delete``), ``("runs", WORD)`` when one makes it run a program named only as an
    option's value (``rg --pre CMD``, ``sort --compress-program=CMD``, ``git grep -O CMD``), else None.
    ``words``: the command, git's global options dropped."""
    effects = _EFFECTS.get(f"{name} {words[1]}" if name == "git" and len(words) > 1 else "") or _EFFECTS.get(name)
    if effects is None:
        return None
    for word in words[1:]:
        if word == "--":
            break
        if (
            _long(word, effects.runs_long)
            or _short(word, effects.runs_short, effects.value_letters)
            or word.partition("=")[0] in effects.runs_words
        ):
            return "runs", word
        if (
            _long(word, effects.writes_long)
            or _short(word, effects.writes_short, effects.value_letters)
            or word in effects.writes_words
        ):
            return "writes", word
    return _sed_effect(words) if name == "sed" else None
