//! Classify a failed job's evidence as infra, program or scheduler fault and decide retry.
