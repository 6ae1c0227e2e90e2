//! The local job record store: mint ids, apply state transitions, keep history.
