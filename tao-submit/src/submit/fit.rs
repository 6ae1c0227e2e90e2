//! Node fit: what the cluster knows before anything is staged. One batched
//! look-up of existing jobs by name and the node list (`scontrol show nodes
//! -o`), then each line checked against the nodes of its partition (CPUs
//! per task, GPUs per node) and its exclusion list against the node names.

use std::collections::{BTreeMap, HashSet};

use tao_core::{Error, JobLine, Result};

use super::reconcile::{plan_cluster, query_by_name};
use crate::sched::{self, Found};
use crate::sessions::Sessions;
use crate::stage::Plan;
use crate::TOOL;

/// Connect, look up existing jobs by name (batched) and, when needed, the
/// node names; all on the primary session.
pub(super) type Prefetched = (BTreeMap<String, Vec<Found>>, Option<Vec<sched::NodeInfo>>);

pub(super) fn prefetch(
    sessions: &mut Sessions,
    plans: &[&Plan],
    since: &str,
) -> Result<Prefetched> {
    let host = sessions.primary()?.login_host().to_string();
    let mut found: BTreeMap<String, Vec<Found>> = BTreeMap::new();
    // Names by the cluster their script sends them to (`-M`).
    let mut by_cluster: BTreeMap<Option<String>, Vec<&str>> = BTreeMap::new();
    for p in plans {
        by_cluster
            .entry(plan_cluster(p))
            .or_default()
            .push(p.id.as_str());
    }
    for (cluster, names) in &by_cluster {
        for chunk in names.chunks(sched::CHUNK) {
            for f in query_by_name(sessions, &host, chunk, since, cluster.as_deref())?.into_values()
            {
                found.entry(f.name.clone()).or_default().push(f);
            }
        }
    }
    let out = sessions.run_on(&host, "scontrol show nodes -o", None)?;
    let nodes = if out.status == 0 {
        Some(sched::parse_nodes(&out.stdout_text())).filter(|n| !n.is_empty())
    } else {
        None
    };
    if nodes.is_none() {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "cannot list the cluster's nodes ({}); exclusions and per-node CPUs/GPUs go to sbatch unchecked",
                out.stderr_line()
            ),
        );
    }
    Ok((found, nodes))
}

/// Check a line against the nodes of its partition(s) (`scontrol show
/// nodes -o`) before anything is staged: more CPUs per task or GPUs per
/// node than the largest node has would leave the job PENDING forever
/// (BadConstraints), so that is a line error naming the limit; an
/// exclusion list that covers every node of the partition (a retry that
/// avoided each node in turn) is dropped with a warning, since the job
/// could never start either.
///
/// Errors: [`Error::Data`] naming the partition, the largest node and the
/// option to change.
pub(super) fn check_fit(line: &JobLine, plan: &mut Plan, nodes: &[sched::NodeInfo]) -> Result<()> {
    let res = |k: &str| {
        line.get_path(&["script", "resources", k])
            .or_else(|| line.get_path(&["resources", k]))
            .cloned()
    };
    let Some(partition) = res("partition").and_then(|v| v.as_str().map(str::to_string)) else {
        return Ok(());
    };
    let parts: Vec<&str> = partition.split(',').filter(|p| !p.is_empty()).collect();
    let in_part: Vec<&sched::NodeInfo> = nodes
        .iter()
        .filter(|n| n.partitions.iter().any(|p| parts.contains(&p.as_str())))
        .collect();
    if in_part.is_empty() {
        return Ok(()); // An unknown partition: sbatch says so itself.
    }
    let want = |k: &str| res(k).and_then(|v| v.as_u64()).unwrap_or(0);
    let (cpus, gpus) = (want("cpus_per_task"), want("gpus_per_node"));
    let max_cpus = in_part.iter().map(|n| n.cpus).max().unwrap_or(0);
    let max_gpus = in_part.iter().map(|n| n.gpus).max().unwrap_or(0);
    if max_cpus > 0 && cpus > u64::from(max_cpus) {
        return Err(Error::Data(format!(
            "job {:?} asks for {cpus} CPUs per task but the largest node of partition {partition:?} has {max_cpus} (scontrol show nodes); it would stay PENDING (BadConstraints): open a new record with --cpus-per-task {max_cpus} or less",
            plan.id
        )));
    }
    // A cluster whose nodes list no GPU gres is not judged (GPUs may be
    // configured another way there).
    if max_gpus > 0 && gpus > u64::from(max_gpus) {
        return Err(Error::Data(format!(
            "job {:?} asks for {gpus} GPUs per node but the nodes of partition {partition:?} have at most {max_gpus} (scontrol show nodes); it would stay PENDING (BadConstraints): open a new record with --gpus-per-node {max_gpus} or less, or another partition",
            plan.id
        )));
    }
    if !plan.exclude.is_empty() && in_part.iter().all(|n| plan.exclude.contains(&n.name)) {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: excluding {} leaves no node of partition {partition:?}; submitting without the exclusion (the nodes the retries avoided are all the partition has)",
                plan.id,
                plan.exclude.join(",")
            ),
        );
        plan.exclude.clear();
    }
    Ok(())
}

/// Drop excluded node names Slurm does not know, with a warning.
pub(super) fn validate_exclude(plan: &mut Plan, known: &HashSet<String>) {
    let (keep, drop): (Vec<String>, Vec<String>) =
        plan.exclude.drain(..).partition(|n| known.contains(n));
    if !drop.is_empty() {
        tao_core::cli::warn(
            TOOL,
            &format!(
                "job {:?}: excluded node(s) {} do not exist on this cluster (`scontrol show nodes`); dropped",
                plan.id,
                tao_core::hostlist::summarize(&drop, 20)
            ),
        );
    }
    plan.exclude = keep;
}
