//! The retry policy: from a job's native Slurm state, the best evidence
//! line and its attempt number to a [`Classification`].
//!
//! The policy (docs/design.md, "Retry policy"):
//! - NODE_FAIL and BOOT_FAIL are infra whatever the log says.
//! - FAILED, OUT_OF_MEMORY, DEADLINE (and COMPLETED that the job's own
//!   status called a failure, SPECIAL_EXIT) are decided by the evidence:
//!   an infra rule means retry, a program rule means surface at once.
//! - A job that wrote no log at all (evidence present but empty) is a
//!   launch failure: infra, unless the scheduler's reason names the user's
//!   own request (a program rule matches `slurm.reason`/`message`).
//! - TIMEOUT is the scheduler's: no retry, suggest a longer partition or a
//!   resume from the last checkpoint.
//! - CANCELLED / PREEMPTED / REVOKED are not failures. tao-poll maps them
//!   to CANCELED, and tao-classify passes non-ERROR lines through
//!   untouched; should one arrive as ERROR anyway it is classed
//!   `scheduler`, never retried.
//! - Except: for TIMEOUT, CANCELLED, PREEMPTED and REVOKED the log is read
//!   first. Specific hardware, network and runtime evidence (an infra rule
//!   of priority [`SPECIFIC_INFRA_PRIORITY`] or more: GPU hardware, node,
//!   fabric, runtime, shared filesystem, cloud reclaim, or a Slurm banner
//!   naming a node failure) outranks the state, which is the consequence
//!   (issue 14: such evidence outranks Slurm's cancellation banners; the
//!   first cause in time outranks its consequences). The job is then
//!   classified by that line (infra, retried). A TIMEOUT whose log shows
//!   the program's own specific error first (priority
//!   [`SPECIFIC_PROGRAM_PRIORITY`] or more: a CUDA OOM, a bad spec, a
//!   missing dataset; not a generic exception line) is the program's: the
//!   job hung on its own fault until the limit (not retried either way).
//! - A log that matches no rule at all is the program's to look at
//!   (class `program`, rule `evidence.no_match`): surfaced at once, never
//!   retried, UNLESS the evidence fallback ([`crate::fallback`]) scores the
//!   log's excerpt as the cluster's fault above its cross-validated
//!   threshold: then infra, rule `fallback`, retried. Either way the score
//!   is shown (`classification.fallback`). Only a job with no evidence at
//!   all is `unknown`.
//! - Program faults are never retried; an infra fault is retried only while
//!   `attempt < max_attempts`.

use crate::catalogue::{Catalogue, Class};
use crate::scan::{clean_text, Hit};

/// The lowest priority of the "specific hardware, network and runtime"
/// bands of `rules/builtin.toml`'s precedence (node, network and runtime
/// 86-94, GPU hardware 95-99, Slurm's node-failure banner 100): an infra
/// line at or above it decides even when the native state is TIMEOUT,
/// CANCELLED, PREEMPTED or REVOKED.
pub const SPECIFIC_INFRA_PRIORITY: u8 = 86;

/// The lowest priority of the program's own specific errors in
/// `rules/builtin.toml`'s precedence (75-89): such a line decides a TIMEOUT
/// (the job hung on its own fault until the limit), never a cancellation.
pub const SPECIFIC_PROGRAM_PRIORITY: u8 = 75;

/// Default for `--max-attempts`: the project's retry budget
/// ([`tao_core::DEFAULT_MAX_ATTEMPTS`], a first try plus nine retries), the
/// same as `tao-record retry`'s.
pub const DEFAULT_MAX_ATTEMPTS: u32 = tao_core::DEFAULT_MAX_ATTEMPTS;

/// The evidence line that decided, as written to `classification.evidence`.
#[derive(Debug, Clone, PartialEq, Eq, serde::Serialize)]
pub struct EvidenceRef {
    /// `"out"`, `"err"` (tails from tao-poll), the `--log` path, or `"slurm.reason"`/`"message"`.
    pub file: String,
    /// 1-based line number in that file.
    pub line: u64,
    /// The line, redacted, at most 400 bytes.
    pub text: String,
}

/// The `classification` object a job line gets.
#[derive(Debug, Clone, PartialEq, serde::Serialize)]
pub struct Classification {
    /// Who is at fault.
    pub class: Class,
    /// Short snake_case name of the fault (`"gpu_lost"`, `"cuda_oom"`, `"time_limit"`, ...).
    pub subclass: String,
    /// The rule id that decided: a catalogue id (`"xid.hardware"`) or a state rule (`"state.node_fail"`).
    pub rule: String,
    /// The deciding line, if one did.
    pub evidence: Option<EvidenceRef>,
    /// The node the evidence (or, for an infra fault on a one-node job, `slurm.nodes`) blames.
    pub node: Option<String>,
    /// Whether a retry record should be opened (`tao-record open --retry-of`).
    pub retry: bool,
    /// One line for the user: why, and what to do.
    pub reason: String,
    /// The evidence fallback's score, when it was consulted (no rule
    /// matched); absent otherwise.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub fallback: Option<FallbackScore>,
}

/// `classification.fallback`: what the text classifier said about a log no
/// rule matched.
#[derive(Debug, Clone, Copy, PartialEq, serde::Serialize)]
pub struct FallbackScore {
    /// Its probability (0..1, rounded to 3 decimals) that the log shows the cluster's fault.
    pub score: f64,
    /// Its threshold: only a score above it is called infra (and retried).
    pub threshold: f64,
}

/// The fallback's verdict as [`decide`] gets it.
#[derive(Debug, Clone, PartialEq)]
pub struct FallbackFacts {
    /// Probability (0..1) of "the cluster's fault".
    pub score: f64,
    /// Scores strictly above it are infra.
    pub threshold: f64,
    /// The line weighing most towards infra: file, 1-based line number (0:
    /// a line of a `--log` file's tail, number not counted), raw text (redacted).
    pub line: Option<(String, u64, Vec<u8>)>,
}

/// How much evidence the job line (or `--log`) gave.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum EvidenceKind {
    /// No `evidence` field and no `--log`: nothing to judge by.
    Absent,
    /// Evidence was collected but every file was empty or missing: the job wrote no log.
    Empty,
    /// At least one non-empty line.
    Lines,
}

/// Everything [`decide`] looks at.
#[derive(Debug, Clone)]
pub struct Facts<'a> {
    /// `slurm.native_state` as sacct/squeue printed it (`"FAILED"`, `"CANCELLED by 0"`, `"NODE_FAIL"`).
    pub native_state: &'a str,
    /// `slurm.exit_code` (`"1:0"`), if known.
    pub exit_code: Option<&'a str>,
    /// `slurm.nodes` (`"n1"`, `"n[1-2]"`), if known.
    pub nodes: Option<&'a str>,
    /// `resources.time` (`"04:00:00"`), if known (used in the TIMEOUT advice).
    pub time_limit: Option<&'a str>,
    /// `attempt` (1 for a first try).
    pub attempt: u32,
    /// `--max-attempts`.
    pub max_attempts: u32,
    /// How much evidence there was.
    pub evidence: EvidenceKind,
    /// The best line of the logs, if any rule matched.
    pub best: Option<Hit>,
    /// The best match in `slurm.reason` / `message` (used for launch failures).
    pub reason_hit: Option<Hit>,
    /// The evidence fallback's verdict, when no rule matched ([`crate::fallback`]).
    pub fallback: Option<FallbackFacts>,
}

/// Whether a native state is one the evidence decides (FAILED and the
/// like), so the fallback could matter; false for NODE_FAIL, BOOT_FAIL,
/// TIMEOUT, CANCELLED, PREEMPTED, REVOKED (the state decides) and
/// OUT_OF_MEMORY, DEADLINE (their own default when no rule matches).
pub fn evidence_decides_state(native: &str) -> bool {
    !matches!(
        base_state(native).as_str(),
        "NODE_FAIL"
            | "BOOT_FAIL"
            | "TIMEOUT"
            | "CANCELLED"
            | "PREEMPTED"
            | "REVOKED"
            | "OUT_OF_MEMORY"
            | "DEADLINE"
    )
}

/// The native state's base name: first word, `+` stripped, squeue's short
/// codes expanded (`"CANCELLED by 0"` -> `"CANCELLED"`, `"NF"` -> `"NODE_FAIL"`).
pub fn base_state(native: &str) -> String {
    let word = native.split_whitespace().next().unwrap_or("");
    let word = word.trim_end_matches('+').to_ascii_uppercase();
    let long = match word.as_str() {
        "F" => "FAILED",
        "NF" => "NODE_FAIL",
        "BF" => "BOOT_FAIL",
        "TO" => "TIMEOUT",
        "OOM" => "OUT_OF_MEMORY",
        "DL" => "DEADLINE",
        "CA" => "CANCELLED",
        "PR" => "PREEMPTED",
        "RV" => "REVOKED",
        "CD" => "COMPLETED",
        "SE" => "SPECIAL_EXIT",
        other => other,
    };
    long.to_string()
}

/// A single node name from `slurm.nodes`, or `None` for a list/range (`"n[1-2]"`, `"n1,n2"`).
pub fn single_node(nodes: Option<&str>) -> Option<String> {
    let n = nodes?.trim();
    let ok = !n.is_empty()
        && n != "None"
        && n.chars()
            .all(|c| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.'));
    ok.then(|| n.to_string())
}

/// Decide the classification. Pure: no I/O. `cat` resolves hit rule indices.
pub fn decide(cat: &Catalogue, f: &Facts) -> Classification {
    let state = base_state(f.native_state);
    let hit_ev = |h: &Hit| EvidenceRef {
        file: h.file.clone(),
        line: h.line,
        text: clean_text(&h.raw),
    };
    let best_ev = f.best.as_ref().map(hit_ev);
    let best_node = f.best.as_ref().and_then(|h| h.node.clone());
    // When the state decides, the log's best line is shown only if it agrees
    // with the decision (a CUDA OOM line is no evidence for a NODE_FAIL).
    let agreeing = |class: Class| {
        f.best
            .as_ref()
            .filter(|h| cat.rules()[h.rule].spec.class == class)
            .map(|h| (hit_ev(h), h.node.clone()))
    };
    let specific_infra = f.best.as_ref().is_some_and(|h| {
        h.priority >= SPECIFIC_INFRA_PRIORITY && cat.rules()[h.rule].spec.class == Class::Infra
    });
    let specific_program = f.best.as_ref().is_some_and(|h| {
        h.priority >= SPECIFIC_PROGRAM_PRIORITY && cat.rules()[h.rule].spec.class == Class::Program
    });
    let mut c = match state.as_str() {
        "TIMEOUT" if specific_program => {
            let mut c = evidence_decides(cat, f, &state, best_ev, best_node);
            c.reason = format!(
                "Slurm reports TIMEOUT, but the log shows the program's own error first (the job hung on it until the limit): {}",
                c.reason
            );
            c
        }
        "TIMEOUT" | "CANCELLED" | "PREEMPTED" | "REVOKED" if specific_infra => {
            let mut c = evidence_decides(cat, f, &state, best_ev, best_node);
            c.reason = format!(
                "Slurm reports {state}, but the log names the cause first: {}",
                c.reason
            );
            c
        }
        "NODE_FAIL" | "BOOT_FAIL" => {
            let what = if state == "NODE_FAIL" { "a node of the job failed" } else { "a node failed to boot" };
            let (evidence, node) = agreeing(Class::Infra).unzip();
            Classification {
                class: Class::Infra,
                subclass: if state == "NODE_FAIL" { "node_failure" } else { "boot_failure" }.into(),
                rule: format!("state.{}", state.to_ascii_lowercase()),
                evidence,
                node: node.flatten().or_else(|| single_node(f.nodes)),
                retry: true,
                reason: format!("Slurm reports {state}: {what}; retry on another node"),
                fallback: None,
            }
        }
        "TIMEOUT" => {
            let limit = f.time_limit.map(|t| format!(" ({t})")).unwrap_or_default();
            Classification {
                class: Class::Scheduler,
                subclass: "time_limit".into(),
                rule: "state.timeout".into(),
                evidence: agreeing(Class::Scheduler).map(|(e, _)| e),
                node: None,
                retry: false,
                reason: format!(
                    "the job reached its time limit{limit}; not retried: ask for a longer time on a partition that allows it, or resume from the last checkpoint"
                ),
                fallback: None,
            }
        }
        "CANCELLED" | "PREEMPTED" | "REVOKED" => Classification {
            class: Class::Scheduler,
            subclass: state.to_ascii_lowercase(),
            rule: format!("state.{}", state.to_ascii_lowercase()),
            evidence: agreeing(Class::Scheduler).map(|(e, _)| e),
            node: None,
            retry: false,
            reason: format!(
                "{state} is not a failure; not retried (Slurm requeues preempted and failed-node jobs itself when --requeue is on)"
            ),
            fallback: None,
        },
        _ => evidence_decides(cat, f, &state, best_ev, best_node),
    };
    // Program faults never retry; infra retries only within the budget.
    if c.class != Class::Infra {
        c.retry = false;
    } else if c.retry && f.attempt >= f.max_attempts {
        c.retry = false;
        c.reason = format!(
            "retry budget exhausted (attempt {} of {})",
            f.attempt, f.max_attempts
        );
    }
    if c.retry {
        if let Some(node) = &c.node {
            c.reason.push_str(&format!(" (excluding {node})"));
        }
    }
    c
}

fn evidence_decides(
    cat: &Catalogue,
    f: &Facts,
    state: &str,
    best_ev: Option<EvidenceRef>,
    best_node: Option<String>,
) -> Classification {
    if let Some(hit) = &f.best {
        let rule = &cat.rules()[hit.rule].spec;
        let node = match rule.class {
            Class::Infra => best_node.or_else(|| single_node(f.nodes)),
            _ => best_node,
        };
        return Classification {
            class: rule.class,
            subclass: rule.subclass.clone(),
            rule: rule.id.clone(),
            evidence: best_ev,
            node,
            retry: rule.class == Class::Infra,
            reason: rule.reason.clone(),
            fallback: None,
        };
    }
    match (state, f.evidence) {
        ("OUT_OF_MEMORY", _) => Classification {
            class: Class::Program,
            subclass: "host_memory_limit".into(),
            rule: "state.out_of_memory".into(),
            evidence: None,
            node: None,
            retry: false,
            reason: "Slurm reports OUT_OF_MEMORY: the job used more host memory than it asked for (--mem); ask for more memory or lower the data-loader workers/batch size".into(),
            fallback: None,
        },
        ("DEADLINE", _) => Classification {
            class: Class::Scheduler,
            subclass: "deadline".into(),
            rule: "state.deadline".into(),
            evidence: None,
            node: None,
            retry: false,
            reason: "Slurm reports DEADLINE: the job reached its --deadline; not retried".into(),
            fallback: None,
        },
        (_, EvidenceKind::Empty) => launch_failure(cat, f),
        (_, EvidenceKind::Absent) => Classification {
            class: Class::Unknown,
            subclass: "no_evidence".into(),
            rule: "evidence.absent".into(),
            evidence: None,
            node: None,
            retry: false,
            reason: format!(
                "{state}{} and no evidence to judge by; not retried: run tao-poll with --evidence, or pass --log FILE",
                exit_suffix(f.exit_code)
            ),
            fallback: None,
        },
        (_, EvidenceKind::Lines) => {
            let score = f.fallback.as_ref().map(|v| FallbackScore {
                score: (v.score * 1000.0).round() / 1000.0,
                threshold: v.threshold,
            });
            if let Some(v) = f.fallback.as_ref().filter(|v| v.score > v.threshold) {
                return Classification {
                    class: Class::Infra,
                    subclass: "fallback_infra".into(),
                    rule: "fallback".into(),
                    evidence: v.line.as_ref().map(|(file, line, raw)| EvidenceRef {
                        file: file.clone(),
                        line: *line,
                        text: clean_text(raw),
                    }),
                    node: single_node(f.nodes),
                    retry: true,
                    reason: format!(
                        "{state}{}: no rule matched, but the fallback text classifier scores the log {:.3} as the cluster's fault, above its threshold {:.3} (cross-validated so no program fault of the corpus was retried); retry, and add a rule for this kind (--rules)",
                        exit_suffix(f.exit_code),
                        v.score,
                        v.threshold
                    ),
                    fallback: score,
                };
            }
            let below = f
                .fallback
                .as_ref()
                .map(|v| {
                    format!(
                        " (the fallback text classifier scores it {:.3} as the cluster's fault, not above its threshold {:.3})",
                        v.score, v.threshold
                    )
                })
                .unwrap_or_default();
            Classification {
                class: Class::Program,
                subclass: "unrecognised".into(),
                rule: "evidence.no_match".into(),
                evidence: None,
                node: None,
                retry: false,
                reason: format!(
                    "{state}{} and no rule matched the log: the program's to look at, not retried{below}: read the log (a site can add rules with --rules)",
                    exit_suffix(f.exit_code)
                ),
                fallback: score,
            }
        }
    }
}

fn launch_failure(cat: &Catalogue, f: &Facts) -> Classification {
    if let Some(hit) = &f.reason_hit {
        let rule = &cat.rules()[hit.rule].spec;
        if rule.class == Class::Program {
            return Classification {
                class: Class::Program,
                subclass: rule.subclass.clone(),
                rule: rule.id.clone(),
                evidence: Some(EvidenceRef {
                    file: hit.file.clone(),
                    line: hit.line,
                    text: clean_text(&hit.raw),
                }),
                node: None,
                retry: false,
                reason: format!(
                    "the job wrote no log and the scheduler blames its request: {}",
                    rule.reason
                ),
                fallback: None,
            };
        }
    }
    Classification {
        class: Class::Infra,
        subclass: "launch_failure".into(),
        rule: "launch.no_log".into(),
        evidence: None,
        node: single_node(f.nodes),
        retry: true,
        reason: format!(
            "the job failed before writing any log{} (log directory missing or container never started); retry",
            exit_suffix(f.exit_code)
        ),
        fallback: None,
    }
}

fn exit_suffix(exit_code: Option<&str>) -> String {
    exit_code
        .map(|c| format!(" (exit code {c})"))
        .unwrap_or_default()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::scan::scan_lines;

    fn facts<'a>(state: &'a str, ev: EvidenceKind, best: Option<Hit>) -> Facts<'a> {
        Facts {
            native_state: state,
            exit_code: Some("1:0"),
            nodes: Some("n1"),
            time_limit: Some("04:00:00"),
            attempt: 1,
            max_attempts: 3,
            evidence: ev,
            best,
            reason_hit: None,
            fallback: None,
        }
    }

    fn hit(cat: &Catalogue, line: &str) -> Option<Hit> {
        scan_lines(cat, "err", 1, [line]).0
    }

    #[test]
    fn node_fail_is_infra_whatever_the_log_says() {
        let cat = Catalogue::builtin().unwrap();
        let h = hit(&cat, "torch.OutOfMemoryError: CUDA out of memory.");
        let c = decide(&cat, &facts("NODE_FAIL", EvidenceKind::Lines, h));
        assert_eq!(
            (c.class, c.retry, c.rule.as_str()),
            (Class::Infra, true, "state.node_fail")
        );
        assert_eq!(
            c.evidence, None,
            "a program line is no evidence for a node failure"
        );
        assert_eq!(c.node.as_deref(), Some("n1"));
        assert!(c.reason.ends_with("(excluding n1)"), "{}", c.reason);
        let h = hit(
            &cat,
            "slurmstepd: error: *** JOB 7 ON n3 CANCELLED AT 2026-11-29T10:00:00 DUE TO NODE FAILURE, SEE SLURMCTLD LOG FOR DETAILS ***",
        );
        let c = decide(&cat, &facts("NODE_FAIL", EvidenceKind::Lines, h));
        assert_eq!(
            (c.node.as_deref(), c.evidence.map(|e| e.line)),
            (Some("n3"), Some(1))
        );
        let c = decide(&cat, &facts("BOOT_FAIL", EvidenceKind::Absent, None));
        assert_eq!(
            (c.class, c.retry, c.subclass.as_str()),
            (Class::Infra, true, "boot_failure")
        );
    }

    #[test]
    fn failed_with_infra_evidence_retries_and_program_evidence_does_not() {
        let cat = Catalogue::builtin().unwrap();
        let h = hit(&cat, "Nov 29 10:00:01 n2 kernel: NVRM: Xid (PCI:0000:3b:00): 79, pid=7, GPU has fallen off the bus.");
        let c = decide(&cat, &facts("FAILED", EvidenceKind::Lines, h));
        assert_eq!(
            (c.class, c.retry, c.node.as_deref()),
            (Class::Infra, true, Some("n2"))
        );
        let h = hit(&cat, "KeyError: 'train_dataset'");
        let c = decide(&cat, &facts("FAILED", EvidenceKind::Lines, h));
        assert_eq!((c.class, c.retry), (Class::Program, false));
        assert_eq!(c.evidence.unwrap().line, 1);
    }

    #[test]
    fn out_of_memory_and_deadline_without_match() {
        let cat = Catalogue::builtin().unwrap();
        let c = decide(&cat, &facts("OUT_OF_MEMORY", EvidenceKind::Lines, None));
        assert_eq!(
            (c.class, c.retry, c.subclass.as_str()),
            (Class::Program, false, "host_memory_limit")
        );
        let c = decide(&cat, &facts("DEADLINE", EvidenceKind::Empty, None));
        assert_eq!((c.class, c.retry), (Class::Scheduler, false));
    }

    #[test]
    fn no_log_is_a_launch_failure_unless_the_reason_blames_the_request() {
        let cat = Catalogue::builtin().unwrap();
        let mut f = facts("FAILED", EvidenceKind::Empty, None);
        f.exit_code = Some("0:53");
        let c = decide(&cat, &f);
        assert_eq!(
            (c.class, c.retry, c.rule.as_str()),
            (Class::Infra, true, "launch.no_log")
        );
        assert!(c.reason.contains("0:53"));
        f.reason_hit = scan_lines(
            &cat,
            "slurm.reason",
            1,
            ["sbatch: error: Invalid account or account/partition combination specified"],
        )
        .0;
        let c = decide(&cat, &f);
        assert_eq!(
            (c.class, c.retry, c.rule.as_str()),
            (Class::Program, false, "slurm.bad_spec")
        );
    }

    #[test]
    fn absent_evidence_is_unknown_and_no_match_is_the_programs() {
        let cat = Catalogue::builtin().unwrap();
        let c = decide(&cat, &facts("FAILED", EvidenceKind::Absent, None));
        assert_eq!(
            (c.class, c.retry, c.rule.as_str()),
            (Class::Unknown, false, "evidence.absent")
        );
        let c = decide(&cat, &facts("FAILED", EvidenceKind::Lines, None));
        assert_eq!(
            (c.class, c.retry, c.rule.as_str()),
            (Class::Program, false, "evidence.no_match")
        );
    }

    fn verdict(score: f64, threshold: f64) -> Option<FallbackFacts> {
        Some(FallbackFacts {
            score,
            threshold,
            line: Some(("err".into(), 7, b"NET/IB : link flapped".to_vec())),
        })
    }

    /// The fallback never retries at or below its threshold: the policy's
    /// default (program, evidence.no_match, no retry) stands, and the score
    /// is shown.
    #[test]
    fn fallback_never_retries_at_or_below_its_threshold() {
        let cat = Catalogue::builtin().unwrap();
        for score in [0.0, 0.5, 0.9] {
            let mut f = facts("FAILED", EvidenceKind::Lines, None);
            f.fallback = verdict(score, 0.9);
            let c = decide(&cat, &f);
            assert_eq!(
                (c.class, c.retry, c.rule.as_str()),
                (Class::Program, false, "evidence.no_match"),
                "{score}"
            );
            assert_eq!(c.fallback.map(|s| s.threshold), Some(0.9));
            assert!(
                c.reason.contains("not above its threshold 0.900"),
                "{}",
                c.reason
            );
        }
    }

    #[test]
    fn fallback_above_its_threshold_is_infra_retried_and_says_so() {
        let cat = Catalogue::builtin().unwrap();
        let mut f = facts("FAILED", EvidenceKind::Lines, None);
        f.fallback = verdict(0.9504, 0.9);
        let c = decide(&cat, &f);
        assert_eq!(
            (c.class, c.retry, c.rule.as_str(), c.node.as_deref()),
            (Class::Infra, true, "fallback", Some("n1"))
        );
        assert_eq!(c.fallback.map(|s| s.score), Some(0.95));
        assert_eq!(
            c.evidence.as_ref().map(|e| (e.file.as_str(), e.line)),
            Some(("err", 7))
        );
        assert!(
            c.reason.contains("0.950") && c.reason.contains("(excluding n1)"),
            "{}",
            c.reason
        );
        // Within the budget only.
        f.attempt = 3;
        assert!(!decide(&cat, &f).retry);
        // A rule's match is never second-guessed: no fallback field at all.
        let mut f = facts("FAILED", EvidenceKind::Lines, hit(&cat, "KeyError: 'x'"));
        f.fallback = None;
        assert_eq!(decide(&cat, &f).fallback, None);
    }

    #[test]
    fn timeout_is_scheduler_with_advice() {
        let cat = Catalogue::builtin().unwrap();
        let c = decide(&cat, &facts("TIMEOUT", EvidenceKind::Lines, None));
        assert_eq!((c.class, c.retry), (Class::Scheduler, false));
        assert!(
            c.reason.contains("04:00:00")
                && c.reason.contains("checkpoint")
                && c.reason.contains("partition")
        );
    }

    #[test]
    fn cancelled_and_preempted_are_not_failures() {
        let cat = Catalogue::builtin().unwrap();
        for s in ["CANCELLED by 0", "CANCELLED+", "PREEMPTED"] {
            let c = decide(&cat, &facts(s, EvidenceKind::Absent, None));
            assert_eq!((c.class, c.retry), (Class::Scheduler, false), "{s}");
        }
    }

    #[test]
    fn budget_caps_infra_retries() {
        let cat = Catalogue::builtin().unwrap();
        let mut f = facts("NODE_FAIL", EvidenceKind::Absent, None);
        f.attempt = 2;
        assert!(decide(&cat, &f).retry);
        f.attempt = 3;
        let c = decide(&cat, &f);
        assert!(!c.retry);
        assert_eq!(c.reason, "retry budget exhausted (attempt 3 of 3)");
        f.attempt = 7;
        f.max_attempts = 1;
        assert_eq!(
            decide(&cat, &f).reason,
            "retry budget exhausted (attempt 7 of 1)"
        );
    }

    #[test]
    fn state_names_are_normalised() {
        assert_eq!(base_state("CANCELLED by 1000"), "CANCELLED");
        assert_eq!(base_state("cancelled+"), "CANCELLED");
        assert_eq!(base_state("NF"), "NODE_FAIL");
        assert_eq!(single_node(Some("n[1-2]")), None);
        assert_eq!(single_node(Some("gpu-a01")), Some("gpu-a01".into()));
    }
}
