#!/usr/bin/env bash
# tao-poll/bench/progress.sh: the progress read of tao-poll (make bench).
#
# Prints `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>` lines, measured in
# this one run:
#   poll_progress_10000_vs_1  wall seconds of one `tao-poll` over 10,000
#                             RUNNING job lines with their progress (ours)
#                             against one over 1 such line (baseline), best of
#                             3 each; ratio = ours/baseline; target <= 3.
#   poll_progress_round_trips remote commands of the 10,000-job poll (ours)
#                             against the 1-job poll (baseline); target 1:
#                             the progress of every job rides in one command
#                             per login host.
#
# The 2-node test cluster cannot run 10,000 jobs at once, so squeue's reply
# is replayed (10,000 RUNNING rows, --replay-squeue) while every job's
# status.json is real: written under $SLURM_BASE_RESULTS_DIR on the
# cluster's shared storage (20 TAO epoch records each, about 6 KB) and read
# over SSH from the login host (hidden --bench-files-over-ssh). Environment:
# BENCH_PROGRESS_JOBS (default 10000). Needs the cluster env (tests/cluster/up).
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${SLURM_HOSTNAME:?source /var/tmp/tao-cluster/env first (make bench does)}"
N=${BENCH_PROGRESS_JOBS:-10000}
cargo build --release -q -p tao-poll
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/tao-poll
work=$(mktemp -d)
base=${SLURM_BASE_RESULTS_DIR:?}/results/bench-progress-$$
cleanup() { rm -rf "$work" "$base"; }
trap cleanup EXIT

# N results dirs with a TAO-style status.json each, readable by the cluster user.
python3 - "$base" "$N" <<'PY'
import json, os, sys
base, n = sys.argv[1], int(sys.argv[2])
for i in range(1, n + 1):
    d = f"{base}/j{i}"
    os.makedirs(d, exist_ok=True)
    with open(f"{d}/status.json", "w") as f:
        f.write(json.dumps({"date": "12/1/2026", "time": "10:0:0", "status": "STARTED", "verbosity": "INFO", "message": "Starting Training Loop."}) + "\n")
        for e in range(1, 21):
            f.write(json.dumps({"epoch": e, "max_epoch": 40, "time_per_epoch": "0:01:00.500000", "eta": "0:20:10", "date": "12/1/2026", "time": "10:1:0", "status": "RUNNING", "verbosity": "INFO", "message": "Training loop in progress", "kpi": {"loss": 1.0 / e, "accuracy": 1 - 1.0 / (e + 1)}}) + "\n")
PY
chmod -R a+rX "$base"
awk -v n="$N" 'BEGIN{for(i=1;i<=n;i++) printf "%d|%d|RUNNING|n1|1800000000|1800000010|1800014410|1:00|0|None|\n", 100000+i, 100000+i}' > "$work/squeue"
: > "$work/sacct"
awk -v n="$N" -v b="$base" 'BEGIN{for(i=1;i<=n;i++) printf "{\"id\":\"bench-p%d\",\"storage\":{\"job_dir\":\"%s/j%d\",\"results_dir\":\"%s/j%d\"},\"slurm\":{\"job_id\":\"%d\"}}\n", i, b, i, b, i, 100000+i}' > "$work/lines"
head -n 1 "$work/lines" > "$work/one"

now() { date +%s.%N; }
best_of() { # best_of N FILE: best wall time of N polls of FILE's lines
  local best="" t0 t1 d
  for _ in $(seq "$1"); do
    t0=$(now)
    "$bin" --stats --bench-files-over-ssh --replay-squeue "$work/squeue" --replay-sacct "$work/sacct" \
      < "$2" > "$work/out" 2> "$work/err"
    t1=$(now)
    d=$(echo "$t1 - $t0" | bc -l)
    if [ -z "$best" ] || [ "$(echo "$d < $best" | bc -l)" = 1 ]; then best=$d; fi
  done
  echo "$best"
}
execs() { sed -n 's/.*execs=\([0-9]*\).*/\1/p' "$work/err" | tail -n 1; }

one=$(best_of 3 "$work/one")
one_execs=$(execs)
many=$(best_of 3 "$work/lines")
many_execs=$(execs)
lines_out=$(wc -l < "$work/out")
with_progress=$(grep -c '"progress":{"epoch":20,"max_epoch":40,"percent":50.0' "$work/out" || true)
[ "$lines_out" -eq "$N" ] || { echo "bench: $lines_out lines out of $N" >&2; exit 1; }
[ "$with_progress" -eq "$N" ] || { echo "bench: $with_progress of $N lines carry the expected progress" >&2; head -c 600 "$work/out" >&2; exit 1; }

fmt() { printf '%.3f' "$1"; }
printf 'BENCH|poll_progress_%d_vs_1|%s|%s|%s|seconds, best of 3; %d/%d lines with progress 20/40; target ratio <= 3\n' \
  "$N" "$(fmt "$many")" "$(fmt "$one")" "$(fmt "$(echo "$many / $one" | bc -l)")" "$with_progress" "$N"
printf 'BENCH|poll_progress_round_trips|%s|%s|%s|remote commands per poll, 1 login host (squeue/sacct replayed); target 1\n' \
  "$many_execs" "$one_execs" "$(fmt "$(echo "$many_execs / $one_execs" | bc -l)")"
