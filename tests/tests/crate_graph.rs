//! The crate graph of the workspace: arrows go only from tool crates to
//! shared crates (issue 13). A tool crate is a package with a binary
//! target (tao-render, tao-redact, tao-submit, tao-poll, tao-classify,
//! tao-record); the man-page generator (`tao-man`) and this test crate
//! (`tao-tests`) have binaries or tests over every tool and are not tools.
//! Library code that two tools need lives in a shared crate (tao-core,
//! tao-cli, tao-ssh, tao-secrets, tao-store, tao-script).
//!
//! Read from `cargo metadata --format-version 1 --no-deps --offline`
//! (path dependencies are listed without resolving the registry).

use std::collections::BTreeSet;
use std::path::Path;
use std::process::Command;

use serde_json::Value;
// The tools as the project documents them; a new binary crate must be
// added to tao_core::TOOLS on purpose (and to the README's crate list).
use tao_core::TOOLS;

/// Packages with binaries that are not tools: they may depend on tools.
const NOT_TOOLS: &[&str] = &["tao-man", "tao-tests"];

/// One forbidden arrow: `from` depends on tool `to` (`kind`: normal, dev
/// or build).
#[derive(Debug, PartialEq, Eq, PartialOrd, Ord)]
struct Edge {
    from: String,
    to: String,
    kind: String,
}

/// The tool crates of a `cargo metadata` document: the workspace packages
/// with a `bin` target, minus [`NOT_TOOLS`].
fn tool_crates(meta: &Value) -> BTreeSet<String> {
    packages(meta)
        .filter(|p| {
            p["targets"].as_array().is_some_and(|ts| {
                ts.iter().any(|t| {
                    t["kind"]
                        .as_array()
                        .is_some_and(|k| k.iter().any(|k| k == "bin"))
                })
            })
        })
        .map(|p| p["name"].as_str().unwrap_or_default().to_string())
        .filter(|n| !NOT_TOOLS.contains(&n.as_str()))
        .collect()
}

fn packages(meta: &Value) -> impl Iterator<Item = &Value> {
    meta["packages"].as_array().into_iter().flatten()
}

/// Every dependency (normal, dev or build) of a package other than
/// [`NOT_TOOLS`] on a tool crate: tool -> tool, and shared -> tool.
fn forbidden_edges(meta: &Value) -> Vec<Edge> {
    let tools = tool_crates(meta);
    let mut out = Vec::new();
    for p in packages(meta) {
        let from = p["name"].as_str().unwrap_or_default();
        if NOT_TOOLS.contains(&from) {
            continue;
        }
        for d in p["dependencies"].as_array().into_iter().flatten() {
            let to = d["name"].as_str().unwrap_or_default();
            if tools.contains(to) && to != from {
                out.push(Edge {
                    from: from.to_string(),
                    to: to.to_string(),
                    kind: d["kind"].as_str().unwrap_or("normal").to_string(),
                });
            }
        }
    }
    out.sort();
    out
}

fn metadata() -> Value {
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("..");
    let cargo = std::env::var_os("CARGO").unwrap_or_else(|| "cargo".into());
    let out = Command::new(cargo)
        .args([
            "metadata",
            "--format-version",
            "1",
            "--no-deps",
            "--offline",
        ])
        .current_dir(&root)
        .output()
        .expect("running cargo metadata");
    assert!(
        out.status.success(),
        "cargo metadata failed: {}",
        String::from_utf8_lossy(&out.stderr)
    );
    serde_json::from_slice(&out.stdout).expect("cargo metadata prints JSON")
}

#[test]
fn no_crate_depends_on_a_tool_crate() {
    let meta = metadata();
    let edges = forbidden_edges(&meta);
    assert!(
        edges.is_empty(),
        "tool crates must not be depended on (move the shared code into a shared crate): {}",
        edges
            .iter()
            .map(|e| format!("{} -> {} ({})", e.from, e.to, e.kind))
            .collect::<Vec<_>>()
            .join(", ")
    );
}

#[test]
fn the_tool_crates_are_the_documented_six() {
    let meta = metadata();
    let found: Vec<String> = tool_crates(&meta).into_iter().collect();
    let mut documented = TOOLS.to_vec();
    documented.sort_unstable();
    assert_eq!(
        found, documented,
        "binary crates changed: update tao_core::TOOLS and the README"
    );
    // The shared crates the tools use are in the workspace, as libraries.
    let names: BTreeSet<&str> = packages(&meta).filter_map(|p| p["name"].as_str()).collect();
    for shared in [
        "tao-core",
        "tao-cli",
        "tao-ssh",
        "tao-secrets",
        "tao-store",
        "tao-script",
    ] {
        assert!(
            names.contains(shared),
            "{shared} missing from the workspace"
        );
    }
}

/// The edge finder on a synthetic graph: it names tool -> tool edges of
/// every kind and shared -> tool edges, and ignores tool -> shared,
/// [`NOT_TOOLS`] -> tool and registry crates.
#[test]
fn edge_finder_names_every_forbidden_arrow() {
    let bin = |name: &str| serde_json::json!({"name": name, "kind": ["bin"]});
    let lib = |name: &str| serde_json::json!({"name": name, "kind": ["lib"]});
    let dep = |name: &str, kind: Value| serde_json::json!({"name": name, "kind": kind});
    let meta = serde_json::json!({"packages": [
        {"name": "tool-a", "targets": [lib("tool_a"), bin("tool-a")],
         "dependencies": [dep("shared", Value::Null), dep("tool-b", Value::Null), dep("serde", Value::Null)]},
        {"name": "tool-b", "targets": [bin("tool-b")],
         "dependencies": [dep("tool-a", "dev".into()), dep("tool-c", "build".into())]},
        {"name": "tool-c", "targets": [bin("tool-c")], "dependencies": [dep("shared", Value::Null)]},
        {"name": "shared", "targets": [lib("shared")], "dependencies": [dep("tool-c", Value::Null)]},
        {"name": "tao-man", "targets": [bin("tao-man")],
         "dependencies": [dep("tool-a", Value::Null), dep("tool-b", Value::Null)]},
    ]});
    assert_eq!(
        tool_crates(&meta).into_iter().collect::<Vec<_>>(),
        ["tool-a", "tool-b", "tool-c"]
    );
    let e = |from: &str, to: &str, kind: &str| Edge {
        from: from.into(),
        to: to.into(),
        kind: kind.into(),
    };
    assert_eq!(
        forbidden_edges(&meta),
        vec![
            e("shared", "tool-c", "normal"),
            e("tool-a", "tool-b", "normal"),
            e("tool-b", "tool-a", "dev"),
            e("tool-b", "tool-c", "build"),
        ]
    );
}
