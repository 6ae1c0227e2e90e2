//! tao-poll's scheduler parsers: squeue (`-O` and legacy `-o`), sacct
//! (`-P`, with or without header, and default tables), `scontrol show job`,
//! and the native-state mapper, on any text.
//!
//! Properties: no panic; every row has a job id that looks like a Slurm job
//! id and a non-empty state; every state word maps to one vocabulary state.
#![no_main]

use libfuzzer_sys::fuzz_target;
use tao_poll::native::map_state;
use tao_poll::parse::{looks_like_job_id, parse_sacct, parse_scontrol, parse_squeue, parse_squeue_legacy};

fuzz_target!(|data: &[u8]| {
    let text = String::from_utf8_lossy(data);
    for parsed in [
        parse_squeue(&text),
        parse_squeue_legacy(&text),
        parse_sacct(&text),
        parse_scontrol(&text),
    ] {
        for row in &parsed.rows {
            assert!(looks_like_job_id(&row.job_id), "row with job id {:?}", row.job_id);
            assert!(!row.state.is_empty(), "row with an empty state");
            let _ = map_state(&row.state);
        }
    }
    for word in text.split(['\n', '|']) {
        let m = map_state(word);
        if m.known {
            assert!(!m.name.is_empty());
        }
    }
});
