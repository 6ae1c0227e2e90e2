//! Seventh classify round of issue 14: families by emitter. Each line is
//! built from the emitting software's own format string named in the rule's
//! `source` (NCCL, Slurm, Pyxis, Enroot, the Linux kernel, PyTorch), with
//! the `%s`/`%d` filled in, not copied from a corpus record.

use serde_json::json;
use tao_classify::{classify, Catalogue, Class, Options};
use tao_core::JobLine;

/// Classify a FAILED job line whose `err` tail is `err`: (rule, class, retry).
fn failed(err: &[&str]) -> (String, Class, bool) {
    let cat = Catalogue::builtin().unwrap();
    let value = json!({
        "id": "tao-20261205-c7test",
        "state": "ERROR",
        "slurm": {"native_state": "FAILED", "exit_code": "1:0", "nodes": "node001"},
        "attempt": 1,
        "evidence": {"out": {"first_line": 1, "lines": []}, "err": {"first_line": 1, "lines": err}},
    });
    let mut line = JobLine::parse(&value.to_string(), 1).unwrap();
    let c = classify(&mut line, &cat, &Options::default().with_fallback(false))
        .unwrap()
        .unwrap();
    (c.rule, c.class, c.retry)
}

/// Every line of `lines` alone is decided by `rule` with `class`/`retry`.
fn each(rule: &str, class: Class, retry: bool, lines: &[&str]) {
    for l in lines {
        assert_eq!(failed(&[l]), (rule.to_string(), class, retry), "line: {l}");
    }
}

const NCCL: &str = "node001:1234:1290 [0] NCCL WARN";

#[test]
fn nccl_families_by_result_kind() {
    // The node's set-up: hardware or driver found wrong.
    each(
        "nccl.node_topology",
        Class::Infra,
        true,
        &[
            &format!("{NCCL} Detected mixed local Net device counts across ranks (min 4, max 8). Set NCCL_IGNORE_NET_MISMATCH=1 to ignore"),
            &format!("{NCCL} P2P is disabled between NVLINK connected GPUs 1 and 0. This should not be the case given their connectivity, and is probably due to a hardware issue."),
            &format!("{NCCL} NET/IB : mlx5_2:1 GID table changed"),
            &format!("{NCCL} NET/IB : No IP interface found."),
            &format!("{NCCL} Failed to open libnvidia-ml.so.1: libnvidia-ml.so.1: cannot open shared object file"),
        ],
    );
    // The interface filter the job's environment sets matched nothing.
    each(
        "nccl.interface_not_found",
        Class::Program,
        false,
        &[
            &format!("{NCCL} Bootstrap : no socket interface found"),
            &format!("{NCCL} NET/Socket : no interface found"),
            &format!("{NCCL} no device found matching eth9, verify NCCL_OOB_NET_IFNAME"),
        ],
    );
    // ncclInvalidUsage / ncclInvalidArgument kinds: the caller's.
    each(
        "nccl.usage_mismatch",
        Class::Program,
        false,
        &[
            &format!("{NCCL} Mismatched NCCL version detected : rank 0 version 21803 rank 4 version 22105"),
            &format!("{NCCL} Duplicate GPU detected : rank 0 and rank 1 both on CUDA device 1b000"),
            "ncclInvalidArgument: Invalid value for an argument.",
        ],
    );
    // The proxy's system error (2) is read like the trace lines; CUDA (1) is not.
    assert_eq!(
        failed(&[&format!(
            "{NCCL} [Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 2"
        )]),
        ("nccl.proxy_system_error".into(), Class::Infra, true)
    );
    assert_ne!(
        failed(&[&format!(
            "{NCCL} [Proxy Service 3] Failed to execute operation Setup from rank 3, retcode 1"
        )])
        .0,
        "nccl.proxy_system_error"
    );
    // A specific program line outranks the proxy symptom.
    assert_eq!(
        failed(&[
            "KeyError: 'input_ids'",
            &format!("{NCCL} [Proxy Service 3] Failed to execute operation Connect from rank 3, retcode 2"),
        ])
        .1,
        Class::Program
    );
    // shmutils' third failure: the mmap of the segment.
    assert_eq!(
        failed(&[&format!("{NCCL} Error: Could not map /dev/shm/nccl-Ab12 size 9637888, error: Cannot allocate memory (12)")]),
        ("nccl.node_setup".into(), Class::Infra, true)
    );
}

#[test]
fn slurm_step_setup_on_the_node_vs_the_jobs_exit() {
    each(
        "slurm.stepd_node_setup",
        Class::Infra,
        true,
        &[
            "slurmstepd: error: TMPDIR [/local/scratch] is not writeable",
            "slurmstepd: error: Failed to look up username for uid=1000, cannot continue with launch",
            "slurmstepd: error: prolog '/etc/slurm/prolog.sh' not found in PATH or CWD (/), or wrong permissions",
            "slurmstepd: error: common_cgroup_lock error: No such file or directory",
            "slurmstepd: error: task/cgroup: unable to add task[pid=1234] to memory cg '(null)'",
            "slurmstepd: error: Could not move slurmstepd pid 99 to a Slurm's delegated cgroup. Should be in /sys/fs/cgroup/system.slice/slurmstepd.scope, we are in /sys/fs/cgroup/user.slice.",
        ],
    );
    each(
        "slurm.spank_failure",
        Class::Infra,
        true,
        &[
            "slurmstepd: error: spank: Failed to open /etc/slurm/plugstack.conf.d/site.conf: No such file or directory",
            "srun: error: Task launch for StepId=123.0 failed on node node002: Spank plugin failure, node failed",
        ],
    );
    // Any plugin's error ends in these two lines, the job's option included:
    // they name no cause and decide nothing by themselves.
    for l in [
        "slurmstepd: error: spank: required plugin spank_pyxis.so: task_init() failed with rc=-1",
        "slurmstepd: error: Failed to invoke spank plugin stack",
    ] {
        assert_ne!(failed(&[l]).0, "slurm.spank_failure", "line: {l}");
    }
    each(
        "slurm.launch_io",
        Class::Infra,
        true,
        &[
            "slurmstepd: error: _send_launch_resp: Failed to send RESPONSE_LAUNCH_TASKS: Connection timed out",
            "slurmstepd: error: IO setup failed: Connection refused",
            "srun: error: Application launch failed: Connection refused",
        ],
    );
    // The job's own memory limit stays the program's (the current policy).
    assert_eq!(
        failed(&["slurmstepd: error: Detected 1 oom_kill event in StepId=123.batch. Some of the step tasks have been OOM Killed."]).1,
        Class::Program
    );
    // The step-completion symptom never outranks a specific program line.
    assert_eq!(
        failed(&[
            "ModuleNotFoundError: No module named 'apex'",
            "slurmstepd: error: Rank 0 failed sending step completion message directly to slurmctld, retrying",
        ])
        .1,
        Class::Program
    );
}

#[test]
fn pyxis_and_enroot_runtime_vs_image() {
    each(
        "container.pyxis_plumbing",
        Class::Infra,
        true,
        &[
            "slurmstepd: error: pyxis: failed to acquire container setup lock: Resource temporarily unavailable",
            "slurmstepd: error: pyxis: unable to open user namespace file: No such file or directory",
            "slurmstepd: error: pyxis: failed to parse configuration",
            "slurmstepd: error: pyxis: importer did not return a squashfs path",
        ],
    );
    each(
        "container.pyxis_job_request",
        Class::Program,
        false,
        &[
            "slurmstepd: error: pyxis: couldn't chdir to container cwd /workspace: No such file or directory",
            "slurmstepd: error: pyxis: could not add mount entry: /data:/data",
            "slurmstepd: error: pyxis: if the image has an unusual entrypoint, try using --no-container-entrypoint",
        ],
    );
    each(
        "container.enroot_host_tool",
        Class::Infra,
        true,
        &["[ERROR] Command not found: mksquashfs"],
    );
    each(
        "container.enroot_registry_reply",
        Class::Infra,
        true,
        &["[ERROR] Could not retrieve digest from https://registry.example/v2/library/ubuntu/manifests/22.04"],
    );
    each(
        "container.enroot_image_input",
        Class::Program,
        false,
        &[
            "[ERROR] No such file or directory: /home/user/images/pytorch.sqsh",
            "[ERROR] Invalid image format: /home/user/images/pytorch.tar",
            "[ERROR] Unsupported architecture: arm64",
        ],
    );
}

#[test]
fn kernel_families_on_gpu_and_storage_nodes() {
    each(
        "host.storage_device",
        Class::Infra,
        true,
        &[
            "[12345.678901] I/O error, dev sda, sector 123456 op 0x0:(READ) flags 0x0 phys_seg 1 prio class 0",
            "[12345.678901] nvme nvme0: controller is down; will reset: CSTS=0xffffffff, PCI_STATUS=0xffff",
            "[12345.678901] nvme nvme0: Removing after probe failure status: -19",
            "[12345.678901] XFS (dm-0): Filesystem has been shut down due to log error (0x2).",
            "[12345.678901] EXT4-fs (sda1): Remounting filesystem read-only",
            "[12345.678901] Aborting journal on device sda1-8.",
        ],
    );
    each(
        "ib.hca_health",
        Class::Infra,
        true,
        &[
            "[12345.678901] mlx5_core 0000:3b:00.0: poll_health:801:(pid 0): device's health compromised - reached miss count",
            "[12345.678901] mlx5_core 0000:3b:00.0: wait_func:1131:(pid 2): DESTROY_QP(0x501) timeout. Will cause a leak of a command resource",
            "[12345.678901] mlx4_core 0000:04:00.0: Internal error detected:",
        ],
    );
    each(
        "host.kernel_crash",
        Class::Infra,
        true,
        &[
            "[12345.678901] Kernel panic - not syncing: Fatal exception",
            "[12345.678901] NETDEV WATCHDOG: eth0 (ixgbe): transmit queue 3 timed out",
            "[12345.678901] EDAC skx MC3: HANDLING MCE MEMORY ERROR",
        ],
    );
    each(
        "nvrm.unsupported_gpu",
        Class::Infra,
        true,
        &["NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:20b0) installed in this system is not supported by the 535.54 NVIDIA driver release."],
    );
    // A corrected memory error names no failure.
    assert_eq!(
        failed(&[
            "[12345.678901] EDAC MC0: 1 CE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0"
        ])
        .0,
        "evidence.no_match"
    );
}

#[test]
fn pytorch_elastic_and_the_watchdogs_monitor() {
    each(
        "dist.elastic_state",
        Class::Infra,
        true,
        &["torch.distributed.elastic.rendezvous.api.RendezvousStateError: The rendezvous state is corrupt."],
    );
    // The heartbeat monitor fires on the same hung collective as the
    // watchdog: alone it stays the program's, as the watchdog line does.
    assert_eq!(
        failed(&["[rank0]:[E ProcessGroupNCCL.cpp:1316] [PG 0 Rank 0] Heartbeat monitor timed out! Process will be terminated after dumping debug info. workMetaList_.size()=1"]),
        ("nccl.watchdog_timeout".into(), Class::Program, false)
    );
}
