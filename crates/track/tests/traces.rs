//! Small hand-written traces, one behaviour each, read like a capture listing:
//! `at(ms).c2s(flags, seq, ack, len)` is one frame; numbers are checked by hand.

use std::net::{IpAddr, Ipv4Addr};
use tcpwhy_capture::{Packet, TcpFlags, TcpOptions, Timestamp};
use tcpwhy_track::{SegmentEvent, SegmentKinds as K, Tracker, Vantage, WindowScale};

const CLIENT: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 1));
const SERVER: IpAddr = IpAddr::V4(Ipv4Addr::new(10, 0, 0, 2));
const S: u16 = TcpFlags::SYN;
const A: u16 = TcpFlags::ACK;
const F: u16 = TcpFlags::FIN;
const R: u16 = TcpFlags::RST;
const ISN_C: u32 = 1000;
const ISN_S: u32 = 5000;

/// A trace being fed to a tracker, frame by frame.
struct Trace {
    t: Tracker,
    frame: u64,
    now_us: i64,
    cport: u16,
    ip_id: u16,
}

struct Seg {
    from_client: bool,
    flags: u16,
    seq: u32,
    ack: u32,
    len: u32,
    window: u16,
    options: TcpOptions,
    ip_id: Option<u16>,
}

impl Trace {
    fn new() -> Self {
        Trace {
            t: Tracker::new(),
            frame: 0,
            now_us: 0,
            cport: 40000,
            ip_id: 1,
        }
    }
    /// A trace fed to `t` (a tracker built with other bounds).
    fn with(t: Tracker) -> Self {
        Trace { t, ..Trace::new() }
    }
    fn at(&mut self, ms: f64) -> &mut Self {
        self.now_us = (ms * 1000.0) as i64;
        self
    }
    fn send(&mut self, s: Seg) -> SegmentEvent {
        let p = self.packet(s);
        self.t
            .process(self.frame, Timestamp::from_nanos(self.now_us * 1000), &p)
    }
    /// The next frame through [`Tracker::track`] (no event) instead.
    fn track(&mut self, s: Seg) {
        let p = self.packet(s);
        self.t
            .track(self.frame, Timestamp::from_nanos(self.now_us * 1000), &p);
    }
    fn packet(&mut self, s: Seg) -> Packet<'static> {
        self.frame += 1;
        let (src, dst, sp, dp) = if s.from_client {
            (CLIENT, SERVER, self.cport, 80)
        } else {
            (SERVER, CLIENT, 80, self.cport)
        };
        let ip_id = s.ip_id.unwrap_or_else(|| {
            self.ip_id = self.ip_id.wrapping_add(1);
            self.ip_id
        });
        Packet {
            src,
            dst,
            ip_id: Some(ip_id),
            ttl: 64,
            src_port: sp,
            dst_port: dp,
            seq: s.seq,
            ack: s.ack,
            flags: TcpFlags(s.flags),
            window: s.window,
            urgent: 0,
            options: s.options,
            payload_len: s.len,
            payload: &[],
        }
    }
    fn c2s(&mut self, flags: u16, seq: u32, ack: u32, len: u32) -> SegmentEvent {
        self.send(seg(true, flags, seq, ack, len))
    }
    fn s2c(&mut self, flags: u16, seq: u32, ack: u32, len: u32) -> SegmentEvent {
        self.send(seg(false, flags, seq, ack, len))
    }
    /// SYN (ws 7) at 0, SYN/ACK (ws 7) at `rtt_ms`, ACK just after: a client-side capture.
    fn handshake(&mut self, rtt_ms: f64) {
        let mut syn = seg(true, S, ISN_C, 0, 0);
        syn.options = syn_opts();
        self.at(0.0).send(syn);
        let mut sa = seg(false, S | A, ISN_S, ISN_C + 1, 0);
        sa.options = syn_opts();
        self.at(rtt_ms).send(sa);
        self.at(rtt_ms + 0.05).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    }
}

fn seg(from_client: bool, flags: u16, seq: u32, ack: u32, len: u32) -> Seg {
    Seg {
        from_client,
        flags,
        seq,
        ack,
        len,
        window: 1000,
        options: TcpOptions::default(),
        ip_id: None,
    }
}

fn syn_opts() -> TcpOptions {
    TcpOptions {
        mss: Some(1460),
        wscale: Some(7),
        sack_permitted: true,
        ..Default::default()
    }
}

#[test]
fn handshake_gives_rtt_options_scaling_and_client_vantage() {
    let mut tr = Trace::new();
    tr.handshake(25.0);
    // 1460 bytes of request, ACKed 25 ms later: one RTT sample of 25 ms.
    let ev = tr.at(26.0).c2s(A, ISN_C + 1, ISN_S + 1, 1460);
    assert!(ev.kinds == K(K::NEW_DATA) && ev.rel_seq == 1 && ev.window_bytes == 1000 << 7);
    let ack = tr.at(51.0).s2c(A, ISN_S + 1, ISN_C + 1461, 0);
    assert_eq!(ack.ack_rtt, Some((4, 25_000_000)));
    let c = &tr.t.finish()[0];
    assert_eq!(c.handshake_rtt_ns(), Some(25_050_000));
    assert_eq!(c.vantage, Vantage::Client);
    assert_eq!(c.dirs[0].wscale, Some(WindowScale::Shift(7)));
    assert_eq!(c.dirs[1].max_window_bytes, Some(1000 << 7));
    assert_eq!(c.dirs[0].rtt_ack.unwrap().median_ns, 25_000_000);
}

#[test]
fn rto_retransmission_gives_no_rtt_sample_by_karns_rule() {
    let mut tr = Trace::new();
    tr.handshake(25.0);
    tr.at(30.0).c2s(A, ISN_C + 1, ISN_S + 1, 100);
    let rexmit = tr.at(230.0).c2s(A, ISN_C + 1, ISN_S + 1, 100);
    assert!(rexmit.kinds.has(K::RETRANSMISSION));
    assert!(!rexmit.kinds.has(K::FAST_RETRANSMISSION));
    let ack = tr.at(255.0).s2c(A, ISN_S + 1, ISN_C + 101, 0);
    assert_eq!(
        ack.ack_rtt, None,
        "ambiguous: the original or the retransmission?"
    );
}

#[test]
fn three_duplicate_acks_then_fast_retransmission() {
    let mut tr = Trace::new();
    tr.handshake(25.0);
    for i in 0..5u32 {
        tr.at(30.0).c2s(A, ISN_C + 1 + i * 100, ISN_S + 1, 100);
    }
    // Segment 2 (bytes 101–200) lost: the server ACKs 101 four times.
    let first = tr.at(55.0).s2c(A, ISN_S + 1, ISN_C + 101, 0);
    assert!(!first.kinds.has(K::DUP_ACK));
    let d: Vec<u32> = (0..3)
        .map(|_| tr.at(55.1).s2c(A, ISN_S + 1, ISN_C + 101, 0).dup_ack_num)
        .collect();
    assert_eq!(d, [1, 2, 3]);
    let fr = tr.at(55.2).c2s(A, ISN_C + 101, ISN_S + 1, 100);
    assert!(fr.kinds.has(K::FAST_RETRANSMISSION) && fr.kinds.has(K::RETRANSMISSION));
    let c = &tr.t.finish()[0];
    assert_eq!(c.dirs[1].counts.dup_acks, 3);
    assert_eq!(c.dirs[0].counts.fast_retransmissions, 1);
}

#[test]
fn dsack_points_at_the_needless_retransmission() {
    let mut tr = Trace::new();
    tr.handshake(25.0);
    tr.at(30.0).c2s(A, ISN_C + 1, ISN_S + 1, 100); // frame 4
    let rx = tr.at(40.0).c2s(A, ISN_C + 1, ISN_S + 1, 100); // frame 5: too early
    assert!(rx.kinds.has(K::RETRANSMISSION));
    tr.at(55.0).s2c(A, ISN_S + 1, ISN_C + 101, 0);
    // The receiver got bytes 1–100 twice and says so with a D-SACK below its ACK.
    let mut dsack = seg(false, A, ISN_S + 1, ISN_C + 101, 0);
    dsack.options.sack[0] = (ISN_C + 1, ISN_C + 101);
    dsack.options.sack_count = 1;
    let ev = tr.at(65.0).send(dsack);
    assert!(ev.kinds.has(K::DSACK));
    assert_eq!(ev.dsack_of, Some(5));
}

/// `Tracker::track`, which makes no events (`flows`), leaves every summary as `process`
/// does: one trace with a fast retransmission after three duplicate ACKs, a needless
/// retransmission reported by a D-SACK, a capture duplicate and a RST, then the 4-tuple
/// reused.
#[test]
fn tracking_without_events_gives_the_same_summaries() {
    let run = |quiet: bool| {
        let mut tr = Trace::new();
        let feed = |tr: &mut Trace, ms: f64, s: Seg| {
            tr.at(ms);
            if quiet {
                tr.track(s);
            } else {
                tr.send(s);
            }
        };
        let mut syn = seg(true, S, ISN_C, 0, 0);
        syn.options = syn_opts();
        feed(&mut tr, 0.0, syn);
        let mut sa = seg(false, S | A, ISN_S, ISN_C + 1, 0);
        sa.options = syn_opts();
        feed(&mut tr, 25.0, sa);
        feed(&mut tr, 25.05, seg(true, A, ISN_C + 1, ISN_S + 1, 0));
        for i in 0..5u32 {
            feed(
                &mut tr,
                30.0,
                seg(true, A, ISN_C + 1 + i * 100, ISN_S + 1, 100),
            );
        }
        for _ in 0..4 {
            feed(&mut tr, 55.0, seg(false, A, ISN_S + 1, ISN_C + 101, 0));
        }
        feed(&mut tr, 55.2, seg(true, A, ISN_C + 101, ISN_S + 1, 100));
        let mut copy = seg(true, A, ISN_C + 101, ISN_S + 1, 100);
        copy.ip_id = Some(tr.ip_id);
        feed(&mut tr, 55.21, copy);
        feed(&mut tr, 80.0, seg(false, A, ISN_S + 1, ISN_C + 501, 0));
        // Bytes 101–200 again (needless), and the receiver's D-SACK of them.
        feed(&mut tr, 300.0, seg(true, A, ISN_C + 101, ISN_S + 1, 100));
        let mut dsack = seg(false, A, ISN_S + 1, ISN_C + 501, 0);
        dsack.options.sack[0] = (ISN_C + 101, ISN_C + 201);
        dsack.options.sack_count = 1;
        feed(&mut tr, 325.0, dsack);
        feed(&mut tr, 330.0, seg(true, R | A, ISN_C + 501, ISN_S + 1, 0));
        let mut again = seg(true, S, 90_000, 0, 0);
        again.options = syn_opts();
        feed(&mut tr, 2000.0, again);
        tr.t.finish()
    };
    let (loud, quiet) = (run(false), run(true));
    assert_eq!(format!("{loud:?}"), format!("{quiet:?}"));
    assert_eq!(quiet.len(), 2);
    let c = &quiet[0];
    // Three before the fast retransmission, and the D-SACK (it repeats ACK 501).
    assert_eq!(c.dirs[1].counts.dup_acks, 4);
    assert_eq!(c.dirs[0].counts.fast_retransmissions, 1);
    assert_eq!(c.dirs[0].counts.retransmissions, 2);
    assert_eq!(c.dirs[0].counts.capture_duplicates, 1);
    assert_eq!(c.dirs[1].counts.dsacks, 1);
    assert!(c.dirs[0].rst);
    assert_eq!((quiet[1].stream, quiet[1].reused_port), (1, true));
}

/// A connection that takes over a finalised one's state (its buffers kept for reuse)
/// is tracked as if it were the first: the same exchange, on another port after the
/// first was reset and finalised, gives the same per-direction summaries.
#[test]
fn a_connection_after_a_finalised_one_starts_from_nothing() {
    let mut tr = Trace::new();
    let exchange = |tr: &mut Trace, t0: f64| {
        let mut syn = seg(true, S, ISN_C, 0, 0);
        syn.options = syn_opts();
        syn.options.timestamps = Some((100, 0));
        tr.at(t0).send(syn);
        let mut sa = seg(false, S | A, ISN_S, ISN_C + 1, 0);
        sa.options = syn_opts();
        sa.options.timestamps = Some((900, 100));
        tr.at(t0 + 25.0).send(sa);
        tr.at(t0 + 25.05).c2s(A, ISN_C + 1, ISN_S + 1, 0);
        for i in 0..5u32 {
            tr.at(t0 + 30.0).c2s(A, ISN_C + 1 + i * 100, ISN_S + 1, 100);
        }
        for _ in 0..4 {
            tr.at(t0 + 55.0).s2c(A, ISN_S + 1, ISN_C + 101, 0);
        }
        tr.at(t0 + 55.2).c2s(A, ISN_C + 101, ISN_S + 1, 100);
        tr.at(t0 + 80.0).s2c(A, ISN_S + 1, ISN_C + 501, 0);
        tr.at(t0 + 330.0).c2s(R | A, ISN_C + 501, ISN_S + 1, 0);
    };
    exchange(&mut tr, 0.0);
    // The first is finalised (its RST 0.5 s quiet) when the second's SYN comes.
    tr.cport = 40001;
    exchange(&mut tr, 2000.0);
    let s = tr.t.finish();
    assert_eq!(s.len(), 2);
    assert_eq!((s[0].stream, s[1].stream), (0, 1));
    assert_eq!(s[0].dirs[0].counts.fast_retransmissions, 1);
    // The SYN's (25 ms), the first segment's (25 ms) and the last one's (50 ms): the
    // retransmitted one gives none (Karn).
    assert_eq!(
        s[0].dirs[0]
            .rtt_ack
            .map(|r| (r.samples, r.min_ns, r.max_ns)),
        Some((3, 25_000_000, 50_000_000))
    );
    assert_eq!(format!("{:?}", s[0].dirs), format!("{:?}", s[1].dirs));
    assert_eq!(
        (s[0].syn_to_synack_ns, s[0].synack_to_ack_ns, s[0].vantage),
        (s[1].syn_to_synack_ns, s[1].synack_to_ack_ns, s[1].vantage)
    );
}

#[test]
fn a_new_syn_on_the_same_ports_starts_a_new_stream_a_repeated_one_does_not() {
    let mut tr = Trace::new();
    tr.handshake(1.0);
    tr.at(2.0).c2s(F | A, ISN_C + 1, ISN_S + 1, 0);
    tr.at(3.0).s2c(F | A, ISN_S + 1, ISN_C + 2, 0);
    tr.at(4.0).c2s(A, ISN_C + 2, ISN_S + 2, 0);
    let again = tr.at(10.0).c2s(S, 90_000, 0, 0);
    assert_eq!(again.stream, 1);
    assert!(again.kinds.has(K::REUSED_PORTS));
    let rexmit = tr.at(1010.0).c2s(S, 90_000, 0, 0);
    assert_eq!(rexmit.stream, 1);
    assert!(rexmit.kinds.has(K::RETRANSMISSION));
    let all = tr.t.finish();
    assert_eq!(all.len(), 2);
    assert!(all.iter().any(|c| c.stream == 1 && c.reused_port));
}

#[test]
fn sequence_numbers_unwrap_through_zero() {
    let mut tr = Trace::new();
    // Mid-connection: no handshake, the client's first seq is 2^32 − 1000.
    let mut seq = u32::MAX - 999;
    let mut last = 0;
    for i in 0..6 {
        let ev = tr.at(i as f64).c2s(A, seq, ISN_S, 500);
        assert_eq!(ev.kinds, K(K::NEW_DATA), "frame {}", i + 1);
        assert!(ev.rel_seq >= last);
        last = ev.rel_seq;
        seq = seq.wrapping_add(500);
    }
    assert_eq!(last, 1 + 5 * 500);
    let c = &tr.t.finish()[0];
    assert_eq!(c.dirs[0].unique_bytes, 3000);
    assert_eq!(c.dirs[0].wscale, Some(WindowScale::Unknown));
    assert_eq!(c.vantage, Vantage::Unknown);
}

#[test]
fn a_packet_recorded_twice_is_a_capture_duplicate_not_a_retransmission() {
    let mut tr = Trace::new();
    tr.handshake(1.0);
    let mut s = seg(true, A, ISN_C + 1, ISN_S + 1, 100);
    s.ip_id = Some(777);
    tr.at(2.0).send(s);
    let mut copy = seg(true, A, ISN_C + 1, ISN_S + 1, 100);
    copy.ip_id = Some(777);
    let ev = tr.at(2.01).send(copy);
    assert_eq!(ev.kinds, K(K::CAPTURE_DUPLICATE));
    // The same bytes with a new IP ID 200 ms later are a real retransmission.
    let ev = tr.at(202.0).c2s(A, ISN_C + 1, ISN_S + 1, 100);
    assert!(ev.kinds.has(K::RETRANSMISSION));
    let c = &tr.t.finish()[0];
    assert_eq!(c.dirs[0].counts.capture_duplicates, 1);
    assert_eq!(c.dirs[0].counts.retransmissions, 1);
}

#[test]
fn zero_window_probe_and_window_update() {
    let mut tr = Trace::new();
    tr.handshake(1.0);
    tr.at(2.0).c2s(A, ISN_C + 1, ISN_S + 1, 100);
    let mut zw = seg(false, A, ISN_S + 1, ISN_C + 101, 0);
    zw.window = 0;
    assert!(tr.at(3.0).send(zw).kinds.has(K::ZERO_WINDOW));
    let probe = tr.at(203.0).c2s(A, ISN_C + 101, ISN_S + 1, 1);
    assert!(probe.kinds.has(K::ZERO_WINDOW_PROBE));
    let upd = tr.at(300.0).s2c(A, ISN_S + 1, ISN_C + 101, 0);
    assert!(upd.kinds.has(K::WINDOW_UPDATE));
}

#[test]
fn closed_connections_are_freed_and_late_packets_keep_their_stream() {
    let mut tr = Trace::new();
    for i in 0..1000u32 {
        tr.cport = 20000 + i as u16;
        let t0 = f64::from(i) * 1000.0; // one short connection a second
        tr.at(t0).c2s(S, ISN_C, 0, 0);
        tr.at(t0 + 1.0).s2c(S | A, ISN_S, ISN_C + 1, 0);
        tr.at(t0 + 2.0).c2s(R, ISN_C + 1, 0, 0);
    }
    // Each is kept 60 s after its RST (CLOSED_LINGER), then freed: ~61 at a time.
    assert!(
        tr.t.max_live_connections() <= 62,
        "max live {}",
        tr.t.max_live_connections()
    );
    // 61 s after the last one closed, a stray packet on its 4-tuple keeps stream 999:
    // the connection is finalised, its tombstone remembers the index.
    tr.cport = 20999;
    let late = tr.at(999_002.0 + 61_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(late.stream, 999);
    // Tombstones of closed connections are forgotten 5 min after the close, so memory
    // does not grow with the capture: only the last ~5 min of them are remembered.
    assert!(
        tr.t.remembered_connections() <= 302,
        "{}",
        tr.t.remembered_connections()
    );
    assert!(
        tr.t.live_connections() <= 2,
        "live {}",
        tr.t.live_connections()
    );
    assert_eq!(tr.t.streams(), 1000);
}

/// What limited the server's data, at a client-side capture (100 ms RTT, so the client's
/// ACKs reach the server, and the data they release arrives here, 100 ms after they are
/// seen). The client advertises 23 << 7 = 2,944 B: two 1460-byte segments leave 24 B of
/// window, less than one MSS, so after each pair the server waits for the next ACK.
/// 200.05 → 300.1 ms and 300.1 → 400.2 ms are window-limited (the ACKs of 100.05 and
/// 200.1 ms take effect then): 200.15 ms. With a 128,000-byte window the same trace is
/// held by the server's own window instead, and a 50 ms pause after everything was
/// acknowledged (300.1 → 350.1 ms) is the application's.
#[test]
fn limits_attribute_time_to_the_receiver_window_sender_and_application() {
    for (window, late) in [(23u16, 0.0), (1000, 50.0)] {
        let mut tr = Trace::new();
        // The handshake of `Trace::handshake`, with this window on the client's ACK (a
        // receiver does not shrink its window: the view keeps the largest right edge).
        let mut syn = seg(true, S, ISN_C, 0, 0);
        syn.options = syn_opts();
        tr.at(0.0).send(syn);
        let mut sa = seg(false, S | A, ISN_S, ISN_C + 1, 0);
        sa.options = syn_opts();
        tr.at(100.0).send(sa);
        let ack = |tr: &mut Trace, at: f64, seq: u32, acked: u32, len: u32| {
            let mut s = seg(true, A, seq, ISN_S + 1 + acked, len);
            s.window = window;
            tr.at(at).send(s);
        };
        ack(&mut tr, 100.05, ISN_C + 1, 0, 0);
        ack(&mut tr, 100.1, ISN_C + 1, 0, 100);
        let ack = |tr: &mut Trace, at: f64, acked: u32| ack(tr, at, ISN_C + 101, acked, 0);
        tr.at(200.0).s2c(A, ISN_S + 1, ISN_C + 101, 1460);
        tr.at(200.0).s2c(A, ISN_S + 1461, ISN_C + 101, 1460);
        ack(&mut tr, 200.1, 2920);
        tr.at(300.1 + late).s2c(A, ISN_S + 2921, ISN_C + 101, 1460);
        tr.at(300.1 + late).s2c(A, ISN_S + 4381, ISN_C + 101, 1460);
        ack(&mut tr, 300.2 + late, 5840);
        tr.at(400.2 + late).s2c(A, ISN_S + 5841, ISN_C + 101, 1460);
        let c = &tr.t.finish()[0];
        assert_eq!(c.vantage, Vantage::Client);
        let l = c.dirs[1].limits;
        let us = |ns: u64| (ns as f64 / 1e3).round() / 1e3;
        if window == 23 {
            assert_eq!(us(l.rwnd_ns), 200.15, "{l:?}");
            assert_eq!((l.sender_ns, l.app_ns, l.zero_window_ns), (0, 0, 0));
        } else {
            assert_eq!(us(l.sender_ns), 200.15, "{l:?}");
            assert_eq!(us(l.app_ns), 50.0, "{l:?}");
            assert_eq!(l.rwnd_ns, 0);
        }
    }
}

/// A flood of handshakes nobody completes (SYN, SYN/ACK, no RST), at one a millisecond:
/// past the cap the oldest open handshake is finalised and counted; a connection whose
/// handshake completed is never cut, and a cut one's later segment continues its stream.
#[test]
fn open_handshakes_past_the_cap_are_finalised_oldest_first() {
    let mut tr = Trace::with(Tracker::new().with_handshake_cap(100));
    tr.cport = 1000;
    tr.handshake(1.0); // stream 0, answered
    for i in 0..1000u32 {
        tr.cport = 20000 + i as u16;
        let t0 = 10.0 + f64::from(i);
        tr.at(t0).c2s(S, ISN_C, 0, 0);
        tr.at(t0 + 0.5).s2c(S | A, ISN_S, ISN_C + 1, 0);
    }
    assert_eq!(tr.t.cuts().handshakes, 900);
    // The 100 newest handshakes and stream 0; one more while a new one was opened.
    assert_eq!(tr.t.live_connections(), 101);
    assert_eq!(tr.t.max_live_connections(), 102);
    // The oldest were cut: port 20000's SYN/ACK again continues its stream (1), as a
    // packet after an idle finalisation does; port 20999's ACK completes stream 1000.
    tr.cport = 20000;
    assert_eq!(tr.at(1500.0).s2c(S | A, ISN_S, ISN_C + 1, 0).stream, 1);
    tr.cport = 20999;
    assert_eq!(tr.at(1500.5).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 1000);
    tr.cport = 1000;
    assert_eq!(tr.at(1501.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 0);
    // The continuation of stream 1 is an open handshake again: the oldest then (port
    // 20900, stream 901) was cut for it.
    assert_eq!(tr.t.cuts().handshakes, 901);
    // A cut handshake's tombstone is forgotten as a closed connection's, 5 min after its
    // last packet: Linux gives a handshake up after its last retransmission.
    assert_eq!(tr.t.remembered_connections(), 900);
    assert_eq!(tr.at(400_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 0);
    assert_eq!(tr.t.remembered_connections(), 0);
    let done = tr.t.finish();
    assert_eq!(done.iter().filter(|c| !c.continuation).count(), 1001);
    assert_eq!(done.iter().filter(|c| c.continuation).count(), 1);
}

/// Handshakes that leave the count — answered by an ACK, ended by a RST, replaced by a
/// new SYN on the same ports — make room: thousands of them under a cap of 10 cut none
/// (the queue's stale entries are passed over and dropped), and a flood after them cuts
/// exactly its own oldest.
#[test]
fn handshakes_answered_reset_or_replaced_leave_the_count() {
    let mut tr = Trace::with(Tracker::new().with_handshake_cap(10));
    let mut t = 0.0;
    for i in 0..3000u32 {
        tr.cport = 10000 + i as u16;
        t += 1.0;
        tr.at(t).c2s(S, ISN_C, 0, 0);
        tr.at(t + 0.2).s2c(S | A, ISN_S, ISN_C + 1, 0);
        match i % 3 {
            0 => tr.at(t + 0.4).c2s(A, ISN_C + 1, ISN_S + 1, 0),
            1 => tr.at(t + 0.4).c2s(R, ISN_C + 1, 0, 0),
            // Port reuse: the open handshake is finalised when a new SYN takes its ports,
            // and that one is answered.
            _ => {
                tr.at(t + 0.4).c2s(S, ISN_C + 7, 0, 0);
                tr.at(t + 0.6).s2c(S | A, ISN_S + 7, ISN_C + 8, 0);
                tr.at(t + 0.8).c2s(A, ISN_C + 8, ISN_S + 8, 0)
            }
        };
    }
    assert_eq!(tr.t.cuts().handshakes, 0);
    for i in 0..25u32 {
        tr.cport = 30000 + i as u16;
        t += 1.0;
        tr.at(t).c2s(S, ISN_C, 0, 0);
    }
    assert_eq!(tr.t.cuts().handshakes, 15);
    // The first 15 of the flood were cut (their streams go on after a late SYN), the
    // last ten are live.
    tr.cport = 30000;
    let first = tr.at(t + 1.0).c2s(S, ISN_C, 0, 0);
    tr.cport = 30024;
    let last = tr.at(t + 1.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(last.stream, first.stream + 24);
    assert_eq!(tr.t.cuts().handshakes, 16);
}

/// A connection on port `cport` heard both ways: SYN at `t` ms, SYN/ACK, ACK.
fn both_ways(tr: &mut Trace, cport: u16, t: f64) {
    tr.cport = cport;
    tr.at(t).c2s(S, ISN_C, 0, 0);
    tr.at(t + 0.1).s2c(S | A, ISN_S, ISN_C + 1, 0);
    tr.at(t + 0.2).c2s(A, ISN_C + 1, ISN_S + 1, 0);
}

/// A flood of one ACK each to new ports, nothing answered, past the point where cutting
/// starts (a cap of 64: cutting at 16, an eighth of that freed at a time): the oldest
/// one-sided connections are finalised and counted, the connections heard both ways never
/// are; a cut one's later segment continues its stream while its tombstone lasts (5 min,
/// or less past 64 such tombstones). Before the flood, 40 connections heard both ways
/// came and were reset: once they are gone, cutting starts at 16 again.
#[test]
fn one_sided_connections_past_the_start_are_cut_oldest_first() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    for i in 0..40u16 {
        both_ways(&mut tr, 1000 + i, f64::from(i));
    }
    assert_eq!((tr.t.live_connections(), tr.t.cuts().connections), (40, 0));
    for i in 0..40u16 {
        tr.cport = 1000 + i;
        tr.at(50.0).c2s(R, ISN_C + 1, 0, 0);
    }
    // Ten connections heard both ways stay open (streams 40 to 49).
    for i in 0..10u16 {
        both_ways(&mut tr, 2000 + i, 2000.0 + f64::from(i));
    }
    assert_eq!(tr.t.live_connections(), 10);
    let flood = |tr: &mut Trace, ports: std::ops::Range<u16>| {
        for i in ports {
            tr.cport = 10000 + i;
            tr.at(3000.0 + f64::from(i)).c2s(A, ISN_C + 1, ISN_S + 1, 0);
        }
    };
    // The 7th cuts two (down to 16 − 16 / 8), then every second one does.
    flood(&mut tr, 0..10);
    assert_eq!((tr.t.live_connections(), tr.t.cuts().connections), (16, 4));
    flood(&mut tr, 10..1000);
    // After an even number opened past 16, 16 are live: 1,010 opened, 994 cut.
    assert_eq!(tr.t.live_connections(), 16);
    assert_eq!(tr.t.cuts().connections, 994);
    // Of the 1,034 tombstones that are forgotten after 5 min (40 reset connections, 994
    // one-sided ones cut), at most 64 are kept: the reset ones (all ended at 50 ms) went
    // at once, then the oldest nine at a time, leaving 58, the newest cut.
    assert_eq!(tr.t.remembered_connections(), 58);
    assert_eq!(tr.t.cuts().streams_forgotten, 976);
    // The newest flood connection is live (its stream, 1049: no new connection), the
    // newest cut (port 10993, stream 1043) continues its stream, and port 10935's was
    // forgotten: a new stream, where Wireshark would continue stream 985.
    tr.cport = 10999;
    assert_eq!(tr.at(4000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 1049);
    tr.cport = 10993;
    assert_eq!(tr.at(4000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 1043);
    tr.cport = 10935;
    assert_eq!(tr.at(4000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 1050);
    // Six minutes on, the tombstones of the one-sided ones cut are forgotten: port
    // 10992's packet starts a new stream.
    tr.cport = 10992;
    assert_eq!(
        tr.at(400_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream,
        1051
    );
    let done = tr.t.finish();
    for i in 40..50 {
        let parts: Vec<_> = done.iter().filter(|c| c.stream == i).collect();
        assert_eq!(parts.len(), 1, "stream {i}");
        assert!(!parts[0].continuation);
    }
}

/// Closed connections are cut before open ones, newer as they are: of 12 one-sided
/// connections and then four reset ones (cap 64, cutting at 16), opening one more cuts
/// the two oldest reset ones.
#[test]
fn closed_connections_are_cut_before_open_ones() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    for i in 0..12u16 {
        tr.cport = 1000 + i;
        tr.at(f64::from(i)).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    }
    for i in 0..4u16 {
        both_ways(&mut tr, 2000 + i, 20.0 + f64::from(i));
        tr.at(20.5 + f64::from(i)).c2s(R, ISN_C + 1, 0, 0);
    }
    assert_eq!(tr.t.live_connections(), 16);
    tr.cport = 3000;
    tr.at(30.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(tr.t.cuts().connections, 2);
    assert_eq!(tr.t.live_connections(), 15);
    // The oldest one-sided connection is still live: no new connection for its packet.
    tr.cport = 1000;
    assert_eq!(tr.at(31.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 0);
    assert_eq!(tr.t.live_connections(), 15);
    let done = tr.t.finish();
    let cut: Vec<u64> = done.iter().take(2).map(|c| c.stream).collect();
    assert_eq!(cut, [12, 13]);
}

/// Past the maximum, connections heard both ways are cut too, the least recently active
/// first; their tombstones are kept, so a later segment continues the stream however late.
#[test]
fn past_the_maximum_any_connection_is_cut() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    for i in 0..100u16 {
        both_ways(&mut tr, 1000 + i, f64::from(i));
    }
    // Live up to 64, then 56 (an eighth of 64 cut): 100 opened, 60 left.
    assert_eq!(tr.t.max_live_connections(), 64);
    assert_eq!(tr.t.live_connections(), 60);
    assert_eq!(tr.t.cuts().connections, 40);
    tr.cport = 1000;
    assert_eq!(tr.at(400_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 0);
}

/// The tombstones of ended connections are kept 5 min, at most as many as the live
/// connections' bound (a cap of 64 here): past it the oldest are forgotten, an eighth at a
/// time, and counted. A segment without SYN on a forgotten 4-tuple starts a new stream
/// (Wireshark would continue the old one); on a remembered one it continues its stream.
#[test]
fn past_the_bound_the_oldest_tombstones_are_forgotten() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    for i in 0..100u16 {
        let t = f64::from(i) * 1000.0;
        both_ways(&mut tr, 1000 + i, t);
        tr.at(t + 0.5).c2s(R, ISN_C + 1, 0, 0);
    }
    // 99 reset connections finalised (the last is live, in its linger): past 64 kept, the
    // oldest 9 are forgotten at the 65th, 74th, 83rd and 92nd.
    assert_eq!(tr.t.cuts().streams_forgotten, 36);
    assert_eq!(tr.t.remembered_connections(), 63);
    tr.cport = 1035;
    assert_eq!(tr.at(100_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream, 100);
    tr.cport = 1036;
    let late = tr.at(100_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(late.stream, 36);
}

/// The tombstones of connections finalised idle (neither closed nor reset) are kept for
/// good, as such a connection may resume, but at most as many as the live connections'
/// bound (a cap of 64 here): past it the oldest are forgotten, an eighth at a time, and
/// counted. 100 connections heard both ways open 20 s apart, each quiet from then on: 30
/// live at once, so none is cut, and each finalised at the first sweep 600 s after it.
/// The first 69 are finalised one at a time (the 65th forgets connections 0 to 8), the
/// last 31 by one sweep at 2,680 s, whose 5th, 14th and 23rd forget nine each, the oldest
/// kept: 36 forgotten, 0 to 35, all older than any finalised in that sweep. The bound on
/// closed connections' tombstones is counted and applied apart.
#[test]
fn past_the_bound_the_oldest_idle_tombstones_are_forgotten() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    for i in 0..100u16 {
        both_ways(&mut tr, 1000 + i, f64::from(i) * 20_000.0);
    }
    tr.cport = 5000;
    tr.at(2_680_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(tr.t.cuts().connections, 0);
    assert_eq!(tr.t.cuts().streams_forgotten, 36);
    assert_eq!(tr.t.remembered_connections(), 64);
    // The youngest forgotten starts a new stream (101: the last packet's took 100); the
    // oldest remembered continues its own.
    tr.cport = 1035;
    assert_eq!(
        tr.at(2_681_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream,
        101
    );
    tr.cport = 1036;
    assert_eq!(
        tr.at(2_681_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream,
        36
    );
    // Each kind has its own bound and loses its own oldest: 65 reset connections 2 s apart
    // (at most 5 live at once), the 65th past the closed ones' bound of 64 forgets the 9
    // oldest reset ones, none of the 63 idle ones left, though they ended earlier.
    for i in 0..65u16 {
        let t = 2_690_000.0 + f64::from(i) * 2000.0;
        both_ways(&mut tr, 3000 + i, t);
        tr.at(t + 0.5).c2s(R, ISN_C + 1, 0, 0);
    }
    tr.cport = 5001;
    tr.at(2_850_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(tr.t.cuts().connections, 0);
    assert_eq!(tr.t.cuts().streams_forgotten, 36 + 9);
    assert_eq!(tr.t.remembered_connections(), 63 + 56);
    tr.cport = 3008;
    assert_eq!(
        tr.at(2_851_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream,
        168
    );
    tr.cport = 3009;
    assert_eq!(
        tr.at(2_851_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0).stream,
        111
    );
}

/// Streams finalised so far.
fn finished(tr: &mut Trace) -> Vec<u64> {
    tr.t.drain_finished().map(|c| c.stream).collect()
}

/// One packet a second on another connection (port 9000), from `from` to `to` s: the
/// sweeps that finalise connections run on packets, once a second of capture time.
fn tick(tr: &mut Trace, from: u32, to: u32) {
    let port = tr.cport;
    tr.cport = 9000;
    for s in from..=to {
        tr.at(f64::from(s) * 1000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    }
    tr.cport = port;
}

/// A connection the sweep has seen idle (so not to be looked at again before 10 min)
/// closes with FINs both ways and a last ACK: 0.5 s after that ACK it is finalised, as it
/// was before the sweep remembered when each connection can next expire. The sweep at
/// 6 s sees both FINs but not the ACK (a linger of 10 s then); the ACK, which carries no
/// FIN, makes it 0.5 s: the sweep at 8 s finalises it (at 7 s it was idle exactly 0.5 s).
#[test]
fn a_connection_closing_after_an_idle_sweep_is_finalised_on_time() {
    let mut tr = Trace::new();
    both_ways(&mut tr, 1000, 0.0);
    tick(&mut tr, 1, 4);
    tr.at(5000.0).c2s(F | A, ISN_C + 1, ISN_S + 1, 0);
    tr.at(5100.0).s2c(F | A, ISN_S + 1, ISN_C + 2, 0);
    tick(&mut tr, 6, 6);
    assert_eq!(finished(&mut tr), Vec::<u64>::new());
    tr.at(6500.0).c2s(A, ISN_C + 2, ISN_S + 2, 0);
    tick(&mut tr, 7, 8);
    assert_eq!(finished(&mut tr), vec![0]);
}

/// A RST out of sequence (RFC 5961: the receiver answers it with a challenge ACK) on a
/// connection the sweep has seen idle closes it for the tracker all the same: finalised
/// 10 s after it (`CLOSED_LINGER_NS`), not 10 min.
#[test]
fn a_connection_reset_out_of_sequence_after_an_idle_sweep_lingers_10_s() {
    let mut tr = Trace::new();
    both_ways(&mut tr, 1000, 0.0);
    tick(&mut tr, 1, 4);
    tr.cport = 1000;
    tr.at(5000.0).c2s(R, ISN_C + 100, 0, 0);
    tick(&mut tr, 5, 15);
    assert_eq!(finished(&mut tr), Vec::<u64>::new());
    tick(&mut tr, 16, 16);
    assert_eq!(finished(&mut tr), vec![0]);
}

/// A segment earlier than its connection's last (a capture whose clock stepped back)
/// moves the connection's idle end back with it: finalised 10 min after that segment's
/// time (by the sweep at 651 s; at 650 s it was idle exactly 10 min), not after the
/// latest.
#[test]
fn a_segment_earlier_than_the_last_brings_the_idle_end_forward() {
    let mut tr = Trace::new();
    both_ways(&mut tr, 1000, 100_000.0);
    tick(&mut tr, 101, 102);
    tr.cport = 1000;
    tr.at(50_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    tick(&mut tr, 640, 650);
    assert_eq!(finished(&mut tr), Vec::<u64>::new());
    tick(&mut tr, 651, 651);
    assert_eq!(finished(&mut tr), vec![0]);
}

/// A tombstone taken back by a late segment (its connection continues) leaves the count
/// of those kept: 60 reset connections, 10 of them continued, and 14 more reset ones make
/// 64, the bound (a cap of 64), and none is forgotten.
#[test]
fn continued_connections_leave_the_tombstone_count() {
    let mut tr = Trace::with(Tracker::new().with_live_cap(64));
    let reset = |tr: &mut Trace, port: u16, t: f64| {
        both_ways(tr, port, t);
        tr.at(t + 0.5).c2s(R, ISN_C + 1, 0, 0);
    };
    for i in 0..60u16 {
        reset(&mut tr, 1000 + i, f64::from(i) * 1000.0);
    }
    for i in 0..10u16 {
        tr.cport = 1000 + i;
        let late = tr.at(70_000.0).s2c(A, ISN_S + 1, ISN_C + 1, 0);
        assert_eq!(late.stream, u64::from(i));
    }
    for i in 0..14u16 {
        reset(&mut tr, 2000 + i, 80_000.0 + f64::from(i) * 1000.0);
    }
    // The last reset one is finalised by the next packet.
    tr.cport = 3000;
    tr.at(100_000.0).c2s(A, ISN_C + 1, ISN_S + 1, 0);
    assert_eq!(tr.t.remembered_connections(), 64);
    assert_eq!(tr.t.cuts().streams_forgotten, 0);
}
