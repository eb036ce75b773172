#!/bin/sh
# The Redis module benchmark: bloomkit-redis-client (bench/redis_client.c)
# drives a redis-server with bloomkit.so -- and, given --redisbloom PATH (or
# the REDISBLOOM environment variable), another with that RedisBloom module
# -- over loopback, commands pre-built and pipelined, alternating the
# modules command by command (and their order round by round).  Where
# taskset exists the servers run on CPU 0 and the client on CPU 1.
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
# The floor (unless --no-floor): a server with the benchmark's floor module
# (bench/redis_floor_module.c; by default bloomkit-redis-floor.so beside
# the client, when built; --floor PATH for another) as a third module.  Its
# FLOOR.ADD / FLOOR.EXISTS are bloomkit's single-item commands without the
# filter -- the most any module command reaches on this server -- and
# Redis's own EXISTS is measured beside them.  Each single-item row shows
# the floor's rate for its shape, run beside it, and the ceiling, floor /
# redisbloom: no module's ratio can pass it.  The floor's commands run
# again on a table of bloomkit's reserved filter's size, one cache line
# per item: the "1-line" floor and ceiling, the most a filter that reads
# one line per item can reach (the table sits on 2 MiB pages, the best a
# filter can have); and on a table
# three times that size, two lines per item: the "2-line" floor, the most
# a two-link chain (a grown BF or CF: the reserved link and one of twice
# its size, each read once per item) can reach.
#
# Each module has its server, all started at once (server on CPU 0); a
# command's runs on the modules follow each other, the order reversed
# every round, so a loaded machine's swings fall on all of them alike.
#
# usage: bench/redis_bench.sh --client PATH [--redisbloom PATH] [--floor PATH | --no-floor]
#            [--requests N] [--rounds R] [--capacities "1000000 100000000"] [--no-memory]
#            MODULE
set -eu

redisbloom="${REDISBLOOM:-}" # make redis-bench REDISBLOOM=... passes it through the environment
client=""
requests=2000000
rounds=5
capacities="1000000 100000000"
memory=yes
floor=""
use_floor=yes
while [ $# -gt 1 ]; do
    case "$1" in
    --client) client="$2"; shift 2 ;;
    --redisbloom) redisbloom="$2"; shift 2 ;;
    --requests) requests="$2"; shift 2 ;;
    --rounds) rounds="$2"; shift 2 ;;
    --capacities) capacities="$2"; shift 2 ;;
    --no-memory) memory=no; shift ;;
    --floor) floor="$2"; shift 2 ;;
    --no-floor) use_floor=no; shift ;;
    *) echo "redis_bench: unknown option $1" >&2; exit 2 ;;
    esac
done
[ $# -eq 1 ] && [ -x "$client" ] || { sed -n '2,45p' "$0"; exit 2; }
absolute() { echo "$(cd "$(dirname "$1")" && pwd)/$(basename "$1")"; }
bloomkit="$(absolute "$1")"
[ -z "$redisbloom" ] || redisbloom="$(absolute "$redisbloom")"
[ -n "$floor" ] || floor="$(dirname "$client")/bloomkit-redis-floor.so"
if [ "$use_floor" = no ] || [ ! -f "$floor" ]; then floor=""; else floor="$(absolute "$floor")"; fi

dir="$(mktemp -d)"
pids=""
stop_all() {
    for p in $pids; do
        kill "$p" 2>/dev/null || true
        wait "$p" 2>/dev/null || true
    done
    pids=""
}
trap 'stop_all; rm -rf "$dir"' EXIT INT TERM

server_cpu=""
client_cpu=""
if command -v taskset >/dev/null 2>&1 && [ "$(nproc)" -ge 2 ]; then
    server_cpu="taskset -c 0"
    client_cpu="taskset -c 1"
fi

modules="bloomkit"
[ -z "$redisbloom" ] || modules="$modules redisbloom"
[ -z "$floor" ] || modules="$modules floor"
path_of() {
    case "$1" in
    bloomkit) echo "$bloomkit" ;;
    redisbloom) echo "$redisbloom" ;;
    *) echo "$floor" ;;
    esac
}

# start MODULE: a server of its own with the module, on a free port
# (port_MODULE).  All of them run through the whole benchmark, so two
# modules' runs of a command follow each other within seconds.
next_port=26379
start() {
    while redis-cli -p "$next_port" ping >/dev/null 2>&1; do next_port=$((next_port + 1)); done
    $server_cpu redis-server --port "$next_port" --bind 127.0.0.1 --dir "$dir" \
        --dbfilename "$1.rdb" --save "" --appendonly no --logfile "$dir/$1.log" \
        --loadmodule "$(path_of "$1")" &
    pids="$pids $!"
    eval "port_$1=$next_port"
    for _ in $(seq 100); do
        redis-cli -p "$next_port" ping >/dev/null 2>&1 && break
        sleep 0.1
    done
    redis-cli -p "$next_port" ping >/dev/null 2>&1 || { echo "redis_bench: the $1 server did not start" >&2; exit 1; }
    next_port=$((next_port + 1))
}
port_of() { eval "echo \$port_$1"; }

cli() { # MODULE ARGS...
    cli_port="$(port_of "$1")"
    shift
    redis-cli -p "$cli_port" "$@"
}

# run MODULE ARGS...: the client's "commands/s errors yes" line
run() {
    run_port="$(port_of "$1")"
    shift
    $client_cpu "$client" -p "$run_port" "$@"
}

# usec_per_call MODULE COMMAND: the server's time per call since CONFIG RESETSTAT
usec_per_call() {
    cli "$1" INFO commandstats | tr -d '\r' | awk -F'usec_per_call=' -v c="cmdstat_$(echo "$2" | tr A-Z a-z):" \
        'index($0, c) == 1 { split($2, v, ","); print v[1] }'
}

results="$dir/results"
: >"$results"
record() { echo "$1 $2 $3 $4" >>"$results"; } # module capacity measurement value

# single MODULE CAPACITY COMMAND KEY SEED RECORDED_AS: one single-item run
single() {
    single_module="$1" single_cap="$2" single_cmd="$3" single_as="$6"
    cli "$1" CONFIG RESETSTAT >/dev/null
    set -- $(run "$1" -c "$3" -k "$4" -n "$requests" -s "$5")
    [ "$2" -eq 0 ] || echo "redis_bench: $single_module $single_cmd: $2 error replies" >&2
    record "$single_module" "$single_cap" "$single_as" "$1"
    record "$single_module" "$single_cap" "$single_as-usec/call" "$(usec_per_call "$single_module" "$single_cmd")"
}

# speed ORDER CAPACITY ROUND: every command, each run by the modules of
# ORDER one after the other.  The floor module runs its command of the same
# shape three times: on a key without a table (recorded under the row's
# name), on one with a table of bloomkit's reserved filter's size (the
# row's name and "@line") and on one three times that size with two lines
# per item ("@2lines").
speed() {
    order="$1" cap="$2" seed=$(($3 * 100))
    for m in $order; do
        cli "$m" FLUSHALL >/dev/null
        [ "$m" = floor ] && continue
        cli "$m" BF.RESERVE bf 0.01 "$cap" >/dev/null
        cli "$m" CF.RESERVE cf "$cap" >/dev/null
    done
    if [ -n "$floor" ]; then
        cli floor FLOOR.RESERVE f >/dev/null
        for key in bf cf; do
            bytes="$(cli bloomkit MEMORY USAGE "$key")"
            cli floor FLOOR.RESERVE "$key" BYTES "$bytes" >/dev/null
            cli floor FLOOR.RESERVE "${key}2" BYTES "$((3 * bytes))" LINES 2 >/dev/null
        done
    fi
    for cmd in BF.ADD BF.EXISTS CF.ADD CF.EXISTS; do
        seed=$((seed + 1))
        key="$(echo "${cmd%%.*}" | tr A-Z a-z)"
        for m in $order; do
            if [ "$m" = floor ]; then
                single floor "$cap" "FLOOR.${cmd#??.}" f "$seed" "$cmd"
                single floor "$cap" "FLOOR.${cmd#??.}" "$key" "$seed" "$cmd@line"
                single floor "$cap" "FLOOR.${cmd#??.}" "${key}2" "$seed" "$cmd@2lines"
            else
                single "$m" "$cap" "$cmd" "$key" "$seed" "$cmd"
            fi
        done
    done
    [ -z "$floor" ] || single floor "$cap" EXISTS f "$seed" "EXISTS(redis)"
    for cmd in BF.MADD BF.MEXISTS; do
        seed=$((seed + 1))
        for m in $order; do
            [ "$m" != floor ] || continue
            cli "$m" CONFIG RESETSTAT >/dev/null
            set -- $(run "$m" -c "$cmd" -k bf -i 100 -n $((requests / 100)) -s "$seed")
            record "$m" "$cap" "$cmd(100)" "$(($1 * 100))"
            record "$m" "$cap" "$cmd(100)-usec/call" "$(usec_per_call "$m" "$cmd")"
        done
    done
}

# fill MODULE KEY COMMAND TOKEN CAPACITY: capacity distinct items, 10^7 per
# client run; prints the error replies
fill() {
    module="$1" key="$2" cmd="$3" token="$4" cap="$5" at=0 errors=0
    while [ "$at" -lt "$cap" ]; do
        n=$((cap - at < 10000000 ? cap - at : 10000000))
        per=1000
        [ $((n % per)) -eq 0 ] || per=1 # every item, whatever the capacity
        set -- $(run "$module" -c "$cmd" -k "$key" $token -i "$per" -n $((n / per)) -u "$at")
        errors=$((errors + $2))
        at=$((at + n))
    done
    echo "$errors"
}

footprint() { # module capacity
    name="$1" cap="$2"
    cli "$name" FLUSHALL >/dev/null
    cli "$name" BF.RESERVE bf 0.01 "$cap" >/dev/null
    cli "$name" CF.RESERVE cf "$cap" >/dev/null
    for family in BF CF; do
        key=$(echo "$family" | tr A-Z a-z)
        if [ "$family" = BF ]; then
            failed="$(fill "$name" "$key" BF.MADD "" "$cap")"
        else
            failed="$(fill "$name" "$key" CF.INSERT "-t ITEMS" "$cap")"
        fi
        bytes="$(cli "$name" MEMORY USAGE "$key")"
        record "$name" "$cap" "$family-bytes/item" "$(echo "$bytes $cap" | awk '{ printf "%.3f", $1 / $2 }')"
        set -- $(run "$name" -c "$family.MEXISTS" -k "$key" -i 1000 -n 1000 -u 2000000000)
        record "$name" "$cap" "$family-FPR" "$(echo "$3" | awk '{ printf "%.5f", $1 / 1000000 }')"
        record "$name" "$cap" "$family-failed-adds" "$failed"
    done
    record "$name" "$cap" "CF-filters" "$(cli "$name" CF.INFO cf | sed -n '/Number of filters/{n;p}')"
    cli "$name" FLUSHALL >/dev/null
}

for m in $modules; do start "$m"; done
round=1
while [ "$round" -le "$rounds" ]; do
    order="$modules"
    [ $((round % 2)) -eq 0 ] && order="$(echo "$modules" | awk '{ for (i = NF; i > 0; i--) printf "%s ", $i }')"
    for cap in $capacities; do
        speed "$order" "$cap" "$round"
    done
    round=$((round + 1))
done
for m in $modules; do cli "$m" FLUSHALL >/dev/null; done
if [ "$memory" = yes ]; then
    for cap in $capacities; do
        for m in bloomkit ${redisbloom:+redisbloom}; do
            footprint "$m" "$cap"
        done
    done
fi

# Medians over the rounds, bloomkit / redisbloom when both ran, and the
# floor's rates for the row's command shape with floor / redisbloom, the
# ceilings.
median() { # module capacity measurement: the median, or -
    values="$(awk -v m="$1" -v c="$2" -v k="$3" '$1 == m && $2 == c && $3 == k { print $4 }' "$results" | sort -g)"
    count="$(echo "$values" | grep -c . || true)"
    if [ "$count" -eq 0 ]; then echo -; else echo "$values" | sed -n "$(((count + 1) / 2))p"; fi
}
quotient() { echo "$1 $2" | awk '$1 != "-" && $2 != "-" && $2 + 0 > 0 { printf "%.2f", $1 / $2 }'; }
echo "medians of $rounds rounds; items/s, or the server's microseconds per command (usec/call);"
echo "ratio = bloomkit / redisbloom; floor = the floor module's command of the row's shape"
echo "(FLOOR.ADD, FLOOR.EXISTS; EXISTS(redis): Redis's EXISTS), run beside it, ceiling ="
echo "floor / redisbloom: the most any module's ratio can be; 1-line floor: the same with"
echo "one cache line per item in a table of bloomkit's reserved size, 1-line ceiling ="
echo "1-line floor / redisbloom: the most a filter touching one line per item reaches (2 MiB pages);"
echo "2-line: the same with two lines per item in a table three times that size (a two-link chain)"
echo "capacity   measurement               bloomkit     redisbloom   ratio  floor        ceiling  1-line floor 1-line ceiling 2-line floor 2-line ceiling"
cut -d' ' -f2-3 "$results" | grep -v '@' | awk '!seen[$0]++' | while read -r c k; do
    b="$(median bloomkit "$c" "$k")" r="$(median redisbloom "$c" "$k")" f="$(median floor "$c" "$k")"
    case "$k" in
    *-usec/call) l="$(median floor "$c" "${k%-usec/call}@line-usec/call")" l2="$(median floor "$c" "${k%-usec/call}@2lines-usec/call")" ;;
    *) l="$(median floor "$c" "$k@line")" l2="$(median floor "$c" "$k@2lines")" ;;
    esac
    ratio="$(quotient "$b" "$r")" ceiling="" line_ceiling="" line2_ceiling=""
    case "$k" in *usec/call) ;; *) ceiling="$(quotient "$f" "$r")" line_ceiling="$(quotient "$l" "$r")" line2_ceiling="$(quotient "$l2" "$r")" ;; esac
    printf '%-10s %-25s %-12s %-12s %-6s %-12s %-8s %-12s %-14s %-12s %s\n' "$c" "$k" "$b" "$r" "${ratio:--}" "$f" "${ceiling:--}" "$l" "${line_ceiling:--}" "$l2" "${line2_ceiling:--}"
done
