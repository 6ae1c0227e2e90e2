//! tao-jobline(7): the job-line protocol, the state vocabulary and its
//! Slurm mapping, exit statuses, the shared-storage layout and the
//! environment.
//!
//! Source of the prose: docs/CONTRACT.md and docs/design.md. The Slurm state
//! table is rendered from `tao_core::state::native::TABLE`, the table tao-poll
//! and tao-submit map with, the exit statuses from `tao_core::exit` and the FIELDS section from
//! `tao_core::model::FIELDS`, so the page cannot drift from any of them.

use tao_core::state::native::TABLE;
use tao_core::{exit, State};

use crate::page::{finish, heading, para, see_also, tagged_list, text, title_line, verbatim};

/// The FIELDS section, one entry per row of `tao_core::model::FIELDS`
/// (the table next to the typed model): the path, then "type (unit). Set
/// by writer. meaning".
fn fields(out: &mut String) {
    let items: Vec<(&str, String)> = tao_core::model::FIELDS
        .iter()
        .map(|f| {
            let unit = if f.unit.is_empty() {
                String::new()
            } else {
                format!(" ({})", f.unit)
            };
            (
                f.path,
                format!("{}{unit}. Set by {}. {}", f.ty, f.writer, f.meaning),
            )
        })
        .collect();
    let items: Vec<(&str, &str)> = items.iter().map(|(p, d)| (*p, d.as_str())).collect();
    tagged_list(out, &items);
}

/// What each vocabulary state means.
fn state_meaning(s: State) -> &'static str {
    match s {
        State::Pending => "Known to the scheduler, not running yet (queued, held, requeued, nodes powering up); also a record opened but never submitted (no slurm.job_id), which the tables of tao-record list and tao-poll --watch show as not submitted (or, after a failed submit, as submit failed: MESSAGE).",
        State::Running => "Started: running, completing, suspended or staging out.",
        State::Complete => "Ended, and the job's own verdict says success (final).",
        State::Error => "Ended in failure: failed, timed out, out of memory, node or launch failure, or COMPLETED with a FAILURE verdict (final).",
        State::Canceled => "Cancelled by a user or an administrator, preempted or revoked (final).",
        State::Unknown => "Not known to squeue nor sacct (yet or any more), or a state with no verdict; live: the next poll decides.",
    }
}

/// The Slurm-to-vocabulary table as a tbl(1) table, one row per native
/// state of `tao_core::state::native::TABLE`.
fn state_table(out: &mut String) {
    out.push_str(".TS\ntab(|);\nlb lb lb lb\nl l l l.\n");
    out.push_str("Slurm state|code|state|requeue may follow\n");
    for row in TABLE {
        let code = if row.code.is_empty() { "\\-" } else { row.code };
        out.push_str(&format!(
            "{}|{}|{}|{}\n",
            row.name.replace('-', "\\-"),
            code,
            row.state.as_str(),
            if row.requeueable { "yes" } else { "no" }
        ));
    }
    out.push_str(".TE\n");
}

/// Render the whole tao-jobline(7) page.
///
/// Output: roff source (with a tbl table: the first line asks man(1) to
/// run tbl), UTF-8, ending in a newline.
pub fn render() -> String {
    let mut out = title_line("TAO-JOBLINE", "7");
    heading(&mut out, "NAME");
    out.push_str(&text("tao-jobline - the job-line protocol, state vocabulary and storage layout of the tao-slurm tools"));
    heading(&mut out, "DESCRIPTION");
    out.push_str(&text("The tao-slurm tools run NVIDIA TAO (and any containerised GPU) jobs on a remote Slurm cluster over SSH. They pass job lines to each other on standard input and output, so the whole workflow is a shell pipeline, a Makefile rule or a cron line:"));
    verbatim(&mut out, "tao-record open ... | tao-render | tao-redact lint | tao-submit | tao-record mark\ntao-record list --live | tao-poll --evidence | tao-classify | tao-record mark");
    para(&mut out, "A job line is one JSON object on one line, UTF-8, ended by a newline. A UTF-8 byte-order mark at the very start of the input (Notepad, PowerShell Out-File) is skipped; one at the start of a later line (files joined with cat) is a bad line that says so. Each tool reads the fields it needs, adds its own, and passes every other field through untouched and in order, unknown keys included, so jq(1) can sit anywhere in a pipeline. Tools flush after every line.");
    para(&mut out, "A failure that belongs to one job is data: the tool sets error = {tool, code, message}, prints the line, goes on with the next one and exits 1 at the end. A line that arrives with an error from an earlier tool is passed through untouched by tools that cannot act on it, and counts as failed only for the tool that set it. No tool prints half a line.");
    para(&mut out, "A bad line (not UTF-8, not JSON, not a JSON object, longer than 64 MiB, or a JSON object that lacks or has an invalid field the tool needs) is treated the same way by every tool (one driver, tao_core::filter): it is reported at once on standard error as one line, tao-x: error: line N[, column C]: what is wrong; how to fix it (with -q too); a line that cannot be parsed is not printed, a JSON object goes on with an error object where the tool's page says so; the exit status is 65 when any line was bad, before 1 and before a tool's own statuses (3, 69, 77, 78). Then the streaming filters (tao-render, tao-redact lint, tao-classify, tao-record mark and retry) go on with the next line, and the tools that read every line before acting on the cluster (tao-poll, tao-submit, tao-submit cancel, tao-submit preflight --lines) stop reading: the lines before the bad one are acted on and printed, the lines after it are not read. N is the input line number, C the column in that line. Input that is not job lines at all (its first line is not JSON and does not open an object, such as a script piped in) gets one error at its first line with the fix (tao-redact lint: pass the file as an argument); the non-JSON lines after it are counted, not reported, until a job line comes.");
    para(&mut out, "Gates: tao-submit refuses a line that tao-record did not open (no id, no launch) and a script whose sha256 differs from the one tao-redact lint approved (no lint, no launch). Secrets travel by name only.");

    heading(&mut out, "FIELDS");
    out.push_str(&text("Generated from the typed job model (tao_core::model::FIELDS): each field, its JSON type and unit, the tools that set it and what it means. Every object also keeps keys it does not know, in their places."));
    fields(&mut out);

    heading(&mut out, "STATE VOCABULARY");
    let states: Vec<(&str, &str)> = State::ALL
        .iter()
        .map(|s| (s.as_str(), state_meaning(*s)))
        .collect();
    tagged_list(&mut out, &states);
    para(&mut out, "PENDING, RUNNING and UNKNOWN are live; COMPLETE, ERROR and CANCELED are final. tao-record list --live lists the live records and the ERROR records that ran on Slurm but have no classification yet (so the cron pipeline classifies a failure the watch pipeline recorded), and the ERROR records classified retryable (classification.retry true, attempt below 10) whose retry was never opened (so the next cron run opens the retry a crash between tao-record mark and tao-record retry left undone; tao-record retry opens it once and records a spent budget as classification.retry false).");

    heading(&mut out, "SLURM STATES");
    out.push_str(&text("Every state Slurm prints maps to exactly one word of the vocabulary; the native state and reason ride along in slurm.native_state and message. squeue's compact codes, sacct's annotated (CANCELLED by 0) and truncated (CANCELLED+) spellings are accepted. A state marked \"requeue may follow\" is provisional while requeue is on: Slurm may requeue the job after it."));
    out.push_str(".PP\n");
    state_table(&mut out);
    para(&mut out, "COMPLETED needs the job's own verdict: TAO containers append JSON lines to <results_dir>/status.json (status STARTED, RUNNING, SUCCESS, FAILURE or SKIPPED); the last SUCCESS or FAILURE decides COMPLETE or ERROR (current TAO ends a good run with a RUNNING record \"Train finished successfully.\" instead of SUCCESS: it counts as SUCCESS). For commands that write no status.json, completion.json's exit_code decides (0 is COMPLETE). A job known to neither squeue nor sacct is UNKNOWN. squeue and sacct are asked once each per login host for all jobs, never once per job.");

    heading(&mut out, "EXIT STATUS");
    out.push_str(&text("Every tool uses these statuses (each page says what each means for that tool). Errors are one line on standard error, tao-x: error: ..., naming the input and the fix."));
    #[rustfmt::skip]
    let codes: &[(i32, &str)] = &[
        (exit::OK, "Success."),
        (exit::SOME_FAILED, "Some lines failed: they carry an error object; the other lines went through (when every line read failed for one reason of the environment, that reason's status is the run's instead: 69, 77 or 78)."),
        (exit::USAGE, "Usage error."),
        (exit::LINT_BLOCKED, "tao-redact lint (or tao-submit's own lint) blocked a script: a literal secret, xtrace on a job with secrets, or a shell syntax error; tao-record open refused a literal secret in its input (--command, --env, the spec, a supporting file) and recorded nothing."),
        (exit::DATAERR, "Bad input data: a bad line (not JSON, a required field missing; see DESCRIPTION for what the tools do after it), a bad file, an unknown record id (tao-record show/history/mark ID, list --id; tao-poll logs/report)."),
        (exit::UNAVAILABLE, "The cluster is unreachable: no login host answered."),
        (exit::SOFTWARE, "Internal error (a bug)."),
        (exit::IOERR, "Local I/O error, or output lost by a tool with side effects."),
        (exit::TEMPFAIL, "Temporary failure: try again."),
        (exit::PROTOCOL, "A scheduler reply that could not be parsed."),
        (exit::NOPERM, "Authentication, host key or key permissions refused."),
        (exit::CONFIG, "Configuration error: a missing or bad variable, a bad site profile or rules file."),
    ];
    let items: Vec<(String, &str)> = codes.iter().map(|(c, d)| (c.to_string(), *d)).collect();
    tagged_list(&mut out, &items);

    heading(&mut out, "SHARED STORAGE");
    out.push_str(&text(
        "Under storage.base_dir (SLURM_BASE_RESULTS_DIR) on the cluster's shared filesystem:",
    ));
    verbatim(
        &mut out,
        "jobs/<id>/specs/<spec name>        staged spec ({config_path})
jobs/<id>/env/secrets.env          mode 600 sidecar, sourced then shredded by the job
jobs/<id>/meta/job.json            the job line as submitted (no script text, no secrets)
jobs/<id>/sbatch/job_<id>.sbatch   the approved script
jobs/<id>/slurm-logs/<id>-<slurm_job_id>/main.out, main.err, completion.json
jobs/<id>/inputs/action-helpers/   checksum-closed supporting files
results/<id>/status.json           TAO status (JSON lines), written by the container
images/<name>.sqsh                 image conversion cache",
    );
    para(&mut out, "tao-submit runs sbatch --parsable --hold, creates slurm-logs/<id>-<slurm_job_id>/, then scontrol release: Slurm 22.05 does not create the directories named by --output. Scripts append (--open-mode=append), so a requeued attempt adds to the same logs. completion.json is written by the job script on exit: {\"exit_code\": int, \"end\": RFC 3339, \"slurm_job_id\": \"123\", \"restart_count\": int}.");
    para(&mut out, "The job's environment: TAO_JOB_ID=<id>, RESULTS_DIR=<results_dir>, TAO_API_RESULTS_DIR=<base>/results (TAO appends the job id), plus the line's env. Multi-node jobs run one task per node and export WORLD_SIZE (the node count), NUM_GPU_PER_NODE, NODE_RANK, MASTER_ADDR, MASTER_PORT, TAO_NODE_COUNT, TAO_GPUS_PER_NODE and TAO_NODE_RANK.");

    heading(&mut out, "RESERVED NAMES");
    out.push_str(&text(&format!(
        "Names env and secrets may not use, refused by tao-record open (exit 2) and tao-render (the line's error) alike (tao_core::request): the job script sets them, Slurm or the rendezvous sets them, or bash reads them (the secrets sidecar is sourced before the steps, so such a secret could redirect the script, its clean-up included): {}; and every name starting with {}. env also refuses names that look like secrets (*TOKEN*, *SECRET*, *PASSWORD*, *_KEY, ...: use secrets) and a name that is also in secrets.",
        tao_core::request::RESERVED_NAMES.join(", "),
        tao_core::request::RESERVED_PREFIXES.join(", ")
    )));

    heading(&mut out, "LOCAL STATE");
    out.push_str(&text("Records live in $TAO_STATE_DIR/records/<id>.json (default $XDG_STATE_HOME/tao-slurm, else ~/.local/state/tao-slurm): the job line plus history [{at, state, source, message}], one file per job, written atomically under a per-record lock, so overlapping cron runs lose nothing. tao-record list prints job lines without history."));

    heading(&mut out, "ENVIRONMENT");
    out.push_str(&text("Flags override these variables."));
    tagged_list(
        &mut out,
        &[
            ("SLURM_USER", "User on the login nodes."),
            ("SLURM_HOSTNAME", "Login hosts, comma-separated host[:port] or ~/.ssh/config aliases; the first that answers is used."),
            ("SLURM_PARTITION", "Default partition."),
            ("SLURM_ACCOUNT", "Default account."),
            ("SLURM_BASE_RESULTS_DIR", "Shared-storage root for jobs/, results/ and images/ (/abs or lustre:///abs)."),
            ("SLURM_CONTAINER_MOUNTS", "Pyxis --container-mounts, comma-separated."),
            ("SLURM_USE_REQUEUE", "false to submit with --no-requeue (default true)."),
            ("SSH_KEY_PATH", "Private key (mode 600); without it the ssh-agent (SSH_AUTH_SOCK) is used."),
            ("SSH_KNOWN_HOSTS", "known_hosts file (default ~/.ssh/known_hosts)."),
            ("SSH_CONFIG", "OpenSSH client config (default ~/.ssh/config)."),
            ("TAO_RUNTIME", "pyxis or none."),
            ("TAO_SITE_PROFILE", "Site profile: cs-oci-ord (default), local, or a TOML file (tao-site-profile(5))."),
            ("TAO_STATE_DIR", "The record store."),
            ("NGC_KEY, HF_TOKEN", "Secrets: passed by name only, written to a mode-600 sidecar over SSH standard input, never in arguments, scripts, records, logs or output."),
            crate::extras::NO_COLOR,
        ],
    );

    heading(&mut out, "EXAMPLES");
    out.push_str(&text("The fields of every live job, as a table:"));
    verbatim(&mut out, "tao-record list --live | jq -r '[.id, .state, .slurm.job_id // \"-\", .message // \"\"] | @tsv'");
    para(&mut out, "The lines some tool refused, and why:");
    verbatim(
        &mut out,
        "tao-record list | jq -c 'select(.error) | {id, error}'",
    );

    see_also(
        &mut out,
        &[
            ("tao-record", 1),
            ("tao-render", 1),
            ("tao-redact", 1),
            ("tao-submit", 1),
            ("tao-poll", 1),
            ("tao-classify", 1),
            ("tao-site-profile", 5),
            ("sbatch", 1),
            ("squeue", 1),
            ("sacct", 1),
            ("jq", 1),
        ],
    );
    finish("'\\\" t\n", &out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_native_state_and_exit_code_is_on_the_page() {
        let page = render();
        for row in TABLE {
            assert!(
                page.contains(&format!("{}|", row.name.replace('-', "\\-"))),
                "{}",
                row.name
            );
        }
        for code in [0, 1, 2, 3, 65, 69, 70, 74, 75, 76, 77, 78] {
            assert!(page.contains(&format!(".TP\n\\fB{code}\\fR\n")), "{code}");
        }
        assert!(page.starts_with("'\\\" t\n.ie "), "{}", &page[..80]);
        assert!(page.contains("\n.TH TAO-JOBLINE 7 "));
    }
}
