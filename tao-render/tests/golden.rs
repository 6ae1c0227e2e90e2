//! Golden tests: one snapshot per template and option (insta, checked in
//! under tests/snapshots/), each script also through `bash -n` and
//! `shellcheck -S warning`. Values are fake but of the real format.

mod common;

use common::*;
use serde_json::json;
use std::collections::BTreeMap;
use tao_script::{
    render_convert, render_line, render_probe, ConvertRequest, ProbeLauncher, ProbeRequest,
};

fn check(name: &str, text: &str) {
    lint_script(name, text);
    insta::assert_snapshot!(name, text);
}

#[test]
fn single_runtime_none_minimal() {
    let s = render_line(&jobline(&line()), &profile("local")).unwrap();
    assert_eq!(s.template, "single");
    assert_eq!(s.sha256, tao_core::sha256_hex(s.text.as_bytes()));
    check("single_none_minimal", &s.text);
}

#[test]
fn single_pyxis_registry_image_with_spec_env_mounts() {
    let mut l = line();
    l["runtime"] = json!("pyxis");
    l["image"] = json!("docker://nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt");
    l["command"] = json!("dino train -e {config_path} -r {results_dir} --name {job_id}");
    l["resources"]["partition"] = json!("polar,polar3");
    l["resources"]["account"] = json!("fake-account");
    l["resources"]["time"] = json!("240");
    l["resources"]["child_timeout"] = json!(null);
    l["spec"] = json!({"name": "spec.yaml", "text": "train:\n  epochs: 1\n", "sha256": null});
    l["mounts"] = json!(["/lustre/fake/datasets:/datasets:ro"]);
    l["env"] = json!({"HF_HOME": "/lustre/fake/hf cache", "NOTE": "it's $(not run)"});
    l["secrets"] = json!(["HF_TOKEN"]);
    let s = render_line(&jobline(&l), &profile("cs-oci-ord")).unwrap();
    let image = s.image.as_ref().unwrap();
    assert_eq!(
        image.normalised.as_deref(),
        Some("nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt")
    );
    assert_eq!(image.needs_conversion, Some(true));
    assert!(image
        .sqsh
        .as_deref()
        .unwrap()
        .starts_with("/lustre/fake/tao/images/nvcr.io_nvidia_tao_tao-toolkit_5.5.0-pyt-"));
    let b = s.bindings.as_ref().unwrap();
    assert_eq!(
        b.config_path.as_deref(),
        Some("/lustre/fake/tao/jobs/tao-20261129-k3f9x2/specs/spec.yaml")
    );
    assert_eq!(
        b.config_sha256.as_deref(),
        Some(tao_core::sha256_hex(b"train:\n  epochs: 1\n").as_str())
    );
    check("single_pyxis_registry", &s.text);
}

#[test]
fn single_lifecycle_with_torchrun_and_supporting_files() {
    let mut l = line();
    l["runtime"] = json!("pyxis");
    l["image"] = json!("/lustre/fake/images/custom.sqsh");
    l["execution"] = json!({
        "pre_commands": ["mkdir -p {results_dir}/cache", "python3 prep.py --job {job_id}"],
        "command": "train.py --config {config_path}",
        "post_commands": [
            {"command": "python3 export.py {results_dir}", "scope": "leader"},
            {"command": "sync", "scope": "all"}
        ],
        "launcher": "torchrun",
        "supporting_files": [
            {"source": "prep.py", "sha256": "a".repeat(64), "size": 10},
            {"source": "lib/export.py", "sha256": "b".repeat(64), "size": 20}
        ]
    });
    l["spec"] = json!({"name": "experiment.yaml", "text": "x: 1\n"});
    let s = render_line(&jobline(&l), &profile("local")).unwrap();
    let b = s.bindings.as_ref().unwrap();
    let bundle = format!(
        "{}  lib/export.py\n{}  prep.py\n",
        "b".repeat(64),
        "a".repeat(64)
    );
    assert_eq!(
        b.bundle_sha256.as_deref(),
        Some(tao_core::sha256_hex(bundle.as_bytes()).as_str())
    );
    assert_eq!(s.image.as_ref().unwrap().needs_conversion, Some(false));
    check("single_lifecycle", &s.text);
}

#[test]
fn single_options_no_requeue_exclusive_mem_exclude_account() {
    let mut l = line();
    l["resources"]["requeue"] = json!(false);
    l["resources"]["exclusive"] = json!(true);
    l["resources"]["mem"] = json!("2G");
    l["resources"]["exclude"] = json!(["n1", "n[3-4]"]);
    l["resources"]["account"] = json!("fake-account");
    l["resources"]["gpus_per_node"] = json!(0);
    let s = render_line(&jobline(&l), &profile("local")).unwrap();
    for want in [
        "#SBATCH --no-requeue\n",
        "#SBATCH --exclusive\n",
        "#SBATCH --mem=2G\n",
        "#SBATCH --exclude=n1,n[3-4]\n",
        "#SBATCH --account=fake-account\n",
    ] {
        assert!(s.text.contains(want), "{want}");
    }
    assert!(!s.text.contains("--gres"));
    assert!(!s.text.contains("#SBATCH --requeue"));
    check("single_options", &s.text);
}

#[test]
fn multi_from_the_gpu_rule() {
    // 16 GPUs on one node, per-node maximum 8: two exclusive nodes of 8.
    let mut l = line();
    l["resources"]["partition"] = json!("polar");
    l["resources"]["gpus_per_node"] = json!(16);
    l["runtime"] = json!("pyxis");
    l["image"] = json!("nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt");
    l["execution"] = json!({
        "pre_commands": [],
        "command": "dino train -e {config_path}",
        "post_commands": [{"command": "echo done", "scope": "leader"}],
        "launcher": null,
        "supporting_files": []
    });
    l["spec"] = json!({"name": "spec.yaml", "text": "train: {}\n"});
    let s = render_line(&jobline(&l), &profile("cs-oci-ord")).unwrap();
    assert_eq!(s.template, "multi");
    let r = s.resources.as_ref().unwrap();
    assert_eq!(
        (r.nodes, r.gpus_per_node, r.exclusive),
        (Some(2), Some(8), Some(true))
    );
    for want in [
        "#SBATCH --nodes=2\n",
        "#SBATCH --ntasks-per-node=1\n",
        "#SBATCH --ntasks=2\n",
        "#SBATCH --gres=gpu:8\n",
        "#SBATCH --wait-all-nodes=1\n",
        "#SBATCH --exclusive\n",
        "export MASTER_PORT=29500\n",
        "export NODE_RANK=\"${SLURM_NODEID:?}\"",
    ] {
        assert!(s.text.contains(want), "{want}");
    }
    check("multi_gpu_rule", &s.text);
}

#[test]
fn multi_is_a_strict_superset_of_single() {
    let mut l = line();
    let single = render_line(&jobline(&l), &profile("local")).unwrap().text;
    l["resources"]["nodes"] = json!(2);
    let multi = render_line(&jobline(&l), &profile("local")).unwrap().text;
    // Every line of the single script is in the multi script, in order,
    // except the node shape, the template name, the srun shape and the step
    // script's first line (which gains the per-node rank); blank lines aside.
    let mut m = multi.lines();
    for sl in single.lines() {
        if sl.trim().is_empty()
            || sl.starts_with("#SBATCH --nodes=1")
            || sl.starts_with("#SBATCH --ntasks=1")
            || sl.starts_with("# tao-render single")
            || sl.starts_with("tao_srun=(srun --nodes=1")
            || sl.starts_with("tao_step_script=")
        {
            continue;
        }
        assert!(m.any(|ml| ml == sl), "multi lacks single's line {sl:?}");
    }
    check("multi_local", &multi);
}

#[test]
fn convert_job_from_the_site_profile() {
    let req = ConvertRequest {
        id: "tao-convert-0123456789ab".into(),
        image: "nvcr.io/nvidia/tao/tao-toolkit:5.5.0-pyt".into(),
        base_dir: "/lustre/fake/tao".into(),
        job_dir: "/lustre/fake/tao/jobs/tao-convert-0123456789ab".into(),
        account: Some("fake-account".into()),
        force: false,
    };
    let s = render_convert(&req, &profile("cs-oci-ord")).unwrap();
    assert_eq!(s.template, "convert");
    for want in [
        "#SBATCH --partition=cpu_long\n",
        "#SBATCH --cpus-per-task=4\n",
        "#SBATCH --mem=7200M\n",
        "#SBATCH --time=0-02:00:00\n",
        "#SBATCH --no-requeue\n",
        "export TMPDIR=/tmp\n",
        "tao_uri='docker://nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt'\n",
    ] {
        assert!(s.text.contains(want), "{want}");
    }
    assert!(!s.text.contains("exclusive"));
    assert!(!s.text.contains("--gres"));
    check("convert_cs_oci_ord", &s.text);
}

fn probe_req() -> ProbeRequest {
    ProbeRequest {
        id: "tao-probe-20261129-ab12cd".into(),
        partition: "gpu".into(),
        account: None,
        nodes: 2,
        gpus_per_node: 4,
        cpus_per_task: 2,
        time: "00:10:00".into(),
        timeout_s: 120,
        job_dir: "/lustre/fake/tao/jobs/tao-probe-20261129-ab12cd".into(),
        program: "inputs/probe/allreduce.py".into(),
        args: vec![],
        launcher: ProbeLauncher::Torchrun,
        nccl_env: BTreeMap::new(),
        image: None,
        mounts: vec![],
        exclude: vec![],
    }
}

#[test]
fn probe_under_torchrun() {
    let s = render_probe(&probe_req()).unwrap();
    assert_eq!(s.template, "probe");
    assert!(s.text.contains("tao_child_timeout='120'\n"));
    check("probe_torchrun", &s.text);
}

#[test]
fn probe_with_nccl_knobs_pyxis_and_a_launcher() {
    let mut req = probe_req();
    req.nccl_env = BTreeMap::from([
        ("NCCL_P2P_DISABLE".to_string(), "1".to_string()),
        ("NCCL_SOCKET_IFNAME".to_string(), "eth0".to_string()),
    ]);
    req.launcher = ProbeLauncher::Command(vec!["python3".into(), "-u".into()]);
    req.args = vec!["--size".into(), "1024".into()];
    req.image = Some("/lustre/fake/tao/images/probe.sqsh".into());
    req.mounts = vec!["/lustre/fake/tao:/lustre/fake/tao".into()];
    req.exclude = vec!["n3".into()];
    let s = render_probe(&req).unwrap();
    assert!(s.text.contains("export 'NCCL_P2P_DISABLE'='1'\n"));
    check("probe_knobs_pyxis", &s.text);
}

#[test]
fn job_line_output_shape() {
    let mut l = line();
    l["spec"] = json!({"name": "spec.yaml", "text": "a: 1\n"});
    let out = run_bin(&["--site-profile", "local"], &format!("{l}\n"));
    assert_eq!(
        out.status.code(),
        Some(0),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    let mut v: serde_json::Value = serde_json::from_slice(&out.stdout).unwrap();
    // The script text has its own snapshot; keep the envelope readable.
    v["script"]["text"] = json!("<text>");
    insta::assert_snapshot!("job_line_output", serde_json::to_string_pretty(&v).unwrap());
}

#[test]
fn probe_request_follows_the_job_line() {
    let mut l = line();
    l["resources"]["partition"] = json!("polar");
    l["resources"]["gpus_per_node"] = json!(16);
    l["resources"]["account"] = json!("fake-account");
    l["resources"]["exclude"] = json!(["n[1,3]"]);
    l["runtime"] = json!("pyxis");
    l["image"] = json!("nvcr.io#nvidia/tao/tao-toolkit:5.5.0-pyt");
    l["mounts"] = json!(["/lustre/fake/datasets:/datasets:ro"]);
    let jl = jobline(&l);
    let p = profile("cs-oci-ord");
    assert!(tao_script::needs_probe(&jl, &p).unwrap());
    let req = tao_script::probe_request_for_line(
        &jl,
        &p,
        "tao-20261129-k3f9x2-probe1",
        "probe/allreduce.py",
    )
    .unwrap();
    assert_eq!((req.nodes, req.gpus_per_node), (2, 8));
    assert_eq!(req.partition, "polar");
    assert_eq!(req.account.as_deref(), Some("fake-account"));
    assert_eq!(req.exclude, vec!["n[1,3]".to_string()]);
    assert_eq!(
        req.job_dir,
        "/lustre/fake/tao/jobs/tao-20261129-k3f9x2-probe1"
    );
    assert!(req
        .image
        .as_deref()
        .unwrap()
        .starts_with("/lustre/fake/tao/images/nvcr.io_nvidia"));
    assert_eq!(
        req.mounts,
        vec![
            "/lustre/fake/datasets:/datasets:ro".to_string(),
            "/lustre/fake/tao:/lustre/fake/tao".to_string()
        ]
    );
    let s = render_probe(&req).unwrap();
    assert!(s.text.contains("#SBATCH --exclude=n[1,3]\n"));
    assert!(s.text.contains("#SBATCH --nodes=2\n") && s.text.contains("#SBATCH --gres=gpu:8\n"));
    lint_script("probe_for_line", &s.text);

    let mut one = line();
    one["resources"]["gpus_per_node"] = json!(1);
    assert!(!tao_script::needs_probe(&jobline(&one), &profile("local")).unwrap());
}
