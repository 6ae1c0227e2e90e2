//! Helpers for the end-to-end tests: the local cluster environment and a command builder.
