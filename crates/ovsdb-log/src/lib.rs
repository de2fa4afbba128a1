//! ovsdb-log (being built).
