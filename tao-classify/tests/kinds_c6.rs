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
