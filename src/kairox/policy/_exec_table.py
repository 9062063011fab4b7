"""Programs that run code their command line does not show as a command, as data: one line per program.

Each entry says which options, operands, environment variables and texts make the program execute something
the rules cannot read (an editor's ``-c '!rm x'``, a build tool's ``--eval`` or ``-f FILE``, a pager set through
``LESSOPEN``, a database shell's ``.shell``, a plugin ``-p NAME``) and which give a shell command line the rules
can split and check (``npx -c 'rm x'``, ``git rebase -x 'rm x'``). The splitter reads a command against its entry;
what an entry names counts as code from elsewhere: a deny or ask rule on the shell asks about the line, and an
allow rule covers it only when its glob writes the option out (``make --eval*``).

Adding a program is adding a line below; ``tests/security/test_shell_fail_closed.py`` tries every entry.
"""

import functools
import re
from dataclasses import dataclass, field


@dataclass(frozen=True, slots=True)
class Runs:
    """How one program runs code that its command line does not show as a command."""

    code: frozenset[str] = frozenset()
    """Options whose value is code the program runs (``python3 -c``, ``vim -c``, ``gdb -ex``, ``make --eval``)."""
    files: frozenset[str] = frozenset()
    """Options whose value names a file of code, commands or options it loads (``vim -S``, ``make -f``, ``sed -f``)."""
    programs: frozenset[str] = frozenset()
    """Options whose value is a program it runs (``npm --script-shell``, ``go test -exec``)."""
    lines: frozenset[str] = frozenset()
    """Options whose value is a shell command line, split and checked as a line of its own (``npx -c``)."""
    rest: frozenset[str] = frozenset()
    """Words after which the remaining words are a command line it runs, split and checked (``gdb --args rm x``,
    ``git submodule foreach 'rm x'``)."""
    env: frozenset[str] = frozenset()
    """Environment variables that make it run code (``LESSOPEN``, ``GIT_CONFIG_*``: a trailing ``*`` is a prefix)."""
    assignments: frozenset[str] = frozenset()
    """``NAME=VALUE`` operands that set what it runs (``make SHELL=...``; ``*``: any name)."""
    text: re.Pattern[str] | None = None
    """A text in any argument that makes it run a program (sqlite3's ``.shell``, awk's ``system(``)."""
    plus: bool = False
    """A ``+COMMAND`` operand runs COMMAND (``vim +'!rm x'``); ``+NUMBER`` only picks a line."""
    clusters: bool = True
    """Short options may be clustered (``-Sc CODE``); False for programs whose single-dash options are words
    (``gdb -batch``, ``sqlite3 -header``)."""
    always: str | None = None
    """Why every run executes commands the line does not show (``at`` reads them from its input), or None."""
    script: bool = False
    """Its first operand is a program file it runs (``python3 x.py``, ``bash s.sh``)."""
    values: frozenset[str] = frozenset()
    """Options taking a separate value that does not run anything, so the script operand is found after them."""
    options: dict[str, str] = field(default_factory=dict)
    """Every option of ``code``, ``files``, ``programs`` and ``lines``, with the name of its kind (built by ``_r``)."""

    @property
    def reads_arguments(self) -> bool:
        """Whether any of the command's arguments can matter (an entry of variables only need not read them)."""
        return bool(self.options or self.rest or self.assignments or self.text is not None or self.plus)


def _r(
    *,
    code: str = "",
    files: str = "",
    programs: str = "",
    lines: str = "",
    rest: str = "",
    env: str = "",
    assign: str = "",
    text: str | None = None,
    plus: bool = False,
    clusters: bool = True,
    always: str | None = None,
    script: bool = False,
    values: str = "",
) -> Runs:
    kinds = {"code": code, "files": files, "programs": programs, "lines": lines}
    return Runs(
        options={option: kind for kind, spelled in kinds.items() for option in spelled.split()},
        code=frozenset(code.split()),
        files=frozenset(files.split()),
        programs=frozenset(programs.split()),
        lines=frozenset(lines.split()),
        rest=frozenset(rest.split()),
        env=frozenset(env.split()),
        assignments=frozenset(assign.split()),
        text=None if text is None else re.compile(text),
        plus=plus,
        clusters=clusters,
        always=always,
        script=script,
        values=frozenset(values.split()),
    )


_VIM = _r(code="-c --cmd", files="-S -u -U -s -i", env="VIMINIT EXINIT MYVIMRC VIMRUNTIME VIM", plus=True)
_SHELL = _r(files="--rcfile --init-file", env="BASH_ENV ENV ZDOTDIR", script=True, values="-o -O +o +O")
_PYTHON = _r(code="-c", files="-W", env="PYTHON*", script=True, values="-X")
_NODE = _r(
    code="-e --eval -p --print",
    files="-r --require --import --loader --experimental-loader",
    env="NODE_OPTIONS NODE_PATH",
    script=True,
    values="--input-type --conditions -C",
)
_AWK = _r(
    files="-f --file -i --include -l --load -E --exec",
    env="AWKPATH AWKLIBPATH",
    text=r"system\s*\(|\|&|\|\s*getline|\bprintf?\b[^;}]*\||@(?:load|include)\b",
)
_SQL_DOT = r"(?:^|[\n;])\s*\.(?:shell|system|read|load|once|output|import|excel|open)\b|load_extension\s*\("
_NPM = _r(
    lines="-c --call",
    programs="--script-shell --node-options",
    files="--userconfig --globalconfig --prefix -C --dir",
    env="NPM_CONFIG_* NODE_OPTIONS",
)
_GDB = _r(
    code="-ex --ex -iex --iex -eval-command --eval-command -init-eval-command --init-eval-command",
    files="-x --x -ix --ix -command --command -init-command --init-command -p --pid",
    rest="--args -args",
    clusters=False,
)
_LLDB = _r(
    code="-o --one-line -O --one-line-before-file -k --one-line-on-crash",
    files="-s --source -S --source-before-file -K --source-on-crash",
    rest="--",
)
_PYTEST = _r(
    files="-p -c --config-file --rootdir -o --override-ini -W --pythonwarnings --pyargs",
    env="PYTEST_PLUGINS PYTEST_ADDOPTS",
)
_PAGERS = "PAGER MANPAGER MANOPT BROWSER LESSOPEN LESSCLOSE"
_SSH_TEXT = (
    r"(?i)(?:proxycommand|localcommand|knownhostscommand|remotecommand|"
    r"permitlocalcommand|pkcs11provider|securitykeyprovider)"
)

TABLE: dict[str, Runs] = {
    # editors: ex commands (`-c '!rm x'`, `+'!rm x'`, `:call system()`), scripts and rc files
    "vim": _VIM,
    "vi": _VIM,
    "nvim": _VIM,
    "ex": _VIM,
    "view": _VIM,
    "vimdiff": _VIM,
    "rvim": _VIM,
    "gvim": _VIM,
    "evim": _VIM,
    "emacs": _r(
        code="--eval -eval --execute -f --funcall",
        files="-l --load --script -x -u --user --init-directory",
        clusters=False,
    ),
    "nano": _r(files="--rcfile -f"),
    # database shells: dot-commands and meta-commands that run a program or read a file of them
    "sqlite3": _r(code="-cmd", files="-init", text=_SQL_DOT, clusters=False),
    "psql": _r(
        files="-f --file",
        env="PSQLRC PSQL_PAGER PAGER PSQL_EDITOR EDITOR VISUAL",
        text=r"\\!|\\[og]\s*\||\\i|\\ir|(?i:\bprogram\s+')",
    ),
    "mysql": _r(
        files="--defaults-file --defaults-extra-file --init-command --plugin-dir",
        programs="--pager",
        text=r"\\!|(?i:^\s*system\b|[;\n]\s*system\b)",
    ),
    # build tools and package managers: code, makefiles and shells given on the line
    "make": _r(
        code="--eval -E",
        files="-f --file --makefile -I --include-dir -C --directory",
        env="MAKEFLAGS GNUMAKEFLAGS MAKEFILES MFLAGS",
        assign="*",
    ),
    "gmake": _r(
        code="--eval -E",
        files="-f --file --makefile -I --include-dir -C --directory",
        env="MAKEFLAGS GNUMAKEFLAGS MAKEFILES MFLAGS",
        assign="*",
    ),
    "npm": _NPM,
    "npx": _NPM,
    "pnpm": _NPM,
    "yarn": _NPM,
    "cargo": _r(
        files="--config --manifest-path -Z",
        env="RUSTC RUSTC_WRAPPER RUSTDOC CARGO_BUILD_* CARGO_TARGET_* RUSTFLAGS CARGO_ENCODED_RUSTFLAGS",
    ),
    "go": _r(programs="-exec -toolexec", env="GOFLAGS GOTOOLCHAIN CC CXX", clusters=False),
    "pytest": _PYTEST,
    "py.test": _PYTEST,
    "apt": _r(code="-o --option", files="-c --config-file", env="APT_CONFIG"),
    "apt-get": _r(code="-o --option", files="-c --config-file", env="APT_CONFIG"),
    # interpreters: inline code, modules and libraries loaded from elsewhere
    "python": _PYTHON,
    "pypy": _PYTHON,
    "node": _NODE,
    "nodejs": _NODE,
    "bun": _r(code="-e --eval -p --print", files="-r --preload", env="NODE_OPTIONS BUN_*", script=True),
    "perl": _r(code="-e -E", files="-M -m -I -d", env="PERL5OPT PERL5LIB PERLLIB PERL5DB", script=True),
    "ruby": _r(code="-e", files="-r -I", env="RUBYOPT RUBYLIB", script=True),
    "php": _r(code="-r -B -R -E", files="-F -d -c -z", env="PHPRC PHP_INI_SCAN_DIR", script=True),
    "lua": _r(code="-e", files="-l", env="LUA_INIT* LUA_PATH* LUA_CPATH*", script=True),
    "luajit": _r(code="-e", files="-l -j", env="LUA_INIT* LUA_PATH* LUA_CPATH*", script=True),
    "Rscript": _r(
        code="-e", env="R_PROFILE R_PROFILE_USER R_ENVIRON R_ENVIRON_USER R_LIBS*", script=True, clusters=False
    ),
    "R": _r(
        code="-e", files="-f --file", env="R_PROFILE R_PROFILE_USER R_ENVIRON R_ENVIRON_USER R_LIBS*", clusters=False
    ),
    "julia": _r(code="-e --eval -E --print", files="-L --load", env="JULIA_*", script=True),
    "tclsh": _r(script=True, env="TCLLIBPATH"),
    "wish": _r(script=True, env="TCLLIBPATH"),
    "expect": _r(code="-c", files="-f", script=True),
    "pwsh": _r(code="-c -Command -command -EncodedCommand -e -ec", files="-f -File -file", script=True, clusters=False),
    "osascript": _r(code="-e", script=True),
    "guile": _r(code="-c -e", files="-l -x", script=True, clusters=False),
    "racket": _r(code="-e --eval", files="-f --load -r --script -t --require", script=True),
    "groovy": _r(code="-e", script=True),
    "scala": _r(code="-e", script=True),
    "jshell": _r(files="--startup -R", script=True),
    "bash": _SHELL,
    "sh": _SHELL,
    "dash": _SHELL,
    "zsh": _SHELL,
    "ksh": _SHELL,
    "mksh": _SHELL,
    "ash": _SHELL,
    "yash": _SHELL,
    "rbash": _SHELL,
    "posh": _SHELL,
    "fish": _r(code="-C --init-command", script=True),
    "csh": _SHELL,
    "tcsh": _SHELL,
    # text tools whose script language runs programs
    "awk": _AWK,
    "gawk": _AWK,
    "mawk": _AWK,
    "nawk": _AWK,
    "sed": _r(files="-f --file"),
    "jq": _r(files="-f --from-file -L"),
    # pagers and manuals: the pager and preprocessors come from the environment or a key file
    "less": _r(
        files="-k --lesskey-file --lesskey-src",
        env=f"{_PAGERS} LESS LESSKEYIN LESSKEY LESSEDIT EDITOR VISUAL SHELL",
        plus=True,
    ),
    "more": _r(env="MORE EDITOR VISUAL SHELL", plus=True),
    "man": _r(files="-C --config-file", env=f"{_PAGERS} MANROFFOPT MANPL"),
    "git": _r(
        env="GIT_CONFIG* GIT_EXTERNAL_DIFF GIT_PAGER GIT_EDITOR "
        "GIT_SEQUENCE_EDITOR GIT_SSH GIT_SSH_COMMAND GIT_ASKPASS SSH_ASKPASS "
        "GIT_EXEC_PATH GIT_DIR GIT_WORK_TREE GIT_COMMON_DIR GIT_TEMPLATE_DIR "
        "GIT_PROXY_COMMAND GIT_ALTERNATE_OBJECT_DIRECTORIES "
        "GIT_INDEX_FILE GIT_OBJECT_DIRECTORY PAGER EDITOR VISUAL GIT_TRACE2* GIT_MERGE_AUTOEDIT"
    ),
    "git rebase": _r(lines="-x --exec"),
    "git difftool": _r(programs="-x --extcmd -t --tool"),
    "git mergetool": _r(programs="-t --tool"),
    "git filter-branch": _r(
        lines="--env-filter --tree-filter --index-filter --parent-filter --msg-filter --commit-filter --tag-name-filter"
    ),
    "git submodule": _r(rest="foreach"),
    "git bisect": _r(rest="run"),
    "git diff": _r(files="--ext-diff --textconv"),
    "git log": _r(files="--ext-diff --textconv"),
    "git show": _r(files="--ext-diff --textconv"),
    # archives, copies and remote shells: a program named by an option or an address
    "tar": _r(env="TAR_OPTIONS"),
    "rsync": _r(env="RSYNC_RSH RSYNC_CONNECT_PROG"),
    "ssh": _r(env="SSH_ASKPASS SSH_ASKPASS_REQUIRE"),
    "scp": _r(programs="-S", files="-F", text=_SSH_TEXT),
    "sftp": _r(programs="-S -D", files="-F -b", text=_SSH_TEXT),
    "socat": _r(text=r"(?i)(?:^|[,!])(?:exec|system):"),
    "nc": _r(programs="-e", lines="-c"),
    "ncat": _r(programs="-e --exec", lines="-c --sh-exec", code="--lua-exec"),
    # debuggers, tracers and the dynamic loader: commands, scripts and libraries they run in the traced program
    "gdb": _GDB,
    "gdb-multiarch": _GDB,
    "cgdb": _GDB,
    "lldb": _LLDB,
    "strace": _r(text=r"^[|!]"),
    "ltrace": _r(text=r"^[|!]"),
    "valgrind": _r(programs="--db-command --vgdb-prefix", files="--suppressions --extra-debuginfo-path"),
    "ld.so": _r(files="--preload --audit --library-path"),
    # schedulers and terminal multiplexers: the commands come from input, a file or a server the line does not show
    "at": _r(always="at runs commands read from its input or a file"),
    "batch": _r(always="batch runs commands read from its input or a file"),
    "crontab": _r(always="crontab installs commands that cron runs later"),
    "run-parts": _r(always="run-parts runs every program in the folder it is given, which the rules cannot read"),
    # a command line after an option, run with an environment of its own
    "dpkg-architecture": _r(rest="-c --command"),
    "tmux": _r(always="tmux runs commands in a terminal server, given in forms the rules do not read"),
    "screen": _r(always="screen runs commands in a terminal session, given in forms the rules do not read"),
}

GLOBAL_ENV = frozenset(
    """
    LD_* DYLD_* BASH_ENV ENV PATH SHELLOPTS BASHOPTS PROMPT_COMMAND HOME XDG_CONFIG_HOME PAGER EDITOR VISUAL BROWSER
    SHELL GCONV_PATH MALLOC_* GLIBC_TUNABLES
    """.split()
)
"""Variables that change what every program runs: the libraries the loader adds, where programs and rc files are
found, the shell, pager and editor programs start."""

_LOADER = re.compile(r"^ld(?:-linux[-\w]*|64|-musl-\w+)?\.so(?:\.\d+)*$|^ld-\d[\d.]*\.so$")
"""The dynamic loader run as a program (``/lib64/ld-linux-x86-64.so.2 /bin/rm x``), under whatever name the
architecture gives it."""
_VERSION = re.compile(r"[0-9.]+$")
ASSIGNMENT = re.compile(r"^([A-Za-z_][A-Za-z0-9_]*)(?:\[[^\]]*\])?\+?=")
"""A shell assignment word (``NAME=VALUE``, ``NAME[i]=VALUE``, ``NAME+=VALUE``); group 1 is the name."""


@functools.lru_cache(maxsize=1024)
def program_key(name: str) -> str:
    """The table's name for a program: a loader is ``ld.so``, a version suffix dropped (``python3.12``: ``python``)."""
    if _LOADER.match(name):
        return "ld.so"
    return name if name in TABLE else _VERSION.sub("", name)


def entry(name: str) -> Runs | None:
    return TABLE.get(program_key(name))


def env_runs(name: str, variable: str) -> bool:
    """Whether setting ``variable`` for program ``name`` can make it run code its line does not show."""
    runs = entry(name)
    names = GLOBAL_ENV if runs is None else GLOBAL_ENV | runs.env
    upper = (
        variable.upper() if name in ("npm", "npx", "pnpm", "yarn") else variable
    )  # npm reads its variables in any case
    return any(upper == n or (n.endswith("*") and upper.startswith(n[:-1])) for n in names)


def is_loader(name: str) -> bool:
    return name.startswith("ld") and _LOADER.match(name) is not None
