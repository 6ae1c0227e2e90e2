//! What submitting one line gave: the Slurm job it now has.

/// The outcome of one line.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Submitted {
    /// Slurm job id (digits).
    pub job_id: String,
    /// Cluster from `jobid;cluster`, if any.
    pub cluster: Option<String>,
    /// Login host spec the job was submitted or found through.
    pub login_host: String,
    /// `Some(native state)` when an existing job was adopted.
    pub adopted: Option<String>,
    /// The image conversion job this job waits for (`afterok`), if any.
    pub waits_for: Option<String>,
}
