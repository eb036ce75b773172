#!/bin/sh
# tests/cli/test_crash.sh BLOOMKIT -- SIGKILL during in-place updates.
#
# Run by CTest (tests/CMakeLists.txt) with the path of the built command.
# A bloom filter file of about 2.4 MB (the undo journal and the page writes
# of an add of 4,000 keys take a few milliseconds to tens of them) gets one
# `bloomkit add` per trial, killed with SIGKILL after a random delay drawn
# (fixed seed) across the add's typical duration.  After each trial:
#   - the next command loads the file (rolling back an interrupted update)
#     and its checksum passes (query reads and verifies it);
#   - every key of every add that finished (exit 0) is still there;
#   - no journal is left once a command has run.
# 60 trials; the script also prints how many kills landed while a journal
# existed (updates interrupted between their journal and its removal), so
# a run shows that the dangerous window was hit.

set -u
BK=${1:?usage: test_crash.sh PATH-TO-BLOOMKIT}
case $BK in /*) ;; *) BK=$(pwd)/$BK ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-crash-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

TRIALS=${BLOOMKIT_CRASH_TRIALS:-60}
KEYS=4000
failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

"$BK" create -q f.bkf -n 2000000 -p 0.01 || exit 1
: > committed
committed_count=0

# How long one add takes here, in milliseconds (the delays span 1.5 times
# it): the second of two, the first one having brought the file in.
for probe in 1 2; do
    awk -v p=$probe 'BEGIN { for (i = 0; i < 4000; i++) print "probe" p ":" i }' > probe
    start=$(date +%s%N)
    "$BK" add -q f.bkf < probe || exit 1
    span=$(( ($(date +%s%N) - start) * 3 / 2 / 1000000 + 1 ))
    cat probe >> committed
done
committed_count=$((2 * KEYS))

killed=0
mid_update=0
trial=1
while [ $trial -le "$TRIALS" ]; do
    awk -v t=$trial -v n=$KEYS 'BEGIN { for (i = 0; i < n; i++) print "t" t ":" i }' > keys
    delay=$(awk -v t=$trial -v s="$span" 'BEGIN { srand(t); printf "%.4f", rand() * s / 1000 }')
    "$BK" add -q f.bkf < keys &
    pid=$!
    sleep "$delay"
    kill -KILL $pid 2> /dev/null
    { wait $pid; } 2> /dev/null
    status=$?
    if [ $status -eq 0 ]; then
        cat keys >> committed
        committed_count=$((committed_count + KEYS))
    else
        killed=$((killed + 1))
        [ -e f.bkf.bkj ] && mid_update=$((mid_update + 1))
    fi
    found=$("$BK" query -c f.bkf < committed 2> err)
    status=$?
    [ $status -eq 0 ] || fail "trial $trial: query after the kill failed: $(cat err)"
    [ "$found" = "$committed_count" ] ||
        fail "trial $trial: $found of $committed_count finished keys found"
    [ -e f.bkf.bkj ] && fail "trial $trial: a journal is left after a command ran"
    trial=$((trial + 1))
done
"$BK" info f.bkf > /dev/null || fail "info cannot read the file at the end"

echo "$TRIALS trials over ${span} ms: $killed killed, $mid_update with a journal in place," \
     "$((TRIALS - killed)) finished; $failures failed"
[ $failures -eq 0 ]
