#!/bin/sh
# Starts Debian's redis-server with bloomkit.so on a free loopback port in a
# temporary directory, runs a short redis-cli session, and stops the server
# by its PID (also when interrupted).  Usage: scripts/redis-demo.sh MODULE
set -eu
module="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
dir="$(mktemp -d)"
pid=""
cleanup() {
    [ -n "$pid" ] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    rm -rf "$dir"
}
trap cleanup EXIT INT TERM

port=""
for candidate in $(seq 16379 16479); do
    if ! redis-cli -p "$candidate" ping >/dev/null 2>&1; then
        port="$candidate"
        break
    fi
done
[ -n "$port" ] || { echo "redis-demo: no free port in 16379-16479" >&2; exit 1; }

redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
    --logfile "$dir/server.log" --loadmodule "$module" &
pid=$!
for _ in $(seq 50); do
    redis-cli -p "$port" ping >/dev/null 2>&1 && break
    sleep 0.1
done

run() {
    echo "127.0.0.1:$port> $*"
    redis-cli -p "$port" "$@"
}
run BF.RESERVE users 0.01 1000
run BF.MADD users alice bob carol
run BF.EXISTS users alice
run BF.MEXISTS users bob mallory
run BF.INFO users
run CF.ADD sessions s1
run CF.DEL sessions s1
run CF.EXISTS sessions s1
run BK.RESERVE recent window 1000 0.01 SECONDS 3600
run BK.ADD recent 10.0.0.1
run BK.BUILD allowlist fuse8 alice bob carol
run BK.MEXISTS allowlist alice eve
run BK.INFO users
run INFO bloomkit
