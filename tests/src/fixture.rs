//! A test's own pipeline on the local cluster: a record store and a copy of
//! the demo spec in a temporary directory, and the README's pipelines (open,
//! render, lint, submit, poll, classify, retry) run with bash.

use std::time::{Duration, Instant};

use serde_json::Value;

use crate::{bash, text, Cluster};

const DEMO: &str = concat!(env!("CARGO_MANIFEST_DIR"), "/../examples/demo");

/// Command arguments (for [`Fixture::submit`]) that make the demo job
/// die the way a GPU that fell off the bus does: the kernel's Xid 79 line
/// on stderr, exit 1 (a double of an infra fault: no GPU can fail here).
pub const GPU_OFF_THE_BUS: &str =
    "; echo \"NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.\" >&2; exit 1";

/// Command arguments that make the demo script raise a Python exception
/// at epoch 1 (a program fault: `--fail-at-epoch` of examples/demo/train.py).
pub const PYTHON_EXCEPTION: &str = " --fail-at-epoch 1";

/// A test's own record store and spec, in a temporary directory.
pub struct Fixture {
    c: Cluster,
    dir: tempfile::TempDir,
}

impl Fixture {
    /// A fixture whose spec copy runs `steps_per_epoch` steps per epoch
    /// (4 epochs) of `step_seconds` seconds each.
    pub fn new(c: Cluster, steps_per_epoch: u32, step_seconds: f64) -> Self {
        let dir = tempfile::tempdir().unwrap();
        let spec = std::fs::read_to_string(format!("{DEMO}/spec.yaml"))
            .unwrap()
            .replace(
                "steps_per_epoch: 25",
                &format!("steps_per_epoch: {steps_per_epoch}"),
            )
            .replace(
                "step_seconds: 0.05",
                &format!("step_seconds: {step_seconds}"),
            );
        std::fs::write(dir.path().join("spec.yaml"), spec).unwrap();
        Fixture { c, dir }
    }

    /// Run `script` with bash against this fixture's record store; panics
    /// with its output when it fails. Returns stdout.
    pub fn sh(&self, script: &str) -> String {
        let state = self.dir.path().join("state");
        let out = bash(
            &self.c,
            &[("TAO_STATE_DIR", state.to_str().unwrap())],
            script,
        );
        assert!(
            out.status.success(),
            "script failed:\n{script}\nstderr: {}\nstdout: {}",
            text(&out.stderr),
            text(&out.stdout)
        );
        text(&out.stdout)
    }

    /// Open, render, lint and submit; returns the submitted line.
    pub fn submit(&self, open_args: &str, command_args: &str) -> Value {
        let spec = self.dir.path().join("spec.yaml");
        let out = self.sh(&format!(
            r#"tao-record open --action train --network-arch demo --gpus-per-node 1 --cpus-per-task 1 \
                 --time 00:10:00 --spec {spec} --supporting-file {DEMO}/train.py {open_args} \
                 --command 'python3 "$TAO_ACTION_HELPERS/train.py" -e {{config_path}} -r {{results_dir}}{command_args}' \
               | tao-render | tao-redact lint | tao-submit | tao-record mark"#,
            spec = spec.display()
        ));
        serde_json::from_str(out.trim()).unwrap()
    }

    /// Submit the retry of `id`; returns the new submitted line.
    pub fn retry(&self, id: &str) -> Value {
        let out = self.sh(&format!(
            "tao-record open --retry-of {id} | tao-render | tao-redact lint | tao-submit | tao-record mark"
        ));
        serde_json::from_str(out.trim()).unwrap()
    }

    /// One poll of `id` into its record; returns the record line.
    pub fn poll(&self, id: &str) -> Value {
        let out = self.sh(&format!("tao-record list --id {id} | tao-poll | tao-record mark >/dev/null; tao-record list --id {id}"));
        serde_json::from_str(out.trim()).unwrap()
    }

    /// Poll until `pred` holds, for at most `limit`.
    pub fn poll_until(&self, id: &str, limit: Duration, pred: impl Fn(&Value) -> bool) -> Value {
        until(limit, &format!("waiting on {id}"), || {
            let rec = self.poll(id);
            (pred(&rec), rec)
        })
    }

    /// Poll until the record is COMPLETE, ERROR or CANCELED (at most 180 s).
    pub fn final_state(&self, id: &str) -> Value {
        self.poll_until(id, Duration::from_secs(180), |r| {
            matches!(r["state"].as_str(), Some("COMPLETE" | "ERROR" | "CANCELED"))
        })
    }

    /// Gather evidence, classify and record; returns the record line.
    pub fn classify(&self, id: &str, max_attempts: u32) -> Value {
        let out = self.sh(&format!(
            "tao-record list --id {id} | tao-poll --evidence | tao-classify --max-attempts {max_attempts} | tao-record mark >/dev/null; tao-record list --id {id}"
        ));
        serde_json::from_str(out.trim()).unwrap()
    }

    /// One run of the cron recipe (README, examples/crontab): refresh every
    /// live record, classify, record, open the due retries within
    /// `max_attempts`, render, lint, submit and record them.
    pub fn cron(&self, max_attempts: u32) {
        self.sh(&format!(
            "tao-record list --live | tao-poll --evidence | tao-classify | tao-record mark \
               | tao-record retry --max-attempts {max_attempts} | tao-render | tao-redact lint | tao-submit | tao-record mark >/dev/null"
        ));
    }

    /// The record `id` as a job line.
    pub fn record(&self, id: &str) -> Value {
        let out = self.sh(&format!("tao-record list --id {id}"));
        serde_json::from_str(out.trim()).unwrap()
    }

    /// The retry chain that contains `id`, first attempt first.
    pub fn chain(&self, id: &str) -> Vec<Value> {
        let out = self.sh(&format!("tao-record list --retry-of {id}"));
        out.lines()
            .map(|l| serde_json::from_str(l).unwrap())
            .collect()
    }

    /// Run the cron recipe until `pred` holds for the chain of `id`, for at
    /// most `limit`; returns the chain.
    pub fn cron_until(
        &self,
        id: &str,
        max_attempts: u32,
        limit: Duration,
        pred: impl Fn(&[Value]) -> bool,
    ) -> Vec<Value> {
        until(
            limit,
            &format!("running the cron pipeline for {id}"),
            || {
                self.cron(max_attempts);
                let chain = self.chain(id);
                (pred(&chain), chain)
            },
        )
    }
}

/// Run `step` every 500 ms until it says done, for at most `limit`;
/// returns its last value. Panics after `limit`, naming `what` and the
/// last value.
fn until<T: std::fmt::Debug>(
    limit: Duration,
    what: &str,
    mut step: impl FnMut() -> (bool, T),
) -> T {
    let deadline = Instant::now() + limit;
    loop {
        let (done, value) = step();
        if done {
            return value;
        }
        assert!(
            Instant::now() < deadline,
            "gave up after {limit:?} {what}: {value:?}"
        );
        std::thread::sleep(Duration::from_millis(500));
    }
}
