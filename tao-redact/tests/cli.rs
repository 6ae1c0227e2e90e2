//! Integration tests: run the `tao-redact` binary as a user would, with a
//! cleared environment (only what each test sets), and check stdout, stderr
//! and the exit status.

use std::io::{BufRead, BufReader, Write};
use std::process::{Command as StdCommand, Stdio};
use std::sync::mpsc;
use std::time::Duration;

use assert_cmd::Command;
use serde_json::Value;
use tao_testkit::tool::json_lines as stdout_lines;

const HF: &str = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
const GHP: &str = "ghp_FAKEtaoRedactTest0123456789abcdefABCD";

/// The binary with a cleared environment.
fn cmd() -> Command {
    tao_testkit::tool::cmd("tao-redact")
}

fn job(id: &str, script: &str) -> String {
    serde_json::json!({"id": id, "zeta": [1, "x"], "script": {"template": "single", "sha256": "00", "text": script}, "alpha": {"b": 1}})
        .to_string()
}

#[test]
fn help_version_and_usage_errors() {
    tao_testkit::tool::assert_standard_flags("tao-redact", "Usage: tao-redact");
    cmd().arg("scan").assert().code(2);
    cmd().args(["--rules"]).assert().code(2);
}

#[test]
fn lint_clean_script_gets_ok_and_the_digest_of_its_text() {
    let script = "#!/bin/bash\n#SBATCH --job-name=tao-x\nexport HF_TOKEN=\"$HF_TOKEN\"\nprintf '%s' \"$NGC_KEY\" | docker login nvcr.io -u '$oauthtoken' --password-stdin\nsrun python train.py\n";
    let input = format!("{}\n{}\n", job("tao-a", script), job("tao-b", "echo hi\n"));
    let out = cmd()
        .arg("lint")
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .stdout
        .clone();
    let lines = stdout_lines(&out);
    assert_eq!(lines.len(), 2);
    let lint = &lines[0]["lint"];
    assert_eq!(lint["ok"], true);
    assert_eq!(lint["findings"], serde_json::json!([]));
    assert_eq!(lint["sha256"], tao_core::sha256_hex(script.as_bytes()));
    // Every other field passes through, in order; lint is appended.
    let keys: Vec<&String> = lines[0].as_object().unwrap().keys().collect();
    assert_eq!(keys, ["id", "zeta", "script", "alpha", "lint"]);
    assert_eq!(lines[0]["script"]["sha256"], "00");
}

#[test]
fn lint_blocks_a_literal_secret_but_the_line_goes_on() {
    let bad = format!("#!/bin/bash\nexport HF_TOKEN={HF}\nsrun true\n");
    let input = format!(
        "{}\n{}\n",
        job("tao-bad", &bad),
        job("tao-good", "echo ok\n")
    );
    let assert = cmd().arg("lint").write_stdin(input).assert().code(3);
    let o = assert.get_output();
    let (stdout, stderr) = (
        String::from_utf8_lossy(&o.stdout),
        String::from_utf8_lossy(&o.stderr),
    );
    assert!(
        !stdout.contains(HF) || stdout.matches(HF).count() == 1,
        "only the script text itself may hold it"
    );
    assert!(!stderr.contains(HF), "{stderr}");
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines.len(), 2);
    let lint = &lines[0]["lint"];
    assert_eq!(lint["ok"], false);
    let f = &lint["findings"][0];
    assert_eq!(f["rule"], "huggingface-token");
    assert_eq!(
        (f["line"].as_u64(), f["column"].as_u64()),
        (Some(2), Some(17))
    );
    assert_eq!(f["preview"], "export HF_TOKEN=[REDACTED:huggingface-token]");
    assert_eq!(lines[1]["lint"]["ok"], true);
    assert!(
        stderr.contains("line 1 (job tao-bad): script line 2, column 17: huggingface-token"),
        "{stderr}"
    );
    assert!(
        stderr.contains("tao-redact: error: 1 script(s) blocked"),
        "{stderr}"
    );
}

#[test]
fn lint_finds_the_exact_value_of_a_named_secret() {
    let value = "plain words are a secret too";
    let input = format!("{}\n", job("tao-x", &format!("echo '{value}'\n")));
    let o = cmd()
        .args(["lint", "--secret-env", "DB_PHRASE"])
        .env("DB_PHRASE", value)
        .write_stdin(input)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines[0]["lint"]["findings"][0]["rule"], "env:DB_PHRASE");
    assert!(!String::from_utf8_lossy(&o.stderr).contains(value));
}

#[test]
fn lint_line_without_script_text_is_bad_input_and_the_other_lines_go_on() {
    // tao_core::filter, OnBadLine::GoOn: the bad line is reported and goes
    // on with error.code "missing_stage"; the line after it is still linted.
    let input = format!(
        "{}\n{{\"id\":\"tao-y\"}}\n{}\n",
        job("tao-a", "echo\n"),
        job("tao-c", "echo\n")
    );
    let o = cmd()
        .arg("lint")
        .write_stdin(input)
        .assert()
        .code(65)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.contains("line 2: missing string field `script.text`"),
        "{stderr}"
    );
    assert!(stderr.contains("tao-render"), "{stderr}");
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines.len(), 3);
    assert_eq!(lines[0]["id"], "tao-a");
    assert_eq!(lines[0]["lint"]["ok"], true);
    assert_eq!(lines[1]["id"], "tao-y");
    assert_eq!(lines[1]["error"]["code"], "missing_stage");
    assert!(lines[1].get("lint").is_none());
    assert_eq!(lines[2]["id"], "tao-c");
    assert_eq!(lines[2]["lint"]["ok"], true);
    let o = cmd()
        .arg("lint")
        .write_stdin(format!("not json\n{}\n", job("tao-d", "echo\n")))
        .assert()
        .code(65)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(
        stderr.starts_with("tao-redact: error: line 1, column"),
        "{stderr}"
    );
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines.len(), 1);
    assert_eq!(lines[0]["id"], "tao-d");
}

#[test]
fn lint_passes_through_a_line_that_already_failed() {
    let input = "{\"id\":\"tao-e\",\"error\":{\"tool\":\"tao-render\",\"code\":\"data\",\"message\":\"x\"}}\n";
    cmd()
        .arg("lint")
        .write_stdin(input)
        .assert()
        .success()
        .stdout(input);
}

#[test]
fn lint_files() {
    let dir = tempfile::tempdir().unwrap();
    let good = dir.path().join("good.sbatch");
    let bad = dir.path().join("bad.sbatch");
    let latin1 = dir.path().join("latin1.sbatch");
    std::fs::write(&good, "#!/bin/bash\nexport GH_TOKEN=\"${GH_TOKEN}\"\n").unwrap();
    std::fs::write(
        &bad,
        format!("#!/bin/bash\n  git clone https://{GHP}@github.com/o/r\n"),
    )
    .unwrap();
    std::fs::write(&latin1, b"echo caf\xe9\n").unwrap();
    let o = cmd()
        .arg("lint")
        .arg(&good)
        .arg(&bad)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines[0]["file"], good.display().to_string());
    assert_eq!(lines[0]["lint"]["ok"], true);
    assert_eq!(lines[1]["lint"]["findings"][0]["rule"], "github-token");
    assert_eq!(lines[1]["lint"]["findings"][0]["column"], 21);
    assert!(!String::from_utf8_lossy(&o.stdout).contains(GHP));
    assert!(!String::from_utf8_lossy(&o.stderr).contains(GHP));
    cmd().arg("lint").arg(&good).assert().success();
    cmd()
        .arg("lint")
        .arg(&latin1)
        .assert()
        .code(65)
        .stderr(predicates::str::contains("not UTF-8"));
    cmd()
        .arg("lint")
        .arg(dir.path().join("missing"))
        .assert()
        .code(74);
}

#[test]
fn filter_masks_rules_and_exact_env_values() {
    let input = format!(
        "step 1 ok\nexport GH_TOKEN={GHP}\nlogin with Opaque-Value-42-xyz done\nhf={HF}\n-----BEGIN PRIVATE KEY-----\nMIIEvQIBADANBgkqhkiG9w0BAQEFAASC\n-----END PRIVATE KEY-----\nlast line without newline"
    );
    let o = cmd()
        .env("NGC_KEY", "Opaque-Value-42-xyz")
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "step 1 ok\nexport GH_TOKEN=[REDACTED:github-token]\nlogin with [REDACTED:env:NGC_KEY] done\nhf=[REDACTED:huggingface-token]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\n[REDACTED:pem-private-key]\nlast line without newline"
    );
}

/// The two lines a user reported passing both gates unmasked: generic HTTP
/// credentials (RFC 6750 Bearer, RFC 7617 Basic) in curl/wget headers.
const BEARER_LINE: &str =
    r#"curl -H "Authorization: Bearer 9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc" x"#;
const BASIC_LINE: &str = r#"wget --header="Authorization: Basic dXNlcjpwYXNzd29yZDEyMw==" x"#;
const BEARER_TOKEN: &str = "9f8e7d6c5b4a39281706f5e4d3c2b1a0ffeeddcc";
const BASIC_CREDENTIALS: &str = "dXNlcjpwYXNzd29yZDEyMw==";

#[test]
fn filter_masks_http_authorization_credentials() {
    let input = format!(
        "{BEARER_LINE}
{BASIC_LINE}
curl -H \"Authorization: Bearer $TOKEN\" x\n"
    );
    let o = cmd()
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        "curl -H \"Authorization: Bearer [REDACTED:http-bearer-token]\" x\n\
         wget --header=\"Authorization: Basic [REDACTED:http-basic-auth]\" x\n\
         curl -H \"Authorization: Bearer $TOKEN\" x\n"
    );
    assert!(
        o.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&o.stderr)
    );
}

#[test]
fn lint_blocks_a_script_with_http_authorization_credentials() {
    let script = format!("#!/bin/bash\n#SBATCH --job-name=tao-x\n{BEARER_LINE}\n{BASIC_LINE}\n");
    // As a job line on stdin.
    let o = cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job("tao-http", &script)))
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines.len(), 1);
    let lint = &lines[0]["lint"];
    assert_eq!(lint["ok"], false);
    let found: Vec<(String, u64, u64)> = lint["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| {
            (
                f["rule"].as_str().unwrap().to_string(),
                f["line"].as_u64().unwrap(),
                f["column"].as_u64().unwrap(),
            )
        })
        .collect();
    assert_eq!(
        found,
        [
            ("http-bearer-token".to_string(), 3, 32),
            ("http-basic-auth".to_string(), 4, 37),
        ]
    );
    let findings = lint["findings"].to_string();
    assert!(!findings.contains(BEARER_TOKEN), "{findings}");
    assert!(!findings.contains(BASIC_CREDENTIALS), "{findings}");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(!stderr.contains(BEARER_TOKEN) && !stderr.contains(BASIC_CREDENTIALS));
    // As a script file.
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("http.sbatch");
    std::fs::write(&path, &script).unwrap();
    let o = cmd()
        .arg("lint")
        .arg(&path)
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = stdout_lines(&o.stdout);
    assert_eq!(lines[0]["lint"]["findings"].as_array().unwrap().len(), 2);
    assert!(!String::from_utf8_lossy(&o.stdout).contains(BEARER_TOKEN));
    // The same script with references instead of literals passes.
    let clean = "#!/bin/bash\ncurl -H \"Authorization: Bearer ${HF_TOKEN}\" x\nwget --header=\"Authorization: Basic $(printf %s \"$U:$P\" | base64)\" x\n";
    cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job("tao-ok", clean)))
        .assert()
        .success();
}

/// Fake values of the real formats of the Stripe, npm, Vault, sshpass and
/// MySQL rules (rules/builtin.toml), with the line each is on.
const MORE_VENDORS: [(&str, &str, &str); 8] = [
    (
        "stripe-secret-key",
        "sk_live_51FAKEtaoRedactTestKeyQwErTy0123456789AbCd",
        "export STRIPE_API_KEY=",
    ),
    (
        "stripe-secret-key",
        "sk_test_51FAKEtaoRedactTestModeQwErTy0123456789Ab",
        "export STRIPE_SECRET_KEY=",
    ),
    (
        "npm-access-token",
        "npm_FAKEtaoRedactTest0123456789abcdEFGHi",
        "echo //registry.npmjs.org/:_authToken=",
    ),
    (
        "vault-token",
        "hvs.CAESIFAKEtaoRedactTestQw3rTy_uI0pAsDfGhJkL-zXcVbNmQw3rTy_uI0pAsDfGhJkL-zXcVbNmQw3rTy_uI0pAsDfGh",
        "vault login ",
    ),
    (
        "vault-legacy-token",
        "s.FAKEtaoQw3rTy9uI0pAsDfGh",
        "export VAULT_TOKEN=",
    ),
    (
        "vault-legacy-token",
        "b.AAAAAQFAKEtaoRedactLegacyBatch9cVb-NmLkJh_GfDsA8qWeRtYZx9cVb-NmLkJh_GfDsA8qWeRtYZx9cVb-NmLkJh_GfDsA8qW",
        "vault login ",
    ),
    ("sshpass-password", "FAKEs3cr3t!Pw", "sshpass -p "),
    ("mysql-password", "FAKEr00tPw42", "mysqldump -uroot -p"),
];

#[test]
fn stripe_npm_vault_sshpass_and_mysql_secrets_are_masked_and_blocked() {
    let mut script = String::from("#!/bin/bash\n#SBATCH --job-name=tao-x\n");
    let mut want = String::new();
    for (rule, secret, before) in MORE_VENDORS {
        script.push_str(&format!("{before}{secret} x\n"));
        want.push_str(&format!("{before}[REDACTED:{rule}] x\n"));
    }
    let o = cmd()
        .write_stdin(script.clone())
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        String::from_utf8(o.stdout).unwrap(),
        format!("#!/bin/bash\n#SBATCH --job-name=tao-x\n{want}")
    );
    let o = cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job("tao-more", &script)))
        .assert()
        .code(3)
        .get_output()
        .clone();
    let lines = stdout_lines(&o.stdout);
    let found: Vec<(&str, u64)> = lines[0]["lint"]["findings"]
        .as_array()
        .unwrap()
        .iter()
        .map(|f| (f["rule"].as_str().unwrap(), f["line"].as_u64().unwrap()))
        .collect();
    let expected: Vec<(&str, u64)> = MORE_VENDORS
        .iter()
        .enumerate()
        .map(|(i, (rule, _, _))| (*rule, i as u64 + 3))
        .collect();
    assert_eq!(found, expected);
    // The job line passes through as it came; the findings and the
    // warnings hold no secret.
    let out = format!(
        "{}{}",
        lines[0]["lint"]["findings"],
        String::from_utf8_lossy(&o.stderr)
    );
    for (_, secret, _) in MORE_VENDORS {
        assert!(!out.contains(secret), "{out}");
    }
    // The near misses: a prompt (`-p` then a space), ssh's port after
    // sshpass's options, a compiler's `-pthread`, a public Stripe key.
    let clean = "#!/bin/bash\nmysql -u tao -p taodb\nsshpass -f ~/.pw ssh -p 2222 dtn01 true\ngcc -I/usr/include/mysql -pthread app.c\necho pk_live_51FAKEtaoRedactPublishableKey0123456789\necho pk_test_51FAKEtaoRedactPublishableTest0123456789\ncp out/s.abcdefghijklmnopqrstuv12 this.s.getElementsByTagNameNS0 .\nsshpass -p \"$SSHPASS\" ssh dtn01\n";
    cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job("tao-ok", clean)))
        .assert()
        .success();
}

#[test]
fn filter_secret_env_option_and_short_value_warning() {
    let o = cmd()
        .args(["--secret-env", "WANDB_API_KEY", "--secret-env", "UNSET_ONE"])
        .env("WANDB_API_KEY", "not-hex-but-secret")
        .env("HF_TOKEN", "short")
        .write_stdin("a not-hex-but-secret b short\n")
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(o.stdout, b"a [REDACTED:env:WANDB_API_KEY] b short\n");
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert!(stderr.contains("UNSET_ONE is not set"), "{stderr}");
    assert!(
        stderr.contains("HF_TOKEN is shorter than 8 bytes"),
        "{stderr}"
    );
    assert!(
        !stderr.contains("short\n") && !stderr.contains("not-hex"),
        "{stderr}"
    );
}

#[test]
fn filter_passes_non_utf8_bytes_through_exactly() {
    let mut input: Vec<u8> = b"\xff\xfe binary \x00\x01 caf\xe9 ".to_vec();
    input.extend_from_slice(GHP.as_bytes());
    input.extend_from_slice(b" \xc3\x28 tail\r\n\x80\n");
    let mut want: Vec<u8> =
        b"\xff\xfe binary \x00\x01 caf\xe9 [REDACTED:github-token] \xc3\x28 tail\r\n\x80\n"
            .to_vec();
    let o = cmd()
        .write_stdin(input)
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(o.stdout, want);
    want.clear();
}

#[test]
fn filter_catches_secrets_on_buffer_boundaries_of_long_lines() {
    // Secrets placed around every multiple of 64 KiB (pipe reads) and of
    // the 1 MiB window, in one 3 MiB line, plus short lines after it.
    let mut input = Vec::new();
    let mut count = 0;
    let mut pos = 0usize;
    for boundary in (1..48).map(|k| k * (64 << 10)) {
        let start = boundary - 20 - (count % 30);
        input.extend(std::iter::repeat_n(b'x', start - pos));
        input.push(b' ');
        input.extend_from_slice(GHP.as_bytes());
        input.push(b' ');
        pos = input.len();
        count += 1;
    }
    input.extend_from_slice(b"\nshort\n");
    let o = cmd()
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .clone();
    let out = o.stdout;
    let text = String::from_utf8_lossy(&out);
    assert!(!text.contains(GHP));
    assert_eq!(text.matches("[REDACTED:github-token]").count(), count);
    assert_eq!(
        out.len(),
        input.len() - count * (GHP.len() - "[REDACTED:github-token]".len())
    );
    assert!(text.ends_with("\nshort\n"));
}

#[test]
fn filter_handles_a_50_mb_line() {
    let mut input = vec![b'a'; 50 << 20];
    let at = 25 << 20;
    input[at] = b' ';
    input[at + 1..at + 1 + HF.len()].copy_from_slice(HF.as_bytes());
    input[at + 1 + HF.len()] = b' ';
    input.push(b'\n');
    let o = cmd()
        .write_stdin(input.clone())
        .assert()
        .success()
        .get_output()
        .clone();
    assert_eq!(
        o.stdout.len(),
        input.len() - HF.len() + "[REDACTED:huggingface-token]".len()
    );
    assert!(o.stdout.windows(HF.len()).all(|w| w != HF.as_bytes()));
}

#[test]
fn filter_writes_each_line_as_soon_as_it_is_read() {
    let mut child = StdCommand::new(assert_cmd::cargo::cargo_bin("tao-redact"))
        .env_clear()
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .spawn()
        .unwrap();
    let mut stdin = child.stdin.take().unwrap();
    let stdout = child.stdout.take().unwrap();
    let (tx, rx) = mpsc::channel();
    std::thread::spawn(move || {
        let mut r = BufReader::new(stdout);
        loop {
            let mut line = String::new();
            if r.read_line(&mut line).unwrap_or(0) == 0 {
                break;
            }
            if tx.send(line).is_err() {
                break;
            }
        }
    });
    // stdin stays open: the line must come out without waiting for EOF.
    writeln!(stdin, "token {GHP} first").unwrap();
    stdin.flush().unwrap();
    let first = rx
        .recv_timeout(Duration::from_secs(30))
        .expect("first line was not flushed");
    assert_eq!(first, "token [REDACTED:github-token] first\n");
    writeln!(stdin, "second").unwrap();
    stdin.flush().unwrap();
    assert_eq!(
        rx.recv_timeout(Duration::from_secs(30)).unwrap(),
        "second\n"
    );
    drop(stdin);
    assert!(child.wait().unwrap().success());
}

#[test]
fn rules_file_extends_the_catalogue_and_bad_ones_are_refused() {
    let dir = tempfile::tempdir().unwrap();
    let rules = dir.path().join("acme.toml");
    std::fs::write(
        &rules,
        "[[rule]]\nid = \"acme-token\"\ndescription = \"ACME CI token\"\nsource = \"ACME docs\"\nkeywords = [\"acme_\"]\nregex = '''\\bacme_[a-z0-9]{16}\\b'''\n",
    )
    .unwrap();
    cmd()
        .arg("--rules")
        .arg(&rules)
        .write_stdin("t=acme_0123456789abcdef\n")
        .assert()
        .success()
        .stdout("t=[REDACTED:acme-token]\n");
    cmd()
        .args(["lint", "--rules"])
        .arg(&rules)
        .arg("--list-rules")
        .assert()
        .success()
        .stdout(predicates::str::contains(
            "acme-token\tACME CI token\tACME docs",
        ));
    let bad = dir.path().join("bad.toml");
    std::fs::write(&bad, "[[rule]]\nid = \"x\"\nregex = \"(\"\n").unwrap();
    cmd()
        .arg("--rules")
        .arg(&bad)
        .write_stdin("")
        .assert()
        .code(78)
        .stderr(predicates::str::contains("regex does not compile"));
    cmd()
        .arg("--rules")
        .arg(dir.path().join("none.toml"))
        .assert()
        .code(74);
}

#[test]
fn filter_exits_quietly_when_the_reader_goes_away() {
    let (mut child, mut stdin) = tao_testkit::tool::spawn_piped(
        StdCommand::new(assert_cmd::cargo::cargo_bin("tao-redact")).env_clear(),
    );
    let mut stdout = BufReader::new(child.stdout.take().unwrap());
    let writer = std::thread::spawn(move || {
        let line = b"an ordinary log line that goes on and on\n".repeat(1000);
        for _ in 0..2000 {
            if stdin.write_all(&line).is_err() {
                break;
            }
        }
    });
    let mut first = String::new();
    stdout.read_line(&mut first).unwrap();
    assert_eq!(first, "an ordinary log line that goes on and on\n");
    drop(stdout);
    writer.join().unwrap();
    let out = child.wait_with_output().unwrap();
    tao_testkit::tool::assert_exit(&out, 0);
    assert!(
        out.stderr.is_empty(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
}

/// A job line with its own fields (command, execution, secrets, env) and a
/// script text, as tao-render writes it.
fn job_with(fields: Value, script: &str) -> String {
    let mut v = serde_json::json!({"id": "tao-x", "script": {"template": "single", "sha256": "00", "text": script}});
    for (k, x) in fields.as_object().unwrap() {
        v[k] = x.clone();
    }
    v.to_string()
}

/// Issue 16: lint approved `set -x; ...` on a job with secrets; the
/// rendered script then printed `++ printf %s <value>` into main.err.
/// Every xtrace form in any step (and env) is one finding naming the step.
#[test]
fn lint_blocks_xtrace_in_any_step_of_a_job_with_secrets() {
    let script = "#!/bin/bash\necho run\n";
    let cases = [
        (serde_json::json!({"command": "set -x; train"}), "main"),
        (serde_json::json!({"command": "bash -x run.sh"}), "main"),
        (
            serde_json::json!({"execution": {"pre_commands": ["cd /w", "set -o xtrace"], "command": "train"}}),
            "pre_2",
        ),
        (
            serde_json::json!({"execution": {"command": "train", "post_commands": [{"command": "sh -x up.sh", "scope": "leader"}]}}),
            "post_1",
        ),
        (
            serde_json::json!({"command": "export BASH_XTRACEFD=2; train"}),
            "main",
        ),
        (
            serde_json::json!({"command": "SHELLOPTS=xtrace train"}),
            "main",
        ),
        (
            serde_json::json!({"command": "train", "spec": {"name": "s.yaml", "text": "hook: set -x\n"}}),
            "spec",
        ),
        (
            serde_json::json!({"command": "train", "env": {"SHELLOPTS": "braceexpand:xtrace"}}),
            "env.SHELLOPTS",
        ),
    ];
    for (fields, step) in cases {
        let mut f = fields.clone();
        f["secrets"] = serde_json::json!(["WANDB_API_KEY"]);
        let out = cmd()
            .arg("lint")
            .write_stdin(format!("{}\n", job_with(f, script)))
            .output()
            .unwrap();
        let stderr = String::from_utf8_lossy(&out.stderr);
        assert_eq!(out.status.code(), Some(3), "{fields}: {stderr}");
        let line = &stdout_lines(&out.stdout)[0];
        let finding = &line["lint"]["findings"][0];
        assert_eq!(finding["rule"], "xtrace", "{fields}: {line}");
        assert_eq!(finding["step"], step, "{fields}: {line}");
        let warn: Vec<&str> = stderr.lines().filter(|l| l.contains("xtrace")).collect();
        assert_eq!(warn.len(), 1, "one line naming the step: {stderr}");
        assert!(
            warn[0].contains(&format!("step {step}")) || warn[0].contains(step),
            "{stderr}"
        );
    }
    // Without secrets xtrace is the user's business; `set +x` is always fine.
    let out = cmd()
        .arg("lint")
        .write_stdin(format!(
            "{}\n",
            job_with(serde_json::json!({"command": "set -x; train"}), script)
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(0));
    let f = serde_json::json!({"command": "set +x; train", "secrets": ["HF_TOKEN"]});
    let out = cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job_with(f, script)))
        .output()
        .unwrap();
    tao_testkit::tool::assert_exit(&out, 0);
}

/// Issue 16, the syntax gate: `bash -n` on the script and on each step as
/// the job runs it, so a typo is exit 3 at lint naming the step and the
/// line, not a failure after hours in the queue.
#[test]
fn lint_syntax_gate_names_the_step_and_the_line() {
    let script = "#!/bin/bash\necho run\n";
    let f = serde_json::json!({"execution": {"pre_commands": ["echo ok"], "command": "for f in a b; do\n  echo $f\ndone )"}});
    let out = cmd()
        .arg("lint")
        .write_stdin(format!("{}\n", job_with(f, script)))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(3), "{stderr}");
    let line = &stdout_lines(&out.stdout)[0];
    let finding = &line["lint"]["findings"][0];
    assert_eq!(finding["rule"], "syntax", "{line}");
    assert_eq!(finding["step"], "main", "{line}");
    assert_eq!(finding["line"], 3, "{line}");
    assert!(
        stderr.contains("step main line 3: bash -n: syntax error"),
        "{stderr}"
    );
    // The script itself.
    let out = cmd()
        .arg("lint")
        .write_stdin(format!(
            "{}\n",
            job_with(
                serde_json::json!({"command": "true"}),
                "#!/bin/bash\nif true; then\necho\n"
            )
        ))
        .output()
        .unwrap();
    assert_eq!(out.status.code(), Some(3));
    let line = &stdout_lines(&out.stdout)[0];
    assert_eq!(line["lint"]["findings"][0]["step"], "script", "{line}");
}

/// An unset `--secret-env` name is warned about once, as the user's own
/// flag (not as a secret "named by a job").
#[test]
fn an_unset_secret_env_name_is_warned_about_once() {
    let out = cmd()
        .env_remove("TAO_NOPE_UNSET")
        .args(["--secret-env", "TAO_NOPE_UNSET"])
        .write_stdin("hi\n")
        .output()
        .unwrap();
    let err = String::from_utf8(out.stderr).unwrap();
    assert_eq!(out.status.code(), Some(0), "{err}");
    assert_eq!(out.stdout, b"hi\n");
    assert_eq!(err.lines().count(), 1, "{err}");
    assert!(
        err.contains("TAO_NOPE_UNSET is not set (named by --secret-env)")
            && !err.contains("named by a job"),
        "{err}"
    );
}

/// A raw sbatch file piped into `lint` (instead of named as an argument):
/// one error, at line 1 with one position (no second, contradicting one
/// from the JSON parser), with the fix; exit 65, nothing on stdout.
#[test]
fn a_script_piped_in_gets_one_error_with_the_fix() {
    let o = cmd()
        .arg("lint")
        .write_stdin("#!/bin/bash\n#SBATCH --nodes=1\n#SBATCH --gpus-per-node=4\nsrun hostname\n")
        .assert()
        .code(65)
        .get_output()
        .clone();
    let stderr = String::from_utf8_lossy(&o.stderr);
    assert_eq!(stderr.lines().count(), 1, "{stderr}");
    assert!(
        stderr.starts_with("tao-redact: error: line 1, column 1: invalid JSON (expected value); standard input is not job lines"),
        "{stderr}"
    );
    assert!(
        stderr
            .trim_end()
            .ends_with("pass the file as an argument: tao-redact lint FILE"),
        "{stderr}"
    );
    assert!(!stderr.contains(" at line "), "{stderr}");
    assert!(o.stdout.is_empty());
}

/// A new user's secrets that passed through unmasked (fake values of the
/// real formats): a Databricks token, a Docker Hub token, a Discord
/// webhook, an Azure SAS and an S3 pre-signed URL, and a curl password.
/// The filter masks each, and lint blocks a script holding any of them.
#[test]
fn other_vendors_secrets_are_masked_and_blocked() {
    let cases = [
        ("dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9", "databricks host h dapi0a1b2c3d4e5f60718293a4b5c6d7e8f9"),
        ("dckr_pat_FAKEtaoQ9xLm2Vb7Nc4Kd8Ze1Rt", "docker token dckr_pat_FAKEtaoQ9xLm2Vb7Nc4Kd8Ze1Rt"),
        ("FAKEtaoWebhook_q8Xv2LmN4pR7tZ1wK9cB3yH6jq8Xv2LmN4pR7tZ1wK9cB3yH6j", "url: https://discord.com/api/webhooks/123456789012345678/FAKEtaoWebhook_q8Xv2LmN4pR7tZ1wK9cB3yH6jq8Xv2LmN4pR7tZ1wK9cB3yH6j"),
        ("FAKEtaoSig0q8Xv2LmN4pR7tZ1wK9cB3yH6j%2BAbC%3D", "https://a.blob.core.windows.net/c/f?sv=2022-11-02&sp=r&sig=FAKEtaoSig0q8Xv2LmN4pR7tZ1wK9cB3yH6j%2BAbC%3D"),
        ("0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0", "https://b.s3.amazonaws.com/k?X-Amz-Expires=3600&X-Amz-Signature=0f1e2d3c4b5a69788796a5b4c3d2e1f00f1e2d3c4b5a69788796a5b4c3d2e1f0"),
        ("FAKEtaoPw9xLm2Vb", "curl -fsS -u alice:FAKEtaoPw9xLm2Vb https://h/coco.tar"),
    ];
    for (secret, text) in cases {
        let out = cmd().write_stdin(format!("{text}\n")).assert().success();
        let stdout = String::from_utf8_lossy(&out.get_output().stdout).into_owned();
        assert!(!stdout.contains(secret), "{stdout}");
        assert!(stdout.contains("[REDACTED:"), "{stdout}");
        let script = format!("#!/bin/bash\n{text}\n");
        cmd()
            .arg("lint")
            .write_stdin(format!("{}\n", job("tao-v", &script)))
            .assert()
            .code(3);
    }
}
