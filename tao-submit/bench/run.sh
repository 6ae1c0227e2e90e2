#!/usr/bin/env bash
# tao-submit/bench/run.sh: submitting N jobs (default 20) with tao-submit
# against the same submissions done the recipe's way, in one run, on the
# local cluster (make bench).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`:
#   submit_N_jobs        wall seconds of one `tao-submit` over N job lines
#                        (gates, staging of spec/meta/script/logs layout,
#                        existing-job check, sbatch --hold, logs dir, release:
#                        one SSH session) against the recipe's way: three
#                        separate `ssh` processes per job (mkdir, stage the
#                        script with cat, sbatch). ratio = baseline/ours.
#   submit_N_handshakes  SSH handshakes of each way (ours from --stats; the
#                        baseline's is its ssh process count).
#
# Job lines are made by the real pipeline (tao-record open | tao-render |
# tao-redact lint), not timed. Our jobs are released and run `true`; the
# baseline's are submitted held and cancelled at the end (its recipe does not
# create the log directory, so released they would die with 0:53 on 22.05).
# Needs the cluster env (tests/cluster/up). BENCH_JOBS overrides N.
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${SLURM_HOSTNAME:?source /var/tmp/tao-cluster/env first (make bench does)}"
N=${BENCH_JOBS:-20}
cargo build --release -q -p tao-submit -p tao-record -p tao-render -p tao-redact
bin=${CARGO_TARGET_DIR:-$PWD/target}/release
work=$(mktemp -d)
export TAO_STATE_DIR=$work/state

host=${SLURM_HOSTNAME%%,*}
port=22
case $host in *:*) port=${host##*:}; host=${host%:*};; esac
ssh_cmd=(ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" "$SLURM_USER@$host")

cleanup() {
  # scancel --name takes one name, so the jobs are cancelled by id.
  if [ -s "$work/ids" ]; then
    "${ssh_cmd[@]}" "scancel $(paste -sd' ' "$work/ids")" < /dev/null || true
  fi
  if [ -s "$work/names" ]; then
    "${ssh_cmd[@]}" "for n in $(paste -sd' ' "$work/names"); do rm -rf \"$SLURM_BASE_RESULTS_DIR/jobs/\$n\" \"$SLURM_BASE_RESULTS_DIR/jobs/\$n-base\" \"$SLURM_BASE_RESULTS_DIR/results/\$n\"; done" < /dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# N job lines through the real pipeline (not timed).
for _ in $(seq "$N"); do
  "$bin/tao-record" open --action train --network-arch bench --gpus-per-node 1 --cpus-per-task 1 \
    --time 00:05:00 --command 'true'
done | "$bin/tao-render" | "$bin/tao-redact" lint > "$work/lines.jsonl"
jq -r .id "$work/lines.jsonl" > "$work/names"
[ "$(wc -l < "$work/names")" -eq "$N" ] || { echo "bench: prepared $(wc -l < "$work/names") of $N lines" >&2; exit 1; }

now() { date +%s.%N; }

# Ours: one tao-submit run.
t0=$(now)
"$bin/tao-submit" --stats < "$work/lines.jsonl" > "$work/out" 2> "$work/err"
t1=$(now)
ours=$(echo "$t1 - $t0" | bc -l)
jq -r 'select(.slurm.job_id != null) | .slurm.job_id' "$work/out" > "$work/ids"
submitted=$(wc -l < "$work/ids")
[ "$submitted" -eq "$N" ] || { echo "bench: tao-submit submitted $submitted of $N: $(cat "$work/err")" >&2; exit 1; }
hs_ours=$(sed -n 's/.*handshakes=\([0-9]*\).*/\1/p' "$work/err" | tail -n 1)

# Baseline: the recipe's way, one ssh process per step, the same scripts.
i=0
while read -r line; do
  i=$((i + 1))
  jq -r .script.text <<<"$line" > "$work/script.$i"
done < "$work/lines.jsonl"
t0=$(now)
i=0
while read -r name; do
  i=$((i + 1))
  d="$SLURM_BASE_RESULTS_DIR/jobs/$name-base"
  "${ssh_cmd[@]}" "mkdir -p '$d/sbatch' '$d/slurm-logs'" < /dev/null
  "${ssh_cmd[@]}" "cat > '$d/sbatch/job.sbatch'" < "$work/script.$i"
  "${ssh_cmd[@]}" "sbatch --parsable --hold --job-name='$name-base' '$d/sbatch/job.sbatch'" < /dev/null >> "$work/ids"
done < "$work/names"
t1=$(now)
base=$(echo "$t1 - $t0" | bc -l)
hs_base=$((3 * N))

fmt() { printf '%.3f' "$1"; }
printf 'BENCH|submit_%d_jobs|%s|%s|%s|seconds; ours: one tao-submit (stage, check by name, sbatch --hold, logs dir, release); baseline: 3 ssh processes per job (mkdir, cat script, sbatch); ratio = baseline/ours\n' \
  "$N" "$(fmt "$ours")" "$(fmt "$base")" "$(fmt "$(echo "$base / $ours" | bc -l)")"
printf 'BENCH|submit_%d_handshakes|%s|%s|%s|ssh handshakes per run (ours from --stats, baseline = ssh processes); ratio = baseline/ours\n' \
  "$N" "${hs_ours:-?}" "$hs_base" "$(fmt "$(echo "$hs_base / ${hs_ours:-1}" | bc -l)")"
