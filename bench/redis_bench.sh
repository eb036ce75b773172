#!/bin/sh
# The Redis module benchmark: redis-benchmark (Debian's redis-tools) drives
# a redis-server with bloomkit.so -- and, given --redisbloom PATH (or the
# REDISBLOOM environment variable), the same server with that RedisBloom
# module -- over loopback with pipelining, alternating the two modules round
# by round, and prints one line per measurement:
#
#   module  capacity  command  items/s  (median of the rounds)
#
# Commands: single-item BF.ADD, BF.EXISTS, CF.ADD, CF.EXISTS; BF.MADD and
# BF.MEXISTS with 100 items per command (items/s = commands/s x 100); then
# MEMORY USAGE per item of capacity for a BF and a CF at 1%.  Items are
# random integers (redis-benchmark's __rand_int__, each placeholder drawn
# anew), added to a filter reserved at the capacity, so the filter fills as
# the run goes (10^6: past capacity; 10^8: a few percent).
#
# usage: bench/redis_bench.sh [--redisbloom PATH] [--requests N] [--rounds R]
#                             [--capacities "1000000 100000000"] MODULE
set -eu

redisbloom="${REDISBLOOM:-}"  # make redis-bench REDISBLOOM=... passes it through the environment
requests=2000000
rounds=3
capacities="1000000 100000000"
pipeline=64
while [ $# -gt 1 ]; do
    case "$1" in
    --redisbloom) redisbloom="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --capacities) capacities="$2"; shift 2 ;;
    *) echo "redis_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] || { sed -n '2,20p' "$0"; exit 2; }
bloomkit="$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"
[ -z "$redisbloom" ] || redisbloom="$(cd "$(dirname "$redisbloom")" && pwd)/$(basename "$redisbloom")"

dir="$(mktemp -d)"
pid=""
stop() {
    if [ -n "$pid" ]; then
        kill "$pid" 2>/dev/null || true
        wait "$pid" 2>/dev/null || true
        pid=""
    fi
}
trap 'stop; rm -rf "$dir"' EXIT INT TERM

port=26379
while redis-cli -p "$port" ping >/dev/null 2>&1; do port=$((port + 1)); done

start() {
    redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" --appendonly no \
        --logfile "$dir/server.log" --loadmodule "$1" &
    pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "redis_bench: the server did not start" >&2
    exit 1
}

cli() { redis-cli -p "$port" "$@"; }

# rps N COMMAND...: requests per second of redis-benchmark
rps() {
    n="$1"
    shift
    redis-benchmark -p "$port" -P "$pipeline" -c 4 -n "$n" -r 1000000000 -q "$@" 2>/dev/null |
        tr '\r' '\n' | awk '/requests per second/ { for (i = 1; i <= NF; i++) if ($i == "requests") v = $(i - 1) } END { print v }'
}

hundred() {
    i=0
    while [ $i -lt 100 ]; do printf ' i:__rand_int__'; i=$((i + 1)); done
}
items="$(hundred)"

results="$dir/results"
: >"$results"
measure() { # module capacity
    name="$1" cap="$2"
    cli FLUSHALL >/dev/null
    cli BF.RESERVE bf 0.01 "$cap" >/dev/null
    cli CF.RESERVE cf "$cap" >/dev/null
    for cmd in BF.ADD BF.EXISTS CF.ADD CF.EXISTS; do
        key=bf
        case "$cmd" in CF.*) key=cf ;; esac
        echo "$name $cap $cmd $(rps "$requests" "$cmd" "$key" "k:__rand_int__")" >>"$results"
    done
    for cmd in BF.MADD BF.MEXISTS; do
        r="$(rps $((requests / 100)) "$cmd" bf $items)"
        echo "$name $cap $cmd(100) $(echo "$r" | awk '{ printf "%.0f", $1 * 100 }')" >>"$results"
    done
    cli FLUSHALL >/dev/null
    cli BF.RESERVE bf 0.01 "$cap" >/dev/null
    cli CF.RESERVE cf "$cap" >/dev/null
    echo "$name $cap BF-bytes/item $(cli MEMORY USAGE bf | awk -v c="$cap" '{ printf "%.3f", $1 / c }')" >>"$results"
    echo "$name $cap CF-bytes/item $(cli MEMORY USAGE cf | awk -v c="$cap" '{ printf "%.3f", $1 / c }')" >>"$results"
}

round=1
while [ "$round" -le "$rounds" ]; do
    for cap in $capacities; do
        start "$bloomkit"
        measure bloomkit "$cap"
        stop
        if [ -n "$redisbloom" ]; then
            start "$redisbloom"
            measure redisbloom "$cap"
            stop
        fi
    done
    round=$((round + 1))
done

# medians over the rounds
echo "module      capacity   measurement      median (items/s; bytes for */item)"
cut -d' ' -f1-3 "$results" | sort -u -k1,1 -k2,2n -k3,3 | while read -r m c k; do
    values="$(awk -v m="$m" -v c="$c" -v k="$k" '$1 == m && $2 == c && $3 == k { print $4 }' "$results" | sort -g)"
    count="$(echo "$values" | wc -l)"
    median="$(echo "$values" | sed -n "$(((count + 1) / 2))p")"
    printf '%-11s %-10s %-16s %s\n' "$m" "$c" "$k" "$median"
done
