//! `tcpwhy analyze` on lab captures, from both vantage points, against the kernel's and
//! the applications' own record in each example's manifest and truth files.

mod common;

use common::tcpwhy;

use serde::Deserialize;
use std::path::PathBuf;

fn lab(scenario: &str, side: &str) -> String {
    let p = PathBuf::from(env!("CARGO_MANIFEST_DIR"))
        .join("examples/lab")
        .join(scenario)
        .join(format!("{side}.pcap"));
    p.to_string_lossy().into_owned()
}

#[derive(Deserialize)]
struct Doc {
    schema_version: u32,
    command: String,
    files: Vec<File>,
}

#[derive(Deserialize)]
struct File {
    findings: Vec<Finding>,
}

#[derive(Deserialize)]
struct Finding {
    id: String,
    stream: u64,
    cost_ms: f64,
    evidence: Vec<Evidence>,
    vantage: String,
    confidence: String,
    fix: Vec<serde_json::Value>,
}

#[derive(Deserialize)]
struct Evidence {
    frame: u64,
}

/// The findings of one capture, and the exit status.
fn analyze(path: &str, extra: &[&str]) -> (Vec<Finding>, Option<i32>) {
    let mut args = vec!["analyze", "--format", "json"];
    args.extend_from_slice(extra);
    args.push(path);
    let out = tcpwhy(&args);
    let doc: Doc = serde_json::from_slice(&out.stdout).expect("JSON");
    assert_eq!((doc.schema_version, doc.command.as_str()), (1, "analyze"));
    let mut files = doc.files;
    (files.remove(0).findings, out.status.code())
}

/// syn-drop: the router dropped the first SYN. client.pcap (checked in Wireshark): frame
/// 1 the SYN at 0 s, frame 2 the same SYN again at 1.023415 s (the 1 s initial RTO),
/// frame 3 the SYN/ACK. The client's own timings say connect took 1,049 ms (1,023 ms
/// of waiting + the 25 ms RTT). The server never saw the first SYN, so its capture
/// holds no evidence of the wait and must stay silent rather than guess.
#[test]
fn dropped_syn_costs_the_initial_rto_seen_from_the_client_only() {
    let (f, code) = analyze(&lab("syn-drop", "client"), &[]);
    assert_eq!(code, Some(1), "findings → exit status 1");
    let s = f
        .iter()
        .find(|x| x.id == "handshake.syn_retransmit")
        .expect("finding");
    assert_eq!(s.stream, 0);
    assert!((s.cost_ms - 1023.415).abs() < 0.01, "cost {}", s.cost_ms);
    let frames: Vec<u64> = s.evidence.iter().map(|e| e.frame).collect();
    assert_eq!(frames, [1, 2, 3]);
    assert_eq!(
        (s.vantage.as_str(), s.confidence.as_str()),
        ("client", "high")
    );
    assert!(!s.fix.is_empty());

    let (f, code) = analyze(&lab("syn-drop", "server"), &[]);
    assert!(f.iter().all(|x| x.id != "handshake.syn_retransmit"));
    assert_eq!(code, Some(if f.is_empty() { 0 } else { 1 }));
}

/// server-think-time: the server application waits 200 ms before each of 2 responses
/// (server-timings.json: think_ns 200,094,513 and 200,080,251). From the server the gap
/// is the thinking itself; from the client it also holds the 25 ms RTT, which the
/// detector subtracts. Both must give ≈ 400 ms (within 5 %).
#[test]
fn server_think_time_is_the_same_from_both_ends() {
    for side in ["server", "client"] {
        let (f, _) = analyze(&lab("server-think-time", side), &[]);
        let t = f
            .iter()
            .find(|x| x.id == "app.server_think_time")
            .expect(side);
        assert!(
            (t.cost_ms - 400.17).abs() / 400.17 < 0.05,
            "{side}: {}",
            t.cost_ms
        );
        assert_eq!(t.vantage, side);
        // Evidence: the last request byte and the first response byte of each exchange.
        assert_eq!(t.evidence.len(), 4, "{side}");
    }
}

/// --min-cost hides findings below it; with none left the exit status is 0.
#[test]
fn min_cost_filters_findings_and_sets_the_exit_status() {
    let (f, code) = analyze(&lab("syn-drop", "client"), &["--min-cost", "2s"]);
    assert!(f.is_empty());
    assert_eq!(code, Some(0));
    let (f, _) = analyze(&lab("syn-drop", "client"), &["--filter", "port 9"]);
    assert!(f.is_empty(), "no connection on port 9");
    let (f, _) = analyze(
        &lab("syn-drop", "client"),
        &["--filter", "host 10.81.2.2 and port 8080"],
    );
    assert!(!f.is_empty());
    let bad = tcpwhy(&["analyze", "--min-cost", "soon", &lab("syn-drop", "client")]);
    assert_eq!(bad.status.code(), Some(2));
}
