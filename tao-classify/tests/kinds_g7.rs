//! Seventh round of issue 14: the rule kinds added for the g7 records.
//! Each line is built from the message format in the rule's `source` (the
//! emitting software's own format strings and documents), not copied from a
//! corpus record; the multi-line cases check the precedence bands of
//! `rules/builtin.toml` between a cause and the lines around it.

use tao_classify::catalogue::{Catalogue, Class};
use tao_classify::scan::scan_lines;

/// The rule id that decides `lines` read together (None when nothing matches).
fn decide(lines: &[&str]) -> Option<String> {
    let cat = Catalogue::builtin().unwrap();
    let best = scan_lines(&cat, "err", 1, lines.iter().copied());
    best.0.map(|h| cat.rules()[h.rule].spec.id.clone())
}

fn assert_rule(lines: &[&str], want: &str) {
    assert_eq!(decide(lines).as_deref(), Some(want), "{lines:?}");
}

fn class_of(id: &str) -> Class {
    let cat = Catalogue::builtin().unwrap();
    cat.rules()
        .iter()
        .find(|r| r.spec.id == id)
        .unwrap_or_else(|| panic!("no rule {id}"))
        .spec
        .class
}

#[test]
fn slurm_services_and_node_setup_are_the_clusters() {
    assert_rule(&["sacct: error: slurm_persist_conn_open_without_init: failed to open persistent connection to host:dbd01:6819: Connection refused"], "slurm.dbd_unreachable");
    assert_rule(
        &["sacct: error: Problem talking to the database: Connection refused"],
        "slurm.dbd_unreachable",
    );
    assert_rule(&["error: Could not open node authentication key /etc/slurm/slurm.key: No such file or directory"], "slurm.auth_key");
    assert_rule(
        &["slurmctld: error: Unable to resolve \"node003\": Unknown host"],
        "slurm.node_name_resolution",
    );
    assert_rule(
        &["error: _forward_thread: can't find address for host node002, check slurm.conf"],
        "slurm.node_name_resolution",
    );
    assert_rule(
        &["slurmctld: error: Batch completion for JobId=4242 sent from wrong node (node002 rather than node001)."],
        "slurm.node_name_resolution",
    );
    // Slurm's full line ends "Was the job requeued due to node failure?", which
    // slurm.node_down (96) also reads: the cluster's either way.
    let full = decide(&["slurmctld: error: Batch completion for JobId=4242 sent from wrong node (node002 rather than node001). Was the job requeued due to node failure?"]).unwrap();
    assert_eq!(class_of(&full), Class::Infra);
    assert_rule(&["slurmd: error: Node configuration differs from hardware: CPUs=4:8(hw) Boards=1:1(hw) SocketsPerBoard=2:1(hw) CoresPerSocket=1:4(hw) ThreadsPerCore=2:2(hw)"], "slurm.node_config_mismatch");
    assert_rule(
        &["salloc: PrologSlurmctld failed, job killed"],
        "slurm.prolog_slurmctld",
    );
    assert_rule(&["unmunge: Error: Rewound credential"], "munge.credential");
    // Slurm's own wording of the same munge error stays slurm.auth.
    assert_rule(
        &["error: Munge decode failed: Expired credential"],
        "slurm.auth",
    );
}

#[test]
fn a_node_config_warning_yields_to_the_programs_own_error() {
    // 46: below the program's specific errors, above generic exception lines.
    assert_rule(
        &[
            "slurmd: error: Node configuration differs from hardware: CPUs=2:4(hw) Boards=1:1(hw) SocketsPerBoard=2:1(hw) CoresPerSocket=1:2(hw) ThreadsPerCore=1:2(hw)",
            "ModuleNotFoundError: No module named 'mmdet'",
        ],
        "python.import",
    );
    assert_rule(
        &[
            "slurmd: error: Node configuration differs from hardware: CPUs=2:4(hw) Boards=1:1(hw) SocketsPerBoard=2:1(hw) CoresPerSocket=1:2(hw) ThreadsPerCore=1:2(hw)",
            "RuntimeError: something went wrong",
        ],
        "slurm.node_config_mismatch",
    );
}

#[test]
fn container_runtimes_on_the_node_are_infra_and_user_permission_is_not() {
    assert_rule(&["docker: Cannot connect to the Docker daemon at unix:///var/run/docker.sock. Is the docker daemon running?."], "container.docker_daemon");
    assert_ne!(
        decide(&["docker: Got permission denied while trying to connect to the Docker daemon socket at unix:///var/run/docker.sock: dial unix /var/run/docker.sock: connect: permission denied."]).as_deref(),
        Some("container.docker_daemon")
    );
    assert_rule(
        &["Error: cannot set up namespace using \"/usr/bin/newuidmap\": exit status 1"],
        "container.podman_userns",
    );
    assert_rule(&["FATAL:   container creation failed: exec: \"/usr/bin/nvidia-container-cli\": stat /usr/bin/nvidia-container-cli: no such file or directory"], "container.nvccli_missing");
    // A bind target missing from the image is not the nvccli rule.
    assert_ne!(
        decide(&["FATAL:   container creation failed: mount /data->/data error: while mounting /data: destination /data doesn't exist in container"]).as_deref(),
        Some("container.nvccli_missing")
    );
}

#[test]
fn fabrics_gpus_clouds_and_batch_systems_from_their_sources() {
    assert_rule(
        &["flux-slingshot: cxi0: cxil_alloc_svc: Invalid argument"],
        "slingshot.cxi_service",
    );
    assert_rule(&["libfabric:1234:1700000000::cxi:core:cxip_cq_req_error_cb():120<warn> nid001: Request dest_addr: 42 caddr.nic: 0X2A caddr.pid: 0 error: 0x7f00 (err: 113, UNDELIVERABLE)"], "slingshot.cxi_undeliverable");
    assert_rule(
        &["node005.1234hfi_userinit: assign_context command failed: Network is down"],
        "opa.hfi_network_down",
    );
    // The job's own context count is not a link down.
    assert_eq!(
        decide(&["node005.1234hfi_userinit_internal: Warning: assign_context command failed: Device or resource busy"]),
        None
    );
    assert_rule(
        &["kernel: amdgpu 0000:0a:00.0: amdgpu: Failed to evict queue 3"],
        "gpu.amdgpu_queue_eviction",
    );
    assert_rule(
        &["HW Exception by GPU node-9 (Agent handle: 0x5ea5) reason :GPU Hang"],
        "gpu.rocr_hw_exception",
    );
    assert_rule(
        &["AzureMLCompute job failed. PreemptionError: Nodes of this job got pre-empted."],
        "cloud.preemption",
    );
    assert_rule(
        &["ERROR: Quota 'C2_CPUS' exceeded.  Limit: 0.0 in region us-central1."],
        "cloud.capacity",
    );
    assert_rule(&["An error occurred (InsufficientInstanceCapacity) when calling the RunInstances operation (reached max retries: 1)"], "cloud.capacity");
    assert_rule(
        &["kinit: Clock skew too great while getting initial credentials"],
        "time.kerberos_clock_skew",
    );
    assert_rule(
        &["make: warning:  Clock skew detected.  Your build may be incomplete."],
        "time.make_clock_skew",
    );
    assert_rule(
        &["request to copy stageout files failed on node 'node006/5' for job 1186.sched"],
        "batch.pbs_stageout",
    );
    assert_rule(&["can't get password entry for user \"user\". Either the user does not exist or NIS error!"], "batch.sge_passwd_lookup");
    assert_rule(
        &["024 (6509789.000.000) 03/27 15:12:51 Job reconnection failed"],
        "htcondor.execute_node_lost",
    );
    assert_rule(
        &["CEDAR:6001:Failed to connect to <10.0.0.1:9618>"],
        "htcondor.execute_node_lost",
    );
    assert_rule(
        &["sbatch: error: Batch script contains DOS line breaks (\\r\\n)"],
        "submit.rejected",
    );
    assert_eq!(class_of("submit.rejected"), Class::Scheduler);
}

#[test]
fn a_cloud_reclaim_yields_to_slurms_preemption_banner() {
    assert_rule(
        &[
            "Instance node-7 was preempted",
            "slurmstepd: error: *** JOB 77 ON node007 CANCELLED AT 2026-11-30T10:00:00 DUE TO PREEMPTION ***",
        ],
        "slurm.preempted",
    );
    // the submitit wording still reaches slurm.preempted through the new keyword
    assert_rule(
        &["submitit WARNING - Caught signal SIGUSR2 on node001: this job is preempted."],
        "slurm.preempted",
    );
}

#[test]
fn storage_errors_in_go_wording_are_infra_and_the_jobs_own_storage_choices_are_not() {
    assert_rule(&["beegfs: Communication error: Node: storage01 [ID: 3] (comm result: -110; message type: 2003)"], "fs.beegfs_comm");
    assert_rule(&["FATAL:   could not open image /shared/img.sif: failed to retrieve path for /shared/img.sif: lstat /shared: input/output error"], "fs.io_error_lowercase");
    assert_rule(
        &["tensorflow.python.framework.errors_impl.ResourceExhaustedError: disk quota exceeded [Op:SaveV2]"],
        "fs.quota_any_case",
    );
    // HDF5's lock failure explains the EIO/ENOLCK lines around it.
    assert_rule(
        &[
            "  #005: H5FD.c line 1625 in H5FD_lock(): driver lock request failed",
            "  #006: H5FDsec2.c line 1002 in H5FD__sec2_lock(): unable to lock file, errno = 5, error message = 'Input/output error'",
        ],
        "hdf5.file_locking",
    );
    assert_rule(&["File locking failed in ADIOI_Set_lock(fd 5,cmd F_SETLKW/7,type F_WRLCK/1,whence 0) with return value FFFFFFFF and errno 25."], "hdf5.file_locking");
    // an object store's 403 surfaced as EIO by a FUSE mount
    assert_rule(
        &[
            "MultiRead(3481): failed a request(403: http://bucket.s3.amazonaws.com/x)",
            "   unique: 24, error: -5 (Input/output error), outsize: 16",
        ],
        "fs.object_store_denied",
    );
    for id in [
        "hdf5.file_locking",
        "fs.object_store_denied",
        "fs.quota_any_case",
    ] {
        assert_eq!(class_of(id), Class::Program, "{id}");
    }
}

#[test]
fn the_jobs_own_verbs_faults_outrank_the_completion_error_lines() {
    assert_rule(
        &[
            "mlx5: node006: got completion with error:",
            "libfabric:ofi_rxm:cq:rxm_cq_read_write_error():819<warn> fi_cq_readerr: err: 5, prov_err: remote access error (10)",
        ],
        "rdma.remote_access_error",
    );
    assert_rule(&["[1496344648.548260] [node006:14879:0] dc_verbs.c:614 UCX ERROR Send completion with error on qp 0x6214: remote access error syndrome 0x88"], "rdma.remote_access_error");
    assert_rule(&["mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): RTR2RTS_QP(0x504) op_mod(0x0) failed, status bad parameter(0x3), syndrome (0x4bb88f)"], "ib.mlx5_cmd_bad_parameter");
    // any other mlx5 command failure stays the HCA's
    assert_rule(&["mlx5_core 0000:04:00.0: mlx5_cmd_check:795:(pid 9993): CREATE_MKEY(0x200) op_mod(0x0) failed, status resources exceeded(0x8), syndrome (0x1)"], "ib.hca_error");
    // a retry-counter completion stays the fabric's
    assert_eq!(
        class_of(
            decide(&["NET/IB : Got completion from peer 10.0.0.2<0> with error 12, opcode 0, len 0, vendor err 129"])
                .as_deref()
                .unwrap()
        ),
        Class::Infra
    );
}

#[test]
fn the_oom_kill_line_still_decides_with_the_keyword_it_lost() {
    assert_rule(&["slurmstepd: error: Detected 1 oom_kill event in StepId=12.batch. Some of the step tasks have been OOM Killed."], "slurm.cgroup_oom");
}
