#!/bin/bash
# examples/semijoin/compare_tools.sh BUILD DIR -- the semi-join's filtering
# step done three ways on the same data, timed:
#
#   bloomkit query orders.bkf --field 1 --delimiter , < lineitem.csv
#   grep -F -f keys.txt lineitem.csv            (each pattern "KEY,")
#   awk -F, 'NR == FNR { k[$1]; next } $1 in k' keys.txt lineitem.csv
#
# and, for reference, bloomkit query over the key column alone (key mode).
# Output goes to a file (DIR/out.tmp): GNU grep notices /dev/null and stops
# at its first match.
# BUILD is the build directory (build/release), DIR the tables written by
# semijoin_generate (generated here, 1,500,000 orders, when missing).  The
# keys are those of the orders that pass the predicate of semijoin.c
# (1995, 1-URGENT); the filter is fuse8.  Each command runs three times
# with its output to a file; the best wall time is reported, as MB/s of
# lineitem.csv (the files are in the page cache after the first run).  The
# rows each prints are counted too: grep matches "KEY," anywhere in a line,
# so it also admits rows where another field ends with a key.
set -euo pipefail
BUILD=${1:?usage: compare_tools.sh BUILD DIR}
DIR=${2:?usage: compare_tools.sh BUILD DIR}
BK=$BUILD/cli/bloomkit
export LC_ALL=C
export OUT=$DIR/out.tmp

mkdir -p "$DIR"
[ -s "$DIR/lineitem.csv" ] || "$BUILD/examples/semijoin/semijoin_generate" "$DIR"
awk -F, '$5 ~ /^1995-/ && $6 == "1-URGENT" { print $1 }' "$DIR/orders.csv" > "$DIR/keys.txt"
sed 's/$/,/' "$DIR/keys.txt" > "$DIR/keys-comma.txt"
"$BK" build -q -f --kind fuse8 "$DIR/orders-cli.bkf" < "$DIR/keys.txt"
cut -d, -f1 "$DIR/lineitem.csv" > "$DIR/lineitem-keys.txt"

bytes=$(stat -c %s "$DIR/lineitem.csv")
rows=$(wc -l < "$DIR/lineitem.csv")
echo "lineitem.csv: $rows rows, $bytes bytes; $(wc -l < "$DIR/keys.txt") keys;" \
    "awk is $(readlink -f "$(command -v awk)"); $(nproc) CPUs"

best_time() { # best_time COMMAND...: best wall seconds of three runs
    local best="" t
    for _ in 1 2 3; do
        t=$( { /usr/bin/env TIMEFORMAT=%R bash -c 'time "$@" > "$OUT"' _ "$@"; } 2>&1 | tail -1)
        if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN { exit !(a < b) }'; then
            best=$t
        fi
    done
    echo "$best"
}

report() { # report NAME INPUT-BYTES COMMAND...
    local name=$1 input=$2
    shift 2
    local seconds selected
    seconds=$(best_time "$@")
    selected=$(wc -l < "$OUT")
    awk -v n="$name" -v s="$seconds" -v b="$input" -v r="$selected" -v lines="$rows" \
        'BEGIN { printf "%-44s %7.2f s %7.0f MB/s %6.1f M lines/s %9d\n", n, s, b / s / 1e6,
                 lines / s / 1e6, r }'
}

printf '%-44s %9s %12s %17s %9s\n' command "best of 3" "input" "" printed
report "bloomkit query --field 1 --delimiter ," "$bytes" \
    sh -c "\"$BK\" query \"$DIR/orders-cli.bkf\" --field 1 --delimiter , < \"$DIR/lineitem.csv\""
report "grep -F -f keys (\"KEY,\")" "$bytes" \
    grep -F -f "$DIR/keys-comma.txt" "$DIR/lineitem.csv"
report "awk -F, (in-memory hash of the keys)" "$bytes" \
    awk -F, 'NR == FNR { k[$1]; next } $1 in k' "$DIR/keys.txt" "$DIR/lineitem.csv"
report "bloomkit query (key column only: key mode)" "$(stat -c %s "$DIR/lineitem-keys.txt")" \
    sh -c "\"$BK\" query \"$DIR/orders-cli.bkf\" < \"$DIR/lineitem-keys.txt\""
rm -f "$OUT"
