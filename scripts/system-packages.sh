#!/bin/sh
# The system programs `make test` and `make demo` use, and the Debian packages that bring them.
#
#   scripts/system-packages.sh install [demo]   install the missing ones (as root, or with `sudo -n`); otherwise
#                                               stop at once, naming the packages and the command that installs them
#   scripts/system-packages.sh check [demo]     the pre-flight: name every missing program; exit 1 when one is missing
#
# With `demo`, only what Kairox and `make demo` use; without it, also what only the tests drive (tmux, chromium,
# and PostgreSQL and HAProxy for the team-gateway tests).
set -u

# program:package, one per word
NEEDED="bwrap:bubblewrap rg:ripgrep git:git node:nodejs npm:npm"
FOUND="bwrap, rg, git, node and npm"
WHO="the tests need"
if [ "${2:-test}" = demo ]; then
    WHO="the demo needs"
else
    # the TUI tests drive tmux; the browser tests of the web GUI drive Debian's chromium; the egress tests curl
    NEEDED="$NEEDED tmux:tmux chromium:chromium curl:curl"
    FOUND="bwrap, rg, git, node, npm, tmux, chromium, curl, PostgreSQL and haproxy"
fi

missing_programs=""
missing_packages=""
for pair in $NEEDED; do
    program=${pair%%:*}
    package=${pair#*:}
    if ! command -v "$program" >/dev/null 2>&1; then
        missing_programs="$missing_programs, $program ($package)"
        missing_packages="$missing_packages $package"
    fi
done
# the team-gateway tests start a PostgreSQL cluster and HAProxy of their own; Debian keeps both off a user's PATH
if [ "${2:-test}" != demo ]; then
    initdb=""
    for found in /usr/lib/postgresql/*/bin/initdb; do [ -x "$found" ] && initdb=$found; done
    if [ -z "$initdb" ]; then
        missing_programs="$missing_programs, initdb (postgresql)"
        missing_packages="$missing_packages postgresql"
    fi
    if ! command -v haproxy >/dev/null 2>&1 && [ ! -x /usr/sbin/haproxy ]; then
        missing_programs="$missing_programs, haproxy (haproxy)"
        missing_packages="$missing_packages haproxy"
    fi
fi
# `python3 -m venv` needs ensurepip, which Debian ships apart
if ! python3 -c 'import venv, ensurepip' >/dev/null 2>&1; then
    missing_programs="$missing_programs, python3 -m venv (python3-venv)"
    missing_packages="$missing_packages python3-venv"
fi
missing_programs=${missing_programs#, }
missing_packages=${missing_packages# }

case "${1:-check}" in
check)
    if [ -n "$missing_programs" ]; then
        echo "pre-flight: missing system programs: $missing_programs" >&2
        echo "pre-flight: $WHO them; install them with: apt-get install $missing_packages" >&2
        echo "pre-flight: (as root, \`make install\` does this for you)" >&2
        exit 1
    fi
    echo "pre-flight: $FOUND are on PATH"
    ;;
install)
    [ -z "$missing_packages" ] && exit 0
    if ! command -v apt-get >/dev/null 2>&1; then
        echo "setup: missing system programs: $missing_programs" >&2
        echo "setup: this is not a Debian system (no apt-get); install them with your package manager, then run make again" >&2
        exit 1
    fi
    if [ "$(id -u)" = 0 ]; then
        as_root=""
    elif command -v sudo >/dev/null 2>&1 && sudo -n true >/dev/null 2>&1; then
        as_root="sudo -n"
    else
        echo "setup: missing system programs: $missing_programs" >&2
        echo "setup: install them with: sudo apt-get install $missing_packages" >&2
        echo "setup: then run make again (this user is not root and sudo asks for a password)" >&2
        exit 1
    fi
    echo "setup: installing $missing_packages"
    export DEBIAN_FRONTEND=noninteractive
    # shellcheck disable=SC2086
    $as_root apt-get update -q && $as_root apt-get install -y -q --no-install-recommends $missing_packages || {
        echo "setup: apt-get could not install $missing_packages; install them by hand, then run make again" >&2
        exit 1
    }
    ;;
*)
    echo "usage: $0 check|install" >&2
    exit 2
    ;;
esac
