//! Where answers come from: the cluster over SSH ([`SshBackend`]) or saved
//! outputs ([`ReplayBackend`], for `--replay-*` and regression tests).
//!
//! Over SSH, one session per login host runs one `squeue` and one `sacct`
//! for all of that host's jobs (one per cluster for `jobid;cluster` jobs,
//! with `-M`), chunked only when the `-j` list would pass [`MAX_ID_LIST`]
//! bytes (Linux limits one argument to 128 KiB); every cluster and chunk of
//! a host goes in one remote script (one round trip), with `squeue --start`
//! and, after them, the files of every job ([`Backend::observe`]: the last
//! bytes of each status.json, for progress and verdicts, and each
//! completion record). Only what that read could not settle (a verdict
//! line older than the tail, `--evidence` log tails, scontrol without
//! accounting) takes a second command. Commands run under `env
//! SLURM_TIME_FORMAT=%s` (epoch seconds; `env` works from any login shell).
//!
//! A command's reply is classified by [`classify`]: exit 0 is an answer
//! (an empty one included); squeue's "Invalid job id specified" for a
//! single id is the definite answer "not known"; everything else
//! ("Socket timed out", "accounting storage is disabled", an unsupported
//! flag, a lost connection) is a [`QueryFailure`], never a job state.

use std::collections::BTreeMap;
use std::path::PathBuf;

use tao_core::shell::quote;

use crate::observe::{Answer, JobRef, QueryFailure};
use crate::parse::{self, Parsed};
use crate::status::{self, FileRecords, FileRequest};

/// Longest `-j` argument sent in one command, in bytes.
pub const MAX_ID_LIST: usize = 64 * 1024;

/// A source of scheduler answers for the jobs of one login host.
pub trait Backend {
    /// squeue's view of `jobs` (all states).
    fn squeue(&mut self, jobs: &[JobRef]) -> Answer;
    /// sacct's view of `jobs` (allocations only).
    fn sacct(&mut self, jobs: &[JobRef]) -> Answer;
    /// Both views at once: `(squeue, sacct)`. The default asks one after
    /// the other; over SSH both run side by side in one remote command.
    fn both(&mut self, jobs: &[JobRef]) -> (Answer, Answer) {
        (self.squeue(jobs), self.sacct(jobs))
    }
    /// squeue's and sacct's views of `jobs` and the files of `reqs`, in
    /// that order: `(squeue, sacct, files)`, one [`FileRecords`] per
    /// request. Over SSH everything (squeue, sacct, `squeue --start`, the
    /// status.json tails and completion records) travels in ONE remote
    /// script per login host, the files read after the scheduler answered
    /// (a job squeue calls COMPLETED has written its verdict by then). The
    /// default asks [`Backend::both`], then [`Backend::read_files`] when
    /// `reqs` is not empty.
    ///
    /// Errors: the files part is a [`QueryFailure`] when their read as a
    /// whole failed (the scheduler answers may still stand).
    fn observe(
        &mut self,
        jobs: &[JobRef],
        reqs: &[FileRequest],
        tail_lines: u32,
    ) -> (Answer, Answer, Result<Vec<FileRecords>, QueryFailure>) {
        let (q, a) = self.both(jobs);
        let files = if reqs.is_empty() {
            Ok(Vec::new())
        } else {
            self.read_files(reqs, tail_lines)
        };
        (q, a, files)
    }
    /// `scontrol show job` (used when accounting is disabled).
    fn scontrol(&mut self, jobs: &[JobRef]) -> Answer;
    /// Read status/completion records and log tails, one result per request.
    ///
    /// Errors: a [`QueryFailure`] when the read as a whole failed.
    fn read_files(
        &mut self,
        reqs: &[FileRequest],
        tail_lines: u32,
    ) -> Result<Vec<FileRecords>, QueryFailure>;
    /// The last `max_bytes` of each file of `paths` (`None`: no such
    /// file), in one read (for `report`).
    ///
    /// Errors: a [`QueryFailure`] when the read as a whole failed.
    fn read_tails(
        &mut self,
        paths: &[String],
        max_bytes: u64,
    ) -> Result<Vec<Option<String>>, QueryFailure>;
    /// The login host these answers come from (for `slurm.login_host`), if any.
    fn login_host(&self) -> Option<String>;
    /// Expected start times (RFC 3339 UTC) of the pending jobs of the last
    /// [`Backend::both`], by job id as squeue prints it, from
    /// `squeue --start` asked in the same round trip. Jobs Slurm has no
    /// estimate for are absent.
    fn expected_starts(&mut self) -> std::collections::HashMap<String, String> {
        std::collections::HashMap::new()
    }

    /// Remove the secrets sidecars (`<job_dir>/env/secrets.env`) of the
    /// jobs in `job_dirs`, which have ended for good
    /// (`tao_core::shell::remove_sidecars_command`); returns the paths
    /// still there afterwards. The default (replay) touches nothing.
    fn sweep_sidecars(&mut self, job_dirs: &[String]) -> Vec<String> {
        let _ = job_dirs;
        Vec::new()
    }
}

/// Parse `squeue --start -h -o '%i|%S'` output: job id -> expected start
/// (RFC 3339 UTC). `N/A`, `Unknown` and unreadable lines are left out.
pub fn parse_starts(text: &str) -> std::collections::HashMap<String, String> {
    text.lines()
        .filter_map(|l| {
            let (id, start) = l.trim().split_once('|')?;
            let start = start.split('|').next().unwrap_or("");
            Some((id.trim().to_string(), parse::norm_time(start)?))
        })
        .collect()
}

/// Classify a command's reply: `Ok(stdout)` for an answer, else why not.
/// `what` names the command; `n_ids` is how many ids were asked about.
pub fn classify(
    what: &str,
    status: i32,
    stdout: &str,
    stderr: &str,
    n_ids: usize,
) -> Result<String, QueryFailure> {
    let err_line = tao_core::cli::one_line(stderr.trim());
    let fail = |code: &str, msg: String| QueryFailure {
        code: code.into(),
        message: msg,
    };
    let lower = stderr.to_ascii_lowercase();
    if lower.contains("accounting storage is disabled") {
        return Err(fail("no_accounting", format!("{what}: {err_line}")));
    }
    if status == 0 {
        return Ok(stdout.to_string());
    }
    if lower.contains("invalid job id specified") && n_ids == 1 {
        // squeue -j with exactly one purged id: a definite "not known".
        return Ok(String::new());
    }
    let unsupported = [
        "invalid job format specification",
        "invalid field requested",
        "unrecognized option",
        "invalid option",
        "unknown option",
    ];
    if unsupported.iter().any(|u| lower.contains(u)) {
        return Err(fail(
            "unsupported",
            format!("{what} refused a flag (older Slurm?): {err_line}"),
        ));
    }
    if status == 127 || lower.contains("command not found") {
        return Err(fail("config", format!("{what} not found on the login host: {err_line}; load Slurm in the site profile's remote_prefix")));
    }
    let msg = if err_line.is_empty() {
        format!("{what} exited {status} with no message")
    } else {
        format!("{what} exited {status}: {err_line}")
    };
    Err(fail("tempfail", msg))
}

/// Group jobs by cluster and split their ids into `-j` lists of at most
/// `max` bytes.
pub fn chunks(jobs: &[JobRef], max: usize) -> Vec<(Option<String>, Vec<String>)> {
    let mut by_cluster: BTreeMap<Option<String>, Vec<String>> = BTreeMap::new();
    let mut seen: std::collections::HashSet<(&Option<String>, &str)> = Default::default();
    for j in jobs {
        // A set, not a scan of the list: 10,000 ids cost 10,000 lookups.
        if seen.insert((&j.cluster, &j.job_id)) {
            by_cluster
                .entry(j.cluster.clone())
                .or_default()
                .push(j.job_id.clone());
        }
    }
    let mut out = Vec::new();
    for (cluster, ids) in by_cluster {
        let mut cur: Vec<String> = Vec::new();
        let mut len = 0;
        for id in ids {
            if !cur.is_empty() && len + id.len() + 1 > max {
                out.push((cluster.clone(), std::mem::take(&mut cur)));
                len = 0;
            }
            len += id.len() + 1;
            cur.push(id);
        }
        if !cur.is_empty() {
            out.push((cluster.clone(), cur));
        }
    }
    out
}

/// The cluster's answers over one SSH session.
pub struct SshBackend {
    remote: Box<dyn tao_ssh::Transport>,
    /// `squeue --start` of the last `both`, by job id.
    starts: std::collections::HashMap<String, String>,
    /// Whether squeue refused `-O` once (then `-o` is used for this session).
    legacy_squeue: bool,
}

impl SshBackend {
    /// Wrap a connected session.
    pub fn new(remote: Box<dyn tao_ssh::Transport>) -> Self {
        SshBackend {
            remote,
            starts: Default::default(),
            legacy_squeue: false,
        }
    }

    /// The session (for `logs`).
    pub fn remote(&self) -> &dyn tao_ssh::Transport {
        self.remote.as_ref()
    }

    fn run(&self, what: &str, cmd: &str, n_ids: usize) -> Result<String, QueryFailure> {
        match timed_exec(self.remote.as_ref(), cmd, None) {
            Ok(out) => classify(
                what,
                out.status,
                &String::from_utf8_lossy(&out.stdout),
                &String::from_utf8_lossy(&out.stderr),
                n_ids,
            ),
            Err(e) => Err(QueryFailure {
                code: e.kind().into(),
                message: e.to_string(),
            }),
        }
    }

    fn per_chunk(
        &mut self,
        jobs: &[JobRef],
        mut one: impl FnMut(&mut Self, Option<&str>, &[String]) -> Answer,
    ) -> Answer {
        let mut total = Answer::default();
        for (cluster, ids) in chunks(jobs, MAX_ID_LIST) {
            let mut a = one(self, cluster.as_deref(), &ids);
            for f in &mut a.failures {
                if f.0.is_none() {
                    f.0 = Some(ids.clone());
                }
            }
            total.merge(a);
        }
        total
    }
}

fn cluster_flag(cluster: Option<&str>) -> String {
    cluster
        .map(|c| format!(" -M {}", quote(c)))
        .unwrap_or_default()
}

fn to_answer(res: Result<String, QueryFailure>, parse: fn(&str) -> Parsed) -> Answer {
    match res {
        Ok(text) => Answer::from_parsed(parse(&text)),
        Err(f) => Answer::failed(f),
    }
}

/// The remote script that runs squeue, sacct and `squeue --start` side by
/// side for one chunk and prints the replies as marked records (`<M> Q
/// <status>`, stdout, `<M> QE`, stderr, `<M> A <status>`, ..., `<M> S
/// <status>`, expected starts, `<M> E`). `squeue --start` lists only the
/// pending jobs of the list; its failure (an old Slurm) only leaves the
/// expected starts out.
fn both_script(marker: &str, cluster: Option<&str>, ids: &[String]) -> String {
    both_script_in(marker, cluster, ids, None)
}

/// [`both_script`], its replies kept in `$T/<chunk>` (`qo`: squeue's)
/// for the files part of the same script when `chunk` is given (the
/// caller creates and removes `$T`); in a temporary directory of its own,
/// removed at its end, otherwise.
fn both_script_in(
    marker: &str,
    cluster: Option<&str>,
    ids: &[String],
    chunk: Option<usize>,
) -> String {
    let list = quote(&ids.join(","));
    let m = quote(marker);
    let (dir, rm) = match chunk {
        Some(k) => (
            format!("d=\"$T/{k}\"; mkdir \"$d\" || exit 75"),
            String::new(),
        ),
        None => (
            "d=$(mktemp -d) || exit 75".to_string(),
            "; rm -rf \"$d\"".to_string(),
        ),
    };
    format!(
        r#"{dir}
env SLURM_TIME_FORMAT=%s squeue -h -t all{c} -j {list} -O {qf} >"$d/qo" 2>"$d/qe" &
q=$!
env SLURM_TIME_FORMAT=%s squeue --start -h{c} -j {list} -o '%i|%S' >"$d/so" 2>/dev/null &
s=$!
env SLURM_TIME_FORMAT=%s sacct -P -n -X{c} -j {list} -o {af} >"$d/ao" 2>"$d/ae"
ar=$?
wait $q; qr=$?
wait $s; sr=$?
printf '%s Q %s\n' {m} "$qr"; cat "$d/qo"; printf '%s QE\n' {m}; cat "$d/qe"
printf '%s A %s\n' {m} "$ar"; cat "$d/ao"; printf '%s AE\n' {m}; cat "$d/ae"
printf '%s S %s\n' {m} "$sr"; cat "$d/so"
printf '%s E\n' {m}{rm}
"#,
        c = cluster_flag(cluster),
        qf = quote(&parse::squeue_format_arg()),
        af = quote(&parse::sacct_format_arg()),
    )
}

/// One script for every `(marker, cluster, ids)` chunk: each chunk's
/// [`both_script`] in turn, so all clusters of a login host (`-M`) are
/// asked in one remote command.
fn all_chunks_script(parts: &[(String, Option<String>, Vec<String>)]) -> String {
    parts
        .iter()
        .map(|(m, c, ids)| both_script(m, c.as_deref(), ids))
        .collect()
}

/// [`all_chunks_script`] keeping squeue's replies for the files part of
/// the same script: `$T/<chunk>/qo`, named by [`KEPT_REPLIES`]; the caller
/// appends [`KEPT_CLEANUP`] after the files part.
fn all_chunks_script_kept(parts: &[(String, Option<String>, Vec<String>)]) -> String {
    let mut s = String::from("T=$(mktemp -d) || exit 75\n");
    for (k, (m, c, ids)) in parts.iter().enumerate() {
        s.push_str(&both_script_in(m, c.as_deref(), ids, Some(k)));
    }
    s
}

/// Shell words naming the squeue replies [`all_chunks_script_kept`] keeps.
const KEPT_REPLIES: &str = "\"$T\"/*/qo";

/// Removes what [`all_chunks_script_kept`] kept.
const KEPT_CLEANUP: &str = "rm -rf \"$T\"\n";

/// The `squeue --start` part of [`both_script`]'s output (empty when it failed).
fn split_start(out: &str, marker: &str) -> String {
    let mut cur: Option<String> = None;
    for line in out.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix(marker).and_then(|r| r.strip_prefix(' ')) {
            let rest = rest.trim_end();
            if let Some(st) = rest.strip_prefix("S ") {
                cur = (st == "0").then(String::new);
                continue;
            }
            if cur.is_some() {
                return cur.unwrap_or_default();
            }
        } else if let Some(c) = &mut cur {
            c.push_str(line);
        }
    }
    cur.unwrap_or_default()
}

/// The first position of `pat` in `hay` at the start of a line.
fn line_start_of(hay: &[u8], pat: &[u8]) -> Option<usize> {
    // memmem: a 2 MB reply was searched with a memcmp per byte (3% of a
    // 10,000-job poll's CPU).
    let finder = memchr::memmem::Finder::new(pat);
    let mut from = 0;
    while from <= hay.len() {
        let i = from + finder.find(&hay[from..])?;
        if i == 0 || hay[i - 1] == b'\n' {
            return Some(i);
        }
        from = i + 1;
    }
    None
}

/// Split [`both_script`]'s output into (squeue status, stdout, stderr,
/// sacct status, stdout, stderr); `None` when the end marker is missing.
fn split_both(out: &str, marker: &str) -> Option<(i32, String, String, i32, String, String)> {
    let mut parts: Vec<(String, String)> = Vec::new();
    for line in out.split_inclusive('\n') {
        if let Some(rest) = line.strip_prefix(marker).and_then(|r| r.strip_prefix(' ')) {
            let tag = rest.trim_end().to_string();
            let end = tag == "E";
            parts.push((tag, String::new()));
            if end {
                // Other chunks' records (and the files') follow.
                break;
            }
        } else if let Some(last) = parts.last_mut() {
            last.1.push_str(line);
        }
    }
    let get = |tag: &str| {
        parts
            .iter()
            .find(|(h, _)| h == tag || h.starts_with(&format!("{tag} ")))
    };
    let status = |tag: &str| get(tag).and_then(|(h, _)| h.split(' ').nth(1)?.parse().ok());
    get("E")?;
    Some((
        status("Q")?,
        get("Q")?.1.clone(),
        get("QE")?.1.clone(),
        status("A")?,
        get("A")?.1.clone(),
        get("AE")?.1.clone(),
    ))
}

/// Wall time spent in remote commands by this process, in microseconds
/// (`--stats`: the remote side of a poll against its local work).
static REMOTE_MICROS: std::sync::atomic::AtomicU64 = std::sync::atomic::AtomicU64::new(0);

/// Seconds this process has waited for remote commands (script sent,
/// output read), for `--stats`.
pub fn remote_seconds() -> f64 {
    REMOTE_MICROS.load(std::sync::atomic::Ordering::Relaxed) as f64 / 1e6
}

/// One chunk's scheduler replies out of [`both_script`]'s records.
struct PartParse {
    /// `squeue --start`'s expected starts, by job id.
    starts: std::collections::HashMap<String, String>,
    /// squeue's answer (`None` when squeue refused `-O`, an older Slurm:
    /// the caller asks again with `-o`) and sacct's; `None` when the
    /// chunk's records are incomplete (the caller fails the chunk with
    /// the script's exit status).
    answers: Option<(Option<Answer>, Answer)>,
}

/// Parse each `(marker, cluster, ids)` chunk's records in `text` (the
/// scheduler part of a [`all_chunks_script`] reply), in order. Pure: run
/// while the reply's files part is still coming
/// ([`tao_ssh::Transport::exec_watched`]) or after it.
fn parse_parts(parts: &[(String, Option<String>, Vec<String>)], text: &str) -> Vec<PartParse> {
    parts
        .iter()
        .map(|(marker, _, ids)| PartParse {
            starts: parse_starts(&split_start(text, marker)),
            answers: split_both(text, marker).map(|(qs, qo, qe, as_, ao, ae)| {
                let q = match classify("squeue", qs, &qo, &qe, ids.len()) {
                    Err(f) if f.code == "unsupported" => None,
                    other => Some(to_answer(other, parse::parse_squeue)),
                };
                let a = to_answer(
                    classify("sacct", as_, &ao, &ae, ids.len()),
                    parse::parse_sacct,
                );
                (q, a)
            }),
        })
        .collect()
}

/// [`timed_exec`] with [`tao_ssh::Transport::exec_watched`]'s `idle`.
fn timed_exec_watched(
    remote: &dyn tao_ssh::Transport,
    script: &str,
    idle: &mut dyn FnMut(&[u8]),
) -> tao_core::Result<tao_ssh::Output> {
    let t0 = std::time::Instant::now();
    let r = remote.exec_watched(script, None, idle);
    REMOTE_MICROS.fetch_add(
        t0.elapsed().as_micros() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    r
}

/// Run `script` on `remote`, adding its wall time to [`remote_seconds`].
fn timed_exec(
    remote: &dyn tao_ssh::Transport,
    script: &str,
    stdin: Option<&[u8]>,
) -> tao_core::Result<tao_ssh::Output> {
    let t0 = std::time::Instant::now();
    let r = remote.exec(script, stdin);
    REMOTE_MICROS.fetch_add(
        t0.elapsed().as_micros() as u64,
        std::sync::atomic::Ordering::Relaxed,
    );
    r
}

impl SshBackend {
    /// [`Backend::both`], with the files of `files` read at the end of the
    /// same remote script (`None`: no files).
    #[allow(clippy::type_complexity)]
    fn run_both(
        &mut self,
        jobs: &[JobRef],
        files: Option<(&[FileRequest], u32)>,
    ) -> (
        Answer,
        Answer,
        Option<Result<Vec<FileRecords>, QueryFailure>>,
    ) {
        self.starts.clear();
        let mut sq = Answer::default();
        let mut sa = Answer::default();
        // Every chunk (one per cluster, `-M`, unless the id list is long)
        // in one remote script: one round trip per login host.
        let parts: Vec<(String, Option<String>, Vec<String>)> = chunks(jobs, MAX_ID_LIST)
            .into_iter()
            .map(|(c, ids)| (format!("@@tao-poll-{}", nonce()), c, ids))
            .collect();
        let mut keyed_reqs: Vec<FileRequest> = Vec::new();
        let file_nonce = nonce();
        let mut script;
        if let Some((reqs, tail)) = files {
            // The files part reads each job's files by the state squeue
            // gave it in this script (status::script_with).
            script = all_chunks_script_kept(&parts);
            let mut chunk_of: std::collections::HashMap<(Option<&str>, &str), usize> =
                std::collections::HashMap::new();
            for (k, (_, c, ids)) in parts.iter().enumerate() {
                for id in ids {
                    chunk_of.insert((c.as_deref(), id.as_str()), k);
                }
            }
            let keyed: Vec<FileRequest> = reqs
                .iter()
                .map(|r| {
                    let key = r.job.as_ref().and_then(|j| {
                        let k = chunk_of.get(&(j.cluster.as_deref(), j.job_id.as_str()))?;
                        Some(format!("{k}|{}", j.job_id))
                    });
                    FileRequest {
                        state_key: key.filter(|k| !k.contains('\n')),
                        ..r.clone()
                    }
                })
                .collect();
            script.push_str(&status::script_with(
                &keyed,
                &file_nonce,
                tail,
                KEPT_REPLIES,
            ));
            script.push_str(KEPT_CLEANUP);
            keyed_reqs = keyed;
        } else {
            script = all_chunks_script(&parts);
        }
        // The scheduler part (every chunk's records) comes before the
        // files' first marker line and is parsed once it is all there,
        // while the login host still reads the files (issue 17); from the
        // whole reply otherwise.
        let file_marker = format!("@@tao-poll-{file_nonce} ");
        let mut early: Option<Vec<PartParse>> = None;
        let mut searched = 0usize;
        let reply = timed_exec_watched(self.remote.as_ref(), &script, &mut |so_far| {
            if early.is_some() || files.is_none() {
                return;
            }
            let from = searched.saturating_sub(file_marker.len());
            searched = so_far.len();
            if let Some(cut) = line_start_of(&so_far[from..], file_marker.as_bytes()) {
                let cut = from + cut;
                // A match in the middle of a line is no cut: look again
                // from the start of the prefix (rare: a marker-like text).
                let cut = if cut == 0 || so_far[cut - 1] == b'\n' {
                    Some(cut)
                } else {
                    line_start_of(so_far, file_marker.as_bytes())
                };
                if let Some(cut) = cut {
                    early = Some(parse_parts(
                        &parts,
                        &String::from_utf8_lossy(&so_far[..cut]),
                    ));
                }
            }
        });
        // The files' records start at their first marker line: the
        // scheduler part before it is read on its own (the files part is
        // most of the bytes of a large poll, and is read once).
        let cut = match (&reply, files) {
            (Ok(out), Some(_)) => {
                line_start_of(&out.stdout, file_marker.as_bytes()).unwrap_or(out.stdout.len())
            }
            (Ok(out), None) => out.stdout.len(),
            (Err(_), _) => 0,
        };
        let file_part = files.map(|(_, tail)| match &reply {
            Ok(out) => files_from(&out.stdout[cut..], out, &keyed_reqs, &file_nonce, tail),
            Err(e) => Err(QueryFailure {
                code: e.kind().into(),
                message: e.to_string(),
            }),
        });
        let parsed = match (&reply, early) {
            (Ok(_), Some(p)) => p,
            (Ok(out), None) => parse_parts(&parts, &String::from_utf8_lossy(&out.stdout[..cut])),
            (Err(_), _) => Vec::new(),
        };
        let mut parsed = parsed.into_iter();
        for (_, cluster, ids) in parts {
            let fail_both = |f: QueryFailure| {
                let mut a = Answer::failed(f);
                a.failures[0].0 = Some(ids.clone());
                a
            };
            let out = match &reply {
                Ok(o) => o,
                Err(e) => {
                    let f = QueryFailure {
                        code: e.kind().into(),
                        message: e.to_string(),
                    };
                    sq.merge(fail_both(f.clone()));
                    sa.merge(fail_both(f));
                    continue;
                }
            };
            let part = parsed.next().expect("one parse per chunk");
            self.starts.extend(part.starts);
            let Some((q, a)) = part.answers else {
                let f = QueryFailure {
                    code: "tempfail".into(),
                    message: format!(
                        "squeue/sacct script exited {}: {}",
                        out.status,
                        out.stderr_line()
                    ),
                };
                sq.merge(fail_both(f.clone()));
                sa.merge(fail_both(f));
                continue;
            };
            let mut q = match q {
                Some(q) => q,
                None => {
                    // Older Slurm without -O fields: the -o format, alone.
                    self.legacy_squeue = true;
                    let sub: Vec<JobRef> = ids
                        .iter()
                        .map(|i| JobRef {
                            job_id: i.clone(),
                            cluster: cluster.clone(),
                        })
                        .collect();
                    self.squeue(&sub)
                }
            };
            let mut a = a;
            for x in [&mut q, &mut a] {
                for f in &mut x.failures {
                    if f.0.is_none() {
                        f.0 = Some(ids.clone());
                    }
                }
            }
            sq.merge(q);
            sa.merge(a);
        }
        (sq, sa, file_part)
    }
}

/// The records of [`status::script`]'s part of a remote command's output.
///
/// Errors: a `tempfail` [`QueryFailure`] when the part's end marker is
/// missing (the output was cut) or the script failed.
fn files_from(
    stdout: &[u8],
    out: &tao_ssh::Output,
    reqs: &[FileRequest],
    nonce: &str,
    tail_lines: u32,
) -> Result<Vec<FileRecords>, QueryFailure> {
    let text = String::from_utf8_lossy(stdout);
    let (map, ended) = status::parse_output(&text, nonce, tail_lines);
    if !ended || out.status != 0 || !status::classes_complete(reqs, &map) {
        return Err(QueryFailure {
            code: "tempfail".into(),
            message: format!(
                "reading status files exited {}: {}",
                out.status,
                tao_core::cli::one_line(String::from_utf8_lossy(&out.stderr).trim())
            ),
        });
    }
    Ok(status::records_for_all(reqs, map))
}

impl Backend for SshBackend {
    fn both(&mut self, jobs: &[JobRef]) -> (Answer, Answer) {
        let (q, a, _) = self.run_both(jobs, None);
        (q, a)
    }

    fn observe(
        &mut self,
        jobs: &[JobRef],
        reqs: &[FileRequest],
        tail_lines: u32,
    ) -> (Answer, Answer, Result<Vec<FileRecords>, QueryFailure>) {
        if reqs.is_empty() {
            let (q, a) = self.both(jobs);
            return (q, a, Ok(Vec::new()));
        }
        let (q, a, f) = self.run_both(jobs, Some((reqs, tail_lines)));
        (q, a, f.unwrap_or_else(|| Ok(Vec::new())))
    }

    fn squeue(&mut self, jobs: &[JobRef]) -> Answer {
        self.per_chunk(jobs, |me, cluster, ids| {
            let list = quote(&ids.join(","));
            if !me.legacy_squeue {
                let cmd = format!(
                    "env SLURM_TIME_FORMAT=%s squeue -h -t all{} -j {list} -O {}",
                    cluster_flag(cluster),
                    quote(&parse::squeue_format_arg())
                );
                match me.run("squeue", &cmd, ids.len()) {
                    Err(f) if f.code == "unsupported" => me.legacy_squeue = true,
                    other => return to_answer(other, parse::parse_squeue),
                }
            }
            let cmd = format!(
                "env SLURM_TIME_FORMAT=%s squeue -h -t all{} -j {list} -o {}",
                cluster_flag(cluster),
                quote(parse::SQUEUE_LEGACY_FORMAT)
            );
            to_answer(
                me.run("squeue", &cmd, ids.len()),
                parse::parse_squeue_legacy,
            )
        })
    }

    fn sacct(&mut self, jobs: &[JobRef]) -> Answer {
        self.per_chunk(jobs, |me, cluster, ids| {
            let cmd = format!(
                "env SLURM_TIME_FORMAT=%s sacct -P -n -X{} -j {} -o {}",
                cluster_flag(cluster),
                quote(&ids.join(",")),
                quote(&parse::sacct_format_arg())
            );
            to_answer(me.run("sacct", &cmd, ids.len()), parse::parse_sacct)
        })
    }

    fn scontrol(&mut self, jobs: &[JobRef]) -> Answer {
        // Only this user's jobs, by id: one `scontrol show job -o ID` per
        // id in one remote command (scontrol takes one id; an id the
        // controller forgot says "Invalid job id" and is skipped). The
        // first line names the login user; records of other users are
        // dropped (parse::parse_scontrol_of).
        self.per_chunk(jobs, |me, cluster, ids| {
            let list = ids.iter().map(|i| quote(i)).collect::<Vec<_>>().join(" ");
            let cmd = format!(
                "printf '@@tao-user %s\\n' \"$(id -un)\"; for j in {list}; do \
                 out=$(env SLURM_TIME_FORMAT=%s scontrol{} show job -o \"$j\" 2>&1); rc=$?; \
                 case \"$out\" in *'Invalid job id specified'*) continue;; esac; \
                 if [ \"$rc\" -ne 0 ]; then printf '%s\\n' \"$out\" >&2; exit \"$rc\"; fi; \
                 printf '%s\\n' \"$out\"; done",
                cluster_flag(cluster)
            );
            let res = me.run("scontrol", &cmd, 2).or_else(|f| {
                // "No jobs in the system" is an answer.
                if f.message.contains("No jobs in the system") {
                    Ok(String::new())
                } else {
                    Err(f)
                }
            });
            match res {
                Ok(text) => {
                    let (user, body) = match text.split_once('\n') {
                        Some((first, rest)) if first.starts_with("@@tao-user ") => {
                            (first.trim_start_matches("@@tao-user ").trim(), rest)
                        }
                        _ => ("", text.as_str()),
                    };
                    Answer::from_parsed(parse::parse_scontrol_of(body, Some(user)))
                }
                Err(f) => Answer::failed(f),
            }
        })
    }

    fn read_files(
        &mut self,
        reqs: &[FileRequest],
        tail_lines: u32,
    ) -> Result<Vec<FileRecords>, QueryFailure> {
        if reqs.is_empty() {
            return Ok(Vec::new());
        }
        let nonce = nonce();
        let script = status::script(reqs, &nonce, tail_lines);
        let out = timed_exec(self.remote.as_ref(), &script, None).map_err(|e| QueryFailure {
            code: e.kind().into(),
            message: e.to_string(),
        })?;
        files_from(&out.stdout, &out, reqs, &nonce, tail_lines)
    }

    fn read_tails(
        &mut self,
        paths: &[String],
        max_bytes: u64,
    ) -> Result<Vec<Option<String>>, QueryFailure> {
        let nonce = nonce();
        let script = tails_script(paths, &nonce, max_bytes);
        let out = timed_exec(self.remote.as_ref(), &script, None).map_err(|e| QueryFailure {
            code: e.kind().into(),
            message: e.to_string(),
        })?;
        let text = String::from_utf8_lossy(&out.stdout);
        split_tails(&text, &nonce, paths.len()).ok_or_else(|| QueryFailure {
            code: "tempfail".into(),
            message: format!(
                "reading status files exited {}: {}",
                out.status,
                tao_core::cli::one_line(String::from_utf8_lossy(&out.stderr).trim())
            ),
        })
    }

    fn login_host(&self) -> Option<String> {
        Some(self.remote.login_host().to_string())
    }

    fn expected_starts(&mut self) -> std::collections::HashMap<String, String> {
        std::mem::take(&mut self.starts)
    }

    fn sweep_sidecars(&mut self, job_dirs: &[String]) -> Vec<String> {
        let cmd = tao_core::shell::remove_sidecars_command(job_dirs);
        match self.remote.exec("sh -s", Some(cmd.as_bytes())) {
            Ok(o) => String::from_utf8_lossy(&o.stdout)
                .lines()
                .filter_map(|l| l.strip_prefix("@@tao-sidecar-left "))
                .map(str::to_string)
                .collect(),
            Err(e) => vec![format!("(sweep failed: {e})")],
        }
    }
}

/// The script of [`Backend::read_tails`]: per path `<M> F`, its last
/// `max_bytes`, `<M> FE` (or `<M> N` when it does not exist), then `<M> E`.
pub fn tails_script(paths: &[String], nonce: &str, max_bytes: u64) -> String {
    let mut s = format!("M={}\n", quote(&format!("@@tao-poll-{nonce}")));
    for p in paths {
        s.push_str(&format!(
            "if [ -f {q} ]; then printf '%s F\\n' \"$M\"; tail -c {max_bytes} -- {q}; printf '\\n%s FE\\n' \"$M\"; else printf '%s N\\n' \"$M\"; fi\n",
            q = quote(p)
        ));
    }
    s.push_str("printf '%s E\\n' \"$M\"\n");
    s
}

/// Split [`tails_script`]'s output into `n` texts; `None` when it was cut.
pub fn split_tails(out: &str, nonce: &str, n: usize) -> Option<Vec<Option<String>>> {
    let m = format!("@@tao-poll-{nonce} ");
    let mut res = Vec::new();
    let mut cur: Option<String> = None;
    for line in out.split_inclusive('\n') {
        match line.strip_prefix(&m).map(str::trim_end) {
            Some("F") => cur = Some(String::new()),
            Some("FE") => {
                let mut t = cur.take()?;
                t.pop(); // the newline the script added
                res.push(Some(t));
            }
            Some("N") => res.push(None),
            Some("E") => return (res.len() == n).then_some(res),
            _ => {
                if let Some(c) = &mut cur {
                    c.push_str(line);
                }
            }
        }
    }
    None
}

/// A random-enough marker for one script run: hash of time, pid and a counter.
pub fn nonce() -> String {
    use std::sync::atomic::{AtomicU64, Ordering};
    static N: AtomicU64 = AtomicU64::new(0);
    let t = std::time::SystemTime::now()
        .duration_since(std::time::UNIX_EPOCH)
        .map(|d| d.as_nanos())
        .unwrap_or(0);
    let seed = format!(
        "{t}-{}-{}",
        std::process::id(),
        N.fetch_add(1, Ordering::Relaxed)
    );
    tao_core::sha256_hex(seed.as_bytes())[..24].to_string()
}

/// Saved outputs instead of a cluster: each command's reply is a file's text
/// (any job not in it is "not known" to that command; a command without a
/// file failed with code `replay`). Status files and logs are read from
/// `root` + the remote absolute path.
#[derive(Debug, Clone, Default)]
pub struct ReplayBackend {
    /// squeue output text, if given.
    pub squeue: Option<String>,
    /// sacct output text (or sacct's error text, e.g. "accounting storage is disabled").
    pub sacct: Option<String>,
    /// scontrol show job output text.
    pub scontrol: Option<String>,
    /// `squeue --start -h -o '%i|%S'` output text (expected starts).
    pub squeue_start: Option<String>,
    /// The user whose jobs scontrol records may describe (`SLURM_USER`);
    /// records of other users are dropped. `None`: all are read.
    pub user: Option<String>,
    /// Directory standing for `/` of the cluster's shared filesystem.
    pub root: Option<PathBuf>,
}

fn replay_answer(text: &Option<String>, what: &str, parse: fn(&str) -> Parsed) -> Answer {
    replay_answer_with(text, what, &parse)
}

fn replay_answer_with(text: &Option<String>, what: &str, parse: &dyn Fn(&str) -> Parsed) -> Answer {
    match text {
        None => Answer::failed(QueryFailure {
            code: "replay".into(),
            message: format!("no saved {what} output given (--replay-{what} FILE)"),
        }),
        Some(t) => {
            // A saved error message stands for the failed command.
            let first = t.lines().find(|l| !l.trim().is_empty()).unwrap_or("");
            let lower = first.to_ascii_lowercase();
            if lower.starts_with(&format!("{what}: error"))
                || lower.starts_with("slurm_load_jobs error")
                || lower.contains("accounting storage is disabled")
            {
                match classify(what, 1, "", t, 2) {
                    Ok(_) => Answer::from_parsed(Parsed::default()),
                    Err(f) => Answer::failed(f),
                }
            } else {
                Answer::from_parsed(parse(t))
            }
        }
    }
}

impl Backend for ReplayBackend {
    fn squeue(&mut self, _jobs: &[JobRef]) -> Answer {
        replay_answer(&self.squeue, "squeue", parse::parse_squeue)
    }

    fn sacct(&mut self, _jobs: &[JobRef]) -> Answer {
        replay_answer(&self.sacct, "sacct", parse::parse_sacct)
    }

    fn scontrol(&mut self, _jobs: &[JobRef]) -> Answer {
        let user = self.user.clone();
        replay_answer_with(&self.scontrol, "scontrol", &move |t| {
            parse::parse_scontrol_of(t, user.as_deref())
        })
    }

    fn read_files(
        &mut self,
        reqs: &[FileRequest],
        tail_lines: u32,
    ) -> Result<Vec<FileRecords>, QueryFailure> {
        let Some(root) = &self.root else {
            return Err(QueryFailure {
                code: "replay".into(),
                message: "status files are needed: give --replay-root DIR (the cluster's / as a local directory)".into(),
            });
        };
        let local = |p: &str| root.join(p.trim_start_matches('/'));
        Ok(reqs
            .iter()
            .map(|r| {
                let mut fr = FileRecords::default();
                if let Some(p) = &r.status {
                    if let Ok(t) = std::fs::read_to_string(local(p)) {
                        fr.status_last = t
                            .lines()
                            .rfind(|l| status::status_line(l).is_some())
                            .map(str::to_string);
                    }
                }
                if let Some(p) = &r.completion {
                    fr.completion = std::fs::read_to_string(local(p)).ok();
                }
                if let Some(p) = &r.progress {
                    // As over SSH: a file with the recorded stamp is not read.
                    let path = local(p);
                    if r.known.is_some() && status::local_stamp(&path) == r.known {
                        fr.progress_unchanged = true;
                    } else {
                        fr.progress = status::local_progress_tail(&path).ok();
                    }
                }
                if let Some((o, e)) = &r.logs {
                    let tail = |p: &str| match std::fs::read(local(p)) {
                        Ok(bytes) => {
                            let text = String::from_utf8_lossy(&bytes);
                            let all: Vec<&str> = text.lines().collect();
                            let start = all.len().saturating_sub(tail_lines as usize);
                            let mut t = status::Tail {
                                first_line: if all.is_empty() { 0 } else { start as u64 + 1 },
                                lines: all[start..].iter().map(|s| s.to_string()).collect(),
                                present: true,
                            };
                            status::cap_tail(&mut t, status::TAIL_BYTES);
                            t
                        }
                        Err(_) => status::Tail::default(),
                    };
                    fr.out = Some(tail(o));
                    fr.err = Some(tail(e));
                }
                fr
            })
            .collect())
    }

    fn read_tails(
        &mut self,
        paths: &[String],
        max_bytes: u64,
    ) -> Result<Vec<Option<String>>, QueryFailure> {
        let Some(root) = &self.root else {
            return Err(QueryFailure {
                code: "replay".into(),
                message: "status files are needed: give --replay-root DIR (the cluster's / as a local directory)".into(),
            });
        };
        Ok(paths
            .iter()
            .map(|p| {
                use std::io::{Read, Seek, SeekFrom};
                let mut f = std::fs::File::open(root.join(p.trim_start_matches('/'))).ok()?;
                let len = f.metadata().ok()?.len();
                f.seek(SeekFrom::Start(len.saturating_sub(max_bytes)))
                    .ok()?;
                let mut buf = Vec::new();
                f.take(max_bytes).read_to_end(&mut buf).ok()?;
                Some(String::from_utf8_lossy(&buf).into_owned())
            })
            .collect())
    }

    fn login_host(&self) -> Option<String> {
        None
    }

    fn expected_starts(&mut self) -> std::collections::HashMap<String, String> {
        self.squeue_start
            .as_deref()
            .map(parse_starts)
            .unwrap_or_default()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Write stand-ins (test doubles for the login host's commands) in
    /// `bin`: each (name, body) an executable `sh` script with that body.
    fn write_stand_ins(bin: &std::path::Path, scripts: &[(&str, &str)]) {
        use std::os::unix::fs::PermissionsExt;
        for (name, body) in scripts {
            let path = bin.join(name);
            std::fs::write(&path, format!("#!/bin/sh\n{body}")).unwrap();
            std::fs::set_permissions(&path, std::fs::Permissions::from_mode(0o755)).unwrap();
        }
    }

    /// A folder of stand-in `squeue` and `sacct` with the given bodies.
    fn stand_ins(squeue: &str, sacct: &str) -> tempfile::TempDir {
        let dir = tempfile::tempdir().unwrap();
        write_stand_ins(dir.path(), &[("squeue", squeue), ("sacct", sacct)]);
        dir
    }

    /// A temporary jobs' root with the stand-ins in its `bin/`: `squeue`
    /// runs `rows` (shell commands printing its rows; nothing for
    /// `--start`), `sacct` prints nothing, and with `tmp_here` `mktemp`
    /// makes its files in the root (so a test sees what a read left
    /// behind). Output: the root and its `bin/`.
    fn jobs_root(rows: &str, tmp_here: bool) -> (tempfile::TempDir, std::path::PathBuf) {
        let dir = tempfile::tempdir().unwrap();
        let bin = dir.path().join("bin");
        std::fs::create_dir(&bin).unwrap();
        let squeue = format!("case \"$*\" in *--start*) ;; *) {rows};; esac\n");
        let mktemp = format!("exec /usr/bin/mktemp -p {} \"$@\"\n", dir.path().display());
        let mut scripts = vec![("squeue", squeue.as_str()), ("sacct", "exit 0\n")];
        if tmp_here {
            scripts.push(("mktemp", mktemp.as_str()));
        }
        write_stand_ins(&bin, &scripts);
        (dir, bin)
    }

    /// One status.json record of a running job at epoch `e` (of 200).
    fn status_record(e: u64) -> String {
        format!("{{\"epoch\": {e}, \"max_epoch\": 200, \"status\": \"RUNNING\", \"kpi\": {{\"loss\": {e}}}}}\n")
    }

    /// Run `script` with `sh -c`, the stand-ins of `bin` first on PATH.
    fn run_with(bin: &std::path::Path, script: &str) -> std::process::Output {
        std::process::Command::new("sh")
            .arg("-c")
            .arg(script)
            .env("PATH", format!("{}:/usr/bin:/bin", bin.display()))
            .output()
            .unwrap()
    }

    /// Run one kept-replies script (the scheduler part for job `ids`,
    /// the files part of `reqs` under `nonce`, then the cleanup) with the
    /// stand-ins of `bin`, and read its files part back as the poll does.
    /// Output: the tool's view of the run, where its files part starts,
    /// and the files read (panics when the read fails).
    fn run_kept(
        bin: &std::path::Path,
        ids: &[&str],
        reqs: &[FileRequest],
        nonce: &str,
    ) -> (tao_ssh::Output, usize, Vec<FileRecords>) {
        let parts = vec![(
            "@@m0".to_string(),
            None,
            ids.iter().map(|s| s.to_string()).collect(),
        )];
        let script = format!(
            "{}{}{KEPT_CLEANUP}",
            all_chunks_script_kept(&parts),
            status::script_with(reqs, nonce, 0, KEPT_REPLIES)
        );
        let out = run_with(bin, &script);
        let cut = line_start_of(&out.stdout, format!("@@tao-poll-{nonce} ").as_bytes()).unwrap();
        let o = tao_ssh::Output {
            stdout: out.stdout,
            stderr: out.stderr,
            status: out.status.code().unwrap(),
        };
        let files = files_from(&o.stdout[cut..], &o, reqs, nonce, 0).unwrap();
        (o, cut, files)
    }

    /// Whether reading `text`, an edited copy of the files part of the
    /// run `o`, fails (as a cut or damaged output must).
    fn read_fails(text: &str, o: &tao_ssh::Output, reqs: &[FileRequest], nonce: &str) -> bool {
        let edited = tao_ssh::Output {
            stdout: text.as_bytes().to_vec(),
            ..o.clone()
        };
        files_from(text.as_bytes(), &edited, reqs, nonce, 0).is_err()
    }

    #[test]
    fn classify_replies() {
        assert_eq!(classify("squeue", 0, "", "", 3), Ok(String::new()));
        assert_eq!(
            classify(
                "squeue",
                1,
                "",
                "slurm_load_jobs error: Invalid job id specified",
                1
            ),
            Ok(String::new())
        );
        assert_eq!(
            classify(
                "squeue",
                1,
                "",
                "slurm_load_jobs error: Invalid job id specified",
                2
            )
            .unwrap_err()
            .code,
            "tempfail"
        );
        assert_eq!(
            classify(
                "sacct",
                1,
                "",
                "sacct: error: Slurm accounting storage is disabled",
                1
            )
            .unwrap_err()
            .code,
            "no_accounting"
        );
        assert_eq!(
            classify(
                "squeue",
                1,
                "",
                "squeue: error: Invalid job format specification: ExitCode",
                1
            )
            .unwrap_err()
            .code,
            "unsupported"
        );
        let f = classify(
            "squeue",
            1,
            "",
            "squeue: error: slurm_receive_msg: Socket timed out on send/recv operation",
            1,
        )
        .unwrap_err();
        assert_eq!(f.code, "tempfail");
        assert!(f.message.contains("Socket timed out"));
        assert!(classify("sacct", 2, "", "", 1)
            .unwrap_err()
            .message
            .contains("no message"));
    }

    #[test]
    fn both_script_runs_and_splits() {
        let dir = stand_ins(
            "case \"$*\" in *--start*) echo '7|1800000000'; echo '8|N/A';; *) echo '7|7|RUNNING|n1|1|2|N/A|0:01|0|None|';; esac\n",
            "echo 'sacct: error: Socket timed out' >&2; exit 1\n",
        );
        let bin = dir.path();
        let script = both_script("@@m1", Some("c1"), &["7".to_string()]);
        assert_eq!(script.matches(" -M 'c1' -j '7'").count(), 3, "{script}");
        let out = run_with(bin, &script);
        let text = String::from_utf8(out.stdout).unwrap();
        let (qs, qo, qe, as_, ao, ae) = split_both(&text, "@@m1").unwrap();
        assert_eq!(
            (qs, qo.as_str(), qe.as_str()),
            (0, "7|7|RUNNING|n1|1|2|N/A|0:01|0|None|\n", "")
        );
        assert_eq!(
            (as_, ao.as_str(), ae.as_str()),
            (1, "", "sacct: error: Socket timed out\n")
        );
        assert!(split_both("@@m1 Q 0\n", "@@m1").is_none());
        std::fs::write(bin.join("f"), "ab\ncd").unwrap();
        let paths = vec![bin.join("f").display().to_string(), "/nope".to_string()];
        let t = std::process::Command::new("sh")
            .arg("-c")
            .arg(tails_script(&paths, "x", 4))
            .output()
            .unwrap();
        let t = String::from_utf8(t.stdout).unwrap();
        assert_eq!(
            split_tails(&t, "x", 2),
            Some(vec![Some("b\ncd".to_string()), None])
        );
        assert_eq!(split_tails(&t, "x", 3), None);
        let starts = parse_starts(&split_start(&text, "@@m1"));
        assert_eq!(
            starts.into_iter().collect::<Vec<_>>(),
            vec![("7".to_string(), "2027-01-15T08:00:00Z".to_string())]
        );
    }

    /// Issue 17's bounded cost: the files of each job are read by the
    /// state squeue gave it in the same script. RUNNING (and CANCELLED):
    /// the status.json's last lines only, no completion record; PENDING:
    /// nothing, although both files exist; COMPLETED (or a job squeue does
    /// not list): the 4 KiB tail and the completion record. The kept replies are
    /// removed at the end.
    #[test]
    fn files_are_read_by_the_state_squeue_gave() {
        let (dir, bin) = jobs_root(
            "echo '7|7|RUNNING|n1|1|2|3|0:01|0|None|'; echo '8|8|PENDING||1|||0:00|0|Priority|'; echo '9|9|COMPLETED|n1|1|2|3|0:01|0|None|'; echo '11|11|CANCELLED|n1|1|2|3|0:01|0|None|'",
            true,
        );
        let mut reqs = Vec::new();
        for id in ["7", "8", "9", "10", "11"] {
            let d = dir.path().join(id);
            std::fs::create_dir(&d).unwrap();
            let body: String = (1..=100).map(status_record).collect();
            std::fs::write(d.join("status.json"), body).unwrap();
            std::fs::write(d.join("completion.json"), "{\"exit_code\": 0}\n").unwrap();
            let d = d.display();
            reqs.push(FileRequest {
                status: None,
                completion: Some(format!("{d}/completion.json")),
                logs: None,
                progress: Some(format!("{d}/status.json")),
                job: None,
                state_key: Some(format!("0|{id}")),
                known: None,
            });
        }
        let (o, cut, files) = run_kept(&bin, &["7", "8", "9", "10", "11"], &reqs, "fk0");
        use status::ReadClass::*;
        let classes: Vec<_> = files.iter().map(|f| f.class).collect();
        assert_eq!(
            classes,
            [
                Some(LastLines),
                Some(Pending),
                Some(Full),
                Some(Full),
                Some(LastLines)
            ]
        );
        let run = files[0].progress.as_ref().unwrap();
        assert!(run.lines_only && !run.cut, "{run:?}");
        assert_eq!(
            run.text.lines().count(),
            tao_core::progress::RUNNING_TAIL_LINES,
            "{run:?}"
        );
        assert!(run.mtime.is_some());
        assert_eq!(run.progress().unwrap().epoch, Some(100));
        assert_eq!(
            run.verdict_line(),
            None,
            "last lines never settle a verdict"
        );
        assert!(files[0].completion.is_none());
        assert!(files[1].progress.is_none() && files[1].completion.is_none());
        assert!(files[4].progress.as_ref().unwrap().lines_only && files[4].completion.is_none());
        for f in &files[2..4] {
            let t = f.progress.as_ref().unwrap();
            assert!(t.cut && !t.lines_only);
            assert!(t.text.len() >= 4000, "{}", t.text.len());
            assert_eq!(t.progress().unwrap().epoch, Some(100));
            assert!(f.completion.is_some());
        }
        // Nothing left behind in the temporary directory but bin/ and the jobs'.
        let left: Vec<_> = std::fs::read_dir(dir.path())
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .filter(|n| n.starts_with("tmp."))
            .collect();
        assert!(left.is_empty(), "{left:?}");
        // Letters missing (a cut or failed classification): the read failed.
        let text = String::from_utf8_lossy(&o.stdout[cut..]).replace("@@tao-poll-fk0 K\n", "");
        assert!(read_fails(&text, &o, &reqs, "fk0"));
    }

    /// Incremental reads: a running job's status.json whose size and
    /// mtime are the ones its line recorded is stat'ed, not read (`U`:
    /// its progress stays); a changed one (or one with no recorded stamp)
    /// is read; an absent one is absent; a byte changed in place with the
    /// size and mtime put back is not seen (the rule is the stamp's). A
    /// pending job's stamp is not looked at.
    #[test]
    fn unchanged_running_files_are_not_read_again() {
        use tao_core::progress::FileStamp;
        let rows: String = ["7", "11", "12", "13", "14"]
            .iter()
            .map(|id| format!("echo '{id}|{id}|RUNNING|n1|1|2|3|0:01|0|None|'; "))
            .collect();
        let (dir, bin) = jobs_root(
            &format!("{rows}echo '8|8|PENDING||1|||0:00|0|Priority|'"),
            false,
        );
        let stamp = |p: &std::path::Path| {
            let m = std::fs::metadata(p).unwrap();
            let t = m
                .modified()
                .unwrap()
                .duration_since(std::time::UNIX_EPOCH)
                .unwrap();
            FileStamp {
                size: m.len(),
                mtime_s: t.as_secs() as i64,
            }
        };
        let ids = ["7", "8", "11", "12", "13", "14"];
        let mut reqs = Vec::new();
        for id in ids {
            let d = dir.path().join(id);
            std::fs::create_dir(&d).unwrap();
            let f = d.join("status.json");
            if id != "12" {
                let body: String = (1..=10).map(status_record).collect();
                std::fs::write(&f, body).unwrap();
            }
            let known = match id {
                // Unchanged since the line's progress was read.
                "7" | "8" => Some(stamp(&f)),
                // Grown since.
                "11" => Some(FileStamp {
                    size: stamp(&f).size - 10,
                    ..stamp(&f)
                }),
                // Gone since.
                "12" => Some(FileStamp {
                    size: 1,
                    mtime_s: 1,
                }),
                // Never read (no stamp recorded).
                "13" => None,
                // Changed in place, size and mtime put back below.
                _ => Some(stamp(&f)),
            };
            reqs.push(FileRequest {
                status: None,
                completion: None,
                logs: None,
                progress: Some(f.display().to_string()),
                job: None,
                state_key: Some(format!("0|{id}")),
                known,
            });
        }
        // 14: one byte changed in place (epoch 10 -> 19), size and mtime put back.
        let f14 = dir.path().join("14/status.json");
        let before = std::fs::metadata(&f14).unwrap().modified().unwrap();
        let text = std::fs::read_to_string(&f14).unwrap();
        let at = text.rfind("\"epoch\": 10").unwrap() + "\"epoch\": 1".len();
        let mut planted = text.clone().into_bytes();
        planted[at] = b'9';
        std::fs::write(&f14, &planted).unwrap();
        std::fs::File::options()
            .write(true)
            .open(&f14)
            .unwrap()
            .set_modified(before)
            .unwrap();
        let (o, cut, files) = run_kept(&bin, &ids, &reqs, "fu0");
        let text = String::from_utf8_lossy(&o.stdout[cut..]);
        let unchanged: Vec<bool> = files.iter().map(|f| f.progress_unchanged).collect();
        assert_eq!(
            unchanged,
            [true, false, false, false, false, true],
            "{text}"
        );
        // Unchanged files: not read (no tail text travelled for them).
        assert!(files[0].progress.is_none() && files[5].progress.is_none());
        assert!(
            !text.contains(&format!("==> {} <==", reqs[0].progress.as_ref().unwrap())),
            "{text}"
        );
        assert!(
            !text.contains("\"epoch\": 19"),
            "the planted byte was not read: {text}"
        );
        // Pending: neither read nor stamped.
        assert_eq!(files[1].class, Some(status::ReadClass::Pending));
        assert!(files[1].progress.is_none());
        // Grown and never-read files: read, with their new stamp.
        for k in [2, 4] {
            let t = files[k].progress.as_ref().unwrap();
            assert_eq!(t.progress().unwrap().epoch, Some(10));
            let now = stamp(std::path::Path::new(reqs[k].progress.as_ref().unwrap()));
            let p = t.progress().unwrap();
            assert_eq!(
                (p.file_size, p.file_mtime_s),
                (Some(now.size), Some(now.mtime_s))
            );
        }
        // Absent: no progress, not "unchanged" (the line's progress is cleared).
        assert!(files[3].progress.is_none() && !files[3].progress_unchanged);
        // A missing stamp letter (a cut output): the read failed.
        let cut_text = text.replace("UCMCU", "UCMC");
        assert_ne!(cut_text, text, "{text}");
        assert!(read_fails(&cut_text, &o, &reqs, "fu0"));
    }

    /// The scheduler part and the files part of one script run are read
    /// apart: squeue's rows, the expected starts, a status.json tail (with
    /// its verdict line) and a completion record, from one `sh` run.
    #[test]
    fn scheduler_and_files_in_one_script() {
        let dir = stand_ins(
            "case \"$*\" in *--start*) echo '8|1800000000';; *) echo '7|7|COMPLETED|n1|1|2|3|0:01|0|None|';; esac\n",
            "exit 0\n",
        );
        let bin = dir.path();
        let d = bin.display().to_string();
        std::fs::write(
            bin.join("status.json"),
            "{\"status\": \"STARTED\"}\n{\"epoch\": 2, \"max_epoch\": 2, \"status\": \"RUNNING\", \"kpi\": {\"loss\": 0.5}}\n{\"status\": \"SUCCESS\", \"message\": \"done\"}\n",
        )
        .unwrap();
        std::fs::write(bin.join("completion.json"), "{\"exit_code\": 0}\n").unwrap();
        let reqs = vec![FileRequest {
            status: None,
            completion: Some(format!("{d}/completion.json")),
            logs: None,
            progress: Some(format!("{d}/status.json")),
            job: None,
            state_key: None,
            known: None,
        }];
        let parts = vec![(
            "@@m0".to_string(),
            None,
            vec!["7".to_string(), "8".to_string()],
        )];
        let script = format!(
            "{}{}",
            all_chunks_script(&parts),
            status::script(&reqs, "fn0", 0)
        );
        let out = run_with(bin, &script);
        let cut = line_start_of(&out.stdout, b"@@tao-poll-fn0 ").unwrap();
        let sched = String::from_utf8_lossy(&out.stdout[..cut]);
        let (qs, qo, ..) = split_both(&sched, "@@m0").unwrap();
        assert_eq!(
            (qs, qo.as_str()),
            (0, "7|7|COMPLETED|n1|1|2|3|0:01|0|None|\n")
        );
        assert_eq!(
            parse_starts(&split_start(&sched, "@@m0"))
                .get("8")
                .map(String::as_str),
            Some("2027-01-15T08:00:00Z")
        );
        let o = tao_ssh::Output {
            stdout: out.stdout.clone(),
            stderr: Vec::new(),
            status: out.status.code().unwrap(),
        };
        let files = files_from(&out.stdout[cut..], &o, &reqs, "fn0", 0).unwrap();
        let t = files[0].progress.as_ref().unwrap();
        assert_eq!(t.progress().unwrap().epoch, Some(2));
        assert_eq!(
            t.verdict_line(),
            Some(Some(
                "{\"status\": \"SUCCESS\", \"message\": \"done\"}".to_string()
            ))
        );
        assert_eq!(
            files[0].completion.as_deref().map(str::trim),
            Some("{\"exit_code\": 0}")
        );
        // A cut output (no end marker) is a failed read, not an empty one.
        let half = &out.stdout[..out.stdout.len() - 10];
        assert!(files_from(&half[cut..], &o, &reqs, "fn0", 0).is_err());
    }

    #[test]
    fn two_clusters_in_one_script() {
        // A stand-in squeue/sacct that echo their -M: each chunk's answer
        // lands under its own marker.
        let echo_m =
            "c=local\nwhile [ $# -gt 0 ]; do [ \"$1\" = -M ] && c=$2; shift; done\necho \"$c\"\n";
        let dir = stand_ins(echo_m, echo_m);
        let bin = dir.path();
        let jobs = vec![
            JobRef::parse("1;b", None).unwrap(),
            JobRef::parse("1", None).unwrap(),
        ];
        let parts: Vec<_> = chunks(&jobs, MAX_ID_LIST)
            .into_iter()
            .enumerate()
            .map(|(i, (c, ids))| (format!("@@m{i}"), c, ids))
            .collect();
        let script = all_chunks_script(&parts);
        assert_eq!(script.matches("squeue -h").count(), 2, "{script}");
        let out = run_with(bin, &script);
        let text = String::from_utf8(out.stdout).unwrap();
        let (_, q0, _, _, a0, _) = split_both(&text, "@@m0").unwrap();
        let (_, q1, _, _, a1, _) = split_both(&text, "@@m1").unwrap();
        assert_eq!((q0.as_str(), a0.as_str()), ("local\n", "local\n"));
        assert_eq!((q1.as_str(), a1.as_str()), ("b\n", "b\n"));
    }

    #[test]
    fn chunking_by_cluster_and_length() {
        let jobs: Vec<JobRef> = (0..1000)
            .map(|i| JobRef::parse(&format!("{}", 100000 + i), None).unwrap())
            .collect();
        assert_eq!(chunks(&jobs, MAX_ID_LIST).len(), 1);
        let c = chunks(&jobs, 70);
        assert!(c.len() > 10);
        assert!(c.iter().all(|(_, ids)| ids.join(",").len() <= 70));
        assert_eq!(c.iter().map(|(_, ids)| ids.len()).sum::<usize>(), 1000);
        let mixed = vec![
            JobRef::parse("1;a", None).unwrap(),
            JobRef::parse("2", None).unwrap(),
            JobRef::parse("3;a", None).unwrap(),
        ];
        let c = chunks(&mixed, MAX_ID_LIST);
        assert_eq!(
            c,
            vec![
                (None, vec!["2".to_string()]),
                (Some("a".into()), vec!["1".into(), "3".into()])
            ]
        );
    }
}
