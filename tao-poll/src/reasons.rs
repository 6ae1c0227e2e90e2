//! Why a job waits, in words: every reason code of Slurm's documented list
//! explained, and for those that never clear by themselves, what to do.
//!
//! Source: Slurm's "Job Reason Codes" page (doc/html/job_reason_codes.shtml,
//! slurm.schedmd.com/job_reason_codes.html, "All Reasons") and squeue(1)
//! "JOB REASON CODES". The list is kept in tests/data/job_reason_codes.txt
//! and a test checks that every code of it is explained here. This is the
//! one table: `message`'s hint for a pending job and the `pending` object
//! both come from [`explain`].
//!
//! The ~150 limit codes (`AssocGrpCpuLimit`, `QOSMaxGRESPerJob`,
//! `QOSMinMemory`, `MaxNodePerAccount`, ...) are read by their structure
//! (scope, Grp/Max/Min, resource, per-what), as the page describes them;
//! the others are listed one by one in [`TABLE`].

/// A reason code in words.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Explained {
    /// What the reason means for the user, one sentence, lowercase start.
    pub words: String,
    /// What to do, for a reason that never clears by itself (the job stays
    /// PENDING until someone acts); `None` when waiting is enough.
    pub action: Option<String>,
}

/// The reasons that are not limit codes: code, words, action (`None`: it
/// clears with time).
pub const TABLE: &[(&str, &str, Option<&str>)] = &[
    ("None", "not looked at by the scheduler yet (a new job, or the start of a scheduling cycle)", None),
    ("Priority", "jobs of higher priority are ahead of it in the queue for its partition", None),
    ("Resources", "it is next, waiting for nodes with enough free CPUs, memory or GPUs", None),
    ("Dependency", "it waits for the jobs it depends on (--dependency) to reach the required state", None),
    ("BeginTime", "its earliest start time (--begin) has not come yet", None),
    ("Cleaning", "it was requeued and its previous run is still being cleaned up", None),
    ("Constraints", "no node with the features it asks for (--constraint) is free at the moment", None),
    ("Licenses", "it waits for a license (--licenses) to be free", None),
    ("Reservation", "it waits for its advance reservation to start", None),
    ("Prolog", "the node's prolog is still running before the job starts", None),
    ("FedJobLock", "the clusters of the federation are agreeing on where it runs", None),
    ("JobArrayTaskLimit", "its array already runs as many tasks at once as its %N limit allows", None),
    ("BurstBufferResources", "the burst buffer pool has not enough free space", None),
    ("BurstBufferStageIn", "its burst buffer data is being staged in", None),
    ("NodeDown", "a node it needs is down; it starts when the node is back or it is given other nodes", None),
    ("ReqNodeNotAvail", "a node it asks for is in use, reserved, down or drained (UnavailableNodes names those that need an administrator)", None),
    ("PartitionDown", "its partition is DOWN; jobs start when an administrator brings it up", None),
    ("PartitionInactive", "its partition is INACTIVE and starts no jobs until an administrator activates it", None),
    ("AccountingPolicy", "a limit of its account, user or QOS holds it (Slurm names no more specific one)", None),
    ("AssociationJobLimit", "your association already runs as many jobs as it may", None),
    ("AssociationResourceLimit", "your association's running jobs use all of one of its resource limits", None),
    ("AssociationTimeLimit", "your association has reached its time limit", None),
    ("QOSJobLimit", "the QOS already runs as many jobs as it may", None),
    ("QOSResourceLimit", "the QOS's running jobs use all of one of its resource limits", None),
    ("QOSTimeLimit", "the QOS has reached its time limit", None),
    ("QOSUsageThreshold", "the QOS's usage threshold is passed; it starts when usage decays", None),
    ("SchedDefer", "it asks for an immediate allocation, which this cluster defers (SchedulerParameters=defer)", None),
    ("PowerUpNode", "its nodes are being powered up", None),
    ("WaitingForScheduling", "it is waiting for the scheduler to look at it", None),
    ("BadConstraints", "the request can never be met as written", Some("it can never start as asked (more CPUs, memory or GPUs per node than any node of the partition has, or an unknown feature): cancel it and open a new record with smaller resources")),
    ("PartitionConfig", "the request breaks a limit of the partition", Some("the request does not fit the partition's configuration: cancel it and submit to a partition that has such nodes")),
    ("PartitionNodeLimit", "it asks for more (or fewer) nodes than the partition allows, or the nodes it needs are down or drained", Some("more nodes than the partition allows: cancel it and submit with fewer nodes")),
    ("PartitionTimeLimit", "it asks for a longer --time than the partition allows", Some("a longer --time than the partition allows: cancel it and submit with a shorter time")),
    ("InvalidAccount", "its account does not exist or is not yours", Some("the account may not run here: cancel it and submit with an account of yours (sacctmgr show assoc user=$USER)")),
    ("AccountNotAllowed", "its account may not use this partition", Some("the account may not run here: cancel it and submit with an account of yours (sacctmgr show assoc user=$USER)")),
    ("InvalidQOS", "its QOS does not exist or is not allowed for you", Some("the QOS may not run here: cancel it and submit with a QOS of your association")),
    ("QOSNotAllowed", "its QOS is not allowed for your association or this partition", Some("the QOS may not run here: cancel it and submit with a QOS of your association")),
    ("DependencyNeverSatisfied", "a job it depends on ended in a way that can never satisfy the dependency", Some("a job it depends on failed: cancel it (with --kill-on-invalid-dep=yes Slurm does)")),
    ("JobHeldUser", "it is held by you or your account coordinator (sbatch --hold, scontrol hold)", Some("release it with `scontrol release JOBID`, or cancel it")),
    ("JobHeldAdmin", "an administrator holds it", Some("ask the cluster's administrators why it is held; only they can release it")),
    ("JobHoldMaxRequeue", "it was requeued as often as Slurm allows (MAX_BATCH_REQUEUE) and is now held", Some("read its logs for why each run failed, then release it (`scontrol release JOBID`) or cancel it")),
    ("JobLaunchFailure", "it could not be launched (a file system problem, a missing program, ...)", Some("read its main.err for the launch error, fix it, then cancel it and submit again")),
    ("ReservationDeleted", "the reservation it asks for no longer exists", Some("cancel it and submit without --reservation (or with an existing one)")),
    ("DeadLine", "it cannot finish before its --deadline", Some("cancel it and submit with a later --deadline or a shorter --time")),
    ("BurstBufferOperation", "a burst buffer operation for it failed", Some("cancel it and submit again; ask the administrators if it happens again")),
    ("MaxMemPerLimit", "it asks for more memory per CPU or per node than allowed", Some("cancel it and submit with less --mem / --mem-per-cpu")),
    ("SystemFailure", "Slurm, a file system or the network failed", Some("ask the cluster's administrators; submit again once the cluster is healthy")),
    ("NonZeroExitCode", "it ended with a non-zero exit code", None),
    ("OutOfMemory", "it ended out of memory", None),
    ("TimeLimit", "it ran out of its --time", None),
    ("InactiveLimit", "it was inactive for longer than the cluster's InactiveLimit", None),
];

/// The resource a limit code names, in words.
fn resource(token: &str) -> Option<&'static str> {
    Some(match token {
        "BB" => "burst buffer",
        "Billing" => "billing units",
        "Cpu" | "CPU" => "CPUs",
        "Energy" => "energy",
        "GRES" => "GPUs (or other generic resources)",
        "License" => "licenses",
        "Mem" | "Memory" => "memory",
        "Node" => "nodes",
        "Unknown" => "a trackable resource",
        "Wall" | "WallDuration" => "wall time",
        "Jobs" | "Job" => "running jobs",
        "SubmitJobs" | "SubmitJob" => "queued and running jobs",
        _ => return None,
    })
}

/// Read a limit code by its structure (see the module doc).
fn limit(code: &str) -> Option<Explained> {
    if let Some(res) = code
        .strip_prefix("Max")
        .and_then(|r| r.strip_suffix("PerAccount"))
    {
        let res = resource(res)?;
        return Some(Explained {
            words: format!("your account's jobs already use the QOS's per-account limit on {res}; it starts when some of them end"),
            action: None,
        });
    }
    let (scope, rest) = if let Some(r) = code.strip_prefix("Assoc") {
        ("your association (user and account)", r)
    } else if let Some(r) = code.strip_prefix("QOS") {
        ("the QOS", r)
    } else {
        return None;
    };
    let (kind, rest) = ["Grp", "Max", "Min"]
        .iter()
        .find_map(|k| rest.strip_prefix(k).map(|r| (*k, r)))?;
    let rest = rest
        .strip_suffix("NotSatisfied")
        .or_else(|| rest.strip_suffix("Limit"))
        .unwrap_or(rest);
    let (res, per) = [
        "MinutesPerJob",
        "RunMinutes",
        "Minutes",
        "PerJob",
        "PerNode",
        "PerUser",
    ]
    .iter()
    .find_map(|p| rest.strip_suffix(p).map(|r| (r, *p)))
    .unwrap_or((rest, ""));
    let what = resource(res)?;
    let shrink = "cancel it and submit with a smaller request (`sacctmgr show qos` and `sacctmgr show assoc user=$USER` list the limits)".to_string();
    Some(match (kind, per) {
        ("Grp", "") => Explained {
            words: format!("the running jobs of {scope} together use all of its limit on {what}; it starts when some of them end"),
            action: None,
        },
        ("Grp", "RunMinutes") => Explained {
            words: format!("the running jobs of {scope} together hold all of its {what}-minutes allowance; it starts as they end"),
            action: None,
        },
        ("Grp", "Minutes") => Explained {
            words: format!("{scope} has used up its {what}-minutes budget (past, present and future jobs)"),
            action: Some(format!("the budget of {scope} is spent: ask your account coordinator to raise it, or cancel and submit with another account")),
        },
        ("Max", "PerJob") | ("Max", "MinutesPerJob") => Explained {
            words: format!("it asks for more {what} per job than {scope} allows"),
            action: Some(shrink),
        },
        ("Max", "PerNode") => Explained {
            words: format!("it asks for more {what} per node than {scope} allows"),
            action: Some(shrink),
        },
        ("Max", "") if res.starts_with("Wall") => Explained {
            words: format!("it asks for a longer --time than {scope} allows"),
            action: Some("cancel it and submit with a shorter --time".into()),
        },
        ("Max", _) => Explained {
            words: format!("your jobs already use the per-user limit of {scope} on {what}; it starts when some of them end"),
            action: None,
        },
        ("Min", _) => Explained {
            words: format!("it asks for fewer {what} than {scope} requires per job"),
            action: Some(format!("cancel it and submit with at least the minimum {what} of {scope}, or with another QOS")),
        },
        _ => return None,
    })
}

/// Explain a reason code as squeue or sacct print it. Text after a comma
/// or an opening parenthesis is detail (`ReqNodeNotAvail, UnavailableNodes:n1`)
/// and is ignored for the lookup. `None` for a code not in Slurm's list.
pub fn explain(reason: &str) -> Option<Explained> {
    let code = reason.split([',', '(', ' ']).next().unwrap_or("").trim();
    if let Some((_, words, action)) = TABLE.iter().find(|(c, _, _)| *c == code) {
        return Some(Explained {
            words: (*words).to_string(),
            action: action.map(str::to_string),
        });
    }
    limit(code)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn reasons_cover_slurms_list() {
        let list = include_str!("../tests/data/job_reason_codes.txt");
        let codes: Vec<&str> = list
            .lines()
            .filter(|l| !l.starts_with('#') && !l.trim().is_empty())
            .collect();
        assert!(codes.len() > 190, "{}", codes.len());
        for c in codes {
            let e = explain(c).unwrap_or_else(|| panic!("{c} is not explained"));
            assert!(e.words.len() > 10, "{c}: {e:?}");
            assert!(!e.words.contains("{"), "{c}: {e:?}");
        }
    }

    #[test]
    fn limits_read_by_structure() {
        let e = explain("QOSMaxGRESPerJob").unwrap();
        assert!(e.words.contains("more GPUs"), "{e:?}");
        assert!(e.action.unwrap().starts_with("cancel it"));
        assert!(explain("AssocGrpCpuLimit").unwrap().action.is_none());
        assert!(explain("QOSGrpCPUMinutesLimit").unwrap().action.is_some());
        assert!(explain("QOSMaxWallDurationPerJobLimit")
            .unwrap()
            .action
            .is_some());
        assert!(explain("QOSMaxJobsPerUserLimit").unwrap().action.is_none());
        assert!(explain("QOSMinCpuNotSatisfied").unwrap().action.is_some());
        assert!(explain("MaxGRESPerAccount").unwrap().action.is_none());
        assert_eq!(explain("Frobnicate"), None);
    }

    #[test]
    fn details_after_the_code_are_ignored() {
        let e = explain("ReqNodeNotAvail, UnavailableNodes:n1").unwrap();
        assert!(e.words.starts_with("a node it asks for"));
        assert!(explain("JobHeldUser")
            .unwrap()
            .action
            .unwrap()
            .contains("scontrol release"));
        assert!(explain("Priority").unwrap().action.is_none());
    }
}
