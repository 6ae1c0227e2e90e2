//! `tao-record open`: mint a record id, bind the job's directories on
//! shared storage, check the request locally and write the record (state
//! PENDING). With `--retry-of ID`, make the next attempt of a failed
//! record instead: same request, new id and directories, both records
//! linked (`retry_of` / `retried_by`), and the node the failure blamed
//! excluded.
//!
//! Precedence of every setting: flag, then environment variable, then site
//! profile, then the defaults of the packaged platform (docs/design.md,
//! "Defaults": 1 node, 4 GPUs per node, 16 CPUs per task, 4 h wall time,
//! child timeout 95% of it, requeue on). Bad flag values exit 2, bad
//! environment values 78, bad file contents 65; each message names the
//! flag or variable and the fix.
//!
//! The parts: `open/args.rs` (the flags), `open/request.rs` (the request
//! from flags, environment and profile), `open/execution.rs` (the model
//! lifecycle), `open/create.rs` (writing a new record), `open/retry_of.rs`
//! (`--retry-of`).

use tao_core::{JobLine, Result};

use crate::store::Store;

mod args;
mod create;
mod execution;
mod request;
mod retry_of;

pub use args::{OpenArgs, DEFAULT_TIER, MAX_SPEC_BYTES};
use create::{assemble, create_with_fresh_id};
pub use create::{mint_id, refuse_literal_secrets, REQUEST_FIELDS};
pub use execution::{check_execution, unbound_placeholders};
pub use request::{build_request, build_request_noting};
use retry_of::open_retry;
pub use retry_of::rebase;

/// Run `open`: build and write the record, return its job line
/// (without `history`).
///
/// Errors ([`tao_core::Error`]): `Usage` for bad flags, `Config` for bad
/// environment values or profile, `Data` for bad files or a parent that
/// cannot be retried, `Io` for disk failures.
pub fn open(store: &Store, args: &OpenArgs) -> Result<JobLine> {
    match &args.retry_of {
        Some(parent) => open_retry(store, args, parent),
        None => {
            let mut notes = Vec::new();
            let fields = build_request_noting(args, &mut |n| notes.push(n))?;
            let line = if args.dry_run {
                refuse_literal_secrets(&fields)?;
                let now = tao_core::time::now_rfc3339();
                assemble(&mint_id()?, &fields, None, &now).into_job_line()
            } else {
                create_with_fresh_id(store, fields, None)?
            };
            // Said once the record is written: a refused open prints only its error.
            for n in notes {
                tao_core::cli::warn("tao-record", &n);
            }
            Ok(line)
        }
    }
}
