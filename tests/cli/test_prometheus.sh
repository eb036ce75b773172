#!/bin/sh
# tests/cli/test_prometheus.sh BLOOMKIT -- `bloomkit info --prometheus`.
#
# Run by CTest with the path of the built command.  The output is checked by
# tests/cli/prometheus_check.py (the text format's grammar, HELP/TYPE before
# samples, one TYPE per family, label escaping, UTF-8); the checker is first
# shown to reject malformed input, so that its acceptance means something.
# Then the figures: each sample equals the field of `info --json` for the
# same file, paths with a quote, a backslash, a newline and a byte that is
# not UTF-8 come back as their labels, an overfilled filter has
# past_design_point 1 and a fresh one 0, and an unreadable file gives
# load_success 0 and exit status 2 while the others are still written.

set -u
BK=${1:?usage: test_prometheus.sh PATH-TO-BLOOMKIT}
case $BK in /*) ;; *) BK=$(pwd)/$BK ;; esac
CHECKER=$(cd "$(dirname "$0")" && pwd)/prometheus_check.py
PYTHON=${PYTHON:-$(command -v /usr/bin/python3 || command -v python3)}
WORK=$(mktemp -d "${TMPDIR:-/tmp}/bloomkit-prometheus-test.XXXXXX") || exit 1
trap 'rm -rf "$WORK"' EXIT
cd "$WORK" || exit 1

failures=0
fail() {
    echo "FAIL: $*" >&2
    failures=$((failures + 1))
}

# ------------------------------------------------ the checker rejects bad input
reject() { # reject DESCRIPTION TEXT
    printf '%b' "$2" > bad.prom
    if "$PYTHON" "$CHECKER" bad.prom > /dev/null 2>&1; then
        fail "the checker accepts $1"
    fi
}
reject "an unescaped quote" '# TYPE m gauge\nm{file="a"b"} 1\n'
reject "an unknown escape" '# TYPE m gauge\nm{file="a\\tb"} 1\n'
reject "TYPE after the samples" 'm 1\n# TYPE m gauge\n'
reject "two TYPE lines" '# TYPE m gauge\n# TYPE m gauge\nm 1\n'
reject "a family split in two" '# TYPE m gauge\nm 1\n# TYPE n gauge\nn 1\nm 2\n'
reject "a bad value" '# TYPE m gauge\nm 1,5\n'
reject "a bad metric name" '# TYPE m gauge\n1m 1\n'
reject "a missing final newline" '# TYPE m gauge\nm 1'
reject "bytes that are not UTF-8" '# TYPE m gauge\nm{file="\377"} 1\n'
printf '# HELP m x\n# TYPE m gauge\nm{a="q\\"\\\\\\n"} 1.5e-3\nm NaN\n' > good.prom
"$PYTHON" "$CHECKER" good.prom > /dev/null || fail "the checker rejects a valid file"

# ------------------------------------------------ filters
awk 'BEGIN { for (i = 0; i < 2000; i++) print "key:" i }' > keys.txt
"$BK" create -q -n 2000 fresh.bkf && "$BK" add -q fresh.bkf < keys.txt ||
    fail "cannot make fresh.bkf"
"$BK" create -q -n 500 full.bkf && "$BK" add -q full.bkf < keys.txt 2> /dev/null ||
    fail "cannot make full.bkf"
weird=$(printf 'we"ird\\na\nme\377.bkf')
"$BK" build -q --kind fuse8 "$weird" < keys.txt || fail "cannot make the oddly named filter"
echo "not a filter" > junk.bkf

"$BK" info --prometheus fresh.bkf full.bkf "$weird" > out.prom 2> err
status=$?
[ $status -eq 0 ] || fail "info --prometheus exits $status on good files"
[ ! -s err ] || fail "info --prometheus writes to stderr on good files: $(cat err)"
"$PYTHON" "$CHECKER" out.prom > samples.json || fail "the output does not parse"

for file in fresh.bkf full.bkf "$weird"; do
    "$BK" info --json "$file" > "info-$(printf '%s' "$file" | od -An -tx1 | tr -d ' \n').json" ||
        fail "info --json $file"
done

"$PYTHON" - "$weird" <<'EOF' || fail "the samples do not match info --json"
import json, os, sys
samples = json.load(open("samples.json"))
fields = {
    "bloomkit_filter_fill_ratio": "fill_ratio",
    "bloomkit_filter_design_fill_ratio": "design_fill_ratio",
    "bloomkit_filter_keys_estimated": "keys_estimated",
    "bloomkit_filter_keys_added": "keys_added",
    "bloomkit_filter_capacity_keys": "capacity",
    "bloomkit_filter_fpr": "current_fpr",
    "bloomkit_filter_design_fpr": "target_fpr",
    "bloomkit_filter_bytes": "bytes",
}
problems = []
files = {"fresh.bkf": b"fresh.bkf", "full.bkf": b"full.bkf",
         'we"ird\\na\nme\ufffd.bkf': sys.argv[1].encode("utf-8", "surrogateescape")}
for label, raw in files.items():
    # (info --json writes the path's bytes as they are: read them leniently)
    info = json.loads(open("info-%s.json" % raw.hex(), "rb").read().decode("utf-8", "replace"))
    mine = {n: (l, v) for n, l, v in samples if l.get("file") == label}
    for metric, field in fields.items():
        if metric not in mine:
            problems.append("%s: no %s" % (label, metric))
            continue
        labels, value = mine[metric]
        if labels.get("kind") != info["kind"]:
            problems.append("%s: kind %s" % (label, labels.get("kind")))
        if abs(value - info[field]) > 1e-9 * max(1.0, abs(info[field])):
            problems.append("%s: %s = %s, info says %s" % (label, metric, value, info[field]))
    past = mine.get("bloomkit_filter_past_design_point", (None, None))[1]
    if past != (1.0 if info["status"] == "past_design_point" else 0.0):
        problems.append("%s: past_design_point %s, status %s" % (label, past, info["status"]))
    if mine.get("bloomkit_filter_load_success", (None, None))[1] != 1.0:
        problems.append("%s: load_success is not 1" % label)
expected_status = {"fresh.bkf": 0.0, "full.bkf": 1.0}
for label, flag in expected_status.items():
    got = [v for n, l, v in samples
           if n == "bloomkit_filter_past_design_point" and l["file"] == label]
    if got != [flag]:
        problems.append("%s: past_design_point %s, expected %s" % (label, got, flag))
for problem in problems:
    print(problem, file=sys.stderr)
sys.exit(1 if problems else 0)
EOF

# ------------------------------------------------ an unreadable file
"$BK" info --prometheus fresh.bkf junk.bkf missing.bkf > out2.prom 2> err
status=$?
[ $status -eq 2 ] || fail "info --prometheus with unreadable files exits $status, not 2"
[ "$(wc -l < err)" -eq 2 ] || fail "expected one error line per unreadable file: $(cat err)"
"$PYTHON" "$CHECKER" out2.prom > samples2.json || fail "the output with unreadable files does not parse"
"$PYTHON" - <<'EOF' || fail "unreadable files are not reported as load_success 0"
import json, sys
samples = json.load(open("samples2.json"))
load = {l["file"]: v for n, l, v in samples if n == "bloomkit_filter_load_success"}
others = {l["file"] for n, l, v in samples if n != "bloomkit_filter_load_success"}
ok = load == {"fresh.bkf": 1.0, "junk.bkf": 0.0, "missing.bkf": 0.0} and others == {"fresh.bkf"}
sys.exit(0 if ok else 1)
EOF

# ------------------------------------------------ usage errors
"$BK" info --prometheus --json fresh.bkf > out 2> err
[ $? -eq 2 ] && [ "$(wc -l < err)" -eq 1 ] || fail "--prometheus with --json is not one error"
"$BK" info --prometheus > out 2> err
[ $? -eq 2 ] || fail "--prometheus without a FILE is not an error"

if [ $failures -ne 0 ]; then
    echo "test_prometheus: $failures failures" >&2
    exit 1
fi
echo "test_prometheus: all checks passed"
