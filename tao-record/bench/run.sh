#!/usr/bin/env bash
# tao-record/bench/run.sh: benchmarks of the record store (make bench).
#
# Prints lines `BENCH|<name>|<ours>|<baseline>|<ratio>|<note>`, measured in
# this one run on this machine:
#   record_list_100k        `tao-record list` over 100,000 records, against
#                           `cat` of the same files piped to `jq -c 'del(.history)'`
#                           (same output, checked); seconds, best of 3;
#                           ratio = baseline/ours (>1: we are faster).
#   record_list_live_100k   `tao-record list --live` over the same records.
#   record_marks_stream     marks per second, one `tao-record mark` reading job lines
#                           (lock, read, apply, write temp, fsync, rename, fsync dir
#                           each), against a shell loop doing the same per mark with
#                           flock + jq + sync + mv + sync dir; ratio = ours/baseline.
#   record_marks_per_process marks per second, one `tao-record mark ID --state ...`
#                           process per mark, against the same shell loop.
#   record_stress_8x1000    the issue's stress test at full size with the release
#                           binary: 8 processes x 1,000 marks on 16 shared records;
#                           seconds, and the check (nothing lost, every file parses,
#                           histories ordered). Exit 1 if the check fails.
#
# Environment: BENCH_DIR (default /var/tmp/tao-record-bench) holds the
# generated store; BENCH_RECORDS (default 100000) the number of records.
# Needs: cargo, jq, awk, flock, sync (coreutils).
set -euo pipefail
cd "$(dirname "$0")/../.."

cargo build --release -q -p tao-record
bin=${CARGO_TARGET_DIR:-$PWD/target}/release/tao-record
dir=${BENCH_DIR:-/var/tmp/tao-record-bench}
n=${BENCH_RECORDS:-100000}
rm -rf "$dir"
mkdir -p "$dir"
[ -n "${BENCH_KEEP:-}" ] || trap 'rm -rf "$dir"' EXIT

export TAO_SITE_PROFILE=local SLURM_BASE_RESULTS_DIR=/lustre/tao
unset TAO_RUNTIME SLURM_PARTITION SLURM_ACCOUNT SLURM_CONTAINER_MOUNTS SLURM_USE_REQUEUE

now() { date +%s.%N; }
secs() { awk -v a="$1" -v b="$2" 'BEGIN { printf "%.3f", b - a }'; }
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
min() { printf '%s\n' "$@" | sort -g | head -1; }

# --- a realistic template record: spec, env, mounts, slurm fields, 3 transitions
export TAO_STATE_DIR=$dir/template
printf 'train:\n  num_epochs: 10\n  checkpoint_interval: 1\ndataset:\n  train_data_sources:\n    - image_dir: /lustre/data/images\n' >"$dir/spec.yaml"
tid=$("$bin" open --image nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt --runtime pyxis \
  --network-arch dino --action train --spec "$dir/spec.yaml" --env OMP_NUM_THREADS=8 \
  --secret HF_TOKEN --mount /lustre/data:/data:ro --print-id)
"$bin" mark "$tid" --state RUNNING --backend-ref 123456 --source tao-poll --message RUNNING >/dev/null
"$bin" mark "$tid" --state COMPLETE --source tao-poll --message COMPLETED >/dev/null
tpl=$(cat "$dir/template/records/$tid.json")

# --- generate the store: ids tao-20261129-000000.., states rotating
mkdir -p "$dir/store/records"
printf '%s\n' "$tpl" | awk -v n="$n" -v tid="$tid" -v out="$dir/store/records" '
  { line = $0 }
  END {
    split("COMPLETE ERROR RUNNING PENDING CANCELED", st, " ")
    for (i = 0; i < n; i++) {
      id = sprintf("tao-20261129-%06d", i)
      l = line
      gsub(tid, id, l)
      sub(/"state":"COMPLETE"/, "\"state\":\"" st[i % 5 + 1] "\"", l)
      f = out "/" id ".json"
      print l > f
      close(f)
    }
  }'
export TAO_STATE_DIR=$dir/store
bytes=$(du -sb "$dir/store/records" | cut -f1)

# --- list vs cat | jq (page cache warm: one untimed run of each first)
ours_list() { "$bin" list >"$dir/ours.out"; }
base_list() { find "$dir/store/records" -name '*.json' -print0 | xargs -0 cat | jq -c 'del(.history)' >"$dir/base.out"; }
ours_live() { "$bin" list --live >"$dir/ours_live.out"; }
base_live() { find "$dir/store/records" -name '*.json' -print0 | xargs -0 cat | jq -c 'select(.state == "PENDING" or .state == "RUNNING" or .state == "UNKNOWN") | del(.history)' >"$dir/base_live.out"; }
ours_list; base_list
T=(); B=(); TL=(); BL=()
for _ in 1 2 3; do
  a=$(now); ours_list; b=$(now); T+=("$(secs "$a" "$b")")
  a=$(now); base_list; b=$(now); B+=("$(secs "$a" "$b")")
  a=$(now); ours_live; b=$(now); TL+=("$(secs "$a" "$b")")
  a=$(now); base_live; b=$(now); BL+=("$(secs "$a" "$b")")
done
t=$(min "${T[@]}"); bt=$(min "${B[@]}"); tl=$(min "${TL[@]}"); btl=$(min "${BL[@]}")
same="same output"
cmp -s <(sort "$dir/ours.out") <(sort "$dir/base.out") || same="OUTPUT DIFFERS"
cmp -s <(sort "$dir/ours_live.out") <(sort "$dir/base_live.out") || same="$same; LIVE OUTPUT DIFFERS"
lines=$(wc -l <"$dir/ours.out")
echo "BENCH|record_list_100k|$t|$bt|$(ratio "$bt" "$t")|seconds, best of 3; $lines records, $((bytes / 1048576)) MiB; baseline find|xargs cat|jq -c 'del(.history)'; $same; ratio = baseline/ours"
echo "BENCH|record_list_live_100k|$tl|$btl|$(ratio "$btl" "$tl")|seconds, best of 3; baseline jq select on state; ratio = baseline/ours"

# --- marks per second
export TAO_STATE_DIR=$dir/marks
ids=()
for _ in $(seq 16); do ids+=("$("$bin" open --runtime none --command true --print-id)"); done
m=2000
for i in $(seq 0 $((m - 1))); do
  s=RUNNING; (( (i / 16) % 2 )) && s=PENDING
  printf '{"id":"%s","state":"%s","message":"m%d"}\n' "${ids[i % 16]}" "$s" "$i"
done >"$dir/marks.jsonl"
a=$(now); "$bin" mark <"$dir/marks.jsonl" >/dev/null; b=$(now)
stream_rate=$(awk -v n="$m" -v s="$(secs "$a" "$b")" 'BEGIN { printf "%.0f", n / s }')

p=200
a=$(now)
for i in $(seq 0 $((p - 1))); do
  s=RUNNING; (( i % 2 )) && s=PENDING
  "$bin" mark "${ids[i % 16]}" --state "$s" --message "p$i" >/dev/null
done
b=$(now)
proc_rate=$(awk -v n="$p" -v s="$(secs "$a" "$b")" 'BEGIN { printf "%.0f", n / s }')

# Baseline: the same safe update by hand, per mark.
rec=$dir/marks/records
a=$(now)
for i in $(seq 0 $((p - 1))); do
  id=${ids[i % 16]}; s=RUNNING; (( i % 2 )) && s=PENDING
  # shellcheck disable=SC2016 # expanded by the inner sh, on purpose
  flock "$rec/$id.lock" sh -c '
    at=$(date -u +%Y-%m-%dT%H:%M:%S.%6NZ)
    jq -c --arg s "$2" --arg m "b$3" --arg at "$at" \
      ".state = \$s | .message = \$m | .observed_at = \$at | .history += [{at: \$at, state: \$s, source: \"sh\", message: \$m}]" \
      "$1/$4.json" >"$1/.tmp-$4.part" && sync "$1/.tmp-$4.part" && mv "$1/.tmp-$4.part" "$1/$4.json" && sync "$1"
  ' sh "$rec" "$s" "$i" "$id"
done
b=$(now)
base_rate=$(awk -v n="$p" -v s="$(secs "$a" "$b")" 'BEGIN { printf "%.0f", n / s }')
echo "BENCH|record_marks_stream|$stream_rate|$base_rate|$(ratio "$stream_rate" "$base_rate")|marks/s, $m marks on 16 records from one stdin; baseline flock+jq+sync+mv+sync dir per mark; ratio = ours/baseline"
echo "BENCH|record_marks_per_process|$proc_rate|$base_rate|$(ratio "$proc_rate" "$base_rate")|marks/s, one process per mark ($p); same baseline; ratio = ours/baseline"

# --- the issue's stress test at full size: 8 processes x 1,000 marks
export TAO_STATE_DIR=$dir/stress
sids=()
for _ in $(seq 16); do sids+=("$("$bin" open --runtime none --command true --print-id)"); done
for pr in $(seq 0 7); do
  for i in $(seq 0 999); do
    s=RUNNING; (( (i / 16) % 2 )) && s=PENDING
    printf '{"id":"%s","state":"%s","message":"p%d i%d"}\n' "${sids[(pr * 5 + i) % 16]}" "$s" "$pr" "$i"
  done >"$dir/stress-$pr.jsonl"
done
a=$(now)
pids=()
for pr in $(seq 0 7); do "$bin" mark <"$dir/stress-$pr.jsonl" >/dev/null & pids+=($!); done
fail=0
for pid in "${pids[@]}"; do wait "$pid" || fail=1; done
b=$(now)
total=0; check=ok
for id in "${sids[@]}"; do
  f=$dir/stress/records/$id.json
  jq -e . "$f" >/dev/null || check="file $id does not parse"
  c=$(jq '.history | length - 1' "$f"); total=$((total + c))
  jq -e '[.history[].at] as $a | $a == ($a | sort)' "$f" >/dev/null || check="history of $id out of order"
  jq -e '[.history[1:][].message | capture("p(?<p>[0-9]+) i(?<i>[0-9]+)") | {p: (.p|tonumber), i: (.i|tonumber)}]
         | group_by(.p) | all(.[]; [.[].i] as $x | $x == ($x | sort))' "$f" >/dev/null || check="per-process order broken in $id"
done
[ "$total" -eq 8000 ] || check="$total of 8000 marks recorded"
[ "$fail" -eq 0 ] || check="a mark process failed; $check"
st=$(secs "$a" "$b")
echo "BENCH|record_stress_8x1000|$st|-|-|seconds for 8 processes x 1,000 marks on 16 shared records ($(awk -v s="$st" 'BEGIN { printf "%.0f", 8000 / s }') marks/s); check: $check"
[ "$check" = ok ]
