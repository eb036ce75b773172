#!/bin/sh
# The Redis module benchmark: bloomkit-redis-client (bench/redis_client.c)
# drives a redis-server with bloomkit.so -- and, given --redisbloom PATH (or
# the REDISBLOOM environment variable), the same server with that RedisBloom
# module -- over loopback, commands pre-built and pipelined, alternating the
# two modules (and their order) round by round.  Where taskset exists the
# server runs on CPU 0 and the client on CPU 1.
#
# Speed, per capacity (a BF and a CF reserved at it, 1%): single-item
# BF.ADD, BF.EXISTS, CF.ADD, CF.EXISTS; BF.MADD and BF.MEXISTS with 100
# items per command.  Items are random ("k:" and 12 digits below 10^9, a
# new seed per command and round, the same for both modules), so queries
# are mostly of absent items and the filters fill as the run goes.
# Printed: items/s, the median of the rounds; and the server's own time
# per command (INFO commandstats usec_per_call: the module and Redis's call
# around it, without the network, parsing and client), which a loaded
# machine disturbs far less than the rates.
#
# Memory (unless --no-memory), once per capacity: a BF and a CF reserved at
# it are filled with `capacity` distinct items (BF.MADD / CF.INSERT, 1000
# per command), then: MEMORY USAGE / capacity, the measured FPR over 10^6
# absent items (BF.MEXISTS / CF.MEXISTS), the number of filters (CF: the
# expansions taken when an insert found the table full) and the adds that
# failed.
#
# usage: bench/redis_bench.sh --client PATH [--redisbloom PATH] [--requests N]
#            [--rounds R] [--capacities "1000000 100000000"] [--no-memory] MODULE
set -eu

redisbloom="${REDISBLOOM:-}" # make redis-bench REDISBLOOM=... passes it through the environment
client=""
requests=2000000
rounds=5
capacities="1000000 100000000"
memory=yes
while [ $# -gt 1 ]; do
    case "$1" in
    --client) client="$2"; shift 2 ;;
    --redisbloom) redisbloom="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --capacities) capacities="$2"; shift 2 ;;
    --no-memory) memory=no; shift ;;
    *) echo "redis_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] && [ -x "$client" ] || { sed -n '2,24p' "$0"; exit 2; }
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bloomkit="$(absolute "$1")"
[ -z "$redisbloom" ] || redisbloom="$(absolute "$redisbloom")"

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

server_cpu=""
client_cpu=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
    server_cpu="taskset -c 0"
    client_cpu="taskset -c 1"
fi

port=26379
while redis-cli -p "$port" ping >/dev/null 2>&1; do port=$((port + 1)); done

start() {
    $server_cpu redis-server --port "$port" --bind 127.0.0.1 --dir "$dir" --save "" \
        --appendonly no --logfile "$dir/server.log" --loadmodule "$1" &
    pid=$!
    for _ in $(seq 100); do
        redis-cli -p "$port" ping >/dev/null 2>&1 && return 0
        sleep 0.1
    done
    echo "redis_bench: the server did not start" >&2
    exit 1
}

cli() { redis-cli -p "$port" "$@"; }

# run ARGS...: the client's "commands/s errors yes" line
run() { $client_cpu "$client" -p "$port" "$@"; }

# usec_per_call COMMAND: the server's time per call since CONFIG RESETSTAT
usec_per_call() {
    cli INFO commandstats | tr -d '\r' | awk -F'usec_per_call=' -v c="cmdstat_$(echo "$1" | tr A-Z a-z):" \
        'index($0, c) == 1 { split($2, v, ","); print v[1] }'
}

results="$dir/results"
: >"$results"
record() { echo "$1 $2 $3 $4" >>"$results"; } # module capacity measurement value

speed() { # module capacity round
    name="$1" cap="$2" round="$3"
    cli FLUSHALL >/dev/null
    cli BF.RESERVE bf 0.01 "$cap" >/dev/null
    cli CF.RESERVE cf "$cap" >/dev/null
    seed=$((round * 100))
    for cmd in BF.ADD BF.EXISTS CF.ADD CF.EXISTS; do
        key=bf
        case "$cmd" in CF.*) key=cf ;; esac
        seed=$((seed + 1))
        cli CONFIG RESETSTAT >/dev/null
        set -- $(run -c "$cmd" -k "$key" -n "$requests" -s "$seed")
        [ "$2" -eq 0 ] || echo "redis_bench: $name $cmd: $2 error replies" >&2
        record "$name" "$cap" "$cmd" "$1"
        record "$name" "$cap" "$cmd-usec/call" "$(usec_per_call "$cmd")"
    done
    for cmd in BF.MADD BF.MEXISTS; do
        seed=$((seed + 1))
        cli CONFIG RESETSTAT >/dev/null
        set -- $(run -c "$cmd" -k bf -i 100 -n $((requests / 100)) -s "$seed")
        record "$name" "$cap" "$cmd(100)" "$(($1 * 100))"
        record "$name" "$cap" "$cmd(100)-usec/call" "$(usec_per_call "$cmd")"
    done
}

# fill KEY COMMAND TOKEN CAPACITY: capacity distinct items, 10^7 per client run;
# prints the error replies
fill() {
    key="$1" cmd="$2" token="$3" cap="$4" at=0 errors=0
    while [ "$at" -lt "$cap" ]; do
        n=$((cap - at < 10000000 ? cap - at : 10000000))
        per=1000
        [ $((n % per)) -eq 0 ] || per=1 # every item, whatever the capacity
        set -- $(run -c "$cmd" -k "$key" $token -i "$per" -n $((n / per)) -u "$at")
        errors=$((errors + $2))
        at=$((at + n))
    done
    echo "$errors"
}

footprint() { # module capacity
    name="$1" cap="$2"
    cli FLUSHALL >/dev/null
    cli BF.RESERVE bf 0.01 "$cap" >/dev/null
    cli CF.RESERVE cf "$cap" >/dev/null
    for family in BF CF; do
        key=$(echo "$family" | tr A-Z a-z)
        if [ "$family" = BF ]; then
            failed="$(fill "$key" BF.MADD "" "$cap")"
        else
            failed="$(fill "$key" CF.INSERT "-t ITEMS" "$cap")"
        fi
        bytes="$(cli MEMORY USAGE "$key")"
        record "$name" "$cap" "$family-bytes/item" "$(echo "$bytes $cap" | awk '{ printf "%.3f", $1 / $2 }')"
        set -- $(run -c "$family.MEXISTS" -k "$key" -i 1000 -n 1000 -u 2000000000)
        record "$name" "$cap" "$family-FPR" "$(echo "$3" | awk '{ printf "%.5f", $1 / 1000000 }')"
        record "$name" "$cap" "$family-failed-adds" "$failed"
    done
    record "$name" "$cap" "CF-filters" "$(cli CF.INFO cf | sed -n '/Number of filters/{n;p}')"
}

modules="bloomkit"
[ -z "$redisbloom" ] || modules="bloomkit redisbloom"
path_of() { [ "$1" = bloomkit ] && echo "$bloomkit" || echo "$redisbloom"; }

round=1
while [ "$round" -le "$rounds" ]; do
    order="$modules"
    [ $((round % 2)) -eq 0 ] && order="$(echo "$modules" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')"
    for cap in $capacities; do
        for m in $order; do
            start "$(path_of "$m")"
            speed "$m" "$cap" "$round"
            stop
        done
    done
    round=$((round + 1))
done
if [ "$memory" = yes ]; then
    for cap in $capacities; do
        for m in $modules; do
            start "$(path_of "$m")"
            footprint "$m" "$cap"
            stop
        done
    done
fi

# Medians over the rounds, and bloomkit / redisbloom when both ran.
echo "medians of $rounds rounds; items/s, or the server's microseconds per command (usec/call); ratio = bloomkit / redisbloom"
echo "capacity   measurement             bloomkit     redisbloom   ratio"
cut -d' ' -f2-3 "$results" | awk '!seen[$0]++' | while read -r c k; do
    line="$(printf '%-10s %-23s' "$c" "$k")"
    for m in bloomkit redisbloom; do
        values="$(awk -v m="$m" -v c="$c" -v k="$k" '$1 == m && $2 == c && $3 == k { print $4 }' "$results" | sort -g)"
        count="$(echo "$values" | grep -c . || true)"
        median="-"
        [ "$count" -eq 0 ] || median="$(echo "$values" | sed -n "$(((count + 1) / 2))p")"
        eval "median_$m=\$median"
        line="$line $(printf '%-12s' "$median")"
    done
    ratio="$(echo "$median_bloomkit $median_redisbloom" |
        awk '$2 != "-" && $2 + 0 > 0 { printf "%.2f", $1 / $2 }')"
    echo "$line ${ratio:--}"
done
