//! The table of `tao-record list --table` in the locale it is shown in:
//! under a UTF-8 locale the progress bar and the KPI sparkline are block
//! glyphs; under the C/POSIX locale (LANG=C, or no LANG at all, as in cron
//! or a bare container) every byte is ASCII (`#` and `.`, a sparkline of
//! `_.-~=+*#`), so the columns line up on a terminal that shows one
//! character per byte.

mod common;

use common::Env;
use serde_json::json;

/// A store with one RUNNING record that carries progress (3 of 10 epochs,
/// a loss history), as `tao-poll | tao-record mark` leaves it.
fn store_with_progress() -> Env {
    let env = Env::new();
    let id = env.open(&[]);
    let line = json!({"id": id, "state": "RUNNING", "slurm": {"job_id": "7"},
        "message": "RUNNING",
        "progress": {"epoch": 3, "max_epoch": 10, "percent": 30.0, "eta_s": 420,
            "kpi": {"loss": 0.5}, "history": {"loss": [0.9, 0.7, 0.5]}}});
    env.cmd()
        .arg("mark")
        .write_stdin(format!("{line}\n"))
        .assert()
        .success();
    env
}

fn table(env: &mut Env, locale: &[(&str, &str)]) -> String {
    for k in ["LANG", "LC_ALL", "LC_CTYPE"] {
        env.unset(k);
    }
    for (k, v) in locale {
        env.set(k, v);
    }
    let out = env.cmd().args(["list", "--table"]).output().unwrap();
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout).unwrap()
}

#[test]
fn table_glyphs_follow_the_locale() {
    let mut env = store_with_progress();
    for utf8 in [
        &[("LANG", "C.UTF-8")][..],
        &[("LANG", "en_US.utf8")],
        &[("LANG", "C"), ("LC_ALL", "de_DE.UTF-8")],
    ] {
        let t = table(&mut env, utf8);
        assert!(
            t.contains("[████░░░░░░░░] 3/10 30% ETA 00:07:00"),
            "{utf8:?}: {t}"
        );
        assert!(t.contains("loss 0.5 █▄▁"), "{utf8:?}: {t}");
    }
    for ascii in [
        &[][..],
        &[("LANG", "C")],
        &[("LANG", "POSIX")],
        &[("LANG", "en_US.UTF-8"), ("LC_ALL", "C")],
        &[("LANG", "en_US.UTF-8"), ("LC_CTYPE", "C")],
    ] {
        let t = table(&mut env, ascii);
        assert!(t.is_ascii(), "{ascii:?}: {t}");
        assert!(
            t.contains("[####........] 3/10 30% ETA 00:07:00"),
            "{ascii:?}: {t}"
        );
        assert!(t.contains("loss 0.5 #~_"), "{ascii:?}: {t}");
    }
}
