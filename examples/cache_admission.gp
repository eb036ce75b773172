# examples/cache_admission.gp -- plots cache_admission's --data file.
#   gnuplot -e "data='build/cache/cache_admission.dat'; out='docs/cache-admission.png'" \
#       examples/cache_admission.gp
# Columns: cache% MiB W policy hit_ratio byte_hit_ratio origin_GB writes_GB
# doorkeeper_KiB one_hit_admitted (one line per cache size and policy).
if (!exists("data")) data = 'cache_admission.dat'
if (!exists("out")) out = 'cache-admission.png'
rows(policy) = sprintf("< awk '$4 == \"%s\"' '%s'", policy, data)
set terminal pngcairo size 1200,450 font ",10"
set output out
set multiplot layout 1,3 title "LRU cache in front of an origin: Zipf(0.8) over 10^6 objects + 40% one-hit wonders (cache\\_admission defaults)"
set logscale x
set xrange [0.08:12]
set xlabel "cache size (% of the catalogue's bytes)"
set key top left
set grid
set ylabel "hit ratio"
plot rows("none") using 1:5 with linespoints title "admit every miss", \
     rows("window") using 1:5 with linespoints title "second request: window filter", \
     rows("exact") using 1:5 with linespoints dashtype 2 title "second request: exact set"
set ylabel "byte hit ratio"
plot rows("none") using 1:6 with linespoints title "admit every miss", \
     rows("window") using 1:6 with linespoints title "window filter", \
     rows("exact") using 1:6 with linespoints dashtype 2 title "exact set"
set ylabel "doorkeeper memory (KiB)"
set logscale y
plot rows("window") using 1:9 with linespoints title "window filter (1% FPR)", \
     rows("exact") using 1:9 with linespoints dashtype 2 title "exact set (64-bit ids)"
unset multiplot
