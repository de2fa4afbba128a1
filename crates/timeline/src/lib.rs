//! timeline (being built).
