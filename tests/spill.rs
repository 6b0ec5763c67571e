//! Issue 13: what a pass keeps to the end to print in order (analyze's findings) spills to
//! temporary files beyond a memory budget. Forced to spill (a budget of one byte: every
//! record its own run, merged again and again), real captures give the same report, byte
//! for byte, on one thread and on two.

use std::path::PathBuf;
use tcpwhy_detect::Config;
use tcpwhy_report::analyze::{write_json, write_text, AnalyzeReport, JsonRender};
use tcpwhy_track::Endpoint;

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
        on_finding: None,
    };
    let (file, findings, _) = tcpwhy_pipeline::analyze(path, &opts, &Config::default()).unwrap();
    let runs = findings.runs_on_disk();
    let keep = |_: u64, _: &[Endpoint; 2]| true;
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

/// `flows` as JSON and text.
fn flows(
    path: &str,
    threads: usize,
    budget: Option<usize>,
    stream: Option<u64>,
) -> (String, String) {
    let opts = tcpwhy_pipeline::Options {
        threads,
        progress: None,
        spill_budget: budget,
        on_finding: None,
    };
    let mut r = tcpwhy_pipeline::flows(path, &opts).unwrap();
    if let Some(s) = stream {
        r.retain_stream(s).unwrap();
    }
    let reports = [r];
    let mut json = Vec::new();
    tcpwhy_report::flows::write_json(&reports, &mut json).unwrap();
    (
        String::from_utf8(json).unwrap(),
        tcpwhy_report::flows::render_text(&reports),
    )
}

/// `analyze --min-cost 0 --format json` with the findings rendered during the pass, on
/// the threads that found them (what the binary does without `--host`).
fn analyze_rendered(path: &str, threads: usize, budget: Option<usize>) -> String {
    let opts = tcpwhy_pipeline::Options {
        threads,
        progress: None,
        spill_budget: budget,
        on_finding: None,
    };
    let (file, findings, _) =
        tcpwhy_pipeline::analyze_rendered(path, &opts, &Config::default(), &JsonRender).unwrap();
    assert!(findings.is_shown(), "rendered during the pass");
    let keep = |_: u64, _: &[Endpoint; 2]| true;
    let reports = [AnalyzeReport {
        file,
        findings,
        keep: &keep,
        min_cost_ns: 0,
        exchanges: None,
        hosts: &[],
    }];
    let mut json = Vec::new();
    write_json(&reports, &mut json).unwrap();
    String::from_utf8(json).unwrap()
}

#[test]
fn findings_rendered_during_the_pass_give_the_same_json() {
    // Stream numbers in texts ("SYN of stream 2", a warm connection's stream) are
    // provisional on two threads and given their final numbers as the report copies.
    for name in [
        "zeek-echo-connections.pcap.gz",
        "wireshark-sample-obsolete-packets-sll.pcap",
    ] {
        let path = capture(name);
        let (json, _, _) = analyze(&path, 1, None);
        for (threads, budget) in [(1, None), (2, None), (1, Some(1)), (2, Some(1))] {
            let j = analyze_rendered(&path, threads, budget);
            assert!(
                j == json,
                "{name}: -j {threads}, budget {budget:?}: JSON differs"
            );
        }
    }
}

#[test]
fn connection_rows_spilled_to_disk_give_the_same_table() {
    // 500 connections; 311 (48 clients guessed by port); 18 (ports reused).
    for name in [
        "zeek-echo-connections.pcap.gz",
        "wireshark-sample-obsolete-packets-sll.pcap",
        "tcptrace-fast-reuse.pcap",
    ] {
        let path = capture(name);
        let (json, text) = flows(&path, 1, None, None);
        assert!(json.matches("\"stream\":").count() >= 6, "{name}");
        for threads in [1, 2] {
            let (j, t) = flows(&path, threads, Some(1), None);
            assert!(j == json, "{name}: -j {threads}: JSON differs when spilled");
            assert!(t == text, "{name}: -j {threads}: text differs when spilled");
        }
        let one = flows(&path, 1, None, Some(3));
        assert_eq!(flows(&path, 2, Some(1), Some(3)), one, "{name}: --stream 3");
    }
}
