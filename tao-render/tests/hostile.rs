//! Property tests: thousands of hostile values (quotes, `$()`, backticks,
//! newlines, `;`, template and comment delimiters, unicode, very long
//! strings; 128 cases of 29 values each) rendered into commands, env values
//! and container mounts, then the script run by a real bash with a stub
//! `srun` that records its argv and environment instead of running
//! anything. Each value must arrive byte-for-byte, and nothing else may run
//! (a canary file that every injection attempt would create must not exist).
//!
//! Fields that go on `#SBATCH` lines cannot be quoted; for those the
//! property is that a hostile value is refused or consists only of the
//! strict directive character set. A few hostile job and probe scripts also
//! go through `bash -n` and shellcheck.

mod common;

use common::*;
use proptest::prelude::*;

use serde_json::{json, Value};
use tao_script::escape::DIRECTIVE_CHARS;
use tao_script::render_line;

const CANARY: &str = "@CANARY@";

fn fragment() -> impl Strategy<Value = String> {
    prop_oneof![
        Just("'".to_string()),
        Just("\"".to_string()),
        Just("'\\''".to_string()),
        Just(format!("$(touch {CANARY})")),
        Just(format!("`touch {CANARY}`")),
        Just(format!(";touch {CANARY};")),
        Just(format!("\ntouch {CANARY}\n")),
        Just(format!("'; touch {CANARY}; '")),
        Just(format!("\"; touch {CANARY}; \"")),
        Just(format!("|| touch {CANARY} &")),
        Just(format!("$(<{CANARY})")),
        Just("\\".to_string()),
        Just("\\'".to_string()),
        Just("$HOME ${HOME} ${#HOME} $1 $@ $$".to_string()),
        Just("{{ c.id }} {% if true %} <# x #> {# y #}".to_string()),
        Just("\r\n\t \u{7f}\u{1b}[31m".to_string()),
        Just("é 🦀 \u{202e} \u{feff} 中文".to_string()),
        Just("* ? [a-z] ~ ! # %j &".to_string()),
        Just("EOF\n#SBATCH --x\nEOF".to_string()),
        "(?s).{0,24}".prop_map(|s| s.replace('\0', "0")),
    ]
}

/// A hostile value: fragments joined, sometimes made very long.
fn hostile() -> impl Strategy<Value = String> {
    hostile_up_to(20_000)
}

/// A hostile value whose long form adds at most about `max` bytes.
fn hostile_up_to(max: usize) -> impl Strategy<Value = String> {
    (
        prop::collection::vec(fragment(), 0..6),
        0usize..4,
        0usize..max,
    )
        .prop_map(|(parts, long, n)| {
            let mut s = parts.concat();
            if long == 0 {
                s = format!("{}{}{}", s, "x'$".repeat(n / 3), s);
            }
            s
        })
}

/// A mount's path part: no `,` (mount separator), no `:` (SRC:DST:FLAGS
/// separator), no control characters; all three are refused by render.
fn no_commas(s: String) -> String {
    s.chars()
        .map(|c| {
            if c == ',' || c == ':' || c.is_control() {
                '_'
            } else {
                c
            }
        })
        .collect()
}

fn env_map(env: &[String]) -> std::collections::HashMap<String, String> {
    env.iter()
        .filter_map(|e| {
            e.split_once('=')
                .map(|(k, v)| (k.to_string(), v.to_string()))
        })
        .collect()
}

proptest! {
    #![proptest_config(tao_core::testing::config_fixed_seed(128, 0x0007_a051))]

    #[test]
    fn every_value_arrives_byte_for_byte_and_nothing_else_runs(
        cmd in hostile(),
        pre in prop::collection::vec(hostile(), 2),
        post in hostile(),
        envs in prop::collection::vec(hostile_up_to(4_000), 24),
        mount in hostile(),
    ) {
        // An empty command is refused (tested in cli.rs); keep the bytes otherwise.
        let cmd = if cmd.trim().is_empty() { format!("true{cmd}") } else { cmd };
        let fake = FakeSlurm::dumping();
        let base = fake.base();
        let canary = fake.dir.path().join("canary");
        let canary_s = canary.to_str().unwrap();
        let sub = |s: &str| s.replace(CANARY, canary_s);

        let mut l = line_under(base.to_str().unwrap(), ID);
        l["runtime"] = json!("pyxis");
        l["image"] = json!("/images/fake.sqsh");
        let mount = format!("/src{}:/dst", no_commas(sub(&mount)));
        l["mounts"] = json!([mount]);
        let mut env = serde_json::Map::new();
        for (i, v) in envs.iter().enumerate() {
            env.insert(format!("HOSTILE_{i}"), Value::String(sub(v)));
        }
        l["env"] = Value::Object(env);
        let texts: Vec<String> = vec![sub(&pre[0]), sub(&pre[1]), sub(&cmd), sub(&post)];
        l["execution"] = json!({
            "pre_commands": [texts[0], texts[1]],
            "command": texts[2],
            "post_commands": [{"command": texts[3], "scope": "leader"}],
            "launcher": null,
            "supporting_files": []
        });
        let s = render_line(&jobline(&l), &profile("local")).unwrap();
        let script = fake.dir.path().join("job.sbatch");
        std::fs::write(&script, &s.text).unwrap();
        let out = fake.bash(&script).output().unwrap();
        prop_assert_eq!(out.status.code(), Some(0), "stderr: {}", String::from_utf8_lossy(&out.stderr));
        prop_assert!(!canary.exists(), "an injected command ran");

        let bindings = s.bindings.clone().unwrap();
        let dumps = fake.dumps();
        prop_assert_eq!(dumps.len(), 4, "one srun per step");
        let scopes = ["all", "all", "all", "leader"];
        let mounts_arg = format!("--container-mounts={mount},{}:{}", base.display(), base.display());
        for (i, (argv, env)) in dumps.iter().enumerate() {
            let n = argv.len();
            prop_assert_eq!(&argv[n - 1], &tao_script::job::bind(&texts[i], &bindings));
            prop_assert_eq!(&argv[n - 2], scopes[i]);
            prop_assert_eq!(&argv[n - 3], "tao-step");
            prop_assert!(argv.contains(&mounts_arg), "mounts argument changed");
            prop_assert!(argv.contains(&"--container-image=/images/fake.sqsh".to_string()));
            let env = env_map(env);
            for (j, v) in envs.iter().enumerate() {
                prop_assert_eq!(env.get(&format!("HOSTILE_{j}")), Some(&sub(v)));
            }
            prop_assert_eq!(env.get("TAO_JOB_ID").map(String::as_str), Some(ID));
        }
    }

    #[test]
    fn sbatch_fields_are_refused_or_plain(
        v in hostile(),
        field in 0usize..6,
    ) {
        let mut l = line();
        match field {
            0 => l["resources"]["partition"] = json!(v),
            1 => l["resources"]["account"] = json!(v),
            2 => l["resources"]["exclude"] = json!([v]),
            3 => l["resources"]["mem"] = json!(v),
            4 => l["id"] = json!(v),
            _ => l["storage"]["job_dir"] = json!(v),
        }
        if let Ok(s) = render_line(&jobline(&l), &profile("local")) {
            let header: Vec<&str> = s.text.lines().take_while(|x| x.starts_with('#')).collect();
            for h in &header[1..] {
                if let Some(opt) = h.strip_prefix("#SBATCH ") {
                    prop_assert!(opt.chars().all(|c| c == '=' || DIRECTIVE_CHARS.contains(c)), "{}", h);
                }
            }
            prop_assert!(s.text.lines().filter(|x| x.starts_with("#SBATCH")).count() <= 16);
        }
    }
}

proptest! {
    // shellcheck takes a fraction of a second per script: fewer cases.
    #![proptest_config(tao_core::testing::config_fixed_seed(8, 0x0007_a051))]

    #[test]
    fn hostile_scripts_still_pass_bash_n_and_shellcheck(
        cmd in hostile_up_to(600),
        envs in prop::collection::vec(hostile_up_to(600), 3),
        args in prop::collection::vec(hostile_up_to(600), 2),
        nodes in 1u32..3,
    ) {
        let cmd = if cmd.trim().is_empty() { format!("true{cmd}") } else { cmd };
        let mut l = line();
        l["resources"]["nodes"] = json!(nodes);
        l["runtime"] = json!("pyxis");
        l["image"] = json!("/images/fake.sqsh");
        l["mounts"] = json!([format!("/src{}:/dst", no_commas(cmd.clone()))]);
        l["command"] = json!(cmd);
        let mut env = serde_json::Map::new();
        for (i, v) in envs.iter().enumerate() {
            env.insert(format!("HOSTILE_{i}"), Value::String(v.clone()));
        }
        l["env"] = Value::Object(env);
        let s = render_line(&jobline(&l), &profile("local")).unwrap();
        lint_script("hostile_job", &s.text);

        let req = tao_script::ProbeRequest {
            id: "tao-probe-x".into(),
            partition: "gpu".into(),
            account: None,
            nodes,
            gpus_per_node: 1,
            cpus_per_task: 1,
            time: "00:10:00".into(),
            timeout_s: 120,
            job_dir: "/lustre/fake/tao/jobs/tao-probe-x".into(),
            program: "probe.py".into(),
            args: args.clone(),
            launcher: tao_script::ProbeLauncher::Command(vec![args[0].clone()]),
            nccl_env: envs.iter().enumerate().map(|(i, v)| (format!("NCCL_X{i}"), v.clone())).collect(),
            image: None,
            mounts: vec![],
            exclude: vec![],
        };
        let s = tao_script::render_probe(&req).unwrap();
        lint_script("hostile_probe", &s.text);
    }
}
