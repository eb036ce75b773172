#!/bin/sh
# tests/cli/test_cli.sh BLOOMKIT -- end-to-end tests of the `bloomkit` command.
#
# Run by CTest (tests/CMakeLists.txt) with the path of the built command.
# Every check can fail; the script reports each failure and exits 1 if any.
#
#   1. the round trip: create, add 300,000 keys from a generated file, query
#      them all back (no false negatives), query 300,000 absent keys (false
#      positives within 4 binomial standard deviations of the predicted FPR),
#      info and info --json;
#   2. merge, intersect and estimate (estimates within 4 standard deviations
#      of the fill-based estimator, derived below);
#   3. key input conventions: operands, "--", CRLF, -0, "-" for the filter;
#   4. every kind the build has: create or build, add, query, remove;
#   5. each bad input: exit status 2, one line "bloomkit: <problem>" on
#      stderr, and every filter file unchanged byte for byte (cmp);
#   6. past the design point: add succeeds and warns exactly once;
#   7. the progress line: never when stderr is not a terminal; shown on a
#      terminal (through script(1), when installed) and silenced by -q;
#   8. counts (bloomkit count) and a quotient filter's merge and info.
#
# Statistics use python3 (present on Debian 12) for the bounds and to read
# the JSON; the keys are fixed and the hash seed is 0, so every run gives
# the same numbers.

set -u
BK=${1:?usage: test_cli.sh PATH-TO-BLOOMKIT}
case $BK in /*) ;; *) BK=$(pwd)/$BK ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-cli-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

failures=0
checks=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
check() { # check DESCRIPTION CONDITION...
    what=$1
    shift
    checks=$((checks + 1))
    "$@" || fail "$what"
}
# The distribution's python3 when there is one: a version-manager shim can
# take most of a second to start.
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
python3() { "$PYTHON" "$@"; }
# json_fields FILE: parses FILE (fails if it is not one JSON object) and
# writes its fields as NAME=VALUE lines to FILE.fields for json_field.
json_fields() {
    python3 -c '
import json, sys
for name, value in json.load(open(sys.argv[1])).items(): print("%s=%s" % (name, value))' "$1" \
        > "$1.fields"
}
json_field() { # json_field FILE FIELD
    sed -n "s/^$2=//p" "$1.fields"
}

N=300000
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) print "user:" i }' > keys.txt
awk -v n=$N 'BEGIN { for (i = 0; i < n; i++) print "guest:" i }' > absent.txt
awk -v n=$N 'BEGIN { for (i = 0; i < n * 2 / 3; i++) print "user:" i }' > a_keys.txt
awk -v n=$N 'BEGIN { for (i = n / 3; i < n; i++) print "user:" i }' > b_keys.txt
awk -v n=$N 'BEGIN { for (i = n / 3; i < n * 2 / 3; i++) print "user:" i }' > shared_keys.txt

# ------------------------------------------------------------------ help
"$BK" --help > out 2> err
check "bloomkit --help exits 0 and prints usage" grep -q '^usage: bloomkit' out
check "bloomkit --help lists the kinds" grep -q '^kinds (--kind): bloom, .*window' out
for command in size create add query info merge intersect estimate remove build demo \
    parquet-export parquet-import count; do
    "$BK" $command --help > out 2> err
    status=$?
    check "$command --help exits 0 (got $status)" test $status -eq 0
    check "$command --help prints its usage" grep -q "^usage: bloomkit $command" out
    check "$command --help prints nothing on stderr" test ! -s err
done

# ------------------------------------------------------------------ size
"$BK" size -n 1000000 -p 0.01 > out 2> err
check "size exits 0" test $? -eq 0
# m = ceil(-n ln p / (ln 2)^2) = 9585059, k = round(m/n ln 2) = 7
check "size prints the classic design for bloom" grep -Eq '^bloom +9585059 +7 ' out
"$BK" size -n 1M -p 1% --json > size.json 2> err
check "size --json is valid JSON" python3 -m json.tool size.json > /dev/null
"$BK" size -n 1e6 -p 1e-2 --json > size_1e6.json 2> err
check "-n 1e6 -p 1e-2 is -n 1M -p 1%" cmp -s size.json size_1e6.json
check "size -n 1M -p 1% is -n 1000000 -p 0.01" python3 -c '
import json, sys
rows = {r["kind"]: r for r in json.load(open("size.json"))}
b = rows["bloom"]
sys.exit(not (b["bits"] == 9585059 and b["hashes"] == 7 and abs(b["space_ratio"] - 1.44) < 0.01))'

# ------------------------------------------------------------------ round trip
"$BK" create f.bf -n $N -p 0.01 > out 2> err
check "create exits 0" test $? -eq 0
check "create writes the file" test -s f.bf
check "create prints a summary" grep -q 'bloom filter' out

"$BK" add f.bf < keys.txt > out 2> err
check "add of $N keys exits 0" test $? -eq 0
check "add reports the keys read and new" grep -Eq "^read $N keys, [0-9]+ new$" out
check "add prints nothing on stderr (no warning, no progress off a terminal)" test ! -s err

"$BK" query -c f.bf < keys.txt > out 2> err
check "query of every added key exits 0" test $? -eq 0
check "every added key is found" test "$(cat out)" = $N
"$BK" query -v f.bf < keys.txt > out 2> err
check "query -v of added keys exits 0 (some present)" test $? -eq 0
check "no false negatives (query -v prints nothing)" test ! -s out
"$BK" query f.bf < keys.txt > present.txt
check "query prints the present keys, in order" cmp -s present.txt keys.txt

"$BK" info --json f.bf > info.json 2> err
check "info --json exits 0" test $? -eq 0
check "info --json is one valid JSON object" json_fields info.json
for field in kind bits hashes bytes capacity target_fpr keys_added keys_estimated fill_ratio \
    current_fpr bits_per_key lower_bound_bits space_ratio status hash_algorithm seed; do
    check "info --json has $field" grep -q "^$field=" info.json.fields
done
check "info --json kind is bloom" test "$(json_field info.json kind)" = bloom
check "info --json capacity" test "$(json_field info.json capacity)" = $N
check "info --json status ok" test "$(json_field info.json status)" = ok
check "info --json space_ratio is bits_per_key over log2(1/FPR)" awk \
    -v r="$(json_field info.json space_ratio)" -v b="$(json_field info.json bits_per_key)" \
    -v l="$(json_field info.json lower_bound_bits)" -v p="$(json_field info.json target_fpr)" \
    'BEGIN { d = r - b / l; e = l + log(p) / log(2); exit !(d * d < 1e-12 && e * e < 1e-12) }'
check "info --json bits and hashes as designed" test \
    "$(json_field info.json bits) $(json_field info.json hashes)" = "2875518 7"
"$BK" info f.bf > info.txt 2> err
check "info exits 0" test $? -eq 0
for label in 'kind:' 'bits (m):' 'hashes (k):' 'bytes:' 'keys added:' 'keys estimated:' \
    'fill ratio:' 'design FPR:' 'current FPR:' 'status: *ok'; do
    check "info shows '$label'" grep -q "^$label" info.txt
done

# Absent keys: false positives ~ Binomial(N, p) with p the predicted FPR at
# capacity (target_fpr).  Bound: 4 standard deviations.  The classic formula
# errs (Bose et al. 2008) by a relative O(k/m) here, ~1e-6: negligible.
"$BK" query -c f.bf < absent.txt > out 2> err
status=$?
false_positives=$(cat out)
check "query of absent keys exits 0 (a few false positives expected at N = $N)" test $status -eq 0
check "false positives $false_positives within 4 sigma of N p" python3 -c '
import json, math, sys
p = json.load(open("info.json"))["target_fpr"]; n = int(sys.argv[1]); x = int(sys.argv[2])
sys.exit(abs(x - n * p) > 4 * math.sqrt(n * p * (1 - p)))' $N "$false_positives"

# ------------------------------------------------------------------ merge, intersect, estimate
"$BK" create a.bf -n $N -p 0.01 -q && "$BK" create b.bf -n $N -p 0.01 -q
"$BK" add -q a.bf < a_keys.txt > /dev/null && "$BK" add -q b.bf < b_keys.txt > /dev/null
"$BK" merge u.bf a.bf b.bf > out 2> err
check "merge exits 0" test $? -eq 0
"$BK" query -c u.bf < keys.txt > out
check "the union holds every key of A and B" test "$(cat out)" = $N
"$BK" info --json u.bf > u.json && json_fields u.json
check "the union has exactly the bits of the filter of A u B" test \
    "$(json_field u.json fill_ratio)" = "$(json_field info.json fill_ratio)"
"$BK" intersect i.bf a.bf b.bf > out 2> err
check "intersect exits 0" test $? -eq 0
"$BK" query -c i.bf < shared_keys.txt > out
check "the intersection holds every shared key" test "$(cat out)" = $((N / 3))

"$BK" estimate --json a.bf b.bf > estimate.json 2> err
check "estimate --json exits 0 and is valid JSON" python3 -m json.tool estimate.json > /dev/null
# The estimator n = -(m/k) ln(1 - X/m) of X set bits: X has variance
# m e^-L (1 - (1 + L) e^-L), L = kn/m (occupancy), and dn/dX = 1/(k (1 - f)).
# |A n B| = |A| + |B| - |A u B|: its deviation is at most the sum of theirs.
check "estimates within 4 sigma of |A| = |B| = 2N/3, |A u B| = N, |A n B| = N/3" python3 -c '
import json, math, sys
e = json.load(open("estimate.json")); info = json.load(open("info.json"))
m, k, n = info["bits"], info["hashes"], int(sys.argv[1])
def sd(keys):
    load = k * keys / m; empty = math.exp(-load)
    return math.sqrt(m * empty * (1 - (1 + load) * empty)) / (k * empty)
ok = all(abs(e[f] - t) <= 4 * sd(t) for f, t in (("a", 2 * n / 3), ("b", 2 * n / 3), ("union", n)))
ok = ok and abs(e["intersection"] - n / 3) <= 4 * (2 * sd(2 * n / 3) + sd(n))
ok = ok and abs(e["jaccard"] - 1 / 3) < 0.01
sys.exit(not ok)' $N
"$BK" estimate a.bf b.bf > out 2> err
check "estimate prints the five figures" test "$(grep -c -E '^(\|A\||\|B\||\|A u B\||\|A n B\||Jaccard)' out)" = 5

# ------------------------------------------------------------------ key conventions
"$BK" create g.bf -n 1000 -p 0.001 -q
"$BK" add g.bf alpha beta -- -dash > out 2> err
check "keys as operands, '--' before a key starting with '-'" grep -q '^read 3 keys, 3 new$' out
"$BK" query g.bf alpha -- -dash never-added > out 2> err
check "query of operands exits 0" test $? -eq 0
check "query prints the present operands" test "$(cat out)" = "$(printf 'alpha\n-dash')"
"$BK" query g.bf never-added > out 2> err
check "query with no key present exits 1" test $? -eq 1
check "query with no key present prints nothing" test ! -s out
"$BK" query -v g.bf alpha never-added > out
check "query -v prints the absent key" test "$(cat out)" = never-added
"$BK" query -v -c g.bf alpha never-added > out
check "query -v -c counts the absent keys" test "$(cat out)" = 1
printf 'crlf-key\r\nlast-line-unterminated' | "$BK" add g.bf > out
"$BK" query g.bf crlf-key last-line-unterminated > out
check "CRLF is stripped and an unterminated last line is a key" test "$(wc -l < out)" -eq 2
printf 'with space\0with\nnewline\0' | "$BK" add -0 g.bf > out
check "-0 reads NUL-terminated keys" grep -q '^read 2 keys, 2 new$' out
printf 'with space\0with\nnewline\0absent key\0' | "$BK" query -0 g.bf > out
check "-0 query prints NUL-terminated present keys" cmp -s out \
    "$(printf 'with space\0with\nnewline\0' > expected0; echo expected0)"
"$BK" create - -n 1000 | "$BK" add - piped > pipe.bf 2> err
"$BK" query pipe.bf piped > out
check "'-': create to stdout, add from stdin to stdout" test "$(cat out)" = piped
check "add - reports on stderr" grep -q '^read 1 keys, 1 new$' err
"$BK" query - piped < pipe.bf > out
check "query - reads the filter from stdin" test "$(cat out)" = piped
"$BK" info - < pipe.bf > out
check "info - reads the filter from stdin" grep -q '^kind: *bloom' out
"$BK" build built.bf < keys.txt > out 2> err
check "build exits 0" test $? -eq 0
"$BK" query -c built.bf - < keys.txt > out
check "build holds every key (keys from stdin given as '-')" test "$(cat out)" = $N
"$BK" info --json built.bf > built.json && json_fields built.json
check "build sizes for the keys read" test "$(json_field built.json capacity)" = $N
"$BK" query --mmap -c f.bf < keys.txt > out 2> err
check "query --mmap finds every key" test "$(cat out)" = $N
printf '%s' 000102030405060708090a0b0c0d0e0f > key.hex
"$BK" create sip.bf -n 1000 -p 0.001 --key-file key.hex -q
"$BK" add sip.bf secret-key-one --key-file key.hex > /dev/null
"$BK" query sip.bf secret-key-one --key-file key.hex > out
check "a keyed (SipHash) filter answers with its key" test "$(cat out)" = secret-key-one
"$BK" info --json --key-file key.hex sip.bf > sip.json
check "info --json of a keyed filter is valid" json_fields sip.json
check "info --json of a keyed filter names siphash" test "$(json_field sip.json hash_algorithm)" = siphash

# ------------------------------------------------------------------ every kind
# A kind-specific option is refused by the other kinds (see "options a kind
# does not use" below): only the window gets its window.
KIND_OPTIONS="--window-keys 1000000"
"$BK" size -n 2000 $KIND_OPTIONS --json | python3 -c '
import json, sys
for row in json.load(sys.stdin):
    if "error" not in row: print(row["kind"], "static" if row["static"] else "dynamic")' > kinds.txt
head -n 2000 keys.txt > kind_keys.txt
head -n 1000 keys.txt > kind_removed.txt
while read -r kind mode; do
    options=
    [ "$kind" = window ] && options=$KIND_OPTIONS
    if [ "$mode" = static ]; then
        "$BK" build kind.bf --kind "$kind" $options --force -q < kind_keys.txt > out 2> err
        check "$kind: build exits 0 ($(cat err))" test $? -eq 0
    else
        "$BK" create kind.bf --kind "$kind" $options -n 2000 -p 0.01 --force -q > out 2> err
        check "$kind: create exits 0 ($(cat err))" test $? -eq 0
        "$BK" add kind.bf < kind_keys.txt > out 2> err
        check "$kind: add exits 0 ($(cat err))" test $? -eq 0
    fi
    "$BK" query -c kind.bf < kind_keys.txt > out 2> err
    check "$kind: no false negatives" test "$(cat out)" = 2000
    cp kind.bf kind.orig
    if [ "$mode" = static ]; then
        "$BK" add kind.bf one-more-key > out 2> err
        check "$kind: add to a static filter exits 2" test $? -eq 2
        check "$kind: add to a static filter says why" grep -q 'keys cannot be added' err
    else
        # Overfilled 10 times: either it takes the keys (warning at most
        # once) or it fails (exit 2) and leaves the file as it was.
        "$BK" create over.bf --kind "$kind" $options -n 200 --force -q
        cp over.bf over.orig
        "$BK" add -q over.bf < kind_keys.txt > /dev/null 2> err
        status=$?
        case $status in
        0) check "$kind: overfilled add warns at most once" test "$(wc -l < err)" -le 1 ;;
        2) check "$kind: failed overfilled add leaves the file unchanged" cmp -s over.bf over.orig
           check "$kind: failed overfilled add says why in one line" test "$(wc -l < err)" -eq 1 ;;
        *) fail "$kind: overfilled add exits $status" ;;
        esac
        rm -f over.bf over.orig
    fi
    check "$kind: a refused add leaves the file unchanged" cmp -s kind.bf kind.orig
    "$BK" info --json kind.bf > kind.json 2> err
    check "$kind: info --json valid" json_fields kind.json
    check "$kind: info --json names the kind" test "$(json_field kind.json kind)" = "$kind"
    "$BK" remove kind.bf < kind_removed.txt > out 2> err
    status=$?
    if grep -q 'cannot remove keys' err; then
        check "$kind: remove unsupported exits 2" test $status -eq 2
        check "$kind: failed remove leaves the file unchanged" cmp -s kind.bf kind.orig
    else
        check "$kind: remove exits 0 ($(cat err))" test $status -eq 0
        check "$kind: remove reports" grep -q '^removed 1000 keys, 0 not found$' out
        "$BK" query -c kind.bf < kind_keys.txt > out
        check "$kind: the kept keys are still found" test "$(cat out)" -ge 1000
        "$BK" remove kind.bf never-added-key > out 2> err
        check "$kind: remove of an absent key exits 1" test $? -eq 1
        check "$kind: remove reports the key not found" grep -q '^removed 0 keys, 1 not found$' out
    fi
done < kinds.txt
rm -f kind.orig
check "size lists at least the bloom kind" grep -q '^bloom dynamic$' kinds.txt

# ------------------------------------------------------------------ counts
"$BK" create q1.bf --kind quotient -n 1000 --remainder-bits 10 -q
"$BK" create q2.bf --kind quotient -n 1000 --remainder-bits 10 -q
"$BK" add q1.bf apple apple apple pear > /dev/null
"$BK" add q2.bf apple plum > /dev/null
"$BK" count q1.bf apple pear plum > out 2> err
check "count exits 0" test $? -eq 0
check "count prints COUNT<TAB>KEY" test "$(cat out)" = "$(printf '3\tapple\n1\tpear\n0\tplum')"
"$BK" count q1.bf plum > out 2> err
check "count of absent keys only exits 1" test $? -eq 1
"$BK" remove q1.bf apple > /dev/null
check "remove takes one copy" test "$("$BK" count q1.bf apple)" = "$(printf '2\tapple')"
"$BK" merge q3.bf q1.bf q2.bf > /dev/null 2> err
check "quotient merge exits 0 ($(cat err))" test $? -eq 0
check "merged counts add up" test "$("$BK" count q3.bf apple pear plum)" = \
    "$(printf '3\tapple\n1\tpear\n1\tplum')"
"$BK" info q3.bf > out
check "info shows the counted keys" grep -q '^counted keys: *5 (3 distinct fingerprints)$' out
check "info shows the remainder bits" grep -q '^remainder bits: *10 ' out
"$BK" create qw.bf --kind quotient -n 1000 --remainder-bits 9 -q
expect_count_error() {
    "$BK" count "$@" > out 2> err
    check "count $*: exit 2" test $? -eq 2
}
expect_count_error f.bf user:1
check "count on a bloom filter says why" grep -q 'does not count keys' err
"$BK" merge qx.bf q1.bf qw.bf > out 2> err
check "merging quotient filters of other widths fails" test $? -eq 2
rm -f q1.bf q2.bf q3.bf qw.bf qx.bf

# ------------------------------------------------------------------ bad input
# expect_error MESSAGE COMMAND...: exit status 2, exactly one line on stderr,
# "bloomkit: " then a text containing MESSAGE, and no filter file changed.
for file in f.bf g.bf a.bf sip.bf; do cp "$file" "$file.orig"; done
printf 'this is not a filter\n' > text.bf
cp f.bf corrupt.bf
printf 'X' | dd of=corrupt.bf bs=1 seek=4096 conv=notrunc 2> /dev/null
head -c 100 f.bf > truncated.bf
: > empty.bf
for file in text.bf corrupt.bf truncated.bf empty.bf; do cp "$file" "$file.orig"; done
mkdir -p directory.bf
printf 'not a key' > badkey.hex
printf '%s' ffffffffffffffffffffffffffffffff > wrongkey.hex

# A design far past saturation (the most keys -n takes, on one block) is
# made at once, with FPR 1: its FPR model once summed forever.
"$BK" create sat.bf --kind blocked -n 72057594037927936 --bits 512 --hashes 6 > out 2> err
check "saturated blocked design: create exits 0" test $? -eq 0
check "saturated blocked design: design FPR 1" grep -q 'at FPR 1$' out
"$BK" info sat.bf > out
check "saturated blocked design: info's lower bound is 0.00, not -0.00" \
    grep -q 'log2(1/FPR) = 0.00)' out

expect_error() {
    message=$1
    shift
    "$@" > out 2> err < "${STDIN:-/dev/null}"
    status=$?
    checks=$((checks + 1))
    if [ $status -ne 2 ]; then
        fail "exit status $status, not 2: $*"
    elif [ "$(wc -l < err)" -ne 1 ] || ! grep -q '^bloomkit: ' err; then
        fail "not one 'bloomkit: ' line on stderr: $* -> $(cat err)"
    elif ! grep -qF -- "$message" err; then
        fail "message '$(cat err)' lacks '$message': $*"
    fi
    for orig in *.orig; do
        cmp -s "$orig" "${orig%.orig}" || fail "${orig%.orig} changed by: $*"
    done
}

expect_error '-p must be between 0 and 1, got 2' "$BK" create new.bf -n 100 -p 2
expect_error '-p must be between 0 and 1, got 0' "$BK" create new.bf -n 100 -p 0
expect_error "-p must be a number, got 'x'" "$BK" create new.bf -n 100 -p x
expect_error '-n must be at least 1, got 0' "$BK" create new.bf -n 0
expect_error "-n must be a whole number, got 'abc'" "$BK" create new.bf -n abc
expect_error "-n must be a whole number, got '-5'" "$BK" create new.bf -n -5
expect_error "-n must be a whole number, got '1.5'" "$BK" create new.bf -n 1.5
expect_error '-n must be at most 72057594037927936, got 99999999999999999999' "$BK" create new.bf -n 99999999999999999999
expect_error '-n (the number of keys' "$BK" create new.bf
expect_error '--hashes must be at most 255, got 300' "$BK" create new.bf -n 9 --bits 99 --hashes 300
expect_error '--bits and --hashes go together' "$BK" create new.bf -n 100 --bits 1000
expect_error 'give one of -p, --bits-per-key or --bits' "$BK" create new.bf -n 9 -p .1 --bits-per-key 8
expect_error '--bits-per-key must be at least 1, got 0.5' "$BK" size -n 100 --bits-per-key 0.5
expect_error "unknown --kind 'nosuch'" "$BK" create new.bf -n 100 --kind nosuch
expect_error 'unknown option --frobnicate' "$BK" create new.bf -n 100 --frobnicate
expect_error 'unknown option -z' "$BK" query -z f.bf key
expect_error '-p needs a value' "$BK" create new.bf -n 100 -p
expect_error 'create needs a FILE' "$BK" create -n 100
expect_error 'already exists (use --force' "$BK" create f.bf -n 100
expect_error '-n must be at least 1, got 0' "$BK" create f.bf -n 0 --force
expect_error 'is a directory' "$BK" create directory.bf -n 100
expect_error 'must hold 16 raw bytes or 32 hex digits' "$BK" create new.bf -n 10 --key-file badkey.hex
expect_error 'either --seed or --key-file' "$BK" create new.bf -n 10 --seed 1 --key-file key.hex
expect_error 'cannot read --key-file missing.hex' "$BK" create new.bf -n 10 --key-file missing.hex
check "no file is created by a failed create" test ! -e new.bf

expect_error 'cannot read missing.bf: No such file or directory' "$BK" add missing.bf key
expect_error 'cannot read missing.bf: No such file or directory' "$BK" query missing.bf key
expect_error 'text.bf: ' "$BK" add text.bf key
expect_error 'corrupt.bf: ' "$BK" add corrupt.bf key
expect_error 'corrupt.bf: ' "$BK" query corrupt.bf key
expect_error 'truncated.bf: ' "$BK" add truncated.bf key
expect_error 'empty.bf: ' "$BK" info empty.bf
expect_error 'is a directory' "$BK" info directory.bf
STDIN=. expect_error 'cannot read keys from standard input' "$BK" add f.bf
expect_error 'unknown option --json' "$BK" add f.bf --json key
expect_error 'add needs a FILE' "$BK" add
expect_error 'keys must be given as arguments' "$BK" query -
expect_error 'info needs a FILE' "$BK" info
expect_error 'secret key missing or wrong' "$BK" add sip.bf key
expect_error 'secret key missing or wrong' "$BK" add sip.bf key --key-file wrongkey.hex
expect_error 'cannot remove keys' "$BK" remove f.bf user:1
expect_error 'incompatible: sizes differ' "$BK" merge m.bf f.bf g.bf
expect_error 'incompatible: sizes differ' "$BK" merge f.bf f.bf g.bf --force
expect_error 'g.bf is not keyed' "$BK" merge m.bf g.bf sip.bf --key-file key.hex
"$BK" create g64.bf -n 1000 -p 0.001 --hash xxh64 -q
expect_error 'incompatible: hash algorithms differ' "$BK" merge m.bf g.bf g64.bf
# --hash mix64: 8-byte keys mixed as integers, the others as xxh3; not for Parquet
"$BK" create m64.bf -n 1000 -p 0.01 --hash mix64 -q
"$BK" add -q m64.bf 12345678 not-eight-bytes > /dev/null
"$BK" query m64.bf 12345678 not-eight-bytes > out
check "a mix64 filter finds its keys" test "$(wc -l < out)" -eq 2
"$BK" info m64.bf > out
check "info names the mix64 hash" grep -q 'hash: *mix64, seed 0' out
expect_error '--parquet needs xxh64, not --hash mix64' "$BK" create p64.bf -n 100 --kind sbbf --parquet --hash mix64
expect_error 'must be xxh3, siphash, xxh64 or mix64' "$BK" create p64.bf -n 100 --hash md5
expect_error 'already exists (use --force' "$BK" merge a.bf f.bf f.bf
expect_error 'at least two input filters' "$BK" intersect m.bf f.bf
expect_error 'incompatible: sizes differ' "$BK" intersect m.bf f.bf g.bf
expect_error 'incompatible: sizes differ' "$BK" estimate f.bf g.bf
expect_error 'estimate needs two filters' "$BK" estimate f.bf
expect_error "unknown command 'frobnicate'" "$BK" frobnicate
check "no file is created by a failed merge" test ! -e m.bf

# ------------------------------------------------------------------ past the design point
"$BK" create small.bf -n 1000 -p 0.01 -q
head -n 3000 keys.txt | "$BK" add small.bf > out 2> err
check "add past the design point succeeds" test $? -eq 0
check "add past the design point warns exactly once" test "$(grep -c 'past its design point' err)" -eq 1
check "the warning is the only stderr line" test "$(wc -l < err)" -eq 1
"$BK" info --json small.bf > small.json && json_fields small.json
check "info --json status past_design_point" test "$(json_field small.json status)" = past_design_point
check "info says past design point" sh -c "'$BK' info small.bf | grep -q '^status: *past design point'"

# ------------------------------------------------------------------ options a kind does not use
# An option the result cannot honour is an error (nothing written); one it
# can still serve without is a warning.
expect_error 'a fuse8 filter cannot reach -p 0.0001' \
    sh -c "seq 1000 | '$BK' build new.bf --kind fuse8 -p 0.0001"
expect_error 'a cuckoo filter cannot reach -p 0.0001' \
    "$BK" create new.bf -n 100 --kind cuckoo --fingerprint-bits 8 -p 0.0001
expect_error '--expansion applies to scalable filters, not to bloom' \
    "$BK" create new.bf -n 100 --expansion 2
expect_error '--window-seconds applies to window filters, not to cuckoo' \
    "$BK" create new.bf -n 100 --kind cuckoo --window-seconds 60
expect_error '--fingerprint-bits applies to cuckoo filters, not to window' \
    "$BK" size -n 100 --kind window --window-keys 100 --fingerprint-bits 8
expect_error '--bits-per-key applies to bloom, blocked, sbbf, counting, cuckoo, quotient filters, not to fuse16' \
    sh -c "seq 1000 | '$BK' build new.bf --kind fuse16 --bits-per-key 20"
expect_error '--parquet applies to sbbf filters, not to bloom' "$BK" create new.bf -n 100 --parquet
"$BK" create parquet.bf --kind sbbf -n 100000 -p 0.01 --parquet > out 2> err
check "create --kind sbbf --parquet: a power of two bytes (8192 blocks)" \
    grep -q 'm = 2097152 bits (262144 bytes)' out
"$BK" create plain.bf --kind sbbf -n 100000 -p 0.01 > out 2> err
check "create --kind sbbf without --parquet: 4113 blocks" grep -q '(131616 bytes)' out
"$BK" size -n 100000 --parquet > out 2> err
check "size --parquet still shows every kind" test "$(grep -c '(invalid' out)" -le 1
expect_error '--generations must be between 2 and 64, got 1' \
    "$BK" create new.bf -n 100 --kind window --window-keys 100 --generations 1
expect_error '--generations must be between 2 and 64, got 300' \
    "$BK" create new.bf -n 100 --kind window --window-seconds 60 --generations 300
expect_error 'give --window-keys or --window-seconds, not both' \
    "$BK" create new.bf -n 100 --kind window --window-keys 100 --window-seconds 60
"$BK" size -n 100 --window-keys 100 --generations 300 > out 2> err
check "size without --kind: the window row says what is wrong" \
    grep -q '^window .*has 2 to 64 --generations' out
expect_error 'f.bf is not keyed (it hashes with xxh3): --key-file does not apply' \
    "$BK" add f.bf user:1 --key-file key.hex
expect_error 'f.bf is not keyed' "$BK" query f.bf user:1 --key-file key.hex
check "no file is created by a refused option" test ! -e new.bf
seq 1000 | "$BK" build fixed.bf --kind fuse16 -p 0.01 -q > out 2> err
check "build fuse16 -p 0.01 succeeds" test $? -eq 0
check "build fuse16 -p 0.01 warns that -p did not size it" \
    grep -q '^bloomkit: warning: a fuse16 filter.s false-positive rate is fixed at 1.53e-05' err
seq 1000 | "$BK" build fixed.bf --kind xor8 -n 100 --force -q > out 2> err
check "build --kind xor8 -n 100 of 1000 keys warns that -n is not used" \
    grep -q '^bloomkit: warning: -n 100 is not used: a xor8 filter is sized for the 1000 keys' err
seq 1000 | "$BK" build small-build.bf -n 100 -q > out 2> err
check "build -n 100 of 1000 keys succeeds" test $? -eq 0
check "build -n 100 of 1000 keys warns once, as add does" \
    test "$(grep -c '^bloomkit: warning: small-build.bf is past its design point' err)" -eq 1
seq 1000 | "$BK" build right-size.bf -q > out 2> err
check "build without -n: no warning" test ! -s err

# ------------------------------------------------------------------ Parquet
# An sbbf filter out to the bytes a Parquet file stores and back in; the
# header of a 2,048-byte bitset is 15 80 20, then three unions 1c 1c 00 00,
# then the stop byte.
"$BK" create pq.bf --kind sbbf -n 1000 --parquet -q
"$BK" add pq.bf alpha beta > /dev/null
"$BK" parquet-export pq.bf --header > pq.header 2> err
check "parquet-export --header exits 0" test $? -eq 0
check "parquet-export --header: 16 header bytes and the 2048-byte bitset" \
    test "$(wc -c < pq.header)" -eq 2064
check "parquet-export --header: the BloomFilterHeader" \
    test "$(head -c 16 pq.header | od -An -tx1 | tr -d ' \n')" = 1580201c1c00001c1c00001c1c000000
"$BK" parquet-export pq.bf > pq.bitset
check "parquet-export: the bitset follows the header" cmp -s -i 0:16 pq.bitset pq.header
{ printf 'PAR1 column data '; cat pq.header; printf 'more of the file'; } > pq.parquet
"$BK" parquet-import pq-in.bf pq.parquet --header --offset 17 -q > out 2> err
check "parquet-import --header --offset: exits 0 ($(cat err))" test $? -eq 0
"$BK" query -c pq-in.bf alpha beta gamma > out
check "parquet-import: the keys are found" test "$(cat out)" -ge 2
"$BK" parquet-export pq-in.bf > pq.again
check "parquet-import then export: the same bitset" cmp -s pq.again pq.bitset
"$BK" parquet-import pq-bits.bf - -q < pq.bitset
check "parquet-import of a bitset from standard input" \
    sh -c "'$BK' query -q pq-bits.bf alpha"
"$BK" create pq-odd.bf --kind sbbf -n 1000 -q
expect_error 'pq-odd.bf is 1344 bytes: Parquet readers need a power of two' \
    "$BK" parquet-export pq-odd.bf
expect_error 'f.bf is a bloom filter: Parquet stores sbbf filters' "$BK" parquet-export f.bf
"$BK" create pq-seed.bf --kind sbbf -n 1000 --parquet --seed 7 -q
expect_error 'Parquet readers hash with XXH64 and seed 0' "$BK" parquet-export pq-seed.bf
expect_error 'not a valid Parquet BloomFilterHeader (check --offset)' \
    "$BK" parquet-import new.bf pq.parquet --header --offset 16
head -c 1000 pq.header > pq.short
expect_error 'pq.short: the Parquet filter ends early' "$BK" parquet-import new.bf pq.short --header
expect_error 'a Parquet bitset is a multiple of 32 bytes' "$BK" parquet-import new.bf pq.header
{ head -c 3 pq.header; printf '\034\034\000\000\034\054\000\000\034\034\000\000\000'; } > pq.murmur
expect_error 'other than BLOCK, XXHASH and UNCOMPRESSED' \
    "$BK" parquet-import new.bf pq.murmur --header
expect_error 'ends before --offset 99999' "$BK" parquet-import new.bf pq.header --offset 99999
check "no file is created by a failed import" test ! -e new.bf

# ------------------------------------------------------------------ time windows
# The command gives a window in seconds the wall clock (BLOOMKIT_NOW, when
# set, stands in for it).  --window-seconds 2 --generations 3: spans of
# S = 1 s; a key is kept while its age is under 2 s and gone at 3 s.
BLOOMKIT_NOW=1000 "$BK" create tw.bf --kind window --window-seconds 2 --generations 3 -n 100 -q
BLOOMKIT_NOW=1000 "$BK" add tw.bf early > /dev/null
BLOOMKIT_NOW=1001 "$BK" query -q tw.bf early
check "a key is found 1 s later" test $? -eq 0
BLOOMKIT_NOW=1002 "$BK" add tw.bf late > /dev/null
BLOOMKIT_NOW=1003 "$BK" query -q tw.bf early
check "a key of a 2 s window is gone 3 s later, after another add" test $? -eq 1
BLOOMKIT_NOW=1003 "$BK" query -q --mmap tw.bf early
check "... also when the file is mapped" test $? -eq 1
BLOOMKIT_NOW=1003 "$BK" query -q tw.bf late
check "the later key is still found" test $? -eq 0
BLOOMKIT_NOW=1003 "$BK" info --json tw.bf > tw.json && json_fields tw.json
check "info counts only the live key" \
    python3 -c "import sys; sys.exit(not 0.5 < float(sys.argv[1]) < 1.5)" "$(json_field tw.json keys_estimated)"
cp tw.bf tw.bf.orig
BLOOMKIT_NOW=soon expect_error "BLOOMKIT_NOW must be a whole number of seconds, got 'soon'" \
    "$BK" add tw.bf key
rm -f tw.bf.orig
seq 10 | BLOOMKIT_NOW=5000 "$BK" build twb.bf --kind window --window-seconds 2 --generations 3 -q
BLOOMKIT_NOW=5001 "$BK" query -c twb.bf < /dev/null > /dev/null 2>&1
BLOOMKIT_NOW=5001 "$BK" query -c twb.bf 1 2 3 > out
check "build stamps a window's keys with the current time" test "$(cat out)" = 3
# The real clock: a 1 s window, spans of 1 s; gone once 2 s have passed.
"$BK" create rt.bf --kind window --window-seconds 1 --generations 2 -n 100 -q
"$BK" add rt.bf now > /dev/null
"$BK" query -q rt.bf now
check "wall clock: the key is there at once" test $? -eq 0
sleep 2.2
"$BK" query -q rt.bf now
check "wall clock: the key is gone after its window" test $? -eq 1

# ------------------------------------------------------------------ progress line
BLOOMKIT_PROGRESS_DELAY=0 "$BK" query -c f.bf < keys.txt > out 2> err
check "no progress line when stderr is not a terminal" test ! -s err
if command -v script > /dev/null 2>&1 && script -qec true /dev/null > /dev/null 2>&1; then
    BLOOMKIT_PROGRESS_DELAY=0 script -qec "'$BK' query -c f.bf < keys.txt > /dev/null" \
        /dev/null > tty.txt 2>&1
    check "progress line on a terminal" grep -q 'queried [0-9]* keys' tty.txt
    BLOOMKIT_PROGRESS_DELAY=0 script -qec "'$BK' query -q -c f.bf < keys.txt > /dev/null" \
        /dev/null > tty.txt 2>&1
    check "-q silences the progress line" test ! -s tty.txt
fi

# ------------------------------------------------------------------ sub-filters
if "$BK" size --kind scalable -n 10 -p 0.01 > /dev/null 2>&1; then
    "$BK" create s.bf --kind scalable -n 1000 -p 1% > /dev/null 2>&1
    seq 1 10000 | "$BK" add -q s.bf > /dev/null 2>&1
    "$BK" info s.bf > s.txt 2> err
    check "info lists a scalable filter's sub-filters" grep -q '^sub-filters: *4 ' s.txt
    "$BK" info --json s.bf > s.json 2> err
    check "info --json has one sub_filters entry per filter" /usr/bin/python3 -c '
import json, sys
d = json.load(open("s.json"))
subs = d["sub_filters"]
assert len(subs) == d["filters"] == 4
assert [s["capacity"] for s in subs] == [1000, 2000, 4000, 8000]
assert sum(s["keys_added"] for s in subs) == d["keys_added"]
'
fi

echo "$checks checks, $failures failed"
[ $failures -eq 0 ]
