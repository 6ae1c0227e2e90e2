//! Case `env-newline` (issue 16): `tao-record open --env "$(printf
//! 'CERT=a\nb\tc')"` is accepted and the job on the local cluster sees
//! exactly those bytes; likewise CR (also as a DOS line break `\r\n`, which
//! sbatch refuses in a script) and ESC in env values, and ESC in the command
//! and in a pre-step. Only NUL is refused (`no_nul_anywhere_else`).
//!
//! The job prints each value as hex (`od -An -tx1`) into its log; the test
//! compares the hex with the bytes it gave.

use tao_tests::{bash, bin, cluster, dino_train, text};

/// Hex of `bytes` as one string without spaces (od's output, joined).
fn hex(bytes: &[u8]) -> String {
    bytes.iter().map(|b| format!("{b:02x}")).collect()
}

#[test]
fn env_newline() {
    let Some(c) = cluster() else { return };
    let state = tempfile::tempdir().unwrap();
    let cert = b"a\nb\tc";
    let mix = b"x\r\ny\x1b[31mz\r";
    // The command holds a literal ESC; so do a pre-step and a post-step
    // (given with --execution, as the model lifecycle file).
    let script = r#"
esc=$(printf '\033')
exe=$(mktemp)
jq -n --arg esc "$esc" '{pre_commands: ["printf pre:; printf %s \"" + $esc + "[1m\" | od -An -tx1 | tr -d \" \\n\"; echo"],
  post_commands: [{command: ("printf post:; printf %s \"" + $esc + "[2m\" | od -An -tx1 | tr -d \" \\n\"; echo"), scope: "all"}]}' >"$exe"
line=$(tao-record open --action train --network-arch demo --gpus-per-node 1 --cpus-per-task 1 \
         --time 00:05:00 --execution "$exe" \
         --env "$(printf 'CERT=a\nb\tc')" \
         --env "$(printf 'MIX=x\r\ny\033[31mz\r')" \
         --command "printf 'cert:'; printf %s \"\$CERT\" | od -An -tx1 | tr -d ' \n'; echo; printf 'mix:'; printf %s \"\$MIX\" | od -An -tx1 | tr -d ' \n'; echo; printf 'cmd:'; printf %s '${esc}[0m' | od -An -tx1 | tr -d ' \n'; echo" \
       | tao-render | tao-redact lint | tao-submit | tao-record mark)
id=$(jq -r .id <<<"$line")
tao-record list --id "$id" | tao-poll --watch --interval 1 | tao-record mark >/dev/null || true
tao-record list --id "$id" | jq -r .state
tao-poll logs "$id" -n 50
"#;
    let out = bash(
        &c,
        &[("TAO_STATE_DIR", state.path().to_str().unwrap())],
        script,
    );
    let stdout = text(&out.stdout);
    assert!(
        out.status.success(),
        "pipeline failed: {}\nstdout: {stdout}",
        text(&out.stderr)
    );
    let mut lines = stdout.lines();
    assert_eq!(lines.next(), Some("COMPLETE"), "{stdout}");
    let find = |tag: &str| {
        stdout
            .lines()
            .find_map(|l| l.trim().strip_prefix(tag))
            .unwrap_or_else(|| panic!("no {tag} line in the log: {stdout}"))
            .to_string()
    };
    assert_eq!(find("cert:"), hex(cert), "CERT");
    assert_eq!(find("mix:"), hex(mix), "MIX");
    assert_eq!(find("cmd:"), hex(b"\x1b[0m"), "ESC in the command");
    assert_eq!(find("pre:"), hex(b"\x1b[1m"), "ESC in a pre-step");
    assert_eq!(find("post:"), hex(b"\x1b[2m"), "ESC in a post-step");
}

/// NUL is the one byte refused, in an env value and a command, with a line
/// naming the flag (exit 2); the other control bytes are accepted by open.
#[test]
fn env_newline_only_nul_is_refused() {
    let dir = tempfile::tempdir().unwrap();
    let open = |args: &[&str]| {
        std::process::Command::new(bin("tao-record"))
            .env_clear()
            .env("TAO_STATE_DIR", dir.path())
            .args(["open", "--dry-run"])
            .args(dino_train("/tmp/tao-env-newline"))
            .args(args)
            .output()
            .unwrap()
    };
    for value in [
        "a\nb",
        "a\tb",
        "a\rb",
        "a\r\nb",
        "a\x1bb",
        "\x07\x08\x0b\x0c\x7f",
    ] {
        let env = format!("V={value}");
        let out = open(&["--env", &env, "--command", &format!("echo {value}")]);
        assert!(out.status.success(), "{value:?}: {}", text(&out.stderr));
        let line: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
        assert_eq!(line["env"]["V"], value, "{value:?}");
        assert_eq!(line["command"], format!("echo {value}"));
    }
    // A NUL cannot be passed in argv at all; it reaches open through a
    // spec file or a job line, so the spec is the case to check here.
    let spec = dir.path().join("spec.yaml");
    std::fs::write(&spec, "a: 1\nb: \"x\0y\"\n").unwrap();
    let out = open(&[
        "--spec",
        spec.to_str().unwrap(),
        "--command",
        "echo {config_path}",
    ]);
    assert_eq!(out.status.code(), Some(65), "{}", text(&out.stderr));
    assert!(text(&out.stderr).contains("NUL"), "{}", text(&out.stderr));
    std::fs::write(&spec, "a: 1\nb: \"x\x1b[0my\"\nc: |\n  l1\r\n  l2\n").unwrap();
    let out = open(&[
        "--spec",
        spec.to_str().unwrap(),
        "--command",
        "echo {config_path}",
    ]);
    assert!(out.status.success(), "{}", text(&out.stderr));
}
