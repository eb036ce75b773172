#!/bin/sh
# bench-targets.sh -- hold a bloomkit-bench CSV against the project's speed
# targets and print MET or MISS for each, as measured in that run:
#
#   scripts/bench-targets.sh bench.csv
#
# The targets (single = one raw key per call, hashing included, as
# libbloom's bloom_check; the inline view counts as a single query too;
# batch = bk_filter_contains_batch over bk_key descriptors, packed =
# bk_filter_contains_packed, hashes = bk_filter_contains_hash_batch):
#
#   bloom >= 1.5x libbloom, single, present and absent keys (same m and k),
#       at every n
#   blocked and sbbf batches <= 1.1x one random line read in the filter's
#       own memory (rd own; rd ind where not measured), each batch form,
#       n >= 1e7
#   blocked and sbbf >= 6x libbloom in batches, n >= 1e8
#   every kind >= 5x libbloom single, at n = 1e6, with an FPR not above
#       libbloom's by more than three standard deviations of the difference
#       of two binomial estimates over the run's absent keys
#   blocked insert <= 12 ns per key at n = 1e7 (the faster insert form)
#
# and, for information, what MADV_HUGEPAGE gives (the :4k rows).  Needs
# only awk.  Exit status 0 whatever the verdicts; 1 if the CSV is missing.
set -eu

[ $# -eq 1 ] || { echo "usage: $0 BENCH.csv" >&2; exit 2; }
[ -r "$1" ] || { echo "$0: cannot read $1" >&2; exit 1; }

awk -F, '
# The absent keys a block was queried with: from the header comment
# "# settings: ..., up to P present and A absent queries".
/^# settings:/ {
    if (match($0, /and [0-9]+ absent/)) absent = substr($0, RSTART + 4, RLENGTH - 11) + 0
    next
}
/^#/ || $1 == "keytype" || $1 == "none" { next }
{
    block = $1 SUBSEP $2
    if (!(block in seen_block)) { seen_block[block] = 1; blocks[++block_count] = block }
    if (!((block, $3) in seen_row)) {
        seen_row[block, $3] = 1
        rows[block, ++row_count[block]] = $3
    }
    value[block, $3, $4] = $5
}

function has(b, kind, metric) { return (b, kind, metric) in value }
function get(b, kind, metric) { return has(b, kind, metric) ? value[b, kind, metric] + 0 : "nan" }
# A row counts when its filter was made (bytes > 0), as in the tables.
function row_ok(b, kind) { return has(b, kind, "bytes") && get(b, kind, "bytes") > 0 }
# a / b, or "nan" when either is missing
function ratio(a, b) { return (a == "nan" || b == "nan" || b == 0) ? "nan" : a / b }
function at_least(x, bound) { return x != "nan" && x >= bound }
function at_most(x, bound) { return x != "nan" && x <= bound }
function f2(x) { return x == "nan" ? "nan" : sprintf("%.2f", x) }
function f1(x) { return x == "nan" ? "nan" : sprintf("%.1f", x) }
function f3(x) { return x == "nan" ? "nan" : sprintf("%.3f", x) }
function verdict(met) { return met ? "MET " : "MISS" }
function keytype(b) { split(b, part, SUBSEP); return part[1] }
function size(b) { split(b, part, SUBSEP); return part[2] + 0 }

function bloom_vs_libbloom(b,    pos, neg, vpos, vneg, met) {
    if (!row_ok(b, "bloom") || !row_ok(b, "libbloom")) return
    pos = ratio(get(b, "libbloom", "pos_raw_ns"), get(b, "bloom", "pos_raw_ns"))
    neg = ratio(get(b, "libbloom", "neg_raw_ns"), get(b, "bloom", "neg_raw_ns"))
    vpos = ratio(get(b, "libbloom", "pos_raw_ns"), get(b, "bloom", "pos_view_ns"))
    vneg = ratio(get(b, "libbloom", "neg_raw_ns"), get(b, "bloom", "neg_view_ns"))
    met = (at_least(pos, 1.5) && at_least(neg, 1.5)) || (at_least(vpos, 1.5) && at_least(vneg, 1.5))
    printf "  [%s] bloom >= 1.5x libbloom, %s n=%-9s  m,k ours %s,%s libbloom %s,%s:" \
           " +%sx -%sx single (call), +%sx -%sx (view); +%sx -%sx batch;" \
           " insert (batch, raw keys) %sx\n",
           verdict(met), keytype(b), size(b), get(b, "bloom", "m_bits"), get(b, "bloom", "k"),
           get(b, "libbloom", "m_bits"), get(b, "libbloom", "k"), f2(pos), f2(neg), f2(vpos),
           f2(vneg), f2(ratio(get(b, "libbloom", "pos_raw_ns"), get(b, "bloom", "pos_batch_ns"))),
           f2(ratio(get(b, "libbloom", "neg_raw_ns"), get(b, "bloom", "neg_batch_ns"))),
           f2(ratio(get(b, "libbloom", "insert_single_ns"), get(b, "bloom", "insert_batch_ns")))
}

function batch_vs_read(b, kind,    f, forms, labels, pos, neg, floor, sp, sn) {
    if (!row_ok(b, kind) || size(b) < 10000000) return
    split("batch packed_batch hash_batch", forms, " ")
    split("keys|packed keys|hashes", labels, "|")
    floor = has(b, kind, "read_own_ns") ? get(b, kind, "read_own_ns") : get(b, kind, "read_independent_ns")
    for (f = 1; f <= 3; f++) {
        pos = get(b, kind, "pos_" forms[f] "_per_read")
        neg = get(b, kind, "neg_" forms[f] "_per_read")
        printf "  [%s] %-7s batch <= 1.1x random read, %s n=%-9s: %-11s +%sx -%sx of" \
               " %s ns (rd own; rd ind %s)\n",
               verdict(at_most(pos, 1.1) && at_most(neg, 1.1)), kind, keytype(b), size(b),
               labels[f], f2(pos), f2(neg), f1(floor), f1(get(b, kind, "read_independent_ns"))
    }
    if (row_ok(b, "libbloom") && size(b) >= 100000000) {
        sp = ratio(get(b, "libbloom", "pos_raw_ns"), get(b, kind, "pos_batch_ns"))
        sn = ratio(get(b, "libbloom", "neg_raw_ns"), get(b, kind, "neg_batch_ns"))
        printf "  [%s] %-7s >= 6x libbloom, %s n=%-9s: +%sx -%sx (batch)\n",
               verdict(at_least(sp, 6) && at_least(sn, 6)), kind, keytype(b), size(b), f2(sp), f2(sn)
    }
}

function single_queries(b,    i, kind, lpos, lneg, pos, neg, vpos, vneg, has_view, p, noise,
                         accurate, fast, view) {
    if (!row_ok(b, "libbloom") || size(b) != 1000000) return
    lpos = get(b, "libbloom", "pos_raw_ns"); lneg = get(b, "libbloom", "neg_raw_ns")
    for (i = 1; i <= row_count[b]; i++) {
        kind = rows[b, i]
        if (kind == "libbloom" || !row_ok(b, kind) || index(kind, ":")) continue
        pos = ratio(lpos, get(b, kind, "pos_raw_ns")); neg = ratio(lneg, get(b, kind, "neg_raw_ns"))
        vpos = ratio(lpos, get(b, kind, "pos_view_ns")); vneg = ratio(lneg, get(b, kind, "neg_view_ns"))
        has_view = vpos != "nan" && vneg != "nan"
        p = get(b, "libbloom", "fpr")
        noise = 3 * sqrt(2 * p * (1 - p) / absent)
        accurate = get(b, kind, "fpr") <= p + noise
        fast = (at_least(pos, 5) && at_least(neg, 5)) || (has_view && at_least(vpos, 5) && at_least(vneg, 5))
        view = has_view ? sprintf(" (call), +%sx -%sx (view)", f2(vpos), f2(vneg)) : ""
        printf "  [%s] %-9s single query >= 5x libbloom, %s n=1e6: +%sx -%sx%s, FPR %s%% %s" \
               " libbloom'"'"'s %s%% (+-%s); 5x needs %s / %s ns, one hashed key and its" \
               " line read take %s ns here\n",
               verdict(fast && accurate), kind, keytype(b), f2(pos), f2(neg), view,
               f3(get(b, kind, "fpr") * 100), accurate ? "~<=" : ">", f3(p * 100), f3(noise * 100),
               f1(lpos / 5), f1(lneg / 5), f1(get(b, kind, "read_keyed_ns"))
    }
}

function inserts(b,    one, batch, best) {
    if (!row_ok(b, "blocked") || size(b) != 10000000) return
    one = get(b, "blocked", "insert_single_ns"); batch = get(b, "blocked", "insert_batch_ns")
    best = (one != "nan" && (batch == "nan" || one < batch)) ? one : batch
    printf "  [%s] blocked insert <= 12 ns, %s n=1e7: %s ns one at a time (hashed)," \
           " %s ns batch (raw keys)\n", verdict(at_most(best, 12)), keytype(b), f1(one), f1(batch)
}

function hugepages(b,    i, names, kind, small) {
    split("bloom blocked", names, " ")
    for (i = 1; i <= 2; i++) {
        kind = names[i]; small = kind ":4k"
        if (!row_ok(b, kind) || !row_ok(b, small)) continue
        printf "  [info] MADV_HUGEPAGE, %-7s %s n=%-9s: -batch %s -> %s ns (%sx)," \
               " +batch %s -> %s ns, random read dep %s -> %s, ind %s -> %s ns" \
               " (%s MiB huge)\n",
               kind, keytype(b), size(b), f1(get(b, small, "neg_batch_ns")),
               f1(get(b, kind, "neg_batch_ns")),
               f2(ratio(get(b, small, "neg_batch_ns"), get(b, kind, "neg_batch_ns"))),
               f1(get(b, small, "pos_batch_ns")), f1(get(b, kind, "pos_batch_ns")),
               f1(get(b, small, "read_dependent_ns")), f1(get(b, kind, "read_dependent_ns")),
               f1(get(b, small, "read_independent_ns")), f1(get(b, kind, "read_independent_ns")),
               has(b, kind, "huge_mb") ? sprintf("%.0f", get(b, kind, "huge_mb")) : "nan"
    }
}

END {
    print "== Speed targets; MET/MISS as measured in this run.  single = one raw key per"
    print "   call (hashing included, as libbloom'"'"'s bloom_check); batch = bk_filter_contains_batch"
    print "   (keys: bk_key array; packed keys: bk_filter_contains_packed; hashes: precomputed)"
    for (i = 1; i <= block_count; i++) bloom_vs_libbloom(blocks[i])
    for (i = 1; i <= block_count; i++) { batch_vs_read(blocks[i], "blocked"); batch_vs_read(blocks[i], "sbbf") }
    for (i = 1; i <= block_count; i++) single_queries(blocks[i])
    for (i = 1; i <= block_count; i++) inserts(blocks[i])
    for (i = 1; i <= block_count; i++) hugepages(blocks[i])
}' "$1"
