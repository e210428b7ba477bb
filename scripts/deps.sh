#!/bin/sh
# Installs, from Debian's packages, whatever the build and the tests need and this
# machine lacks. Runs as part of `make`, `make test` and `make run`, so nothing
# installed by hand has to survive to the next machine. Cheap when all is present:
# it only asks pkg-config and the shell.
set -eu

missing=""
need_pkg() {     # need_pkg <pkg-config module> <debian package>
    pkg-config --exists "$1" 2>/dev/null || missing="$missing $2"
}
need_cmd() {     # need_cmd <command> <debian package>
    command -v "$1" >/dev/null 2>&1 || missing="$missing $2"
}

need_cmd pkg-config pkgconf
need_cmd cmake cmake
need_cmd ninja ninja-build
need_cmd cc gcc
need_pkg libseccomp libseccomp-dev
need_pkg cmocka libcmocka-dev
need_pkg libmicrohttpd libmicrohttpd-dev
need_pkg jansson libjansson-dev
need_pkg sqlite3 libsqlite3-dev
need_pkg yaml-0.1 libyaml-dev
need_pkg libcrypto libssl-dev
# grep and sed inside sandboxes (linked statically into the agent).
need_pkg libpcre2-8 libpcre2-dev
# The end-to-end tests are pytest files run by /usr/bin/python3 (Debian's own).
/usr/bin/python3 -c 'import pytest' >/dev/null 2>&1 || missing="$missing python3-pytest"
# The TypeScript client's tests and the MCP tests: npm installs their pinned
# packages (the Node 22 that @flue/runtime needs among them, and the official
# MCP SDK client); any node runs npm itself.
need_cmd node nodejs
need_cmd npm npm
# Optional extras asked for by name: `deps.sh bench` adds bubblewrap for the
# comparison in bench/, `deps.sh fuzz` clang and its libFuzzer runtime.
for extra in "$@"; do
    case "$extra" in
        bench) need_cmd bwrap bubblewrap ;;
        fuzz) need_cmd clang clang
              [ -n "$(find /usr/lib -name 'libclang_rt.fuzzer-x86_64.a' 2>/dev/null | head -1)" ] ||
                  missing="$missing libclang-rt-14-dev" ;;
        *) echo "deps.sh: unknown extra '$extra'" >&2; exit 2 ;;
    esac
done

[ -z "$missing" ] && exit 0

if [ "$(id -u)" != 0 ]; then
    echo "deps.sh: missing packages:$missing" >&2
    echo "deps.sh: run 'sudo make deps' (or install them) and try again" >&2
    exit 1
fi
echo "deps.sh: installing$missing"
export DEBIAN_FRONTEND=noninteractive
# A fresh machine may have no package lists yet: update once if the install fails.
# shellcheck disable=SC2086
apt-get install -y -q --no-install-recommends $missing >/dev/null 2>&1 || {
    apt-get update -q >/dev/null
    apt-get install -y -q --no-install-recommends $missing
}
