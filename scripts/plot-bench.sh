#!/bin/sh
# plot-bench.sh -- turn bloomkit-bench's CSV into a PNG (gnuplot).
#
#   scripts/plot-bench.sh bench.csv docs/bench.png [int64|str16]
#
# Two panels, ns per query against n (log-log), one line per kind:
#   left:  batch queries (bk_filter_contains_batch, raw keys), absent keys,
#          with the machine's independent random-read time (the floor for one
#          cache line per key) in black, and libbloom (which has no batch form)
#          dashed;
#   right: one raw key per call (bk_filter_contains, hashing included), absent
#          keys, with libbloom's bloom_check, the dependent read time and
#          (where the CSV has it) the keyed read: one key read from the
#          key arrays, hashed, and its line read, one after another.
# Needs gnuplot (Debian: gnuplot-nox).
set -eu

usage() {
    echo "usage: $0 CSV PNG [int64|str16]" >&2
    exit 2
}

[ $# -ge 2 ] || usage
csv=$1
png=$2
keytype=${3:-int64}
[ -r "$csv" ] || { echo "$0: cannot read $csv" >&2; exit 1; }
command -v gnuplot >/dev/null 2>&1 || { echo "$0: gnuplot not found (apt-get install gnuplot-nox)" >&2; exit 1; }

work=$(mktemp -d)
trap 'rm -rf "$work"' EXIT

# One file per kind: n neg_batch neg_raw read_independent read_dependent read_keyed
awk -F, -v keytype="$keytype" -v dir="$work" '
    /^#/ || $1 != keytype { next }
    {
        kind = $3; n = $2
        if (!(kind in seen)) { seen[kind] = 1; order[++kinds] = kind }
        if (!((kind, n) in have)) { have[kind, n] = 1; sizes[kind] = sizes[kind] " " n }
        value[kind, n, $4] = $5
    }
    function get(kind, n, metric) {
        return ((kind, n, metric) in value) ? value[kind, n, metric] : "NaN"
    }
    END {
        for (i = 1; i <= kinds; i++) {
            kind = order[i]
            file = dir "/" i ".dat"
            print kind > (dir "/" i ".name")
            count = split(sizes[kind], list, " ")
            for (j = 1; j <= count; j++) {
                n = list[j]
                print n, get(kind, n, "neg_batch_ns"), get(kind, n, "neg_raw_ns"),
                      get(kind, n, "read_independent_ns"), get(kind, n, "read_dependent_ns"),
                      get(kind, n, "read_keyed_ns") > file
            }
            close(file)
        }
    }' "$csv"

ls "$work"/*.dat >/dev/null 2>&1 || { echo "$0: no $keytype rows in $csv" >&2; exit 1; }

# The reference lines come from the bloom kind's rows (a buffer of its size).
reference=""
for name in "$work"/*.name; do
    if [ "$(cat "$name")" = "bloom" ]; then
        reference=${name%.name}.dat
    fi
done

left=""
right=""
for data in "$work"/*.dat; do
    kind=$(cat "${data%.dat}.name")
    sorted=${data%.dat}.sorted
    sort -n "$data" > "$sorted"
    if awk '$2 != "NaN" { found = 1 } END { exit !found }' "$sorted"; then
        left="$left'$sorted' using 1:2 with linespoints title '$kind' noenhanced, "
    elif [ "$kind" = libbloom ]; then
        left="$left'$sorted' using 1:3 with linespoints dt 2 title 'libbloom (one key per call)', "
    fi
    if awk '$3 != "NaN" { found = 1 } END { exit !found }' "$sorted"; then
        right="$right'$sorted' using 1:3 with linespoints title '$kind' noenhanced, "
    fi
done
if [ -n "$reference" ]; then
    sort -n "$reference" > "$work/reference"
    left="$left'$work/reference' using 1:4 with lines lw 3 lc rgb 'black' title 'random read, independent'"
    right="$right'$work/reference' using 1:5 with lines lw 3 lc rgb 'black' title 'random read, dependent'"
    if awk '$6 != "NaN" { found = 1 } END { exit !found }' "$work/reference"; then
        right="$right, '$work/reference' using 1:6 with lines lw 3 dt 2 lc rgb 'black' title 'one key hashed and its line read'"
    fi
else
    left=${left%, }
    right=${right%, }
fi

gnuplot <<EOF
set terminal pngcairo size 1400,600 font "sans,10"
set output '$png'
set datafile missing 'NaN'
set logscale xy
set grid
set key top left font ",9"
set xlabel 'keys in the filter (n)'
set ylabel 'ns per query'
set multiplot layout 1,2 title "bloomkit-bench, $keytype keys, absent-key queries at 1% FPR"
set title 'batch (bk\_filter\_contains\_batch, hashing included)'
plot $left
set title 'one raw key per call (bk\_filter\_contains; libbloom: bloom\_check)'
plot $right
unset multiplot
EOF
echo "wrote $png"
