//! tao-script: the sbatch scripts of tao-slurm, as a shared library (the
//! `tao-render` command and tao-submit both use it).
//!
//! The scripts come from askama templates compiled into the library
//! (`templates/`, see [`render`]); every value that reaches the shell is
//! single-quoted by an escaper the templates cannot bypass, and every
//! value on an `#SBATCH` line is a validated [`escape::SbatchValue`]. The
//! resource rules of the project (wall-time limits per partition,
//! unlimited time only when asked, exclusive nodes and derived node counts
//! at the per-node GPU maximum, `.sqsh` images only) are applied in
//! [`job`], with tao-core's one Slurm time parser
//! (`tao_core::slurm_time`) and image normalisation (`tao_core::image`).
//!
//! API: [`render_line`], [`render_line_with`], [`render_convert`],
//! [`render_probe`], [`Script`], [`check_binding`], [`needs_probe`],
//! [`probe_request_for_line`], [`probe_result`], the conversion job names
//! ([`convert_job_name`], [`reconvert_job_name`]) and, re-exported from
//! tao-core, [`sqsh_name`], [`normalise_image`], [`is_latest`]. Errors are
//! `tao_core::Error` values (`Data` for a line that cannot be rendered).

pub mod escape;
pub mod job;
pub mod render;

pub use job::RenderOptions;
pub use render::{
    check_binding, convert_job_name, needs_probe, probe_request_for_line, probe_request_from_plan,
    probe_result, reconvert_job_name, render_convert, render_line, render_line_with, render_probe,
    ConvertRequest, ProbeLauncher, ProbeRequest, Script,
};
pub use tao_core::image::{is_latest, normalise_image, sqsh_name};
