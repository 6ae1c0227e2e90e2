#!/usr/bin/env bash
# tao-classify benchmark (make bench): classify a generated 1 GiB log against
# GNU `grep -E -f` with the same patterns, in the same run, and show that
# peak memory is flat in log size (100 MB vs 1 GiB).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`:
#   classify_1GiB    seconds (best of 3), grep -E -f seconds, grep/ours (>= 1: at least as fast)
#   classify_100MB   the same on 100 MB
#   throughput_1GiB  MB/s ours, MB/s grep, ratio
#   rss_kib          peak RSS of ours on 1 GiB, on 100 MB, ratio (flat: ~1.0)
#   grep_rss_kib     the same for grep, for comparison
# Needs: cargo, python3, jq, GNU grep, /usr/bin/time (apt-get install -y time).
# BENCH_DIR (default /var/tmp/tao-classify-bench) holds the generated logs.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
root=$(cd "$here/../.." && pwd)
dir=${BENCH_DIR:-/var/tmp/tao-classify-bench}
mkdir -p "$dir"
[ -x /usr/bin/time ] || { echo "bench: /usr/bin/time missing: apt-get install -y time" >&2; exit 1; }

cargo build --release -q -p tao-classify --manifest-path "$root/Cargo.toml"
bin="$root/target/release/tao-classify"

# The same patterns for both: the catalogue's regexes, with Rust-only group
# syntax rewritten for ERE ((?P<name>...) and (?:...) -> (...)).
"$bin" --list-rules | jq -r .pattern | sed -E 's/\(\?P<[A-Za-z0-9_]+>/(/g; s/\(\?:/(/g' >"$dir/patterns.ere"
# Check that grep reads every pattern.
grep -E -f "$dir/patterns.ere" /dev/null || [ $? -eq 1 ]

line='{"id":"tao-20261129-bench0","state":"ERROR","slurm":{"native_state":"FAILED","exit_code":"1:0","nodes":"gpu-a17"},"attempt":1}'

gen() { # size name
  [ -f "$dir/$2" ] && [ "$(stat -c %s "$dir/$2")" = "$1" ] || python3 "$here/gen_log.py" "$dir/$2" "$1"
  cat "$dir/$2" >/dev/null # warm the page cache
}

# measure CMD...: prints "<seconds> <maxrss_kib>" (best time of 3 runs, max RSS seen)
measure() {
  local best="" rss=0 t r out
  for _ in 1 2 3; do
    /usr/bin/time -f '%e %M' -o "$dir/time.out" "$@" <"$dir/line.json" >/dev/null 2>&1
    out=$(tail -1 "$dir/time.out")
    t=${out% *}; r=${out#* }
    if [ -z "$best" ] || awk -v a="$t" -v b="$best" 'BEGIN{exit !(a<b)}'; then best=$t; fi
    [ "$r" -gt "$rss" ] && rss=$r
  done
  echo "$best $rss"
}

printf '%s\n' "$line" >"$dir/line.json"

declare -A T R GT GR
for spec in "104857600 log-100MB" "1073741824 log-1GiB"; do
  set -- $spec
  gen "$1" "$2"
  # sanity: ours must find the Xid 79 line; grep must find it too
  printf '%s\n' "$line" | "$bin" --log "$dir/$2" | jq -e '.classification.rule == "xid.hardware"' >/dev/null
  LC_ALL=C grep -E -c -f "$dir/patterns.ere" "$dir/$2" >/dev/null
  read -r t r < <(measure "$bin" --log "$dir/$2")
  read -r gt gr < <(measure env LC_ALL=C grep -E -f "$dir/patterns.ere" "$dir/$2")
  T[$2]=$t; R[$2]=$r; GT[$2]=$gt; GR[$2]=$gr
done

ratio() { awk -v a="$1" -v b="$2" 'BEGIN{ if (b == 0) b = 0.001; printf "%.2f", a / b }'; }
mbps() { awk -v s="$1" -v t="$2" 'BEGIN{ if (t == 0) t = 0.001; printf "%.0f", s / 1e6 / t }'; }
n=$(wc -l <"$dir/patterns.ere")
echo "BENCH|classify_1GiB|${T[log-1GiB]}|${GT[log-1GiB]}|$(ratio "${GT[log-1GiB]}" "${T[log-1GiB]}")|seconds, best of 3; baseline LC_ALL=C grep -E -f ($n patterns); ratio = grep/ours (>=1: at least as fast)"
echo "BENCH|classify_100MB|${T[log-100MB]}|${GT[log-100MB]}|$(ratio "${GT[log-100MB]}" "${T[log-100MB]}")|seconds, best of 3"
echo "BENCH|throughput_1GiB|$(mbps 1073741824 "${T[log-1GiB]}")|$(mbps 1073741824 "${GT[log-1GiB]}")|$(ratio "${GT[log-1GiB]}" "${T[log-1GiB]}")|MB/s, one core"
echo "BENCH|rss_kib|${R[log-1GiB]}|${R[log-100MB]}|$(ratio "${R[log-1GiB]}" "${R[log-100MB]}")|peak RSS of tao-classify: 1 GiB log vs 100 MB log (flat: ~1.00)"
echo "BENCH|grep_rss_kib|${GR[log-1GiB]}|${GR[log-100MB]}|$(ratio "${GR[log-1GiB]}" "${GR[log-100MB]}")|peak RSS of grep: 1 GiB vs 100 MB, for comparison"
