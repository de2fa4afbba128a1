//! ovsdb (being built).
