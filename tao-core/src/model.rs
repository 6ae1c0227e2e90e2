//! The typed job model: serde structs for every section of a job line
//! (tao-jobline(7)), the shared-storage layout as methods, and stamping an
//! observation.
//!
//! Every struct keeps the keys it does not know in a flattened `extra`
//! map, and every object is read through [`Ordered`], which remembers the
//! key order it was read in, so a line read into a [`Job`] and written
//! back is byte for byte the line that came in: unknown keys, at the top
//! level or inside a section, keep their values and their places, and a
//! field that was `null` stays `null` (a property test below generates
//! lines with extra keys and checks this). Numbers keep their form: a
//! field that may hold an integer or a fraction is a [`Number`].
//!
//! The rules themselves live beside this module and are used through it:
//! defaults, wall and child time, env and secret names, partition limits
//! ([`crate::request`]), Slurm times ([`crate::slurm_time`]), image names
//! ([`crate::image`]) and the Slurm state table ([`crate::state::native`]).
//! [`FIELDS`] documents every field; tao-jobline(7)'s FIELDS section is
//! generated from it.

use std::ops::{Deref, DerefMut};

use serde::de::DeserializeOwned;
use serde::{Deserialize, Deserializer, Serialize, Serializer};
use serde_json::{Map, Number, Value};

use crate::jobline::JobLine;
use crate::state::State;

/// A value of type `T` read from a JSON object, with the object's key
/// order. Serialising writes the keys in the order they were read (a key
/// whose field is now `None` is written as `null`), then any key set
/// since, in `T`'s order. `Ordered<T>` derefs to `T`.
#[derive(Debug, Clone, PartialEq, Default)]
pub struct Ordered<T> {
    /// The typed value.
    pub value: T,
    keys: Vec<String>,
}

impl<T> Ordered<T> {
    /// Wrap a value made here (no key order yet: `T`'s own order is used).
    pub fn new(value: T) -> Self {
        Self {
            value,
            keys: Vec::new(),
        }
    }

    /// The keys in the order they were read.
    pub fn keys(&self) -> &[String] {
        &self.keys
    }

    /// Forget that `key` was read, so a `None` field is left out instead
    /// of written as `null`.
    pub fn forget(&mut self, key: &str) {
        self.keys.retain(|k| k != key);
    }
}

impl<T> Deref for Ordered<T> {
    type Target = T;
    fn deref(&self) -> &T {
        &self.value
    }
}

impl<T> DerefMut for Ordered<T> {
    fn deref_mut(&mut self) -> &mut T {
        &mut self.value
    }
}

impl<T: Serialize> Serialize for Ordered<T> {
    fn serialize<S: Serializer>(&self, s: S) -> Result<S::Ok, S::Error> {
        use serde::ser::Error as _;
        let v = serde_json::to_value(&self.value).map_err(S::Error::custom)?;
        let Value::Object(mut m) = v else {
            return v.serialize(s);
        };
        let mut out = Map::new();
        for k in &self.keys {
            let v = m.shift_remove(k).unwrap_or(Value::Null);
            out.insert(k.clone(), v);
        }
        for (k, v) in m {
            out.insert(k, v);
        }
        out.serialize(s)
    }
}

impl<'de, T: DeserializeOwned> Deserialize<'de> for Ordered<T> {
    fn deserialize<D: Deserializer<'de>>(d: D) -> Result<Self, D::Error> {
        use serde::de::Error as _;
        let m = Map::<String, Value>::deserialize(d)?;
        let keys = m.keys().cloned().collect();
        let value = T::deserialize(Value::Object(m)).map_err(D::Error::custom)?;
        Ok(Self { value, keys })
    }
}

/// Keys this model does not know, in their order.
pub type Extra = Map<String, Value>;

/// A section of the job line (or the line itself): every field optional
/// (`#[serde(default)]`, absent when `None`), and the keys the model does
/// not know kept in `extra`, in their places (through [`Ordered`]). The one
/// definition of that shape, so each section states only its fields.
macro_rules! section {
    ($(#[$sm:meta])* pub struct $name:ident { $($(#[$fm:meta])* $f:ident : $t:ty,)* }) => {
        $(#[$sm])*
        #[derive(Debug, Clone, PartialEq, Default, Serialize, Deserialize)]
        pub struct $name {
            $(
                $(#[$fm])*
                #[serde(default, skip_serializing_if = "Option::is_none")]
                pub $f: Option<$t>,
            )*
            /// Unknown keys.
            #[serde(flatten)]
            pub extra: Extra,
        }
    };
}

section! {
    /// `resources`: what the job asks for (set by tao-record open).
    pub struct Resources {
        /// Node count (at least 1).
        nodes: u32,
        /// GPUs per node (0: a CPU job).
        gpus_per_node: u32,
        /// CPUs per task (at least 1).
        cpus_per_task: u32,
        /// Wall time, a Slurm time string ([`crate::slurm_time`]).
        time: String,
        /// Time the job's command may run, a Slurm time string; null under an
        /// unlimited wall time.
        child_timeout: String,
        /// Partition, or a comma list of partitions.
        partition: String,
        /// Account, or null.
        account: String,
        /// Whole nodes.
        exclusive: bool,
        /// Whether Slurm may requeue the job.
        requeue: bool,
        /// Nodes not to run on (names or ranges).
        exclude: Vec<String>,
        /// Memory per node in sbatch `--mem` form (64G), or null.
        mem: String,
    }
}

section! {
    /// `storage`: where the job lives on shared storage.
    pub struct Storage {
        /// Storage tier (`lustre`).
        tier: String,
        /// SLURM_BASE_RESULTS_DIR, an absolute path.
        base_dir: String,
        /// `<base>/jobs/<id>` ([`Layout::job_dir`]).
        job_dir: String,
        /// `<base>/results/<id>` ([`Layout::results_dir`]).
        results_dir: String,
    }
}

section! {
    /// `spec`: the job's config file.
    pub struct Spec {
        /// File name, staged to `<job_dir>/specs/<name>`
        /// ([`Layout::DEFAULT_SPEC`] for a spec read from a pipe or `/dev/fd`).
        name: String,
        /// The file's text.
        text: String,
        /// Lowercase hex SHA-256 of `text`.
        sha256: String,
    }
}

section! {
    /// One step of `execution.post_commands`.
    pub struct Step {
        /// Shell text.
        command: String,
        /// `all` (every node) or `leader` (node 0).
        scope: String,
    }
}

section! {
    /// One of `execution.supporting_files`.
    pub struct SupportingFile {
        /// Relative path under `<job_dir>/inputs/action-helpers/`.
        source: String,
        /// Path on the launch host.
        local_path: String,
        /// Lowercase hex SHA-256 of the file.
        sha256: String,
        /// Size in bytes.
        size: u64,
    }
}

section! {
    /// `execution`: the optional model lifecycle.
    pub struct Execution {
        /// Shell text run before the command.
        pre_commands: Vec<String>,
        /// The command (overrides the line's `command`).
        command: String,
        /// Steps after the command.
        post_commands: Vec<Ordered<Step>>,
        /// `torchrun` or null.
        launcher: String,
        /// Files staged with the job, checksum-closed.
        supporting_files: Vec<Ordered<SupportingFile>>,
    }
}

section! {
    /// `script.resources`: the plan tao-render made, after the rules.
    pub struct Effective {
        /// Node count (derived from the GPU total at the per-node maximum).
        nodes: u32,
        /// GPUs per node.
        gpus_per_node: u32,
        /// CPUs per task.
        cpus_per_task: u32,
        /// Canonical wall time (`D-HH:MM:SS` or `UNLIMITED`).
        time: String,
        /// Child timeout in seconds (0: none).
        child_timeout_s: u64,
        /// Partition list.
        partition: String,
        /// Whole nodes.
        exclusive: bool,
        /// `--requeue` (true) or `--no-requeue`.
        requeue: bool,
    }
}

section! {
    /// `script.image`: how the image resolved.
    pub struct ImageRef {
        /// The line's `image` as given.
        given: String,
        /// [`crate::image::normalise_image`] of it.
        normalised: String,
        /// The absolute `.sqsh` the job runs.
        sqsh: String,
        /// Whether `sqsh` is the conversion cache tao-submit must fill.
        needs_conversion: bool,
    }
}

section! {
    /// `script.container`: what the steps run in (runtime pyxis).
    pub struct Container {
        /// The absolute `.sqsh` (`--container-image`).
        image: String,
        /// Comma-joined `--container-mounts`, the base-dir mount included.
        mounts: String,
    }
}

section! {
    /// `script`: the rendered sbatch script (set by tao-render).
    pub struct Script {
        /// `single`, `multi`, `convert` or `probe`.
        template: String,
        /// Lowercase hex SHA-256 of `text`.
        sha256: String,
        /// The script.
        text: String,
        /// Bound values and checksums (kept as read).
        bindings: Value,
        /// How the image resolved.
        image: Ordered<ImageRef>,
        /// The effective plan: what tao-submit submits.
        resources: Ordered<Effective>,
        /// The container (runtime pyxis).
        container: Ordered<Container>,
    }
}

section! {
    /// `lint`: tao-redact lint's verdict.
    pub struct Lint {
        /// Whether the script passed.
        ok: bool,
        /// SHA-256 of the approved `script.text`.
        sha256: String,
        /// Findings `{rule, line, column, preview}` (preview masked).
        findings: Vec<Value>,
    }
}

section! {
    /// `slurm`: what the scheduler said.
    pub struct Slurm {
        /// Slurm job id, digits (a string; an integer is read too).
        job_id: Value,
        /// Cluster name, or null.
        cluster: String,
        /// The login host that submitted (`host[:port]`).
        login_host: String,
        /// Slurm's own state word (FAILED, CANCELLED, ...).
        native_state: String,
        /// Slurm's reason.
        reason: String,
        /// `exit:signal` (`0:0`).
        exit_code: String,
        /// Node list.
        nodes: String,
        /// RFC 3339 UTC.
        submit_time: String,
        /// RFC 3339 UTC.
        start_time: String,
        /// RFC 3339 UTC.
        end_time: String,
        /// Times Slurm requeued the job.
        restart_count: u64,
        /// `afterok:<id>` when the job waits for an image conversion job.
        dependency: String,
    }
}

impl Effective {
    /// Whether tao-submit runs the communication probe before this plan:
    /// more than one node, or two or more GPUs per node (tao-submit(1)).
    pub fn needs_probe(&self) -> bool {
        self.nodes.unwrap_or(1) > 1 || self.gpus_per_node.unwrap_or(0) >= 2
    }
}

impl Slurm {
    /// The job id as digits: a string, or an integer written as one.
    pub fn job_id(&self) -> Option<String> {
        job_id_text(self.job_id.as_ref()?)
    }
}

/// The text of a `slurm.job_id` value: a string as it is, an unsigned
/// integer in decimal (tao-submit writes strings; older lines numbers);
/// `None` for any other JSON value. The one rule behind
/// [`JobLine::slurm_job_id`], for readers that hold the value without the
/// line (tao-poll's text lines).
pub fn job_id_text(v: &Value) -> Option<String> {
    match v {
        Value::String(s) => Some(s.clone()),
        Value::Number(n) => n.as_u64().map(|n| n.to_string()),
        _ => None,
    }
}

section! {
    /// `progress`: TAO's status logger, read by tao-poll.
    pub struct Progress {
        /// Latest epoch.
        epoch: Number,
        /// Epochs in all.
        max_epoch: Number,
        /// 0-100.
        percent: Number,
        /// Seconds to the end.
        eta_s: Number,
        /// Seconds per epoch.
        time_per_epoch_s: Number,
        /// The latest kpi object as written.
        kpi: Map<String, Value>,
        /// `{name: [values]}`.
        history: Map<String, Value>,
        /// The file's mtime, RFC 3339 UTC.
        updated_at: String,
        /// status.json's size in bytes at the read (`stat -c %s`).
        file_size: Number,
        /// status.json's mtime at the read, whole seconds since the Unix
        /// epoch (`stat -c %Y`).
        file_mtime_s: Number,
    }
}

section! {
    /// `pending`: why a job waits.
    pub struct Pending {
        /// Slurm's reason code.
        reason: String,
        /// What it means.
        words: String,
        /// False when the job waits until someone acts.
        clears: bool,
        /// What to do.
        action: String,
        /// RFC 3339 UTC, or null.
        expected_start: String,
    }
}

section! {
    /// `classification`: tao-classify's verdict.
    pub struct Classification {
        /// infra, program, scheduler or unknown.
        class: String,
        /// Finer class.
        subclass: String,
        /// The rule that matched.
        rule: String,
        /// `{file, line, text}` (redacted).
        evidence: Value,
        /// The blamed node, or null.
        node: String,
        /// Whether a retry may help.
        retry: bool,
        /// Why.
        reason: String,
    }
}

section! {
    /// `error`: this line failed in a tool.
    pub struct LineError {
        /// The tool.
        tool: String,
        /// Error kind ([`crate::Error::kind`]).
        code: String,
        /// One line naming the input and the fix.
        message: String,
    }
}

section! {
    /// A whole job line, typed. Read one with [`Job::from_line`], write it
    /// back with [`Job::to_line`]; the round trip is byte-identical.
    pub struct Job {
        /// Record id, `[a-z0-9-]{1,64}`.
        id: String,
        /// `slurm`.
        platform: String,
        /// TAO action (train).
        action: String,
        /// Network architecture (dino).
        network_arch: String,
        /// Container image as given, or null.
        image: String,
        /// `pyxis` or `none`.
        runtime: String,
        /// Shell text run in the container.
        command: String,
        /// What the job asks for.
        resources: Ordered<Resources>,
        /// Where it lives.
        storage: Ordered<Storage>,
        /// Its config.
        spec: Ordered<Spec>,
        /// Pyxis mounts `/src:/dst`.
        mounts: Vec<String>,
        /// Non-secret environment `{NAME: value}`, in order.
        env: Map<String, Value>,
        /// Secret names (never values).
        secrets: Vec<String>,
        /// Model lifecycle.
        execution: Ordered<Execution>,
        /// The rendered script.
        script: Ordered<Script>,
        /// The lint verdict.
        lint: Ordered<Lint>,
        /// The scheduler's view.
        slurm: Ordered<Slurm>,
        /// The communication probe's outcome (kept as read).
        probe: Value,
        /// tao-submit preflight's checks (kept as read).
        preflight: Value,
        /// Vocabulary state.
        state: State,
        /// Native sub-state and why.
        message: String,
        /// RFC 3339 UTC of the observation.
        observed_at: String,
        /// The tool that observed.
        observed_by: String,
        /// Redacted log tails (kept as read).
        evidence: Value,
        /// Training progress.
        progress: Ordered<Progress>,
        /// Why it waits.
        pending: Ordered<Pending>,
        /// tao-classify's verdict.
        classification: Ordered<Classification>,
        /// Parent id.
        retry_of: String,
        /// Child id.
        retried_by: String,
        /// Attempt number, 1 for a first try.
        attempt: u32,
        /// This line failed in a tool.
        error: Ordered<LineError>,
    }
}

impl Job {
    /// Read a job line into the model.
    ///
    /// Errors: [`crate::Error::BadLine`] naming the line and the field
    /// whose value has the wrong shape.
    pub fn from_line(line: &JobLine) -> crate::Result<Ordered<Job>> {
        serde_json::from_value(Value::Object(line.fields.clone())).map_err(|e| {
            crate::Error::BadLine {
                line: line.line_no,
                message: format!("{e}; fix the field (tao-jobline(7) FIELDS)"),
            }
        })
    }
}

impl Ordered<Job> {
    /// Write the model back as a job line (key order as read).
    pub fn to_line(&self) -> JobLine {
        match serde_json::to_value(self) {
            Ok(Value::Object(fields)) => JobLine::from_map(fields),
            _ => unreachable!("a Job always serialises to an object"),
        }
    }
}

/// A typed section of the line, read leniently: `None` when the key is
/// absent, null, or not of the section's shape (the tool then treats it
/// as absent, as it did with untyped reads).
fn section<T: DeserializeOwned>(line: &JobLine, key: &str) -> Option<T> {
    let v = line.fields.get(key)?;
    if v.is_null() {
        return None;
    }
    // Deserialized from the borrowed value: no copy of the section.
    T::deserialize(v).ok()
}

/// Order the keys of `dst` like those of `like`: the keys both have come
/// in `like`'s order, and a key only `dst` has stays right after the key
/// it followed in `dst` (first when none). Values are not touched.
/// tao-record mark uses it so a record keeps the key order of the lines it
/// merges (unknown keys included) instead of appending what is new.
pub fn order_like(dst: &mut Map<String, Value>, like: &Map<String, Value>) {
    let mut order: Vec<String> = like
        .keys()
        .filter(|k| dst.contains_key(*k))
        .cloned()
        .collect();
    let dst_keys: Vec<String> = dst.keys().cloned().collect();
    for (i, k) in dst_keys.iter().enumerate() {
        if order.contains(k) {
            continue;
        }
        let pos = dst_keys[..i]
            .iter()
            .rev()
            .find_map(|p| order.iter().position(|o| o == p))
            .map_or(0, |p| p + 1);
        order.insert(pos, k.clone());
    }
    let mut old = std::mem::take(dst);
    for k in order {
        if let Some(v) = old.shift_remove(&k) {
            dst.insert(k, v);
        }
    }
}

/// The shared-storage layout of one job (tao-jobline(7), SHARED STORAGE):
/// every path the tools use under `storage.base_dir`, spelled once.
/// Paths have no trailing `/`.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Layout {
    /// The record id.
    pub id: String,
    /// `<base>/jobs/<id>`.
    pub job_dir: String,
}

impl Layout {
    /// Staged specs, relative to the job folder.
    pub const SPECS: &'static str = "specs";
    /// The name a spec without a file name of its own is staged under
    /// (`specs/spec.yaml`): one read from a pipe or a `/dev/fd/N` path
    /// (`--spec <(envsubst < spec.yaml)`), whose name (`63`) says nothing
    /// and lacks the `.yaml` TAO and Hydra look for. docs/CONTRACT.md.
    pub const DEFAULT_SPEC: &'static str = "spec.yaml";
    /// The folder of the secrets sidecar (mode 700), relative.
    pub const ENV: &'static str = "env";
    /// The secrets sidecar, relative.
    pub const SECRETS: &'static str = "env/secrets.env";
    /// The line as submitted, relative.
    pub const META: &'static str = "meta/job.json";
    /// The folder of the approved script, relative.
    pub const SBATCH: &'static str = "sbatch";
    /// The folder of the per-attempt log folders, relative.
    pub const LOGS: &'static str = "slurm-logs";
    /// Staged supporting files, relative.
    pub const ACTION_HELPERS: &'static str = "inputs/action-helpers";

    /// The layout of job `id` whose job folder is `job_dir` (a trailing
    /// `/` is dropped).
    pub fn new(id: &str, job_dir: &str) -> Self {
        Self {
            id: id.to_string(),
            job_dir: job_dir.trim_end_matches('/').to_string(),
        }
    }

    /// `<base>/jobs`: the folder that holds every job folder (a trailing
    /// `/` of `base` is dropped).
    pub fn jobs_root(base: &str) -> String {
        format!("{}/jobs", base.trim_end_matches('/'))
    }

    /// `<base>/results`: the folder that holds every results folder.
    pub fn results_root(base: &str) -> String {
        format!("{}/results", base.trim_end_matches('/'))
    }

    /// `<base>/jobs/<id>`: where tao-record puts a job's folder.
    pub fn job_dir(base: &str, id: &str) -> String {
        format!("{}/{id}", Self::jobs_root(base))
    }

    /// `<base>/results/<id>`: the job's results folder.
    pub fn results_dir(base: &str, id: &str) -> String {
        format!("{}/{id}", Self::results_root(base))
    }

    /// `<base>/images`: the image conversion cache.
    pub fn images_dir(base: &str) -> String {
        format!("{}/images", base.trim_end_matches('/'))
    }

    /// `<job_dir>/specs/<name>`: the staged spec, `{config_path}`.
    pub fn spec_path(&self, name: &str) -> String {
        format!("{}/{}/{name}", self.job_dir, Self::SPECS)
    }

    /// `<job_dir>/env/secrets.env`: the mode-600 secrets sidecar.
    pub fn secrets_file(&self) -> String {
        format!("{}/{}", self.job_dir, Self::SECRETS)
    }

    /// `<job_dir>/meta/job.json`: the line as submitted.
    pub fn meta_file(&self) -> String {
        format!("{}/{}", self.job_dir, Self::META)
    }

    /// `<job_dir>/sbatch/job_<id>.sbatch`: the approved script.
    pub fn sbatch_file(&self) -> String {
        format!("{}/{}/job_{}.sbatch", self.job_dir, Self::SBATCH, self.id)
    }

    /// `<job_dir>/slurm-logs/<id>-`: the log folder without the Slurm job
    /// id (the script appends `$SLURM_JOB_ID`, sbatch `%j`).
    pub fn log_dir_prefix(&self) -> String {
        format!("{}/{}/{}-", self.job_dir, Self::LOGS, self.id)
    }

    /// `<job_dir>/slurm-logs/<id>-<slurm_job_id>`: one attempt's logs
    /// (main.out, main.err, completion.json).
    pub fn log_dir(&self, slurm_job_id: &str) -> String {
        format!("{}{slurm_job_id}", self.log_dir_prefix())
    }

    /// `<job_dir>/inputs/action-helpers`: staged supporting files.
    pub fn action_helpers_dir(&self) -> String {
        format!("{}/{}", self.job_dir, Self::ACTION_HELPERS)
    }

    /// The folders tao-submit makes before staging, relative to the job
    /// folder.
    pub const SUBDIRS: [&'static str; 6] = [
        Self::SPECS,
        Self::ENV,
        "meta",
        Self::SBATCH,
        Self::LOGS,
        Self::ACTION_HELPERS,
    ];
}

/// Typed reads of a job line, and the writes several tools share. Each
/// reads the field as the model types it.
impl JobLine {
    /// `slurm` as typed, if present and of its shape.
    pub fn slurm(&self) -> Option<Slurm> {
        section(self, "slurm")
    }

    /// `slurm.job_id` as digits (a string, or an integer written as one).
    pub fn slurm_job_id(&self) -> Option<String> {
        job_id_text(self.get_path(&["slurm", "job_id"])?)
    }

    /// `storage` as typed.
    pub fn storage(&self) -> Option<Storage> {
        section(self, "storage")
    }

    /// `resources` as typed.
    pub fn resources(&self) -> Option<Resources> {
        section(self, "resources")
    }

    /// `script.resources`: the plan tao-render wrote, as typed.
    pub fn plan(&self) -> Option<Effective> {
        let v = self.get_path(&["script", "resources"])?;
        serde_json::from_value(v.clone()).ok()
    }

    /// `state`, if it is a word of the vocabulary.
    pub fn state(&self) -> Option<State> {
        self.get_str(&["state"]).and_then(State::parse)
    }

    /// The job's [`Layout`], from `id` and `storage.job_dir`.
    pub fn layout(&self) -> Option<Layout> {
        Some(Layout::new(
            self.id()?,
            self.get_str(&["storage", "job_dir"])?,
        ))
    }

    /// Stamp an observation: `state`, `message` (left as it is when
    /// `None`), `observed_at` (RFC 3339 UTC, `at`) and `observed_by`
    /// (`tool`), in place, so the keys keep their places.
    pub fn stamp(&mut self, state: State, message: Option<&str>, tool: &str, at: &str) {
        self.set_str_field("state", state.as_str());
        if let Some(m) = message {
            self.set_str_field("message", m);
        }
        self.set_str_field("observed_at", at);
        self.set_str_field("observed_by", tool);
    }

    /// Set the top-level string field `key` to `v`, in place: a field
    /// that already holds `v` is left as it is, one that holds another
    /// value is overwritten where it stands, a missing one is appended
    /// (no allocation for a key that is there: 10,000-line polls stamp
    /// every line).
    fn set_str_field(&mut self, key: &str, v: &str) {
        match self.fields.get_mut(key) {
            Some(Value::String(s)) if s == v => {}
            Some(Value::String(s)) => {
                s.clear();
                s.push_str(v);
            }
            Some(other) => *other = Value::String(v.into()),
            None => {
                self.fields.insert(key.into(), Value::String(v.into()));
            }
        }
    }

    /// [`JobLine::stamp`] at the current time ([`crate::time::now_rfc3339`]).
    pub fn stamp_now(&mut self, state: State, message: Option<&str>, tool: &str) {
        let at = crate::time::now_rfc3339();
        self.stamp(state, message, tool, &at);
    }
}

/// One row of the job-line field table: tao-jobline(7) FIELDS is made of
/// these, so the page lists what the model types.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Field {
    /// Dotted path (`slurm.job_id`); `a, b` for fields documented together.
    pub path: &'static str,
    /// JSON type as the model reads it.
    pub ty: &'static str,
    /// Unit or form, empty when none.
    pub unit: &'static str,
    /// The tools that set it.
    pub writer: &'static str,
    /// What it means.
    pub meaning: &'static str,
}

const fn f(
    path: &'static str,
    ty: &'static str,
    unit: &'static str,
    writer: &'static str,
    meaning: &'static str,
) -> Field {
    Field {
        path,
        ty,
        unit,
        writer,
        meaning,
    }
}

/// The job-line fields, in line order (tao-jobline(7) FIELDS). A test
/// checks that every path here is a typed field of [`Job`].
pub const FIELDS: &[Field] = &[
    f("id", "string", "[a-z0-9-]{1,64}", "tao-record open", "The record id, e.g. tao-20261129-k3f9x2; also the Slurm job name."),
    f("platform", "string", "", "tao-record open", "\"slurm\"."),
    f("action", "string", "", "tao-record open", "The TAO action (train, evaluate, inference, export, ...: a name tao-record(1) --action knows, or another of lowercase letters, digits and _, opened with a note; a near miss of a known one is refused)."),
    f("network_arch", "string", "", "tao-record open", "The network architecture (dino)."),
    f("image", "string or null", "", "tao-record open", "As given: /abs/x.sqsh, registry#image:tag, docker://registry#image:tag or registry/image:tag; null for runtime none."),
    f("runtime", "string", "", "tao-record open", "\"pyxis\" (srun --container-image, the default on real clusters) or \"none\" (plain srun)."),
    f("command", "string", "", "tao-record open", "Shell text run in the container; only {config_path}, {job_id} and {results_dir} are bound."),
    f("resources.nodes", "integer", "nodes", "tao-record open", "Node count, at least 1, at most the largest max_nodes of the partitions (site profile)."),
    f("resources.gpus_per_node", "integer", "GPUs", "tao-record open", "GPUs per node (0: a CPU job); at or above the profile's max_gpus_per_node the node count is derived from the total; a total no partition can hold is refused."),
    f("resources.cpus_per_task", "integer", "CPUs", "tao-record open", "CPUs per task, at least 1 and at most the partition's cpus_per_node (site profile); default 16, or cpus_per_node when smaller."),
    f("resources.time", "string", "Slurm time", "tao-record open", "Wall time (HH:MM:SS and the other Slurm forms), within the partition's max_time."),
    f("resources.child_timeout", "string or null", "Slurm time", "tao-record open", "How long the command may run, below the wall time; null under an unlimited time."),
    f("resources.partition", "string", "", "tao-record open", "Partition or comma list of partitions."),
    f("resources.account", "string or null", "", "tao-record open", "Slurm account."),
    f("resources.exclusive", "boolean", "", "tao-record open", "Whole nodes."),
    f("resources.requeue", "boolean", "", "tao-record open", "Whether Slurm may requeue the job."),
    f("resources.exclude", "array of strings", "node names", "tao-record open, tao-record retry", "Nodes not to run on (names or ranges)."),
    f("resources.mem", "string or null", "sbatch --mem", "tao-record open", "Memory per node (64G), at most the partition's mem_per_node (site profile)."),
    f("storage.tier", "string", "", "tao-record open", "Storage tier."),
    f("storage.base_dir", "string", "absolute path", "tao-record open", "SLURM_BASE_RESULTS_DIR."),
    f("storage.job_dir", "string", "absolute path", "tao-record open", "<base>/jobs/<id>."),
    f("storage.results_dir", "string", "absolute path", "tao-record open", "<base>/results/<id>."),
    f("spec.name", "string", "file name", "tao-record open --spec", "Staged to <job_dir>/specs/<name>, which is {config_path}."),
    f("spec.text", "string", "", "tao-record open --spec", "The spec's text."),
    f("spec.sha256", "string", "hex SHA-256", "tao-record open --spec", "Checksum of spec.text."),
    f("mounts", "array of strings", "/src:/dst", "tao-record open", "Pyxis --container-mounts."),
    f("env", "object of strings", "", "tao-record open", "{NAME: value}, non-secret; not a reserved name (RESERVED NAMES below), not a name that looks like a secret (*TOKEN*, *SECRET*, *PASSWORD*, *_KEY, ...), not a name also in secrets."),
    f("secrets", "array of strings", "variable names", "tao-record open", "[\"HF_TOKEN\", ...]: names only, never values. The job sources them from a sidecar before its steps, so a name may not be reserved (RESERVED NAMES below)."),
    f("execution.pre_commands", "array of strings", "", "tao-record open --execution", "Shell text run before the command."),
    f("execution.command", "string", "", "tao-record open --execution", "The command."),
    f("execution.post_commands", "array of objects", "", "tao-record open --execution", "[{command, scope: all|leader}] run after the command."),
    f("execution.launcher", "string or null", "", "tao-record open --execution", "torchrun or null."),
    f("execution.supporting_files", "array of objects", "", "tao-record open --execution", "[{source, local_path, sha256, size (bytes)}]; tao-submit verifies each file's sha256 and stages it to <job_dir>/inputs/action-helpers/<source>; the script exports TAO_ACTION_HELPERS."),
    f("script.template", "string", "", "tao-render", "single, multi, convert or probe."),
    f("script.sha256", "string", "hex SHA-256", "tao-render", "Checksum of script.text."),
    f("script.text", "string", "", "tao-render", "The sbatch script."),
    f("script.bindings", "object", "", "tao-render", "{config_path, job_id, results_dir, config_sha256, bundle_sha256}: the bound values."),
    f("script.image", "object", "", "tao-render", "{given, normalised, sqsh, needs_conversion}: how the image resolved (runtime pyxis)."),
    f("script.resources", "object", "", "tao-render", "The effective plan after the rules {nodes, gpus_per_node, cpus_per_task, time (canonical), child_timeout_s (seconds, 0: none), partition, exclusive, requeue}; tao-submit submits this plan and does not plan again."),
    f("script.container", "object", "", "tao-render", "{image (the .sqsh), mounts (comma-joined, the base-dir mount included)}: the container of a runtime pyxis job; tao-submit's communication probe runs in it."),
    f("lint.ok", "boolean", "", "tao-redact lint", "Whether the script passed."),
    f("lint.sha256", "string", "hex SHA-256", "tao-redact lint", "Checksum of the approved script.text."),
    f("lint.findings", "array of objects", "", "tao-redact lint", "[{rule, line, column, preview}]; the preview is masked."),
    f("slurm.job_id", "string", "digits", "tao-submit", "The Slurm job id (an integer is read too)."),
    f("slurm.cluster", "string or null", "", "tao-submit", "The cluster, on multi-cluster setups."),
    f("slurm.login_host", "string", "host[:port]", "tao-submit, tao-poll", "The login host that answered."),
    f("slurm.native_state", "string or null", "", "tao-poll, tao-submit", "Slurm's own state word (SLURM STATES below)."),
    f("slurm.reason", "string", "", "tao-poll", "Slurm's reason."),
    f("slurm.exit_code", "string", "exit:signal", "tao-poll", "\"0:0\"."),
    f("slurm.nodes", "string", "node list", "tao-poll", "The nodes the job ran on."),
    f("slurm.submit_time", "string", "RFC 3339 UTC", "tao-poll", "When it was submitted."),
    f("slurm.start_time", "string", "RFC 3339 UTC", "tao-poll", "When it started."),
    f("slurm.end_time", "string", "RFC 3339 UTC", "tao-poll", "When it ended."),
    f("slurm.restart_count", "integer", "", "tao-poll", "Times Slurm requeued it."),
    f("slurm.dependency", "string", "afterok:<slurm job id>", "tao-submit", "The image conversion job this job waits for."),
    f("probe", "object", "", "tao-submit", "{env (the NCCL variables the job carries, or null), cached, skipped (booleans), probe_job_ids, tried}: the communication probe before a multi-node or multi-GPU job."),
    f("preflight", "object", "", "tao-submit preflight", "{ok, login_host, checks [...]}: the cluster checks."),
    f("state", "string", "", "tao-record, tao-submit, tao-poll, tao-classify", "One word of the vocabulary below."),
    f("message", "string", "", "tao-poll, tao-submit", "The native sub-state and why, e.g. PENDING (Priority), SUSPENDED, FAILED exit 1:0."),
    f("observed_at", "string", "RFC 3339 UTC", "any tool that sets state", "When; tao-record refuses an observation older than the last one it recorded."),
    f("observed_by", "string", "", "any tool that sets state", "The tool's name."),
    f("evidence", "object", "", "tao-poll --evidence", "{out: {first_line, lines}, err: {...}}: redacted tails of main.out and main.err."),
    f("progress", "object or null", "", "tao-poll", "Set for running and ended jobs whose results_dir holds a status.json with epoch or KPI records (TAO's status logger); absent otherwise (null when an earlier poll had set it), never made up. Read from the end of the file, whatever its size, in the same remote command as squeue and sacct (one per login host): a job squeue calls RUNNING (or ended other than COMPLETED) gets its last 2 lines, a COMPLETED one its last 4 KiB; when a running job's last lines hold no epoch record, the previous poll's progress stays. history is carried on from the previous poll's. A running job's status.json whose size and mtime equal file_size and file_mtime_s is stat'ed, not read again: progress stays as it is."),
    f("progress.epoch, progress.max_epoch", "integer", "epochs", "tao-poll", "The latest epoch and the epochs in all."),
    f("progress.percent", "number", "0-100", "tao-poll", "Share done."),
    f("progress.eta_s, progress.time_per_epoch_s", "number", "seconds", "tao-poll", "Time to the end, time per epoch."),
    f("progress.kpi", "object", "", "tao-poll", "The latest kpi object as written."),
    f("progress.history", "object", "", "tao-poll", "{name: [up to 12 latest values, one per epoch]}."),
    f("progress.updated_at", "string", "RFC 3339 UTC", "tao-poll", "The file's mtime (the one zoned time: TAO's records carry the node's local time without a zone)."),
    f("progress.file_size", "integer", "bytes", "tao-poll", "status.json's size when progress was read. With file_mtime_s, sent back by the next poll: a running job's file whose size and mtime are both unchanged is not read again and progress stays as it is."),
    f("progress.file_mtime_s", "integer", "seconds since the Unix epoch", "tao-poll", "status.json's mtime when progress was read (whole seconds)."),
    f("pending", "object or null", "", "tao-poll", "Set while a job is PENDING; null once it is not."),
    f("pending.reason", "string", "", "tao-poll", "Slurm's code."),
    f("pending.words", "string", "", "tao-poll", "What it means."),
    f("pending.clears", "boolean", "", "tao-poll", "False when the job waits until someone acts."),
    f("pending.action", "string", "", "tao-poll", "What to do, for those."),
    f("pending.expected_start", "string or null", "RFC 3339 UTC", "tao-poll", "From squeue --start, or null when Slurm has no estimate."),
    f("classification.class", "string", "", "tao-classify", "infra, program, scheduler or unknown."),
    f("classification.subclass", "string", "", "tao-classify", "Finer class."),
    f("classification.rule", "string", "", "tao-classify", "The rule that matched."),
    f("classification.evidence", "object", "", "tao-classify", "{file, line, text}: the matched line, redacted."),
    f("classification.node", "string or null", "", "tao-classify", "The blamed node."),
    f("classification.retry", "boolean", "", "tao-classify", "Whether a retry may help."),
    f("classification.reason", "string", "", "tao-classify", "Why."),
    f("classification.fallback", "object", "", "tao-classify", "{score, threshold}: present when no rule matched; the evidence fallback's score (0-1) that the log is the cluster's fault; above the threshold it decided (rule fallback, infra, retried)."),
    f("retry_of", "string", "record id", "tao-record open --retry-of", "The parent id."),
    f("retried_by", "string", "record id", "tao-record retry", "The child id (in the parent)."),
    f("attempt", "integer", "", "tao-record open", "The attempt number (1 for a first try)."),
    f("error", "object", "", "any tool", "{tool, code, message}: this line failed in that tool."),
];

#[cfg(test)]
mod tests {
    use super::*;
    use proptest::prelude::*;

    const FULL: &str = r##"{"zz":0,"id":"tao-x","platform":"slurm","action":"train","network_arch":"dino","image":null,"runtime":"none","command":"true","resources":{"nodes":1,"q":[1],"gpus_per_node":0,"cpus_per_task":1,"time":"00:10:00","child_timeout":"00:09:30","partition":"gpu","account":null,"exclusive":false,"requeue":true,"exclude":[],"mem":null},"storage":{"tier":"lustre","base_dir":"/b","job_dir":"/b/jobs/tao-x","results_dir":"/b/results/tao-x"},"mounts":[],"env":{"B":"1","A":"2"},"secrets":[],"attempt":1,"state":"RUNNING","observed_at":"2026-12-01T00:00:00Z","observed_by":"tao-poll","script":{"template":"single","sha256":"ab","text":"#!/bin/bash\n","bindings":{"job_id":"tao-x"},"resources":{"nodes":1,"gpus_per_node":0,"cpus_per_task":1,"time":"00:10:00","child_timeout_s":570,"partition":"gpu","exclusive":false,"requeue":true}},"lint":{"ok":true,"sha256":"ab","findings":[]},"slurm":{"job_id":"42","login_host":"h:22","x":{"b":1,"a":2},"native_state":"RUNNING","restart_count":0},"message":"RUNNING","progress":{"epoch":3,"percent":30.0,"eta_s":420,"kpi":{"loss":0.5}},"pending":null,"a":"last"}"##;

    #[test]
    fn a_full_line_round_trips_byte_for_byte() {
        let line = JobLine::parse(FULL, 1).unwrap();
        let job = Job::from_line(&line).unwrap();
        assert_eq!(job.to_line().to_json(), FULL);
        assert_eq!(job.slurm.as_ref().unwrap().job_id().as_deref(), Some("42"));
        assert_eq!(job.extra.keys().collect::<Vec<_>>(), ["zz", "a"]);
        assert_eq!(
            job.resources.as_ref().unwrap().extra["q"],
            serde_json::json!([1])
        );
        assert_eq!(job.state, Some(State::Running));
    }

    #[test]
    fn a_field_cleared_stays_in_place_and_a_new_one_goes_last() {
        let line =
            JobLine::parse(r#"{"id":"a","slurm":{"reason":"x","job_id":"1"},"z":1}"#, 1).unwrap();
        let mut job = Job::from_line(&line).unwrap();
        let s = job.slurm.as_mut().unwrap();
        s.reason = None;
        s.nodes = Some("n1".into());
        assert_eq!(
            job.to_line().to_json(),
            r#"{"id":"a","slurm":{"reason":null,"job_id":"1","nodes":"n1"},"z":1}"#
        );
    }

    #[test]
    fn a_field_of_the_wrong_shape_names_itself() {
        let line = JobLine::parse(r#"{"resources":{"nodes":"two"}}"#, 7).unwrap();
        let e = Job::from_line(&line).unwrap_err().to_string();
        assert!(
            e.starts_with("line 7:") && e.contains("invalid type"),
            "{e}"
        );
    }

    #[test]
    fn every_field_of_the_table_is_typed() {
        // Build a line with every table path set to a value of its type;
        // nothing may land in an `extra` map.
        let mut line = JobLine::new();
        for fld in FIELDS {
            for path in fld.path.split(", ") {
                let v = match fld.ty.split(' ').next().unwrap() {
                    "integer" => serde_json::json!(1),
                    "number" => serde_json::json!(1.5),
                    "boolean" => serde_json::json!(true),
                    "array" if fld.ty.ends_with("strings") => serde_json::json!(["x"]),
                    "array" => serde_json::json!([]),
                    "object" => serde_json::json!({}),
                    _ if path == "state" => serde_json::json!("RUNNING"),
                    _ => serde_json::json!("x"),
                };
                let parts: Vec<&str> = path.split('.').collect();
                if line.get_path(&parts).is_none() {
                    line.set_path(&parts, v);
                }
            }
        }
        let job = Job::from_line(&line).unwrap();
        assert!(job.extra.is_empty(), "{:?}", job.extra);
        let v = serde_json::to_value(&job.value).unwrap();
        for (k, sec) in v.as_object().unwrap() {
            if let Some(o) = sec.as_object() {
                let listed = FIELDS.iter().any(|f| f.path.starts_with(&format!("{k}.")));
                if listed {
                    for sub in o.keys() {
                        let p = format!("{k}.{sub}");
                        assert!(
                            FIELDS.iter().any(|f| f.path.split(", ").any(|x| x == p)),
                            "{p} is typed but not in FIELDS"
                        );
                    }
                }
            }
        }
        assert_eq!(job.to_line().to_json(), line.to_json());
    }

    #[test]
    fn order_like_takes_the_line_order_and_keeps_the_rest_in_place() {
        let mut rec = JobLine::parse(r#"{"id":1,"history":[],"state":2,"slurm":3}"#, 1)
            .unwrap()
            .fields;
        let line = JobLine::parse(r#"{"x":0,"id":1,"y":0,"state":2,"slurm":3,"z":0}"#, 1)
            .unwrap()
            .fields;
        for k in ["x", "y", "z"] {
            rec.insert(k.into(), Value::from(0));
        }
        order_like(&mut rec, &line);
        assert_eq!(
            serde_json::to_string(&rec).unwrap(),
            r#"{"x":0,"id":1,"history":[],"y":0,"state":2,"slurm":3,"z":0}"#
        );
    }

    #[test]
    fn layout_spells_every_path_once() {
        let l = Layout::new("tao-x", "/b/jobs/tao-x/");
        assert_eq!(l.log_dir("42"), "/b/jobs/tao-x/slurm-logs/tao-x-42");
        assert_eq!(l.secrets_file(), "/b/jobs/tao-x/env/secrets.env");
        assert_eq!(l.sbatch_file(), "/b/jobs/tao-x/sbatch/job_tao-x.sbatch");
        assert_eq!(
            l.action_helpers_dir(),
            "/b/jobs/tao-x/inputs/action-helpers"
        );
        assert_eq!(Layout::job_dir("/b/", "tao-x"), "/b/jobs/tao-x");
        assert_eq!(Layout::results_dir("/b", "tao-x"), "/b/results/tao-x");
    }

    #[test]
    fn stamp_keeps_places() {
        let mut l = JobLine::parse(r#"{"state":"PENDING","x":1,"observed_by":"a"}"#, 1).unwrap();
        l.stamp(
            State::Running,
            Some("RUNNING"),
            "tao-poll",
            "2026-12-01T00:00:00Z",
        );
        assert_eq!(
            l.to_json(),
            r#"{"state":"RUNNING","x":1,"observed_by":"tao-poll","message":"RUNNING","observed_at":"2026-12-01T00:00:00Z"}"#
        );
        assert_eq!(l.state(), Some(State::Running));
    }

    fn scalar() -> impl Strategy<Value = Value> {
        prop_oneof![
            Just(Value::Null),
            any::<bool>().prop_map(Value::Bool),
            any::<i64>().prop_map(|n| serde_json::json!(n)),
            (-1e9f64..1e9).prop_map(|n| serde_json::json!(n)),
            "[a-z\\n\"é ]{0,8}".prop_map(Value::String),
        ]
    }

    fn extra_value() -> impl Strategy<Value = Value> {
        scalar().prop_recursive(2, 8, 3, |inner| {
            prop_oneof![
                prop::collection::vec(inner.clone(), 0..3).prop_map(Value::Array),
                prop::collection::vec(("[a-z_]{1,6}", inner), 0..3)
                    .prop_map(|kv| Value::Object(kv.into_iter().collect())),
            ]
        })
    }

    /// Insert `extras` into `m` at generated places; names that the model
    /// knows are prefixed so they stay unknown.
    fn sprinkle(m: &mut Map<String, Value>, extras: Vec<(usize, String, Value)>) {
        for (at, k, v) in extras {
            let k = format!("x_{k}");
            if m.contains_key(&k) {
                continue;
            }
            let mut items: Vec<(String, Value)> = std::mem::take(m).into_iter().collect();
            let at = at % (items.len() + 1);
            items.insert(at, (k, v));
            *m = items.into_iter().collect();
        }
    }

    fn extras() -> impl Strategy<Value = Vec<(usize, String, Value)>> {
        prop::collection::vec((any::<usize>(), "[a-z_]{1,6}", extra_value()), 0..4)
    }

    proptest! {
        #![proptest_config(crate::testing::config(256))]
        /// A line the model reads (here: FULL with keys dropped, nulled,
        /// and unknown keys added at any place, at the top and in every
        /// section) is written back byte-identical.
        #[test]
        fn lines_round_trip(
            drop in prop::collection::vec(any::<bool>(), 40),
            top in extras(),
            inner in prop::collection::vec(extras(), 12),
        ) {
            let mut m = JobLine::parse(FULL, 1).unwrap().fields;
            let keys: Vec<String> = m.keys().cloned().collect();
            for (k, d) in keys.iter().zip(drop.iter()) {
                if *d { m.shift_remove(k); }
            }
            let mut inner = inner.into_iter();
            for (_, v) in m.iter_mut() {
                if let Value::Object(o) = v {
                    sprinkle(o, inner.next().unwrap_or_default());
                }
            }
            sprinkle(&mut m, top);
            let line = JobLine::from_map(m);
            let text = line.to_json();
            let job = Job::from_line(&JobLine::parse(&text, 1).unwrap()).unwrap();
            prop_assert_eq!(job.to_line().to_json(), text);
        }
    }
}
