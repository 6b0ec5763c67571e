//! Connections that carry neither data nor a FIN (a scan, a SYN flood, a connect and
//! reset) reach only the detectors that can judge them (`Detector::JUDGES_DATALESS`),
//! and the others see a connection's first segments only once its data or FIN came:
//! the findings must be those of every detector seeing every segment as it comes.

mod common;

use common::Rng;
use std::net::{IpAddr, Ipv4Addr};
use tcpwhy_capture::{Packet, TcpFlags, TcpOptions, Timestamp};
use tcpwhy_detect::{Config, Finding};
use tcpwhy_pipeline::Pass;

const SYN: u16 = TcpFlags::SYN;
const ACK: u16 = TcpFlags::ACK;
const RST: u16 = TcpFlags::RST;
const FIN: u16 = TcpFlags::FIN;
const PSH: u16 = TcpFlags::PSH;
const ECE: u16 = TcpFlags::ECE;
const CWR: u16 = TcpFlags::CWR;

/// One segment between client `c` (10.9.0.c:40000) and 10.9.1.1:80.
struct Seg {
    to_server: bool,
    flags: u16,
    seq: u32,
    ack: u32,
    len: u32,
    options: TcpOptions,
    ip_id: u16,
}

fn packet(c: u8, s: &Seg) -> Packet<'static> {
    let client = IpAddr::V4(Ipv4Addr::new(10, 9, 0, c));
    let server = IpAddr::V4(Ipv4Addr::new(10, 9, 1, 1));
    let (src, dst, src_port, dst_port) = if s.to_server {
        (client, server, 40000, 80)
    } else {
        (server, client, 80, 40000)
    };
    Packet {
        src,
        dst,
        ip_id: Some(s.ip_id),
        ttl: 64,
        src_port,
        dst_port,
        seq: s.seq,
        ack: s.ack,
        flags: TcpFlags(s.flags),
        window: 64240,
        urgent: 0,
        options: s.options,
        payload_len: s.len,
        payload: &[],
    }
}

/// The findings of `frames` (time in ns, client, segment), every detector seeing every
/// segment as it comes when `unfiltered`.
fn findings(frames: &[(i64, u8, Seg)], unfiltered: bool) -> Vec<Finding> {
    let mut pass = Pass::new(Config {
        unfiltered,
        ..Config::default()
    });
    for (i, (t, c, s)) in frames.iter().enumerate() {
        pass.packet(i as u64 + 1, Timestamp::from_nanos(*t), &packet(*c, s));
    }
    pass.finish().1.findings
}

fn seg(to_server: bool, flags: u16, seq: u32, ack: u32) -> Seg {
    let mut options = TcpOptions::default();
    if flags & SYN != 0 {
        options.mss = Some(1460);
        options.sack_permitted = true;
        options.wscale = Some(7);
    }
    Seg {
        to_server,
        flags,
        seq,
        ack,
        len: 0,
        options,
        ip_id: 0,
    }
}

/// A connect whose first SYN was lost, answered and then reset, as a scanner or a health
/// check makes it: SYN at 0, the same SYN again after Linux's initial RTO of 1 s
/// (`TCP_TIMEOUT_INIT`), the SYN/ACK 25 ms later, the client's RST 1 ms after that. No
/// byte of data: only the SYN detector may look at it, and it must still name it.
#[test]
fn a_retried_connect_without_data_is_still_named() {
    let (c, s) = (1_000_u32, 9_000_u32);
    let frames = [
        (0, 1, seg(true, SYN, c, 0)),
        (1_000_000_000, 1, seg(true, SYN, c, 0)),
        (1_025_000_000, 1, seg(false, SYN | ACK, s, c + 1)),
        (1_026_000_000, 1, seg(true, RST, c + 1, 0)),
    ];
    let held = findings(&frames, false);
    assert_eq!(held.len(), 1, "{held:?}");
    let f = &held[0];
    assert_eq!(f.id.as_str(), "handshake.syn_retransmit");
    assert_eq!(f.cost_ns, 1_000_000_000);
    let cited: Vec<u64> = f.evidence.iter().map(|e| e.frame).collect();
    assert_eq!(cited, [1, 2, 3]);
    assert_eq!(
        format!("{held:?}"),
        format!("{:?}", findings(&frames, true))
    );
}

/// Random connections, most of them without data (handshakes retried, answered or not,
/// RSTs, pure ACKs with odd flags, options and timestamps, FINs), some of them going on
/// to data and a FIN after up to twelve such segments (more than are ever held), several
/// at once: the findings with segments held must be those without.
#[test]
fn holding_connections_without_data_changes_no_finding() {
    const CASES: u64 = 1500;
    let dataless = [
        SYN,
        SYN,
        SYN | ACK,
        SYN | ACK,
        ACK,
        RST,
        RST | ACK,
        ACK | ECE,
        SYN | ECE | CWR,
        ACK | PSH,
        // Not held: a FIN without data goes to every detector (a bare FIN's repair is
        // a tail loss probe, `recovery`).
        FIN | ACK,
    ];
    let mut rng = Rng(0x6461_7461_6c65_7373);
    let (mut total, mut named_syn, mut named_dataless) = (0, 0, 0);
    for case in 0..CASES {
        let mut frames = Vec::new();
        // The clients (10.9.0.c) whose connection carried no data.
        let mut without_data = Vec::new();
        for c in 1..=1 + rng.below(4) as u8 {
            let mut t = rng.below(50_000_000) as i64;
            let (isn_c, isn_s) = (rng.next() as u32, rng.next() as u32);
            let (mut next_c, mut next_s) = (isn_c.wrapping_add(1), isn_s.wrapping_add(1));
            let mut ip_id = [rng.next() as u16, rng.next() as u16];
            let prefix = rng.below(13);
            let data = rng.below(3) == 0;
            if !data {
                without_data.push(IpAddr::V4(Ipv4Addr::new(10, 9, 0, c)));
            }
            for i in 0..prefix + if data { 12 } else { 0 } {
                let to_server = rng.below(2) == 0;
                let flags = if i < prefix {
                    dataless[rng.below(dataless.len() as u64) as usize]
                } else if i + 1 == prefix + 12 {
                    FIN | ACK
                } else {
                    ACK | PSH
                };
                let syn = flags & SYN != 0;
                let (own, peer, own_isn) = if to_server {
                    (next_c, next_s, isn_c)
                } else {
                    (next_s, next_c, isn_s)
                };
                let len = if i >= prefix && flags & FIN == 0 && rng.below(2) == 0 {
                    1448
                } else {
                    0
                };
                let mut s = seg(to_server, flags, if syn { own_isn } else { own }, peer);
                s.len = len;
                if rng.below(2) == 0 {
                    s.options.timestamps = Some((t as u32 / 1_000_000, rng.below(5000) as u32));
                }
                if flags & ACK != 0 && !syn && rng.below(8) == 0 {
                    s.options.sack[0] = (peer.wrapping_add(1448), peer.wrapping_add(2896));
                    s.options.sack_count = 1;
                }
                s.options.truncated = rng.below(16) == 0;
                let side = usize::from(!to_server);
                ip_id[side] = ip_id[side].wrapping_add(1 + rng.below(2) as u16);
                s.ip_id = ip_id[side];
                if to_server {
                    next_c = next_c.wrapping_add(len);
                } else {
                    next_s = next_s.wrapping_add(len);
                }
                frames.push((t, c, s));
                // Retries 1–3 s apart, or the moments within a round trip.
                t += if rng.below(4) == 0 {
                    1_000_000_000 + rng.below(2_000_000_000) as i64
                } else {
                    rng.below(30_000_000) as i64
                };
            }
        }
        frames.sort_by_key(|f| f.0);
        let held = findings(&frames, false);
        let every = findings(&frames, true);
        assert_eq!(
            format!("{held:?}"),
            format!("{every:?}"),
            "case {case}: {} frames",
            frames.len()
        );
        total += held.len();
        for f in held
            .iter()
            .filter(|f| f.id.as_str() == "handshake.syn_retransmit")
        {
            named_syn += 1;
            named_dataless += usize::from(without_data.contains(&f.endpoints[0].addr));
        }
    }
    // The cases must reach the detectors' findings, the SYN detector's on connections
    // without data among them, or the comparison proves little.
    eprintln!(
        "{total} findings, {named_syn} handshake.syn_retransmit ({named_dataless} without \
         data), in {CASES} cases"
    );
    assert!(named_dataless > 100 && total > named_syn);
}
