#!/bin/bash
# examples/semijoin/redis_semijoin.sh BUILD DIR PORT [HOST] -- the semi-join
# with the filter travelling through Redis (bloomkit.so loaded) instead of
# as a file: one process publishes it, another fetches and uses it.
#
#   orders side                      Redis                 line-item side
#   semijoin DIR (local join,
#     writes DIR/orders.bkf)
#   redis-cli -x BK.LOAD ──────────> semijoin:orders ────> redis-cli BK.DUMP > orders.bkf
#                                                          bloomkit query orders.bkf --field 1
#   BF.RESERVE, BF.MADD ───────────> semijoin:orders:bf <── BF.MEXISTS, 1,000 keys a call
#
# Two paths, each a pair of processes that share nothing but the server:
#
# - BK.DUMP: the orders' side runs the local join (`semijoin DIR --kind
#   fuse8 --check`, which builds the filter over the matching orders' keys
#   and saves it with bk_filter_save) and publishes the file with BK.LOAD;
#   the line-item side, in its own directory (DIR/lineitem-side), fetches it
#   with BK.DUMP (redis-cli ends the reply with a newline, which is cut
#   off) and filters lineitem.csv with `bloomkit query --field 1`.  The
#   fetched file must be the published file byte for byte, and the rows and
#   bytes sent the local join's.
# - BF.*: the orders' side reserves a RedisBloom-style filter (BF.RESERVE,
#   error rate 0.01, capacity the number of matching keys) and adds the keys
#   with BF.MADD; the line-item side asks BF.MEXISTS for every row's key,
#   1,000 a call, and keeps the rows answered 1.  The filter never leaves
#   the server: what crosses the network is the keys and the answers.
#
# Prints one table: filter bytes, rows and bytes sent, false-positive rows
# and distinct keys against the exact join, and wall seconds of each
# process (publishing: BK.LOAD alone, or extracting, sorting and BF.MADDing
# the keys; using: BK.DUMP and the filtering pass, or the BF.MEXISTS calls
# and the selection of rows).  Exits non-zero if a matching row is lost, if the BK.DUMP path
# differs from the local join in any figure, or if a step fails.  The
# server must already run with bloomkit.so (test_redis_semijoin.sh starts
# one); DIR holds the tables from semijoin_generate.
set -euo pipefail
BUILD=${1:?usage: redis_semijoin.sh BUILD DIR PORT [HOST]}
DIR=${2:?usage: redis_semijoin.sh BUILD DIR PORT [HOST]}
PORT=${3:?usage: redis_semijoin.sh BUILD DIR PORT [HOST]}
HOST=${4:-127.0.0.1}
BK=$BUILD/cli/bloomkit
SEMIJOIN=$BUILD/examples/semijoin/semijoin
export LC_ALL=C
REMOTE=$DIR/lineitem-side
mkdir -p "$REMOTE"
KEY=semijoin:orders
BFKEY=semijoin:orders:bf

redis() { redis-cli -h "$HOST" -p "$PORT" "$@"; }
now() { date +%s.%N; }
elapsed() { awk -v a="$1" -v b="$(now)" 'BEGIN { printf "%.2f", b - a }'; }
# The keys of the orders that pass semijoin's default predicate.
matching_keys() { awk -F, '$5 ~ /^1995-/ && $6 == "1-URGENT" { print $1 }' "$DIR/orders.csv"; }
# stdin: one key a line; stdout: one command a line, COMMAND KEY k1 ... k1000.
batch() { awk -v head="$1 $2" '{ line = line " " $1 }
    NR % 1000 == 0 { print head line; line = "" } END { if (line != "") print head line }'; }
# A figure from semijoin's report: field $2 of the line starting with $1.
reported() { awk -v p="$1" -v f="$2" 'index($0, p) == 1 { print $f; exit }' "$DIR/local-report.txt"; }
# Distinct keys in the rows of file $1 that are not matching keys.
false_positive_keys() {
    cut -d, -f1 "$1" | sort -u | comm -23 - "$DIR/matching-keys.txt" | wc -l
}

# --- orders side: the local join, then publish the file it wrote (BK.LOAD)
"$SEMIJOIN" "$DIR" --kind fuse8 --check > "$DIR/local-report.txt"
[ "$(redis PING)" = PONG ] || { echo "redis_semijoin: no server at $HOST:$PORT" >&2; exit 1; }
redis DEL "$KEY" "$BFKEY" > /dev/null
start=$(now)
[ "$(redis -x BK.LOAD "$KEY" < "$DIR/orders.bkf")" = OK ] ||
    { echo "redis_semijoin: BK.LOAD failed" >&2; exit 1; }
publish_bk_seconds=$(elapsed "$start")

# --- line-item side: fetch (BK.DUMP) and filter with bloomkit query
start=$(now)
redis BK.DUMP "$KEY" | head -c -1 > "$REMOTE/orders.bkf"
"$BK" query "$REMOTE/orders.bkf" --field 1 --delimiter , < "$DIR/lineitem.csv" > "$REMOTE/to-send-bk.csv"
use_bk_seconds=$(elapsed "$start")

# --- orders side: publish the keys into a BF filter
start=$(now)
matching_keys | sort > "$DIR/matching-keys.txt"
count=$(wc -l < "$DIR/matching-keys.txt")
redis BF.RESERVE "$BFKEY" 0.01 "$count" > /dev/null
batch BF.MADD "$BFKEY" < "$DIR/matching-keys.txt" | redis > /dev/null
publish_bf_seconds=$(elapsed "$start")

# --- line-item side: ask BF.MEXISTS for every row's key, keep the 1s
start=$(now)
cut -d, -f1 "$DIR/lineitem.csv" | batch BF.MEXISTS "$BFKEY" | redis > "$REMOTE/answers.txt"
paste -d, "$REMOTE/answers.txt" "$DIR/lineitem.csv" | sed -n 's/^1,//p' > "$REMOTE/to-send-bf.csv"
use_bf_seconds=$(elapsed "$start")

# --- compare
rows=$(wc -l < "$DIR/lineitem.csv")
answers=$(wc -l < "$REMOTE/answers.txt")
[ "$answers" -eq "$rows" ] || { echo "redis_semijoin: $answers answers for $rows rows" >&2; exit 1; }
local_rows=$(reported "sent with the filter (rows)" 6)
local_bytes=$(reported "sent with the filter (rows)" 7)
exact_rows=$(reported "the exact join (ideal)" 5)
exact_bytes=$(reported "the exact join (ideal)" 6)
local_fp_keys=$(reported "false-positive keys:" 3)
local_filter_bytes=$(stat -c %s "$DIR/orders.bkf")
bf_filter_bytes=$(redis BF.INFO "$BFKEY" SIZE)
failures=0
fail() { echo "redis_semijoin: $*" >&2; failures=$((failures + 1)); }

printf '%-30s %12s %10s %12s %10s %8s %12s %10s\n' path "filter bytes" rows bytes "FP rows" \
    "FP keys" "publish s" "use s"
printf '%-30s %12s %10s %12s %10s %8s\n' "exact join" "" "$exact_rows" "$exact_bytes" 0 0
printf '%-30s %12s %10s %12s %10s %8s\n' "local file (semijoin, fuse8)" "$local_filter_bytes" \
    "$local_rows" "$local_bytes" $((local_rows - exact_rows)) "$local_fp_keys"
for path in bk bf; do
    file=$REMOTE/to-send-$path.csv
    sent_rows=$(wc -l < "$file")
    sent_bytes=$(wc -c < "$file")
    fp_keys=$(false_positive_keys "$file")
    if [ $path = bk ]; then
        name="Redis BK.LOAD/BK.DUMP, fuse8"; bytes=$(stat -c %s "$REMOTE/orders.bkf")
        publish=$publish_bk_seconds; use=$use_bk_seconds
    else
        name="Redis BF.MADD/BF.MEXISTS"; bytes=$bf_filter_bytes
        publish=$publish_bf_seconds; use=$use_bf_seconds
    fi
    printf '%-30s %12s %10s %12s %10s %8s %12s %10s\n' "$name" "$bytes" "$sent_rows" \
        "$sent_bytes" $((sent_rows - exact_rows)) "$fp_keys" "$publish" "$use"
    # No matching row may be lost: every row of the exact join is sent.
    lost=$(cut -d, -f1 "$file" | sort -u | comm -13 - "$DIR/matching-keys.txt" | wc -l)
    [ "$lost" -eq 0 ] || fail "$name: $lost matching keys lost"
    [ "$sent_rows" -ge "$exact_rows" ] || fail "$name: fewer rows than the exact join"
done
cmp -s "$DIR/orders.bkf" "$REMOTE/orders.bkf" || fail "BK.DUMP returned other bytes than BK.LOAD took"
bk_rows=$(wc -l < "$REMOTE/to-send-bk.csv")
bk_bytes=$(wc -c < "$REMOTE/to-send-bk.csv")
[ "$bk_rows" = "$local_rows" ] && [ "$bk_bytes" = "$local_bytes" ] ||
    fail "the BK.DUMP path sent $bk_rows rows, $bk_bytes bytes; the local join $local_rows, $local_bytes"
[ "$(false_positive_keys "$REMOTE/to-send-bk.csv")" = "$local_fp_keys" ] ||
    fail "the BK.DUMP path has other false-positive keys than the local join"
# The BF filter's distinct false-positive keys: at most mean + 4 standard
# deviations of Binomial(orders failing the predicate, 0.01).
trials=$(( $(wc -l < "$DIR/orders.csv") - count ))
bound=$(awk -v n="$trials" 'BEGIN { p = 0.01; printf "%d", n * p + 4 * sqrt(n * p * (1 - p)) }')
[ "$(false_positive_keys "$REMOTE/to-send-bf.csv")" -le "$bound" ] ||
    fail "BF.MEXISTS admitted more false-positive keys than the binomial bound $bound"
exit $((failures != 0))
