//! Issue 12: a retransmission the kernel counted as a tail loss probe (TCPLossProbes,
//! no RTO, no fast retransmit) named as an RTO or a fast retransmit. The shape of sweep
//! case s2-061 (slow_reader, 1.24 ms RTT, at the sender): the response's last segment
//! carries the FIN; the receiver, reading slowly, sends an ACK repeating its cumulative
//! ACK and window (a window update whose scaled field did not change: a duplicate ACK
//! on the wire, without SACK blocks); 40 ms after the original the sender retransmits
//! the last segment, FIN and all. Before: its end was compared without the FIN against
//! the highest sequence sent (which counts it), so it was no tail and became an RTO;
//! and the repeated ACK, a loss signal only to a sender without SACK, made it a fast
//! retransmit once retransmissions sooner than the minimum RTO were taken as signal-
//! driven.

use std::net::{IpAddr, Ipv4Addr};
use tcpwhy_capture::{Packet, TcpFlags, TcpOptions, Timestamp};
use tcpwhy_detect::Config;
use tcpwhy_pipeline::Pass;

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 81, 1, 2));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 81, 2, 2));

fn packet(
    to_server: bool,
    flags: u16,
    seq: u32,
    ack: u32,
    len: u32,
    window: u16,
) -> Packet<'static> {
    let mut options = TcpOptions::default();
    if flags & TcpFlags::SYN != 0 {
        options.mss = Some(1460);
        options.sack_permitted = true;
        options.wscale = Some(7);
    }
    let (src, dst, src_port, dst_port) = if to_server {
        (CLIENT, SERVER, 37680, 8080)
    } else {
        (SERVER, CLIENT, 8080, 37680)
    };
    Packet {
        src,
        dst,
        ip_id: None,
        ttl: 64,
        src_port,
        dst_port,
        seq,
        ack,
        flags: TcpFlags(flags),
        window,
        urgent: 0,
        options,
        payload_len: len,
        payload: &[],
    }
}

#[test]
fn a_fin_carrying_tail_retransmitted_after_a_repeated_ack_is_a_tail_loss_probe() {
    const ACK: u16 = TcpFlags::ACK;
    const C: u32 = 1000; // client ISN
    const S: u32 = 5000; // server ISN
    let us = |t: i64| Timestamp::from_nanos(t * 1_000);
    let mut frames: Vec<(i64, Packet<'static>)> = vec![
        (0, packet(true, TcpFlags::SYN, C, 0, 0, 64240)),
        (
            1_200,
            packet(false, TcpFlags::SYN | ACK, S, C + 1, 0, 65160),
        ),
        (1_240, packet(true, ACK, C + 1, S + 1, 0, 502)),
        (
            1_300,
            packet(true, ACK | TcpFlags::PSH, C + 1, S + 1, 100, 502),
        ),
    ];
    // Ten full segments, then the last 364 bytes with the FIN.
    for k in 0..10u32 {
        let t = 2_500 + i64::from(k);
        frames.push((t, packet(false, ACK, S + 1 + k * 1448, C + 101, 1448, 502)));
    }
    let last = S + 1 + 10 * 1448;
    frames.push((
        2_520,
        packet(false, ACK | TcpFlags::FIN, last, C + 101, 364, 502),
    ));
    // The receiver ACKs two segments, then repeats that ACK with the same window.
    frames.push((3_500, packet(true, ACK, C + 101, S + 1 + 2 * 1448, 0, 172)));
    frames.push((3_600, packet(true, ACK, C + 101, S + 1 + 2 * 1448, 0, 172)));
    // 40 ms after the original: the tail, FIN and all, again.
    frames.push((
        42_520,
        packet(false, ACK | TcpFlags::FIN, last, C + 101, 364, 502),
    ));
    frames.push((43_800, packet(true, ACK, C + 101, last + 365, 0, 95)));
    frames.push((
        1_000_000,
        packet(true, ACK | TcpFlags::FIN, C + 101, last + 365, 0, 733),
    ));
    frames.push((1_001_000, packet(false, ACK, last + 365, C + 102, 0, 502)));
    let mut pass = Pass::new(Config::default());
    for (i, (t, p)) in frames.iter().enumerate() {
        pass.packet(i as u64 + 1, us(*t), p);
    }
    let (_, analysis) = pass.finish();
    let ids: Vec<&str> = analysis.findings.iter().map(|f| f.id.as_str()).collect();
    assert!(ids.contains(&"loss.tail_loss_probe"), "{ids:?}");
    assert!(!ids.contains(&"loss.rto"), "{ids:?}");
    assert!(!ids.contains(&"loss.fast_retransmit"), "{ids:?}");
    let probe = analysis
        .findings
        .iter()
        .find(|f| f.id.as_str() == "loss.tail_loss_probe")
        .unwrap();
    // Frame 18 is the probe (the 4 handshake/request frames, 11 data, 2 ACKs before it).
    assert!(probe.evidence.iter().any(|e| e.frame == 18), "{probe:?}");
}
