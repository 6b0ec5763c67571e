//! Issue 13: what a pass keeps to the end to print in order (analyze's findings) spills to
//! temporary files beyond a memory budget. Forced to spill (a budget of one byte: every
//! record its own run, merged again and again), real captures give the same report, byte
//! for byte, on one thread and on two.

use std::path::PathBuf;
use tcpwhy_detect::{Config, Finding};
use tcpwhy_report::analyze::{write_json, write_text, AnalyzeReport};

fn capture(name: &str) -> String {
    let public = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/captures/public");
    public.join(name).to_string_lossy().into_owned()
}

/// `analyze --min-cost 0` as JSON and text, and how many runs the findings took on disk.
fn analyze(path: &str, threads: usize, budget: Option<usize>) -> (String, String, usize) {
    let opts = tcpwhy_pipeline::Options {
        threads,
        progress: None,
        spill_budget: budget,
    };
    let (file, findings, _) = tcpwhy_pipeline::analyze(path, &opts, &Config::default()).unwrap();
    let runs = findings.runs_on_disk();
    let keep = |_: &Finding| true;
    let reports = [AnalyzeReport {
        file,
        findings,
        keep: &keep,
        min_cost_ns: 0,
        exchanges: None,
        hosts: &[],
    }];
    let (mut json, mut text) = (Vec::new(), Vec::new());
    write_json(&reports, &mut json).unwrap();
    write_text(&reports, &mut text).unwrap();
    (
        String::from_utf8(json).unwrap(),
        String::from_utf8(text).unwrap(),
        runs,
    )
}

#[test]
fn findings_spilled_to_disk_give_the_same_report() {
    // 192, 136 and 50 findings (with --min-cost 0), from 1 to 2 M frames.
    for name in [
        "zeek-echo-connections.pcap.gz",
        "wireshark-sample-obsolete-packets-sll.pcap",
        "tcptrace-http.pcap",
    ] {
        let path = capture(name);
        let (json, text, runs) = analyze(&path, 1, None);
        assert_eq!(runs, 0, "{name}: a small capture's findings stay in memory");
        assert!(json.matches("\"id\":").count() >= 50, "{name}");
        for threads in [1, 2] {
            let (j, t, runs) = analyze(&path, threads, Some(1));
            assert!(runs >= 1, "{name}: -j {threads} spilled");
            assert!(j == json, "{name}: -j {threads}: JSON differs when spilled");
            assert!(t == text, "{name}: -j {threads}: text differs when spilled");
        }
    }
}
