//! The catalogue of finding ids (style.md: "anomalies have names in one documented
//! catalogue"). Each detector declares the entries of the ids it emits next to its code
//! (a `const` per id), and each host rule its `host.*` entry; [`FindingId`] and
//! [`HostFindingId`] are generated from those declarations by the detector registry
//! (`detectors/mod.rs`) and the host rule list (`host/mod.rs`). Everything said per id
//! (its text, which finding it is part of, who decides it in `analyze --host`, how the
//! host state judges it) is read from here, and the README's tables are rendered from it
//! (checked by a test).
//!
//! [`HostFindingId`]: crate::host::HostFindingId

use crate::finding::FindingId;
use crate::host::{BundleSide, Judge};

/// One capture finding id and what is said about it wherever ids are listed.
pub struct Entry {
    /// The id as written in reports and JSON: stable, never renamed (design.md).
    pub id: &'static str,
    /// The mechanism in a few words.
    pub title: &'static str,
    /// What a reader of the report should understand by it, one line.
    pub meaning: &'static str,
    /// Where the fix is applied, one line.
    pub fix_goes_to: &'static str,
    /// The finding whose time this one's cost is part of, when both are reported on a
    /// connection (the report then does not add the two).
    pub part_of: Option<FindingId>,
    /// The side whose settings decide the mechanism in `analyze --host`: the data sender
    /// (the server, which sends the responses the detectors price) or the receiver; a
    /// bundle from the other side is silent about it. `None`: either side may decide it
    /// (window scaling), or no host setting does (mechanisms.md's table).
    pub decided_by: Option<BundleSide>,
    /// How a host bundle of that side confirms or contradicts the finding (a rule in
    /// `host/`); `None`: no host setting decides this mechanism.
    pub judge: Option<Judge>,
}

/// One host finding id (`host.*`), declared by its rule in `host/`.
pub struct HostEntry {
    pub id: &'static str,
    pub title: &'static str,
    pub meaning: &'static str,
    pub fix_goes_to: &'static str,
}

/// The README's table of capture findings, one row per id in [`FindingId`] order.
pub fn markdown_table() -> String {
    let mut s = String::from("| finding | what it means | fix goes to |\n|---|---|---|\n");
    for id in FindingId::ALL {
        let e = id.entry();
        s += &format!(
            "| `{}` | {} — {} | {} |\n",
            e.id, e.title, e.meaning, e.fix_goes_to
        );
    }
    s
}

/// The README's table of host findings, one row per id in [`HostFindingId`] order.
///
/// [`HostFindingId`]: crate::host::HostFindingId
pub fn host_markdown_table() -> String {
    let mut s = String::from("| host finding | what it means | fix goes to |\n|---|---|---|\n");
    for id in crate::host::HostFindingId::ALL {
        let e = id.entry();
        s += &format!(
            "| `{}` | {} — {} | {} |\n",
            e.id, e.title, e.meaning, e.fix_goes_to
        );
    }
    s
}
