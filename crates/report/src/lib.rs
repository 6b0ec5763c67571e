//! Renders tcpwhy results: aligned text tables for people, versioned JSON for programs.
//!
//! The JSON is a contract documented in `docs/json.md`; its `schema_version` changes
//! whenever a field changes meaning or disappears (adding a field does not change it).

pub mod analyze;
pub mod annotate;
mod finding_json;
pub mod flows;
mod flows_row;
pub mod host;
pub mod html;
mod json;
pub mod table;
pub mod units;

/// Version of the JSON output documented in `docs/json.md`.
pub const SCHEMA_VERSION: u32 = 1;
