//! `tcpwhy annotate` on the lab's captures, read back two ways: with tcpwhy's own reader
//! (every frame's number, time, bytes, original length, link type and interface equal to
//! the input's) and with tshark, the program people will open the file with (frame
//! numbers, epoch times, lengths, interfaces, tcp.stream, the tcp.analysis flags and the
//! comments that were already there equal; the frames with a `tcpwhy ` comment exactly
//! the evidence frames of `analyze --format json` for the same options). Without tshark
//! (scripts/test installs it) the tshark half is skipped with a message.
//!
//! The evidence frames asserted were read in `analyze`'s report and checked in tshark by
//! hand: e.g. nagle-delayed-ack/client.pcap frames 14–16 are the server's 132-byte
//! segment, the client's ACK 40.7 ms later and the held segment 2.2 ms after that.

mod common;

use common::tcpwhy;

use std::collections::{BTreeMap, BTreeSet};
use std::path::{Path, PathBuf};
use std::process::{Command, Output, Stdio};
use tcpwhy_capture::Capture;

/// A scratch directory for one test, emptied first.
fn scratch(name: &str) -> PathBuf {
    common::scratch(&format!("annotate-{name}"))
}

/// `tcpwhy annotate EXTRA INPUT -o OUT`; the exit status is analyze's (1: findings).
fn annotate(input: &Path, out: &Path, extra: &[&str]) -> Output {
    let mut args = vec!["annotate"];
    args.extend_from_slice(extra);
    args.extend_from_slice(&[input.to_str().unwrap(), "-o", out.to_str().unwrap()]);
    let o = tcpwhy(&args);
    assert!(
        o.status.code() == Some(1) || o.status.code() == Some(0),
        "annotate failed: {}",
        String::from_utf8_lossy(&o.stderr)
    );
    o
}

/// The evidence frames of `analyze --format json EXTRA input`.
fn evidence(input: &Path, extra: &[&str]) -> BTreeSet<u64> {
    common::analyze::findings_json(input, extra)
        .iter()
        .flat_map(|f| f["evidence"].as_array().unwrap().clone())
        .map(|e| e["frame"].as_u64().unwrap())
        .collect()
}

/// What tcpwhy's reader sees of every frame: number, time, bytes, original length, link
/// type, interface.
type Seen = (u64, i64, Vec<u8>, u32, u32, u32);

fn frames(path: &Path) -> Vec<Seen> {
    let mut cap = Capture::open(path).expect("open");
    let mut v = Vec::new();
    while let Some(f) = cap.next_frame().expect("read") {
        v.push((
            f.number,
            f.ts.nanos(),
            f.data.to_vec(),
            f.orig_len,
            f.link.number(),
            f.interface,
        ));
    }
    v
}

fn have_tshark() -> bool {
    let ok = Command::new("tshark")
        .arg("--version")
        .stdout(Stdio::null())
        .stderr(Stdio::null())
        .status()
        .is_ok_and(|s| s.success());
    if !ok {
        eprintln!("tshark not installed: the tshark half of this test is skipped");
    }
    ok
}

/// One frame in tshark: the fields that must not change, and its comments.
#[derive(Debug, PartialEq)]
struct Row {
    fields: Vec<String>,
    comments: Vec<String>,
}

const FIELDS: &[&str] = &[
    "frame.number",
    "frame.time_epoch",
    "frame.len",
    "frame.cap_len",
    "tcp.stream",
    "tcp.analysis.flags",
    "tcp.analysis.retransmission",
    "tcp.analysis.fast_retransmission",
    "tcp.analysis.spurious_retransmission",
    "tcp.analysis.out_of_order",
    "tcp.analysis.duplicate_ack",
    "tcp.analysis.window_full",
    "tcp.analysis.zero_window",
];

/// Separates a frame's several comments in tshark's output (ASCII record separator).
const SEP: char = '\u{1e}';

fn tshark(path: &Path, interface: bool) -> Vec<Row> {
    let mut args: Vec<String> = ["-r", path.to_str().unwrap(), "-T", "fields"]
        .iter()
        .map(|s| s.to_string())
        .collect();
    args.extend(["-E".into(), format!("aggregator={SEP}")]);
    args.extend(["-E".into(), "occurrence=a".into()]);
    let mut fields: Vec<&str> = FIELDS.to_vec();
    if interface {
        fields.push("frame.interface_id");
    }
    fields.push("frame.comment");
    for f in fields {
        args.extend(["-e".into(), f.into()]);
    }
    let out = Command::new("tshark").args(&args).output().expect("tshark");
    assert!(
        out.status.success(),
        "{}",
        String::from_utf8_lossy(&out.stderr)
    );
    String::from_utf8(out.stdout)
        .unwrap()
        .split('\n')
        .filter(|l| !l.is_empty())
        .map(|l| {
            let mut f: Vec<String> = l.split('\t').map(String::from).collect();
            let comments = f
                .pop()
                .unwrap()
                .split(SEP)
                .filter(|c| !c.is_empty())
                .map(String::from)
                .collect();
            Row {
                fields: f,
                comments,
            }
        })
        .collect()
}

/// Frame → the comments tcpwhy added to it.
fn added(rows: &[Row]) -> BTreeMap<u64, Vec<String>> {
    rows.iter()
        .filter_map(|r| {
            let ours: Vec<String> = r
                .comments
                .iter()
                .filter(|c| c.starts_with("tcpwhy "))
                .cloned()
                .collect();
            (!ours.is_empty()).then(|| (r.fields[0].parse().unwrap(), ours))
        })
        .collect()
}

/// Annotates `input` with `extra` and checks the output against it: returns the
/// comments added per frame (when tshark is there).
fn round_trip(
    name: &str,
    input: &Path,
    extra: &[&str],
    expect_evidence: &[u64],
) -> Option<BTreeMap<u64, Vec<String>>> {
    let dir = scratch(name);
    let out = dir.join("out.pcapng");
    annotate(input, &out, extra);
    let ev = evidence(input, extra);
    assert_eq!(ev, expect_evidence.iter().copied().collect());
    assert_eq!(frames(&out), frames(input));
    if !have_tshark() {
        return None;
    }
    let pcapng = input.extension().is_some_and(|x| x == "pcapng");
    let (a, b) = (tshark(input, pcapng), tshark(&out, pcapng));
    assert_eq!(a.len(), b.len());
    for (x, y) in a.iter().zip(&b) {
        assert_eq!(x.fields, y.fields);
        let kept: Vec<&String> = y
            .comments
            .iter()
            .filter(|c| !c.starts_with("tcpwhy "))
            .collect();
        assert_eq!(kept, x.comments.iter().collect::<Vec<_>>());
    }
    let added = added(&b);
    assert_eq!(added.keys().copied().collect::<BTreeSet<u64>>(), ev);
    Some(added)
}

#[test]
fn nagle_delayed_ack_evidence_is_commented_and_frames_are_unchanged() {
    let input = common::analyze::lab_path("nagle-delayed-ack", "client");
    let added = round_trip(
        "nagle",
        &input,
        &[],
        &[14, 15, 16, 21, 22, 23, 28, 29, 30, 35, 36, 37],
    );
    // The lab captured with snaplen 128: frames longer than that stay cut.
    let f = frames(&input);
    assert!(f.iter().any(|x| (x.2.len() as u32) < x.3));
    let Some(added) = added else { return };
    assert_eq!(added[&15].len(), 1);
    assert!(
        added[&15][0].starts_with(
            "tcpwhy delayed_ack.nagle: the client's pure ACK of it, 40.7 ms after the data arrived (costs 180 ms on tcp.stream 0; fix on the server: "
        ),
        "{:?}",
        added[&15]
    );
}

#[test]
fn no_window_scaling_frames_of_two_findings_get_two_comments() {
    let input = common::analyze::lab_path("no-window-scaling", "server");
    let Some(added) = round_trip("nows", &input, &[], &[1, 2, 14, 167, 171, 175, 179]) else {
        return;
    };
    // Frames 167–179 are evidence of both rwnd.no_window_scaling and rwnd.limited, in
    // the report's order; the SYNs only of the first.
    let ids = |f: u64| -> Vec<String> {
        added[&f]
            .iter()
            .map(|c| c.split(':').next().unwrap().to_string())
            .collect()
    };
    assert_eq!(
        ids(167),
        ["tcpwhy rwnd.no_window_scaling", "tcpwhy rwnd.limited"]
    );
    assert_eq!(ids(1), ["tcpwhy rwnd.no_window_scaling"]);
    assert_eq!(ids(14), ["tcpwhy rwnd.limited"]);
}

#[test]
fn reordering_with_spurious_retransmission_at_min_cost_zero() {
    let input = common::analyze::lab_path("reordering", "client");
    let Some(added) = round_trip(
        "reorder",
        &input,
        &["--min-cost", "0"],
        &[74, 131, 163, 164, 850, 1316],
    ) else {
        return;
    };
    // Frame 163, the fast retransmission of data that was only late, proves three
    // findings; frame 164 (the D-SACK) two.
    let ids: Vec<&str> = added[&163]
        .iter()
        .map(|c| c.split(':').next().unwrap())
        .collect();
    assert_eq!(
        ids,
        [
            "tcpwhy reordering",
            "tcpwhy loss.fast_retransmit",
            "tcpwhy retransmit.spurious"
        ]
    );
    assert_eq!(added[&164].len(), 2);
}

#[test]
fn the_same_options_as_analyze_choose_the_findings() {
    // Above --min-cost 1ms only the reordering finding is shown: only its evidence.
    let input = common::analyze::lab_path("reordering", "client");
    round_trip("reorder-1ms", &input, &[], &[74, 131, 163, 164, 850, 1316]);
    // A stream that does not exist: no finding, no comment, every frame still there.
    round_trip("reorder-nostream", &input, &["--stream", "7"], &[]);
}

#[test]
fn two_interface_pcapng_keeps_interfaces_and_old_comments() {
    if !have_tshark() {
        return;
    }
    let dir = scratch("two-if");
    let merged = dir.join("merged.pcapng");
    let input = dir.join("commented.pcapng");
    let lab = |side| common::analyze::lab_path("nagle-delayed-ack", side);
    // The client's and the server's captures merged by time, each its own interface.
    let ok = Command::new("mergecap")
        .args(["-I", "none", "-F", "pcapng", "-w"])
        .arg(&merged)
        .arg(lab("client"))
        .arg(lab("server"))
        .status()
        .expect("mergecap (Wireshark's tools, installed with tshark)");
    assert!(ok.success());
    let ok = Command::new("editcap")
        .args(["-a", "3:first old comment", "-a", "14:second old comment"])
        .arg(&merged)
        .arg(&input)
        .status()
        .expect("editcap");
    assert!(ok.success());
    // Frame 3 is evidence of handshake.syn_retransmit (the same SYN seen at both ends
    // reads as sent twice) and keeps its old comment before the new one.
    let added = round_trip(
        "two-if-out",
        &input,
        &[],
        &[1, 3, 4, 27, 29, 31, 41, 43, 45, 55, 57, 59, 69, 71, 73],
    )
    .unwrap();
    let out = PathBuf::from(env!("CARGO_TARGET_TMPDIR")).join("annotate-two-if-out/out.pcapng");
    let rows = tshark(&out, true);
    let iface = FIELDS.len();
    let interfaces: BTreeSet<&str> = rows.iter().map(|r| r.fields[iface].as_str()).collect();
    assert_eq!(interfaces, BTreeSet::from(["0", "1"]));
    assert_eq!(rows[2].comments[0], "first old comment");
    assert_eq!(rows[2].comments.len(), 2);
    assert_eq!(rows[13].comments, ["second old comment"]);
    assert!(added[&3][0].starts_with("tcpwhy handshake.syn_retransmit: "));
}

#[test]
fn gzip_input_gives_the_same_file_as_the_plain_one() {
    let dir = scratch("gzip");
    let input = common::analyze::lab_path("nagle-delayed-ack", "client");
    let gz = dir.join("client.pcap.gz");
    let out = Command::new("gzip")
        .arg("-c")
        .arg(&input)
        .output()
        .expect("gzip");
    std::fs::write(&gz, out.stdout).unwrap();
    let (a, b) = (dir.join("plain.pcapng"), dir.join("gz.pcapng"));
    annotate(&input, &a, &[]);
    annotate(&gz, &b, &[]);
    assert_eq!(frames(&b), frames(&input));
    // The same bytes but for the input's name in the verdict.
    if have_tshark() {
        assert_eq!(tshark(&a, false), tshark(&b, false));
    }
}

#[test]
fn evidence_only_keeps_the_context_and_names_the_original_frames() {
    let dir = scratch("evidence-only");
    let input = common::analyze::lab_path("reordering", "client");
    let out = dir.join("ticket.pcapng");
    annotate(&input, &out, &["--evidence-only", "--context", "1"]);
    let originals: Vec<u64> = vec![
        73, 74, 75, 130, 131, 132, 162, 163, 164, 165, 849, 850, 851, 1315, 1316, 1317,
    ];
    let all = frames(&input);
    let kept: Vec<Seen> = frames(&out);
    assert_eq!(kept.len(), originals.len());
    for (k, &o) in kept.iter().zip(&originals) {
        // Renumbered from 1, everything else the original frame's.
        let f = &all[o as usize - 1];
        assert_eq!((&k.1, &k.2, k.3), (&f.1, &f.2, f.3));
    }
    if !have_tshark() {
        return;
    }
    let rows = tshark(&out, false);
    for (r, o) in rows.iter().zip(&originals) {
        assert_eq!(
            r.comments[0],
            format!("original frame {o} of {}", input.display())
        );
    }
    // Frame 2 of the excerpt is frame 74, the hole: its finding's comment follows.
    assert!(rows[1].comments[1].starts_with("tcpwhy reordering: data above seq 56473"));
}

#[test]
fn standard_input_is_spooled_and_named_dash() {
    let dir = scratch("stdin");
    let input = common::analyze::lab_path("nagle-delayed-ack", "client");
    let out = dir.join("out.pcapng");
    let o = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .args(["annotate", "--format", "json", "-", "-o"])
        .arg(&out)
        .stdin(std::fs::File::open(&input).unwrap())
        .output()
        .unwrap();
    assert_eq!(o.status.code(), Some(1));
    let doc: serde_json::Value = serde_json::from_slice(&o.stdout).unwrap();
    assert_eq!(doc["files"][0]["path"], "-");
    assert_eq!(frames(&out), frames(&input));
}

#[test]
fn refuses_to_overwrite_its_input() {
    let dir = scratch("overwrite");
    let input = dir.join("in.pcap");
    std::fs::copy(
        common::analyze::lab_path("nagle-delayed-ack", "client"),
        &input,
    )
    .unwrap();
    let before = std::fs::read(&input).unwrap();
    let o = tcpwhy(&[
        "annotate",
        input.to_str().unwrap(),
        "-o",
        input.to_str().unwrap(),
    ]);
    assert_eq!(o.status.code(), Some(2));
    assert!(String::from_utf8_lossy(&o.stderr).contains("is an input"));
    assert_eq!(std::fs::read(&input).unwrap(), before);
}
