//! `delayed_ack.nagle` and `delayed_ack.cwnd` on the lab captures from both ends (frames
//! and times checked by hand in tshark, costs against the lab's ground truth), the lab's
//! controls, and every public capture (each finding of these ids read in tshark; why it is
//! right is written next to it).

mod common;

use common::analyze::{frames, lab, sweep_path, Finding};
use std::path::PathBuf;

const NAGLE: &str = "delayed_ack.nagle";
const CWND: &str = "delayed_ack.cwnd";
const MINE: [&str; 2] = [NAGLE, CWND];

fn root() -> PathBuf {
    PathBuf::from(env!("CARGO_MANIFEST_DIR"))
}

fn manifest(scenario: &str) -> serde_json::Value {
    let path = root()
        .join("examples/lab")
        .join(scenario)
        .join("manifest.json");
    serde_json::from_str(&std::fs::read_to_string(path).unwrap()).unwrap()
}

fn numbers(v: &serde_json::Value) -> Vec<f64> {
    v.as_array()
        .unwrap()
        .iter()
        .map(|x| x.as_f64().unwrap())
        .collect()
}

fn public_dir() -> PathBuf {
    root().join("../shared/captures/public")
}

fn mine(f: &[Finding]) -> Vec<&Finding> {
    f.iter().filter(|x| MINE.contains(&x.id.as_str())).collect()
}

fn one<'a>(f: &'a [Finding], id: &str) -> &'a Finding {
    let v = mine(f);
    assert_eq!(v.len(), 1, "{id}: {v:?}");
    assert_eq!(v[0].id, id, "{v:?}");
    v[0]
}

fn fix_hosts(f: &Finding) -> Vec<String> {
    f.fix
        .iter()
        .map(|x| x["host"].as_str().unwrap().to_string())
        .collect()
}

/// nagle-delayed-ack (seed 05): the client writes three 132-byte messages, the echo
/// server echoes what it reads, message by message, without TCP_NODELAY. In tshark,
/// client.pcap round 2: frame 13 brings the client's 2nd and 3rd messages (264 B) at
/// 0.402399 s; the server echoes the 2nd at once (frame 14, 132 B, arriving 0.404603 s),
/// Nagle holds the 3rd; the client, with nothing to send, ACKs frame 14 only at frame 15
/// (0.445294 s, 40.7 ms later, a pure ACK: its delayed-ACK timer, nstat DelayedACKs 4),
/// and the held echo arrives at frame 16 (0.447522 s), one RTT (2.19 ms) after that ACK:
/// it waited 42.92 ms. Rounds 3–5 repeat it (frames 21/22/23, 28/29/30, 35/36/37): waits
/// 42.92 + 47.00 + 46.98 + 42.95 = 179.84 ms. server.pcap: frame 14 leaves 0.402388 s,
/// the ACK (frame 15) arrives 0.445327 s (42.9 ms = 2.10 ms RTT + 40.8 ms delay), the
/// held echo (frame 16) leaves 19 µs after it; waits 179.88 ms. Round 1 is not a stall
/// (the server got both messages at once and echoed 264 B in one segment), nor is the
/// client's own Nagle wait in each round (its 264 B leave on the server's echo, which
/// carries a prompt ACK, 2.3 ms after the first message: no delayed ACK).
///
/// Ground truth: the client's longest recv wait per round (manifest key_numbers) is 2.1
/// ms in round 1 and 42.9, 47.0, 47.0, 43.0 ms after: 179.9 ms of waits.
#[test]
fn nagle_with_delayed_ack_is_found_from_both_ends_with_the_same_cost() {
    let waits = numbers(&manifest("nagle-delayed-ack")["key_numbers"]["echo_max_recv_wait_ms"]);
    let truth: f64 = waits[1..].iter().sum();
    let c = lab("nagle-delayed-ack", "client");
    let s = lab("nagle-delayed-ack", "server");
    let (fc, fs) = (one(&c, NAGLE), one(&s, NAGLE));
    let expected = [14, 15, 16, 21, 22, 23, 28, 29, 30, 35, 36, 37];
    assert_eq!(frames(fc), expected);
    assert_eq!(frames(fs), expected);
    assert_eq!(
        (fc.vantage.as_str(), fs.vantage.as_str()),
        ("client", "server")
    );
    for (f, hand) in [(fc, 179.84), (fs, 179.88)] {
        assert_eq!(f.stream, 0);
        assert!(
            (f.cost_ms - hand).abs() < 0.5,
            "cost {} vs {hand}",
            f.cost_ms
        );
        assert!(
            (f.cost_ms - truth).abs() <= 0.25 * truth,
            "cost {} vs truth {truth}",
            f.cost_ms
        );
        // The writer is the echo server, the reader the client; fixes in that order.
        assert!(f.explanation.contains("server 10.81.2.2:8080 (the writer)"));
        assert!(f
            .explanation
            .contains("client 10.81.1.2:50882 (the reader)"));
        assert_eq!(fix_hosts(f), ["server", "client"]);
        assert!(f.fix[0].to_string().contains("TCP_NODELAY"));
        assert!(f.fix[1].to_string().contains("TCP_QUICKACK"));
        // Measured delays 40.7–44.9 ms: Linux's minimum, said as such.
        assert!(f.explanation.contains("over 4 ACKs"), "{}", f.explanation);
        assert!(f
            .explanation
            .contains("Linux's minimum delayed-ACK timeout"));
    }
    assert!(fc.explanation.contains("min 40.7 ms"), "{}", fc.explanation);
    assert!(fs.explanation.contains("min 40.8 ms"), "{}", fs.explanation);
    assert!((fc.cost_ms - fs.cost_ms).abs() <= 0.25 * fs.cost_ms);
}

/// nagle-nodelay: the same echo with TCP_NODELAY on both ends; in tshark every echo
/// leaves at once (client nstat DelayedACKs 0, recv waits ≤ 2.3 ms): nothing of this
/// family from either end.
#[test]
fn nodelay_control_has_no_delayed_ack_stall() {
    for side in ["client", "server"] {
        assert!(mine(&lab("nagle-nodelay", side)).is_empty());
    }
}

/// delayed-ack-cwnd (seed 05, second part): TCP_NODELAY, initcwnd 1 on the client's
/// route, a 4,000-byte request (1448 + 1448 + 1104) every second. client.pcap in tshark:
/// request 2 starts with frame 12 (1448 B, 1.000079 s), alone — the window restarted at
/// one segment after 1 s idle; the server's pure ACK is frame 13 (1.066631 s, 66.55 ms =
/// 25.30 ms handshake RTT + 41.25 ms delay); frames 14–15 (1448 + 1104 B) leave 24 µs
/// after it. Requests 3 and 4: frames 20/21/22 (41.25 ms) and 28/29/30 (45.26 ms): 127.8
/// ms. server.pcap: frame 12 arrives 1.000121 s, the server ACKs it at frame 13 (1.041279
/// s: 41.16 ms), the rest arrives at frame 14 one RTT (25.28 ms) after; 41.16 + 41.23 +
/// 45.12 = 127.5 ms. The first request (frame 4 → ACK frame 5 after 25.24 ms, one RTT)
/// was ACKed at once (quick-ACK mode) and is not a stall. The released segments are
/// full-sized (1448 B): not Nagle.
///
/// Ground truth: request sent → last byte 50.66 ms for the first request, 91.80, 91.88,
/// 96.12 ms for the others: 127.8 ms more; server nstat DelayedACKs 3.
#[test]
fn tiny_window_waiting_for_a_delayed_ack_is_found_from_both_ends() {
    let m = manifest("delayed-ack-cwnd");
    let resp = numbers(&m["key_numbers"]["response_ms"]);
    let truth: f64 = resp[1..].iter().map(|r| r - resp[0]).sum();
    assert_eq!(m["nstat_delta"]["server"]["DelayedACKs"], 3);
    let c = lab("delayed-ack-cwnd", "client");
    let s = lab("delayed-ack-cwnd", "server");
    let (fc, fs) = (one(&c, CWND), one(&s, CWND));
    let expected = [12, 13, 14, 20, 21, 22, 28, 29, 30];
    assert_eq!(frames(fc), expected);
    assert_eq!(frames(fs), expected);
    for (f, hand) in [(fc, 127.76), (fs, 127.51)] {
        assert_eq!(f.stream, 0);
        assert!(
            (f.cost_ms - hand).abs() < 0.5,
            "cost {} vs {hand}",
            f.cost_ms
        );
        assert!(
            (f.cost_ms - truth).abs() <= 0.25 * truth,
            "cost {} vs truth {truth}",
            f.cost_ms
        );
        assert!(f
            .explanation
            .contains("client 10.81.1.2:50898 had at most 1 segment(s)"));
        assert!(f.explanation.contains("over 3 ACKs"), "{}", f.explanation);
        assert!(f
            .explanation
            .contains("Linux's minimum delayed-ACK timeout"));
        assert!(f
            .explanation
            .contains("full-sized segment (1448 B) in 3 of 3"));
        assert_eq!(fix_hosts(f), ["client", "server"]);
        assert!(f.fix[0].to_string().contains("initcwnd"));
        assert!(f.fix[1].to_string().contains("TCP_QUICKACK"));
    }
    assert!(fc.explanation.contains("min 41.3 ms"), "{}", fc.explanation);
    assert!(fs.explanation.contains("min 41.1 ms"), "{}", fs.explanation);
    assert!((fc.cost_ms - fs.cost_ms).abs() <= 0.25 * fs.cost_ms);
}

/// A capture "in the middle" made from the two ends' captures of one lab run: the
/// namespaces share the host's clock, so a packet's time at a tap halfway along the path
/// is the mean of its times in client.pcap and server.pcap (packets matched by source
/// address, IP ID, sequence and acknowledgment number; classic pcap, Ethernet, µs).
fn middle(scenario: &str) -> PathBuf {
    type Key = (Vec<u8>, Vec<u8>);
    /// Time (µs), match key, the whole record.
    type Record = (i64, Key, Vec<u8>);
    fn records(path: PathBuf) -> (Vec<u8>, Vec<Record>) {
        let b = std::fs::read(path).unwrap();
        let mut out = Vec::new();
        let mut off = 24;
        let u32_at = |o: usize| u32::from_le_bytes(b[o..o + 4].try_into().unwrap());
        while off + 16 <= b.len() {
            let ts = i64::from(u32_at(off)) * 1_000_000 + i64::from(u32_at(off + 4));
            let len = u32_at(off + 8) as usize;
            let rec = b[off..off + 16 + len].to_vec();
            let ip = &b[off + 16 + 14..off + 16 + len];
            let tcp = &ip[usize::from(ip[0] & 15) * 4..];
            let key = ([&ip[12..16], &ip[4..6]].concat(), tcp[4..12].to_vec());
            out.push((ts, key, rec));
            off += 16 + len;
        }
        (b[..24].to_vec(), out)
    }
    let dir = root().join("examples/lab").join(scenario);
    let (header, client) = records(dir.join("client.pcap"));
    let (_, server) = records(dir.join("server.pcap"));
    let mut at_server: std::collections::HashMap<Key, Vec<i64>> = Default::default();
    for (ts, key, _) in server.into_iter().rev() {
        at_server.entry(key).or_default().push(ts);
    }
    let mut merged: Vec<(i64, Vec<u8>)> = client
        .into_iter()
        .map(|(ts, key, mut rec)| {
            let there = at_server
                .get_mut(&key)
                .and_then(|v| v.pop())
                .expect("seen at both ends");
            let mid = (ts + there) / 2;
            rec[0..4].copy_from_slice(&((mid / 1_000_000) as u32).to_le_bytes());
            rec[4..8].copy_from_slice(&((mid % 1_000_000) as u32).to_le_bytes());
            (mid, rec)
        })
        .collect();
    merged.sort_by_key(|m| m.0);
    let path = std::env::temp_dir().join(format!(
        "tcpwhy-delayed-ack-{scenario}-middle-{}.pcap",
        std::process::id()
    ));
    let mut bytes = header;
    for (_, rec) in merged {
        bytes.extend_from_slice(&rec);
    }
    std::fs::write(&path, bytes).unwrap();
    path
}

/// The same two scenarios from a tap halfway along the path (see `middle`): the handshake
/// legs put 1.06 ms of path to the client and 1.1 ms to the server (nagle-delayed-ack),
/// 12.7 ms to each (delayed-ack-cwnd); each gap here holds the part of the path beyond
/// the tap. In tshark on the synthesized file: the server's echo (frame 14) passes at
/// 0.403495 s, the client's ACK (frame 15) at 0.445310 s (41.8 ms = 1.06 ms + 40.8 ms of
/// delay), the held echo (frame 16) at 0.446434 s: the same 42.9 ms wait as at both
/// ends; delayed-ack-cwnd: frame 12 at 1.000100 s, the ACK (frame 13) 53.9 ms later
/// (12.7 + 41.2), the client's next data (frame 14) 12.7 ms after the ACK.
#[test]
fn both_mechanisms_seen_from_the_middle_cost_the_same() {
    for (scenario, id, expected, hand) in [
        (
            "nagle-delayed-ack",
            NAGLE,
            &[14u64, 15, 16, 21, 22, 23, 28, 29, 30, 35, 36, 37][..],
            179.9,
        ),
        (
            "delayed-ack-cwnd",
            CWND,
            &[12, 13, 14, 20, 21, 22, 28, 29, 30][..],
            127.6,
        ),
    ] {
        let path = middle(scenario);
        let f = common::analyze::findings(&path);
        let _ = std::fs::remove_file(&path);
        let m = one(&f, id);
        assert_eq!(m.vantage, "middle", "{scenario}");
        assert_eq!(frames(m), expected, "{scenario}");
        assert!((m.cost_ms - hand).abs() < 1.0, "{scenario}: {}", m.cost_ms);
    }
}

/// Every other lab scenario, both ends: bulk transfers (ACK every second segment),
/// think time (the response is not released by an ACK), app-limited writes, idle
/// restarts with initcwnd 10 (the kernel ACKs every second full segment at once), losses.
#[test]
fn other_lab_scenarios_have_no_delayed_ack_finding() {
    let mut seen = 0;
    for e in std::fs::read_dir(root().join("examples/lab")).unwrap() {
        let dir = e.unwrap().path();
        let name = dir.file_name().unwrap().to_string_lossy().to_string();
        if !dir.is_dir() || name == "nagle-delayed-ack" || name == "delayed-ack-cwnd" {
            continue;
        }
        for side in ["client", "server"] {
            let p = dir.join(format!("{side}.pcap"));
            if p.exists() {
                let f = common::analyze::findings(&p);
                assert!(mine(&f).is_empty(), "{name}/{side}: {:?}", mine(&f));
                seen += 1;
            }
        }
    }
    assert!(seen >= 40, "{seen} captures");
}

/// The public captures: the findings of this family, each read in tshark.
///
/// - arkime-wireshark-retrans.pcap, stream 0 (client side: SYN → SYN/ACK 2.92 ms, SYN/ACK
///   → ACK 0.33 ms): each request is 198 B (frame 8, 0.004246 s) then a 1090–1121 B body
///   that leaves only when the server's pure ACK of the 198 B arrives (frame 17, 68.7 ms
///   later, i.e. ≈ 65.7 ms of delay; body frame 21 1.4 ms after it); the same at frames
///   33/37/39, 53/57/61, 73/77/80: write-write-read Nagle on the client against a
///   ≈ 65–70 ms delayed-ACK timer (not Linux's value: the text says so).
/// - tcptrace-urgent.pcap, stream 1 (rlogin, capture at the client, RTT 0.76 ms): the
///   server echoes "\r\n" (frame 8867, 2 B) and holds the prompt "Password:" (9 B) until
///   the client's delayed ACK (frame 8868, 99.6 ms later); it arrives at frame 8869, 0.5 ms
///   after the ACK. 53 times in the session, delays 90–100 ms: the textbook Nagle /
///   delayed-ACK interaction of an interactive session (TCP/IP Illustrated vol. 1, ch. 19).
/// - wireshark-sample-nntp-sack.pcap, stream 1 (capture at the client, RTT ≈ 25 ms): the
///   server's 32 B status line (frame 22) is ACKed by the client only after 38.9 ms
///   (frame 23, pure ACK) and the 97 B that follow arrive 24.7 ms (one RTT) after that ACK
///   (frame 24), with no client data in between; again at 27/28/29 and 117/118/119.
///   The MSS is 1368 (the server's option 1380 less timestamps), so 97, 45 and 1111 B are
///   all small: Nagle on the news server.
/// - wireshark-sample-nfs-bad-stalls.pcap, stream 2 (capture at the NFS client, the
///   receiver): the server streams read replies in pairs of 1448 B segments, each pair
///   ACKed within 6 µs; after a lone 1044 B segment (frame 496) the client's ACK comes
///   38.5 ms later (frame 497) and the server resumes 0.2 ms after it (frame 498, 1448 B).
///   49 such stalls are 1849 ms of the 2 s connection — the "bad stalls" of the file's
///   name. From the receiver the sender's limit (window or send buffer) cannot be seen;
///   the finding says so, and full-sized segments resumed, so it is not Nagle.
///
/// - wireshark-sample-ipp-window-full.pcap, streams 1 and 2 (capture at the IPP client,
///   within 0.8 ms of both hosts): CUPS writes its reply in two pieces. Stream 1: the
///   144 B HTTP head (frame 247, 1.173622 s), the client's pure ACK 39.4 ms later (frame
///   248), the 201 B IPP response 0.74 ms after it (frame 249); stream 2: "100 Continue"
///   (frame 272, 25 B), the ACK 39.7 ms later (273), the 267 B response 0.64 ms after it
///   (274). Once per connection, each a Linux client's 40 ms timer holding a Nagle
///   segment; named since one such stall is enough (before, two per connection were
///   required).
///
/// - wireshark-sample-http.pcap, stream 0 (capture at the Windows client; SYN → SYN/ACK
///   911 ms, but the FIN's round trip to the server 330 ms: the slow first packet of a
///   2004 dial-up path): the server sends one 1380 B segment at a time, 100–250 ms apart;
///   after frame 16 (2.894161 s), all else ACKed, the client's pure ACK comes 120 ms
///   later (frame 19, 3.014334 s) and the server's next segment 361 ms after it (frame
///   20, 3.374852 s): one round trip. A one-segment window against the Windows 200 ms
///   timer (120 ms: its periodic tick). Frames 23/25/29 look alike but the next data came
///   290 ms after the ACK, sooner than the 330 ms round trip: it had left before the ACK
///   reached the server, so it is not counted. (Not found before: the 911 ms handshake
///   leg was taken for the round trip.)
/// - zeek-tcp-ssh-dups.pcap, stream 0 (every packet captured four times; within 0.2 ms
///   of both hosts): during the key exchange, before OpenSSH turns TCP_NODELAY on for an
///   interactive session, the client sends NEWKEYS (frame 48, 16 B, 0.056651 s), the
///   Linux server ACKs it 42.5 ms later (frame 52, pure ACK), and the client's next
///   message (frame 56, 44 B) leaves 0.14 ms after that ACK: once, 42.6 ms.
///
/// Looked at and rightly not reported: wireshark-sample-tcp-ethereal-file1.pcap (an
/// 8 KB-per-write upload whose last small segment's ACK comes 19 ms after the previous
/// ACK because of a queue: the handshake RTT is 115 ms, the RTT by then 355 ms, so the
/// ACK was not delayed), tcptrace-zwnd.pcap (10 ms timestamps: a "10 ms delay" is one
/// clock tick, and those ACKs covered two full segments).
#[test]
fn public_captures_only_where_tshark_shows_the_stall() {
    let expected: [(&str, &str, u64, &[u64]); 8] = [
        (
            "arkime-wireshark-retrans.pcap",
            NAGLE,
            0,
            &[8, 17, 21, 33, 37, 39, 53, 57, 61, 73, 77, 80],
        ),
        (
            "tcptrace-urgent.pcap",
            NAGLE,
            1,
            &[
                8867, 8868, 8869, 9289, 9290, 9291, 9325, 9326, 9327, 9467, 9468, 9469,
            ],
        ),
        (
            "wireshark-sample-nntp-sack.pcap",
            NAGLE,
            1,
            &[22, 23, 24, 27, 28, 29, 117, 118, 119],
        ),
        (
            "wireshark-sample-ipp-window-full.pcap",
            NAGLE,
            1,
            &[247, 248, 249],
        ),
        (
            "wireshark-sample-ipp-window-full.pcap",
            NAGLE,
            2,
            &[272, 273, 274],
        ),
        (
            "wireshark-sample-nfs-bad-stalls.pcap",
            CWND,
            2,
            &[
                496, 497, 498, 1159, 1160, 1161, 1838, 1839, 1840, 4940, 4941, 4942,
            ],
        ),
        ("wireshark-sample-http.pcap", CWND, 0, &[16, 19, 20]),
        ("zeek-tcp-ssh-dups.pcap", NAGLE, 0, &[48, 52, 56]),
    ];
    let mut names: Vec<String> = std::fs::read_dir(public_dir())
        .unwrap()
        .map(|e| e.unwrap().file_name().to_string_lossy().to_string())
        .filter(|n| n.contains(".pcap"))
        .collect();
    names.sort();
    assert!(names.len() >= 50, "{names:?}");
    for name in &names {
        let f = common::analyze::findings(public_dir().join(name));
        let mut got = mine(&f);
        got.sort_by_key(|g| g.stream);
        let want: Vec<_> = expected.iter().filter(|e| e.0 == name).collect();
        assert_eq!(got.len(), want.len(), "{name}: {got:?}");
        for (g, (_, id, stream, fr)) in got.iter().zip(want) {
            assert_eq!(
                (g.id.as_str(), g.stream, frames(g).as_slice()),
                (*id, *stream, *fr),
                "{name}"
            );
        }
    }
    // wireshark-sample-http's one stall (frames 16, 19, 20) is told as one case.
    let f = common::analyze::findings(public_dir().join("wireshark-sample-http.pcap"));
    let c = one(&f, CWND);
    assert!(
        c.explanation
            .contains("in 1 of 1 case, which Nagle never holds"),
        "{}",
        c.explanation
    );
    // The costs read off tshark: 4 × ≈ 70 ms of held bodies; 53 × ≈ 96 ms of held prompts.
    let f = common::analyze::findings(public_dir().join("arkime-wireshark-retrans.pcap"));
    let a = one(&f, NAGLE);
    assert!((a.cost_ms - 284.1).abs() < 1.0, "{}", a.cost_ms);
    assert!(a
        .explanation
        .contains("the server stack's own delayed-ACK timer, not Linux's"));
    let f = common::analyze::findings(public_dir().join("wireshark-sample-nfs-bad-stalls.pcap"));
    let n = one(&f, CWND);
    assert!(n.explanation.contains("49 stall(s)"), "{}", n.explanation);
    assert!(n.explanation.contains("send buffer"));
}

/// Issue 12, sweep s1-028 at the server (tests/data/sweep/README.md): echo at 256 ms RTT,
/// 4 × 431 B a round, no TCP_NODELAY. In tshark, frame 16: the server echoes 431 B
/// (1.285148 s); frame 17: the client's pure ACK of it (1.582399 s, 297.3 ms later: the
/// 256.6 ms handshake leg to the client + 40.6 ms); frame 18: the held 862 B leave 0.045
/// ms after it. Likewise 23/24/25, 30/31/32, 37/38/39, 44/45/46: five stalls, the same
/// 1494.65 ms the client's capture of the run gives. The client's data-carrying ACKs
/// came 256.4–256.8 ms after the data they acknowledge (frames 7, 15), so a 41 ms delay is
/// no RTT variation; before, a delay had to be a quarter of the round trip (64 ms here),
/// which no 40 ms timer is beyond 160 ms of RTT.
#[test]
fn nagle_is_found_at_the_sender_on_a_long_path() {
    let f = common::analyze::findings(sweep_path("s1-028-echo-server.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(frames(n), [23, 24, 25, 30, 31, 32, 37, 38, 39, 44, 45, 46]);
    assert!(
        n.explanation.contains("5 held segment(s)"),
        "{}",
        n.explanation
    );
    assert!((n.cost_ms - 1494.65).abs() < 0.01, "{}", n.cost_ms);
}

/// Issue 12, sweep s1-044 at the client, snaplen 64 (tests/data/sweep/README.md): the
/// SYNs' options are cut, so the window scale is unknown and the client's window field
/// (63) is no byte count; before, 63 bytes said no room for the server's 404-byte echo
/// and every stall was put down to the window. In tshark: frame 16, the server's 404 B
/// (0.507478 s); frame 17, the client's pure ACK 41.2 ms later, its window field
/// unchanged (63); frame 18, the held 404 B arrive 58.0 ms (one round trip) after it.
#[test]
fn nagle_is_found_when_the_snaplen_cut_the_window_scale() {
    let f = common::analyze::findings(sweep_path("s1-044-echo-client.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(&frames(n)[..3], [16, 17, 18]);
    assert!((n.cost_ms - 405.57).abs() < 0.01, "{}", n.cost_ms);
}

/// Issue 12, sweep s31-020 at the server, snaplen 64 (tests/data/sweep/README.md): echo
/// at 204 ms RTT, 5 rounds of 3 × 370 B, the server without TCP_NODELAY. The SYNs' MSS
/// options (1460) were read, the timestamps after them cut; the largest payload seen,
/// 740 B, had been taken for the full segment, so each held 740 B echo looked full-sized
/// and the stalls were put down to the window (delayed_ack.cwnd). A full segment is at
/// least 1460 − 12 B. In tshark: frame 18, the server's 370 B (0.613482 s); frame 19, the
/// client's pure ACK (0.858435 s: the 204.3 ms handshake leg + 40.6 ms); frame 20, the
/// held 740 B 0.010 ms after it; likewise 26/27/28, 33/34/35 and 41/42/43. Each held
/// echo waited from its small segment to its release: 244.963 + 247.634 + 247.520 +
/// 247.573 = 987.69 ms.
#[test]
fn a_cut_syn_still_bounds_the_full_segment_for_nagle() {
    let f = common::analyze::findings(sweep_path("s31-020-echo-server.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(frames(n), [18, 19, 20, 26, 27, 28, 33, 34, 35, 41, 42, 43]);
    assert!((n.cost_ms - 987.69).abs() < 0.01, "{}", n.cost_ms);
    assert!(
        f.iter().all(|x| x.id != CWND),
        "{:?}",
        f.iter().map(|x| &x.id).collect::<Vec<_>>()
    );
}

/// Issue 12, sweep s4-068 at the server (tests/data/sweep/README.md): echo at 74 ms RTT,
/// 3 rounds of 3 × 191 B, the server without TCP_NODELAY. Only round 2 met a delayed ACK
/// (the client ACKed rounds 1 and 3 promptly: DelayedACKs 2, one of them the server's own
/// ACK of the client's data). In tshark: frame 18, the server's 191 B echo (0.240069 s);
/// frame 19, the client's pure ACK of it (0.361653 s, 121.58 ms later: the 74.53 ms
/// handshake leg to the client + 47.06 ms); frame 20, the held 382 B leave 0.029 ms after
/// it. Before, two such stalls were required and one timer that hit once was not named.
#[test]
fn one_delayed_ack_that_held_a_nagle_segment_is_named() {
    let f = common::analyze::findings(sweep_path("s4-068-echo-server.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(frames(n), [18, 19, 20]);
    assert!((n.cost_ms - 121.613).abs() < 0.01, "{}", n.cost_ms);
}

/// Issue 12, sweep s4-060 at the server: echo at 231.7 ms RTT, 3 rounds of 2 × 226 B,
/// the server without TCP_NODELAY. In tshark: frame 14, 226 B (0.695274 s); frame 15, the
/// client's pure ACK 275.67 ms later (43.98 ms beyond the 231.69 ms handshake leg);
/// frame 16, the held 226 B 0.030 ms after it; likewise frames 20/21/22 (272.12 ms, a
/// 40.43 ms delay). A 44 ms delay is under a quarter of the 232 ms round trip, and the
/// client's only data-carrying ACKs acknowledged nothing new, so nothing showed that the
/// round trip was steady; the client's earlier pure ACKs (frames 9 and 11, 231.51 and
/// 231.60 ms after their data) did, being sooner after the handshake's round trip than
/// any delayed-ACK timer waits.
#[test]
fn pure_acks_sooner_than_any_timer_show_a_steady_round_trip() {
    let f = common::analyze::findings(sweep_path("s4-060-echo-server.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(frames(n), [14, 15, 16, 20, 21, 22]);
    assert!((n.cost_ms - 547.848).abs() < 0.01, "{}", n.cost_ms);
}

/// Issue 12, sweep s12-084 at the client (tests/data/sweep/README.md): echo at 18 ms RTT,
/// 3 × 498 B a round, no TCP_NODELAY at either end. The SYN → SYN/ACK leg took 32.5 ms
/// (the emulator's slow first packet); the client's message → the server's echo, 18.6 ms
/// (frames 11 → 12). Round 2: the server echoes the second message (frame 14,
/// 0.511261 s) and Nagle holds the third echo; the client's delayed ACK leaves 43.7 ms
/// later (frame 15, 0.555005 s) and the held echo arrives 18.5 ms after it (frame 16,
/// 0.573525 s): one round trip, its release. Against the 32.5 ms leg it looked 14 ms
/// early and nothing was found here, while the server's capture named it.
#[test]
fn nagle_at_the_receiver_with_a_slow_first_packet() {
    let f = common::analyze::findings(sweep_path("s12-084-echo-client.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(n.vantage, "client");
    assert_eq!(frames(n)[..3], [14, 15, 16]);
    assert!(
        n.explanation.contains("Linux's minimum"),
        "{}",
        n.explanation
    );
}

/// Issue 12, fresh sweep s17-020 at the server (tests/data/sweep/README.md): echo at 114 ms
/// RTT, 4 × 63 B a round, the client with TCP_NODELAY, the server without. Round 2 in
/// tshark: the client's first message (frame 16, 0.376848 s) is echoed at once (frame
/// 17, 0.376911 s); the client's other three (frames 18, 19, 21, up to 0.376980 s) were
/// sent before that echo reached it (69 µs after it here, on a 114 ms path) and ACK only
/// the server's earlier data. The client delays its ACK of the echo: frame 23 at
/// 0.539376 s, 162.5 ms after it, 48 ms beyond the round trip; Nagle held the other
/// three echoes (189 B) until then (frame 24, 16 µs later). The client's crossing data
/// used to count as "the receiver had data to piggyback the ACK on" and the stall went
/// unnamed; the kernel's DelayedACKs counted 3. The held echoes answer the crossing
/// messages, so their wait runs from the last of them: 0.539392 − 0.376980 = 162.4 ms.
#[test]
fn nagle_with_the_readers_data_crossing_the_held_flight() {
    let f = common::analyze::findings(sweep_path("s17-020-echo-server.pcap"));
    let n = one(&f, NAGLE);
    assert_eq!(n.vantage, "server");
    assert_eq!(frames(n), [17, 23, 24]);
    assert!((n.cost_ms - 162.412).abs() < 0.01, "{}", n.cost_ms);
    assert!(n.explanation.contains("48.0 ms"), "{}", n.explanation);
}
