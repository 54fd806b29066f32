# bench_lib.sh: what the benchmark scripts share (sourced, not run): the
# median and spread of samples, and ratios of medians. Samples are CSV rows
# KEY1,KEY2,FIGURE,ROUND,VALUE after a header line.

# medians RAW STATS: one row "KEY1,KEY2,FIGURE,MEDIAN,MIN,MAX,N" per key and
# figure of RAW into STATS (empty values left out); med and ratio read STATS.
medians() {
	stats=$2
	tail -n +2 "$1" | awk -F, '$5 != "" {print $1 "," $2 "," $3}' | sort -u |
		while IFS=, read -r a b fig; do
			awk -F, -v a="$a" -v b="$b" -v f="$fig" '$1 == a && $2 == b && $3 == f && $5 != "" {print $5}' "$1" |
				sort -g | awk -v k="$a,$b,$fig" '{x[NR] = $1}
				END {m = NR % 2 ? x[(NR + 1) / 2] : (x[NR / 2] + x[NR / 2 + 1]) / 2
				     printf "%s,%g,%g,%g,%d\n", k, m, x[1], x[NR], NR}'
		done > "$stats"
}
# med KEY1 KEY2 FIGURE: its median (empty if none).
med() { awk -F, -v k="$1,$2,$3" '$1 "," $2 "," $3 == k {print $4}' "$stats"; }
# The pass barrier the bench processes' hooks call (start_together.sh PREFIX N).
export BENCH_START_TOGETHER="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)/start_together.sh"
# ratio A B: A / B to two places, "-" when either is missing.
ratio() { awk -v a="$1" -v b="$2" 'BEGIN {if (a != "" && b > 0) printf "%.2f", a / b; else printf "-"}'; }
