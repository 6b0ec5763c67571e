//! `rwnd.no_window_scaling`, `rwnd.limited`, `rwnd.zero_window`, `rwnd.not_growing` and
//! `sndbuf.limited` on lab captures from both vantage points (numbers checked by hand in
//! tshark and against the lab's own record), the `flows` LIMIT breakdown, the controls,
//! and the public captures (every finding of these ids checked by hand; the check is
//! written next to it).
//!
//! Ground truth for "without the limit": clean-bulk (same lab, same kernel, no limit)
//! delivered its first 2 MB in 190.0 ms from the first data byte (client.pcap frames 4 →
//! 2690) at a 25.3 ms RTT: 7.5 RTTs; its first 1 MB in 157.8 ms (frame 1287): 6.2 RTTs.
//! A limited transfer's lab truth cost is its measured duration minus that many RTTs.

mod common;

use common::analyze::{frames, lab, lab_path, none_of, one, public, Finding};
use std::path::PathBuf;
use std::process::Command;

const NO_WSCALE: &str = "rwnd.no_window_scaling";
const LIMITED: &str = "rwnd.limited";
const ZERO: &str = "rwnd.zero_window";
const NOT_GROWING: &str = "rwnd.not_growing";
const SNDBUF: &str = "sndbuf.limited";
const FAMILY: [&str; 5] = [NO_WSCALE, LIMITED, ZERO, NOT_GROWING, SNDBUF];

fn family(f: &[Finding]) -> Vec<(String, u64)> {
    let mut v: Vec<(String, u64)> = f
        .iter()
        .filter(|x| FAMILY.contains(&x.id.as_str()))
        .map(|x| (x.id.clone(), x.stream))
        .collect();
    v.sort();
    v
}

fn near(measured: f64, truth: f64, what: &str) {
    assert!(
        (measured - truth).abs() <= 0.25 * truth,
        "{what}: {measured} vs truth {truth}"
    );
}

/// A number written in the explanation after `label`, e.g. "= 433 kB/s" → 433.
fn number_after(text: &str, label: &str) -> f64 {
    let i = text
        .find(label)
        .unwrap_or_else(|| panic!("{label:?} in {text}"))
        + label.len();
    let digits: String = text[i..]
        .trim_start()
        .chars()
        .take_while(|c| c.is_ascii_digit() || *c == ',' || *c == '.')
        .filter(|c| *c != ',')
        .collect();
    digits
        .parse()
        .unwrap_or_else(|_| panic!("number after {label:?} in {text}"))
}

fn hosts(f: &Finding) -> Vec<String> {
    f.fix
        .iter()
        .map(|x| x["host"].as_str().unwrap_or("").to_string())
        .collect()
}

/// no-window-scaling (150 ms RTT, the client's namespace has tcp_window_scaling=0, 2 MB
/// download). tshark: frame 1, the client's SYN, has no window-scale option (window
/// 64,240), frame 2, the SYN/ACK, none either (scaling needs both). server.pcap: frame 14
/// is the client's first ACK of data, window 65,535, its largest. Frame 167 leaves with
/// 65,160 B in flight, 375 B short of the 65,535 B window (within one segment); frame
/// 168 (375 B) fills it (tshark: "window is now completely full"). client.pcap: frame
/// 210 (0.754633 s) is that same segment (relative bytes 164,001–165,449, the server's
/// frame 167); the client's ACKs the server had then are those seen here one
/// capture-to-server round trip before: 150.243 ms, the shortest echo of a client TSval
/// by the server (the SYN→SYN/ACK leg, 150.487 ms, was 0.24 ms slower). With the
/// handshake's leg, frame 117 (bytes 94,497–95,945) was judged against frame 47's edge
/// (97,392) and called full, but the server sent it (its frame 98) after frame 97's ACK,
/// edge 107,528, 7,239 B beyond its flight: not full. (tshark's own flag compares with
/// the newest ACK seen here and never fires at the client.)
///
/// Ground truth: manifest ceiling 436,900 B/s (64 KiB / RTT), measured 407,548 B/s
/// (client: 2,097,152 B in 5145.8 ms from connect to last byte); the truth cost is
/// 5145.8 − 7.5 × 150.5 = 4017 ms. tcpwhy's average is over first → last data (4995 ms).
#[test]
fn no_window_scaling_is_named_from_both_ends_with_its_ceiling_and_cost() {
    let truth_cost = 5145.8 - 7.5 * 150.5;
    let s = lab("no-window-scaling", "server");
    let c = lab("no-window-scaling", "client");
    assert_eq!(frames(one(&s, NO_WSCALE))[..3], [1, 2, 167]);
    assert_eq!(frames(one(&c, NO_WSCALE))[..3], [1, 2, 210]);
    assert_eq!(frames(one(&s, LIMITED)).last(), Some(&14));
    for f in [&s, &c] {
        assert_eq!(
            family(f),
            [(LIMITED.to_string(), 0), (NO_WSCALE.to_string(), 0)]
        );
        none_of(f, &["sndbuf.limited", "loss.rto"]);
        for id in [NO_WSCALE, LIMITED] {
            let x = one(f, id);
            near(x.cost_ms, truth_cost, "cost");
            assert!(x.explanation.contains("65,535 B"), "{}", x.explanation);
            near(number_after(&x.explanation, "RTT ="), 436.9, "ceiling kB/s");
            near(
                number_after(&x.explanation, "averaged"),
                407.5,
                "average kB/s",
            );
            assert_eq!(hosts(x), ["client"], "the side without the option");
        }
        let x = one(f, NO_WSCALE);
        assert!(x
            .explanation
            .starts_with("The client's SYN had no window-scale option"));
        assert!(x.fix[0]["action"]
            .as_str()
            .unwrap()
            .contains("net.ipv4.tcp_window_scaling=1"));
        // 90 % of the transfer window-limited at both ends (flows: rwnd 90 % / 91 %).
        assert!(one(f, LIMITED).explanation.contains("receiver's window 9"));
        // The limited window's fix is the missing option, not a bigger buffer: no
        // SO_RCVBUF lifts a 16-bit window.
        let fix = one(f, LIMITED).fix[0]["action"].as_str().unwrap();
        assert!(
            fix.starts_with("enable window scaling on the client"),
            "{fix}"
        );
        assert!(!fix.contains("SO_RCVBUF"), "{fix}");
    }
}

/// small-sndbuf (150 ms RTT, the server's SO_SNDBUF is 32 KB, doubled by Linux, writes of
/// one MSS). tshark, server.pcap: at most 46,336 B in flight against the client's window
/// of up to 136,192 B; no retransmission, no duplicate ACK; frames 1376 (4.532 s), 1427
/// (4.683 s), 1479 (4.834 s) and 1535 (4.985 s) start RTT-long intervals of 41,992 B
/// each (29 × 1448 B: summed between the frames). client.pcap: 41,992 B per 151 ms
/// interval from round 4 on (frames 299, 353, 398, 447 start four of them).
///
/// Ground truth: 267,003 B/s measured (2,097,152 B in 7854.4 ms); truth cost 7854.4 −
/// 7.5 × 151.1 = 6721 ms. The lab's caveat: tcp_info's sndbuf_limited stays 0 on 6.18,
/// so the finding is judged by the wire (confidence medium at the sender, low at the
/// receiver).
#[test]
fn small_send_buffer_is_a_plateau_below_the_window_from_both_ends() {
    let truth_cost = 7854.4 - 7.5 * 151.1;
    let s = lab("small-sndbuf", "server");
    let c = lab("small-sndbuf", "client");
    assert_eq!(frames(one(&s, SNDBUF)), [1376, 1427, 1479, 1535]);
    assert_eq!(frames(one(&c, SNDBUF)), [299, 353, 398, 447]);
    for f in [&s, &c] {
        assert_eq!(family(f), [(SNDBUF.to_string(), 0)]);
        none_of(f, &[LIMITED, NO_WSCALE, "loss.rto"]);
        let x = one(f, SNDBUF);
        near(x.cost_ms, truth_cost, "cost");
        near(
            number_after(&x.explanation, "averaged"),
            267.0,
            "average kB/s",
        );
        near(number_after(&x.explanation, "RTT ="), 267.0, "ceiling kB/s");
        assert_eq!(hosts(x), ["server"]);
        assert!(x.fix[0]["action"].as_str().unwrap().contains("tcp_wmem"));
    }
}

/// slow-reader (25 ms RTT, the client reads 16 KB every 100 ms through a fixed 64 KB
/// SO_RCVBUF). tshark, both captures (same frame numbers): the client's zero windows in
/// frames 202 (0.7267 s), 257 (1.1268 s) and 613 (3.8268 s), each reopened 100.0 ms
/// later by a window update (frames 203: 16,916 B, 258: 17,214 B, 614: 17,330 B) — the
/// reader's 100 ms period; 300 ms in all. nstat on the client: TCPToZeroWindowAdv 3.
///
/// Ground truth for rwnd.limited: the 1 MB took 6300 ms at the client (connect → last
/// byte), 6.2 RTTs (≈ 158 ms) on a clean path: 6142 ms; tcpwhy counts first → last data
/// at the capture point (5700 ms), so ≈ 5540 ms.
#[test]
fn slow_reader_closes_its_window() {
    let truth_limited = 6300.1 - 157.8;
    let s = lab("slow-reader", "server");
    let c = lab("slow-reader", "client");
    for f in [&s, &c] {
        assert_eq!(family(f), [(LIMITED.to_string(), 0), (ZERO.to_string(), 0)]);
        none_of(f, &["loss.rto", SNDBUF]);
        let z = one(f, ZERO);
        assert_eq!(frames(z), [202, 203, 257, 258, 613, 614]);
        assert!((z.cost_ms - 300.0).abs() < 1.0, "{}", z.cost_ms);
        assert!(z.explanation.contains("3 time(s)"));
        assert_eq!(hosts(z), ["client"]);
        let l = one(f, LIMITED);
        near(l.cost_ms, truth_limited, "rwnd.limited cost");
        near(
            number_after(&l.explanation, "averaged"),
            166.4,
            "average kB/s",
        );
        assert!(l
            .explanation
            .contains("(rwnd.zero_window: its time is part of this"));
    }
}

/// fixed-rcvbuf (25 ms RTT, the client's SO_RCVBUF is 32 KB: autotuning off). tshark,
/// server.pcap: the client's first ACK of data, frame 14, advertises 34,752 B; frame 20
/// 39,096 B, its largest (ss on the server: snd_wnd at most 39,096); never zero. Frame 82
/// leaves with 38,024 B in flight: 1,072 B short of the window. client.pcap: frames 5
/// (34,752 B) and 9 (39,096 B). Host evidence (manifest): TCPMemoryPressures 0, so this
/// is the SO_RCVBUF look-alike of seed 04, which the finding says it cannot tell apart.
///
/// Ground truth: 1,495,518 B/s (2 MB in 1402.3 ms); truth cost 1402.3 − 190.0 (clean
/// 2 MB) = 1212 ms.
#[test]
fn fixed_receive_buffer_window_does_not_grow() {
    let truth_cost = 1402.3 - 190.0;
    let s = lab("fixed-rcvbuf", "server");
    let c = lab("fixed-rcvbuf", "client");
    assert_eq!(frames(one(&s, NOT_GROWING))[..3], [14, 20, 82]);
    assert_eq!(frames(one(&c, NOT_GROWING))[..2], [5, 9]);
    for f in [&s, &c] {
        assert_eq!(
            family(f),
            [(LIMITED.to_string(), 0), (NOT_GROWING.to_string(), 0)]
        );
        none_of(f, &[ZERO, "loss.rto", "host.tcp_mem_pressure"]);
        for id in [LIMITED, NOT_GROWING] {
            let x = one(f, id);
            near(x.cost_ms, truth_cost, "cost");
            assert!(x.explanation.contains("39,096 B"), "{}", x.explanation);
            near(
                number_after(&x.explanation, "averaged"),
                1495.5,
                "average kB/s",
            );
            assert!(hosts(x).iter().all(|h| h == "client"));
        }
        let g = one(f, NOT_GROWING);
        assert!(g.explanation.contains("34,752 B at the start"));
        assert!(g.explanation.contains("tcpwhy host"));
        assert!(g
            .fix
            .iter()
            .any(|x| x["action"].as_str().unwrap().contains("SO_RCVBUF")));
        assert!(g
            .fix
            .iter()
            .any(|x| x["action"].as_str().unwrap().contains("tcp_mem")));
    }
}

/// tcp-mem-pressure (issue 12 class 5, seed 04's shape with the real kernel: tcp_mem
/// lowered 150 ms into a 1.5 MB download at 25 ms RTT; manifest TCPMemoryPressures 1).
/// tshark, client.pcap: the client's window peaks at 346,112 B in frame 265 (0.132 s),
/// drains (frame 656: 7,168 B) and is 6,144 B from frame 659 (0.238 s) — 4 × its MSS of
/// 1460 rounded up to its window scale unit of 1,024 B — in all 390 ACKs up to frame
/// 1735 (4.361 s, 4,123 ms later), never zero; the ACK number moves from 627,673 to
/// 1,509,489 meanwhile (the reader kept up: 881,816 B). Then the pressure ends and the
/// window grows again (frames 1738 → 1824: 9,216 → 134,144 B). server.pcap: the same
/// ACKs are frames 403, 662 and 1738 (4,127 ms apart).
///
/// Ground truth: the server's tcp_info rwnd_limited 4,288 ms (ss, last sample); main at
/// 53eb44e named only rwnd.limited.
#[test]
fn tcp_memory_pressure_is_the_window_that_collapsed_to_four_mss() {
    let truth_cost = 4288.0;
    let s = lab("tcp-mem-pressure", "server");
    let c = lab("tcp-mem-pressure", "client");
    assert_eq!(frames(one(&c, NOT_GROWING))[..3], [265, 659, 1735]);
    assert_eq!(frames(one(&s, NOT_GROWING))[..3], [403, 662, 1738]);
    for (f, held) in [(&s, "4127 ms"), (&c, "4123 ms")] {
        assert_eq!(
            family(f),
            [(LIMITED.to_string(), 0), (NOT_GROWING.to_string(), 0)]
        );
        none_of(f, &[ZERO, "loss.rto"]);
        let g = one(f, NOT_GROWING);
        near(g.cost_ms, truth_cost, "cost");
        assert_eq!(g.cost_ms, one(f, LIMITED).cost_ms, "part of rwnd.limited");
        let e = &g.explanation;
        assert!(
            e.starts_with("The client's advertised window fell from 346,112 B to 6,144 B"),
            "{e}"
        );
        assert!(e.contains("at or below 6,144 B"), "{e}");
        assert!(e.contains(&format!("for {held} (390 ACKs)")), "{e}");
        assert!(e.contains("moved on by 881,816 B"), "{e}");
        assert!(e.contains("TCP memory pressure"), "{e}");
        // 6,144 B per ≈ 26 ms: 236 kB/s; 881,816 B in 4,123 ms is 214 kB/s.
        near(number_after(e, "RTT ="), 236.0, "clamp ceiling kB/s");
        assert_eq!(hosts(g), ["client"]);
        let fix = g.fix[0]["action"].as_str().unwrap();
        assert!(fix.contains("net.ipv4.tcp_mem") && fix.contains("TCPMemoryPressures"));
        assert!(!fix.contains("SO_RCVBUF"), "{fix}");
    }
}

/// Controls: a clean bulk download, an application-limited sender, and the
/// idle-restart scenarios: none of this family. Two controls of another mechanism are
/// window-limited for a round by the kernel's definition (tcp_write_xmit's
/// TCP_CHRONO_RWND_LIMITED), and rwnd.limited is named there, priced at that time:
/// - keepalive-warm/server.pcap: the first 741 KB response went out in rounds of 10, 20,
///   40, 80, 112 and 251 segments: the client's window stayed at 160,768 B for the fifth
///   round (autotuning still ramping; tshark flags frames 370, 373 and 1303 "window
///   full"), 50.2 ms at the edge in all. Both responses, modelled as one slow start of
///   1,482,684 B (7 rounds, 150 ms), took 195 ms: 43.9 ms at the server, 43.6 at the
///   client (41.8 while the lag to the server stayed the shortest echo ever, 42.6 while
///   each waiting ACK kept the lag of when it was seen, 43.4 while the ACKs no data
///   echoed took the shortest recent echo: the window's round grew the path's queue),
///   within its 50.2 ms. (The model counts the two responses as one transfer:
///   the first needed its 6 rounds anyway, so this is high by up to a round.)
/// - idle-restart-off/server.pcap: rounds of 10, 20, 40, 80, 150 and 213 segments, the
///   fifth capped by the window; 25.5 ms at the edge, all counted (0.1 ms of it
///   between an ACK that opened the window and the data that filled it again); 24.2 ms
///   at the client (23.1 while the ACKs no data echoed took the shortest recent echo).
#[test]
fn controls_stay_clean() {
    for scenario in [
        "clean-bulk",
        "app-limited",
        "idle-restart-cubic",
        "idle-restart-bbr",
        "cached-ssthresh",
        "fast-retransmit",
    ] {
        for side in ["client", "server"] {
            none_of(&lab(scenario, side), &FAMILY);
        }
    }
    for (scenario, side, cost) in [
        ("keepalive-warm", "server", 43.9),
        ("keepalive-warm", "client", 43.6),
        ("idle-restart-off", "server", 25.5),
        ("idle-restart-off", "client", 24.2),
    ] {
        let f = lab(scenario, side);
        assert_eq!(family(&f), [(LIMITED.to_string(), 0)], "{scenario}/{side}");
        assert!(
            (one(&f, LIMITED).cost_ms - cost).abs() < 0.1,
            "{scenario}/{side}"
        );
    }
}

/// Every lab manifest's `must` / `must_not` lists, for the ids of this family.
#[test]
fn lab_manifests_must_and_must_not_for_this_family() {
    let dir = PathBuf::from(env!("CARGO_MANIFEST_DIR")).join("examples/lab");
    let mut checked = 0;
    for entry in std::fs::read_dir(&dir).expect("examples/lab") {
        let path = entry.expect("entry").path();
        let Ok(text) = std::fs::read_to_string(path.join("manifest.json")) else {
            continue;
        };
        let m: serde_json::Value = serde_json::from_str(&text).expect("manifest");
        let list = |k: &str| -> Vec<String> {
            m[k].as_array()
                .map(|a| {
                    a.iter()
                        .filter_map(|x| x.as_str().map(String::from))
                        .collect()
                })
                .unwrap_or_default()
        };
        let (must, must_not) = (list("must"), list("must_not"));
        let scenario = path.file_name().unwrap().to_string_lossy().to_string();
        for side in ["client", "server"] {
            let f = lab(&scenario, side);
            for id in must.iter().filter(|i| FAMILY.contains(&i.as_str())) {
                assert!(f.iter().any(|x| &x.id == id), "{scenario}/{side}: {id}");
                checked += 1;
            }
            for id in must_not.iter().filter(|i| FAMILY.contains(&i.as_str())) {
                assert!(
                    !f.iter().any(|x| &x.id == id),
                    "{scenario}/{side}: not {id}"
                );
                checked += 1;
            }
        }
    }
    assert!(checked >= 20, "{checked}");
}

/// `flows`: the LIMIT column and the JSON `limited_ms` of the main data direction.
/// no-window-scaling: mostly the receiver's window; small-sndbuf: the sender's own
/// window; app-limited: about half application (16 KiB every 50 ms on a 25 ms path: each
/// write drains in one RTT, then the connection waits ≈ 25 ms).
#[test]
fn flows_shows_what_limited_each_transfer() {
    let flows = |scenario: &str, side: &str, json: bool| {
        let mut cmd = Command::new(env!("CARGO_BIN_EXE_tcpwhy"));
        cmd.arg("flows").arg(lab_path(scenario, side));
        if json {
            cmd.args(["--format", "json"]);
        }
        let out = cmd.output().expect("run tcpwhy");
        String::from_utf8(out.stdout).expect("utf-8")
    };
    let text = flows("no-window-scaling", "server", false);
    assert!(text.lines().next().unwrap().trim_end().ends_with("LIMIT"));
    assert!(text.contains("rwnd 91% cwnd 9% app 0%"), "{text}");
    for (scenario, side, want) in [
        ("no-window-scaling", "client", "rwnd"),
        ("no-window-scaling", "server", "rwnd"),
        ("fixed-rcvbuf", "client", "rwnd"),
        ("slow-reader", "server", "rwnd"),
        ("small-sndbuf", "client", "sender"),
        ("small-sndbuf", "server", "sender"),
        ("clean-bulk", "server", "sender"),
    ] {
        let doc: serde_json::Value =
            serde_json::from_str(&flows(scenario, side, true)).expect("JSON");
        let l = &doc["files"][0]["connections"][0]["server_to_client"]["limited_ms"];
        let get = |k: &str| l[k].as_f64().unwrap_or_else(|| panic!("{k} in {l}"));
        let total = get("rwnd") + get("sender") + get("app");
        assert!(get(want) / total > 0.85, "{scenario}/{side}: {l}");
        assert!(get("zero_window") <= get("rwnd"));
    }
    for side in ["client", "server"] {
        let doc: serde_json::Value =
            serde_json::from_str(&flows("app-limited", side, true)).expect("JSON");
        let l = &doc["files"][0]["connections"][0]["server_to_client"]["limited_ms"];
        let app = l["app"].as_f64().unwrap();
        let total = app + l["rwnd"].as_f64().unwrap() + l["sender"].as_f64().unwrap();
        assert!((0.35..0.6).contains(&(app / total)), "{side}: {l}");
    }
}

/// Public captures, checked by hand in tshark:
/// - wireshark-sample-ipp-window-full.pcap, stream 1 (a print job to a printer whose
///   window is 2,920–5,840 B): tshark flags frames 33, 36, 39, … "window is now
///   completely full" (frame 33 ends at 9,053 = ACK 4,637 + window 4,416); the server's
///   largest window is frame 26's 5,840 B.
///   Frame 233 is its zero window, frame 234 (212 ms later) the update to 2,920 B.
/// - tcptrace-zwnd.pcap: frame 18431 (9.53 s) zero window, six probes (18432 … 18442),
///   window update in frame 18444 at 31.61 s: 22,080 ms. Its handshake RTT is 0 at this
///   capture's 10 ms clock, so rwnd.limited cannot be priced (flows still says rwnd 92 %).
/// - tcptrace-urgent.pcap (chargen into a slow reader): frame 1356 (3.3468 s) zero
///   window, update in frame 1366 (6.4283 s): 3,081 ms, three probes between.
/// - zeek-http-206-example-b.pcap stream 0 (captured at the client, 71.7 ms to the
///   server and back): the client's SYN (frame 1) has no window scale, its window at
///   most 65,535 B. Frame 79 (0.301084 s) ends at relative byte 74,201; the server then
///   had the client's frame 28 (0.229225 s, one round trip before): ACK 19,601 + window
///   55,735 = 75,336, 1,135 B away, less than its 1,400 B MSS.
/// - suricata-verify-mime-stream-depth.pcap (an SMTP upload): the client's SYN offers
///   shift 8, the server's SYN/ACK (frame 2) has no option; the server's window is at
///   most 64,240 B (frame 6) and goes to zero 15 times (frame 289 at 0.984957 s → the
///   update to 1,460 B in frame 290, 80.7 ms later).
/// - tcptrace-discard-solaris.pcap streams 2 and 3: Solaris' 8,192 B window, no scaling:
///   the window is the receiver's buffer, not the missing option (not
///   no_window_scaling); rwnd.limited and not_growing are reported.
/// - tcptrace-fast-reuse.pcap: one 62 B message per 600 ms RTT, a stop-and-wait
///   application, is not a send buffer (no sndbuf.limited).
/// - No finding of this family on the window-scaling examples (a few packets each).
#[test]
fn public_captures_checked_by_hand() {
    let f = public("wireshark-sample-ipp-window-full.pcap");
    assert_eq!(
        family(&f),
        [(LIMITED.to_string(), 1), (ZERO.to_string(), 1)]
    );
    assert_eq!(frames(one(&f, LIMITED))[..1], [33]);
    assert_eq!(frames(one(&f, LIMITED)).last(), Some(&26));
    assert_eq!(frames(one(&f, ZERO)), [233, 234]);
    assert!((one(&f, ZERO).cost_ms - 212.5).abs() < 1.0);

    let f = public("tcptrace-zwnd.pcap");
    assert_eq!(family(&f), [(ZERO.to_string(), 0)]);
    assert_eq!(frames(one(&f, ZERO)), [18431, 18444]);
    assert!((one(&f, ZERO).cost_ms - 22_080.0).abs() < 1.0);
    assert!(one(&f, ZERO).explanation.contains("6 zero-window probe(s)"));

    let f = public("tcptrace-urgent.pcap");
    assert_eq!(family(&f), [(ZERO.to_string(), 0)]);
    assert_eq!(frames(one(&f, ZERO))[..2], [1356, 1366]);

    let f = public("zeek-http-206-example-b.pcap");
    let (s0, s1): (Vec<Finding>, Vec<Finding>) = f.into_iter().partition(|x| x.stream == 0);
    assert_eq!(frames(one(&s0, NO_WSCALE))[..3], [1, 2, 79]);
    assert_eq!(hosts(one(&s0, NO_WSCALE)), ["client"]);
    // Stream 1 filled the client's 64 KB window 11 times, 2.64 ms in all (0 % of its
    // 586 ms): named at what it cost. (1.57 ms until the time between an ACK that
    // opened the window and the data that filled it again counted as the window's; the
    // response's last flight, whose final ACK takes effect 73 ms after it, does not;
    // 2.87 ms until the 0.228 ms its last segment, frame 1543 (489 B, PSH), spent at the
    // edge counted too: the server's FIN came next, no new data, so it had nothing more
    // queued for the window to hold.)
    assert!((one(&s1, LIMITED).cost_ms - 2.642).abs() < 0.01);
    assert!((one(&s1, NO_WSCALE).cost_ms - 2.642).abs() < 0.01);

    let f = public("suricata-verify-mime-stream-depth.pcap");
    assert_eq!(hosts(one(&f, NO_WSCALE)), ["server"]);
    assert_eq!(frames(one(&f, ZERO))[..2], [289, 290]);

    let f = public("tcptrace-discard-solaris.pcap");
    none_of(&f, &[NO_WSCALE]);

    none_of(&public("tcptrace-fast-reuse.pcap"), &FAMILY);
    none_of(
        &public("wireshark-sample-win-scale-examples.pcapng"),
        &FAMILY,
    );
    // tcptrace-dsack.pcap: 16 MB from the client at a 582 ms RTT into the server's
    // window, 121,180 B from the first ACK on and never larger (flows: MAXWIN 121k, ws1);
    // the client reached its edge 443 times, 8,819 ms of the 149.9 s transfer (6 %; the
    // rest its own window, after 3 fast retransmissions). Of those, 1,788 ms are the
    // client's answers to the ACKs that opened the window: its data leave ≈ 4 ms after
    // each (frames 412 → 413: 4.2 ms; 417 → 418: 4.3 ms; 422 → 423: 4.0 ms) and fill it to
    // the edge again (416, 421, 426: within 996 B of ACK + 121,180), time Linux's rwnd
    // chrono counts too. Slow start would have sent the 16 MB in 5.6 s, so all count.
    let f = public("tcptrace-dsack.pcap");
    assert_eq!(
        family(&f),
        [(LIMITED.to_string(), 0), (NOT_GROWING.to_string(), 0)]
    );
    assert!((one(&f, LIMITED).cost_ms - 8818.8).abs() < 1.0);
    assert!(one(&f, LIMITED).explanation.contains("443 time(s)"));
    none_of(&public("tcptrace-long-rtt.pcap"), &FAMILY);
}

/// zeek-echo-connections.pcap.gz: 400 loopback connections, each echoing 52 one-byte
/// messages (tshark, stream 292: client frames 66303, 66602 … carry tcp.len 1, the
/// server's window is 64,256 B, the loopback MSS 65,495 B). A 1-byte flight is nowhere
/// near the edge of a 64 KB window; with the MSS as the slack ("within one segment of
/// the edge") every one of them counted as window-full and 133 connections got
/// rwnd.limited and rwnd.not_growing. The slack is now the largest segment the sender
/// actually sent.
#[test]
fn small_messages_under_a_large_mss_are_not_window_limited() {
    none_of(&public("zeek-echo-connections.pcap.gz"), &FAMILY);
}

/// The verdict adds nothing up, but a reader does: on fixed-rcvbuf the window that did
/// not grow is the same 1.2 s the window limited (rwnd.not_growing and rwnd.limited on
/// stream 0), on tcptrace-zwnd the zero window stands alone (no rwnd.limited there).
#[test]
fn verdict_says_when_a_window_finding_is_part_of_rwnd_limited() {
    let text = |path: PathBuf| {
        let out = std::process::Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
            .arg("analyze")
            .arg(path)
            .output()
            .expect("run tcpwhy");
        String::from_utf8(out.stdout).expect("UTF-8")
    };
    let v = text(lab_path("fixed-rcvbuf", "server"));
    let line = v
        .lines()
        .find(|l| l.trim_start().starts_with("rwnd.not_growing:"))
        .expect("verdict line");
    assert!(
        line.ends_with("(part of rwnd.limited's time, not in addition)"),
        "{line}"
    );
    let z = text(
        PathBuf::from(env!("CARGO_MANIFEST_DIR"))
            .join("../shared/captures/public/tcptrace-zwnd.pcap"),
    );
    let line = z
        .lines()
        .find(|l| l.trim_start().starts_with("rwnd.zero_window:"))
        .expect("verdict line");
    assert!(!line.contains("part of"), "{line}");
}
