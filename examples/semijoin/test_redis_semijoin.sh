#!/bin/bash
# examples/semijoin/test_redis_semijoin.sh BUILD -- the semi-join through
# Redis at small scale (CTest example_redis_semijoin).
#
# Generates 20,000 orders (seed 1) into a temporary directory, starts
# redis-server with BUILD/redis/bloomkit.so on a free loopback port (its
# own directory, no persistence), runs redis_semijoin.sh against it and
# stops the server by its PID on every exit.  redis_semijoin.sh fails when
# the BK.DUMP path differs from the local join (the fetched file byte for
# byte, rows, bytes, false-positive keys), when a matching row is lost on
# either path, or when BF.MEXISTS admits more false-positive keys than
# mean + 4 standard deviations of Binomial(orders failing, 0.01).
# Skipped (exit 77) when redis-server, redis-cli or the module is absent.
set -u
BUILD=${1:?usage: test_redis_semijoin.sh BUILD}
HERE=$(cd "$(dirname "$0")" && pwd)
MODULE=$(readlink -f "$BUILD")/redis/bloomkit.so
for program in redis-server redis-cli; do
    command -v "$program" > /dev/null ||
        { echo "SKIP: $program not installed (apt-get install redis-server)"; exit 77; }
done
[ -f "$MODULE" ] || { echo "SKIP: $MODULE not built (BLOOMKIT_REDIS off or a tsan/fuzz build)"; exit 77; }

WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-redis-semijoin.XXXXXX") || exit 1
pid=""
cleanup() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
    fi
    rm -rf "$WORK"
}
trap cleanup EXIT
trap 'exit 1' INT TERM

# A module built with AddressSanitizer needs its runtime loaded first.
preload=""
asan=$(ldd "$MODULE" 2>/dev/null | awk '/libasan/ { print $3 }')
[ -n "$asan" ] && preload="LD_PRELOAD=$asan ASAN_OPTIONS=detect_leaks=0"

# Starts the server on a random port in 20000-49999; a port taken makes the
# server exit at once, and the next one is tried.
start_server() {
    local port tries
    for tries in $(seq 20); do
        port=$(shuf -i 20000-49999 -n 1)
        redis-cli -p "$port" PING > /dev/null 2>&1 && continue
        env $preload redis-server --port "$port" --bind 127.0.0.1 --dir "$WORK" --save "" \
            --appendonly no --logfile "$WORK/server.log" --loadmodule "$MODULE" &
        pid=$!
        for _ in $(seq 100); do
            if [ "$(redis-cli -p "$port" PING 2>/dev/null)" = PONG ]; then
                PORT=$port
                return 0
            fi
            kill -0 "$pid" 2>/dev/null || break
            sleep 0.1
        done
        kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
        pid=""
        grep -q "Can't load module" "$WORK/server.log" 2>/dev/null && break
    done
    echo "FAIL: redis-server with $MODULE did not start; its log:" >&2
    tail -n 20 "$WORK/server.log" >&2
    return 1
}

"$BUILD/examples/semijoin/semijoin_generate" --orders 20000 --seed 1 "$WORK" > /dev/null ||
    { echo "FAIL: the generator failed" >&2; exit 1; }
start_server || exit 1
if ! "$HERE/redis_semijoin.sh" "$BUILD" "$WORK" "$PORT" > "$WORK/report.txt"; then
    cat "$WORK/report.txt"
    echo "FAIL: redis_semijoin.sh" >&2
    exit 1
fi
cat "$WORK/report.txt"
# Four rows of figures: the exact join, the local file and both Redis paths.
[ "$(grep -c '^\(exact join\|local file\|Redis BK\|Redis BF\)' "$WORK/report.txt")" -eq 4 ] ||
    { echo "FAIL: the report lacks a row" >&2; exit 1; }
echo "test_redis_semijoin: all checks passed"
