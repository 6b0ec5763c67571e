//! What the integration tests share: reading a capture into connection summaries.

#[allow(dead_code)] // not every test file uses it
pub mod netns;

use std::path::{Path, PathBuf};
use std::process::{Command, Output};
use tcpwhy_track::{ConnSummary, SegmentCounts};

/// `tcpwhy ARGS`, run to the end, its output kept.
#[allow(dead_code)] // not every test file uses it
pub fn tcpwhy(args: &[&str]) -> Output {
    Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(args)
        .output()
        .expect("run tcpwhy")
}

/// A scratch directory `NAME` for one test, under cargo's temporary directory for
/// integration tests, emptied first.
#[allow(dead_code)] // not every test file uses it
pub fn scratch(name: &str) -> PathBuf {
    let d = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join(name);
    let _ = std::fs::remove_dir_all(&d);
    std::fs::create_dir_all(&d).unwrap();
    d
}

/// Every connection of the capture at `path`, sorted by stream (`tcpwhy flows`' pass).
#[allow(dead_code)] // not every test file uses it
pub fn connections(path: &Path) -> Vec<ConnSummary> {
    let opts = tcpwhy_pipeline::Options {
        threads: 1,
        progress: None,
        spill_budget: None,
        on_finding: None,
    };
    tcpwhy_pipeline::flows(&path.to_string_lossy(), &opts)
        .expect("open")
        .connections
        .iter()
        .collect::<std::io::Result<_>>()
        .expect("rows read back")
}

/// Segment counts of both directions of every connection, added up.
#[allow(dead_code)] // not every test file uses it
pub fn total(conns: &[ConnSummary]) -> SegmentCounts {
    let mut s = SegmentCounts::default();
    for d in conns.iter().flat_map(|c| c.dirs.iter()) {
        s.add(&d.counts);
    }
    s
}

/// `tcpwhy analyze --format json` read back with types of the tests' own (docs/json.md).
#[allow(dead_code)] // not every test file uses it
pub mod analyze {
    use serde::Deserialize;
    use std::ffi::OsStr;
    use std::process::Command;

    #[derive(Deserialize, Debug)]
    pub struct Finding {
        pub id: String,
        pub stream: u64,
        pub cost_ms: f64,
        /// Connections that paid `cost_ms` between them (1 unless a cross-connection pattern).
        pub connections: u64,
        pub evidence: Vec<Evidence>,
        pub explanation: String,
        pub vantage: String,
        pub fix: Vec<serde_json::Value>,
    }

    #[derive(Deserialize, Debug)]
    pub struct Evidence {
        pub frame: u64,
        #[serde(default)]
        pub note: String,
    }

    /// A lab example's capture: `examples/lab/SCENARIO/SIDE.pcap`.
    pub fn lab_path(scenario: &str, side: &str) -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("examples/lab")
            .join(scenario)
            .join(format!("{side}.pcap"))
    }

    /// A capture of the kernel-labelled sweep kept for a regression test
    /// (`tests/data/sweep/NAME`, described in its README.md).
    pub fn sweep_path(name: &str) -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("tests/data/sweep")
            .join(name)
    }

    /// One of the public captures next to the project (`../shared/captures/public/NAME`).
    pub fn public_path(name: &str) -> std::path::PathBuf {
        std::path::PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/captures/public")
            .join(name)
    }

    /// The findings of a lab example's capture.
    pub fn lab(scenario: &str, side: &str) -> Vec<Finding> {
        findings(lab_path(scenario, side))
    }

    /// The findings of a public capture.
    pub fn public(name: &str) -> Vec<Finding> {
        findings(public_path(name))
    }

    /// The one finding of `id`; fails when there are none or several.
    pub fn one<'a>(f: &'a [Finding], id: &str) -> &'a Finding {
        let v: Vec<&Finding> = f.iter().filter(|x| x.id == id).collect();
        assert_eq!(v.len(), 1, "{id}: {f:?}");
        v[0]
    }

    /// The evidence's frame numbers, in order.
    pub fn frames(f: &Finding) -> Vec<u64> {
        f.evidence.iter().map(|e| e.frame).collect()
    }

    /// Fails on any finding of these ids.
    pub fn none_of(f: &[Finding], ids: &[&str]) {
        for x in f {
            assert!(!ids.contains(&x.id.as_str()), "unexpected {x:?}");
        }
    }

    /// The findings of one capture.
    pub fn findings(path: impl AsRef<OsStr>) -> Vec<Finding> {
        findings_json(path, &[])
            .into_iter()
            .map(|f| serde_json::from_value(f).expect("a Finding"))
            .collect()
    }

    /// The findings of one capture as raw JSON, with `extra` options for `analyze`
    /// (e.g. `--min-cost 0`), for tests that read fields `Finding` does not type.
    pub fn findings_json(path: impl AsRef<OsStr>, extra: &[&str]) -> Vec<serde_json::Value> {
        let out = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
            .args(["analyze", "--format", "json"])
            .args(extra)
            .arg(path)
            .output()
            .expect("run tcpwhy");
        let doc: serde_json::Value = serde_json::from_slice(&out.stdout).expect("JSON");
        doc["files"][0]["findings"]
            .as_array()
            .expect("findings")
            .clone()
    }

    /// Every finding of one capture, those below `--min-cost` included: for tests of a
    /// cost the default threshold hides.
    pub fn findings_at_any_cost(path: impl AsRef<OsStr>) -> Vec<Finding> {
        findings_json(path, &["--min-cost", "0"])
            .into_iter()
            .map(|f| serde_json::from_value(f).expect("a Finding"))
            .collect()
    }

    /// The ids of every finding of one capture, those below `--min-cost` included: for
    /// tests that a mechanism is not named at any cost.
    pub fn ids_at_any_cost(path: impl AsRef<OsStr>) -> Vec<String> {
        findings_json(path, &["--min-cost", "0"])
            .iter()
            .filter_map(|x| x["id"].as_str().map(str::to_string))
            .collect()
    }

    /// Asserts that one capture does not name `id`, not even below `--min-cost`.
    pub fn not_at_any_cost(path: impl AsRef<OsStr>, id: &str) {
        let ids = ids_at_any_cost(path);
        assert!(!ids.iter().any(|i| i == id), "{id} in {ids:?}");
    }

    /// Asserts that one capture names no id of a family (`rwnd.`), not even below
    /// `--min-cost`.
    pub fn no_family_at_any_cost(path: impl AsRef<OsStr>, family: &str) {
        let ids = ids_at_any_cost(path);
        assert!(
            !ids.iter().any(|i| i.starts_with(family)),
            "{family} in {ids:?}"
        );
    }
}
