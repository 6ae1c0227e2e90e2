//! Every scheduler read: squeue/sacct to the state vocabulary, status.json, logs, watch.
