//! No secret escapes, whatever its name (issue 16), end to end on the local
//! cluster: three jobs with the secrets WANDB_API_KEY, HF_TOKEN and a custom
//! MY_DB_PASSWORD (fake values of the real formats) whose programs print
//! every value to stdout and stderr. One is cancelled while pending, one
//! fails, one completes; then poll, evidence, classify, mark, logs and
//! `logs --follow` run. Afterwards a byte search of the record store, the
//! shared storage, every tool's output and the sshd, slurmd and slurmctld
//! logs finds no value, and no job directory holds a sidecar.

use std::path::{Path, PathBuf};

use tao_tests::{bash, cluster, text};

/// W&B key: 40 hex digits (W&B docs, `wandb login`).
const WANDB: &str = "fa4e0123456789abcdef0123456789abcdef0e2e";
/// Hugging Face user token: `hf_` and 34 letters and digits.
const HF: &str = "hf_FAKEtaoE2eTestTokenQwErTyUiOpAsDfG";
/// A site's own password: no format any catalogue knows.
const PW: &str = "Fak3-db-Passw0rd!x9";

/// Every regular file under `dir` (symlinks not followed).
fn files_under(dir: &Path, out: &mut Vec<PathBuf>) {
    let Ok(rd) = std::fs::read_dir(dir) else {
        return;
    };
    for e in rd.flatten() {
        let Ok(t) = e.file_type() else { continue };
        if t.is_dir() {
            files_under(&e.path(), out);
        } else if t.is_file() {
            out.push(e.path());
        }
    }
}

/// Files under `roots` whose bytes contain any of `values`, with the value.
fn leaks(roots: &[PathBuf], values: &[&str]) -> Vec<String> {
    let mut files = Vec::new();
    for r in roots {
        if r.is_file() {
            files.push(r.clone());
        } else {
            files_under(r, &mut files);
        }
    }
    let mut found = Vec::new();
    for f in files {
        let Ok(bytes) = std::fs::read(&f) else {
            continue;
        };
        for v in values {
            if bytes.windows(v.len()).any(|w| w == v.as_bytes()) {
                found.push(format!("{} holds the value of {v:.6}...", f.display()));
            }
        }
    }
    found
}

#[test]
fn no_secret_value_reaches_a_record_a_log_or_a_tools_output() {
    let Some(c) = cluster() else { return };
    assert_eq!(HF.len(), 37);
    let dir = tempfile::tempdir().unwrap();
    let state = dir.path().join("state");
    let out = dir.path().join("out");
    std::fs::create_dir_all(&out).unwrap();
    let script = format!(
        r##"
o={out}
prog='printf "wandb %s hf %s\n" "$WANDB_API_KEY" "$HF_TOKEN"; printf "db %s\n" "$MY_DB_PASSWORD"; printf "err %s %s %s\n" "$WANDB_API_KEY" "$HF_TOKEN" "$MY_DB_PASSWORD" >&2'
open() {{
  tao-record open --gpus-per-node 1 --cpus-per-task 1 --time 00:05:00 \
    --secret WANDB_API_KEY --secret HF_TOKEN --secret MY_DB_PASSWORD --command "$1" 2>>"$o/open.err"
}}
submit() {{
  tao-redact lint 2>>"$o/lint.err" | tee -a "$o/lint.out" \
    | tao-submit 2>>"$o/submit.err" | tee -a "$o/submit.out" \
    | tao-record mark 2>>"$o/mark.err" | tee -a "$o/mark.out" | jq -r .id
}}
# Pending for an hour: a BeginTime added between render and lint (lint
# stamps the edited script; tao-submit lints it again).
p=$(open "$prog" | tao-render | jq -c '.script.text |= sub("#SBATCH --partition="; "#SBATCH --begin=now+3600\n#SBATCH --partition=") | del(.script.sha256)' | submit)
f=$(open "$prog; exit 3" | tao-render | submit)
k=$(open "$prog" | tao-render | submit)
echo "ids $p $f $k" >&2
# Poll (into the records) until the failing and the completing job ended.
for i in $(seq 360); do
  tao-record list --live 2>>"$o/list.err" | tao-poll 2>>"$o/poll.err" | tee -a "$o/poll.out" \
    | tao-record mark >>"$o/mark.out" 2>>"$o/mark.err" || true
  n=$(tao-record list 2>>"$o/list.err" | jq -r "select(.id == \"$f\" or .id == \"$k\") | .state" | grep -cE 'COMPLETE|ERROR|CANCELED' || true)
  [ "$n" = 2 ] && break
  sleep 0.5
done
# Cancel the pending one.
tao-record list --id "$p" | tao-submit cancel 2>>"$o/cancel.err" | tee -a "$o/cancel.out" | tao-record mark >>"$o/mark.out" 2>>"$o/mark.err"
# Evidence, classification, mark.
tao-record list --id "$f" | tao-poll --evidence 2>>"$o/evidence.err" | tee -a "$o/evidence.out" \
  | tao-classify 2>>"$o/classify.err" | tee -a "$o/classify.out" | tao-record mark >>"$o/mark.out" 2>>"$o/mark.err"
# One more poll of everything (the sweep sees the ended jobs).
tao-record list | tao-poll 2>>"$o/poll.err" | tee -a "$o/poll.out" | tao-record mark >>"$o/mark.out" 2>>"$o/mark.err" || true
# Logs, both streams, with and without --follow.
for id in "$f" "$k"; do
  tao-poll logs "$id" >>"$o/logs.out" 2>>"$o/logs.err"
  tao-poll logs "$id" --err >>"$o/logs.out" 2>>"$o/logs.err"
  tao-poll logs "$id" --follow >>"$o/follow.out" 2>>"$o/follow.err"
  tao-poll logs "$id" --err --follow >>"$o/follow.out" 2>>"$o/follow.err"
  tao-record show "$id" >>"$o/show.out" 2>>"$o/show.err"
  tao-record history "$id" --json >>"$o/history.out" 2>>"$o/history.err"
done
tao-record list >"$o/records.out"
"##,
        out = out.display()
    );
    let res = bash(
        &c,
        &[
            ("TAO_STATE_DIR", state.to_str().unwrap()),
            ("WANDB_API_KEY", WANDB),
            ("HF_TOKEN", HF),
            ("MY_DB_PASSWORD", PW),
        ],
        &script,
    );
    let stderr = text(&res.stderr);
    assert!(res.status.success(), "pipeline failed: {stderr}");

    // The three records: one CANCELED, one ERROR (classified), one COMPLETE.
    let records: Vec<serde_json::Value> = std::fs::read_to_string(out.join("records.out"))
        .unwrap()
        .lines()
        .map(|l| serde_json::from_str(l).unwrap())
        .collect();
    let mut states: Vec<&str> = records
        .iter()
        .map(|r| r["state"].as_str().unwrap_or(""))
        .collect();
    states.sort();
    assert_eq!(states, ["CANCELED", "COMPLETE", "ERROR"], "{records:?}");
    let failed = records.iter().find(|r| r["state"] == "ERROR").unwrap();
    assert!(failed["classification"].is_object(), "{failed}");
    // The programs did print: the masks are there, in the logs tool output.
    let logs = std::fs::read_to_string(out.join("logs.out")).unwrap();
    for name in ["WANDB_API_KEY", "HF_TOKEN", "MY_DB_PASSWORD"] {
        assert!(logs.contains(&format!("[REDACTED:env:{name}]")), "{logs}");
    }
    let follow = std::fs::read_to_string(out.join("follow.out")).unwrap();
    assert!(follow.contains("[REDACTED:env:MY_DB_PASSWORD]"), "{follow}");

    // No sidecar in any of the three job directories.
    for r in &records {
        let jd = r["storage"]["job_dir"].as_str().unwrap();
        let env: Vec<String> = std::fs::read_dir(format!("{jd}/env"))
            .map(|rd| {
                rd.flatten()
                    .map(|e| e.file_name().to_string_lossy().into_owned())
                    .collect()
            })
            .unwrap_or_default();
        assert!(env.is_empty(), "{jd}/env holds {env:?} ({})", r["state"]);
    }

    // The byte search.
    let cluster_dir = PathBuf::from(c.var("TAO_CLUSTER_DIR"));
    let roots = [
        state.clone(),
        out.clone(),
        PathBuf::from(c.var("SLURM_BASE_RESULTS_DIR")),
        cluster_dir.join("shared"),
        cluster_dir.join("log"),
    ];
    let found = leaks(&roots, &[WANDB, HF, PW]);
    assert!(found.is_empty(), "values found:\n{}", found.join("\n"));
    for v in [WANDB, HF, PW] {
        assert!(!stderr.contains(v) && !text(&res.stdout).contains(v));
    }
}
