//! Errors of the data layer, tagged like OVSDB errors (`"syntax error"`,
//! `"constraint violation"`, ...), so the server model can put them on the
//! wire unchanged.

use std::fmt;

/// An OVSDB error: a tag (the RFC 7047 `error` string) and details.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub tag: &'static str,
    pub details: String,
}

impl Error {
    pub fn new(tag: &'static str, details: impl Into<String>) -> Self {
        Error {
            tag,
            details: details.into(),
        }
    }
    pub fn syntax(details: impl Into<String>) -> Self {
        Error::new("syntax error", details)
    }
    pub fn constraint(details: impl Into<String>) -> Self {
        Error::new("constraint violation", details)
    }
    pub fn referential(details: impl Into<String>) -> Self {
        Error::new("referential integrity violation", details)
    }
    /// Prefixes the details with some context ("column X: ...").
    pub fn context(mut self, ctx: impl fmt::Display) -> Self {
        self.details = format!("{}: {}", ctx, self.details);
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "{}: {}", self.tag, self.details)
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
