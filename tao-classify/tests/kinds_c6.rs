//! Sixth classify round of issue 14: context rules (`refines`), the native
//! states that read the log first, and the kinds added by their sources.
//! Each line is built from the message format in the rule's `source` (the
//! emitting software's own format strings), not copied from a corpus record.

use serde_json::json;
use tao_classify::{classify, Catalogue, Class, Options};
use tao_core::JobLine;

/// Classify a FAILED-like job line whose `err` tail is `err` and `out` tail
/// is `out`, with native state `state`: (rule, class, retry).
fn run(state: &str, err: &[&str], out: &[&str]) -> (String, Class, bool) {
    let cat = Catalogue::builtin().unwrap();
    let value = json!({
        "id": "tao-20261205-c6test",
        "state": "ERROR",
        "slurm": {"native_state": state, "exit_code": "1:0", "nodes": "node001"},
        "attempt": 1,
        "evidence": {"out": {"first_line": 1, "lines": out}, "err": {"first_line": 1, "lines": err}},
    });
    let mut line = JobLine::parse(&value.to_string(), 1).unwrap();
    let c = classify(&mut line, &cat, &Options::default().with_fallback(false))
        .unwrap()
        .unwrap();
    (c.rule, c.class, c.retry)
}

fn failed(err: &[&str]) -> (String, Class, bool) {
    run("FAILED", err, &[])
}

const BUSY: &str = "RuntimeError: CUDA error: all CUDA-capable devices are busy or unavailable";

#[test]
fn busy_gpus_are_the_nodes_unless_the_log_shows_the_jobs_own_ranks() {
    assert_eq!(
        failed(&[BUSY]),
        ("gpu.devices_busy".into(), Class::Infra, true)
    );
    let own = ("gpu.devices_busy_own_ranks".into(), Class::Program, false);
    // c10d's store-based barrier names rank 1: a second rank of the job.
    assert_eq!(
        failed(&[
            "Added key: store_based_barrier_key:1 to store for rank: 1",
            BUSY
        ]),
        own
    );
    // The rank line may come after the busy line, and from the other file.
    assert_eq!(
        run(
            "FAILED",
            &[BUSY],
            &["[rank3]: Traceback (most recent call last):"]
        ),
        own
    );
    assert_eq!(failed(&[BUSY, "step 0 rank=2 local_rank=2 cuda=2"]), own);
    // Rank 0 alone is no second rank.
    assert_eq!(
        failed(&[
            "Added key: store_based_barrier_key:1 to store for rank: 0",
            BUSY
        ])
        .0,
        "gpu.devices_busy"
    );
    // A rank line refines only the busy reading: a driver mismatch stays the node's.
    assert_eq!(
        failed(&["[rank1]: Failed to initialize NVML: Driver/library version mismatch"]),
        ("gpu.driver_init".into(), Class::Infra, true)
    );
}

const STALE: &str = "OSError: [Errno 116] Stale file handle";

#[test]
fn stale_handles_are_the_filesystems_unless_the_jobs_library_cache_wrote_them() {
    assert_eq!(
        failed(&[STALE]),
        ("fs.stale_handle".into(), Class::Infra, true)
    );
    let cache = (
        "fs.stale_handle_library_cache".into(),
        Class::Program,
        false,
    );
    assert_eq!(
        failed(&[
            "  File \"/usr/lib/python3/dist-packages/datasets/arrow_dataset.py\", line 3, in map",
            STALE
        ]),
        cache
    );
    assert_eq!(
        failed(&[
            "  File \"/opt/venv/lib/python3.11/site-packages/filelock/_api.py\", line 9, in acquire",
            STALE
        ]),
        cache
    );
    // Another library's traceback is no cache evidence.
    assert_eq!(
        failed(&[
            "  File \"/opt/venv/lib/python3.11/site-packages/h5py/_hl/files.py\", line 9, in make_fid",
            STALE
        ])
        .0,
        "fs.stale_handle"
    );
    // The cache context narrows ESTALE only: EIO stays the filesystem's.
    assert_eq!(
        failed(&[
            "  File \"/usr/lib/python3/dist-packages/datasets/arrow_dataset.py\", line 3, in map",
            "OSError: [Errno 5] Input/output error"
        ])
        .0,
        "fs.io_error"
    );
}

#[test]
fn states_that_end_a_job_read_specific_infra_evidence_first() {
    let xid = "NVRM: Xid (PCI:0000:3b:00): 79, pid=1, GPU has fallen off the bus.";
    for state in ["PREEMPTED", "CANCELLED by 0", "TIMEOUT", "REVOKED"] {
        let (rule, class, retry) = run(state, &[xid], &[]);
        assert_eq!(
            (rule.as_str(), class, retry),
            ("xid.hardware", Class::Infra, true),
            "{state}"
        );
    }
    // A cloud reclaim under PREEMPTED is the provider's, retried.
    assert_eq!(
        run(
            "PREEMPTED",
            &["Pod was terminated in response to imminent node shutdown."],
            &[]
        ),
        ("k8s.node_shutdown".into(), Class::Infra, true)
    );
    // A TIMEOUT whose log shows the program's own specific error first is the program's.
    assert_eq!(
        run(
            "TIMEOUT",
            &["alloc.h:58 NCCL WARN Cuda failure 'out of memory'"],
            &[]
        ),
        ("cuda.oom".into(), Class::Program, false)
    );
    // Slurm's own preemption banner, generic lines and program lines leave the state deciding.
    for (state, line, want) in [
        ("PREEMPTED", "slurmstepd: error: *** JOB 7 ON n1 CANCELLED AT 2026-12-05T02:00:00 DUE TO PREEMPTION ***", "state.preempted"),
        ("PREEMPTED", "RuntimeError: terminated", "state.preempted"),
        ("CANCELLED by 1000", "torch.OutOfMemoryError: CUDA out of memory. Tried to allocate 2.00 GiB", "state.cancelled"),
        ("TIMEOUT", "[E ProcessGroupNCCL.cpp:475] Watchdog caught collective operation timeout: WorkNCCL(SeqNum=1, OpType=ALLREDUCE) ran for 1800000 milliseconds before timing out.", "state.timeout"),
        // fs.io_error (85) sits below the specific band (86+).
        ("TIMEOUT", "OSError: [Errno 5] Input/output error", "state.timeout"),
    ] {
        let (rule, class, retry) = run(state, &[line], &[]);
        assert_eq!(rule, want, "{state}: {line}");
        assert_eq!(class, Class::Scheduler, "{state}: {line}");
        assert!(!retry);
    }
}

#[test]
fn kinds_from_their_sources() {
    let rule = |lines: &[&str]| failed(lines).0;
    // Linux nvme_timeout(), old and new wording
    assert_eq!(
        rule(&["[ 8112.411] nvme nvme0: I/O 512 QID 7 timeout, aborting"]),
        "host.nvme_timeout"
    );
    assert_eq!(rule(&["kernel: nvme nvme1: I/O tag 832 (3340) opcode 0x1 (I/O Cmd) QID 2 timeout, aborting req_op:WRITE(1) size:32768"]), "host.nvme_timeout");
    // HPE MPT
    assert_eq!(
        rule(&["MPT: rank 17 dropping unexpected RC packet from 203, presumed failover"]),
        "mpt.rc_failover"
    );
    // nvidia-smi nvlink -s
    assert_eq!(
        rule(&[
            "GPU 3: NVIDIA A100-SXM4-80GB (UUID: GPU-x)",
            "\t Link 5: <inactive>"
        ]),
        "gpu.nvlink_inactive"
    );
    // podman through logrus' text format
    assert_eq!(
        rule(&["ERRO[0000] cannot setup namespace using newuidmap: exit status 1"]),
        "container.podman_userns"
    );
    // TensorFlow's heartbeat
    assert_eq!(rule(&["INFO:tensorflow:ShutdownHook: lame workers found: HeartbeatManager(/job:worker/replica:0/task:0/device:CPU:0)"]), "tpu.lame_workers");
    // rejected submissions: getopt_long's message, LSF's lsb_perror
    assert_eq!(
        rule(&["sbatch: unrecognized option '--gpus-per-task=1'"]),
        "submit.rejected"
    );
    assert_eq!(
        rule(&["gpu: No such queue. Job not submitted."]),
        "submit.rejected"
    );
    assert_eq!(
        rule(&[
            "value is outside the range set by RESRSV_LIMIT defined in lsb.queues. Job",
            "not submitted."
        ]),
        "submit.rejected"
    );
    let (_, class, retry) = failed(&["sbatch: unrecognized option '--gpus-per-task=1'"]);
    assert_eq!((class, retry), (Class::Scheduler, false));
    // srun's own option errors inside a job script are not the submission's.
    assert_ne!(
        rule(&["srun: unrecognized option '--foo'"]),
        "submit.rejected"
    );
}

#[test]
fn kinds_of_the_g8_g9_records_from_their_sources() {
    let rule = |lines: &[&str]| failed(lines).0;
    // HTTP 5xx as the clients print them: the service's side, retried
    for line in [
        "requests.exceptions.HTTPError: 503 Server Error: Service Unavailable for url: https://huggingface.co/api/models/x",
        "CondaHTTPError: HTTP 502 BAD GATEWAY for url <https://conda.anaconda.org/conda-forge/noarch/repodata.json>",
        "  HTTP error 503 while getting https://files.pythonhosted.org/packages/x.tar.gz",
        "urllib.error.HTTPError: HTTP Error 503: Slow Down",
        "Error response from daemon: received unexpected HTTP status: 502 Bad Gateway",
        "ERROR: failed to copy: httpReadSeeker: failed open: unexpected status code https://registry-1.docker.io/v2/library/x/manifests/latest: 503 Service Unavailable",
        "Failed to copy: googleapi: Error 503: Backend Error, backendError",
        "botocore.exceptions.ConnectionClosedError: Connection was closed before we received a valid response from endpoint URL: \"https://s3.amazonaws.com/b/k\"",
    ] {
        assert_eq!(failed(&[line]), ("net.service_transient".into(), Class::Infra, true), "{line}");
    }
    // 4xx (rate limits included) are not this rule's
    assert_ne!(rule(&["requests.exceptions.HTTPError: 429 Client Error: Too Many Requests for url: https://huggingface.co/x"]), "net.service_transient");
    // an image that ships the driver's libraries: the image's, above the runtime rule
    assert_eq!(
        failed(&["nvidia-container-cli: mount error: file creation failed: /var/lib/docker/overlay2/abc/merged/usr/lib/x86_64-linux-gnu/libnvidia-ml.so.1: file exists: unknown."]),
        ("container.image_has_driver_libs".into(), Class::Program, false)
    );
    assert_eq!(rule(&["nvidia-container-cli: mount error: stat failed: /dev/nvidia3: no such file or directory"]), "container.runtime_node");
    // UCX's table of link speeds
    assert_eq!(
        failed(&["[1731632081.707655] [gpu46:69078:0]        ib_iface.c:1674 UCX  ERROR Invalid active_speed on mlx5_0:1: 128"]),
        ("ucx.unknown_link_speed".into(), Class::Program, false)
    );
    // nvidia-smi -q pending remap / retirement
    assert_eq!(
        rule(&[
            "    Remapped Rows",
            "        Pending                           : Yes"
        ]),
        "gpu.reset_pending"
    );
    assert_eq!(
        rule(&["        Pending Page Blacklist          : Yes"]),
        "gpu.reset_pending"
    );
    assert_eq!(
        failed(&["        Pending                           : No"]).0,
        "evidence.no_match"
    );
    // peermem, ibstatus, Singularity's session directory, TCPX, mcelog, RCU stalls
    assert_eq!(rule(&["[25033.266922] nvidia-peermem nv_get_p2p_free_callback:127 ERROR detected invalid context, skipping further processing"]), "ib.peermem_driver");
    assert_eq!(
        rule(&[
            "nv_mem nv_get_p2p_free_callback:144 nv_get_p2p_free_callback -- invalid page_table"
        ]),
        "ib.peermem_driver"
    );
    assert_eq!(
        rule(&["Fatal error:  device '*': sys files not found (/sys/class/infiniband/*/ports)"]),
        "ib.no_ports"
    );
    assert_eq!(rule(&["FATAL:   container creation failed: hook function for tag sessiondir returns error: failed to create /opt/apptainer/var/apptainer/mnt/session/rootfs directory"]), "container.singularity_sessiondir");
    assert_eq!(rule(&["tcpxResult_t tcpxCommProgress(tcpxComm*):1231 NCCL WARN 0x1:0x2, nic 0, eth1, 10.0.0.1<1><-10.0.0.2<2> rx rx ctrl timeout cnt 5, nanos 10000000000"]), "nccl.tcpx_ctrl_timeout");
    assert_eq!(
        rule(&["mcelog[808]: Hardware event. This is not a software error."]),
        "host.machine_check"
    );
    assert_eq!(rule(&["rcu: INFO: rcu_sched detected expedited stalls on CPUs/tasks: { 2-.... } 21 jiffies s: 1137 root: 0x1/."]), "host.kernel_lockup");
    assert_eq!(
        rule(&["rcu: INFO: rcu_preempt detected stalls on CPUs/tasks:"]),
        "host.kernel_lockup"
    );
}

#[test]
fn mixed_kinds_that_name_no_cause_are_not_retried() {
    // an internet download whose name did not resolve: the line, or the traceback
    let dl = (Class::Program, false);
    let (rule, class, retry) = failed(&["MaxRetryError: HTTPSConnectionPool(host='huggingface.co', port=443): Max retries exceeded with url: /x/resolve/main/config.json (Caused by NameResolutionError(\"<urllib3.connection.HTTPSConnection object at 0x7f>: Failed to resolve 'huggingface.co' ([Errno -3] Temporary failure in name resolution)\"))"]);
    assert_eq!(
        (rule.as_str(), (class, retry)),
        ("net.dns_internet_download", dl)
    );
    let (rule, class, retry) = failed(&[
        "  File \"/usr/lib/python3.10/urllib/request.py\", line 1351, in do_open",
        "socket.gaierror: [Errno -3] Temporary failure in name resolution",
    ]);
    assert_eq!(
        (rule.as_str(), (class, retry)),
        ("net.dns_internet_download_context", dl)
    );
    // the job's own peers' names stay the cluster's DNS
    assert_eq!(
        failed(&["[W socket.cpp:601] [c10d] The IPv6 network addresses of (node009, 29500) cannot be retrieved (gai error: -3 - Temporary failure in name resolution)."]),
        ("net.dns_temporary".into(), Class::Infra, true)
    );
    // rank 0 never published the NCCL unique id
    assert_eq!(
        failed(&["torch.distributed.DistBackendError: [1] is setting up NCCL communicator and retrieving ncclUniqueId from [0] via c10d key-value store by key '0', but store->get('0') got error: Socket Timeout"]),
        ("dist.nccl_unique_id_timeout".into(), Class::Program, false)
    );
    // a connect reset by the peer's host; a connect that timed out stays the network's
    assert_eq!(
        failed(&["node001:1:2 [3] misc/socket.cc:456 NCCL WARN Net : Connect to 10.0.0.2<40537> failed : Connection reset by peer"]),
        ("nccl.connect_reset".into(), Class::Program, false)
    );
    assert_eq!(
        failed(&["node001:1:2 [3] misc/socket.cc:456 NCCL WARN Net : Connect to 10.0.0.2<40537> failed : No route to host"]).0,
        "nccl.socket_connect"
    );
    // enroot-mount's EACCES names the job's own mount
    assert_eq!(
        failed(&["slurmstepd: error: pyxis:     enroot-mount: failed to mount: /home/user/data at /tmp/enroot-data/user-0/pyxis_1/data: Permission denied"]),
        ("container.mount_arg".into(), Class::Program, false)
    );
}
