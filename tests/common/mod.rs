//! What the integration tests share: reading a capture into connection summaries.

use std::path::Path;
use tcpwhy_capture::{decode, Capture};
use tcpwhy_track::{merge_by_stream, ConnSummary, SegmentCounts, Tracker};

/// Every connection of the capture at `path`, sorted by stream.
#[allow(dead_code)] // not every test file uses it
pub fn connections(path: &Path) -> Vec<ConnSummary> {
    let mut cap = Capture::open(path).expect("open");
    let mut t = Tracker::new();
    while let Ok(Some(f)) = cap.next_frame() {
        if let Ok(p) = decode(&f) {
            t.process(f.number, f.ts, &p);
        }
    }
    merge_by_stream(t.finish())
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

    #[derive(Deserialize)]
    struct Doc {
        files: Vec<File>,
    }

    #[derive(Deserialize)]
    struct File {
        findings: Vec<Finding>,
    }

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
    }

    /// The findings of one capture.
    pub fn findings(path: impl AsRef<OsStr>) -> Vec<Finding> {
        let out = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
            .args(["analyze", "--format", "json"])
            .arg(path)
            .output()
            .expect("run tcpwhy");
        let doc: Doc = serde_json::from_slice(&out.stdout).expect("JSON");
        doc.files.into_iter().next().expect("one file").findings
    }
}
