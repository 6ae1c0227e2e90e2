#!/usr/bin/env bash
# tao-poll/bench/run.sh: benchmarks of tao-poll against the local cluster (make bench).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`, all measured
# in this one run on this machine:
#   poll_1000_vs_1        wall seconds of one `tao-poll` over 1,000 job lines
#                         (ours) against one over 1 job line (baseline), best of
#                         3 each; ratio = ours/baseline; target <= 2.
#   poll_1000_final_vs_1  the same after cancelling the 1,000 jobs: squeue lists
#                         them in a final state, so sacct is asked for all of
#                         them too; target <= 2.
#   poll_1000_vs_ssh_loop wall seconds of that 1,000-job poll against a loop of
#                         one `ssh host sacct -j ID` per job, measured on a sample
#                         of BENCH_SAMPLE jobs and scaled to 1,000;
#                         ratio = baseline/ours (>1: we are faster).
#   poll_1000_handshakes  SSH handshakes of the 1,000-job poll (ours) against
#                         the number of login hosts (baseline); target ratio 1.
#
# The 1,000 jobs are real: submitted held (`sbatch --hold --wrap true`, never
# run, no resources used) as the cluster user, cancelled at the end; lines
# carry a job dir so nothing is skipped. Environment: BENCH_JOBS (default
# 1000), BENCH_SAMPLE (default 20). Needs the cluster env (tests/cluster/up).
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${SLURM_HOSTNAME:?source /var/tmp/tao-cluster/env first (make bench does)}"
N=${BENCH_JOBS:-1000}
SAMPLE=${BENCH_SAMPLE:-20}
cargo build --release -q -p tao-poll
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/tao-poll
work=$(mktemp -d)
ids_file=$work/ids
cleanup() {
  if [ -s "$ids_file" ]; then
    # shellcheck disable=SC2046
    scancel $(cat "$ids_file") 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

host=${SLURM_HOSTNAME%%,*}
port=22
case $host in *:*) port=${host##*:}; host=${host%:*};; esac

# Submit N held jobs in one ssh session (a loop on the login node).
ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" "$SLURM_USER@$host" \
  "for i in \$(seq $N); do sbatch --parsable --hold --job-name=tao-poll-bench --output=/dev/null --wrap true || exit 1; done" > "$ids_file"
[ "$(wc -l < "$ids_file")" -eq "$N" ] || { echo "bench: submitted $(wc -l < "$ids_file") of $N jobs" >&2; exit 1; }

base=${SLURM_BASE_RESULTS_DIR:-/tmp}
awk -v b="$base" '{printf "{\"id\":\"bench-%d\",\"storage\":{\"job_dir\":\"%s/jobs/bench-%d\",\"results_dir\":\"%s/results/bench-%d\"},\"slurm\":{\"job_id\":\"%s\"}}\n", NR, b, NR, b, NR, $1}' "$ids_file" > "$work/lines"
head -n 1 "$work/lines" > "$work/one"

now() { date +%s.%N; }
best_of() { # best_of N FILE: best wall time of N polls of FILE's lines
  local best="" t0 t1 d
  for _ in $(seq "$1"); do
    t0=$(now)
    "$bin" --stats < "$2" > "$work/out" 2> "$work/err"
    t1=$(now)
    d=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
  done
  echo "$best"
}

one=$(best_of 3 "$work/one")
many=$(best_of 3 "$work/lines")
lines_out=$(wc -l < "$work/out")
pending=$(grep -c '"state":"PENDING"' "$work/out" || true)
handshakes=$(sed -n 's/.*handshakes=\([0-9]*\).*/\1/p' "$work/err" | tail -n 1)
[ "$lines_out" -eq "$N" ] || { echo "bench: $lines_out lines out of $N" >&2; exit 1; }

# Phase 2: cancel them all; squeue still lists them (MinJobAge) in a final
# state, so sacct is asked too (exit codes, annotations) for all 1,000.
ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" "$SLURM_USER@$host" \
  "scancel $(tr '\n' ' ' < "$ids_file")"
deadline=$((SECONDS + 120))
until [ "$(sacct -n -X -P -j "$(paste -sd, "$ids_file")" -o State 2>/dev/null | grep -c CANCELLED)" -ge "$N" ]; do
  [ "$SECONDS" -lt "$deadline" ] || { echo "bench: sacct did not show $N cancelled jobs in 120 s" >&2; exit 1; }
  sleep 1
done
one_f=$(best_of 3 "$work/one")
many_f=$(best_of 3 "$work/lines")
cancelled=$(grep -c '"state":"CANCELED"' "$work/out" || true)

# Baseline: one ssh process + sacct per job, on a sample.
t0=$(now)
head -n "$SAMPLE" "$ids_file" | while read -r id; do
  ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" \
    "$SLURM_USER@$host" "sacct -P -n -X -j $id -o JobIDRaw,State" > /dev/null
done
t1=$(now)
loop=$(echo "($t1 - $t0) * $N / $SAMPLE" | bc -l)

fmt() { printf '%.3f' "$1"; }
printf 'BENCH|poll_%d_vs_1|%s|%s|%s|seconds, best of 3; %d/%d PENDING; target ratio <= 2\n' \
  "$N" "$(fmt "$many")" "$(fmt "$one")" "$(fmt "$(echo "$many / $one" | bc -l)")" "$pending" "$N"
printf 'BENCH|poll_%d_final_vs_1|%s|%s|%s|seconds, best of 3; squeue+sacct for all; %d/%d CANCELED; target ratio <= 2\n' \
  "$N" "$(fmt "$many_f")" "$(fmt "$one_f")" "$(fmt "$(echo "$many_f / $one_f" | bc -l)")" "$cancelled" "$N"
printf 'BENCH|poll_%d_vs_ssh_loop|%s|%s|%s|seconds; baseline = %d x (ssh host sacct -j ID) measured on %d, scaled; ratio = baseline/ours\n' \
  "$N" "$(fmt "$many")" "$(fmt "$loop")" "$(fmt "$(echo "$loop / $many" | bc -l)")" "$N" "$SAMPLE"
printf 'BENCH|poll_%d_handshakes|%s|1|%s|ssh handshakes per run for 1 login host; target 1\n' \
  "$N" "${handshakes:-?}" "${handshakes:-?}"
