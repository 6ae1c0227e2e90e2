#!/usr/bin/env bash
# tao-submit/bench/probe.sh: what the communication probe gate costs a
# 2-node submission on the local cluster (issue 8).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`:
#   probe_gate_uncached  wall seconds of one `tao-submit` of a 2-node job
#                        line with an empty cache (one probe job runs,
#                        passes, is cached) against the same submission with
#                        --skip-probe (no gate). ratio = ours/baseline.
#   probe_gate_cached    the same with the cache filled (no probe job: one
#                        extra remote command for the cluster name and a
#                        file read) against --skip-probe. ratio = ours/baseline.
#
# Job lines are made by the real pipeline (tao-record open | tao-render |
# tao-redact lint), not timed. Every job runs `true`; they are cancelled and
# their directories removed at the end. Needs the cluster env
# (tests/cluster/up; source /var/tmp/tao-cluster/env). BENCH_ROUNDS (3)
# repeats each measurement and keeps the median.
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${SLURM_HOSTNAME:?source /var/tmp/tao-cluster/env first}"
ROUNDS=${BENCH_ROUNDS:-3}
cargo build --release -q -p tao-submit -p tao-record -p tao-render -p tao-redact
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
work=$(mktemp -d)
export TAO_STATE_DIR=$work/state

host=${SLURM_HOSTNAME%%,*}
port=22
case $host in *:*) port=${host##*:}; host=${host%:*};; esac
ssh_cmd=(ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" "$SLURM_USER@$host")

cleanup() {
  if [ -s "$work/lines.all" ]; then
    "$bin/tao-submit" cancel --wait 10 < "$work/lines.all" > /dev/null 2>&1 || true
    names=$(jq -r .id "$work/lines.all" | paste -sd' ')
    "${ssh_cmd[@]}" "cd \"$SLURM_BASE_RESULTS_DIR\" && for n in $names; do rm -rf jobs/\$n jobs/\$n-probe* results/\$n; done" < /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT
: > "$work/ids"
: > "$work/lines.all"

line() {
  "$bin/tao-record" open --action train --network-arch bench --nodes 2 --gpus-per-node 1 \
    --cpus-per-task 1 --time 00:05:00 --command 'true' \
    | "$bin/tao-render" | "$bin/tao-redact" lint
}

now() { date +%s.%N; }

# One timed submission of a fresh line; $1: extra flags. Prints seconds.
timed() {
  local l out t0 t1
  l=$(line)
  t0=$(now)
  out=$("$bin/tao-submit" "$@" <<<"$l")
  t1=$(now)
  jq -r '.slurm.job_id // empty' <<<"$out" >> "$work/ids"
  jq -c 'del(.error)' <<<"$out" >> "$work/lines.all"
  jq -e '.slurm.job_id' <<<"$out" > /dev/null || { echo "bench: not submitted: $out" >&2; exit 1; }
  echo "$t1 - $t0" | bc -l
}

median() { sort -g | awk '{a[NR]=$1} END {print a[int((NR+1)/2)]}'; }

: > "$work/uncached"; : > "$work/cached"; : > "$work/skip"
for _ in $(seq "$ROUNDS"); do
  rm -rf "$TAO_STATE_DIR/clusters"
  timed >> "$work/uncached"
  timed >> "$work/cached"
  timed --skip-probe >> "$work/skip"
done
u=$(median < "$work/uncached")
c=$(median < "$work/cached")
s=$(median < "$work/skip")
printf 'BENCH|probe_gate_uncached|%.3f s|%.3f s|%.2f|2-node job: one probe job (python3, TCP all-reduce) before sbatch vs --skip-probe; median of %d\n' \
  "$u" "$s" "$(echo "$u / $s" | bc -l)" "$ROUNDS"
printf 'BENCH|probe_gate_cached|%.3f s|%.3f s|%.2f|2-node job, cached nccl.json (no probe job) vs --skip-probe; median of %d\n' \
  "$c" "$s" "$(echo "$c / $s" | bc -l)" "$ROUNDS"
