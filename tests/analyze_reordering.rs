//! `reordering` and `network.bufferbloat` on lab captures from both vantage points
//! (numbers checked by hand in tshark and against the lab's record: path config, nstat
//! deltas, manifest key numbers), on the controls, on a capture with packets removed
//! (capture loss), and on the public captures (every finding of these ids checked by
//! hand; the check is written next to it).

mod common;

use common::analyze::{frames, lab, lab_path, one, Finding};
use std::path::{Path, PathBuf};
use std::process::Command;

const REORDERING: &str = "reordering";
const BUFFERBLOAT: &str = "network.bufferbloat";
const MINE: [&str; 2] = [REORDERING, BUFFERBLOAT];

fn public_dir() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("../shared/captures/public")
}

fn none_of(f: &[Finding], ids: &[&str], what: &str) {
    for x in f {
        assert!(!ids.contains(&x.id.as_str()), "{what}: unexpected {x:?}");
    }
}

fn fix_text(f: &Finding) -> String {
    f.fix
        .iter()
        .map(|x| x["action"].as_str().unwrap_or_default().to_string())
        .collect::<Vec<_>>()
        .join("\n")
}

fn within(measured: f64, truth: f64, tolerance: f64) -> bool {
    (measured - truth).abs() <= tolerance * truth
}

fn text_report(path: &Path) -> String {
    let out = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .arg("analyze")
        .arg(path)
        .output()
        .expect("run tcpwhy");
    String::from_utf8_lossy(&out.stdout).into_owned()
}

/// reordering, client.pcap (the receiver). truth/path.json: the router releases every
/// 40th server → client data packet 4 ms late, 20 times. In tshark
/// (`ip.id`, `tcp.seq`, `frame.time_relative` of the server's data): the 20 configured
/// ones are IP IDs 0x7328 + 40·k (k = 0…19: frames 131, 210, 212, 398, 414, 768, 770,
/// 772, 816, 818, 1316, 1350, 1352, 1354, 1356, 1358, 1431, 1433, 1435, 1437), each
/// arriving below the highest sequence with an IP ID older than one already seen, 3.36
/// to 4.12 ms after the segment that overtook it; 5 more arrive out of order by < 0.1 ms
/// (0x739b at 282, 0x73cd–0x73d0 at 378–390: the emulator's release order), so 25 in
/// all (server nstat TCPSACKReorder 24). Frame 74 (seq 57921, IP ID 0x7329) opens the
/// hole at 56473; frame 131 (0x7328) fills it 3.90 ms later, after 30 later segments;
/// frame 163 is the server's fast retransmission of 56473 (IP ID 0x735b, the newest)
/// and frame 164 the client's D-SACK for it (tshark: "D-SACK Sequence") — the one
/// retransmission of the run (server nstat TCPFastRetrans 1, TCPDSACKRecv 1,
/// TcpRetransSegs 1). Largest degree: frame 1316 (seq 633153) arrives when the highest
/// byte seen is 307 segments above its start: 306 later segments overtook it. Cost: 1
/// recovery × 30 % × the 25.6 ms handshake RTT (syn→synack 25.628 + 0.021 ms) ≈ 7.7 ms.
#[test]
fn reordering_seen_at_the_receiver() {
    let f = lab("reordering", "client");
    let r = one(&f, REORDERING);
    assert_eq!(r.stream, 0);
    assert_eq!(r.vantage, "client");
    assert_eq!(&frames(r)[..4], [74, 131, 163, 164]);
    assert!(frames(r).contains(&1316), "{:?}", frames(r));
    assert!(r.explanation.contains("25 segments"), "{}", r.explanation);
    assert!(
        r.explanation.contains("IP IDs are older"),
        "{}",
        r.explanation
    );
    assert!(
        r.explanation.contains("306 later segments"),
        "{}",
        r.explanation
    );
    assert!(
        r.explanation.contains("fast-retransmit 1 segment "),
        "{}",
        r.explanation
    );
    assert!(r.explanation.contains("D-SACK"), "{}", r.explanation);
    assert!(within(r.cost_ms, 0.3 * 25.649, 0.25), "{}", r.cost_ms);
    let fix = fix_text(r);
    assert!(fix.contains("rps_cpus"), "{fix}");
    // The degree that triggered the retransmission was 30 segments.
    assert!(fix.contains("tcp_reordering=31"), "{fix}");
}

/// reordering, server.pcap (the sender: the reordering happens beyond the capture
/// point). In tshark, the client's ACKs (`tcp.ack`, `tcp.options.sack_le/re`): 21 times
/// the cumulative ACK sits below a SACKed block and then jumps past it with no
/// retransmission of the hole (holes at 56473, 113321, 169793, … 1154433), the first
/// showing at frame 113 (ACK 56473, SACK 57921–59369). The server retransmits 56473 at
/// frame 135 (IP ID 0x735b; tshark calls it "out-of-order"), the ACK covers 56473 at
/// frame 172, 3.72 ms later — sooner than the 25 ms RTT, so the original did — and frame
/// 219 carries the D-SACK 56473–57921. Frame 1247 → 1953: the hole at 633153 stays open
/// 4.13 ms with up to 279 segments SACKed above it. Same cost as at the client.
#[test]
fn reordering_seen_at_the_sender_through_sacks() {
    let f = lab("reordering", "server");
    let r = one(&f, REORDERING);
    assert_eq!(r.vantage, "server");
    assert_eq!(&frames(r)[..4], [113, 135, 172, 219]);
    assert!(r.explanation.contains("21 times"), "{}", r.explanation);
    assert!(
        r.explanation.contains("279 later segments"),
        "{}",
        r.explanation
    );
    assert!(within(r.cost_ms, 0.3 * 25.6, 0.25), "{}", r.cost_ms);
    assert!(fix_text(r).contains("tcp_reordering=31"));
}

/// deep-queue (10 Mbit/s, a 400-packet FIFO, 25 ms path): server.pcap in tshark
/// (`tcp.analysis.ack_rtt` of the client's 1,679 ACKs): min 25.136 ms (frame 100), p95
/// 264.0 ms, median 185.2 ms, mean excess over the minimum 155.9 ms; frame 4490 has
/// 264.03 ms (at p95); `tcp.analysis.bytes_in_flight` peaks at 325,800 B. The client ACKed
/// 1,122,201 → 3,512,849 between 1.0 and 3.0 s: 1.195 MB/s. Manifest: server_min_rtt
/// 25.146 ms, max srtt 242.6 ms (smoothed), throughput 1,182,879 B/s.
#[test]
fn deep_queue_seen_at_the_sender() {
    let f = lab("deep-queue", "server");
    let b = one(&f, BUFFERBLOAT);
    assert_eq!(b.vantage, "server");
    assert_eq!(frames(b)[0], 100);
    assert_eq!(*frames(b).last().unwrap(), 4490);
    assert!(
        b.explanation.contains("from 25.1 ms to 264 ms at p95"),
        "{}",
        b.explanation
    );
    assert!(b.explanation.contains("median 185 ms"), "{}", b.explanation);
    // 1.18 MB/s (manifest) within 25 %: the text says ≈ 1.20 MB/s.
    let rate = b
        .explanation
        .split("stayed at ≈ ")
        .nth(1)
        .and_then(|s| s.split(" MB/s").next())
        .and_then(|s| s.parse::<f64>().ok())
        .expect("rate in the explanation");
    assert!(within(rate, 1.182_879, 0.25), "{rate}");
    // Queue at p95: 264 − 25.1 = 239 ms; ≈ 1.2 MB/s × 239 ms ≈ 286 KB.
    assert!(
        b.explanation.contains("(239 ms of delay)"),
        "{}",
        b.explanation
    );
    assert!(within(b.cost_ms, 155.9, 0.25), "{}", b.cost_ms);
    let fix = fix_text(b);
    assert!(fix.contains("fq_codel") && fix.contains("bbr"), "{fix}");
}

/// deep-queue, client.pcap (the receiver): data → ACK is the client's own ACK delay,
/// so the RTT is the client's ACK → the first server segment echoing its TSval. By a
/// script over tshark's `tcp.options.timestamp.tsval/tsecr` (first client pure ACK of
/// each TSval → first server data echoing it, mid-transfer): 1,541 samples, min 25.19
/// ms (frame 60), p95 262.8 ms, median 185.3 ms, mean excess 159.4 ms — the same queue
/// as at the server. Confidence one step lower (flight is estimated).
#[test]
fn deep_queue_seen_at_the_receiver_through_timestamps() {
    let f = lab("deep-queue", "client");
    let b = one(&f, BUFFERBLOAT);
    assert_eq!(b.vantage, "client");
    assert_eq!(frames(b)[0], 60);
    assert!(
        b.explanation.contains("from 25.2 ms to 263 ms at p95"),
        "{}",
        b.explanation
    );
    assert!(b.explanation.contains("1541 samples"), "{}", b.explanation);
    assert!(within(b.cost_ms, 159.4, 0.25), "{}", b.cost_ms);
    assert!(
        within(b.cost_ms, 155.9, 0.25),
        "the server saw {}",
        b.cost_ms
    );
}

/// fast-retransmit: data packet 100 dropped. client.pcap in tshark: frame 191 (seq
/// 143729, IP ID 0x1167) opens the hole at 142281; frame 322 fills it with IP ID 0x11d2,
/// newer than every ID before: a retransmission, i.e. network loss. server.pcap: the
/// retransmission is frame 302 (tshark: "out-of-order"); no D-SACK follows (nstat
/// TCPDSACKRecv 0, TCPSACKReorder 0). Not reordering, and no queue.
#[test]
fn a_real_drop_is_not_reordering() {
    for side in ["client", "server"] {
        none_of(&lab("fast-retransmit", side), &MINE, side);
    }
}

/// Every lab scenario: these ids only where the manifest's `must` lists them, never
/// where `must_not` does. clean-bulk's client.pcap has 14 segments out of order (tshark)
/// and 28 SACKed ACKs but no retransmission: reordering that triggered nothing costs
/// nothing and is named at zero cost only (below the default `--min-cost`). no-window-scaling is rwnd-limited:
/// its RTT stays flat (no bufferbloat).
#[test]
fn lab_manifests_must_and_must_not() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/lab");
    let mut scenarios: Vec<String> = std::fs::read_dir(&dir)
        .expect("examples/lab")
        .filter_map(|e| e.ok())
        .filter(|e| e.path().join("manifest.json").exists())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .collect();
    scenarios.sort();
    assert!(scenarios.len() >= 20, "{scenarios:?}");
    for s in &scenarios {
        let m: serde_json::Value = serde_json::from_str(
            &std::fs::read_to_string(dir.join(s).join("manifest.json")).expect("manifest"),
        )
        .expect("manifest JSON");
        let list = |k: &str| -> Vec<String> {
            m[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|v| v.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (must, must_not) = (list("must"), list("must_not"));
        for side in ["client", "server"] {
            if !lab_path(s, side).exists() {
                continue;
            }
            let f = lab(s, side);
            for id in MINE {
                let has = f.iter().any(|x| x.id == id);
                if must.iter().any(|m| m == id) {
                    assert!(has, "{s}/{side}: missing {id}");
                } else {
                    assert!(!has, "{s}/{side}: unexpected {id} (must_not: {must_not:?})");
                }
            }
        }
    }
}

/// Copies a legacy pcap without the given (1-based) frames.
fn drop_frames(src: &Path, dst: &Path, drop: &[u64]) {
    let b = std::fs::read(src).expect("read pcap");
    let le = match b[..4] {
        [0xd4, 0xc3, 0xb2, 0xa1] | [0x4d, 0x3c, 0xb2, 0xa1] => true,
        [0xa1, 0xb2, 0xc3, 0xd4] | [0xa1, 0xb2, 0x3c, 0x4d] => false,
        _ => panic!("not a legacy pcap"),
    };
    let u32_at = |i: usize| {
        let a = [b[i], b[i + 1], b[i + 2], b[i + 3]];
        if le {
            u32::from_le_bytes(a)
        } else {
            u32::from_be_bytes(a)
        }
    };
    let mut out = b[..24].to_vec();
    let (mut i, mut frame) = (24usize, 0u64);
    while i + 16 <= b.len() {
        let len = u32_at(i + 8) as usize;
        let end = i + 16 + len;
        frame += 1;
        if !drop.contains(&frame) {
            out.extend_from_slice(&b[i..end.min(b.len())]);
        }
        i = end;
    }
    std::fs::write(dst, out).expect("write pcap");
}

/// Capture loss: clean-bulk client.pcap without frames 204 (seq 152041) and 206 (seq
/// 153489), two server data segments the client received and ACKed (frames 205, 207:
/// ack 153489, 154937). The hole is never filled in the file and the client's ACKs pass
/// it: the capture missed them. The report must say so, and call it neither
/// reordering nor loss.
#[test]
fn capture_loss_is_neither_reordering_nor_loss() {
    let tmp = std::env::temp_dir().join(format!("tcpwhy-capture-loss-{}.pcap", std::process::id()));
    drop_frames(&lab_path("clean-bulk", "client"), &tmp, &[204, 206]);
    let f = common::analyze::findings(&tmp);
    let text = text_report(&tmp);
    let _ = std::fs::remove_file(&tmp);
    let lossy = [
        REORDERING,
        "loss.fast_retransmit",
        "loss.tail_loss_probe",
        "loss.rto",
        "retransmit.spurious",
    ];
    none_of(&f, &lossy, "clean-bulk without frames 204, 206");
    assert!(text.contains("the capture missed packets"), "{text}");
}

/// Public captures: every finding of these ids, each checked by hand.
/// - pcapplusplus-sll stream 0 (a 415 KB HTTP download, client side): by the
///   TSval/TSecr script (client ACK → first server data echoing it), RTT 15.0 ms at
///   frame 56 with 14 KB arriving per round trip, 34 ms with 65 KB at frames 222–278,
///   49.6 ms with 96 KB at frame 354: flight / RTT stays ≈ 1.9 MB/s while the RTT more
///   than triples — a queue at a ≈ 15 Mbit/s access link. Agreed (medium confidence).
/// - suricata-verify-http-body-hook-ipv6 stream 0 (1.7 MB download, client side): RTT
///   14.8 ms at the start, then a standing 28–35 ms with 64–73 KB per round trip from
///   0.3 s to the end (≈ 2.1 MB/s): 15–20 ms of standing queue. Agreed; correlation 0.75
///   (the flight plateaus), so low confidence.
/// - wireshark-sample-tcp-ethereal-file1 stream 0 (a 150 KB HTTP POST from
///   131.212.31.167, the sender's side): `tcp.analysis.ack_rtt` of the 85 ACKs: min
///   115.03 ms (frame 4), median 248.8 ms, p95 371.7 ms, max 386.4 ms (frame 102);
///   `tcp.analysis.bytes_in_flight` never above 8,192 B (frames 76, 87, 98) against a
///   32,760 B window; the ACK RTTs climb 155 → 245 → 330 → 350 → 370 ms within each
///   8 KB flight, ≈ 85 ms apart: each segment waits behind the ones sent before it at a
///   ≈ 0.2 Mbit/s link. Agreed (p95 372 ms, median 255 ms over 83 samples, high
///   confidence): named since the flight is taken when the sampled segment was sent
///   (session 14), not when its ACK came back, which fell as the RTT rose.
/// - No reordering anywhere. Rejected on the way (now tested by these expectations):
///   sharkfest20-trace2 stream 0 (three segments swapped by 3 µs at the sender's own
///   capture, frames 2576–2578, then a network loss after the capture point: the
///   retransmissions 2581–2586 answer the loss, none is D-SACKed); tcptrace-long-rtt
///   and zeek-http-206-example-a (holes covered about one RTT after their
///   retransmission: the retransmission's ACK, not a late original);
///   suricata-verify-tls-subjectaltname stream 14 (a 4-byte segment overtakes 17, frame
///   753; the D-SACKed resends at 1302–1330 come 115 ms later, six RTTs: not a fast
///   retransmission answering that reordering).
#[test]
fn public_captures_only_hand_checked_findings() {
    let dir = public_dir();
    let Ok(entries) = std::fs::read_dir(&dir) else {
        return; // not present in this checkout
    };
    let expected: &[(&str, &str, u64)] = &[
        ("pcapplusplus-sll.pcap", BUFFERBLOAT, 0),
        ("suricata-verify-http-body-hook-ipv6.pcap", BUFFERBLOAT, 0),
        ("wireshark-sample-tcp-ethereal-file1.pcap", BUFFERBLOAT, 0),
    ];
    let mut names: Vec<String> = entries
        .filter_map(|e| e.ok())
        .map(|e| e.file_name().to_string_lossy().into_owned())
        .filter(|n| n.ends_with(".pcap") || n.ends_with(".pcapng") || n.ends_with(".pcap.gz"))
        .collect();
    names.sort();
    let mut seen = Vec::new();
    for n in &names {
        for f in common::analyze::findings(dir.join(n)) {
            if MINE.contains(&f.id.as_str()) {
                seen.push((n.clone(), f.id.clone(), f.stream));
            }
        }
    }
    let mut want: Vec<(String, String, u64)> = expected
        .iter()
        .filter(|e| names.iter().any(|n| n == e.0))
        .map(|&(n, id, s)| (n.to_string(), id.to_string(), s))
        .collect();
    want.sort();
    seen.sort();
    assert_eq!(seen, want);
}

/// sharkfest20-trace2 (captured at the sender 10.0.1.3): tshark flags "ACKed segment
/// that wasn't captured" (e.g. frame 2588: 2062771–2066896 never in the file, the
/// receiver's ACKs pass it). The report says the capture missed packets; no
/// reordering.
#[test]
fn public_capture_with_acked_unseen_says_capture_loss() {
    let p = public_dir().join("sharkfest20-trace2.pcapng");
    if !p.exists() {
        return;
    }
    let text = text_report(&p);
    assert!(text.contains("the capture missed packets"), "{text}");
    none_of(
        &common::analyze::findings(&p),
        &[REORDERING],
        "sharkfest20-trace2",
    );
}

/// The same capture's findings above 1 ms are of four ids (app.server_think_time,
/// loss.rto, loss.tail_loss_probe, loss.fast_retransmit): the text verdict lists three
/// and counts the one left in the singular, where it said "1 more kinds".
#[test]
fn the_verdict_counts_one_kind_left_in_the_singular() {
    let p = public_dir().join("sharkfest20-trace2.pcapng");
    if !p.exists() {
        return;
    }
    let f = common::analyze::findings(&p);
    let mut ids: Vec<&str> = f.iter().map(|x| x.id.as_str()).collect();
    ids.sort_unstable();
    ids.dedup();
    assert_eq!(ids.len(), 4, "{ids:?}");
    let text = text_report(&p);
    assert!(
        text.contains("… and 1 more kind of finding below\n"),
        "{text}"
    );
}

/// Issue 12, class 1: reordering that triggered no retransmission is named at zero cost.
/// clean-bulk's client.pcap (an older emulator that reordered by itself): 14 server data
/// segments arrive below the highest sequence with IP IDs older than IDs already seen
/// (tshark `tcp.analysis.out_of_order`: frames 1949 (0x6b7c), 1953, 1957 …; frame 1967,
/// seq 1531985, IP ID 0x6b80, comes 0.21 ms after frame 1947 opened its hole, 15 later
/// segments ahead of it), the largest 0.61 ms late; the server retransmitted nothing
/// (tshark: no retransmission). Before, nothing was named even with `--min-cost 0`.
#[test]
fn absorbed_reordering_is_named_at_zero_cost() {
    let path = lab_path("clean-bulk", "client");
    let all = common::analyze::findings_json(&path, &["--min-cost", "0"]);
    let r: Vec<&serde_json::Value> = all.iter().filter(|f| f["id"] == REORDERING).collect();
    assert_eq!(r.len(), 1, "{all:#?}");
    let r = r[0];
    assert_eq!(r["cost_ms"].as_f64(), Some(0.0));
    let text = r["explanation"].as_str().unwrap_or_default();
    assert!(text.contains("absorbed at no cost"), "{text}");
    assert!(text.contains("14 segments"), "{text}");
    assert!(text.contains("up to 15 later segments"), "{text}");
    assert!(text.contains("up to 0.61 ms late"), "{text}");
    let frames: Vec<u64> = r["evidence"]
        .as_array()
        .map(|a| a.iter().filter_map(|e| e["frame"].as_u64()).collect())
        .unwrap_or_default();
    assert_eq!(frames, [1947, 1967, 1947, 1949]);
    // Below the default --min-cost: not among the findings that cost time.
    none_of(
        &lab("clean-bulk", "client"),
        &[REORDERING],
        "clean-bulk client",
    );
}

fn sweep_findings(name: &str) -> Vec<Finding> {
    common::analyze::findings_at_any_cost(common::analyze::sweep_path(name))
}

/// Issue 12, sweep s2-050 at the server (the sender), snaplen 64: the receiver's SACK
/// blocks are cut, so no SACK hole was ever seen and the reordering went unnamed (label:
/// recoveries undone 2, receiver TCPOFOQueue). In tshark: the client's ACK of 176657
/// (frame 352) is repeated in frames 359, 364 and 365 (options cut at 64 bytes) while
/// the server's data goes on above it; frame 366 (0.703331 s) retransmits seq 176657 (first sent in frame 182); frame
/// 369 (0.706670 s) acknowledges 185345, 3.34 ms after the retransmission on a path of
/// 117 ms: the original had arrived. Repeated cumulative ACKs below data in flight stand
/// for the segments above the hole that the cut SACK blocks would have listed.
#[test]
fn reordering_seen_at_a_sender_whose_snaplen_cut_the_sack_blocks() {
    let f = sweep_findings("s2-050-reorder-server.pcap");
    let r = one(&f, REORDERING);
    assert_eq!(frames(r), [359, 366, 369]);
    assert!(
        r.explanation
            .contains("fast-retransmit 1 segment that was only late"),
        "{}",
        r.explanation
    );
}

/// Issue 12, sweep s2-042 at the server (TSO on, snaplen 128): SACK blocks whole, the
/// receiver's D-SACK in frame 106 (201273–202721) for the fast retransmission in frame 94,
/// the hole covered in frame 100. The duplicate-ACK threshold was counted in the TSO
/// packets' size (65,160 B), so 152,040 bytes SACKed above the hole (105 segments) were
/// "fewer than 3" and the retransmission was not put down to the reordering.
#[test]
fn the_duplicate_ack_threshold_counts_segments_not_tso_packets() {
    let f = sweep_findings("s2-042-reorder-server.pcap");
    let r = one(&f, REORDERING);
    assert_eq!(frames(r), [91, 94, 100, 106]);
    assert!(
        r.explanation.contains("up to 105 later segments"),
        "{}",
        r.explanation
    );
}

/// The same capture, whose counts are all one (tshark: one SACK hole, frame 91, with 105
/// segments above it; one retransmission, frame 94; one D-SACK, frame 106): the texts say
/// so in the singular, where they said "1 times", "1 of the 1 reached", "1 of 1
/// retransmissions were" and "1 of them were".
#[test]
fn counts_of_one_are_told_in_the_singular() {
    let f = sweep_findings("s2-042-reorder-server.pcap");
    let has = |id: &str, text: &str| {
        let e = &one(&f, id).explanation;
        assert!(e.contains(text), "{id}: {e}");
    };
    has(
        REORDERING,
        "beyond the capture point: once the receiver's SACKs",
    );
    has(
        REORDERING,
        "overtook one (it reached Linux's duplicate-ACK threshold",
    );
    has("retransmit.spurious", "1 of 1 retransmission was spurious");
    has("loss.fast_retransmit", "1 of them was spurious");
}

/// Issue 12, sweep s3-056 at the server (bulk through a 135-packet FIFO at 94 Mbit/s,
/// snaplen 96; the kernel's reordering counters 0 and nothing undone, 262 retransmissions:
/// loss). In tshark: seq 748617 is sent in frame 761 and retransmitted in frame 1507
/// (0.147540 s); the client's SACKs show a hole there from frame 1798 (0.180252 s, the
/// SACK history dated it then) and its ACK covers it in frame 1828, 0.42 ms later. The
/// hole had been retransmitted 33 ms before it was dated, so the ACK may answer that
/// retransmission: no late original. Before, only retransmissions after the hole's date
/// counted, and this loss was named as reordering absorbed at no cost.
#[test]
fn a_hole_retransmitted_before_it_was_dated_is_no_late_original() {
    let f = sweep_findings("s3-056-bulk-server.pcap");
    assert!(f.iter().all(|x| x.id != REORDERING), "{f:?}");
    assert_eq!(one(&f, "loss.fast_retransmit").stream, 0);
}

/// Issue 12, sweep s4-010 at the server (the sender), snaplen 64: 1 ms RTT, every 80th
/// data packet 10 ms late; the kernel undid 16 recoveries (TCPDSACKUndo) and counted no
/// SACK reordering, because each fast retransmission overtook its late original. In
/// tshark: seq 114393, first sent in frame 117 (0.005794 s), is retransmitted in frame 209
/// (0.007424 s) after the client's repeated ACKs of it (frames 206–208, 44-byte headers:
/// timestamps and one SACK block, cut at 64 bytes); frame 331 (0.008973 s) covers it
/// 1.55 ms later, as a needed retransmission would be. Frame 567 (0.017018 s) has a
/// 44-byte header between frames 566 and 579 of 32: the one-off block of a D-SACK, the
/// original arriving 11.2 ms after it was sent. Before, nothing but loss.fast_retransmit
/// was named.
#[test]
fn reordering_seen_through_a_dsack_the_snaplen_cut() {
    let f = sweep_findings("s4-010-reorder-server.pcap");
    let r = one(&f, REORDERING);
    assert_eq!(frames(r), [206, 209, 331, 567]);
    assert!(
        r.explanation.contains("up to 9.60 ms late")
            && r.explanation
                .contains("1 of those retransmissions were shown needless")
            && r.explanation
                .contains("fast-retransmit 1 segment that was only late, first at frame 209"),
        "{}",
        r.explanation
    );
}

/// Issue 12, sweep s27-048 at the server (tests/data/sweep/README.md): RTT 6.2 ms, Reno
/// through 23 Mbit/s with a 106-packet FIFO (≈ 56 ms of queue), snaplen 128. Checked in
/// tshark: frame 44 (0.020003 s) ACKs after 6.24 ms (`tcp.analysis.ack_rtt`); before the
/// first repair (frame 655, 0.144446 s) the 177 ACK RTTs reach p95 55.5 ms, max 62.1 ms;
/// frame 593 (0.130290 s) has 53.7 ms. The kernel's srtt peaked at 61.1 ms; its two SACK
/// recoveries repaired 120 segments (TCPFastRetrans 120). Over all 799 ACKs tshark's p95
/// is 133 ms: the ACKs that covered the repairs (frames 655–1169), which the segments
/// sent behind each hole waited for. Before, the flight taken when each ACK came back
/// (it falls as the RTT rises in a recovery) gave a 0.67 correlation and no finding; now
/// the flight when the segment was sent, and no sample from an ACK covering a repair
/// (Karn's rule, Linux's tcp_ack_update_rtt), as the kernel does.
#[test]
fn deep_queue_with_a_recovery_at_the_sender() {
    let f = common::analyze::findings(common::analyze::sweep_path("s27-048-bulk-server.pcap"));
    let b = one(&f, BUFFERBLOAT);
    assert_eq!(frames(b)[0], 44);
    assert_eq!(*frames(b).last().unwrap(), 593);
    assert!(
        b.explanation.contains("from 6.24 ms to 53.6 ms at p95"),
        "{}",
        b.explanation
    );
}

/// The same run at the client, the receiver (tests/data/sweep/README.md): the RTT is the
/// client's pure ACK → the first server data echoing its TSval. Checked in tshark
/// (`tcp.options.timestamp.tsval`/`tsecr`): frame 28 (0.020652 s) echoes the ACK of frame 9
/// (0.014335 s), 6.32 ms; frame 305 (0.104692 s) the ACK of frame 171 (0.069133 s),
/// 35.6 ms; frame 426 (0.144126 s) the ACK of frame 221 (0.082100 s), 62.0 ms. Over the
/// 493 echoes the median is 36.8 ms and p95 61.6 ms (the kernel's srtt peaked at 61.1).
/// The flight is the data that arrived during each round trip: counted by the highest
/// sequence it fell to 46 KB at 61.7 ms while the recovery's repairs filled holes below
/// it (frame 920), a 0.58 correlation and no finding; counted as every byte that
/// arrived, repairs included, 170 KB and 1.00. The queue at p95 is the 106-packet FIFO
/// the scenario set: 106 segments of 1,448 B are 153 KB.
#[test]
fn deep_queue_with_a_recovery_at_the_receiver() {
    let f = common::analyze::findings(common::analyze::sweep_path("s27-048-bulk-client.pcap"));
    let b = one(&f, BUFFERBLOAT);
    assert_eq!(frames(b), vec![28, 305, 426]);
    assert!(
        b.explanation
            .contains("the RTT rose from 6.32 ms to 61.6 ms at p95 (median 36.8 ms; correlation with the flight 1.00 over 493 samples)"),
        "{}",
        b.explanation
    );
    assert!(
        b.explanation.contains("queue held ≈ 152 KB"),
        "{}",
        b.explanation
    );
}

/// Issue 12, sweep s20-069 at the server (tests/data/sweep/README.md): a slow reader at
/// 2.1 ms RTT (frames 1–3), no bottleneck (the label: must not). Checked in tshark: the
/// server sends a window, 30,408 B, in frames 79–82 (0.618 s); the client ACKs all of it
/// only in frame 83, 43.0 ms later, with a zero window (its buffer full, the ACK held on
/// the delayed-ACK timer), then reopens the window in frame 84 when its reader took
/// 30 KB. Every RTT sample is such an ACK of everything in flight after a silence of the
/// receiver at least as long as the sample's excess: the receiver's timing, not a
/// queue's. With the flight taken at the send (session 14) these samples correlated
/// with it (0.81) and were called a 41 ms queue.
#[test]
fn a_slow_readers_held_acks_are_no_queue() {
    let f = common::analyze::findings(common::analyze::sweep_path(
        "s20-069-slow_reader-server.pcap",
    ));
    none_of(&f, &[BUFFERBLOAT], "s20-069 server");
    one(&f, "rwnd.zero_window");
}

/// Issue 12, sweep s51-010 at the client (tests/data/sweep/README.md): RTT 97 ms, BBR,
/// every 13th data packet 5 ms late, snaplen 64 (no SACK blocks or timestamps to
/// read). The server's nstat: TCPFastRetrans 0, TcpRetransSegs 0, TCPSACKReorder 48.
/// In tshark, frame 230 (0.587175 s) carries bytes 167,969–169,417 with IP ID 0x3087,
/// after frames 224, 226 and 228 with 0x3088–0x308a: an original sent before them, 5 ms
/// after the client's first duplicate ACK (frame 225), where a fast retransmission
/// could arrive only a 97 ms round trip later. The server's IDs count its packets, but
/// each late packet makes two irregular steps (back to it, then on past it), 2 in 13:
/// too many for a counter, so nine such originals were named fast retransmissions
/// (35 ms). Counted from the latest ID (one irregular step in 13), they order the
/// packets: reordering only.
#[test]
fn late_originals_under_a_cut_snaplen_are_ordered_by_their_ip_ids() {
    let path = common::analyze::sweep_path("s51-010-reorder-client.pcap");
    let ids = common::analyze::ids_at_any_cost(&path);
    assert_eq!(ids, ["reordering"], "{ids:?}");
    let all = sweep_findings("s51-010-reorder-client.pcap");
    let r = one(&all, "reordering");
    assert!(r.explanation.contains("48 segments"), "{}", r.explanation);
    assert!(
        r.explanation
            .contains("their IP IDs are older than IDs already seen"),
        "{}",
        r.explanation
    );
}

/// Issue 12, sweep s100-072 at the server (Reno at 47 ms, snaplen 64, 73 Mbit/s with a
/// 260-packet FIFO; tests/data/sweep/README.md): the FIFO overflowed and one recovery
/// sent 394 fast retransmissions (nstat: TCPFastRetrans 394, TCPSACKReorder 0, no
/// D-SACK). In tshark seq 1,609,113 left at frame 1583 (0.394015 s, IP ID 0x0e24) and
/// again at frame 2735 (0.485707 s, 0x1169); 380 more repeats followed before frame
/// 3212 (0.548904 s) acknowledged up to it with SACK blocks above (cut by the snaplen,
/// told by the header's length), and frame 3354 (0.560600 s) covered it, 74.9 ms after
/// the retransmission on a 47 ms path: the retransmission's arrival. The detector
/// remembers the latest 256 retransmissions; with 2735 let go it took the covered hole
/// for a late original and named reordering (at 0 ms). A hole below a retransmission it
/// let go now tells nothing.
#[test]
fn a_hole_whose_retransmission_was_let_go_is_no_late_original() {
    let path = common::analyze::sweep_path("s100-072-bulk-server.pcap");
    common::analyze::not_at_any_cost(&path, REORDERING);
    one(&common::analyze::findings(&path), "loss.fast_retransmit");
}
