#!/bin/sh
# examples/semijoin/test_semijoin.sh GENERATE SEMIJOIN BLOOMKIT -- the
# semi-join example at small scale (CTest example_semijoin).
#
# 20,000 orders (about 80,000 line items), seed 1, filtered through fuse8
# and blocked filters: semijoin --check fails if a matching line item is
# dropped or the distinct false-positive keys exceed mean + 4 standard
# deviations of Binomial(orders failing the predicate, FPR); then the
# command-line pipeline with the filter semijoin saved must send exactly
# as many rows as semijoin counted.
set -u
GENERATE=${1:?usage: test_semijoin.sh GENERATE SEMIJOIN BLOOMKIT}
SEMIJOIN=${2:?}
BK=${3:?}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-semijoin-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

"$GENERATE" --orders 20000 --seed 1 "$WORK" > /dev/null || fail "the generator failed"
[ "$(wc -l < "$WORK/orders.csv")" -eq 20000 ] || fail "orders.csv does not have 20000 rows"
for kind in fuse8 blocked; do
    "$SEMIJOIN" "$WORK" --kind "$kind" --check > "$WORK/report" || fail "semijoin --kind $kind --check"
    sent=$(sed -n 's/^sent with the filter (rows) *\([0-9]*\) .*/\1/p' "$WORK/report")
    cli=$("$BK" query "$WORK/orders.bkf" --field 1 --delimiter , -c < "$WORK/lineitem.csv")
    [ -n "$sent" ] && [ "$sent" = "$cli" ] ||
        fail "$kind: bloomkit query --field sends $cli rows, semijoin counted $sent"
done
[ $failures -eq 0 ] && echo "test_semijoin: all checks passed"
exit $((failures != 0))
