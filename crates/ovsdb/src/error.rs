//! Errors of the data layer, tagged like OVSDB errors (`"syntax error"`,
//! `"constraint violation"`, `"ovsdb error"`, ...), so the server model can
//! put them on the wire unchanged.
//!
//! Like OVS's `struct ovsdb_error`, an error may carry the JSON it is about
//! (`syntax`, the compact text with sorted members), and its text form
//! ([`fmt::Display`]) follows `ovsdb_error_to_string` (OVS 3.1
//! `lib/ovsdb-error.c`): `syntax "<json>": ` when there is JSON, then the
//! tag, then `: <details>` when there are details.

use std::fmt;

use crate::json::Json;

/// The tag OVS gives an error created without one (`ovsdb_error(NULL, …)`).
pub const OVSDB_ERROR: &str = "ovsdb error";

/// An OVSDB error: a tag (the RFC 7047 `error` string), details, and
/// optionally the offending JSON.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    pub tag: &'static str,
    pub details: String,
    /// The JSON the error is about, as compact text with sorted members
    /// (OVS's `syntax` member, an RFC 7047 extension).
    pub syntax: Option<String>,
}

impl Error {
    pub fn new(tag: &'static str, details: impl Into<String>) -> Self {
        Error {
            tag,
            details: details.into(),
            syntax: None,
        }
    }
    pub fn syntax(details: impl Into<String>) -> Self {
        Error::new("syntax error", details)
    }
    /// A syntax error about `json` (OVS's `ovsdb_syntax_error(json, NULL, …)`).
    pub fn syntax_at(json: &Json, details: impl Into<String>) -> Self {
        Error::syntax(details).with_syntax(json)
    }
    pub fn constraint(details: impl Into<String>) -> Self {
        Error::new("constraint violation", details)
    }
    pub fn referential(details: impl Into<String>) -> Self {
        Error::new("referential integrity violation", details)
    }
    /// An error with OVS's generic tag, `ovsdb error`.
    pub fn ovsdb(details: impl Into<String>) -> Self {
        Error::new(OVSDB_ERROR, details)
    }
    /// Attaches the JSON the error is about.
    pub fn with_syntax(mut self, json: &Json) -> Self {
        self.syntax = Some(json.sorted_recursive().to_string_compact());
        self
    }
    /// Prefixes the details with some context ("column X: ..."), as OVS's
    /// `ovsdb_wrap_error` does.
    pub fn context(mut self, ctx: impl fmt::Display) -> Self {
        self.details = if self.details.is_empty() {
            ctx.to_string()
        } else {
            format!("{}: {}", ctx, self.details)
        };
        self
    }
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        if let Some(s) = &self.syntax {
            write!(f, "syntax \"{}\": ", s)?;
        }
        f.write_str(self.tag)?;
        if !self.details.is_empty() {
            write!(f, ": {}", self.details)?;
        }
        Ok(())
    }
}

impl std::error::Error for Error {}

pub type Result<T> = std::result::Result<T, Error>;
