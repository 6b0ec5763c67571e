//! `tcpwhy report` on the lab's captures: the page's data (docs/report.md) read back from
//! the HTML and checked against what tshark shows for the same frames, and the command's
//! behaviour (its report and exit status are analyze's, where pages go, what it refuses).
//! The page as a browser draws it is tests/report_browser.rs.
//!
//! The numbers asserted were read in tshark by hand (`tshark -r FILE -T fields -e
//! frame.number -e frame.time_relative -e tcp.seq -e tcp.len -e tcp.ack -e
//! tcp.options.sack_le -e tcp.options.sack_re`):
//! - nagle-delayed-ack/client.pcap: frame 14, the server's 132-byte segment, seq 529 at
//!   0.404603 s; frame 15, the client's pure ACK 661 at 0.445294 s (40.7 ms later); frame
//!   16, the held segment, seq 661 len 132 at 0.447522 s.
//! - reordering/client.pcap: frame 131, seq 56473 len 1448 at 0.106363 s (the late
//!   original, which tshark calls a fast retransmission); frame 163, the spurious fast
//!   retransmission of seq 56473 at 0.127966 s; frame 164, the client's ACK 113321 with
//!   the D-SACK 56473–57921 and the SACK block 114769–129249 at 0.127976 s.

mod common;

use common::tcpwhy;

use serde_json::Value;
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};

/// A scratch directory for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("report-{name}"))
}

fn lab(scenario: &str, side: &str) -> PathBuf {
    common::analyze::lab_path(scenario, side)
}

/// `tcpwhy report EXTRA INPUT -o OUT` with the exit status `status`.
fn report(input: &Path, out: &Path, extra: &[&str], status: i32) -> Output {
    let mut args = vec!["report"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let o = tcpwhy(&args);
    assert_eq!(
        o.status.code(),
        Some(status),
        "report: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The JSON document inside a page.
fn page_data(page: &Path) -> Value {
    let html = std::fs::read_to_string(page).unwrap();
    let open = "<script type=\"application/json\" id=\"tcpwhy-data\">";
    let start = html.find(open).expect("data block") + open.len();
    let end = start + html[start..].find("</script>").unwrap();
    serde_json::from_str(&html[start..end]).expect("the data is JSON")
}

/// The ConnPlot of `stream`.
fn conn(d: &Value, stream: u64) -> &Value {
    d["plots"]["connections"]
        .as_array()
        .unwrap()
        .iter()
        .find(|c| c["stream"] == stream)
        .unwrap_or_else(|| panic!("no plot of stream {stream}"))
}

/// Index of `frame` in the columns `cols` (`segments` or `acks` of a Direction).
fn at(cols: &Value, frame: u64) -> usize {
    cols["frame"]
        .as_array()
        .unwrap()
        .iter()
        .position(|f| f == frame)
        .unwrap_or_else(|| panic!("frame {frame} not in the plot's detail"))
}

fn close(a: &Value, b: f64) -> bool {
    (a.as_f64().unwrap() - b).abs() < 1e-6
}

#[test]
fn nagle_page_holds_the_evidence_frames_where_tshark_shows_them() {
    let dir = scratch("nagle");
    let input = lab("nagle-delayed-ack", "client");
    let page = dir.join("nagle.html");
    let o = report(&input, &page, &[], 1);
    // The same report on standard output as analyze's.
    let analyze = tcpwhy(&["analyze", input.to_str().unwrap()]);
    assert_eq!(o.stdout, analyze.stdout);
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 finding(s), 1 with a plot"));

    let d = page_data(&page);
    assert_eq!(d["schema"], 1);
    assert_eq!(d["file"]["findings"][0]["id"], "delayed_ack.nagle");
    assert_eq!(d["verdict"][0]["id"], "delayed_ack.nagle");
    assert_eq!(d["plots"]["findings"], serde_json::json!([0]));
    assert!(d["text"].as_str().unwrap().starts_with("Verdict:"));
    assert_eq!(d["flows"]["total"], 1);
    assert_eq!(d["flows"]["connections"][0]["stream"], 0);

    let c = conn(&d, 0);
    assert_eq!(c["client"], "10.81.1.2:50882");
    assert_eq!(c["server"], "10.81.2.2:8080");
    // A small connection is kept whole.
    assert_eq!(c["detail"][0][0], 0.0);
    assert!(close(&c["detail"][0][1], c["t_last"].as_f64().unwrap()));
    let s2c = &c["server_to_client"];
    let seg = &s2c["segments"];
    for (frame, t, seq, len) in [(14, 0.404603, 529, 132), (16, 0.447522, 661, 132)] {
        let i = at(seg, frame);
        assert!(close(&seg["t"][i], t), "frame {frame}: {}", seg["t"][i]);
        assert_eq!(seg["seq"][i], seq);
        assert_eq!(seg["len"][i], len);
        // Marked as evidence.
        assert_ne!(seg["kind"][i].as_u64().unwrap() & 1024, 0);
    }
    // The client's pure ACK is an ACK of the server's data, not a segment of the client.
    let acks = &s2c["acks"];
    let i = at(acks, 15);
    assert!(close(&acks["t"][i], 0.445294));
    assert_eq!(acks["ack"][i], 661);
    assert!(c["client_to_server"]["segments"]["frame"]
        .as_array()
        .unwrap()
        .iter()
        .all(|f| f != 15));
    // The SYN/ACK is the server's first segment: relative seq 0, the SYN bit.
    assert_eq!(seg["seq"][0], 0);
    assert_ne!(seg["kind"][0].as_u64().unwrap() & 64, 0);
}

#[test]
fn reordering_page_marks_the_spurious_retransmission_and_the_dsack() {
    let dir = scratch("reordering");
    let input = lab("reordering", "client");
    let page = dir.join("r.html");
    report(&input, &page, &["--min-cost", "0"], 1);
    let d = page_data(&page);
    let s2c = &conn(&d, 0)["server_to_client"];
    let seg = &s2c["segments"];
    let late = at(seg, 131);
    assert!(close(&seg["t"][late], 0.106363));
    assert_eq!(seg["seq"][late], 56473);
    let rx = at(seg, 163);
    assert!(close(&seg["t"][rx], 0.127966));
    assert_eq!(
        (seg["seq"][rx].clone(), seg["len"][rx].clone()),
        (56473.into(), 1448.into())
    );
    let kind = seg["kind"][rx].as_u64().unwrap();
    assert_eq!(
        kind & 3,
        3,
        "a retransmission, reported needless: kind {kind}"
    );
    let acks = &s2c["acks"];
    let i = at(acks, 164);
    assert!(close(&acks["t"][i], 0.127976));
    assert_eq!(acks["ack"][i], 113321);
    assert_eq!(
        acks["sack"][i],
        serde_json::json!([[56473, 57921], [114769, 129249]])
    );
}

#[test]
fn max_plots_caps_the_plots_and_the_rest_are_listed() {
    let dir = scratch("max-plots");
    let input = lab("idle-close", "client");
    let page = dir.join("p.html");
    let o = report(&input, &page, &["--max-plots", "1"], 1);
    let d = page_data(&page);
    let findings = d["file"]["findings"].as_array().unwrap();
    assert!(findings.len() > 1, "{} findings", findings.len());
    assert_eq!(d["plots"]["findings"], serde_json::json!([0]));
    assert_eq!(d["plots"]["cap"], 1);
    let plots = d["plots"]["connections"].as_array().unwrap();
    assert_eq!(plots.len(), 1);
    assert_eq!(plots[0]["stream"], findings[0]["stream"]);
    assert!(String::from_utf8_lossy(&o.stderr).contains("1 with a plot"));
}

#[test]
fn a_capture_without_findings_still_plots_its_longest_connection() {
    let dir = scratch("clean");
    let input = lab("clean-bulk", "server");
    let page = dir.join("c.html");
    report(&input, &page, &[], 0);
    let d = page_data(&page);
    assert_eq!(d["file"]["findings"], serde_json::json!([]));
    assert_eq!(d["plots"]["findings"], serde_json::json!([]));
    assert_eq!(d["plots"]["connections"][0]["stream"], 0);
}

#[test]
fn several_inputs_get_a_page_each_in_a_directory_and_stdin_is_read_once() {
    let dir = scratch("several");
    let a = lab("nagle-delayed-ack", "client");
    let b = lab("reordering", "server");
    let out = dir.join("pages");
    let o = tcpwhy(&[
        "report",
        a.to_str().unwrap(),
        b.to_str().unwrap(),
        "-o",
        out.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(1));
    let (pa, pb) = (out.join("client.html"), out.join("server.html"));
    assert_eq!(page_data(&pa)["file"]["path"], a.to_str().unwrap());
    assert_eq!(page_data(&pb)["file"]["path"], b.to_str().unwrap());

    // Standard input: spooled, read by all three passes, named "-" on the page.
    let page = dir.join("stdin.html");
    let mut child = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["report", "-", "-o", page.to_str().unwrap()])
        .stdin(Stdio::piped())
        .stdout(Stdio::piped())
        .stderr(Stdio::piped())
        .spawn()
        .unwrap();
    std::io::Write::write_all(
        &mut child.stdin.take().unwrap(),
        &std::fs::read(&a).unwrap(),
    )
    .unwrap();
    let o = child.wait_with_output().unwrap();
    assert_eq!(o.status.code(), Some(1));
    let d = page_data(&page);
    assert_eq!(d["file"]["path"], "-");
    assert_eq!(d["plots"]["connections"].as_array().unwrap().len(), 1);
}

#[test]
fn report_refuses_standard_output_and_overwriting_its_input() {
    let dir = scratch("refuse");
    let input = dir.join("in.pcap");
    std::fs::copy(lab("nagle-delayed-ack", "client"), &input).unwrap();
    let o = tcpwhy(&["report", input.to_str().unwrap(), "-o", "-"]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("writes a file"));
    let o = tcpwhy(&[
        "report",
        input.to_str().unwrap(),
        "-o",
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is an input"));
    // The input is untouched.
    assert_eq!(
        std::fs::read(&input).unwrap(),
        std::fs::read(lab("nagle-delayed-ack", "client")).unwrap()
    );
}
