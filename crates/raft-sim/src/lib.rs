//! raft-sim (being built).
