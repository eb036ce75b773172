#!/bin/sh
# tests/cli/test_query_field.sh BLOOMKIT -- `bloomkit query FILE --field N`.
#
# Run by CTest with the path of the built command.  Checks:
#   1. equivalence with key mode: the rows printed with --field N, cut to
#      their N-th field, are exactly the keys key-mode query prints for the
#      rows' N-th fields in the same order (so rows answer as their keys);
#      -v likewise; the two outputs partition the input (their line counts
#      add up and -c agrees);
#   2. no false negatives: every row whose key was added is printed;
#   3. tab by default, --delimiter C, 'tab', the first and last fields, an
#      empty field, CRLF rows, -0 records;
#   4. rows with fewer than N fields count as absent (-v prints them);
#   5. exit status 1 when no row's key may be present; bad options exit 2
#      with one line on stderr.

set -u
BK=${1:?usage: test_query_field.sh PATH-TO-BLOOMKIT}
case $BK in /*) ;; *) BK=$(pwd)/$BK ;; esac
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-field-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}
same() { # same DESCRIPTION FILE1 FILE2
    cmp -s "$2" "$3" || fail "$1"
}

# Rows "id,customer,comment": 60,000 rows, customers 0..19999, the filter
# holds customers 0..4999 (a 1% Bloom filter: some rows of other customers
# are false positives, which the equivalence check covers).
awk 'BEGIN { for (i = 0; i < 60000; i++) printf "%d,cust%d,note %d\n", i, (i * 7919) % 20000, i % 13 }' > rows.csv
awk 'BEGIN { for (i = 0; i < 5000; i++) print "cust" i }' > keys.txt
"$BK" create -q -n 5000 -p 0.01 customers.bkf && "$BK" add -q customers.bkf < keys.txt ||
    fail "cannot make the filter"

# ------------------------------------------------ 1. same answers as key mode
"$BK" query customers.bkf --field 2 --delimiter , < rows.csv > present.csv
status=$?
[ $status -eq 0 ] || fail "query --field exits $status with rows present"
"$BK" query customers.bkf --field 2 --delimiter , -v < rows.csv > absent.csv
cut -d, -f2 rows.csv > fields.txt
"$BK" query customers.bkf < fields.txt > present_keys.txt
"$BK" query customers.bkf -v < fields.txt > absent_keys.txt
cut -d, -f2 present.csv > got_present_keys.txt
cut -d, -f2 absent.csv > got_absent_keys.txt
same "rows printed by --field answer as their keys" present_keys.txt got_present_keys.txt
same "rows printed by --field -v answer as their keys" absent_keys.txt got_absent_keys.txt
[ $(($(wc -l < present.csv) + $(wc -l < absent.csv))) -eq 60000 ] ||
    fail "present and absent rows do not add up to the input"
sort present.csv absent.csv | cmp -s - "$(sort rows.csv > sorted.csv && echo sorted.csv)" ||
    fail "present and absent rows are not the input's rows"
[ "$("$BK" query customers.bkf --field 2 --delimiter , -c < rows.csv)" = "$(wc -l < present.csv | tr -d ' ')" ] ||
    fail "-c does not count the printed rows"

# ------------------------------------------------ 2. no false negatives
awk -F, 'NR == FNR { k[$1]; next } ($2 in k)' keys.txt rows.csv > true_rows.csv
[ -s true_rows.csv ] || fail "the test data has no matching rows"
awk 'NR == FNR { p[$0]; next } !($0 in p) { missing++ } END { exit missing > 0 }' \
    present.csv true_rows.csv || fail "a row whose key was added is not printed"

# ------------------------------------------------ 3. delimiters and records
printf 'a\tcust1\tx\nb\tnobody\ty\nc\tcust2\n' > tabs.tsv
"$BK" query customers.bkf --field 2 < tabs.tsv > out
printf 'a\tcust1\tx\nc\tcust2\n' > expected
same "tab is the default delimiter" out expected
"$BK" query customers.bkf --field 2 --delimiter tab < tabs.tsv > out
same "--delimiter tab" out expected
printf 'cust3;1\nzz;2\n' | "$BK" query customers.bkf --field 1 --delimiter ';' > out
printf 'cust3;1\n' > expected
same "the first field" out expected
printf '1;2;cust4\n1;2;zz\n' | "$BK" query customers.bkf --field 3 --delimiter ';' > out
printf '1;2;cust4\n' > expected
same "the last field" out expected
printf '1,cust5\r\n2,zz\r\n' | "$BK" query customers.bkf --field 2 --delimiter , > out
printf '1,cust5\n' > expected
same "CRLF rows (the \\r is not part of the last field)" out expected
printf '1,cust6,x\0002,zz,y\0003,cust7\000' | "$BK" query -0 customers.bkf --field 2 --delimiter , > out
printf '1,cust6,x\0003,cust7\000' > expected
same "-0 records" out expected
"$BK" create -q -n 10 empty_key.bkf && "$BK" add -q empty_key.bkf '' || fail "cannot add the empty key"
printf '1,,x\n2,y,x\n' | "$BK" query empty_key.bkf --field 2 --delimiter , > out
printf '1,,x\n' > expected
same "an empty field is the empty key" out expected

# ------------------------------------------------ 4. rows without the field
printf 'cust1,cust1\nonly-one-field\n' | "$BK" query customers.bkf --field 2 --delimiter , -v > out
printf 'only-one-field\n' > expected
same "a row with fewer fields is certainly absent" out expected

# ------------------------------------------------ 5. exit status and errors
printf 'x,nobody\n' | "$BK" query customers.bkf --field 2 --delimiter , > out
[ $? -eq 1 ] || fail "query --field with no row present does not exit 1"
cp customers.bkf before.bkf
for bad in "--field 0" "--field x" "--delimiter ," "--field 1 --delimiter ab" \
           "--field 1 --delimiter="; do
    # shellcheck disable=SC2086
    "$BK" query customers.bkf $bad < rows.csv > out 2> err
    status=$?
    [ $status -eq 2 ] || fail "query $bad exits $status, not 2"
    [ "$(wc -l < err)" -eq 1 ] && grep -q '^bloomkit: ' err || fail "query $bad: not one error line"
    [ ! -s out ] || fail "query $bad prints rows"
done
same "a failed query leaves the filter unchanged" customers.bkf before.bkf

if [ $failures -ne 0 ]; then
    echo "test_query_field: $failures failures" >&2
    exit 1
fi
echo "test_query_field: all checks passed"
