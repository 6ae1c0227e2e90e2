//! Second round of issue 14: the rule families added or narrowed by KIND.
//! Each line is built from the message format in the rule's `source` (the
//! projects' own format strings), not copied from a corpus record; each
//! multi-line case checks the precedence that decides between a cause and
//! its symptoms.

use tao_classify::catalogue::Catalogue;
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

#[test]
fn infra_families_from_their_sources() {
    // getaddrinfo EAI_AGAIN as c10d and Python print it
    assert_rule(&["[W socket.cpp:601] [c10d] The IPv6 network addresses of (node009, 29500) cannot be retrieved (gai error: -3 - Temporary failure in name resolution)."], "net.dns_temporary");
    assert_rule(
        &["socket.gaierror: [Errno -3] Temporary failure in name resolution"],
        "net.dns_temporary",
    );
    // EHOSTUNREACH / ENETUNREACH
    assert_rule(
        &["OSError: [Errno 113] No route to host"],
        "net.host_unreachable",
    );
    assert_rule(
        &["ssh: connect to host node017 port 22: Connection timed out"],
        "net.ssh_unreachable",
    );
    // Gloo pair.cc
    assert_rule(&["RuntimeError: [../third_party/gloo/gloo/transport/tcp/pair.cc:589] Read error [10.0.0.3]:4567: Connection reset by peer"], "gloo.peer_lost");
    // Ray: old and new wording
    assert_rule(&["The node with node id: 3f2a and ip: 10.0.0.5 has been marked dead because the detector has missed too many heartbeats from it."], "ray.node_dead");
    // Open MPI lost daemon
    assert_rule(
        &["ORTE has lost communication with a remote daemon."],
        "mpi.launch_runtime",
    );
    // librdmacm / aws-ofi-nccl
    assert_rule(
        &["rdma_create_qp: Cannot allocate memory (12)"],
        "rdma.resource",
    );
    assert_rule(&["node003:11:12 [0] NCCL WARN NET/OFI Couldn't open AV. RC: -22, ERROR: Invalid argument"], "rdma.resource");
    // IB completion without the colon
    assert_rule(
        &["NCCL WARN NET/IB Got completion error 12"],
        "nccl.ib_completion_error",
    );
    // k8s device plugin: a critical (non-application) Xid
    assert_rule(
        &["XidCriticalError: Xid=79 on Device=GPU-0f1e, the device will go unhealthy."],
        "gpu.device_plugin_xid",
    );
    // lspci: config space all ones
    assert_rule(
        &["3b:00.0 3D controller: NVIDIA Corporation GA100 [A100 SXM4 80GB] (rev ff)"],
        "gpu.fallen_off_bus",
    );
    // local disk / fs kernel errors
    assert_rule(
        &["blk_update_request: I/O error, dev nvme0n1, sector 1234 op 0x1:(WRITE)"],
        "host.kernel_fault",
    );
    // urllib3 read timeout
    assert_rule(&["requests.exceptions.ConnectionError: HTTPSConnectionPool(host='example.org', port=443): Read timed out."], "net.http_read_timeout");
    // the host's docker without the NVIDIA runtime; pyxis seccomp
    assert_rule(&["docker: Error response from daemon: could not select device driver \"\" with capabilities: [[gpu]]."], "container.runtime_node");
    assert_rule(
        &["slurmstepd: error: pyxis: seccomp filter failed: Function not implemented"],
        "container.runtime_node",
    );
    // Slurm: batch launch failed on the node; controller address unresolvable
    assert_rule(
        &[
            "JobState=PENDING Reason=launch_failed_requeued_held",
            "Reason=launch failed requeued held",
        ],
        "slurm.prolog",
    );
    assert_rule(
        &["slurmstepd: error: Unable to establish control machine address"],
        "slurm.comm",
    );
}

#[test]
fn program_guards_hold_against_infra_looking_lines() {
    // a rank's own programming error outranks the connection losses it causes in its peers
    assert_rule(
        &[
            "[rank3]: AssertionError: micro batch size must divide the global batch",
            "node002:1:2 [0] NCCL WARN Net : Connection closed by remote peer node001<47861>",
            "RuntimeError: NCCL error: remote process exited or there was a network error",
        ],
        "python.program_error",
    );
    // NCCL's own CUDA allocation failure is the program's GPU OOM, not a transport fault
    assert_rule(
        &[
            "node002:24881:25568 [2] include/alloc.h:178 NCCL WARN Cuda failure 'out of memory'",
            "node002:24881:25568 [2] include/alloc.h:185 NCCL WARN Failed to CUDA calloc 10485760 bytes",
            "RuntimeError: NCCL error: unhandled system error",
        ],
        "cuda.oom",
    );
    // verbs EINVAL is the software's attributes, decided before the IB rule on the same line
    assert_rule(&["node019:5330:7970 [3] misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Invalid argument"], "nccl.verbs_invalid_argument");
    // but ETIMEDOUT from the same call is the fabric's
    assert_rule(&["misc/ibvwrap.cc:284 NCCL WARN Call to ibv_modify_qp failed with error Connection timed out"], "nccl.ib_completion_error");
    // CUDA 804 is the image's compat libraries wherever it is printed
    assert_rule(&["RuntimeError: Unexpected error from cudaGetDeviceCount(). Error 804: forward compatibility was attempted on non supported HW"], "cuda.image_needs_newer_driver");
    // launch errors a retry cannot fix are not the MPI infra rule's
    assert_ne!(
        decide(&["ORTE was unable to reliably start one or more daemons."]).as_deref(),
        Some("mpi.launch_runtime")
    );
    assert_ne!(
        decide(&["NET/IB : No device found."]).as_deref(),
        Some("rdma.resource")
    );
    // a resolver saying the name does not exist is no transient DNS failure
    assert_ne!(
        decide(&["socket.gaierror: [Errno -2] Name or service not known"]).as_deref(),
        Some("net.dns_temporary")
    );
}

#[test]
fn watchdog_timeout_alone_is_the_programs_and_a_transport_line_decides_otherwise() {
    let wd = "[rank2]:[E ProcessGroupNCCL.cpp:563] [Rank 2] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=7, OpType=ALLREDUCE, NumelIn=1, NumelOut=1, Timeout(ms)=1800000) ran for 1800096 milliseconds before timing out.";
    assert_rule(&[wd], "nccl.watchdog_timeout");
    let cat = Catalogue::builtin().unwrap();
    let r = cat
        .rules()
        .iter()
        .find(|r| r.spec.id == "nccl.watchdog_timeout")
        .unwrap();
    assert_eq!(r.spec.class.as_str(), "program");
    assert_rule(&["NCCL WARN NET/IB : Got completion from peer 10.0.0.1<54862> with status=12 opcode=0 len=0 vendor err 129 (Recv)", wd], "nccl.ib_completion_error");
}

#[test]
fn an_unkillable_step_drains_the_node_and_a_time_limit_before_it_still_decides() {
    let stepd = "slurmstepd: error: *** JOB 6847 STEPD TERMINATED ON node024 AT 2026-11-07T02:10:11 DUE TO JOB NOT ENDING WITH SIGNALS ***";
    assert_rule(&[stepd], "slurm.node_down");
    assert_rule(
        &[
            "slurmstepd: error: *** JOB 6847 ON node024 CANCELLED AT 2026-11-07T02:09:10 DUE TO TIME LIMIT ***",
            stepd,
        ],
        "slurm.time_limit",
    );
}

/// Third round of issue 14: kinds whose dev labels are mixed (the bare line
/// is no specific evidence) are the program's to look at and never retried;
/// the specific line of the same family still retries.
#[test]
fn mixed_kinds_are_not_retried_and_their_specific_lines_are() {
    let class = |id: &str| {
        let cat = Catalogue::builtin().unwrap();
        let r = cat.rules().iter().find(|r| r.spec.id == id).unwrap();
        r.spec.class.as_str().to_string()
    };
    // NCCL system error with nothing saying which call failed
    let sys = "RuntimeError: NCCL error in: /pytorch/torch/lib/c10d/ProcessGroupNCCL.cpp:410, unhandled system error, NCCL version 2.4.8";
    assert_rule(&[sys], "nccl.system_error");
    assert_eq!(class("nccl.system_error"), "program");
    // ... but the transport line NCCL prints with it decides
    assert_rule(
        &[
            sys,
            "node001:1:2 [0] misc/socket.cc:46 NCCL WARN socketProgressOpt: Call to send to 10.0.0.149<52905> failed : Connection reset by peer",
        ],
        "nccl.remote_error",
    );
    // a peer that closed its connection in order (its process exited) says nothing of why
    assert_rule(
        &[
            "node001:1:2 [0] misc/socket.cc:538 NCCL WARN Net : Connection closed by remote peer node002<47861>",
            "node001:1:2 [0] NCCL INFO misc/socket.cc:535 -> 6",
        ],
        "nccl.peer_closed",
    );
    assert_eq!(class("nccl.peer_closed"), "program");
    // DataLoader SIGBUS alone vs shm actually full
    assert_rule(&["ERROR: Unexpected bus error encountered in worker. This might be caused by insufficient shared memory (shm)."], "torch.shm_bus_signal");
    assert_eq!(class("torch.shm_bus_signal"), "program");
    assert_rule(
        &["RuntimeError: unable to write to file </torch_31911_952036340_6686>: No space left on device (28)"],
        "torch.shm_bus_error",
    );
    // nvidia-smi that cannot reach the driver inside a job vs the driver's own failure
    assert_rule(&["NVIDIA-SMI has failed because it couldn't communicate with the NVIDIA driver. Make sure that the latest NVIDIA driver is installed and running."], "cuda.no_visible_gpu");
    assert_rule(
        &["Failed to initialize NVML: Driver/library version mismatch"],
        "gpu.driver_init",
    );
}

#[test]
fn third_round_families_from_their_sources() {
    // CUDA code not built for the GPU: the program's/image's
    assert_rule(
        &["RuntimeError: CUDA error: no kernel image is available for execution on the device"],
        "cuda.arch_not_compiled",
    );
    assert_rule(
        &["RuntimeError: CUDA error: invalid device ordinal"],
        "cuda.no_visible_gpu",
    );
    // collective mismatches: the program's
    assert_rule(&["init.cc:1247 NCCL WARN Mismatched collective detected, please check your collective calls at and around rank 39."], "nccl.message_truncated");
    // kernel lockup watchdog on the node: infra, and not the NCCL watchdog
    assert_rule(
        &["kernel:[405108.698255] watchdog: BUG: soft lockup - CPU#2 stuck for 22s! [python:29632]"],
        "host.kernel_lockup",
    );
    // Xid written without the NVRM prefix
    assert_rule(
        &["GPU 0: XID error 79 detected on the device"],
        "xid.hardware",
    );
    assert_rule(&["Xid=48 reported by the health check"], "xid.hardware");
    assert_eq!(decide(&["Xid=13 in application"]), None);
    // NCCL's CUDA failure naming a driver/init state
    assert_rule(
        &["node001:1:2 [0] NCCL WARN Cuda failure 'system not yet initialized'"],
        "gpu.driver_init",
    );
    // enroot on the node: a host tool missing, an error inside a node hook
    assert_rule(
        &["slurmstepd: error: pyxis:     [ERROR] Command not found: mksquashfs"],
        "container.runtime_node",
    );
    assert_rule(
        &[
            "slurmstepd: error: pyxis:     /etc/enroot/hooks.d/10-shadow.sh: line 70: 3474706 Broken pipe             yes 2> /dev/null",
            "slurmstepd: error: pyxis:          3474707 Segmentation fault      (core dumped) | pwck -R x",
        ],
        "container.runtime_node",
    );
    // a bare Permission denied ranks below a lost peer (issue 14 precedence)
    assert_rule(
        &[
            "/bin/sh: /home/user/.bashrc: Permission denied",
            "node001:941227:943077 [0] NCCL INFO Call to connect returned Connection refused, retrying",
        ],
        "nccl.socket_connect",
    );
}

#[test]
fn open_mpi_ib_errors_and_host_dram_errors_are_infra() {
    assert_rule(&["[node001][[12345,1],0][btl_openib_component.c:3645:handle_wc] from node001 to: node002 error polling LP CQ with status RETRY EXCEEDED ERROR status number 12 for wr_id 1a2b opcode 0  vendor error 129 qp_idx 0"], "nccl.ib_completion_error");
    assert_rule(
        &["The InfiniBand retry count between two MPI processes has been exceeded."],
        "nccl.ib_completion_error",
    );
    assert_rule(&["EDAC MC0: 1 UE memory read error on CPU_SrcID#0_Ha#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1 offset:0x0 grain:32)"], "host.machine_check");
    // a site's submit filter naming the job's own request outranks the QOS banner it causes
    assert_rule(
        &[
            "sbatch: error:     --> error: requested memory exceeds max of 512 GB",
            "sbatch: error: Batch job submission failed: Job violates accounting/QOS policy (job submit limit, user's size and/or time limits)",
        ],
        "slurm.request_over_site_max",
    );
    // device-plugin GPU memory health events
    assert_rule(&["GPUMemoryError: Device=0, UUID=GPU-0f1e, SN=1321, has failed remapped rows; The device will go unhealthy."], "gpu.memory_health");
    // NCCL's old "NCCL Error N:" wording reads like the new one
    assert_rule(
        &["RuntimeError: NCCL Error 2: unhandled system error"],
        "nccl.system_error",
    );
}

#[test]
fn fourth_round_families_from_their_sources() {
    // NVLS multicast set-up: the node's NVSwitch/Fabric Manager state is infra ...
    assert_rule(
        &["node023:12098:12141 [2] transport/nvls.cc:244 NCCL WARN Cuda failure 1 'invalid argument'"],
        "nccl.nvls_setup",
    );
    // ... while running out of multicast memory is the job's NCCL, not retried,
    // even though the boilerplate line also names NVLink
    assert_rule(
        &[
            "Failed to bind NVLink SHARP (NVLS) Multicast memory of size 2097152 : CUDA error 2 'out of memory'.",
            "This is usually caused by a system or configuration error in the Fabric Manager or NVSwitches.",
        ],
        "nccl.nvls_multicast_exhausted",
    );
    // UCX's mlx5 retry counters, without the UCX tag on the line
    assert_rule(
        &["[node001:27251:0:27251] ib_mlx5_log.c:143  Transport retry count exceeded on mlx5_0:1/IB (synd 0x15 vend 0x81 hw_synd 0/0)"],
        "ucx.ib_retry_exceeded",
    );
    assert_rule(
        &["GPU 00000000:04:00.0: Detected Critical Xid Error"],
        "gpu.nvml_critical_xid",
    );
    assert_rule(
        &["FATAL:   container creation failed: mount /proc/self/fd/3->/usr/local/var/singularity/mnt/session/rootfs error: while mounting image /proc/self/fd/3: failed to find loop device: could not attach image file to loop device: no loop devices available"],
        "container.singularity_loop_device",
    );
    assert_rule(
        &["srun: error: Unable to create step for job 39: Error generating job credential"],
        "slurm.auth",
    );
    // the memory checker's finding outranks the launch failure it explains
    assert_rule(
        &[
            "========= Invalid __global__ read of size 4",
            "========= Program hit CUDA_ERROR_LAUNCH_FAILED (error 719) due to \"unspecified launch failure\" on CUDA API call to cuStreamWaitEvent.",
        ],
        "cuda.memcheck_violation",
    );
    // NCCL's newer IB wordings (status by name, GIN, device failure) stay IB completion errors
    assert_rule(
        &["node001:1:2 [0] NCCL WARN NET/IB: Got completion from peer 10.0.0.2<5000> with status=IBV_WC_RETRY_EXC_ERR(12) opcode=IBV_WC_SEND(0) vendor_err=129 hca mlx5_0"],
        "nccl.ib_completion_error",
    );
    assert_rule(
        &["node001:1:2 [0] NCCL WARN NET/IB : mlx5_0:1 Got non-fatal async event: port error(9)"],
        "nccl.ib_completion_error",
    );
    // the Xid catalog's "GPU stopped processing" with immediate action RESET_GPU
    assert_rule(
        &["NVRM: Xid (PCI:0000:3b:00): 46, pid=1234, name=python, Ch 00000010"],
        "xid.hardware",
    );
}

/// Fifth round: families widened from the emitting software's sources, and
/// the kinds that no longer retry. Lines are built from the format strings
/// named in each rule's `source`.
#[test]
fn fifth_round_families_from_their_sources() {
    // NCCL src/os/linux.cc: a timed-out socket warns; a reset one is a closed peer
    assert_rule(&["node002:77:90 [1] misc/socket.cc:50 NCCL WARN ncclOsSocketProgressOpt: Call to recv from 10.0.0.3<40211> failed : Connection timed out"], "nccl.socket_timeout");
    assert_rule(
        &["node002:77:90 [1] misc/socket.cc:484 NCCL WARN Call to send to 10.0.0.3<40211> failed : No route to host"],
        "nccl.socket_timeout",
    );
    // pyxis: node plumbing vs the job's own options
    assert_rule(
        &["slurmstepd: error: pyxis: couldn't join mount namespace: Operation not permitted"],
        "container.pyxis_node",
    );
    assert_rule(
        &["slurmstepd: error: pyxis: --container-mounts: source path does not exist: /data/in"],
        "container.pyxis_option",
    );
    // enroot: its helpers (names with digits) and common.sh errors
    assert_rule(
        &["enroot-aufs2ovlfs: failed to set capabilities: Operation not permitted"],
        "container.import_cluster",
    );
    assert_rule(
        &["slurmstepd: error: pyxis:     [ERROR] Not enough space left in /raid/enroot/data"],
        "container.enroot_node",
    );
    assert_rule(
        &["[ERROR] Could not acquire rootfs lock"],
        "container.enroot_node",
    );
    // slurmstepd task plugins on the node
    assert_rule(&["slurmstepd: error: Failed to invoke task plugins: one of task_p_pre_setuid functions returned error"], "slurm.task_plugin");
    // UCX UD transport, EFA provider, Open MPI's lost daemon, Ray's dead node
    assert_rule(
        &["[node002:5459:0:5459] ud_ep.c:278 Fatal: UD endpoint 0x1f0a40 to <no debug data>: unhandled timeout error"],
        "ucx.ud_timeout",
    );
    assert_rule(&["libfabric:4517:1708520807::efa:cq:efa_rdm_txe_handle_error():737<warn> err: 5, message: Invalid address (7)"], "efa.peer_unreachable");
    assert_rule(
        &["ORTE has lost communication with its daemon located on node:"],
        "mpi.launch_runtime",
    );
    assert_rule(
        &["The actor is dead because its node has died. Node Id: 677df2a9"],
        "ray.node_dead",
    );
    // slurm_strerror's communication and slurmd-side codes
    assert_rule(
        &["srun: error: Task launch for StepId=12.0 failed on node node004: Slurmd could not connect IO"],
        "slurm.comm",
    );
    assert_rule(
        &["sbatch: error: Batch job submission failed: Incompatible versions of client and server code"],
        "slurm.comm",
    );
    assert_rule(
        &["sbatch: error: Batch job submission failed: I/O error writing script/environment to file"],
        "slurm.comm",
    );
    assert_rule(
        &["infiniband mlx5_0: create_mkey_callback:131:(pid 0): async reg mr failed. status -12"],
        "ib.hca_error",
    );
    assert_rule(
        &["ERROR  : Failed to set effective UID to 0"],
        "container.singularity_setuid",
    );
    // a GPU full before the program allocated anything is held by another process
    assert_rule(
        &["RuntimeError: CUDA out of memory. Tried to allocate 20.00 MiB (GPU 0; 31.75 GiB total capacity; 0 bytes already allocated; 4.75 MiB free; 0 bytes reserved in total by PyTorch)"],
        "cuda.gpu_held_by_other_process",
    );
    assert_rule(
        &["RuntimeError: CUDA out of memory. Tried to allocate 236.00 MiB (GPU 0; 15.70 GiB total capacity; 12.34 GiB already allocated; 208.19 MiB free; 13.58 GiB reserved in total by PyTorch)"],
        "cuda.oom",
    );
    // a service's own temporary errors (HTTP 502-504, S3 SlowDown)
    assert_rule(
        &["requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://huggingface.co/api/models/x"],
        "net.service_transient",
    );
    assert_rule(
        &["botocore.exceptions.ClientError: An error occurred (SlowDown) when calling the PutObject operation: Please reduce your request rate."],
        "net.service_transient",
    );
    // Slurm's cgroup plugins and slurmctld's unresponsive nodes
    assert_rule(
        &["slurmstepd: error: task/cgroup: _memcg_initialize: unable to create task 3 cgroup"],
        // seventh classify round: slurmstepd's own cgroup set-up family (infra 90) decides it
        "slurm.stepd_node_setup",
    );
    assert_rule(
        &["slurmctld: error: Nodes node[003-004] not responding"],
        "slurm.node_down",
    );
    // CUDA display watchdog, errno ETIMEDOUT, the c10d store's socket timeout, an HCA NCCL cannot open
    assert_rule(
        &["RuntimeError: CUDA error: the launch timed out and was terminated"],
        "cuda.launch_timeout",
    );
    assert_rule(
        &["TimeoutError: [Errno 110] Connection timed out"],
        "net.host_unreachable",
    );
    assert_rule(
        &["torch.distributed.DistStoreError: Socket Timeout"],
        "dist.rendezvous",
    );
    assert_rule(
        &["node001:1:2 [0] NCCL WARN NET/IB : Unable to open device mlx5_2"],
        "nccl.net_plugin",
    );
    // nvidia-smi cannot read a GPU; NVVS fails a GPU test; the merged keywords still find their lines
    assert_rule(
        &["| N/A   ERR!  P0    ERR! / 300W |  1024MiB / 32510MiB |    ERR!      Default |"],
        "gpu.nvidia_smi_err",
    );
    assert_rule(
        &["\t\tMemory GPU6 ....................................... FAIL"],
        "gpu.diag_fail",
    );
    assert_rule(&["JobState=NODE_FAIL Reason=NodeDown"], "slurm.node_down");
    assert_rule(&["Reason=Kill task failed"], "slurm.node_down");
    assert_rule(&["Reason=launch failed requeued held"], "slurm.prolog");
    assert_rule(
        &["NVRM: GPU 0000:01:00.0: GPU does not have the necessary power cables connected."],
        "nvrm.driver_fault",
    );
    // the platform's NMI for a PCI system error
    assert_rule(
        &["kernel: NMI: PCI system error (SERR) for reason a1 on CPU 0."],
        "host.machine_check",
    );
    // DCGM hardware failure codes
    assert_rule(
        &["dcgmi health: GPU 3: DCGM_FR_NVLINK_DOWN"],
        "gpu.dcgm_health",
    );
    // The rest of the Xid catalog by its resolution buckets
    assert_rule(
        &["NVRM: Xid (PCI:0000:3b:00): 40, pid=77, name=python, Ch 00000010"],
        "xid.hardware",
    );
    assert_rule(
        &["NVRM: Xid (PCI:0000:3b:00): 25, pid=77, name=python, Ch 00000010"],
        "xid.application",
    );
}

#[test]
fn unspecified_launch_failure_alone_and_a_remote_invalid_request_are_not_retried() {
    let cat = Catalogue::builtin().unwrap();
    let class = |id: &str| {
        cat.rules()
            .iter()
            .find(|r| r.spec.id == id)
            .unwrap()
            .spec
            .class
    };
    // cudaErrorLaunchFailure alone: the program's to look at
    assert_rule(
        &["RuntimeError: CUDA error: unspecified launch failure"],
        "cuda.launch_failure",
    );
    assert_eq!(
        class("cuda.launch_failure"),
        tao_classify::catalogue::Class::Program
    );
    // ... but a hardware Xid in the same evidence decides
    assert_rule(
        &[
            "NVRM: Xid (PCI:0000:3b:00): 79, pid=7, GPU has fallen off the bus.",
            "RuntimeError: CUDA error: unspecified launch failure",
        ],
        "xid.hardware",
    );
    // "unknown error" still points at the GPU/driver
    assert_rule(
        &["RuntimeError: CUDA error: unknown error"],
        "cuda.gpu_fault",
    );
    // IBV_WC_REM_INV_REQ_ERR outranks the access-violation event it comes with
    assert_rule(
        &[
            "node001:1:2 [0] transport/net_ib.cc:101 NCCL WARN NET/IB : mlx5_0:1 Got async event : local access violation work queue error",
            "node002:1:2 [0] transport/net_ib.cc:1909 NCCL WARN NET/IB : Got completion from peer 10.0.0.1<33057> with status=9 opcode=0 len=0 vendor err 138 (Send)",
        ],
        "nccl.ib_invalid_request",
    );
    assert_rule(
        &["pollOnce - channel_id: 4, CQE error, wr_id=19395, status=10 (remote access error), opcode=1"],
        "nccl.ib_invalid_request",
    );
    // pynvml's classes for the node's NVML faults
    assert_rule(
        &["pynvml.nvml.NVMLError_GpuIsLost: GPU is lost"],
        "gpu.fallen_off_bus",
    );
    assert_rule(
        &["pynvml.NVMLError_DriverNotLoaded: Driver Not Loaded"],
        "gpu.driver_init",
    );
    // libfabric EINVAL under the NCCL OFI plugin is the software's; a resource it lacks is the node's
    assert_rule(
        &["register_mr_buffers:544 NCCL WARN NET/OFI Unable to register memory (type = 2) for device 0. RC: -22, Error: Invalid argument"],
        "ofi.invalid_argument",
    );
    // a stale handle in the Hugging Face cache is the job's shared cache; elsewhere the filesystem's
    assert_rule(
        &["OSError: [Errno 116] Stale file handle: '/home/user/.cache/huggingface/datasets/text/default-1/cache-0a1b.arrow'"],
        "fs.stale_shared_cache",
    );
    assert_rule(
        &["OSError: [Errno 116] Stale file handle: '/lustre/data/train/shard-0001.tar'"],
        "fs.stale_handle",
    );
    // retry counter exceeded stays the fabric's
    assert_rule(
        &["NCCL WARN NET/IB : Got completion from peer 10.0.0.1<1> with status=12 opcode=0 len=0 vendor err 129 (Recv)"],
        "nccl.ib_completion_error",
    );
}
