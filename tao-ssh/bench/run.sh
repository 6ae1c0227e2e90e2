#!/usr/bin/env bash
# tao-ssh/bench/run.sh: the transports against the local cluster (make bench).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`, all measured
# in this one run on this machine (baseline: libssh2, the default):
#   cmd_openssh_vs_libssh2  ms per remote command (`true`, on an open
#                           connection: examples/transport_cost.rs) over an
#                           openssh master against libssh2; target <= 3.
#   cmd_local_vs_libssh2    the same with TAO_TRANSPORT=local (sh -s on the
#                           login node itself, as the cluster user).
#   poll_1000_<transport>   wall seconds of one `tao-poll` over 1,000 job
#                           lines on that transport against libssh2's; the
#                           note gives the remote commands (round trips) and
#                           SSH handshakes of the run: one login host, so the
#                           target is one batch per login host on every
#                           transport.
#
# The jobs are real: submitted held (`sbatch --hold --wrap true`, never run),
# cancelled at the end. BENCH_JOBS (default 1000), BENCH_COMMANDS (200).
set -euo pipefail
cd "$(dirname "$0")/../.."

: "${SLURM_HOSTNAME:?source /var/tmp/tao-cluster/env first (make bench does)}"
N=${BENCH_JOBS:-1000}
cargo build --release -q -p tao-poll
cargo build --release -q -p tao-ssh --example transport_cost
target=${CARGO_TARGET_DIR:-$PWD/target}/release
cost=$target/examples/transport_cost
poll=$target/tao-poll
work=$(mktemp -d)
chmod 755 "$work"
ids_file=$work/ids
cleanup() {
  if [ -s "$ids_file" ]; then
    # shellcheck disable=SC2046
    scancel $(cat "$ids_file") 2>/dev/null || true
  fi
  rm -rf "$work"
}
trap cleanup EXIT

# The local transport runs as the cluster user on this host.
as_user() { runuser -u "$SLURM_USER" -- env PATH="$PATH" TAO_SITE_PROFILE="${TAO_SITE_PROFILE:-local}" \
  SLURM_HOSTNAME="$SLURM_HOSTNAME" TAO_TRANSPORT=local BENCH_COMMANDS="${BENCH_COMMANDS:-200}" "$@"; }
# The release binaries must be readable by that user.
chmod o+rx "$target" "$target/examples" 2>/dev/null || true

per_cmd() { sed -n 's/.*per_command_ms=\([0-9.]*\).*/\1/p'; }
lib=$(TAO_TRANSPORT=libssh2 "$cost" | per_cmd)
ossh=$(TAO_TRANSPORT=openssh "$cost" | per_cmd)
loc=$(as_user "$cost" | per_cmd)
ratio() { echo "scale=2; $1 / $2" | bc -l; }
echo "BENCH|cmd_openssh_vs_libssh2|${ossh} ms|${lib} ms|$(ratio "$ossh" "$lib")|per command on an open connection; target <= 3"
echo "BENCH|cmd_local_vs_libssh2|${loc} ms|${lib} ms|$(ratio "$loc" "$lib")|per command, sh -s on the login node"

host=${SLURM_HOSTNAME%%,*}
port=22
case $host in *:*) port=${host##*:}; host=${host%:*};; esac
ssh -o BatchMode=yes -o UserKnownHostsFile="$SSH_KNOWN_HOSTS" -i "$SSH_KEY_PATH" -p "$port" "$SLURM_USER@$host" \
  "for i in \$(seq $N); do sbatch --parsable --hold --job-name=tao-ssh-bench --output=/dev/null --wrap true || exit 1; done" > "$ids_file"
[ "$(wc -l < "$ids_file")" -eq "$N" ] || { echo "bench: submitted $(wc -l < "$ids_file") of $N jobs" >&2; exit 1; }
base=${SLURM_BASE_RESULTS_DIR:-/tmp}
awk -v b="$base" '{printf "{\"id\":\"bench-%d\",\"storage\":{\"job_dir\":\"%s/jobs/bench-%d\",\"results_dir\":\"%s/results/bench-%d\"},\"slurm\":{\"job_id\":\"%s\"}}\n", NR, b, NR, b, NR, $1}' "$ids_file" > "$work/lines"
chmod 644 "$work/lines"

now() { date +%s.%N; }
poll_once() { # poll_once TRANSPORT: prints "seconds commands handshakes"
  local t0 t1 err=$work/err-$1
  t0=$(now)
  if [ "$1" = local ]; then
    as_user "$poll" --stats < "$work/lines" > "$work/out" 2> "$err"
  else
    TAO_TRANSPORT=$1 "$poll" --stats < "$work/lines" > "$work/out" 2> "$err"
  fi
  t1=$(now)
  [ "$(wc -l < "$work/out")" -eq "$N" ] || { echo "bench: $1: $(wc -l < "$work/out") lines out of $N" >&2; cat "$err" >&2; exit 1; }
  echo "$(echo "$t1 - $t0" | bc -l) $(sed -n 's/.*execs=\([0-9]*\).*/\1/p' "$err") $(sed -n 's/.*handshakes=\([0-9]*\).*/\1/p' "$err")"
}
read -r lib_s lib_c lib_h < <(poll_once libssh2)
for t in libssh2 openssh local; do
  read -r s c h < <(poll_once "$t")
  echo "BENCH|poll_${N}_$t|$(printf '%.3f' "$s") s|$(printf '%.3f' "$lib_s") s|$(ratio "$s" "$lib_s")|$c remote commands, $h handshakes, 1 login host"
done
