//! The model lifecycle of a request (`--execution` and
//! `--supporting-file`): its shape checked, the files hashed, the command's
//! placeholders bound.

use std::path::PathBuf;

use serde_json::{json, Map, Value};
use tao_core::{Error, Result};

use super::args::usage;
use crate::validate;

/// Names in `{name}` placeholders of a command that tao-render will not
/// bind: anything but `config_path`, `job_id` and `results_dir`. Shell
/// expansions (`${VAR}`) and brace lists (`{a,b}`) are not placeholders.
/// Output: the names, in order of appearance, each once.
pub fn unbound_placeholders(command: &str) -> Vec<String> {
    const BOUND: [&str; 3] = ["config_path", "job_id", "results_dir"];
    let bytes = command.as_bytes();
    let mut out: Vec<String> = Vec::new();
    let mut i = 0;
    while let Some(off) = command[i..].find('{') {
        let start = i + off;
        i = start + 1;
        if start > 0 && bytes[start - 1] == b'$' {
            continue;
        }
        let Some(len) = command[start + 1..].find('}') else {
            break;
        };
        let name = &command[start + 1..start + 1 + len];
        let ident = name
            .chars()
            .next()
            .is_some_and(|c| c.is_ascii_alphabetic() || c == '_')
            && name.chars().all(|c| c.is_ascii_alphanumeric() || c == '_');
        if ident && !BOUND.contains(&name) && !out.iter().any(|n| n == name) {
            out.push(name.to_string());
        }
    }
    out
}

/// Append `--supporting-file` paths to `execution.supporting_files` as
/// `{source: <file name>, local_path: <absolute path>, sha256, size}`.
///
/// Errors: a usage error naming the file when it cannot be read or its
/// name collides with another supporting file.
pub(super) fn add_supporting_files(
    execution: &mut Map<String, Value>,
    paths: &[PathBuf],
) -> Result<()> {
    let list = execution
        .entry("supporting_files")
        .or_insert_with(|| Value::Array(Vec::new()));
    let Value::Array(list) = list else {
        return Err(usage("--execution", "`supporting_files` must be an array"));
    };
    for path in paths {
        let flag = "--supporting-file";
        validate::not_a_directory(path).map_err(|e| usage(flag, e))?;
        let abs = std::fs::canonicalize(path)
            .map_err(|e| usage(flag, format!("{path:?}: {e}; give a readable file")))?;
        let bytes = std::fs::read(&abs)
            .map_err(|e| usage(flag, format!("{path:?}: {e}; give a readable file")))?;
        let source = abs
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| usage(flag, format!("{path:?} has no UTF-8 file name")))?
            .to_string();
        if list
            .iter()
            .any(|f| f.get("source").and_then(Value::as_str) == Some(&source))
        {
            return Err(usage(
                flag,
                format!("two supporting files are named {source:?}; rename one"),
            ));
        }
        list.push(json!({
            "source": source,
            "local_path": abs.to_string_lossy(),
            "sha256": tao_core::sha256_hex(&bytes),
            "size": bytes.len(),
        }));
    }
    Ok(())
}

pub(super) fn read_execution(path: &PathBuf) -> Result<Map<String, Value>> {
    validate::not_a_directory(path).map_err(|e| usage("--execution", e))?;
    let bytes = std::fs::read(path).map_err(|e| {
        usage(
            "--execution",
            format!("{path:?}: {e}; give a readable JSON file"),
        )
    })?;
    let data = |msg: String| Error::Data(format!("--execution {path:?}: {msg}"));
    let v: Value = serde_json::from_slice(&bytes)
        .map_err(|e| data(format!("invalid JSON ({e}); fix the file")))?;
    let Value::Object(m) = v else {
        return Err(data("expected a JSON object with pre_commands, command, post_commands, launcher, supporting_files".into()));
    };
    check_execution(&m).map_err(data)?;
    Ok(m)
}

/// Check the shape of an `execution` object (tao-jobline(7)).
pub fn check_execution(m: &Map<String, Value>) -> std::result::Result<(), String> {
    let strs = |key: &str, v: &Value| -> std::result::Result<(), String> {
        let arr = v
            .as_array()
            .ok_or(format!("`{key}` must be an array of strings"))?;
        for s in arr {
            let s = s
                .as_str()
                .ok_or(format!("`{key}` must be an array of strings"))?;
            validate::no_nul(s).map_err(|e| format!("`{key}` entry {e}"))?;
        }
        Ok(())
    };
    for (k, v) in m {
        match k.as_str() {
            "pre_commands" => strs(k, v)?,
            "command" => {
                let s = v.as_str().ok_or("`command` must be a string")?;
                validate::no_nul(s).map_err(|e| format!("`command` {e}"))?;
            }
            "post_commands" => {
                for p in v.as_array().ok_or("`post_commands` must be an array")? {
                    let c = p
                        .get("command")
                        .and_then(Value::as_str)
                        .ok_or("each post_commands entry needs a string `command`")?;
                    validate::no_nul(c).map_err(|e| format!("`post_commands` entry {e}"))?;
                    match p.get("scope").and_then(Value::as_str) {
                        None | Some("all") | Some("leader") => {}
                        Some(s) => {
                            return Err(format!(
                                "post_commands scope {s:?} must be \"all\" or \"leader\""
                            ))
                        }
                    }
                }
            }
            "launcher" => match v {
                Value::Null => {}
                Value::String(s) if s == "torchrun" => {}
                _ => return Err("`launcher` must be \"torchrun\" or null".into()),
            },
            "supporting_files" => {
                for f in v.as_array().ok_or("`supporting_files` must be an array")? {
                    let src = f
                        .get("source")
                        .and_then(Value::as_str)
                        .ok_or("each supporting_files entry needs a string `source`")?;
                    if src.starts_with('/') || src.split('/').any(|c| c == ".." || c.is_empty()) {
                        return Err(format!(
                            "supporting file {src:?} must be a relative path without .."
                        ));
                    }
                    validate::no_controls(src, false)
                        .map_err(|e| format!("supporting file {e}"))?;
                    let sha = f.get("sha256").and_then(Value::as_str).unwrap_or("");
                    if sha.len() != 64 || !sha.bytes().all(|b| b.is_ascii_hexdigit()) {
                        return Err(format!(
                            "supporting file {src:?} needs a 64-hex-digit `sha256`"
                        ));
                    }
                    if !f.get("size").is_some_and(Value::is_u64) {
                        return Err(format!("supporting file {src:?} needs a byte `size`"));
                    }
                }
            }
            _ => {}
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn unbound_placeholders_are_found_but_shell_braces_are_not() {
        assert_eq!(
            unbound_placeholders("dino train -e {config_pth} -r {results_dir} {job_id} {x} {x}"),
            vec!["config_pth".to_string(), "x".to_string()]
        );
        assert!(unbound_placeholders("echo ${HOME} {a,b} {} ${#X} {1}").is_empty());
        assert!(unbound_placeholders("train -e {config_path").is_empty());
    }

    #[test]
    fn execution_shapes() {
        let ok = json!({"pre_commands": ["pip list"], "command": "python x.py", "launcher": "torchrun",
            "post_commands": [{"command": "ls", "scope": "leader"}],
            "supporting_files": [{"source": "a/b.py", "sha256": "0".repeat(64), "size": 3}]});
        assert!(check_execution(ok.as_object().unwrap()).is_ok());
        for bad in [
            json!({"launcher": "mpirun"}),
            json!({"pre_commands": "x"}),
            json!({"post_commands": [{"command": "ls", "scope": "some"}]}),
            json!({"supporting_files": [{"source": "../x", "sha256": "0".repeat(64), "size": 1}]}),
            json!({"supporting_files": [{"source": "x", "sha256": "abc", "size": 1}]}),
        ] {
            assert!(check_execution(bad.as_object().unwrap()).is_err(), "{bad}");
        }
    }
}
