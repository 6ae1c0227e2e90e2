//! What tao-submit reads from the scheduler to decide a mutation: the jobs
//! that carry a given name (squeue and sacct, batched), the node names
//! (`scontrol show nodes`), and the job id in sbatch's reply.
//!
//! These are reads that guard writes (never submit twice, never exclude a
//! node that does not exist); reporting job states is tao-poll's job.
//!
//! Sources: squeue(1) (`-t all` shows recently ended jobs, `--name` takes
//! a comma list, `-o %i|%j|%T|%r`), sacct(1) (`-X` allocations only, `-P`
//! parsable with `|`, `-S` start of the search window: the default window
//! starts at midnight today, so it is always given), sbatch(1)
//! (`--parsable`: `jobid[;cluster]`).

use std::collections::BTreeMap;

use tao_core::{shell, Error, Result};

/// Maximum number of names or ids put on one command line (a job id or
/// record id is at most 65 bytes, so a chunk stays far below the kernel's
/// 128 KiB limit on one argument).
pub const CHUNK: usize = 500;

/// One job found by name.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Found {
    /// Slurm job id (digits).
    pub job_id: String,
    /// Job name (the record id).
    pub name: String,
    /// Native state as printed (`PENDING`, `CANCELLED by 0`, ...).
    pub state: String,
    /// squeue's reason (`JobHeldUser`, `None`, ...); `None` when only sacct knew the job.
    pub reason: Option<String>,
    /// The login host it was seen from.
    pub login_host: String,
    /// The cluster it was looked up on with `-M` (the job script's
    /// `#SBATCH --clusters`), `None` for the login host's own cluster.
    pub cluster: Option<String>,
}

impl Found {
    /// Whether the job waits on a user hold (ours, from `sbatch --hold`).
    pub fn is_held(&self) -> bool {
        self.state == "PENDING" && self.reason.as_deref() == Some("JobHeldUser")
    }

    /// Whether the job was cancelled (sacct prints `CANCELLED by N`).
    pub fn is_cancelled(&self) -> bool {
        self.state.starts_with("CANCELLED")
    }
}

/// Marker lines of the by-name script.
const RC: &str = "@@tao-rc ";
const SACCT: &str = "@@tao-sacct";

/// The script listing jobs of `user` named any of `names` (squeue `-t all`,
/// then sacct from `since`), each tool's exit status on a marker line.
/// `since` is a sacct time (`2026-11-28`, `now-7days`). `cluster` adds
/// `-M cluster` to both (a job sent to another cluster of the same
/// accounting is listed only by that cluster's controller).
pub fn by_name_script(user: &str, names: &[&str], since: &str, cluster: Option<&str>) -> String {
    let list = shell::quote(&names.join(","));
    let m = cluster
        .map(|c| format!("-M {} ", shell::quote(c)))
        .unwrap_or_default();
    format!(
        "squeue -h -t all {m}-u {u} --name={list} -o '%i|%j|%T|%r'; echo \"{RC}$?\"; echo '{SACCT}'; \
         sacct -n -X -P {m}-u {u} --name={list} -S {s} -E now -o JobIDRaw,JobName,State; echo \"{RC}$?\"",
        u = shell::quote(user),
        s = shell::quote(since),
    )
}

/// The one cluster a job script sends its job to: the value of an
/// `#SBATCH --clusters=NAME`, `--clusters NAME`, `--cluster=NAME` or
/// `-M NAME` directive (sbatch reads directives up to the first command
/// line; the last one wins). `None` without one, or for a list
/// (`-M a,b`: Slurm picks one; the reply names it).
pub fn script_cluster(script: &str) -> Option<String> {
    let mut found = None;
    for line in script.lines().skip_while(|l| l.starts_with("#!")) {
        let t = line.trim();
        if t.is_empty() {
            continue;
        }
        let Some(rest) = t.strip_prefix("#SBATCH") else {
            if t.starts_with('#') {
                continue;
            }
            break;
        };
        let words: Vec<&str> = rest.split_whitespace().collect();
        for (i, w) in words.iter().enumerate() {
            let value = if let Some(v) = w
                .strip_prefix("--clusters=")
                .or_else(|| w.strip_prefix("--cluster="))
            {
                Some(v)
            } else if matches!(*w, "--clusters" | "--cluster" | "-M") {
                words.get(i + 1).copied()
            } else {
                w.strip_prefix("-M").filter(|v| !v.is_empty())
            };
            if let Some(v) = value {
                found = Some(v.to_string());
            }
        }
    }
    found.filter(|v| !v.is_empty() && !v.contains(','))
}

/// Parse the by-name script's output into jobs keyed by job id (squeue's
/// view wins: it has the reason). Only jobs whose name is one of `names`
/// exactly count; lines that are not `digits|name|...` are ignored (a
/// login banner is not a job).
///
/// Errors: [`Error::TempFail`] when squeue or sacct failed or a marker is
/// missing: without both views the tool cannot know the job is absent, so
/// it must not submit.
pub fn parse_by_name(
    out: &str,
    names: &[&str],
    login_host: &str,
) -> Result<BTreeMap<String, Found>> {
    let mut found = BTreeMap::new();
    let mut section = 0; // 0 squeue, 1 sacct
    let mut rcs = Vec::new();
    for line in out.lines() {
        let line = line.trim();
        if let Some(rc) = line.strip_prefix(RC) {
            rcs.push(rc.trim().to_string());
            continue;
        }
        if line == SACCT {
            section = 1;
            continue;
        }
        let cells: Vec<&str> = line.split('|').collect();
        let (id, name, state, reason) = match (section, cells.as_slice()) {
            (0, [id, name, state, reason]) => (*id, *name, *state, Some(reason.to_string())),
            (1, [id, name, state]) => (*id, *name, *state, None),
            _ => continue,
        };
        if id.is_empty() || !id.bytes().all(|b| b.is_ascii_digit()) || !names.contains(&name) {
            continue;
        }
        if section == 1 && found.contains_key(id) {
            continue;
        }
        found.insert(
            id.to_string(),
            Found {
                job_id: id.to_string(),
                name: name.to_string(),
                state: state.to_string(),
                reason,
                login_host: login_host.to_string(),
                cluster: None,
            },
        );
    }
    // Without the sacct marker, sacct's rows were never read as such: a
    // job only sacct knows would be missed (and submitted again).
    if rcs.len() != 2 || rcs.iter().any(|r| r != "0") || section != 1 {
        return Err(Error::TempFail(format!(
            "cannot list jobs by name on {login_host:?} (squeue/sacct exit statuses {rcs:?}{}); nothing was submitted: try again",
            if section == 1 { "" } else { ", no sacct section" }
        )));
    }
    Ok(found)
}

/// The job id and cluster in sbatch's reply, parsed strictly: a line that
/// is all digits (`--parsable`), `digits;cluster` (`--parsable` on a
/// multi-cluster setup), or the sentence `Submitted batch job N` (optionally
/// `on cluster C`) that site wrappers print. Any other line (a login banner,
/// a warning) is not an id, even when it holds numbers.
///
/// Output: `Ok(None)` when no line is an id (an empty reply).
///
/// Errors: [`Error::Protocol`] (exit 76) when lines name different ids.
pub fn parse_sbatch(text: &str) -> Result<Option<(String, Option<String>)>> {
    let digits = |s: &str| !s.is_empty() && s.bytes().all(|b| b.is_ascii_digit());
    let cluster_ok = |s: &str| {
        !s.is_empty()
            && s.bytes()
                .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_' || b == b'.')
    };
    let mut hits: Vec<(String, Option<String>)> = Vec::new();
    for line in text.lines() {
        let line = line.trim();
        let hit = if digits(line) {
            Some((line.to_string(), None))
        } else if let Some((id, cl)) = line.split_once(';') {
            (digits(id) && cluster_ok(cl)).then(|| (id.to_string(), Some(cl.to_string())))
        } else if let Some(rest) = line.strip_prefix("Submitted batch job ") {
            match rest.split_once(" on cluster ") {
                Some((id, cl)) if digits(id) && cluster_ok(cl) => {
                    Some((id.to_string(), Some(cl.to_string())))
                }
                None if digits(rest) => Some((rest.to_string(), None)),
                _ => None,
            }
        } else {
            None
        };
        if let Some(h) = hit {
            if !hits.contains(&h) {
                hits.push(h);
            }
        }
    }
    match hits.len() {
        0 => Ok(None),
        1 => Ok(hits.pop()),
        _ => Err(Error::Protocol(format!(
            "sbatch printed several job ids ({}); cannot tell which job is ours",
            hits.iter()
                .map(|h| h.0.as_str())
                .collect::<Vec<_>>()
                .join(", ")
        ))),
    }
}

/// Node names in `scontrol show nodes -o` output (one node per line,
/// `NodeName=<name> ...`).
pub fn parse_node_names(text: &str) -> Vec<String> {
    text.lines()
        .filter_map(|l| {
            l.split_whitespace()
                .find_map(|w| w.strip_prefix("NodeName="))
                .map(str::to_string)
        })
        .collect()
}

/// sbatch errors after which the controller may have created the job
/// although sbatch reports failure: the request went out and the reply was
/// lost (Slurm's SLURM_PROTOCOL_SOCKET_IMPL_TIMEOUT, "Socket timed out on
/// send/recv operation"; SLURM_PROTOCOL_SOCKET_ZERO_BYTES_SENT, "Zero Bytes
/// were transmitted or received"; a connection reset mid-reply). The job id
/// counter is seen to advance after such a reply. tao-submit treats them
/// like a cut connection: the job is looked up by name over the whole
/// reconcile window, adopted if it appears, submitted again only if it
/// never does. A refusal (`Invalid partition`, `Unable to contact slurm
/// controller (connect failure)`: the request never got through) is not
/// ambiguous.
pub const AMBIGUOUS_SBATCH_ERRORS: &[&str] = &[
    "Socket timed out on send/recv operation",
    "Zero Bytes were transmitted or received",
    "Connection reset by peer",
];

/// Whether sbatch's stderr says the outcome is unknown
/// ([`AMBIGUOUS_SBATCH_ERRORS`]).
pub fn is_ambiguous_sbatch_error(stderr: &str) -> bool {
    AMBIGUOUS_SBATCH_ERRORS.iter().any(|e| stderr.contains(e))
}

/// Whether a native state (as squeue or sacct prints it: `CANCELLED by 0`,
/// `CANCELLED+`, `PR`) is one a job ends in: the one state table of the
/// tools, [`tao_core::state::native::is_end_state`] (so LAUNCH_FAILED and
/// RECONFIG_FAIL count, and squeue's compact codes too).
pub fn is_end_state(st: &str) -> bool {
    tao_core::state::native::is_end_state(st)
}

/// One node as `scontrol show nodes -o` describes it.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct NodeInfo {
    /// `NodeName`.
    pub name: String,
    /// `CPUTot`: CPUs of the node.
    pub cpus: u32,
    /// GPUs of the node: the counts of every `gpu` entry of `Gres`
    /// (`gpu:4`, `gpu:a100:8(S:0-1)`), summed; 0 without.
    pub gpus: u32,
    /// `Partitions`: the partitions the node is in.
    pub partitions: Vec<String>,
}

/// Parse `scontrol show nodes -o` (one node per line, `Key=Value` words).
/// Lines without `NodeName=` are ignored.
pub fn parse_nodes(text: &str) -> Vec<NodeInfo> {
    text.lines()
        .filter_map(|l| {
            let get = |k: &str| {
                l.split_whitespace()
                    .find_map(|w| w.strip_prefix(k).and_then(|r| r.strip_prefix('=')))
            };
            let name = get("NodeName")?.to_string();
            let cpus = get("CPUTot").and_then(|v| v.parse().ok()).unwrap_or(0);
            let gpus = get("Gres")
                .map(|g| {
                    g.split(',')
                        .filter(|e| e.starts_with("gpu"))
                        .filter_map(|e| {
                            let e = e.split('(').next().unwrap_or(e);
                            e.rsplit(':').next()?.parse::<u32>().ok()
                        })
                        .sum()
                })
                .unwrap_or(0);
            let partitions = get("Partitions")
                .filter(|p| *p != "(null)")
                .map(|p| p.split(',').map(str::to_string).collect())
                .unwrap_or_default();
            Some(NodeInfo {
                name,
                cpus,
                gpus,
                partitions,
            })
        })
        .collect()
}

/// Expand a Slurm host list (`n[1-3,7],gpu01`) into names, at most
/// [`tao_core::hostlist::MAX_NAMES`] (the one expander of the tools,
/// [`tao_core::hostlist::expand`]); a malformed range is kept as written
/// (it will then not match a node and be dropped).
///
/// Errors: [`tao_core::hostlist::HostlistError`] past the bound.
pub fn expand_hostlist(list: &str) -> Result<Vec<String>, tao_core::hostlist::HostlistError> {
    tao_core::hostlist::expand(list, tao_core::hostlist::MAX_NAMES)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn sbatch_replies() {
        assert_eq!(parse_sbatch("123\n").unwrap(), Some(("123".into(), None)));
        assert_eq!(
            parse_sbatch("123;cl-a\n").unwrap(),
            Some(("123".into(), Some("cl-a".into())))
        );
        assert_eq!(
            parse_sbatch("Submitted batch job 77\n").unwrap(),
            Some(("77".into(), None))
        );
        assert_eq!(
            parse_sbatch("Submitted batch job 77 on cluster west\n").unwrap(),
            Some(("77".into(), Some("west".into())))
        );
        // Banners hold numbers; they are not ids.
        let banner = "Welcome to cluster 42! 3 jobs running, quota 95%\nMaintenance 2026-12-01\n";
        assert_eq!(parse_sbatch(banner).unwrap(), None);
        assert_eq!(
            parse_sbatch(&format!("{banner}991\n")).unwrap(),
            Some(("991".into(), None))
        );
        assert_eq!(parse_sbatch("").unwrap(), None);
        assert_eq!(parse_sbatch("12a\n-5\n1 2\n").unwrap(), None);
        // The same id twice (parsable + sentence) is one id; two ids is an error.
        assert_eq!(
            parse_sbatch("5\nSubmitted batch job 5\n").unwrap(),
            Some(("5".into(), None))
        );
        let e = parse_sbatch("5\n6\n").unwrap_err();
        assert_eq!(e.code(), tao_core::exit::PROTOCOL);
    }

    #[test]
    fn by_name_output() {
        let out = "motd 12|x\n10|tao-a|PENDING|JobHeldUser\n11|other|RUNNING|None\n@@tao-rc 0\n@@tao-sacct\n10|tao-a|PENDING\n9|tao-a|CANCELLED by 0\n9.batch|tao-a|CANCELLED\n@@tao-rc 0\n";
        let f = parse_by_name(out, &["tao-a"], "h").unwrap();
        assert_eq!(f.keys().collect::<Vec<_>>(), ["10", "9"]);
        assert!(f["10"].is_held());
        assert!(f["9"].is_cancelled());
        assert_eq!(f["9"].reason, None);
        let e = parse_by_name("@@tao-rc 1\n@@tao-sacct\n@@tao-rc 0\n", &["a"], "h").unwrap_err();
        assert_eq!(e.code(), tao_core::exit::TEMPFAIL);
        assert!(
            parse_by_name("@@tao-rc 0\n", &["a"], "h").is_err(),
            "missing sacct marker"
        );
    }

    #[test]
    fn by_name_script_quotes_values() {
        let s = by_name_script("u", &["a", "b"], "now-7days", None);
        assert!(s.contains("--name='a,b'"), "{s}");
        assert!(s.contains("-u 'u'"), "{s}");
        assert!(!s.contains("-M"), "{s}");
        let s = by_name_script("u", &["a"], "now-7days", Some("b"));
        assert_eq!(s.matches("-M 'b' -u 'u'").count(), 2, "{s}");
    }

    #[test]
    fn the_cluster_a_script_sends_its_job_to() {
        let s = |d: &str| {
            format!("#!/bin/bash\n#SBATCH --job-name=x\n{d}\n#\n# comment\n\necho hi\n#SBATCH -M late\n")
        };
        assert_eq!(script_cluster(&s("#SBATCH --clusters=b")), Some("b".into()));
        assert_eq!(script_cluster(&s("#SBATCH --cluster=b")), Some("b".into()));
        assert_eq!(script_cluster(&s("#SBATCH -M b")), Some("b".into()));
        assert_eq!(script_cluster(&s("#SBATCH --clusters b")), Some("b".into()));
        assert_eq!(script_cluster(&s("#SBATCH -Mb")), Some("b".into()));
        // A list: Slurm picks; none past the first command; none at all.
        assert_eq!(script_cluster(&s("#SBATCH -M a,b")), None);
        assert_eq!(script_cluster(&s("")), None);
        assert_eq!(script_cluster("#!/bin/sh\n#SBATCH --mem=1G\n"), None);
    }

    #[test]
    fn node_details() {
        let t = "NodeName=n1 Arch=x86_64 CPUTot=8 Gres=gpu:4 Partitions=gpu,cpu_long State=IDLE\n\
                 NodeName=g1 CPUTot=64 Gres=gpu:a100:8(S:0-1),shard:16 Partitions=polar\n\
                 NodeName=c1 CPUTot=32 Gres=(null) Partitions=(null)\nbanner line\n";
        let n = parse_nodes(t);
        assert_eq!(n.len(), 3);
        assert_eq!(
            (n[0].cpus, n[0].gpus, n[0].partitions.clone()),
            (8, 4, vec!["gpu".to_string(), "cpu_long".to_string()])
        );
        assert_eq!((n[1].cpus, n[1].gpus), (64, 8));
        assert_eq!((n[2].gpus, n[2].partitions.len()), (0, 0));
    }

    // is_end_state is tao_core::state::native::is_end_state; its cases
    // (LAUNCH_FAILED, PREEMPTED, truncated sacct spellings, REQUEUED) are
    // tested there, once.

    #[test]
    fn nodes_and_hostlists() {
        let t = "NodeName=n1 Arch=x86_64 State=IDLE\nNodeName=n2 Arch=x86_64\n\n";
        assert_eq!(parse_node_names(t), ["n1", "n2"]);
        assert_eq!(
            expand_hostlist("n[1-3],gpu01").unwrap(),
            ["n1", "n2", "n3", "gpu01"]
        );
        assert_eq!(expand_hostlist("a[01-02,5]").unwrap(), ["a01", "a02", "a5"]);
        assert_eq!(expand_hostlist("").unwrap(), Vec::<String>::new());
    }
}
