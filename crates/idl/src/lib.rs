//! idl (being built).
