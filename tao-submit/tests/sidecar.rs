//! Issue 16: the secrets sidecar (`<job_dir>/env/secrets.env`, mode 600 on
//! shared storage) is removed on every path where no job will source it.
//! Each test lists the job directory's `env/` afterwards. The fixture's
//! test scripts never remove the sidecar themselves (like a job killed
//! before its trap ran), so only tao-submit can have removed it.
//! (tao-poll's sweep of ended jobs is tested in tao-poll/tests/cluster.rs.)

mod common;

use common::{lines_of, stdin_of, with_script, Fixture};
use serde_json::{json, Value};

const PW: &str = "plain words are my db password";

/// The file names in `<job_dir>/env` (none when the directory is absent).
fn env_listing(line: &Value) -> Vec<String> {
    let dir = format!("{}/env", line["storage"]["job_dir"].as_str().unwrap());
    match std::fs::read_dir(&dir) {
        Ok(rd) => rd
            .map(|e| e.unwrap().file_name().to_string_lossy().into_owned())
            .collect(),
        Err(_) => Vec::new(),
    }
}

/// A fixture line that names the secret MY_DB_PASSWORD, with `from`
/// replaced by `to` in its script (the sha256s fixed as a re-render would).
fn secret_line(f: &Fixture, tag: &str, from: &str, to: &str) -> Value {
    let mut line = f.line(tag, "true");
    line["secrets"] = json!(["MY_DB_PASSWORD"]);
    with_script(line, from, to)
}

#[test]
fn sbatch_refused_after_staging_removes_the_sidecar() {
    let Some(f) = Fixture::new() else { return };
    let line = secret_line(&f, "sr", "--partition=gpu", "--partition=nosuchpart");
    let out = f.run_cmd(
        f.cmd().env("MY_DB_PASSWORD", PW),
        std::slice::from_ref(&line),
        1,
    );
    let got = lines_of(&out.stdout);
    assert!(
        got[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("was not submitted"),
        "{}",
        got[0]
    );
    // Staged, then removed with everything staged for it (sbatch refused
    // it and no job of its name exists): no sidecar, no script.
    let jd = line["storage"]["job_dir"].as_str().unwrap();
    assert!(!std::path::Path::new(&format!("{jd}/sbatch")).exists());
    assert_eq!(env_listing(&line), Vec::<String>::new());
}

/// Several jobs carry the record's name (an ambiguous submit): tao-submit
/// keeps the oldest live one and cancels the extras. The kept job sources
/// the sidecar, so it stays while one is live; when every job of the name
/// has ended, none will, and it goes.
#[test]
fn an_ambiguous_submit_keeps_the_sidecar_for_the_kept_job_only() {
    let Some(f) = Fixture::new() else { return };
    let line = secret_line(&f, "sa", "\ntrue\n", "\ntrue\n");
    let id = line["id"].as_str().unwrap();
    let jd = line["storage"]["job_dir"].as_str().unwrap();
    // An earlier, cut-off run staged the sidecar; two jobs of the name
    // exist and have ended.
    let (code, ids, err) = f.c.ssh(&format!(
        "mkdir -p {jd}/env && (umask 077; printf 'x\\n' > {jd}/env/secrets.env) && \
         for i in 1 2; do sbatch --parsable --job-name={id} --partition=gpu --time=00:05:00 --cpus-per-task=1 --output=/dev/null --wrap true; done"
    ));
    assert_eq!(code, 0, "{err}");
    for sid in ids.split_whitespace() {
        let st = f.c.wait_sacct(sid, 180, |s| s == "COMPLETED");
        assert_eq!(st, "COMPLETED");
    }
    assert_eq!(env_listing(&line), ["secrets.env"]);
    let out = f
        .cmd()
        .env("MY_DB_PASSWORD", PW)
        .write_stdin(stdin_of(std::slice::from_ref(&line)))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("several Slurm jobs carry its name"),
        "{stderr}"
    );
    assert!(
        lines_of(&out.stdout)[0]["message"]
            .as_str()
            .unwrap_or("")
            .contains("adopted"),
        "{}",
        String::from_utf8_lossy(&out.stdout)
    );
    assert_eq!(env_listing(&line), Vec::<String>::new());
}

#[test]
fn cancel_of_a_pending_job_removes_the_sidecar() {
    let Some(f) = Fixture::new() else { return };
    // Pending for an hour (BeginTime), so it never runs during the test.
    let line = secret_line(
        &f,
        "sc",
        "#SBATCH --time=00:05:00\n",
        "#SBATCH --time=00:05:00\n#SBATCH --begin=now+3600\n",
    );
    let out = f.run_cmd(
        f.cmd().env("MY_DB_PASSWORD", PW),
        std::slice::from_ref(&line),
        0,
    );
    let submitted = lines_of(&out.stdout).remove(0);
    assert_eq!(env_listing(&line), ["secrets.env"], "staged for the job");
    let sid = submitted["slurm"]["job_id"].as_str().unwrap().to_string();
    assert_eq!(f.c.wait_state(&sid, 60, |s| s == "PENDING"), "PENDING");
    let out = f.run(&["cancel", "--wait", "60"], &[submitted], 0);
    assert_eq!(lines_of(&out.stdout)[0]["state"], "CANCELED");
    assert_eq!(env_listing(&line), Vec::<String>::new());
}
