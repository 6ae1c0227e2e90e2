#!/bin/bash
# Render throughput of tao-render: scripts per second for 10,000 job lines
# (release build), against a baseline measured in the same run: one jq
# process doing the same kind of substitution (the same template text with
# the id, paths, resources, env and command spliced in, the command
# shell-quoted with @sh) and emitting the same job lines. jq does no
# validation and computes no sha256, so the baseline is generous to it.
#
# Usage: bash tao-render/bench/run.sh [N]   (from anywhere; N defaults to 10000)
# Prints: BENCH|<name>|<ours>|<baseline>|<ratio>|<note>
set -euo pipefail

n="${1:-10000}"
here="$(cd "$(dirname "${BASH_SOURCE[0]}")" && pwd)"
root="$(cd "$here/../.." && pwd)"
work="$(mktemp -d)"
trap 'rm -rf -- "$work"' EXIT

command -v jq >/dev/null || { echo "bench: jq is needed for the baseline (apt-get install jq)" >&2; exit 69; }

cargo build --quiet --release -p tao-render --manifest-path "$root/Cargo.toml"
bin="$root/target/release/tao-render"

# N job lines of the real shape with fake values; every id differs.
jq -nc --argjson n "$n" '
  range($n) as $i
  | ("tao-bench-" + ($i | tostring)) as $id
  | {id: $id, platform: "slurm", action: "train", network_arch: "dino",
     image: "nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt", runtime: "pyxis",
     command: "dino train -e {config_path} -r {results_dir} --note '\''it'\''s $(x)'\''",
     resources: {nodes: 1, gpus_per_node: 2, cpus_per_task: 8, time: "04:00:00",
                 child_timeout: "03:48:00", partition: "gpu", account: null,
                 exclusive: false, requeue: true, exclude: [], mem: null},
     storage: {tier: "lustre", base_dir: "/lustre/fake/tao",
               job_dir: ("/lustre/fake/tao/jobs/" + $id),
               results_dir: ("/lustre/fake/tao/results/" + $id)},
     spec: {name: "spec.yaml", text: "train:\n  epochs: 10\n"},
     mounts: ["/lustre/fake/datasets:/datasets:ro"],
     env: {HF_HOME: "/lustre/fake/hf", RUN_NOTE: ("bench " + ($i | tostring))},
     secrets: ["HF_TOKEN"]}' >"$work/lines.jsonl"

# The baseline's template: our own rendered script for line 0, with the
# per-line values turned back into placeholders.
head -n 1 "$work/lines.jsonl" | "$bin" --site-profile local --print >"$work/one.sbatch"
sed -e 's/tao-bench-0/@ID@/g' "$work/one.sbatch" >"$work/template.txt"

now() { date +%s.%N; }

t0="$(now)"
"$bin" --site-profile local <"$work/lines.jsonl" >"$work/ours.jsonl"
t1="$(now)"
jq -c --rawfile tpl "$work/template.txt" '
  . as $l
  | ($tpl | split("@ID@") | join($l.id)
          | split("'\''dino train") | join(($l.command | @sh) + " #")) as $text
  | $l + {script: {template: "single", text: $text}}' \
  <"$work/lines.jsonl" >"$work/baseline.jsonl"
t2="$(now)"

got="$(wc -l <"$work/ours.jsonl")"
[ "$got" -eq "$n" ] || { echo "bench: tao-render printed $got lines, expected $n" >&2; exit 1; }
[ "$(wc -l <"$work/baseline.jsonl")" -eq "$n" ] || { echo "bench: baseline line count" >&2; exit 1; }

awk -v n="$n" -v a="$t0" -v b="$t1" -v c="$t2" 'BEGIN {
  ours = n / (b - a); base = n / (c - b);
  printf "BENCH|render_%d_lines|%.0f|%.0f|%.2f|scripts/s; baseline: one jq process splicing the same %d-byte template (no validation, no sha256)\n", n, ours, base, ours / base, 0
}' | sed "s/the same 0-byte/the same $(wc -c <"$work/template.txt")-byte/"
