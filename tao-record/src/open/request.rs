//! The request of a new record from flags, environment and site profile:
//! resources, storage root, mounts, env, secrets and the spec.

use std::path::{Path, PathBuf};

use serde_json::{json, Map, Value};
use tao_core::model::Layout;
use tao_core::request::{self, defaults};
use tao_core::site::SiteProfile;
use tao_core::slurm_time::format_hms;
use tao_core::{Error, Result};

use super::args::{config, env_var, usage, OpenArgs, DEFAULT_TIER, MAX_SPEC_BYTES};
use super::execution::{add_supporting_files, read_execution, unbound_placeholders};
use crate::validate;

/// Build the fields of a new record (everything but `id`, `storage`'s
/// per-id paths, `state` and `history`) from flags, environment and profile.
///
/// Errors: as for [`crate::open::open`].
pub fn build_request(args: &OpenArgs) -> Result<Map<String, Value>> {
    build_request_noting(args, &mut |_| {})
}

/// [`build_request`], passing each notice about the request (the GPU shape
/// the rules derived, [`request::shape_notice`]) to `note`, for the caller
/// to print once the record is written (a refused open prints only its
/// error line).
///
/// Errors: as for [`build_request`].
pub fn build_request_noting(
    args: &OpenArgs,
    note: &mut dyn FnMut(String),
) -> Result<Map<String, Value>> {
    let profile = SiteProfile::load(None)?;
    if args.platform != "slurm" {
        return Err(usage(
            "--platform",
            format!("{:?} is not supported; use slurm", args.platform),
        ));
    }
    let (runtime, runtime_from) = match (&args.runtime, env_var("TAO_RUNTIME")) {
        (Some(r), _) => (r.clone(), "--runtime".to_string()),
        (None, Some(r)) => {
            request::runtime(&r).map_err(|e| config("TAO_RUNTIME", e))?;
            (r, "TAO_RUNTIME".to_string())
        }
        (None, None) => (
            profile.runtime.clone(),
            format!("site profile {:?}", profile.name),
        ),
    };
    let word = |flag: &str, v: &Option<String>| -> Result<Option<String>> {
        if let Some(v) = v {
            validate::slurm_names(v, false, "name")
                .map_err(|e| usage(flag, format!("{e} (letters, digits, _ . -)")))?;
        }
        Ok(v.clone())
    };
    let action = word("--action", &args.action)?;
    if let Some(a) = &action {
        if let Some(n) = request::action(a).map_err(|e| usage("--action", e))? {
            note(n);
        }
    }
    let network_arch = word("--network-arch", &args.network_arch)?;
    if let Some(img) = &args.image {
        if runtime == "none" {
            // Plain srun runs no container: the image would be ignored.
            return Err(usage(
                "--image",
                format!(
                    "{img:?} would be ignored: runtime none (from {runtime_from}) runs no container; drop --image, or use --runtime pyxis to run in the image"
                ),
            ));
        }
        tao_core::image::normalise_image(img).map_err(|e| usage("--image", e))?;
    } else if runtime == "pyxis" {
        return Err(usage(
            "--image",
            "is required with runtime pyxis; give --image IMG or use --runtime none",
        ));
    }

    let spec = args.spec.as_ref().map(read_spec).transpose()?;
    let mut execution = args.execution.as_ref().map(read_execution).transpose()?;
    if !args.supporting_files.is_empty() {
        add_supporting_files(
            execution.get_or_insert_with(Map::new),
            &args.supporting_files,
        )?;
    }

    let command = match (&args.command, execution.as_ref().and_then(|e| e.get("command"))) {
        (Some(c), _) => c.clone(),
        (None, Some(Value::String(c))) => c.clone(),
        (None, _) => match (&network_arch, &action, &spec) {
            (Some(arch), Some(act), Some(_)) => format!("{arch} {act} -e {{config_path}}"),
            _ => {
                return Err(usage(
                    "--command",
                    "is required; give --command TEXT, or --network-arch, --action and --spec for the TAO default",
                ))
            }
        },
    };
    if command.trim().is_empty() {
        return Err(usage(
            "--command",
            "is empty; give the command the job runs",
        ));
    }
    validate::no_nul(&command).map_err(|e| usage("--command", e))?;
    if command.contains("{config_path}") && spec.is_none() {
        return Err(usage(
            "--command",
            "uses {config_path} but no --spec FILE was given; add --spec",
        ));
    }
    for name in unbound_placeholders(&command) {
        tao_core::cli::warn(
            "tao-record",
            &format!(
                "--command has {{{name}}}, which is not bound (only {{config_path}}, {{job_id}} and {{results_dir}} are); it reaches the job as written: check the spelling"
            ),
        );
    }

    let resources = build_resources(args, &profile, note)?;
    let (tier, base_dir) = storage_root(args)?;
    let mounts = build_mounts(&args.mounts)?;
    let env = build_env(&args.env)?;
    let secrets = build_secrets(&args.secrets)?;
    request::env_not_secret(env.keys().map(String::as_str), &secrets)
        .map_err(|e| usage("--env", e))?;

    let mut f = Map::new();
    f.insert("platform".into(), json!("slurm"));
    f.insert("action".into(), json!(action));
    f.insert("network_arch".into(), json!(network_arch));
    f.insert("image".into(), json!(args.image));
    f.insert("runtime".into(), json!(runtime));
    f.insert("command".into(), json!(command));
    f.insert("resources".into(), resources);
    f.insert(
        "storage".into(),
        json!({"tier": tier, "base_dir": base_dir}),
    );
    if let Some(s) = spec {
        f.insert("spec".into(), s);
    }
    f.insert("mounts".into(), json!(mounts));
    f.insert("env".into(), Value::Object(env));
    f.insert("secrets".into(), json!(secrets));
    if let Some(e) = execution {
        f.insert("execution".into(), Value::Object(e));
    }
    f.insert("attempt".into(), json!(args.attempt.unwrap_or(1)));
    Ok(f)
}

/// The flag of a request input a partition cannot hold.
fn unfit_flag(what: request::Unfit) -> &'static str {
    match what {
        request::Unfit::Nodes => "--nodes",
        request::Unfit::Gpus => "--gpus-per-node",
        request::Unfit::Cpus => "--cpus-per-task",
        request::Unfit::Mem => "--mem",
    }
}

pub(super) fn build_resources(
    args: &OpenArgs,
    profile: &SiteProfile,
    note: &mut dyn FnMut(String),
) -> Result<Value> {
    // The rules tao-render plans with (tao_core::request), checked once here.
    let nodes =
        request::nodes(args.nodes.unwrap_or(defaults::NODES)).map_err(|e| usage("--nodes", e))?;
    let gpus = args.gpus_per_node.unwrap_or(defaults::GPUS_PER_NODE);
    let shape = request::gpu_shape(nodes, gpus, args.exclusive, profile.max_gpus_per_node)
        .map_err(|e| usage("--gpus-per-node", e))?;
    let time = args
        .time
        .clone()
        .unwrap_or_else(|| defaults::TIME.to_string());
    let wall = request::wall_time(&time).map_err(|e| usage("--time", e))?;
    let child_secs = request::child_timeout_secs(args.child_timeout.as_deref(), wall).map_err(
        |e| match &args.child_timeout {
            Some(_) => usage("--child-timeout", e),
            None => usage(
                "--time",
                format!("{time:?} leaves no room for the child timeout: {e}"),
            ),
        },
    )?;
    // Unlimited (child timeout 0): null, as tao-render reads it.
    let child_timeout = match (&args.child_timeout, child_secs) {
        (Some(c), _) => Some(c.clone()),
        (None, 0) => None,
        (None, secs) => Some(format_hms(secs)),
    };
    let (partition, partition_err): (String, fn(&str, String) -> Error) =
        match (&args.partition, env_var("SLURM_PARTITION")) {
            (Some(p), _) => {
                validate::slurm_names(p, true, "partition").map_err(|e| usage("--partition", e))?;
                (p.clone(), |f, m| usage(f, m))
            }
            (None, Some(p)) => {
                validate::slurm_names(&p, true, "partition")
                    .map_err(|e| config("SLURM_PARTITION", e))?;
                (p, |_, m| config("SLURM_PARTITION", m))
            }
            (None, None) => (profile.default_partition.clone(), |_, m| {
                config("TAO_SITE_PROFILE", format!("default_partition: {m}"))
            }),
        };
    for name in partition.split(',') {
        if let Err(msg) = request::known_partition(profile, name) {
            return Err(partition_err("--partition", msg));
        }
    }
    request::check_time_limit(wall, &partition, profile)
        .map_err(|e| usage("--time", format!("{time:?}: {e} (--partition)")))?;
    let cpus = request::cpus_per_task(
        args.cpus_per_task
            .unwrap_or_else(|| request::default_cpus_per_task(profile, &partition)),
    )
    .map_err(|e| usage("--cpus-per-task", e))?;
    let account = match (&args.account, env_var("SLURM_ACCOUNT")) {
        (Some(a), _) => {
            validate::slurm_names(a, false, "account").map_err(|e| usage("--account", e))?;
            Some(a.clone())
        }
        (None, Some(a)) => {
            validate::slurm_names(&a, false, "account").map_err(|e| config("SLURM_ACCOUNT", e))?;
            Some(a)
        }
        (None, None) => None,
    };
    let requeue = if args.no_requeue {
        false
    } else {
        match env_var("SLURM_USE_REQUEUE") {
            None => true,
            Some(v) => validate::parse_bool(&v).ok_or_else(|| {
                config(
                    "SLURM_USE_REQUEUE",
                    format!("{v:?} is not a boolean; set it to true or false"),
                )
            })?,
        }
    };
    let exclude = validate::exclude_nodes(&args.exclude).map_err(|e| usage("--exclude", e))?;
    if let Some(m) = &args.mem {
        request::mem(m).map_err(|e| usage("--mem", e))?;
    }
    // A job no listed partition can hold would wait for ever: refused now.
    request::fits_partitions(
        profile,
        &partition,
        nodes,
        (shape.0, shape.1),
        cpus,
        args.mem.as_deref(),
    )
    .map_err(|(what, e)| {
        // A count left at its default is not the user's to fix: name the
        // partition they chose instead.
        let given = match what {
            request::Unfit::Nodes => args.nodes.is_some(),
            request::Unfit::Gpus => args.gpus_per_node.is_some(),
            request::Unfit::Cpus => args.cpus_per_task.is_some(),
            request::Unfit::Mem => true,
        };
        match (given, &args.partition) {
            (false, Some(_)) => usage("--partition", e),
            _ => usage(unfit_flag(what), e),
        }
    })?;
    // At the per-node GPU maximum a node is the job's alone and the node
    // count is derived from the total (docs/design.md, "Defaults"): the
    // record holds the shape the job runs as, and says so once.
    if let Some(n) = request::shape_notice(
        nodes,
        gpus,
        (shape.0, shape.1),
        profile.max_gpus_per_node,
        &profile.name,
    ) {
        note(format!("--gpus-per-node: {n}"));
    }
    let exclusive = args.exclusive || shape.2;
    Ok(json!({
        "nodes": shape.0,
        "gpus_per_node": shape.1,
        "cpus_per_task": cpus,
        "time": time,
        "child_timeout": child_timeout,
        "partition": partition,
        "account": account,
        "exclusive": exclusive,
        "requeue": requeue,
        "exclude": exclude,
        "mem": args.mem,
    }))
}

pub(super) fn storage_root(args: &OpenArgs) -> Result<(String, String)> {
    let tier = args
        .storage_tier
        .clone()
        .unwrap_or_else(|| DEFAULT_TIER.into());
    validate::slurm_names(&tier, false, "storage tier").map_err(|e| usage("--storage-tier", e))?;
    let base = match (&args.results_root, env_var("SLURM_BASE_RESULTS_DIR")) {
        (Some(p), _) => {
            let s = p.to_str().ok_or_else(|| usage("--results-root", "is not UTF-8; use an ASCII path"))?;
            validate::results_root(s).map_err(|e| usage("--results-root", e))?
        }
        (None, Some(s)) => validate::results_root(&s).map_err(|e| config("SLURM_BASE_RESULTS_DIR", e))?,
        (None, None) => {
            return Err(Error::Config(
                "no results root: set SLURM_BASE_RESULTS_DIR or pass --results-root /abs/dir on the cluster's shared filesystem".into(),
            ))
        }
    };
    Ok((tier, base))
}

pub(super) fn build_mounts(flags: &[String]) -> Result<Vec<String>> {
    if !flags.is_empty() {
        return flags
            .iter()
            .map(|m| validate::mount(m).map_err(|e| usage("--mount", e)))
            .collect();
    }
    match env_var("SLURM_CONTAINER_MOUNTS") {
        None => Ok(Vec::new()),
        Some(v) => v
            .split(',')
            .filter(|m| !m.trim().is_empty())
            .map(|m| validate::mount(m.trim()).map_err(|e| config("SLURM_CONTAINER_MOUNTS", e)))
            .collect(),
    }
}

pub(super) fn build_env(flags: &[String]) -> Result<Map<String, Value>> {
    let mut env = Map::new();
    for kv in flags {
        let Some((k, v)) = kv.split_once('=') else {
            return Err(usage(
                "--env",
                format!("{kv:?} is not K=V; use e.g. --env OMP_NUM_THREADS=8"),
            ));
        };
        // Never echo the value: it may be a real secret.
        request::env_name(k).map_err(|e| usage("--env", e))?;
        validate::no_nul(v).map_err(|e| usage("--env", format!("value of {k} {e}")))?;
        match env.get(k) {
            // The same K=V twice (a script's list and a shell alias) is one.
            Some(Value::String(old)) if old == v => {}
            // Two values: which one the job should get is the user's call,
            // not a silent last-wins. The values are never echoed.
            Some(_) => {
                return Err(usage(
                    "--env",
                    format!("{k} is given twice with different values; give --env {k}=... once"),
                ))
            }
            None => {
                env.insert(k.into(), Value::String(v.into()));
            }
        }
    }
    Ok(env)
}

pub(super) fn build_secrets(flags: &[String]) -> Result<Vec<String>> {
    let mut out: Vec<String> = Vec::new();
    for s in flags {
        if let Some((name, _)) = s.split_once('=') {
            // Never echo what follows '=': it is a secret value.
            return Err(usage(
                "--secret",
                format!(
                    "takes a NAME, not NAME=value (got {name}=...); give --secret {name} and export {name} in the environment of tao-submit"
                ),
            ));
        }
        request::secret_name(s).map_err(|e| usage("--secret", e))?;
        if !out.contains(s) {
            out.push(s.clone());
        }
    }
    Ok(out)
}

/// Whether `path` names an open file descriptor rather than a file:
/// `/dev/fd/N`, `/dev/stdin`, `/proc/<pid or self>/fd/N` (what bash and
/// zsh pass for `<(...)`, and `--spec /dev/stdin`).
fn is_fd_path(path: &Path) -> bool {
    let parent = path.parent().and_then(|p| p.to_str()).unwrap_or("");
    path == Path::new("/dev/stdin")
        || parent == "/dev/fd"
        || (parent.starts_with("/proc/") && parent.ends_with("/fd"))
}

/// Reads `--spec FILE` into the `spec` section `{name, text, sha256}`.
/// `name` is the file's own name, or [`Layout::DEFAULT_SPEC`] when the spec
/// is read from a pipe, a device or a `/dev/fd` path (`<(envsubst < x)`
/// would stage as `63`, which TAO and Hydra do not take for a YAML file).
///
/// Errors: usage (exit 2) for a directory, an unreadable path or a bad
/// file name; data (exit 65) for a spec over [`MAX_SPEC_BYTES`], not UTF-8,
/// with a NUL, empty, or not YAML ([`check_yaml`]).
pub(super) fn read_spec(path: &PathBuf) -> Result<Value> {
    validate::not_a_directory(path).map_err(|e| usage("--spec", e))?;
    let meta = std::fs::metadata(path)
        .map_err(|e| usage("--spec", format!("{path:?}: {e}; give a readable file")))?;
    let name = if !meta.is_file() || is_fd_path(path) {
        Layout::DEFAULT_SPEC.to_string()
    } else {
        let name = path
            .file_name()
            .and_then(|n| n.to_str())
            .ok_or_else(|| {
                usage(
                    "--spec",
                    format!("{path:?} has no file name; give a spec file"),
                )
            })?
            .to_string();
        validate::slurm_names(&name, false, "file name")
            .map_err(|e| usage("--spec", format!("{e}; rename the spec file")))?;
        name
    };
    if meta.len() > MAX_SPEC_BYTES {
        return Err(Error::Data(format!(
            "--spec {path:?} is {} bytes, more than {MAX_SPEC_BYTES}; a spec is a small YAML file",
            meta.len()
        )));
    }
    let bytes =
        std::fs::read(path).map_err(|e| Error::io(format!("reading --spec {path:?}"), e))?;
    let text = String::from_utf8(bytes).map_err(|_| {
        Error::Data(format!(
            "--spec {path:?} is not UTF-8; save the spec as UTF-8"
        ))
    })?;
    validate::no_nul(&text).map_err(|e| Error::Data(format!("--spec {path:?} {e}")))?;
    if text.trim().is_empty() {
        // `--spec /dev/null`, an unset variable's `<(envsubst ...)`, a file
        // not saved yet: the job would start and TAO stop on no settings.
        return Err(Error::Data(format!(
            "--spec {path:?} is empty; give the experiment spec file (the job reads its settings from it), or leave --spec out"
        )));
    }
    check_yaml(path, &text)?;
    let sha = tao_core::sha256_hex(text.as_bytes());
    Ok(json!({"name": name, "text": text, "sha256": sha}))
}

/// Checks that a spec's `text` (the whole file, UTF-8) parses as a YAML
/// stream (YAML 1.2 syntax, yaml-rust2's event parser: every document,
/// anchors and aliases, merge keys, tabs inside scalars), so a spec TAO
/// cannot read is refused here instead of after the job's queue wait. Only
/// the syntax is checked: what the documents hold (an empty mapping, a
/// scalar, a key given twice, several documents) is TAO's to judge, and
/// the text is kept byte for byte as it was read.
///
/// Errors: [`Error::Data`] (exit 65) naming `path` and the 1-based line and
/// column of the first syntax error, with the parser's words and the fix.
fn check_yaml(path: &Path, text: &str) -> Result<()> {
    /// Events are not needed: the parse itself is the check.
    struct Ignore;
    impl yaml_rust2::parser::EventReceiver for Ignore {
        fn on_event(&mut self, _: yaml_rust2::Event) {}
    }
    yaml_rust2::parser::Parser::new_from_str(text)
        .load(&mut Ignore, true)
        .map_err(|e| {
            Error::Data(format!(
                "--spec {path:?} is not YAML: line {}, column {}: {}; fix the spec at that place (TAO reads it as YAML), then run tao-record open again",
                e.marker().line(),
                e.marker().col() + 1,
                tao_core::cli::one_line(e.info())
            ))
        })
}

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    /// `text` written to `spec.yaml` in a fresh directory, read by [`read_spec`].
    fn read(text: &str) -> Result<Value> {
        let dir = tempfile::tempdir().unwrap();
        let path = dir.path().join("spec.yaml");
        std::fs::write(&path, text).unwrap();
        read_spec(&path)
    }

    /// A TAO-like experiment spec of about 13 KB: nested mappings, lists,
    /// comments, quoted strings, numbers.
    fn big_spec() -> String {
        let mut s = String::from("# DINO training spec (generated for the test)\nresults_dir: /results\ndataset:\n  train_data_sources:\n");
        for i in 0..60 {
            s.push_str(&format!(
                "    - image_dir: /data/coco/images/train_{i:03}\n      json_file: \"/data/coco/annotations/train_{i:03}.json\"\n"
            ));
        }
        s.push_str("  num_classes: 91\n  batch_size: 4\n  augmentation:\n    scales: [480, 512, 544, 576, 608, 640, 672, 704, 736, 768, 800]\n");
        for i in 0..110 {
            s.push_str(&format!(
                "model_{i}:\n  lr: 2.0e-4  # learning rate\n  note: 'it''s run {i}'\n"
            ));
        }
        s
    }

    #[test]
    fn specs_that_are_yaml_are_kept_byte_for_byte() {
        let big = big_spec();
        assert!((13_000..14_000).contains(&big.len()), "{}", big.len());
        for text in [
            big.as_str(),
            // Anchors, aliases, a merge key, a key given twice (PyYAML takes the last).
            "base: &b\n  lr: 0.1\ntrain:\n  <<: *b\n  epochs: 4\n  epochs: 5\n",
            // Several documents.
            "---\ntrain:\n  epochs: 1\n...\n---\nevaluate:\n  batch_size: 2\n",
            // Tabs inside strings and after a value, CRLF line ends.
            "train:\n  note: \"a\tb\"\n  plain: a\tb\n  block: |\n    x\ty\r\n",
            // YAML, but odd: TAO's to judge, as before.
            "{}\n",
            "# only a comment\n",
            "just a scalar\n",
        ] {
            let v = read(text).unwrap_or_else(|e| panic!("{text:?}: {e}"));
            assert_eq!(v["text"], text);
            assert_eq!(v["sha256"], tao_core::sha256_hex(text.as_bytes()));
        }
    }

    #[test]
    fn a_spec_that_is_not_yaml_is_refused_at_its_line_and_column() {
        for (text, at) in [
            (
                "train:\n  epochs: [4\n",
                "line 3, column 1: while parsing a flow sequence",
            ),
            ("train:\n\tepochs: 4\n", "line 2, column 2: tabs disallowed"),
            (
                "train:\n  <<: *missing\n",
                "line 2, column 7: while parsing node, found unknown anchor",
            ),
            ("train:\n  epochs: 4\n lr: 0.1\n", "line 3, column 4"),
            ("a: \"unterminated\n", "line 1, column 4"),
        ] {
            let e = read(text).unwrap_err();
            let m = e.to_string();
            assert_eq!(e.code(), tao_core::exit::DATAERR, "{m}");
            assert!(
                m.starts_with("--spec ")
                    && m.contains("spec.yaml\" is not YAML: ")
                    && m.contains(at),
                "{text:?}: {m}"
            );
            assert!(m.ends_with("fix the spec at that place (TAO reads it as YAML), then run tao-record open again"), "{m}");
            assert_eq!(m.lines().count(), 1, "{m}");
        }
    }

    /// A YAML value: scalars of every kind (strings with tabs, newlines,
    /// quotes, YAML indicators, non-ASCII), lists and mappings, nested.
    fn yaml_value() -> impl Strategy<Value = yaml_rust2::Yaml> {
        use yaml_rust2::Yaml;
        let text = proptest::collection::vec(
            proptest::sample::select(
                "aZ09 \t\n:#-'\"\\&*!|>{}[],%@`?~=.\u{e9}\u{20ac}\u{1f600}"
                    .chars()
                    .collect::<Vec<_>>(),
            ),
            0..12,
        )
        .prop_map(|v| v.into_iter().collect::<String>());
        let leaf = prop_oneof![
            text.clone().prop_map(Yaml::String),
            any::<i64>().prop_map(Yaml::Integer),
            (-1.0e9f64..1.0e9).prop_map(|f| Yaml::Real(format!("{f:?}"))),
            any::<bool>().prop_map(Yaml::Boolean),
            Just(Yaml::Null),
        ];
        leaf.prop_recursive(4, 48, 6, move |inner| {
            prop_oneof![
                proptest::collection::vec(inner.clone(), 0..6).prop_map(Yaml::Array),
                proptest::collection::vec((text.clone(), inner), 0..6).prop_map(|kv| {
                    Yaml::Hash(kv.into_iter().map(|(k, v)| (Yaml::String(k), v)).collect())
                }),
            ]
        })
    }

    proptest! {
        #![proptest_config(tao_core::testing::config(256))]

        /// Any spec that a YAML emitter writes from a value is accepted and
        /// kept byte for byte (the check refuses only what does not parse).
        #[test]
        fn any_emitted_yaml_value_is_accepted_byte_for_byte(v in yaml_value()) {
            let mut text = String::new();
            yaml_rust2::YamlEmitter::new(&mut text).dump(&v).unwrap();
            text.push('\n');
            let got = read(&text);
            prop_assert!(got.is_ok(), "{:?}: {}", text, got.unwrap_err());
            let got = got.unwrap();
            prop_assert_eq!(got["text"].as_str(), Some(text.as_str()));
        }
    }

    #[test]
    fn secrets_never_echo_values() {
        let err = build_secrets(&["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789".into()])
            .unwrap_err();
        let m = err.to_string();
        assert!(m.contains("HF_TOKEN") && !m.contains("hf_abc"), "{m}");
        assert_eq!(err.code(), 2);
        let err =
            build_env(&["HF_TOKEN=hf_abcdefghijklmnopqrstuvwxyz0123456789".into()]).unwrap_err();
        assert!(!err.to_string().contains("hf_abc"));
        assert_eq!(build_secrets(&["A".into(), "A".into()]).unwrap(), vec!["A"]);
    }
}
