//! Loss recovery and spurious retransmissions (`loss.fast_retransmit`,
//! `loss.tail_loss_probe`, `loss.rto`, `retransmit.spurious`) on the lab's real-kernel
//! captures, from both ends: ids, frames checked in tshark, counts against the kernel's
//! own counters (manifest `nstat_delta`) and costs against the applications' timings.
//!
//! Runs `tcpwhy analyze --format json --min-cost 0`: spurious retransmissions cost no
//! waiting (their findings carry 0 ms) and must still be found.

mod common;

use serde_json::Value;
use std::path::{Path, PathBuf};

#[derive(Debug)]
struct Finding {
    id: String,
    stream: u64,
    cost_ms: f64,
    explanation: String,
    frames: Vec<u64>,
    notes: Vec<String>,
}

impl Finding {
    /// The count the explanation starts with ("2 retransmission timeouts by …").
    fn count(&self) -> u64 {
        self.explanation
            .split(' ')
            .next()
            .and_then(|n| n.parse().ok())
            .unwrap_or_else(|| panic!("no count in {:?}", self.explanation))
    }
    fn note(&self, frame: u64) -> &str {
        let i = self.frames.iter().position(|&f| f == frame);
        &self.notes[i.unwrap_or_else(|| panic!("frame {frame} not cited: {:?}", self.frames))]
    }
}

fn dir(scenario: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/lab")
        .join(scenario)
}

fn findings(path: &Path) -> Vec<Finding> {
    common::analyze::findings_json(path, &["--min-cost", "0"])
        .iter()
        .map(|f| Finding {
            id: f["id"].as_str().unwrap().to_string(),
            stream: f["stream"].as_u64().unwrap(),
            cost_ms: f["cost_ms"].as_f64().unwrap(),
            explanation: f["explanation"].as_str().unwrap().to_string(),
            frames: f["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["frame"].as_u64().unwrap())
                .collect(),
            notes: f["evidence"]
                .as_array()
                .unwrap()
                .iter()
                .map(|e| e["note"].as_str().unwrap().to_string())
                .collect(),
        })
        .collect()
}

fn manifest(scenario: &str) -> Value {
    let text = std::fs::read_to_string(dir(scenario).join("manifest.json")).expect("manifest");
    serde_json::from_str(&text).expect("manifest JSON")
}

/// The kernel's counter on one end, from the manifest's nstat deltas.
fn nstat(m: &Value, end: &str, counter: &str) -> u64 {
    m["nstat_delta"][end][counter].as_u64().expect(counter)
}

fn one<'a>(fs: &'a [Finding], id: &str) -> &'a Finding {
    let mine: Vec<&Finding> = fs.iter().filter(|f| f.id == id).collect();
    assert_eq!(mine.len(), 1, "{id}: {fs:#?}");
    mine[0]
}

/// The finding of `id` on `stream`; fails when there is none.
fn on_stream<'a>(fs: &'a [Finding], id: &str, stream: u64) -> &'a Finding {
    fs.iter()
        .find(|f| f.id == id && f.stream == stream)
        .unwrap_or_else(|| panic!("no {id} on stream {stream}: {fs:#?}"))
}

fn absent(fs: &[Finding], id: &str) {
    assert!(
        fs.iter().all(|f| f.id != id),
        "{id} must not be found: {fs:#?}"
    );
}

fn within(got: f64, want: f64, what: &str) {
    assert!(
        (got - want).abs() <= 0.25 * want,
        "{what}: {got:.1} ms, ground truth {want:.1} ms"
    );
}

/// tail-loss: the router drops the last data packet of the first response.
///
/// Checked in tshark: server.pcap frame 12 (seq 8689, 1312 B, IP ID 0xa510, 0.025491 s)
/// is the original; frame 19 (same bytes, IP ID 0xa511, 0.285694 s) repeats it with no
/// duplicate ACK between (tshark: "retransmission"). At the client the original never
/// arrived: frame 16 (IP ID 0xa50f, 0.050783 s) is the server's last packet before,
/// frame 18 (seq 8689, IP ID 0xa511, 0.311045 s) continues the stream with one ID
/// skipped, and tshark flags nothing there. nstat: server TCPLossProbes 1, TCPTimeouts 0.
/// Cost: the first response took 285.8 ms, the others 25.5 ms → 260.3 ms.
#[test]
fn tail_loss_probe_from_both_ends() {
    let m = manifest("tail-loss");
    let resp = &m["key_numbers"]["response_ms"];
    let truth = resp[0].as_f64().unwrap() - resp[1].as_f64().unwrap();
    let mut costs = Vec::new();
    for (end, original, probe) in [("server", 12, 19), ("client", 16, 18)] {
        let fs = findings(&dir("tail-loss").join(format!("{end}.pcap")));
        let f = one(&fs, "loss.tail_loss_probe");
        assert_eq!(f.count(), nstat(&m, "server", "TCPLossProbes"), "{end}");
        assert!(f.frames.contains(&original), "{end}: {:?}", f.frames);
        assert!(f.note(probe).contains("tail loss probe"), "{end}");
        within(f.cost_ms, truth, end);
        costs.push(f.cost_ms);
        assert_eq!(nstat(&m, "server", "TCPTimeouts"), 0);
        absent(&fs, "loss.rto");
        absent(&fs, "retransmit.spurious");
    }
    within(costs[1], costs[0], "client vs server");
}

/// fast-retransmit: the 100th server data packet is dropped in the middle of 1 MB.
///
/// Checked in tshark: server.pcap frame 144 (seq 142281, 0.103598 s) is the original,
/// frame 299 (0.129640 s) the first ACK with a SACK block (143729–145177) above it, frame
/// 302 (IP ID 0x11d2, 0.129901 s) the retransmission, which tshark calls "out-of-order"
/// (it left within the handshake RTT of the highest segment). At the client, frame 191
/// (0.129433 s) is the first segment past the hole, 192 its SACK, and frame 322
/// (0.155308 s) the repair, tshark's "fast retransmission". nstat: server TCPFastRetrans 1,
/// TCPTimeouts 0. Cost: the hole waited about one RTT (26.7 ms handshake) for the SACKs
/// to reach the server: 25.0 ms at the server, 25.9 ms at the client.
#[test]
fn fast_retransmit_from_both_ends() {
    let m = manifest("fast-retransmit");
    let rtt = m["key_numbers"]["rtt_handshake_median_ms"]
        .as_f64()
        .unwrap();
    let mut costs = Vec::new();
    for (end, before, repair) in [("server", 144, 302), ("client", 191, 322)] {
        let fs = findings(&dir("fast-retransmit").join(format!("{end}.pcap")));
        let f = one(&fs, "loss.fast_retransmit");
        assert_eq!(f.count(), nstat(&m, "server", "TCPFastRetrans"), "{end}");
        assert!(f.frames.contains(&before), "{end}: {:?}", f.frames);
        assert!(f.note(repair).contains("fast retransmit"), "{end}");
        within(f.cost_ms, rtt, end);
        costs.push(f.cost_ms);
        absent(&fs, "loss.rto");
        absent(&fs, "loss.tail_loss_probe");
        absent(&fs, "retransmit.spurious");
    }
    within(costs[1], costs[0], "client vs server");
}

/// rto: the one-segment response, its probe and the first RTO retransmission are
/// dropped.
///
/// Checked in tshark: server.pcap frame 6 (seq 1, 1000 B, 0.026343 s) is the original,
/// frame 7 (0.254782 s, +228 ms) the tail loss probe, frames 8 (0.486788 s, +232 ms)
/// and 9 (0.950776 s, +464 ms: doubled) the timeouts; frame 10 (0.977323 s) ACKs it.
/// At the client only frame 6 (IP ID 0x0621, 0.976153 s) arrives, after the server's
/// ACK of the request in frame 5 (IP ID 0x061d, 0.051515 s): three IDs skipped, i.e.
/// the original, the probe and the first timeout were lost. nstat: server
/// TCPLossProbes 1, TCPTimeouts 2. Cost: the response took 949.9 ms instead of one RTT
/// (25.2 ms) → 924.6 ms.
#[test]
fn rto_backoff_chain_from_both_ends() {
    let m = manifest("rto");
    let kn = &m["key_numbers"];
    let truth =
        kn["response_ms"][0].as_f64().unwrap() - kn["rtt_handshake_median_ms"].as_f64().unwrap();
    let mut costs = Vec::new();
    for (end, frames) in [("server", vec![6u64, 8, 9]), ("client", vec![5, 6])] {
        let fs = findings(&dir("rto").join(format!("{end}.pcap")));
        let rto = one(&fs, "loss.rto");
        assert_eq!(rto.count(), nstat(&m, "server", "TCPTimeouts"), "{end}");
        for fr in frames {
            assert!(rto.frames.contains(&fr), "{end}: {fr} in {:?}", rto.frames);
        }
        assert!(rto.explanation.contains("Backoff chain"), "{end}");
        within(rto.cost_ms, truth, end);
        costs.push(rto.cost_ms);
        let tlp = one(&fs, "loss.tail_loss_probe");
        assert_eq!(tlp.count(), nstat(&m, "server", "TCPLossProbes"), "{end}");
        assert!(tlp.explanation.contains("did not repair"), "{end}");
        absent(&fs, "retransmit.spurious");
    }
    let server = one(&findings(&dir("rto").join("server.pcap")), "loss.rto")
        .explanation
        .clone();
    assert!(
        server.contains("frames 7, 8, 9 sent 232 ms then 464 ms apart"),
        "{server}"
    );
    within(costs[1], costs[0], "client vs server");
}

/// rtt-step (seed 02): 25 ms handshake, 325 ms after it.
///
/// Checked in tshark, server.pcap: frame 17 (0.257094 s) is the client's request again
/// (its probe fired 232 ms after the request, whose ACK took 325 ms), frame 18 the
/// server's D-SACK for bytes 1–401; frame 19 (0.316859 s) the server's RTO retransmission
/// of bytes 1–1449, 291 ms after frame 6; frame 20 (0.351001 s, 34 ms later) ACKs the
/// original (TSecr 2695525493 = frame 6's TSval), frame 52 is the client's D-SACK for
/// 1–1449. client.pcap: frames 5 (probe), 29 (D-SACK), 30 (server's RTO, already ACKed
/// by frame 8), 31 (D-SACK). nstat: TCPDSACKRecv 1 on each end, TCPTimeouts 1 on the
/// server, TCPLossProbes 1 on the client (the server's TCPLossProbes 1 is frame 16, a
/// probe that sent new data: not a retransmission). Cost: none — the first response
/// took 975.5 ms = 3 RTTs of 325 ms, what 100 kB needs from an initial window of 10
/// segments (10 + 20 + 40 ≥ 69): the spurious retransmissions delayed nothing.
#[test]
fn spurious_timer_retransmissions_after_an_rtt_step() {
    let m = manifest("rtt-step");
    let dsacks = nstat(&m, "server", "TCPDSACKRecv") + nstat(&m, "client", "TCPDSACKRecv");
    for (end, proofs, rto) in [("server", [18u64, 52], 19u64), ("client", [29, 31], 30)] {
        let fs = findings(&dir("rtt-step").join(format!("{end}.pcap")));
        let f = one(&fs, "retransmit.spurious");
        assert_eq!(f.count(), dsacks, "{end}");
        for p in proofs {
            assert!(f.note(p).starts_with("D-SACK"), "{end} {p}");
        }
        assert!(f.note(rto).contains("retransmission timeout"), "{end}");
        assert!(
            f.explanation.contains("RTT of the handshake"),
            "{end}: {}",
            f.explanation
        );
        assert_eq!(f.cost_ms, 0.0);
        assert_eq!(
            one(&fs, "loss.rto").count(),
            nstat(&m, "server", "TCPTimeouts")
        );
        assert_eq!(
            one(&fs, "loss.tail_loss_probe").count(),
            nstat(&m, "client", "TCPLossProbes")
        );
    }
}

/// cached-ssthresh: two packets of the first response dropped early in slow start.
///
/// Checked in tshark: server.pcap stream 0, frames 38 and 41 (seq 34753 and 37649) are
/// the originals, 92 and 94 the repairs (tshark: fast retransmission and out-of-order).
/// nstat: server TCPFastRetrans 2, TCPTimeouts 0. The two holes (frames 38 and 41 sent
/// 16 µs apart) are repaired in the same round trip: together they cost about one RTT
/// (25.3 ms handshake), not two.
#[test]
fn fast_retransmits_before_the_cached_ssthresh() {
    let m = manifest("cached-ssthresh");
    let rtt = m["key_numbers"]["rtt_handshake_ms"][0].as_f64().unwrap();
    let mut costs = Vec::new();
    for end in ["server", "client"] {
        let fs = findings(&dir("cached-ssthresh").join(format!("{end}.pcap")));
        let f = one(&fs, "loss.fast_retransmit");
        assert_eq!(f.stream, 0);
        assert_eq!(f.count(), nstat(&m, "server", "TCPFastRetrans"), "{end}");
        within(f.cost_ms, rtt, end);
        costs.push(f.cost_ms);
        absent(&fs, "loss.rto");
    }
    within(costs[1], costs[0], "client vs server");
    let fs = findings(&dir("cached-ssthresh").join("server.pcap"));
    let f = one(&fs, "loss.fast_retransmit");
    for fr in [38, 41, 92, 94] {
        assert!(f.frames.contains(&fr), "{fr} in {:?}", f.frames);
    }
}

/// reordering (seed 03): every 40th server packet 4 ms late.
///
/// Checked in tshark: server.pcap frame 135 (seq 56473, 0.102590 s, tshark:
/// "out-of-order") is the server's one fast retransmission, frame 219 the client's
/// D-SACK for it. client.pcap: frame 131 (seq 56473, IP ID 0x7328, lower than frame 74's
/// 0x7329) is the late original, which tshark calls a fast retransmission; frame 163
/// (IP ID 0x735b) is the real retransmission, frame 164 its D-SACK. nstat: server
/// TCPFastRetrans 1, TCPDSACKRecv 1.
#[test]
fn spurious_fast_retransmit_caused_by_reordering() {
    let m = manifest("reordering");
    for (end, repair, dsack) in [("server", 135u64, 219u64), ("client", 163, 164)] {
        let fs = findings(&dir("reordering").join(format!("{end}.pcap")));
        let fast = one(&fs, "loss.fast_retransmit");
        assert_eq!(fast.count(), nstat(&m, "server", "TCPFastRetrans"), "{end}");
        assert!(fast.note(repair).contains("fast retransmit"), "{end}");
        let sp = one(&fs, "retransmit.spurious");
        assert_eq!(sp.count(), nstat(&m, "server", "TCPDSACKRecv"), "{end}");
        assert!(sp.note(dsack).starts_with("D-SACK"), "{end}");
        assert!(sp.explanation.contains("reordered"), "{end}");
        assert!(
            !fast.frames.contains(&131),
            "the late original is not a retransmission"
        );
        absent(&fs, "loss.rto");
    }
}

/// Every lab scenario from both ends: the loss-family ids of its manifest's `must` are
/// found and those of `must_not` are not (clean-bulk, keepalive-warm, nagle-nodelay,
/// app-limited and the other controls stay clean).
#[test]
fn lab_manifests_must_and_must_not() {
    let family = [
        "loss.fast_retransmit",
        "loss.tail_loss_probe",
        "loss.rto",
        "retransmit.spurious",
    ];
    let root = Path::new(env!("CARGO_MANIFEST_DIR")).join("examples/lab");
    let mut checked = 0;
    for e in std::fs::read_dir(&root).unwrap() {
        let d = e.unwrap().path();
        if !d.join("manifest.json").exists() {
            continue;
        }
        let m: Value =
            serde_json::from_str(&std::fs::read_to_string(d.join("manifest.json")).unwrap())
                .unwrap();
        for end in ["client", "server"] {
            let fs = findings(&d.join(format!("{end}.pcap")));
            for id in m["must"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str())
            {
                if family.contains(&id) {
                    assert!(fs.iter().any(|f| f.id == id), "{d:?} {end}: {id} missing");
                }
            }
            for id in m["must_not"]
                .as_array()
                .unwrap()
                .iter()
                .filter_map(|v| v.as_str())
            {
                if family.contains(&id) {
                    assert!(fs.iter().all(|f| f.id != id), "{d:?} {end}: {id} found");
                }
            }
            checked += 1;
        }
    }
    assert!(checked >= 40, "{checked}");
}

/// suricata-verify tls-subjectaltname stream 14, at the client, checked in tshark: the
/// server's bytes 8022–9228 arrive in frame 754 right after frame 753 (bytes 27568–27572)
/// overtook them; the client's SACK of 27568–27572 (frame 758, 29.090835 s) is the loss
/// signal; the retransmission arrives in frame 1302 (29.206024 s), 115 ms later, at a
/// handshake RTT of 18 ms (frames 344 → 369), and the next six follow 0.7–3 ms apart,
/// each after an ACK: ACK-clocked repairs (RACK's timer runs on the latest, queue-grown
/// RTT), not a timer (an RTO fires 200 ms at least after a transmission and then sends
/// one segment per RTT). They were named RTOs before the minimum-RTO rule; all 7 are
/// D-SACKed, so spurious.
#[test]
fn signal_driven_repairs_sooner_than_the_minimum_rto_are_fast_retransmits() {
    let path = common::analyze::public_path("suricata-verify-tls-subjectaltname.pcap");
    if !path.exists() {
        return;
    }
    let fs: Vec<Finding> = findings(&path)
        .into_iter()
        .filter(|f| f.stream == 14)
        .collect();
    absent(&fs, "loss.rto");
    let sp = one(&fs, "retransmit.spurious");
    assert!(sp.note(1302).contains("fast retransmit"), "{sp:?}");
    assert!(sp.note(1302).contains("frame 758"), "{sp:?}");
    assert!(sp.explanation.contains("7 fast retransmissions"), "{sp:?}");
}

/// Issue 12, sweep s1-042 (reorder, 5 ms RTT, every 39th data packet 19 ms late, at the
/// client, snaplen 96; tests/data/sweep/README.md): an original late by more than an RTT
/// is overtaken by its own fast retransmission, so at the receiver the retransmission
/// arrives first and the original after it. Checked in tshark: frame 125 (seq 55025,
/// IP ID 0xfe6f, the newest) is the retransmission; frame 193 (seq 55025, IP ID 0xfe4b,
/// older than the IDs around it) the original, 13.7 ms later; frame 194 the client's
/// D-SACK 55025–56473 ("D-SACK Sequence"); likewise 155 / 217 / 218 for seq 110049.
/// The tracker links each D-SACK to the latest copy (the late original, which is no
/// retransmission), so the retransmissions went unproven: the kernel counted 31
/// D-SACKs received (TCPDSACKRecv) and the sweep missed retransmit.spurious.
#[test]
fn dsack_of_a_late_original_proves_the_retransmission_that_overtook_it() {
    let f = findings(&common::analyze::sweep_path("s1-042-reorder-client.pcap"));
    let s = one(&f, "retransmit.spurious");
    assert_eq!(s.count(), 2, "{}", s.explanation);
    assert_eq!(s.cost_ms, 0.0);
    assert!(s
        .note(194)
        .contains("bytes 55025–56473 twice (retransmission in frame 125)"));
    assert!(s
        .note(218)
        .contains("bytes 110049–111497 twice (retransmission in frame 155)"));
    // The repairs were not needed: the fast retransmissions they were cost nothing.
    let fr = one(&f, "loss.fast_retransmit");
    assert!(
        fr.explanation.contains("2 of them were spurious"),
        "{}",
        fr.explanation
    );
}

/// Issue 12, sweep s10-056 at the client, snaplen 64 (tests/data/sweep/README.md): RTT
/// 12 ms (frames 1–3: handshake 12.5 ms), Reno through 7 Mbit/s with a 99-packet FIFO
/// (≈ 160 ms of queue). The kernel counted 111 fast retransmissions and no timeout
/// (TCPFastRetrans 111, TCPTimeouts 0). Checked in tshark: frame 519 (0.512953 s, seq
/// 515489, IP ID 0x41aa) jumps the hole at 512593; its repair, frame 751 (0.713638 s,
/// seq 512593, IP ID 0x423d: sent later), arrives 201 ms after it, behind the queue the
/// SACKs' repair waited in. Before the RTO floor counted the RTT (an RTO is at least
/// SRTT + 200 ms, `__tcp_set_rto`), the repairs 201–203 ms after their originals were
/// named `loss.rto` (24 timeouts, 241 ms).
#[test]
fn repairs_behind_a_queue_just_over_200_ms_are_not_timeouts() {
    let fs = findings(&common::analyze::sweep_path("s10-056-bulk-client.pcap"));
    absent(&fs, "loss.rto");
    let f = one(&fs, "loss.fast_retransmit");
    assert!(f.note(369).contains("past the hole"), "{f:?}");
    assert!(f.explanation.contains("88 fast retransmissions"), "{f:?}");
}

/// Issue 12, sweep s10-090 at the client, snaplen 64 (tests/data/sweep/README.md): RTT
/// 1.4 ms (frames 1–3), BBR, every 17th data packet 20 ms late. Checked in tshark: frame
/// 676 (0.047503 s, seq 471033, IP ID 0x2e87) and its retransmission, frame 701
/// (0.048712 s, IP ID 0x2f05), 1.21 ms later; the snaplen cut the SACK blocks. The kernel
/// counted no timeout (TCPTimeouts 0, TCPFastRetrans 50). No timer fires 1.2 ms after a
/// transmission (a probe waits 2·SRTT, at least 10 ms here; an RTO 200 ms); before, with
/// no signal in sight, it was named `loss.rto`. The client's partial ACK in the recovery,
/// frame 675 (0.047502 s, ACK 471033), asked for those bytes 1 µs before the original
/// passed, and the repair came one RTT after it (at the receiver a fast retransmission
/// arrives an RTT after its signal): it is cited as the repair's signal.
#[test]
fn a_repair_asked_for_just_before_its_original_passed_is_fast() {
    let fs = findings(&common::analyze::sweep_path("s10-090-reorder-client.pcap"));
    absent(&fs, "loss.rto");
    one(&fs, "loss.fast_retransmit");
    // Needless too (the original had been acknowledged): cited by retransmit.spurious.
    let f = one(&fs, "retransmit.spurious");
    assert!(
        f.note(701).contains("after the loss signal in frame 675"),
        "{f:?}"
    );
}

/// Issue 12, sweep s57-042 at the client, snaplen 64 (tests/data/sweep/README.md): BBR at
/// 4 ms, every 60th data packet 10 ms late. In tshark the client's ACKs stop at 772,713
/// from frame 1452 (0.068122 s) while later data arrives (frames 1453, 1455, …; their
/// window fields grow, so tshark flags no duplicate); the late original of 772,713 passes
/// at frame 1683 (0.073222 s) and its repair at frame 2092 (0.084459 s), 11.2 ms after it
/// and 16.3 ms after the ACKs began asking for it. nstat on the server: TCPFastRetrans 38,
/// TCPTimeouts 0. The signal came before the original as seen here, and the repair was
/// named a retransmission timeout (at cost 0).
#[test]
fn a_repair_of_a_late_original_asked_for_before_it_passed_is_fast() {
    let fs = findings(&common::analyze::sweep_path("s57-042-reorder-client.pcap"));
    absent(&fs, "loss.rto");
    one(&fs, "loss.fast_retransmit");
    let f = one(&fs, "retransmit.spurious");
    assert!(
        f.note(2092)
            .contains("after the loss signal in frame 1452 (16.3 ms earlier)"),
        "{f:?}"
    );
}

/// Issue 12, sweep s85-091 at the client, snaplen 64 (tests/data/sweep/README.md): Reno
/// at 6 ms, TSO at the server, data packets 116 and 290 dropped. In tshark frame 534
/// carries bytes 415,385–416,833, frame 535 jumps the hole to 418,281 and 536 carries the
/// rest with the FIN; the client's ACK, frame 537 (0.047168 s), advances to 416,833 with
/// a 44-byte header where its ACKs had 32 (12 bytes more: one SACK block, cut by the
/// snaplen). The repair of 416,833 passes at frame 538 (0.060429 s), 13.3 ms later (the
/// server's RACK timer; nstat: TCPFastRetrans 2, TCPTimeouts 0, TCPLossProbes 0). The
/// advancing ACK was no duplicate and its SACK blocks could not be read, so the repair
/// had been named a retransmission timeout.
#[test]
fn an_ack_whose_cut_options_hold_sack_blocks_signals_the_loss() {
    let fs = findings(&common::analyze::sweep_path("s85-091-loss-client.pcap"));
    absent(&fs, "loss.rto");
    let f = one(&fs, "loss.fast_retransmit");
    assert!(
        f.note(538)
            .contains("after the loss signal in frame 537 (13.3 ms earlier)"),
        "{f:?}"
    );
}

/// pcapplusplus-650-http-responses (../shared/captures/public/SOURCES.md): only the
/// server's packets are in the file. Stream 238: frame 589 (222.396148 s) carries bytes
/// 1–248 and frame 590 resends them 2.56 ms later (tshark: retransmission). No timer fires
/// that soon (a probe waits 2·SRTT plus its floor, an RTO at least 200 ms on Linux), and
/// the client's ACKs that asked for it are not in the capture: a fast retransmission
/// whose signal the capture lacks.
#[test]
fn a_retransmission_sooner_than_any_timer_is_fast_even_without_its_signal() {
    let fs = findings(&common::analyze::public_path(
        "pcapplusplus-650-http-responses.pcap",
    ));
    let f = on_stream(&fs, "loss.fast_retransmit", 238);
    assert!(f.note(590).contains("sooner than any timer fires"), "{f:?}");
}

/// Issue 12, sweep s19-091 at the client, its handshake and tail (tests/data/sweep/
/// README.md): BBR at 1 ms, 0.95 % loss towards the client. Checked in tshark: frame 21
/// (0.015030 s) is the client's FIN, sequence 1, with nothing before it unacknowledged;
/// the server's ACK of it was lost on the way, and frame 22 (0.226366 s) resends the
/// FIN 211 ms later, one probe timeout (1.5 RTT + 200 ms with one packet out); frame
/// 23, the server's ACK 2. The kernel counted it (TCPLossProbes 1): the detector looked
/// at data only. A FIN's probe delays nobody (the application had closed), so 0 ms, and
/// no spurious retransmission (the kernel saw no D-SACK).
#[test]
fn a_probe_of_a_bare_fin_is_a_tail_loss_probe_that_costs_nothing() {
    let f = findings(&common::analyze::sweep_path(
        "s19-091-loss-client-tail.pcap",
    ));
    let p = one(&f, "loss.tail_loss_probe");
    assert_eq!(p.frames, [21, 22]);
    assert_eq!(p.cost_ms, 0.0);
    assert!(
        p.note(22).contains("retransmits its FIN (sequence 1)"),
        "{}",
        p.explanation
    );
    assert!(f.iter().all(|x| x.id != "retransmit.spurious"));
}

/// Issue 12, sweep s25-080 at the client (tests/data/sweep/README.md): RTT 124 ms
/// (frames 1–3), CUBIC through 14 Mbit/s with a 432-packet FIFO, snaplen 64 (the SACK
/// blocks are cut). Slow start overflowed the queue; the server's one SACK recovery
/// repaired 251 segments (TCPFastRetrans 251, TCPSackRecovery 1, TCPTimeouts 0). Checked
/// in tshark: frame 2470 (1.792961 s, seq 2363137, IP ID 0xb983) jumps the hole at
/// 2360241; frame 2966 (2.007583 s) is the client's partial ACK 2360241, and frame 2967
/// (2.008404 s, seq 2360241, IP ID 0xba7d: sent later) is its repair, 215 ms after the
/// segment past the hole. The partial ACKs that drive such a recovery carry SACK
/// blocks the snaplen cut; with only the duplicate ACKs as signals, the last two repairs
/// (frames 2967, 2969) were named `loss.rto` (216 ms).
#[test]
fn repairs_driven_by_partial_acks_with_cut_options_are_fast_retransmits() {
    let fs = findings(&common::analyze::sweep_path("s25-080-bulk-client.pcap"));
    absent(&fs, "loss.rto");
    let f = one(&fs, "loss.fast_retransmit");
    // 251 at the server; the first, sent before the capture at the client saw its hole
    // opened, is one of the 250 it can place.
    assert!(f.explanation.contains("250 fast retransmissions"), "{f:?}");
}

/// Issue 12, sweep s25-077 at the server (tests/data/sweep/README.md): RTT 9.3 ms
/// (frames 1–3), snaplen 64 cutting the SYNs' options (SACK unknown), a slow reader.
/// The kernel sent two probes and no fast retransmission (TCPLossProbes 2,
/// TCPFastRetrans 0, TCPDSACKRecv 2). Checked in tshark: frame 45 (0.088272 s) sends
/// 72401–76745 with everything before it acknowledged (frame 44); frame 46 (0.089097 s),
/// the client's ACK 72401 again 0.8 ms later, left the client before frame 45 could
/// arrive (the client's D-SACK of the probe in frame 43); frame 47 (0.123849 s) probes
/// the tail, 75297–76745, 35.6 ms after frame 45. Taken for a duplicate ACK of frame
/// 45's data, frame 46 made frame 47 a fast retransmission.
#[test]
fn an_ack_sent_before_the_data_could_arrive_signals_no_loss_of_it() {
    let fs = findings(&common::analyze::sweep_path(
        "s25-077-slow_reader-server.pcap",
    ));
    absent(&fs, "loss.fast_retransmit");
    let p = one(&fs, "loss.tail_loss_probe");
    assert!(p.frames.contains(&47), "{p:?}");
    one(&fs, "retransmit.spurious");
}

/// Issue 12, held-out sweep s34-045 at the server (tests/data/sweep/README.md): RTT 1.1 ms
/// (frames 1–3), BBR with TSO, a slow reader; the kernel sent four probes and no fast
/// retransmission (TCPLossProbes 4, TCPFastRetrans 0, 4 D-SACKs). Checked in tshark:
/// frame 31 (0.004339 s) is a 15,928-byte TSO packet ending at 68057, the last data
/// sent; frame 32 (0.013024 s) resends its last segment, 66609–68057, 8.69 ms later with
/// no ACK in between; frame 33 D-SACKs it. Linux's probe timeout is 2·SRTT + 2 ms in
/// jiffies (`tcp_schedule_loss_probe`): 2 ticks at HZ = 250, which fire 4–8 ms after
/// being set. Below the 10 ms then taken as every timer's floor, frame 32 was named a
/// fast retransmission whose signal the capture missed.
#[test]
fn a_tail_probe_sooner_than_ten_ms_at_a_short_rtt_is_a_probe() {
    let fs = findings(&common::analyze::sweep_path(
        "s34-045-slow_reader-server.pcap",
    ));
    absent(&fs, "loss.fast_retransmit");
    let p = one(&fs, "loss.tail_loss_probe");
    assert_eq!(p.frames, [31, 32, 34, 35, 37, 38, 40, 41], "{p:?}");
    assert!(p.explanation.contains("4 tail loss probes"), "{p:?}");
    let s = one(&fs, "retransmit.spurious");
    assert!(s.frames.contains(&33), "{s:?}");
}

/// Issue 12, held-out sweep s61-064 at the server (66 ms, Reno, a 95 Mbit/s link with a
/// 43-packet FIFO; tests/data/sweep/README.md): the queue drops the tail of a flight
/// (379,191 onwards but 382,087). The client SACKs 382,087–383,535 (frames 405, 407);
/// after that its ACKs carry no SACK block, each acknowledging a repair, and each is
/// followed within 40 µs by the next holes' repairs: frame 409 → 410 and 411, 412 → 413
/// to 415 (0.7199 s, 295 ms after their originals), 416 → 417 to 419. The repair an ACK
/// covers was sent after every original still outstanding, so those are lost (RACK,
/// RFC 8985; a partial ACK, RFC 6582), and Linux in Recovery repairs them on that ACK.
/// nstat: TCPFastRetrans 17, no RTO, no loss probe; 17 repairs below the highest
/// sequence in tshark (14 flagged retransmissions, 3 out-of-order). They were named 8
/// timeouts (366 ms) and a tail loss probe.
#[test]
fn repairs_on_the_acks_of_earlier_repairs_are_the_recoverys() {
    let f = findings(&common::analyze::sweep_path("s61-064-bulk-server.pcap"));
    absent(&f, "loss.rto");
    absent(&f, "loss.tail_loss_probe");
    let fr = one(&f, "loss.fast_retransmit");
    assert!(
        fr.explanation.contains("17 fast retransmissions"),
        "{}",
        fr.explanation
    );
}

/// zeek-http-206-example-b.pcap stream 0, captured at the client: the server's last two
/// segments (seq 899890 and 901290, 1400 B each) never reached the client, and the
/// server resent both at every expiry of its timer until it gave up. Checked in tshark:
/// frames 1278/1279 at 1.714 s, 1280/1281 at 2.072 s, … 1300/1301 at 66.766 s, the pairs
/// 358, 516, 832, 1464, 1160, 2120, 4040, 7880, 15560, 15560 and 15560 ms apart; the RST
/// in frame 1302. Two backoff chains, each spelled out once (the explanation used to
/// repeat them, alternating, 25 times in 6 KB).
#[test]
fn each_backoff_chain_is_spelled_out_once() {
    let fs = findings(&common::analyze::public_path(
        "zeek-http-206-example-b.pcap",
    ));
    let rto = on_stream(&fs, "loss.rto", 0);
    let gaps = "358 ms then 516 ms then 832 ms then 1464 ms then 1160 ms then 2120 ms then \
                4040 ms then 7880 ms then 15560 ms then 15560 ms then 15560 ms";
    let chain = |first: u64| {
        let frames: Vec<String> = (0..12).map(|i| (first + 2 * i).to_string()).collect();
        format!("frames {} sent {gaps} apart", frames.join(", "))
    };
    let want = format!("Backoff chain: {}; {}. Cost", chain(1278), chain(1279));
    assert!(rto.explanation.contains(&want), "{}", rto.explanation);
    assert_eq!(
        rto.explanation.matches("frames ").count(),
        2,
        "{}",
        rto.explanation
    );
}
