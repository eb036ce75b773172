#!/bin/sh
# Installs the Debian packages bloomkit needs to build, test and benchmark,
# saying which ones it installs.  With --check it installs nothing and exits
# 1 if something is missing.
set -eu

packages="cmake make gcc g++ pkg-config libxxhash-dev libcmocka-dev"
# The Redis module's tests: the server, its CLI, and redis-py for the client test.
packages="$packages redis-server redis-tools python3-redis"
# Optional: benchmark peer and plots, fuzzing toolchain.
optional="libbloom-dev gnuplot-nox clang libclang-rt-14-dev"
# Optional: the RocksDB filter adapter (contrib/rocksdb) and its test.
optional="$optional librocksdb-dev"
# The formatting check of CI (scripts/check-format.sh).
optional="$optional clang-format-14"

missing=""
for p in $packages $optional; do
    if ! dpkg-query -W -f='${Status}' "$p" 2>/dev/null | grep -q "install ok installed"; then
        missing="$missing $p"
    fi
done

if [ -z "$missing" ]; then
    [ "${1:-}" = "--check" ] || echo "install-deps: everything is installed"
    exit 0
fi
if [ "${1:-}" = "--check" ]; then
    echo "install-deps: missing:$missing"
    exit 1
fi

echo "install-deps: installing:$missing"
sudo=""
[ "$(id -u)" = 0 ] || sudo="sudo"
$sudo apt-get update -qq
DEBIAN_FRONTEND=noninteractive $sudo apt-get install -y -qq --no-install-recommends $missing
