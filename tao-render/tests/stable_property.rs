//! tao-render's output is a function of its input lines and the site
//! profile only, byte for byte, and never holds a secret's value.
//!
//! Promise and source: README ("`NGC_KEY`, `HF_TOKEN`: secrets: passed by
//! name only, ... never in argv, scripts, records or logs"), tao-render(1)
//! (a job line in, the same line with `script` out; a line it refuses is
//! an `error` line and the stream goes on) and the charter ("byte for
//! byte", "no secret leaks"). `script.sha256` is what `tao-redact lint`
//! and tao-submit check later, so a second render of the same line must
//! give the same bytes.
//!
//! Inputs: 1 to 4 job lines (the fixture of `common::line_under`) with
//! generated secret names (`HF_TOKEN`, `NGC_KEY`, generated names, some
//! reserved or malformed, so some lines are refused), env variables,
//! GPU/node/CPU counts (some above the profile's limits) and commands. The
//! binary runs three ways: with the secrets' values (fake, of the real
//! formats: `hf_...`, `nvapi-...`, a generated password) in its
//! environment; with a cleared environment; and on each line alone. All
//! three outputs are byte-identical (the batch is the concatenation of the
//! lines alone), the exit status is the same, and no secret value is on
//! stdout or stderr. 48 cases (5 to 8 processes each).

mod common;

use common::*;
use proptest::prelude::*;
use serde_json::{json, Value};

/// A secret's name: the two the README names, generated ones (a few are
/// reserved or malformed: the line is then refused, which the property
/// covers too).
fn secret_name() -> impl Strategy<Value = String> {
    prop_oneof![
        4 => Just("HF_TOKEN".to_string()),
        4 => Just("NGC_KEY".to_string()),
        2 => Just("WANDB_API_KEY".to_string()),
        4 => "X[A-Z0-9_]{1,10}",
        1 => Just("SLURM_JOB_ID".to_string()),
        1 => Just("lower-case".to_string()),
    ]
}

/// A fake secret value of a real format (the value given to the process
/// environment under a secret's name).
fn secret_value() -> impl Strategy<Value = String> {
    prop_oneof![
        "[A-Za-z0-9]{34}".prop_map(|s| format!("hf_{s}")),
        "[A-Za-z0-9_-]{64}".prop_map(|s| format!("nvapi-{s}")),
        "[0-9a-f]{40}",
        "[A-Za-z0-9!#^*+]{12,24}".prop_map(|s| format!("Pw9{s}")),
    ]
}

/// One job line and the secret values its names get in the environment.
fn line_and_secrets(i: usize) -> impl Strategy<Value = (Value, Vec<(String, String)>)> {
    (
        prop::collection::vec((secret_name(), secret_value()), 0..3),
        prop::collection::btree_map("[A-Z][A-Z_]{0,8}", "[a-z0-9 ./=-]{0,12}", 0..3),
        // Mostly counts the local profile takes (4 GPUs and 8 CPUs a node),
        // some it refuses.
        prop::sample::select(vec![1u32, 1, 2, 2, 4, 4, 8, 3, 5]),
        prop::option::of(1u32..3),
        prop_oneof![6 => 1u32..9, 1 => 9u32..16],
        "[a-z0-9 ./=-]{1,20}",
    )
        .prop_map(move |(secrets, env, gpus, nodes, cpus, cmd)| {
            let id = format!("tao-20261129-k3f9x{i}");
            let mut l = line_under("/lustre/fake/tao", &id);
            let names: Vec<&String> = secrets.iter().map(|(n, _)| n).collect();
            l["secrets"] = json!(names);
            l["env"] = json!(env);
            l["command"] = json!(format!("python3 train.py {cmd}"));
            l["resources"]["gpus_per_node"] = json!(gpus);
            l["resources"]["nodes"] = json!(nodes);
            l["resources"]["cpus_per_task"] = json!(cpus);
            (l, secrets)
        })
}

fn lines() -> impl Strategy<Value = Vec<(Value, Vec<(String, String)>)>> {
    (1usize..5).prop_flat_map(|n| (0..n).map(line_and_secrets).collect::<Vec<_>>())
}

/// Run the binary on `input` with `env` (and nothing else) in its
/// environment.
fn render(input: &str, env: &[(String, String)]) -> std::process::Output {
    let mut cmd = bin();
    cmd.args(["--site-profile", "local"])
        .env("PATH", "/usr/bin:/bin")
        .envs(env.iter().map(|(k, v)| (k, v)));
    tao_testkit::tool::feed(&mut cmd, input).wait_unread_ok()
}

proptest! {
    #![proptest_config(tao_core::testing::config(48))]

    /// See the module doc.
    #[test]
    fn output_depends_on_the_lines_only_and_holds_no_secret(jobs in lines()) {
        let input: String = jobs.iter().map(|(l, _)| format!("{l}\n")).collect();
        // Valid names only go to the environment (a name with `-` cannot
        // be a variable), and no `TAO_*` name (tao-render's own settings,
        // e.g. TAO_RUNTIME, do change the output: not a secret's name);
        // the first value of a name wins.
        let mut env: Vec<(String, String)> = Vec::new();
        for (name, value) in jobs.iter().flat_map(|(_, s)| s) {
            if name.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
                && !name.starts_with("TAO")
                && !env.iter().any(|(n, _)| n == name)
            {
                env.push((name.clone(), value.clone()));
            }
        }
        let with = render(&input, &env);
        let without = render(&input, &[]);
        let code = with.status.code();
        prop_assert!(matches!(code, Some(0) | Some(1)), "{:?}: {}", with.status, String::from_utf8_lossy(&with.stderr));
        prop_assert_eq!(without.status.code(), code);
        prop_assert_eq!(String::from_utf8_lossy(&with.stdout), String::from_utf8_lossy(&without.stdout));
        let mut alone = Vec::new();
        for (l, _) in &jobs {
            alone.extend(render(&format!("{l}\n"), &env).stdout);
        }
        prop_assert_eq!(String::from_utf8_lossy(&alone), String::from_utf8_lossy(&with.stdout));
        let stdout = String::from_utf8_lossy(&with.stdout);
        let stderr = String::from_utf8_lossy(&with.stderr);
        prop_assert_eq!(stdout.lines().count(), jobs.len());
        let scripts = stdout.lines().filter(|l| l.contains("\"script\":{")).count();
        RENDERED.with(|r| r.set(r.get() + scripts));
        for (_, v) in &env {
            prop_assert!(!stdout.contains(v.as_str()), "a secret's value on stdout: {}", v);
            prop_assert!(!stderr.contains(v.as_str()), "a secret's value on stderr: {}", v);
        }
    }
}

thread_local! {
    /// Scripts rendered by the cases run on this thread (the property must
    /// not pass on refusals alone). Per thread: the harness runs the two
    /// tests of this file at once, so a shared counter would be read while
    /// the other test is still adding to it.
    static RENDERED: std::cell::Cell<usize> = const { std::cell::Cell::new(0) };
}

#[test]
fn the_property_renders_scripts() {
    // The property's cases, run again on this thread (proptest runs them on
    // the calling thread), counted here alone.
    output_depends_on_the_lines_only_and_holds_no_secret();
    assert!(RENDERED.with(|r| r.get()) > 10);
}
