//! The settings of a submit run.

use std::time::Duration;

/// Settings of a submit run.
#[derive(Debug, Clone)]
pub struct SubmitConfig {
    /// How long to look for a job by name after an ambiguous submit before
    /// concluding it does not exist (accounting lags sbatch by a few seconds).
    pub reconcile_wait: Duration,
    /// The site profile (conversion partition and resources), or why it
    /// did not load (an error only for lines that need a conversion).
    pub profile: std::result::Result<tao_core::site::SiteProfile, String>,
    /// The communication probe gate of multi-node jobs ([`crate::probe`]).
    pub probe: crate::probe::ProbeConfig,
    /// `--reconvert-latest`: convert images tagged `latest` again even when
    /// the `.sqsh` cache holds them ([`crate::image`]).
    pub reconvert_latest: bool,
}
