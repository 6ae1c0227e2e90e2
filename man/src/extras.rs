//! The hand-written sections of each section-1 page: ENVIRONMENT, FILES,
//! EXIT STATUS, EXAMPLES and SEE ALSO. The rest of a page comes from the
//! tool's argument definitions.
//!
//! Sources: docs/CONTRACT.md (variables, layout, exit statuses), each
//! tool's `--help` and module docs (per-tool meaning of each status), and
//! the tools' behaviour against the local cluster.

use tao_core::exit;

use crate::page::Extra;

/// The variables of the SSH side (tao-ssh), shared by tao-submit and tao-poll.
const SSH_ENV: [(&str, &str); 9] = [
    ("SLURM_HOSTNAME", "Login hosts, comma-separated host[:port] or ~/.ssh/config aliases; the first that answers is used (--hosts for tao-submit)."),
    ("SLURM_USER", "User name on the login nodes."),
    ("SSH_KEY_PATH", "Private key file (mode 600; a key readable by group or others is refused). Without it, the ssh-agent is used."),
    ("SSH_AUTH_SOCK", "ssh-agent socket, used when SSH_KEY_PATH is unset."),
    ("SSH_KNOWN_HOSTS", "known_hosts file (default ~/.ssh/known_hosts), read before /etc/ssh/ssh_known_hosts as OpenSSH does: hashed entries, [host]:port entries, wildcard patterns, @revoked keys (refused) and key types (a host known only by its ECDSA key is checked with ECDSA). An unknown, changed or revoked host key is refused with the fix; @cert-authority needs TAO_TRANSPORT=openssh; SSH never prompts. A login node that dies during a command is noticed within 45 s (keepalives every 15 s that ask for a reply, TCP_USER_TIMEOUT 30 s)."),
    ("SSH_CONFIG", "OpenSSH client config for host aliases (default ~/.ssh/config): HostName, Port, User, IdentityFile, ConnectTimeout, ProxyJump (one or more hops, through direct-tcpip channels) and ProxyCommand are honoured (with TAO_TRANSPORT=openssh, everything ssh honours)."),
    ("TAO_SSH_CONNECT_TIMEOUT", "Seconds to wait for a login host to answer before trying the next one."),
    ("TAO_TRANSPORT", "How the login node is reached (--transport wins): libssh2 (the default: one libssh2 session per login host per run); openssh (the system ssh over a ControlMaster connection: a master you opened is reused, which is how two-factor clusters are used, else one is opened for the run in BatchMode and closed after; ProxyJump, certificates, Kerberos and FIDO keys work as in your ssh; a host that asks for a second factor with no master open is exit 77 with the exact ssh -M command that opens one); local (the tool runs on the login node itself: no SSH). On every transport each remote script travels on the standard input of the constant command sh -s, so neither its size nor your login shell (bash, zsh, fish, tcsh) matters."),
    ("TAO_SSH_CONTROL_PATH", "openssh: the ControlPath of a master you open for tao (default ~/.ssh/tao-%C, ssh_config(5) tokens); the ControlPath of your own ssh config is tried first."),
];

const SEE_ALSO: &[(&str, u8)] = &[
    ("tao-jobline", 7),
    ("tao-record", 1),
    ("tao-render", 1),
    ("tao-redact", 1),
    ("tao-submit", 1),
    ("tao-poll", 1),
    ("tao-classify", 1),
    ("sbatch", 1),
    ("squeue", 1),
    ("sacct", 1),
    ("jq", 1),
];

/// The tools that read a site profile (TAO_SITE_PROFILE): their SEE ALSO
/// names tao-site-profile(5).
const SITE_PROFILE_READERS: [&str; 4] = ["tao-record", "tao-render", "tao-submit", "tao-poll"];

/// SEE ALSO without the page itself, with tao-site-profile(5) after
/// tao-jobline(7) for the tools that read a site profile.
fn see_also(tool: &str) -> Vec<(&'static str, u8)> {
    let mut v: Vec<(&'static str, u8)> = SEE_ALSO
        .iter()
        .copied()
        .filter(|(n, _)| *n != tool)
        .collect();
    if SITE_PROFILE_READERS.contains(&tool) {
        v.insert(1, ("tao-site-profile", 5));
    }
    v
}

/// The ENVIRONMENT entry every page ends with: NO_COLOR
/// (https://no-color.org) is honoured because no tool ever prints colour.
pub const NO_COLOR: (&str, &str) = (
    "NO_COLOR",
    "Honoured: the tools never print colour (help, usage errors, tables and messages are plain text, on a terminal too), so there is nothing to turn off.",
);

/// The hand-written sections of `tool`'s page (an empty [`Extra`] for an
/// unknown name); ENVIRONMENT ends with [`NO_COLOR`].
pub fn for_tool(tool: &str) -> Extra {
    let mut extra = match tool {
        "tao-record" => record(),
        "tao-render" => render(),
        "tao-redact" => redact(),
        "tao-submit" => submit(),
        "tao-poll" => poll(),
        "tao-classify" => classify(),
        _ => return Extra::default(),
    };
    extra.environment.push(NO_COLOR);
    extra
}

fn record() -> Extra {
    Extra {
        environment: vec![
            ("TAO_STATE_DIR", "The record store. Default: $XDG_STATE_HOME/tao-slurm, else ~/.local/state/tao-slurm."),
            ("XDG_STATE_HOME", "See TAO_STATE_DIR."),
            ("SLURM_BASE_RESULTS_DIR", "open: the results root on shared storage (/abs or lustre:///abs), bound into storage.job_dir and storage.results_dir (--results-root overrides)."),
            ("SLURM_PARTITION", "open: the default partition (--partition overrides; else the site profile's)."),
            ("SLURM_ACCOUNT", "open: the default account (--account overrides)."),
            ("SLURM_CONTAINER_MOUNTS", "open: default container mounts, comma-separated SRC:DST[:FLAGS] (--mount overrides)."),
            ("SLURM_USE_REQUEUE", "open: false submits with --no-requeue (default true; --no-requeue overrides)."),
            ("TAO_RUNTIME", "open: pyxis or none (--runtime overrides; else the site profile's)."),
            ("TAO_SITE_PROFILE", "open: the site profile (runtime, default partition, partitions and their limits): local, cs-oci-ord (default) or a TOML file (tao-site-profile(5))."),
        ],
        files: vec![
            ("$TAO_STATE_DIR/records/<id>.json", "One record per job: the job line plus history [{at, state, source, message}], written atomically under a per-record lock."),
            ("$TAO_STATE_DIR/archive/", "Records moved there by gc."),
        ],
        exit_status: vec![
            (exit::OK, "Success."),
            (exit::SOME_FAILED, "mark: some lines were refused (an observation older than the record's last one, a transition the state machine forbids, an unknown id); they are printed with an error object, the others were applied."),
            (exit::USAGE, "Usage error (bad option, bad --state, --at not RFC 3339)."),
            (exit::LINT_BLOCKED, "open: --command, an execution step, an --env value, a mount, the --spec file or a supporting file holds what tao-redact's rules call a secret; nothing was recorded (pass it with --secret NAME and use $NAME)."),
            (exit::DATAERR, "Bad input data: a malformed job line of mark or retry (reported when read with its line number, also with -q; the other lines are still applied; a line over 64 MiB is one too), an unknown --id, a spec file or parent record that cannot be used, a spec holding a NUL byte; list: a record file that cannot be read (named on standard error, the other records still printed)."),
            (exit::IOERR, "Local I/O error (the record store, or standard output lost by open, mark, retry or gc: a record may have changed, so a lost report is not success). show, history and list change nothing: a closed standard output ends them quietly with status 0; so does --help."),
            (exit::CONFIG, "Configuration error (a bad environment value or site profile)."),
        ],
        examples: vec![
            ("Open a record and print its job line:", "tao-record open --image nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt \\\n    --action train --network-arch dino --spec spec.yaml \\\n    --command 'dino train -e {config_path} -r {results_dir}'"),
            ("Submit it: the whole pipeline, the record updated at the end:", "tao-record open --spec spec.yaml --action train --network-arch dino \\\n    --image /lustre/images/tao.sqsh \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark"),
            ("Refresh every live job (the cron line):", "tao-record list --live | tao-poll --evidence | tao-classify | tao-record mark"),
            ("Mark a record by hand and read its history:", "tao-record mark tao-20261129-k3f9x2 --state CANCELED --message 'cancelled by hand'\ntao-record history tao-20261129-k3f9x2"),
            ("Open the next attempt of a failed job (same request, new id):", "tao-record open --retry-of tao-20261129-k3f9x2 \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark"),
            ("Archive finished records older than 30 days:", "tao-record gc --older-than 30d"),
        ],
        see_also: see_also("tao-record"),
    }
}

fn render() -> Extra {
    Extra {
        environment: vec![(
            "TAO_SITE_PROFILE",
            "Site profile when --site-profile is not given: local, cs-oci-ord (default) or a TOML file (partitions and their time limits, image conversion, NCCL knobs; tao-site-profile(5)).",
        )],
        files: vec![
            ("NAME|FILE of --site-profile", "A site profile in TOML (the format is tao-site-profile(5)); the built-in profiles need no file."),
            ("templates", "None read at run time: the templates (single, multi, and the convert and probe jobs) are compiled into the binary."),
        ],
        exit_status: vec![
            (exit::OK, "Every line rendered (or passed through with an earlier tool's error)."),
            (exit::SOME_FAILED, "Some lines were refused; they carry error = {tool: \"tao-render\", code: \"refused\", message} and the others were rendered."),
            (exit::USAGE, "Usage error, or --print with other than one job line."),
            (exit::DATAERR, "Malformed input: a line that is not a JSON object (reported and dropped) or lacks a required field (goes on with error.code \"data\"); every other line is still rendered."),
            (exit::IOERR, "Standard output could not be written (a closed pipe is not an error: the filter ends quietly with status 0)."),
            (exit::CONFIG, "The site profile is unusable."),
        ],
        examples: vec![
            ("Render a record's script and read it:", "tao-record list --id tao-20261129-k3f9x2 | tao-render --print"),
            ("Render for the local test cluster's profile:", "tao-record open --spec spec.yaml --command 'python3 train.py' --runtime none \\\n  | tao-render --site-profile local | jq -r .script.text"),
        ],
        see_also: see_also("tao-render"),
    }
}

fn redact() -> Extra {
    Extra {
        environment: vec![
            ("HF_TOKEN", "Its exact value is always masked (values under 8 bytes are not, with a warning)."),
            ("NGC_KEY", "Its exact value is always masked, like HF_TOKEN."),
            ("NAME", "Any variable named with --secret-env: its exact value is masked."),
        ],
        files: vec![
            ("FILE of --rules", "Extra rules in TOML, in the format of the built-in catalogue (tao-secrets/rules/builtin.toml in the source, compiled into the binary); --list-rules prints the catalogue in force."),
        ],
        exit_status: vec![
            (exit::OK, "Filter: the stream was copied. lint: every script is clean."),
            (exit::USAGE, "Usage error."),
            (exit::LINT_BLOCKED, "lint blocked at least one script: a literal secret, xtrace on a job with secrets, or a shell syntax error in the script or a step (every line still went out, the blocked ones with lint.ok false)."),
            (exit::DATAERR, "Bad input: a job line that is not JSON (reported and dropped) or has no script.text (reported; it goes on with error.code \"data\": pipe it through tao-render first), or a script file that is not UTF-8. lint goes on with the next line; 65 comes before 3."),
            (exit::IOERR, "Local I/O error. A closed standard output ends the filter quietly with status 0."),
            (exit::CONFIG, "A bad --rules file."),
        ],
        examples: vec![
            ("The gate before submit:", "tao-record list --id tao-20261129-k3f9x2 | tao-render | tao-redact lint | tao-submit"),
            ("Lint a script file and mask a site secret too:", "tao-redact lint --secret-env WANDB_API_KEY job.sbatch"),
            ("Mask the secrets of any text stream:", "tao-redact < main.out > main.redacted.out"),
            ("The catalogue of built-in rules:", "tao-redact --list-rules"),
        ],
        see_also: see_also("tao-redact"),
    }
}

fn submit() -> Extra {
    let mut env: Vec<(&'static str, &'static str)> = SSH_ENV.to_vec();
    env.extend_from_slice(&[
        ("TAO_SITE_PROFILE", "Site profile: local, cs-oci-ord (default) or a TOML file (partitions, image conversion, NCCL knobs, remote_prefix; tao-site-profile(5))."),
        ("TAO_STATE_DIR", "The record store, to check that each line's record exists (no id, no launch)."),
        ("TAO_RUNTIME", "preflight: the runtime to check, pyxis or none."),
        ("SLURM_BASE_RESULTS_DIR", "preflight: the results root to check on shared storage."),
        ("HF_TOKEN, NGC_KEY", "Secrets named in a line's secrets field are read from this environment at submit time and written over the SSH channel's standard input into a mode-600 sidecar; never into arguments, scripts, records, logs or output. preflight --install-enroot-credentials writes NGC_KEY into Enroot's credentials on the cluster."),
    ]);
    Extra {
        environment: env,
        files: vec![
            ("<base>/jobs/<id>/", "The job directory on shared storage: specs/, env/secrets.env (mode 600, shredded by the job), meta/job.json, sbatch/job_<id>.sbatch, slurm-logs/<id>-<slurm_job_id>/, inputs/action-helpers/ (see tao-jobline(7))."),
            ("<base>/images/<name>.sqsh", "The image conversion cache: a GPU job's --container-image is always a .sqsh path, converted on a CPU partition."),
            ("$TAO_STATE_DIR/clusters/<cluster>/nccl.json", "The NCCL environment that passed the communication probe on that cluster. Before a multi-node job, or one with 2 or more GPUs per node, tao-submit runs a small all-reduce probe job (about 120 s timeout) unless this file exists; on a hang it retries with the site profile's NCCL knobs in order, caches the first environment that passes and passes it to the real job with sbatch --export (the linted script is unchanged); when none passes, the real job is not submitted and the error lists what was tried. --skip-probe skips it. See tao-submit/MULTINODE.md in the source tree."),
        ],
        exit_status: vec![
            (exit::OK, "Every line was done."),
            (exit::SOME_FAILED, "Some lines carry an error object (refused by a gate, failed to stage or submit); the others went through."),
            (exit::USAGE, "Usage error."),
            (exit::DATAERR, "A malformed input line (reported when read; the lines before it were submitted and printed, the lines after it are not read), or a line error of the input: a resources.exclude host list expanding to more than 65536 node names (the other lines still go through)."),
            (exit::UNAVAILABLE, "No login host answered."),
            (exit::IOERR, "Output lost: a job may have been submitted, so a lost line is not success (--help into a closed pipe is status 0)."),
            (exit::NOPERM, "Host key unknown or changed, key file readable by others, or login refused; with TAO_TRANSPORT=openssh also a host that asks for a second factor while no master is open (the message gives the ssh -M command)."),
            (exit::CONFIG, "Configuration error (a missing variable, a bad site profile, an unknown TAO_TRANSPORT, a cluster account whose login shell does not run sh -s)."),
        ],
        examples: vec![
            ("Check a cluster before the first job:", "tao-submit preflight --path /lustre/datasets/coco"),
            ("Submit; the record learns the Slurm job id:", "tao-record open --spec spec.yaml --action train --network-arch dino \\\n    --image nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark"),
            ("Cancel a job and record it:", "tao-record list --id tao-20261129-k3f9x2 | tao-submit cancel | tao-record mark"),
            ("A 2-node TAO job (the container's entrypoint starts the GPU processes; the probe runs first):", "tao-record open --nodes 2 --gpus-per-node 8 --spec spec.yaml --action train --network-arch dino \\\n    --image nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt --command 'dino train -e {config_path}' \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark"),
            ("A raw torchrun command on 2 nodes, from the rendezvous variables every node exports:", "tao-record open --nodes 2 --gpus-per-node 4 --runtime none \\\n    --command 'torchrun --nnodes=\"$TAO_NODE_COUNT\" --nproc-per-node=\"$TAO_GPUS_PER_NODE\" --node-rank=\"$NODE_RANK\" --master-addr=\"$MASTER_ADDR\" --master-port=\"$MASTER_PORT\" /lustre/code/train.py' \\\n  | tao-render | tao-redact lint | tao-submit | tao-record mark"),
        ],
        see_also: see_also("tao-submit"),
    }
}

fn poll() -> Extra {
    let mut env: Vec<(&'static str, &'static str)> = SSH_ENV.to_vec();
    env.extend_from_slice(&[
        ("SLURM_USE_REQUEUE", "Whether Slurm requeues jobs (default true): NODE_FAIL and the launch failures stay provisional while it may (--requeue overrides); BOOT_FAIL and PREEMPTED are final either way."),
        ("TAO_STATE_DIR", "logs: the record store in which the record id is looked up."),
        ("TAO_SITE_PROFILE", "The site profile whose remote_prefix (POSIX sh) runs first in every script on the login node: local, cs-oci-ord (default) or a TOML file (tao-site-profile(5))."),
        ("HF_TOKEN, NGC_KEY", "Their exact values are masked in evidence and logs (as tao-redact(1))."),
    ]);
    Extra {
        environment: env,
        files: vec![
            ("<results_dir>/status.json", "TAO's status lines, read on the cluster: the last SUCCESS or FAILURE (or current TAO's RUNNING \"Train finished successfully.\", a success) decides whether COMPLETED is COMPLETE or ERROR; its last 4 KiB give progress."),
            ("<job_dir>/slurm-logs/<id>-<slurm_job_id>/completion.json", "The job script's completion record (exit_code), which decides for commands that write no status.json."),
            ("<job_dir>/slurm-logs/<id>-<slurm_job_id>/main.out, main.err", "The job's output, read by logs and --evidence."),
        ],
        exit_status: vec![
            (exit::OK, "Every submitted line got an observation (with --watch: every job ended COMPLETE). Lines never submitted (no slurm.job_id) pass through unchanged with one warning and do not change the status."),
            (exit::SOME_FAILED, "Some lines carry a tao-poll error (they keep their last state); with --watch, some job did not end COMPLETE."),
            (exit::USAGE, "Usage error (also: no job ids and standard input is a terminal)."),
            (exit::DATAERR, "A malformed input line (reported when read; the lines before it were polled and printed, the lines after it are not read); logs: no log file and the job is no longer queued or running."),
            (exit::TEMPFAIL, "logs: no log file yet because the job has not started (or has not written it yet); try again later, or wait for it with --follow."),
            (exit::IOERR, "Local I/O error (a replay file, the record store of logs, standard output). tao-poll changes nothing: a closed standard output (tao-poll ... | head -n 1, --help | head -c 1) is no error, it ends quietly with status 0."),
            (exit::UNAVAILABLE, "No line could be polled: no login host answered."),
            (exit::NOPERM, "No line could be polled: host key, key permissions or login refused."),
            (exit::CONFIG, "No line could be polled: configuration error."),
        ],
        examples: vec![
            ("Poll by Slurm job id:", "tao-poll 1234 1235"),
            ("Refresh every live record, with evidence for failures:", "tao-record list --live | tao-poll --evidence | tao-classify | tao-record mark"),
            ("Watch until every job ends (a live table on a terminal):", "tao-record list --live | tao-poll --watch | tao-record mark"),
            ("The last 200 lines of a job's output, then follow it:", "tao-poll logs tao-20261129-k3f9x2 -n 200\ntao-poll logs tao-20261129-k3f9x2 --follow"),
            ("Replay saved scheduler output (no cluster):", "tao-poll 1234 --replay-squeue squeue.txt --replay-sacct sacct.txt"),
        ],
        see_also: see_also("tao-poll"),
    }
}

fn classify() -> Extra {
    Extra {
        environment: vec![
            ("HF_TOKEN", "Its exact value is masked in evidence text."),
            ("NGC_KEY", "Its exact value is masked in evidence text."),
        ],
        files: vec![
            ("FILE of --log", "A job's main.out or main.err, read as the evidence (streamed, bounded memory)."),
            ("FILE of --rules", "Site rules in TOML, [[rule]] tables in the format of the built-in catalogue (tao-classify/rules/builtin.toml in the source, compiled into the binary)."),
        ],
        exit_status: vec![
            (exit::OK, "Every line was classified or passed through."),
            (exit::USAGE, "Usage error."),
            (exit::DATAERR, "Bad input (not JSON, an ERROR line without slurm.native_state, a bad attempt or evidence); the other lines still go through, the bad one is reported on standard error."),
            (exit::IOERR, "A --log file could not be read, or standard output could not be written (a closed pipe ends the filter quietly with status 0)."),
            (exit::CONFIG, "A --rules file is invalid."),
        ],
        examples: vec![
            ("Classify the failures of a refresh:", "tao-record list --live | tao-poll --evidence | tao-classify | tao-record mark"),
            ("Classify one failed record against its downloaded log:", "tao-record list --id tao-20261129-k3f9x2 | tao-classify --log main.out | jq .classification"),
            ("Retry the jobs classified as retryable:", "tao-record list --state ERROR \\\n  | jq -r 'select(.classification.retry == true and .retried_by == null) | .id' \\\n  | while read -r id; do\n      tao-record open --retry-of \"$id\" | tao-render | tao-redact lint | tao-submit | tao-record mark\n    done"),
        ],
        see_also: see_also("tao-classify"),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_tool_has_its_sections() {
        for (tool, _) in crate::commands::all() {
            let e = for_tool(tool);
            assert!(!e.environment.is_empty(), "{tool}");
            assert_eq!(e.environment.last(), Some(&NO_COLOR), "{tool}");
            assert!(!e.files.is_empty(), "{tool}");
            assert!(e.exit_status.iter().any(|(c, _)| *c == 0), "{tool}");
            assert!(e.exit_status.iter().any(|(c, _)| *c == 2), "{tool}");
            assert!(!e.examples.is_empty(), "{tool}");
            assert!(e.see_also.iter().all(|(n, _)| *n != tool), "{tool}");
            assert_eq!(
                e.see_also.contains(&("tao-site-profile", 5)),
                SITE_PROFILE_READERS.contains(&tool),
                "{tool}"
            );
        }
    }
}
