//! The local Slurm cluster's exports: `tests/cluster/up` writes
//! `$TAO_CLUSTER_DIR/env` (`export NAME=value` lines) and
//! `tests/cluster/up-transport` writes `env-transport` beside it.

use crate::ci::skip_or_fail;

/// The directory of the first cluster (22.05) when `TAO_CLUSTER_DIR` is unset.
pub const DEFAULT_CLUSTER_DIR: &str = "/var/tmp/tao-cluster";

/// The directory of the cluster under test: `$TAO_CLUSTER_DIR`, else
/// [`DEFAULT_CLUSTER_DIR`] (scripts/test sources `env-24.11`, which points
/// `TAO_CLUSTER_DIR` at the 24.11 cluster).
pub fn cluster_dir() -> String {
    std::env::var("TAO_CLUSTER_DIR").unwrap_or_else(|_| DEFAULT_CLUSTER_DIR.into())
}

/// The env file of the cluster under test: `<cluster_dir>/env`.
pub fn env_file() -> String {
    format!("{}/env", cluster_dir())
}

/// The `export NAME=value` lines of an env file as (name, value) pairs in
/// any collection of them (`HashMap`, `BTreeMap`, `Vec`); one pair of
/// quotes (`"` or `'`) around a value is removed, other lines are skipped.
pub fn parse_exports<C: FromIterator<(String, String)>>(text: &str) -> C {
    text.lines()
        .filter_map(|l| l.trim().strip_prefix("export ")?.split_once('='))
        .map(|(k, v)| {
            (
                k.to_string(),
                v.trim_matches('"').trim_matches('\'').to_string(),
            )
        })
        .collect()
}

/// The exports of the cluster under test ([`env_file`]), or `None` when
/// the file cannot be read (the cluster is not up): then the test is
/// skipped, or fails under `CI=true` ([`crate::ci::skip_or_fail`]).
/// Whether the cluster answers is not checked here.
pub fn cluster_exports<C: FromIterator<(String, String)>>() -> Option<C> {
    let path = env_file();
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(parse_exports(&text)),
        Err(e) => {
            skip_or_fail(&format!(
                "local cluster not up ({path}: {e}): run tests/cluster/up"
            ));
            None
        }
    }
}

/// The exports of `tests/cluster/up-transport` (`<cluster_dir>/env-transport`:
/// the transport sshds, `TAO_T_*`), or `None` when it has not run: skipped,
/// or a failure under `CI=true` for the first cluster. Under another
/// cluster (`TAO_CLUSTER_DIR` not [`DEFAULT_CLUSTER_DIR`], the 24.11 pass)
/// a missing file is always a skip: its login nodes have no transport
/// sshds, and these tests belong to the first cluster's pass.
pub fn transport_exports<C: FromIterator<(String, String)>>() -> Option<C> {
    let dir = cluster_dir();
    let path = format!("{dir}/env-transport");
    match std::fs::read_to_string(&path) {
        Ok(text) => Some(parse_exports(&text)),
        Err(e) => {
            let reason = format!("{path}: {e}: run tests/cluster/up");
            if dir.trim_end_matches('/') == DEFAULT_CLUSTER_DIR {
                skip_or_fail(&reason);
            } else {
                eprintln!("skipping: {reason}");
            }
            None
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use std::collections::BTreeMap;

    #[test]
    fn exports_are_parsed_and_unquoted() {
        let m: BTreeMap<String, String> = parse_exports(
            "# comment\nexport A=1\n  export B=\"x:y\"\nexport C='z'\nnot=this\nexport D=a=b\n",
        );
        let want: BTreeMap<String, String> = [("A", "1"), ("B", "x:y"), ("C", "z"), ("D", "a=b")]
            .into_iter()
            .map(|(k, v)| (k.to_string(), v.to_string()))
            .collect();
        assert_eq!(m, want);
    }
}
