//! From squeue/sacct/scontrol answers to one observation per job.
//!
//! The rules (docs/design.md, "State vocabulary"):
//!
//! * squeue is the controller's current view and knows a job at once;
//!   sacct lags seconds behind sbatch but remembers a job after squeue
//!   forgets it (MinJobAge). squeue's row wins when there is one (its exit
//!   code, which squeue cannot print, comes from sacct's row); else sacct's;
//!   else, on a cluster without accounting, `scontrol show job`'s.
//! * A failed query is not a job state: when the command that could have
//!   answered for a job failed, the job gets an error and keeps its state.
//!   Only when squeue *and* sacct (or scontrol) answered and neither knows
//!   the id is it UNKNOWN.
//! * Requeued jobs keep their Slurm id: the current attempt is the row with
//!   the latest submit time (sacct `--duplicates` prints old attempts too).
//!   RUNNING followed by PENDING, or a higher restart count, is a requeue.
//!   With requeue on, NODE_FAIL (and the launch failures) are
//!   provisional while the controller still holds the job: PENDING, not a
//!   final state, until it is requeued or forgotten.
//! * Array elements (`123_4`) and het components (`123+0`) are matched by
//!   their own id; a job line naming the base id of several components gets
//!   their combined state (any live component keeps it live).
//! * COMPLETED needs the job's own verdict (see [`crate::status`]).

use std::collections::HashMap;

use tao_core::State;

use crate::native::{map_state, Mapped};
use crate::parse::{Issue, Parsed, Row, Source};

/// A Slurm job reference from a job line: `123`, `123_4`, `123+0`, with an
/// optional cluster (`123;cluster` as `sbatch --parsable` prints it on
/// multi-cluster setups, or `slurm.cluster`).
#[derive(Debug, Clone, PartialEq, Eq, Hash)]
pub struct JobRef {
    /// The job id, without the cluster.
    pub job_id: String,
    /// The cluster for `-M`, if any.
    pub cluster: Option<String>,
}

impl JobRef {
    /// Parse `123`, `123_4`, `123+0`, `123;cluster`. `None` when the id is
    /// not of that shape (it would otherwise reach a remote command line).
    pub fn parse(text: &str, cluster: Option<&str>) -> Option<JobRef> {
        let (id, cl) = match text.trim().split_once(';') {
            Some((i, c)) => (i, Some(c.to_string())),
            None => (text.trim(), cluster.map(str::to_string)),
        };
        let ok_id = {
            let (base, rest) = match id.find(['_', '+']) {
                Some(i) => (&id[..i], &id[i + 1..]),
                None => (id, "0"),
            };
            !base.is_empty()
                && base.len() <= 20
                && base.bytes().all(|b| b.is_ascii_digit())
                && !rest.is_empty()
                && rest.len() <= 10
                && rest.bytes().all(|b| b.is_ascii_digit())
        };
        let ok_cluster = cl.as_deref().is_none_or(|c| {
            !c.is_empty()
                && c.len() <= 64
                && c.bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_')
        });
        (ok_id && ok_cluster).then(|| JobRef {
            job_id: id.to_string(),
            cluster: cl.filter(|c| !c.is_empty()),
        })
    }
}

/// Why a query gave no definite answer.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct QueryFailure {
    /// `tempfail`, `unavailable`, `unsupported`, `no_accounting`, `protocol`, `noperm`, `replay`.
    pub code: String,
    /// One line, naming the command and what it said.
    pub message: String,
}

/// One command's answer for a set of jobs: the parsed rows, plus failures
/// (a failure with `ids: None` covers every job asked about).
#[derive(Debug, Clone, Default)]
pub struct Answer {
    /// Rows and unreadable lines.
    pub parsed: Parsed,
    /// Failed chunks: the job ids they covered (None: all) and why.
    pub failures: Vec<(Option<Vec<String>>, QueryFailure)>,
    /// Index: id (shown or raw) -> row positions.
    exact: HashMap<String, Vec<usize>>,
    /// Index: base id of a component (`123` of `123_4`, `123+0`) -> row positions.
    components: HashMap<String, Vec<usize>>,
}

impl Answer {
    /// An answer made of parsed output.
    pub fn from_parsed(parsed: Parsed) -> Self {
        let mut a = Answer {
            parsed,
            ..Default::default()
        };
        a.reindex();
        a
    }

    /// A failed query covering every job.
    pub fn failed(f: QueryFailure) -> Self {
        Answer {
            failures: vec![(None, f)],
            ..Default::default()
        }
    }

    /// Add another chunk's rows (or failure) to this answer.
    pub fn merge(&mut self, other: Answer) {
        // Into an empty answer (the first chunk, one login host's usual
        // case): `other` is indexed already.
        if self.parsed.rows.is_empty() && self.parsed.issues.is_empty() && self.failures.is_empty()
        {
            *self = other;
            return;
        }
        // The rows before `other`'s keep their positions: only the new
        // ones are indexed (10,000 ids are two chunks).
        let from = self.parsed.rows.len();
        self.parsed.rows.extend(other.parsed.rows);
        self.parsed.issues.extend(other.parsed.issues);
        self.failures.extend(other.failures);
        self.index_from(from);
    }

    fn reindex(&mut self) {
        self.exact.clear();
        self.components.clear();
        self.index_from(0);
    }

    /// Add rows `from..` to the indexes (in row order, as [`Self::reindex`]).
    fn index_from(&mut self, from: usize) {
        for (i, r) in self.parsed.rows.iter().enumerate().skip(from) {
            self.exact.entry(r.job_id.clone()).or_default().push(i);
            if let Some(raw) = &r.raw_id {
                if raw != &r.job_id {
                    self.exact.entry(raw.clone()).or_default().push(i);
                }
            }
            if let Some(p) = r.job_id.find(['_', '+']) {
                self.components
                    .entry(r.job_id[..p].to_string())
                    .or_default()
                    .push(i);
            }
        }
    }

    /// The failure that covers `job_id`, if its query failed.
    pub fn failure_for(&self, job_id: &str) -> Option<&QueryFailure> {
        self.failures
            .iter()
            .find(|(ids, _)| {
                ids.as_ref()
                    .is_none_or(|ids| ids.iter().any(|i| i == job_id))
            })
            .map(|(_, f)| f)
    }

    /// Whether this query failed as a whole because accounting is off.
    pub fn no_accounting(&self) -> bool {
        self.failures.iter().any(|(_, f)| f.code == "no_accounting")
    }

    /// Rows for `job_id`: its own (exact id or raw id), else its components.
    pub fn rows_for(&self, job_id: &str) -> Vec<&Row> {
        // The shown id first (`5_3`), then the components of a base id
        // (array `5` -> `5_1`, `5_2`, ...; het `6` -> `6+0`, `6+1`), then a
        // raw id (`9`, which Slurm also gives the last array element).
        let shown = self.exact.get(job_id).map(|v| {
            v.iter()
                .copied()
                .filter(|i| self.parsed.rows[*i].job_id == job_id)
                .collect::<Vec<_>>()
        });
        let idx = shown
            .as_ref()
            .filter(|v| !v.is_empty())
            .or_else(|| self.components.get(job_id).filter(|v| !v.is_empty()))
            .or_else(|| self.exact.get(job_id));
        let mut seen = std::collections::HashSet::new();
        idx.map(|v| {
            v.iter()
                .filter(|i| seen.insert(**i))
                .map(|i| &self.parsed.rows[*i])
                .collect()
        })
        .unwrap_or_default()
    }

    /// Unreadable lines that name `job_id`.
    pub fn issues_for(&self, job_id: &str) -> Vec<&Issue> {
        self.parsed
            .issues
            .iter()
            .filter(|i| {
                i.job_id.as_deref().is_some_and(|j| {
                    j == job_id
                        || j.starts_with(&format!("{job_id}_"))
                        || j.starts_with(&format!("{job_id}+"))
                })
            })
            .collect()
    }
}

/// What the job line said before this poll.
#[derive(Debug, Clone, Default)]
pub struct Previous {
    /// `state`.
    pub state: Option<State>,
    /// `slurm.native_state`.
    pub native: Option<String>,
    /// `slurm.restart_count`.
    pub restart_count: Option<u32>,
}

/// An observation of one job.
#[derive(Debug, Clone, PartialEq)]
pub struct Observation {
    /// The vocabulary state (for COMPLETED: before the verdict).
    pub state: State,
    /// `message`: native sub-state and why.
    pub message: String,
    /// Canonical native state (or the raw text when unknown).
    pub native_state: String,
    /// The row the observation was made from (for components: the leading one).
    pub row: Row,
    /// COMPLETED: the job's own status must decide COMPLETE or ERROR.
    pub needs_verdict: bool,
    /// Provisional: a requeueable failure the controller may still requeue.
    pub provisional: bool,
    /// The job went from running back to pending, or its restart count grew.
    pub requeued: bool,
}

/// The result for one job.
#[derive(Debug, Clone, PartialEq)]
pub enum Outcome {
    /// A definite answer.
    Observed(Box<Observation>),
    /// Neither command knows the id (both answered).
    NotFound {
        /// Why: which commands were asked.
        message: String,
    },
    /// No definite answer: the line keeps its state and gets `error`.
    Failed(QueryFailure),
}

/// Choose the current attempt among duplicate rows: the latest submit time,
/// ties to the later line.
fn current<'a>(rows: &[&'a Row]) -> &'a Row {
    rows.iter()
        .copied()
        .max_by(|a, b| {
            a.submit_time
                .cmp(&b.submit_time)
                .then(a.line_no.cmp(&b.line_no))
        })
        .expect("non-empty")
}

/// Rank for picking a component that represents several: live first.
fn live_rank(s: State) -> u8 {
    match s {
        State::Running => 0,
        State::Pending => 1,
        State::Unknown => 2,
        State::Error => 3,
        State::Canceled => 4,
        State::Complete => 5,
    }
}

/// Group component rows by their own id and keep each one's current attempt.
fn pick(rows: Vec<&Row>, job_id: &str) -> (Row, Option<String>) {
    let all_components = rows.iter().all(|r| {
        r.job_id != job_id
            && r.job_id.starts_with(job_id)
            && r.job_id[job_id.len()..].starts_with(['_', '+'])
    });
    let exact: Vec<&Row> = if all_components && rows.len() > 1 {
        Vec::new()
    } else {
        rows.iter()
            .copied()
            .filter(|r| r.job_id == job_id || r.raw_id.as_deref() == Some(job_id))
            .collect()
    };
    if !exact.is_empty() {
        return (current(&exact).clone(), None);
    }
    let mut by_id: Vec<(&str, Vec<&Row>)> = Vec::new();
    for r in rows {
        match by_id.iter_mut().find(|(k, _)| *k == r.job_id) {
            Some((_, v)) => v.push(r),
            None => by_id.push((&r.job_id, vec![r])),
        }
    }
    let comps: Vec<&Row> = by_id.iter().map(|(_, v)| current(v)).collect();
    let mapped: Vec<(State, &Row)> = comps
        .iter()
        .map(|r| (map_state(&r.state).state, *r))
        .collect();
    let lead = mapped
        .iter()
        .min_by_key(|(s, _)| live_rank(*s))
        .map(|(_, r)| (*r).clone())
        .expect("non-empty");
    let mut counts: Vec<(String, usize)> = Vec::new();
    for r in &comps {
        let n = map_state(&r.state).name;
        match counts.iter_mut().find(|(k, _)| *k == n) {
            Some((_, c)) => *c += 1,
            None => counts.push((n, 1)),
        }
    }
    let summary = counts
        .iter()
        .map(|(n, c)| format!("{c} {n}"))
        .collect::<Vec<_>>()
        .join(", ");
    (
        lead,
        Some(format!(
            "{} component{}: {summary}",
            comps.len(),
            if comps.len() == 1 { "" } else { "s" }
        )),
    )
}

/// Reasons that add nothing to a final state's message.
fn reason_is_noise(r: &str) -> bool {
    matches!(r, "None" | "NonZeroExitCode" | "(null)")
}

/// What to do about a pending reason that means the job will never start
/// as submitted (it stays PENDING in Slurm until someone acts); `None` for
/// reasons that pass with time (Priority, Resources, Dependency, ...).
/// The one table is [`crate::reasons`].
pub fn never_starts_hint(reason: &str) -> Option<String> {
    crate::reasons::explain(reason).and_then(|e| e.action)
}

/// Build the message: `PENDING (Priority)`, `SUSPENDED`, `FAILED exit 1:0`,
/// `CANCELLED by 0`, `RUNNING, restart 1`.
pub fn message_for(m: &Mapped, row: &Row) -> String {
    let mut msg = if m.known {
        m.name.clone()
    } else if row.state.trim().is_empty() {
        // A row with an empty State cell (sacct prints one for a job whose
        // accounting record lacks a state): that job is UNKNOWN, the rest
        // of the reply is read as usual.
        format!(
            "{} printed an empty state for this job",
            row.source.map_or("slurm", |s| s.as_str())
        )
    } else {
        format!("unrecognised Slurm state {:?}", row.state)
    };
    if let Some(a) = &m.annotation {
        msg.push(' ');
        msg.push_str(a);
    }
    let live = !m.state.is_final() || !m.known;
    // A finished job's reason is its last pending reason (JobHeldUser...):
    // noise in the message; it stays in slurm.reason.
    if let Some(r) = &row.reason {
        if live && !reason_is_noise(r) {
            msg.push_str(&format!(" ({r})"));
            if m.state == State::Pending {
                if let Some(hint) = never_starts_hint(r) {
                    msg.push_str(&format!(": {}", hint.replace("JOBID", &row.job_id)));
                }
            }
        }
    }
    if !live || m.name == "COMPLETING" {
        if let Some(e) = &row.exit_code {
            msg.push_str(&format!(" exit {e}"));
        }
    }
    if let Some(n) = row.restart_count.filter(|n| *n > 0) {
        msg.push_str(&format!(", restart {n}"));
    }
    msg
}

/// Decide one job from the answers. `requeue` says whether the job may be
/// requeued by Slurm (resources.requeue / SLURM_USE_REQUEUE).
pub fn resolve(
    jref: &JobRef,
    prev: &Previous,
    requeue: bool,
    squeue: &Answer,
    sacct: &Answer,
    scontrol: Option<&Answer>,
) -> Outcome {
    let id = jref.job_id.as_str();
    let sq_rows = squeue.rows_for(id);
    let sa_rows = sacct.rows_for(id);
    let sc_rows = scontrol.map(|a| a.rows_for(id)).unwrap_or_default();
    let (mut row, summary) = if !sq_rows.is_empty() {
        let (mut r, s) = pick(sq_rows, id);
        // squeue cannot print an exit code: take sacct's for the same attempt.
        let extra = if !sa_rows.is_empty() {
            Some(pick(sa_rows, id).0)
        } else if !sc_rows.is_empty() {
            Some(pick(sc_rows, id).0)
        } else {
            None
        };
        if let Some(x) = extra {
            // Slurm 24.11's `sacct -X` prints a het job as one row under
            // the leader's own id (`20`), where 22.05 prints each
            // component (`20+0`, `20+1`) as squeue does: that row speaks
            // for the components' lead (replays slurm-24.11-capture).
            let het_whole = s.is_some()
                && x.job_id == id
                && r.job_id
                    .strip_prefix(id)
                    .is_some_and(|t| t.starts_with('+'));
            if (x.job_id == r.job_id || het_whole)
                && (x.submit_time == r.submit_time
                    || x.submit_time.is_none()
                    || r.submit_time.is_none())
            {
                // Only sacct annotates (`CANCELLED by 0`): keep its words
                // when both name the same state.
                let (mr, mx) = (map_state(&r.state), map_state(&x.state));
                if mr.name == mx.name && mr.annotation.is_none() && mx.annotation.is_some() {
                    r.state = x.state.clone();
                }
                // Accounting lags squeue: a sacct row still RUNNING (0:0)
                // for a job squeue shows ended says nothing of its exit.
                if mr.name == mx.name || (mx.state.is_final() && !mr.state.is_final()) {
                    r.exit_code = r.exit_code.or(x.exit_code);
                }
                r.restart_count = r.restart_count.or(x.restart_count);
            }
        }
        (r, s)
    } else if !sa_rows.is_empty() {
        pick(sa_rows, id)
    } else if !sc_rows.is_empty() {
        pick(sc_rows, id)
    } else {
        // Nobody listed it: only a definite "no" from both sides is UNKNOWN.
        if let Some(f) = squeue.failure_for(id) {
            return Outcome::Failed(f.clone());
        }
        let second = if sacct.no_accounting() {
            scontrol
        } else {
            Some(sacct)
        };
        match second {
            Some(a) => {
                if let Some(f) = a.failure_for(id) {
                    return Outcome::Failed(f.clone());
                }
            }
            None => {
                return Outcome::Failed(sacct.failure_for(id).cloned().unwrap_or(QueryFailure {
                    code: "tempfail".into(),
                    message: "sacct gave no answer".into(),
                }))
            }
        }
        // An unreadable row naming this job is not "unknown": report it.
        let issues: Vec<&Issue> = squeue
            .issues_for(id)
            .into_iter()
            .chain(sacct.issues_for(id))
            .chain(scontrol.map(|a| a.issues_for(id)).unwrap_or_default())
            .collect();
        if let Some(i) = issues.first() {
            return Outcome::Failed(QueryFailure {
                code: "protocol".into(),
                message: format!("unreadable scheduler reply: {}", i.describe()),
            });
        }
        let asked = if sacct.no_accounting() {
            "squeue or scontrol (no accounting: finished jobs are forgotten after MinJobAge)"
        } else {
            "squeue or sacct"
        };
        return Outcome::NotFound {
            message: format!("job {id} is not known to {asked}"),
        };
    };
    if row.source.is_none() {
        row.source = Some(Source::Squeue);
    }
    let m = map_state(&row.state);
    let mut message = message_for(&m, &row);
    if let Some(s) = &summary {
        message.push_str(&format!("; {s}"));
    }
    let mut state = m.state;
    let native_state = m.name.clone();
    let from_controller = matches!(row.source, Some(Source::Squeue) | Some(Source::Scontrol));
    let provisional = m.known && m.requeueable && requeue && from_controller;
    if provisional {
        state = State::Pending;
        message.push_str(" (provisional: requeue is on, Slurm may requeue the job)");
    }
    let was_running = prev.state == Some(State::Running)
        || prev
            .native
            .as_deref()
            .is_some_and(|n| map_state(n).state == State::Running);
    let restarted = matches!((prev.restart_count, row.restart_count), (Some(a), Some(b)) if b > a);
    let requeued = (was_running && state == State::Pending) || restarted || m.name == "REQUEUED";
    if requeued && m.name != "REQUEUED" {
        message.push_str(" (requeued)");
    }
    Outcome::Observed(Box::new(Observation {
        state,
        message,
        native_state,
        needs_verdict: m.known && m.name == "COMPLETED",
        provisional,
        requeued,
        row,
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::parse::{parse_sacct, parse_squeue};

    fn sq(text: &str) -> Answer {
        Answer::from_parsed(parse_squeue(text))
    }
    fn sa(text: &str) -> Answer {
        Answer::from_parsed(parse_sacct(text))
    }
    fn r(id: &str) -> JobRef {
        JobRef::parse(id, None).unwrap()
    }
    fn obs(o: Outcome) -> Observation {
        match o {
            Outcome::Observed(o) => *o,
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn job_refs() {
        assert_eq!(r("123;c1").cluster.as_deref(), Some("c1"));
        assert_eq!(r("123_4").job_id, "123_4");
        assert_eq!(r("123+0").job_id, "123+0");
        for bad in ["", "abc", "1;a b", "1 2", "1_", "$(x)", "1;"] {
            assert_eq!(JobRef::parse(bad, None), None, "{bad:?}");
        }
    }

    #[test]
    fn a_lagging_sacct_row_lends_no_exit_code() {
        let o = obs(resolve(
            &r("4"),
            &Previous::default(),
            true,
            &sq("4|4|FAILED|n1|100|100|101|0:01|0|NonZeroExitCode|\n"),
            &sa("4|4|RUNNING|0:0|n1|100|100|Unknown|00:00:01|None\n"),
            None,
        ));
        assert_eq!((o.state, o.message.as_str()), (State::Error, "FAILED"));
    }

    #[test]
    fn squeue_wins_and_takes_sacct_exit_code() {
        let o = obs(resolve(
            &r("4"),
            &Previous::default(),
            true,
            &sq("4|4|FAILED|n1|100|100|101|0:01|0|NonZeroExitCode|\n"),
            &sa("4|4|FAILED|3:0|n1|100|100|101|00:00:01|None\n"),
            None,
        ));
        assert_eq!(
            (o.state, o.message.as_str()),
            (State::Error, "FAILED exit 3:0")
        );
    }

    #[test]
    fn sacct_lag_after_submit_is_not_unknown() {
        let o = obs(resolve(
            &r("9"),
            &Previous::default(),
            true,
            &sq("9|9|PENDING||100|N/A|N/A|0:00|0|Priority|\n"),
            &sa(""),
            None,
        ));
        assert_eq!(
            (o.state, o.message.as_str()),
            (State::Pending, "PENDING (Priority)")
        );
    }

    #[test]
    fn a_reason_that_never_passes_says_what_to_do() {
        let o = obs(resolve(
            &r("9"),
            &Previous::default(),
            true,
            &sq("9|9|PENDING||100|N/A|N/A|0:00|0|BadConstraints|\n"),
            &sa(""),
            None,
        ));
        assert_eq!(o.state, State::Pending);
        assert!(
            o.message
                .starts_with("PENDING (BadConstraints): it can never start as asked"),
            "{}",
            o.message
        );
        assert!(never_starts_hint("Priority").is_none());
        assert!(never_starts_hint("Resources").is_none());
    }

    #[test]
    fn unknown_to_both_and_failed_queries() {
        let none = resolve(&r("77"), &Previous::default(), true, &sq(""), &sa(""), None);
        assert!(matches!(none, Outcome::NotFound { .. }), "{none:?}");
        let f = QueryFailure {
            code: "tempfail".into(),
            message: "sacct: error: Socket timed out".into(),
        };
        let out = resolve(
            &r("77"),
            &Previous::default(),
            true,
            &sq(""),
            &Answer::failed(f.clone()),
            None,
        );
        assert_eq!(out, Outcome::Failed(f));
        // sacct's definite answer stands even when squeue failed.
        let o = obs(resolve(
            &r("5"),
            &Previous::default(),
            true,
            &Answer::failed(QueryFailure {
                code: "tempfail".into(),
                message: "x".into(),
            }),
            &sa("5|5|TIMEOUT|0:0|n1|1|2|3|00:01:00|TimeLimit\n"),
            None,
        ));
        assert_eq!(
            (o.state, o.message.as_str()),
            (State::Error, "TIMEOUT exit 0:0")
        );
    }

    #[test]
    fn duplicates_take_the_current_attempt() {
        let o = obs(resolve(
            &r("8"),
            &Previous::default(),
            true,
            &sq(""),
            &sa("8|8|NODE_FAIL|0:0|n1|100|101|102|00:00:01|None\n8|8|COMPLETED|0:0|n2|200|201|202|00:00:01|None\n"),
            None,
        ));
        assert_eq!(o.native_state, "COMPLETED");
        assert!(o.needs_verdict);
    }

    #[test]
    fn node_fail_is_provisional_only_with_requeue_in_the_controller() {
        let q = sq("8|8|NODE_FAIL|n1|1|2|3|0:01|0|None|\n");
        let o = obs(resolve(
            &r("8"),
            &Previous::default(),
            true,
            &q,
            &sa(""),
            None,
        ));
        assert_eq!(o.state, State::Pending);
        assert!(o.provisional);
        let o = obs(resolve(
            &r("8"),
            &Previous::default(),
            false,
            &q,
            &sa(""),
            None,
        ));
        assert_eq!(o.state, State::Error);
        let o = obs(resolve(
            &r("8"),
            &Previous::default(),
            true,
            &sq(""),
            &sa("8|8|NODE_FAIL|0:0|n1|1|2|3|00:00:01|None\n"),
            None,
        ));
        assert_eq!(o.state, State::Error);
    }

    #[test]
    fn running_to_pending_is_a_requeue() {
        let prev = Previous {
            state: Some(State::Running),
            native: Some("RUNNING".into()),
            restart_count: Some(0),
        };
        let o = obs(resolve(
            &r("8"),
            &prev,
            true,
            &sq("8|8|PENDING||300|N/A|N/A|0:00|1|BeginTime|\n"),
            &sa(""),
            None,
        ));
        assert!(o.requeued);
        assert_eq!(o.message, "PENDING (BeginTime), restart 1 (requeued)");
    }

    #[test]
    fn het_job_as_one_sacct_row_slurm_24_11() {
        // Slurm 24.11: squeue lists the components, sacct -X one row
        // under the leader's id; 22.05's sacct lists the components too.
        let q = sq("20+0|20|CANCELLED||1|2|2|0:00|0|JobHeldUser|\n20+1|21|CANCELLED||1|2|2|0:00|0|JobHeldUser|\n");
        for sacct in [
            "20|20|CANCELLED by 0|0:0|None assigned|1|None|2|00:00:00|None\n",
            "20|20+0|CANCELLED by 0|0:0|None assigned|1|None|2|00:00:00|None\n21|20+1|CANCELLED by 0|0:0|None assigned|1|None|2|00:00:00|None\n",
        ] {
            let o = obs(resolve(&r("20"), &Previous::default(), true, &q, &sa(sacct), None));
            assert_eq!(o.state, State::Canceled);
            assert_eq!(
                o.message, "CANCELLED by 0 exit 0:0; 2 components: 2 CANCELLED",
                "sacct {sacct:?}"
            );
        }
    }

    #[test]
    fn components_combine() {
        let q =
            sq("5_1|8|COMPLETED|n1|1|2|3|0:01|0|None|\n5_2|9|RUNNING|n1|1|2|N/A|0:01|0|None|\n");
        let o = obs(resolve(
            &r("5"),
            &Previous::default(),
            true,
            &q,
            &sa(""),
            None,
        ));
        assert_eq!(o.state, State::Running);
        assert!(
            o.message
                .ends_with("; 2 components: 1 COMPLETED, 1 RUNNING"),
            "{}",
            o.message
        );
        let o = obs(resolve(
            &r("5_1"),
            &Previous::default(),
            true,
            &q,
            &sa(""),
            None,
        ));
        assert_eq!(o.native_state, "COMPLETED");
        // Raw id of an element.
        let o = obs(resolve(
            &r("9"),
            &Previous::default(),
            true,
            &q,
            &sa(""),
            None,
        ));
        assert_eq!(o.row.job_id, "5_2");
    }

    #[test]
    fn unreadable_row_for_the_job_is_an_error_not_unknown() {
        let out = resolve(
            &r("42"),
            &Previous::default(),
            true,
            &sq(""),
            &sa("42|42|RUNNING\n"),
            None,
        );
        match out {
            Outcome::Failed(f) => assert_eq!(f.code, "protocol"),
            other => panic!("{other:?}"),
        }
    }
}
