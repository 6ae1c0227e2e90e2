//! tao-render: a job line in, the same line with an sbatch script out.
//!
//! The scripts come from askama templates compiled into the binary (see
//! [`render`]); every value that reaches the shell is single-quoted by an
//! escaper the templates cannot bypass, and every value on an `#SBATCH`
//! line is a validated [`escape::SbatchValue`]. The resource rules of the
//! project (wall-time limits per partition, unlimited time only when asked,
//! exclusive nodes and derived node counts at the per-node GPU maximum,
//! `.sqsh` images only) are applied in [`job`].
//!
//! Library API for tao-submit and the probe flow: [`render_line`],
//! [`render_convert`], [`render_probe`], [`Script`], [`sqsh_name`],
//! [`normalise_image`]. The filter itself is [`cli::main`].

pub mod escape;
pub mod job;
pub mod render;

pub use job::RenderOptions;
pub use render::{
    check_binding, convert_job_name, needs_probe, probe_request_for_line, probe_result,
    reconvert_job_name, render_convert, render_line, render_line_with, render_probe,
    ConvertRequest, ProbeLauncher, ProbeRequest, Script,
};
pub use tao_core::image::{is_latest, normalise_image, sqsh_name};
