//! `delayed_ack.nagle` and `delayed_ack.cwnd`: a sender with data ready waits for an ACK
//! that the receiver holds back for its delayed-ACK timer (mechanisms.md, sections
//! "delayed_ack.nagle" and "delayed_ack.cwnd"; seed 05 and the last case of seed 02).
//!
//! Mechanism. Delayed ACK (RFC 1122 §4.2.3.2, RFC 9293 §3.8.6.3): a receiver with no data
//! to send back may wait before acknowledging, less than 0.5 s, and must ACK at least
//! every second full-sized segment (RFC 5681 §4.2). Linux waits `ato`, at least
//! `TCP_DELACK_MIN` = 40 ms (HZ/25; the timer fires on a jiffy tick, so 40–48 ms at HZ 250)
//! and at most `TCP_DELACK_MAX` = 200 ms, ACKs at once when more than one full segment is
//! unacknowledged (`__tcp_ack_snd_check`) or in quick-ACK mode (connection start,
//! TCP_QUICKACK), and delays in interactive ("pingpong") mode, which it enters by
//! answering within `ato` of receiving. Windows waits 200 ms by default; other stacks
//! have their own values, so the delay is measured, never assumed.
//! Two senders wait for that ACK:
//! - Nagle (RFC 896; Linux `tcp_nagle_check`, Minshall's variant): a segment smaller than
//!   the MSS is held while an earlier small segment is unacknowledged, unless TCP_NODELAY
//!   is set. A writer that writes one message in two or more calls (write-write-read)
//!   sends the first piece, and the rest waits for the ACK the reader delays.
//! - The congestion window (RFC 5681): a sender whose window is a segment or two (early
//!   in a connection with a small initial window, or after an idle restart) has it full
//!   and waits for an ACK that the receiver, having got less than two full segments,
//!   delays. TCP_NODELAY does not help.
//!
//! Signature (one "stall"): the sender S has a flight of at most `MAX_FLIGHT_SEGMENTS`
//! segments and less than `MAX_ACKED_FULL_SEGMENTS` full segments of bytes, sends nothing
//! more, the receiver R sends no data (nothing to piggyback the ACK on; data it sent
//! before the flight can have reached it crossed the flight and does not count: `crossed`)
//! and then a pure
//! ACK covering the whole flight, later than the round trip by at least
//! `MIN_ACK_DELAY_NS` (and `MIN_DELAY_TICKS` ticks of the capture's clock, at most
//! `MAX_ACK_DELAY_NS`, at least a quarter of the round trip so that RTT variation is not
//! taken for a timer), and S sends new data as soon as that ACK reaches it: that ACK
//! released data that was ready. One such stall is a finding: the ACK waited at least the
//! shortest a delayed-ACK timer waits and the data left the moment it came, which is what
//! `tcp_nagle_check` (Nagle) or `tcp_cwnd_test` (the window) makes of a late ACK; a count
//! of repetitions would only miss a timer that hit once (echo rounds whose receiver was
//! still in quick-ACK mode for the others: sweep s4-068). The round trips from the capture point to each host come
//! from the handshake (SYN → SYN/ACK is the round trip to the server, SYN/ACK → ACK the
//! one to the client; without a handshake, the path RTT on the far side of the assumed
//! vantage); the one to R is raised to the latest data → ACK time measured during the
//! same silence, if longer (queues grow: wireshark-sample-tcp-ethereal-file1.pcap).
//!
//! By vantage point:
//! - at the sender, the ACK arrives round trip + delay after the data, and the held data
//!   leaves within `RELEASE_NS` of it;
//! - at the receiver, the ACK leaves "delay" after the data arrived, and the held data
//!   arrives one round trip after the ACK left;
//! - in the middle, each gap holds the part of the path beyond the capture point.
//!
//! Measured ACK delay = ACK time − time of the oldest data it acknowledges (the timer
//! runs from that segment), less the round trip to the receiver; the report gives their
//! min/median/max and count, and says "Linux's 40 ms minimum" only when they match it.
//!
//! Telling them apart, and from the application:
//! - Nagle: exactly one small (< MSS) segment in the flight (Nagle allows only one) and the
//!   released segment also small (Nagle never holds a full one);
//! - cwnd: everything else — a full-sized segment released (Nagle would not have held it)
//!   or several small segments in flight at once (Nagle is off: TCP_NODELAY);
//! - application think time: the next data is not released by the ACK (it leaves later
//!   than `RELEASE_NS` after the ACK at the sender, or not one round trip after it at the
//!   receiver): not counted. A receiver window too small for the next segment makes it
//!   `rwnd.*`, and an earlier ACK during the silence that released nothing (for the window
//!   case) means the sender waited for all its data to be acknowledged (send buffer,
//!   application): neither is counted.
//!
//! Cost: Nagle — the sum of the waits, from the small segment Nagle waited on (or the
//! receiver's crossing data, which the held segment may answer, if later) to the held
//! segment leaving (what TCP_NODELAY gives back; it assumes the held data was written
//! right after the first piece, as in write-write-read). cwnd — the sum of the measured
//! ACK delays (the wait beyond the round trip a prompt ACK would have taken).
//!
//! Fix. Nagle, on the writer: TCP_NODELAY, or write each message in one call (one buffer,
//! writev/sendmsg); on the reader: TCP_QUICKACK set again after every recv (Linux clears
//! it). cwnd, on the sender: keep the connection warm (no idle restart:
//! `tcp_slow_start_after_idle=0`) or a larger initial window on its route
//! (`ip route change … initcwnd 10`); on the receiver: TCP_QUICKACK after every recv.
//!
//! Known false positives and limits: a congestion window of one segment carrying small
//! writes with TCP_NODELAY looks like Nagle (one small segment in flight, a small one
//! released); a stack with classic (non-Minshall) Nagle holding a small segment behind a
//! full one is reported as cwnd. A periodic sender whose period happens to equal ACK
//! delay + round trip, to within `RELEASE_NS` at the sender, would match. Receiver-side GRO merging segments can make a
//! flight look full-sized. Away from the sender, what held the data for the window case
//! cannot be seen: a send buffer or an application waiting for the ACK to free space
//! (wireshark-sample-nfs-bad-stalls.pcap, an NFS server seen from its client) looks the
//! same, and the finding says so; the delayed ACK and its cost are certain either way.
//! Past `MAX_STALLS` stalls per direction the rest is not counted (the cost is then a
//! lower bound).

use crate::detector::{emptied_vec, ms, plural, Connection, Detector, Reusable, Segment, Slots};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::limits::ETHERNET_MSS;
use tcpwhy_track::{ConnModel, SegmentKinds, Side, Vantage};

use crate::catalogue::Entry;

/// `delayed_ack.nagle` in the catalogue (crate::catalogue).
pub const NAGLE: Entry = Entry {
    id: "delayed_ack.nagle",
    title: "Nagle meets a delayed ACK",
    meaning: "a small segment held back by Nagle until the peer's delayed ACK (the measured timer, e.g. 40 ms)",
    fix_goes_to: "the writer: TCP_NODELAY / one write; the reader: TCP_QUICKACK",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// `delayed_ack.cwnd` in the catalogue (crate::catalogue).
pub const CWND: Entry = Entry {
    id: "delayed_ack.cwnd",
    title: "a tiny window meets a delayed ACK",
    meaning: "a sender whose window holds one or two segments waits for the peer's delayed ACK (the measured timer)",
    fix_goes_to: "the sender: a warm connection; the reader: TCP_QUICKACK",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// The shortest wait of a delayed-ACK timer: Linux's `TCP_DELACK_MIN` (HZ/25, 40 ms)
/// less one jiffy at the coarsest HZ (100: 10 ms). `tcp_send_delayed_ack` arms the timer
/// at `jiffies + ato` with `ato` never below `TCP_ATO_MIN` (= `TCP_DELACK_MIN`;
/// `tcp_event_data_recv` only moves it between that and the RTO), and the jiffy it is
/// armed in may be nearly over, so the ACK leaves at least 30 ms (HZ 100), 36 ms (HZ 250)
/// or 39 ms (HZ 1000) after the data. Other stacks wait longer (BSD 100 ms, Windows 200
/// ms). An ACK later than the round trip by less was not held by a timer.
pub const MIN_ACK_DELAY_NS: u64 = 30_000_000;
/// RFC 1122 §4.2.3.2: the delay must be less than 0.5 s. Longer waits are something else
/// (loss, a stalled receiver).
pub const MAX_ACK_DELAY_NS: u64 = 500_000_000;
/// At the sender, held data leaves "within microseconds" of the ACK (mechanisms.md); 1 ms
/// leaves room for a loaded host (the lab's 2-core VM: 19–24 µs).
pub const RELEASE_NS: u64 = 1_000_000;
/// Round-trip variation tolerated around the handshake's round trip: a quarter of it.
pub const RTT_JITTER_DIVISOR: u64 = 4;
/// How much sooner than the shortest RTT sample released data may arrive (with the
/// capture clock's tick): no RTT sample is shorter than the round trip (the peer cannot
/// answer before the segment reached it), but each holds the answering host's own
/// reaction, which the release after a delayed ACK may not repeat. A quarter of
/// `RELEASE_NS`, the reaction allowed to a loaded host (sweep s12-084's client: the
/// shortest round trip to the server was a message → its echo, 18.58 ms, and the held
/// echo came 18.52 ms after the ACK; tcptrace-urgent's LAN: samples of 0.51–0.70 ms, held
/// prompts 0.4–0.5 ms after the ACK). No share of the RTT: the shortest sample is a floor
/// at any RTT, so data sooner than it left before the ACK reached the sender
/// (wireshark-sample-ftpv6-2 stream 11: a segment 672 ms after the client's ACK on a
/// 734 ms round trip, the tunnel's one segment every 300 ms).
pub const FLOOR_SLACK_NS: u64 = RELEASE_NS / 4;
/// RFC 6298 §2.3: the RTO allows 4 × RTTVAR of variation above SRTT; a delay beyond 4 ×
/// the measured spread of prompt ACKs is not RTT variation.
pub const RTT_VAR_FACTOR: u64 = 4;
/// RFC 5681 §4.2: a receiver ACKs at least every second full-sized segment, so an ACK held
/// back acknowledges less than this many full segments of bytes (Linux: at most one).
pub const MAX_ACKED_FULL_SEGMENTS: u64 = 2;
/// The ACK delay must span at least this many ticks of the capture's clock
/// (tcptrace-zwnd.pcap has 10 ms timestamps: a "delay" of one tick is rounding).
pub const MIN_DELAY_TICKS: u64 = 4;
/// A flight of more segments is not a tiny window (seed 05: 3 small segments).
pub const MAX_FLIGHT_SEGMENTS: usize = 8;
/// A spread of round-trip times needs two samples (RFC 6298's RTTVAR starts from the
/// second).
pub const MIN_RTT_SAMPLES: u32 = 2;
/// RFC 9293 §3.7.1: the MSS assumed without the option. Without a handshake a segment
/// counts as full only when larger than this and the largest seen.
pub(crate) const DEFAULT_MSS: u64 = 536;
/// Linux's minimum delayed-ACK timeout (`TCP_DELACK_MIN`, HZ/25) as seen on the wire:
/// 40 ms rounded up to the next timer tick (4 ms at HZ 250; the lab measured 40.7–45.3
/// ms), with 2 ms below for the error of the round trip subtracted at the sender.
const LINUX_DELACK_MIN_NS: (u64, u64) = (38_000_000, 50_000_000);
/// Windows' default delayed-ACK timer, also Linux's `TCP_DELACK_MAX`: 200 ms.
const DELACK_200_NS: (u64, u64) = (190_000_000, 215_000_000);
/// Stalls remembered per direction of a connection.
const MAX_STALLS: usize = 1024;
/// Stalls cited as evidence (three lines each), the longest ones.
const CITED_STALLS: usize = 4;

/// One segment of new data not yet acknowledged at the capture point.
#[derive(Copy, Clone, Debug)]
struct Sent {
    frame: u64,
    ts: Timestamp,
    end: u64,
    len: u32,
}

/// A flight the receiver acknowledged late, with what the sender did next.
#[derive(Copy, Clone, Debug)]
struct Stall {
    /// The oldest segment of the flight: the receiver's timer ran from its arrival.
    first: (u64, Timestamp),
    /// The last small segment of the flight (what Nagle waited on), else the last one.
    held_after: (u64, Timestamp),
    held_after_len: u32,
    segments: u32,
    small_segments: u32,
    bytes: u64,
    /// The sender's full segment size when the stall happened.
    smss: u64,
    ack: (u64, Timestamp),
    /// The latest data → ACK time of an earlier ACK during the sender's silence: the
    /// path as it is now, queues included (wireshark-sample-tcp-ethereal-file1.pcap: 115
    /// ms in the handshake, 355 ms at the end of each 8 KB burst).
    recent_rtt: Option<u64>,
    /// The receiver's prompt (data-carrying) ACKs so far: their smallest and largest
    /// data → ACK time and count ([`Dir::prompt_rtt`]).
    prompt_rtt: Option<(u64, u64, u32)>,
    /// ACKs of new data during the silence before the late one.
    acks_before: u32,
    /// The latest of the receiver's data that crossed the flight: what the held data may
    /// answer, so it was not written before that reached the sender.
    crossed_at: Option<Timestamp>,
    /// The receiver's advertised window before its late ACK, if known.
    window: Option<u64>,
    /// The late ACK's window field is larger than the one before it: it announced room
    /// the reader had just made (a window update, `tcp_cleanup_rbuf`), not only an ACK.
    window_grew: bool,
    /// The sender's next new data after the ACK: (frame, time, length).
    release: Option<(u64, Timestamp, u32)>,
}

/// One direction, by its sender: `[client → server, server → client]`.
#[derive(Default)]
struct Dir {
    flight: Vec<Sent>,
    /// More than `MAX_FLIGHT_SEGMENTS` unacknowledged: not a tiny window.
    crowded: bool,
    /// A retransmission, or data from the receiver, since the flight began.
    spoiled: bool,
    /// The latest of the receiver's data that crossed the flight ([`crossed`]).
    crossed_at: Option<Timestamp>,
    /// End of the highest new data sent.
    highest: Option<u64>,
    /// The receiver's highest cumulative ACK.
    acked: Option<u64>,
    /// The receiver's last advertised window, in bytes when its scale is known.
    peer_window: Option<u64>,
    /// The receiver's last window field as sent (unscaled).
    peer_window_field: Option<u16>,
    /// Since the sender's last new data: ACKs of new data, and the latest data → ACK time.
    silence_acks: u32,
    silence_rtt: Option<u64>,
    /// Data → ACK times of prompt ACKs (carrying the receiver's data, or pure and too
    /// soon after the round trip for a delayed-ACK timer): smallest, largest, count.
    prompt_rtt: Option<(u64, u64, u32)>,
    /// A late ACK waiting to see what the sender does next.
    waiting: Option<Stall>,
    stalls: Vec<Stall>,
}

impl Dir {
    /// Data sent and not yet acknowledged (whether remembered in `flight` or not).
    fn outstanding(&self) -> bool {
        match (self.highest, self.acked) {
            (Some(h), Some(a)) => a < h,
            (Some(_), None) => true,
            (None, _) => false,
        }
    }
}

#[derive(Default)]
struct Conn {
    /// Largest payload seen either way.
    largest: u64,
    /// The capture clock's resolution as of the last segment (`ConnModel::tick_ns`).
    tick_ns: u64,
    dirs: [Dir; 2],
}

impl Reusable for Conn {
    fn empty(&mut self) {
        // Every field named: one added is a compile error here until it is reset.
        let Conn {
            largest,
            tick_ns,
            dirs,
        } = self;
        (*largest, *tick_ns) = (0, 0);
        for d in dirs {
            *d = Dir {
                flight: emptied_vec(&mut d.flight),
                stalls: emptied_vec(&mut d.stalls),
                ..Dir::default()
            };
        }
    }
}

/// The receiver `r`'s data seen at `t` left it before the flight's oldest segment can
/// have reached it: it was seen sooner after that segment than the round trip from the
/// capture point to `r` and back (the handshake's leg, or the shortest prompt data → ACK
/// time if shorter: no answer comes back sooner). Such data crossed the flight on the
/// way and carries no ACK of it, so it leaves the receiver with nothing to piggyback the
/// ACK on, as if it had sent nothing (sweep s17-004 at the server: a client writing four
/// 457-byte messages with TCP_NODELAY, its last two seen 3 and 19 µs after the server's
/// first echo on an 89 ms path; the client then delayed its ACK of that echo 41 ms and
/// Nagle held the rest of it).
fn crossed(d: &Dir, m: &ConnModel, r: Side, t: Timestamp) -> bool {
    let floor = match (m.handshake_leg_to(r), d.prompt_rtt) {
        (Some(l), Some((lo, _, _))) => l.min(lo),
        (Some(l), None) => l,
        (None, Some((lo, _, _))) => lo,
        (None, None) => return false,
    };
    d.flight
        .first()
        .is_some_and(|oldest| t.elapsed_since(oldest.ts) < floor)
}

/// Full segment size of the sender `s`: the connection model's effective MSS
/// (`tcpwhy_track::effective_mss`), or when the snaplen cut the SYNs the least it can be
/// (`ConnModel::full_segment_floor`: Nagle holds only what is smaller, `tcp_nagle_check`
/// against mss_cache); without an MSS option read, the largest payload seen so far
/// (`largest`), at least RFC 9293's default + 1 and at most an Ethernet segment's (a
/// larger payload is a TSO/GSO super-packet seen at the sender, not the MSS: sweep
/// s1-005 at snaplen 64, 16,694-byte packets made a 12-segment flight "small").
/// Segments at least this large (TSO super-segments included) are full.
fn smss(m: &ConnModel, s: Side, largest: u64) -> u64 {
    m.full_segment_floor(s)
        .map_or(largest.clamp(DEFAULT_MSS + 1, ETHERNET_MSS), u64::from)
}

#[derive(Default)]
pub struct DelayedAck {
    conns: Slots<Conn>,
}

impl Detector for DelayedAck {
    // Judges flights of data acknowledged late.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        c.tick_ns = ev.conn.tick_ns;
        let (me, peer) = (ev.sender(), ev.receiver());
        let flags = seg.pkt.flags;
        if flags.syn() {
            return;
        }
        // The peer's segment size as of the segments before this one, read only when a
        // stall is judged (the MSS rule on every segment was 0.9 % of `analyze`).
        let largest_before = c.largest;
        c.largest = c.largest.max(u64::from(ev.payload_len));

        // This segment as the receiver's side of the other direction's flight.
        let d = &mut c.dirs[peer];
        d.waiting = None; // the receiver did something before the sender resumed
        if ev.payload_len > 0 && d.outstanding() {
            if crossed(d, &ev.conn, me, seg.ts) {
                d.crossed_at = Some(seg.ts);
            } else {
                d.spoiled = true;
            }
        }
        if let (Some(ack), true) = (ev.rel_ack, flags.ack()) {
            if d.acked.is_none_or(|a| ack > a) {
                let not_pure = SegmentKinds::DUP_ACK
                    | SegmentKinds::KEEP_ALIVE_ACK
                    | SegmentKinds::ZERO_WINDOW_PROBE_ACK;
                let pure = ev.payload_len == 0
                    && !flags.fin()
                    && !flags.rst()
                    && ev.kinds.0 & not_pure == 0;
                let covers = d.highest.is_some_and(|h| ack >= h);
                // A prompt ACK's data → ACK time is a round-trip sample: one carrying the
                // receiver's data (nothing held it), or a pure one that came back sooner
                // after the handshake's round trip to the receiver than any delayed-ACK
                // timer waits (`MIN_ACK_DELAY_NS`), so no timer held it either (sweep s4-060
                // at the server: echo at 231.7 ms, pure ACKs 231.5 and 231.6 ms after the
                // data, then two 41–45 ms timers; its only data-carrying ACKs acknowledged
                // nothing new). A pure ACK sampled on a path whose delay grew only widens
                // the spread, which makes the rule stricter, not looser.
                let leg = ev.conn.handshake_leg_to(me);
                let prompt = ev.payload_len > 0
                    || leg.is_some_and(|l| {
                        ev.ack_rtt
                            .is_some_and(|(_, ns)| ns < l.saturating_add(MIN_ACK_DELAY_NS))
                    });
                if let (Some((_, ns)), true) = (ev.ack_rtt, prompt) {
                    let (lo, hi, n) = d.prompt_rtt.unwrap_or((ns, ns, 0));
                    d.prompt_rtt = Some((lo.min(ns), hi.max(ns), n.saturating_add(1)));
                }
                if pure && covers && !d.spoiled && !d.crowded {
                    let smss_peer = smss(&ev.conn, peer, largest_before);
                    d.waiting = stall_of(d, smss_peer, seg);
                } else {
                    d.silence_acks = d.silence_acks.saturating_add(1);
                    if let Some((_, ns)) = ev.ack_rtt {
                        d.silence_rtt = Some(ns);
                    }
                }
                // The segments this ACK covers leave the flight: all of them when it
                // covers the highest data (every end is at most `highest`), else a
                // compaction of at most `MAX_FLIGHT_SEGMENTS` entries (`Vec::retain`'s
                // general machinery was 10 instructions a segment of `analyze`, callgrind).
                if covers {
                    d.flight.clear();
                } else {
                    let mut kept = 0;
                    for i in 0..d.flight.len() {
                        let s = d.flight[i];
                        if s.end > ack {
                            d.flight[kept] = s;
                            kept += 1;
                        }
                    }
                    d.flight.truncate(kept);
                }
                d.acked = Some(ack);
                if !d.outstanding() {
                    // Everything acknowledged (segments not remembered while crowded
                    // included): the next flight starts clean.
                    d.flight.clear();
                    d.spoiled = false;
                    d.crowded = false;
                    d.crossed_at = None;
                }
            }
        }
        // The window in bytes only when both SYNs' options were read whole: a snaplen that
        // cut them (or a capture without them) leaves the scale unknown, and the raw field
        // (63 for 8,064 bytes at scale 7) would say no room for a 404-byte message (issue
        // 12 class 8: cut options are unknown, not absent; sweep s1-044 at snaplen 64).
        let scale_known = ev.conn.dirs.iter().all(|m| m.syn.options().is_some());
        d.peer_window = scale_known.then_some(ev.window_bytes);
        d.peer_window_field = Some(seg.pkt.window);

        // This segment as the sender's data.
        if ev.payload_len == 0 {
            return;
        }
        let d = &mut c.dirs[me];
        if !ev.kinds.has(SegmentKinds::NEW_DATA) {
            d.waiting = None;
            if d.outstanding() {
                d.spoiled = true;
            }
            return;
        }
        d.silence_acks = 0;
        d.silence_rtt = None;
        if let Some(mut st) = d.waiting.take() {
            st.release = Some((seg.frame, seg.ts, ev.payload_len));
            if d.stalls.len() < MAX_STALLS {
                d.stalls.push(st);
            }
        }
        let end = ev.rel_seq.saturating_add(u64::from(ev.payload_len));
        if d.flight.len() < MAX_FLIGHT_SEGMENTS {
            d.flight.push(Sent {
                frame: seg.frame,
                ts: seg.ts,
                end,
                len: ev.payload_len,
            });
        } else {
            d.crowded = true;
        }
        d.highest = Some(d.highest.map_or(end, |h| h.max(end)));
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(c) = self.conns.take_reusing(conn) else {
            return;
        };
        let Some(rt) = round_trips(conn) else {
            return; // no handshake and no vantage: the ACK delay cannot be separated from the path
        };
        for (s, d) in c.dirs.iter().enumerate() {
            let side = Side::from_index(s);
            let (to_sender, to_receiver) = (rt.release[side], rt.handshake[side.peer()]);
            let floor = rt.floor[side];
            let mut kept: [Vec<Judged>; 2] = [Vec::new(), Vec::new()];
            for st in &d.stalls {
                if let Some(j) = judge(st, to_sender, floor, to_receiver, c.tick_ns) {
                    kept[j.kind as usize].push(j);
                }
            }
            for (kind, stalls) in kept.iter_mut().enumerate() {
                if !stalls.is_empty() {
                    let kind = if kind == 0 { Kind::Nagle } else { Kind::Cwnd };
                    out.push(report(conn, s, kind, stalls, to_sender, to_receiver));
                }
            }
        }
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}

/// The flight of `d` acknowledged late by the ACK `seg`, if it is small enough to be one.
fn stall_of(d: &Dir, smss: u64, seg: &Segment<'_>) -> Option<Stall> {
    let flight = &d.flight;
    let first = flight.first()?;
    if seg.ts.elapsed_since(first.ts) < MIN_ACK_DELAY_NS {
        return None;
    }
    let bytes: u64 = flight.iter().map(|s| u64::from(s.len)).sum();
    if bytes >= MAX_ACKED_FULL_SEGMENTS.saturating_mul(smss) {
        return None;
    }
    let small = |s: &&Sent| u64::from(s.len) < smss;
    let held_after = flight.iter().rev().find(small).or(flight.last())?;
    Some(Stall {
        first: (first.frame, first.ts),
        held_after: (held_after.frame, held_after.ts),
        held_after_len: held_after.len,
        segments: flight.len() as u32,
        small_segments: flight.iter().filter(small).count() as u32,
        bytes,
        smss,
        ack: (seg.frame, seg.ts),
        recent_rtt: d.silence_rtt,
        prompt_rtt: d.prompt_rtt,
        acks_before: d.silence_acks,
        crossed_at: d.crossed_at,
        window: d.peer_window,
        window_grew: d.peer_window_field.is_some_and(|w| seg.pkt.window > w),
        release: None,
    })
}

#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Kind {
    Nagle = 0,
    Cwnd = 1,
}

/// A stall that passed the timing checks.
#[derive(Copy, Clone, Debug)]
struct Judged {
    st: Stall,
    kind: Kind,
    release: (u64, Timestamp, u32),
    /// The receiver's ACK delay.
    delay_ns: u64,
    /// The time this stall cost.
    cost_ns: u64,
}

/// The round trip from the capture point to `[client, server]`: the handshake's two legs
/// (SYN → SYN/ACK reaches the server and back, SYN/ACK → ACK the client), or, without
/// them or when the user chose the vantage, the path RTT on the far side of it. A leg
/// longer than the shortest RTT sample of the data sent from here towards that side
/// (data → ACK, or TSval → echo: neither can be shorter than the round trip) by more
/// than the jitter `judge` allows around it was inflated by a slow first packet, and
/// that sample replaces it — in the second array, the round trips that time a release
/// (sweep s12-084's client saw SYN → SYN/ACK take 32.5 ms on an 18 ms path, and the
/// Nagle-held echo that its delayed ACK released, arriving 18.5 ms after that ACK, was
/// not taken for its release). The ACK delay is still measured against the first, the
/// handshake's leg to the receiver: a shorter one would make delays of ACKs that a
/// jittery path only slowed (zeek-http-206-example-a stream 1: an ACK 677 ms after the
/// data on a path whose samples range from 358 ms up).
fn round_trips(conn: &Connection<'_>) -> Option<RoundTrips> {
    let s = conn.summary;
    if conn.vantage == s.vantage {
        if let (Some(to_server), Some(to_client)) = (s.syn_to_synack_ns, s.synack_to_ack_ns) {
            // Data of `[client → server, server → client]` measures the round trip to
            // its receiver.
            let shortest = |leg: u64, d: usize| {
                let dir = &s.dirs[d];
                [dir.rtt_ack, dir.rtt_ts]
                    .iter()
                    .flatten()
                    .map(|r| r.min_ns)
                    .fold(leg, u64::min)
            };
            let shortest = [shortest(to_client, 1), shortest(to_server, 0)];
            let release = |leg: u64, short: u64| {
                if short.saturating_add(release_tolerance(leg, 0)) < leg {
                    short
                } else {
                    leg
                }
            };
            // A floor only where a sample undercut the leg: a leg no sample undercut may
            // still be inflated (a slow first packet, too few samples to show it).
            let floor = |leg: u64, short: u64| if short < leg { short } else { 0 };
            return Some(RoundTrips {
                handshake: [to_client, to_server],
                release: [
                    release(to_client, shortest[0]),
                    release(to_server, shortest[1]),
                ],
                floor: [floor(to_client, shortest[0]), floor(to_server, shortest[1])],
            });
        }
    }
    let r = match (conn.vantage, conn.rtt_ns) {
        (Vantage::Client, Some(r)) => [0, r],
        (Vantage::Server, Some(r)) => [r, 0],
        _ => return None,
    };
    Some(RoundTrips {
        handshake: r,
        release: r,
        floor: [0; 2],
    })
}

/// How far from the round trip to the sender data may arrive after the ACK and still be
/// its release: the sender's reaction (`RELEASE_NS`), a quarter of the round trip for
/// its variation, and the clock's tick.
fn release_tolerance(to_sender: u64, tick_ns: u64) -> u64 {
    RELEASE_NS + to_sender / RTT_JITTER_DIVISOR + tick_ns
}

/// The round trips from the capture point to `[client, server]` ([`round_trips`]).
#[derive(Copy, Clone)]
struct RoundTrips {
    /// The handshake's legs (or the path RTT beyond the vantage): what an ACK's delay is
    /// measured against.
    handshake: [u64; 2],
    /// The round trip that times a release: the handshake's leg, or the shortest sample
    /// where the leg was inflated.
    release: [u64; 2],
    /// The shortest RTT sample where one undercut the handshake's leg (else 0): no
    /// released data arrives sooner.
    floor: [u64; 2],
}

/// Whether a stall is a delayed ACK releasing waiting data, and which kind. `tick_ns`:
/// the capture clock's resolution; `floor`: the shortest round trip to the sender that
/// a sample showed, when shorter than the handshake's leg (else 0).
fn judge(st: &Stall, to_sender: u64, floor: u64, to_receiver: u64, tick_ns: u64) -> Option<Judged> {
    let release = st.release?;
    let raw = st.ack.1.elapsed_since(st.first.1);
    let hs_to_receiver = to_receiver;
    // The path to the receiver now: the handshake's, or longer if queues grew since.
    let to_receiver = to_receiver.max(st.recent_rtt.unwrap_or(0));
    let delay = raw.saturating_sub(to_receiver);
    // RTT variation: a quarter of the round trip unless the connection measured its own.
    // RFC 6298 takes a sample beyond SRTT + 4·RTTVAR for no RTT at all (the RTO); a delay
    // above 4 × the spread of the receiver's prompt ACKs' data → ACK times (at least
    // `MIN_RTT_SAMPLES` of them) is likewise no RTT variation, however long the path (sweep
    // s1-028 at the server: 256 ms RTT, prompt ACKs within 0.3 ms, a 40.6 ms timer).
    // The handshake's leg counts as one prompt sample: the ACK of a SYN/ACK is never
    // delayed (RFC 9293 §3.5).
    let stable = st.prompt_rtt.is_some_and(|(lo, hi, n)| {
        let (lo, hi, n) = if hs_to_receiver > 0 {
            (
                lo.min(hs_to_receiver),
                hi.max(hs_to_receiver),
                n.saturating_add(1),
            )
        } else {
            (lo, hi, n)
        };
        n >= MIN_RTT_SAMPLES && (hi - lo).saturating_mul(RTT_VAR_FACTOR) <= delay
    });
    let late = delay >= MIN_ACK_DELAY_NS.max(MIN_DELAY_TICKS.saturating_mul(tick_ns))
        && delay <= MAX_ACK_DELAY_NS
        && (stable || delay.saturating_mul(RTT_JITTER_DIVISOR) >= to_receiver);
    let gap = release.1.elapsed_since(st.ack.1);
    // Data the ACK released reach here no sooner than the shortest round trip to the
    // sender after it, less `FLOOR_SLACK_NS` and the tick; later, the path's jitter may
    // add more.
    let tol = release_tolerance(to_sender, tick_ns);
    let early = tick_ns + FLOOR_SLACK_NS;
    let released = gap <= to_sender.saturating_add(tol)
        && gap.saturating_add(tol) >= to_sender
        && gap.saturating_add(early) >= floor;
    // With the scale unknown (the SYNs' options cut or not captured) the room cannot be
    // counted; an ACK whose window field grew is then taken for what it may be, a slow
    // reader's window update after a read (Linux's `tcp_cleanup_rbuf` ACKs when a read
    // opens the window), which releases window-limited data just as late (sweep s1-005
    // at snaplen 64: ACKs 39 ms apart, one per read, fields 7360 → 7680).
    let window_open = match st.window {
        Some(w) => w >= st.bytes.saturating_add(u64::from(release.2)),
        None => !st.window_grew,
    };
    if !(late && released && window_open) {
        return None;
    }
    let nagle = st.small_segments == 1
        && u64::from(st.held_after_len) < st.smss
        && u64::from(release.2) < st.smss;
    let (kind, cost_ns) = if nagle {
        // From the piece Nagle waited on, or from the receiver's crossing data the held
        // piece may answer (an echo, the next step of a handshake such as SSH's
        // key exchange), whichever came later.
        let ready = st
            .crossed_at
            .map_or(st.held_after.1, |c| c.max(st.held_after.1));
        let wait = release.1.elapsed_since(ready);
        (Kind::Nagle, wait)
    } else if st.acks_before == 0 {
        (Kind::Cwnd, delay)
    } else {
        // An earlier ACK opened the window and released nothing: the sender was not
        // window-limited but waiting for all its data to be acknowledged (its send
        // buffer or application), which is not this mechanism.
        return None;
    };
    Some(Judged {
        st: *st,
        kind,
        release,
        delay_ns: delay,
        cost_ns,
    })
}

/// "min 40.7 ms, median 42.7 ms, max 44.8 ms over 4 ACKs", and what the median matches
/// (`receiver`: "client" or "server").
fn delay_distribution(js: &[Judged], receiver: &str) -> (String, String) {
    let mut d: Vec<u64> = js.iter().map(|j| j.delay_ns).collect();
    d.sort_unstable();
    let (min, max) = (
        d.first().copied().unwrap_or(0),
        d.last().copied().unwrap_or(0),
    );
    let mid = d.len() / 2;
    let median = match (d.len() % 2, d.get(mid.wrapping_sub(1)), d.get(mid)) {
        (0, Some(&a), Some(&b)) => a / 2 + b / 2,
        (_, _, Some(&b)) => b,
        _ => 0,
    };
    let dist = format!(
        "min {}, median {}, max {} over {} ACKs",
        ms(min),
        ms(median),
        ms(max),
        d.len()
    );
    let within = |(lo, hi): (u64, u64)| (lo..=hi).contains(&median);
    let matches = if within(LINUX_DELACK_MIN_NS) {
        format!(
            " — Linux's minimum delayed-ACK timeout (TCP_DELACK_MIN, 40 ms, fired on the next \
             timer tick), so the {receiver} is most likely Linux"
        )
    } else if within(DELACK_200_NS) {
        " — the 200 ms of Windows' default delayed-ACK timer (also Linux's maximum, \
         TCP_DELACK_MAX)"
            .to_string()
    } else {
        format!(" — the {receiver} stack's own delayed-ACK timer, not Linux's 40 ms")
    };
    (dist, matches)
}

fn role(is_server: bool) -> &'static str {
    if is_server {
        "server"
    } else {
        "client"
    }
}

/// The finding of one kind on one direction (`s`: 0 = the client sends).
fn report(
    conn: &Connection<'_>,
    s: usize,
    kind: Kind,
    js: &mut [Judged],
    to_sender: u64,
    to_receiver: u64,
) -> Finding {
    let sender_is_server = s == 1;
    let (sender, receiver) = (role(sender_is_server), role(!sender_is_server));
    let eps = conn.summary.endpoints;
    let side = Side::from_index(s);
    let (s_addr, r_addr) = (eps[side], eps[side.peer()]);
    let id = match kind {
        Kind::Nagle => FindingId::DelayedAckNagle,
        Kind::Cwnd => FindingId::DelayedAckCwnd,
    };
    let mut f = conn.finding(id);
    f.cost_ns = js.iter().map(|j| j.cost_ns).sum();
    f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
    let n = js.len();
    let longest = js.iter().map(|j| j.cost_ns).max().unwrap_or(0);
    let (dist, matches) = delay_distribution(js, receiver);
    let max_gap = js
        .iter()
        .map(|j| j.release.1.elapsed_since(j.st.ack.1))
        .max()
        .unwrap_or(0);
    // How the ACK delay and the release were read at this capture point.
    let at_sender = to_sender < RELEASE_NS && to_receiver >= RELEASE_NS;
    let at_receiver = to_receiver < RELEASE_NS;
    let measured = if at_receiver && to_sender < RELEASE_NS {
        // A LAN: both hosts within a millisecond of the capture point.
        format!(
            "ACK time − data time; the capture is within {} of both hosts",
            ms(to_sender.max(to_receiver))
        )
    } else if at_receiver {
        format!("at the {receiver}, ACK time − arrival of the data it acknowledges")
    } else {
        format!(
            "ACK time − data time here, less the round trip to the {receiver}: {} in the \
             handshake, or the latest measured if longer",
            ms(to_receiver)
        )
    };
    let release_how = if at_sender || to_sender < RELEASE_NS {
        format!(
            "the held data left within {} of each ACK's arrival",
            ms(max_gap)
        )
    } else {
        format!(
            "the held data came one round trip to the {sender} ({}) after each ACK passed \
             here",
            ms(to_sender)
        )
    };
    let smss = js.first().map_or(0, |j| j.st.smss);
    // With the SYNs cut by the snaplen `smss` is the least the full segment can be.
    let full = if conn.summary.dirs.iter().any(|d| d.syn_cut) {
        format!("at least {smss} B as far as the capture shows: the snaplen cut the SYNs' options")
    } else {
        format!("{smss} B")
    };
    match kind {
        Kind::Nagle => {
            let held = js.first().map_or(0, |j| j.release.2);
            f.explanation = format!(
                "The {sender} {s_addr} (the writer) writes small pieces back to back without \
                 TCP_NODELAY: Nagle's algorithm (RFC 896) holds a piece (e.g. {held} B) until \
                 the previous small one is acknowledged, and the {receiver} {r_addr} (the \
                 reader), having no data to send back, delays that ACK by its delayed-ACK \
                 timer. {n} held segment(s) waited {} in all, {} at most. Measured ACK delays \
                 ({measured}): {dist}{matches}. Nagle, not a full congestion window: one small \
                 segment was unacknowledged each time (Nagle allows only one; a window-limited \
                 sender with TCP_NODELAY sends several) and the held data was under a full \
                 segment ({full}). Not application think time: {release_how}, so it was \
                 written and only waiting for that ACK.",
                ms(f.cost_ns),
                ms(longest),
            );
            f.fix = vec![
                Fix {
                    host: host(sender_is_server),
                    action: format!(
                        "the writer ({s_addr}): set TCP_NODELAY on its socket, or write each \
                         message in one call (build it in one buffer, or writev / sendmsg \
                         with all its parts)"
                    ),
                },
                Fix {
                    host: host(!sender_is_server),
                    action: format!(
                        "or the reader ({r_addr}): set TCP_QUICKACK again after every recv \
                         (Linux clears it: it is not permanent), so its ACK leaves at once"
                    ),
                },
            ];
        }
        Kind::Cwnd => {
            let segs = js.iter().map(|j| j.st.segments).max().unwrap_or(0);
            let bytes = js.iter().map(|j| j.st.bytes).max().unwrap_or(0);
            let full_release = js.iter().filter(|j| u64::from(j.release.2) >= smss).count();
            let several_small = js.iter().filter(|j| j.st.small_segments >= 2).count();
            let why_not_nagle = if full_release >= several_small {
                format!(
                    "what it sent next was a full-sized segment ({full}) in {full_release} of \
                     {n} {}, which Nagle never holds",
                    plural(n as u64, "case", "cases")
                )
            } else {
                format!(
                    "several small segments were in flight at once in {several_small} of {n} \
                     {}, which Nagle does not allow (TCP_NODELAY is on)",
                    plural(n as u64, "case", "cases")
                )
            };
            let window = if at_sender {
                "its whole congestion window, small early in a connection or after an idle \
                 restart"
            } else {
                "its whole window, small early in a connection or after an idle restart (away from \
                 the sender, a send buffer waiting for the ACK to free space looks the same)"
            };
            f.explanation = format!(
                "The {sender} {s_addr} had at most {segs} segment(s) ({bytes} B) in flight — \
                 {window} — and sent nothing more until the {receiver} {r_addr} acknowledged \
                 them; having received less than two full segments and having no data to \
                 send back, the {receiver} delayed that ACK by its timer. {n} stall(s) cost \
                 {} beyond the round trip a prompt ACK takes, {} at most. Measured ACK delays \
                 ({measured}): {dist}{matches}. Not Nagle: {why_not_nagle}. Not application \
                 think time: {release_how}, so it was ready and only waiting for that ACK.",
                ms(f.cost_ns),
                ms(longest),
            );
            f.fix = vec![
                Fix {
                    host: host(sender_is_server),
                    action: format!(
                        "the sender ({s_addr}): avoid tiny windows — keep the connection warm \
                         (requests closer together, or sysctl -w \
                         net.ipv4.tcp_slow_start_after_idle=0 so it does not restart after \
                         idle) and give its route a larger initial window (ip route change … \
                         initcwnd 10)"
                    ),
                },
                Fix {
                    host: host(!sender_is_server),
                    action: format!(
                        "or the receiver ({r_addr}): set TCP_QUICKACK again after every recv \
                         (Linux clears it), so such ACKs leave at once"
                    ),
                },
            ];
        }
    }
    f.confidence = if at_sender || at_receiver {
        Confidence::High
    } else {
        Confidence::Medium
    };
    js.sort_by(|a, b| b.cost_ns.cmp(&a.cost_ns).then(a.st.ack.0.cmp(&b.st.ack.0)));
    let cited = CITED_STALLS.min(js.len());
    let cited = &mut js[..cited];
    cited.sort_by_key(|j| j.st.ack.0);
    for j in cited.iter() {
        let st = &j.st;
        let raw = st.ack.1.elapsed_since(st.first.1);
        let delay_note = if at_receiver {
            format!("{} after the data arrived", ms(j.delay_ns))
        } else {
            format!(
                "{} after the data here, a delay of {}",
                ms(raw),
                ms(j.delay_ns)
            )
        };
        let gap = j.release.1.elapsed_since(st.ack.1);
        match kind {
            Kind::Nagle => {
                f.cite(
                    st.held_after.0,
                    st.held_after.1,
                    format!(
                        "the {sender}'s small segment ({} B): Nagle holds the next one until it is ACKed",
                        st.held_after_len
                    ),
                );
                f.cite(
                    st.ack.0,
                    st.ack.1,
                    format!("the {receiver}'s pure ACK of it, {delay_note}"),
                );
                f.cite(
                    j.release.0,
                    j.release.1,
                    format!(
                        "the held segment ({} B), {} after that ACK: it waited {}",
                        j.release.2,
                        ms(gap),
                        ms(j.cost_ns)
                    ),
                );
            }
            Kind::Cwnd => {
                f.cite(
                    st.first.0,
                    st.first.1,
                    format!(
                        "the {sender}'s flight starts: {} segment(s), {} B, then silence",
                        st.segments, st.bytes
                    ),
                );
                f.cite(
                    st.ack.0,
                    st.ack.1,
                    format!("the {receiver}'s pure ACK of the whole flight, {delay_note}"),
                );
                f.cite(
                    j.release.0,
                    j.release.1,
                    format!(
                        "the {sender} resumes ({} B), {} after that ACK",
                        j.release.2,
                        ms(gap)
                    ),
                );
            }
        }
    }
    f
}

fn host(is_server: bool) -> Host {
    if is_server {
        Host::Server
    } else {
        Host::Client
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A stall from times in µs: the flight's segment lengths (sent `first_us` apart from
    /// each other, the last one being what Nagle waits on if small), the ACK and the
    /// release, as seen at the capture point.
    fn stall(lens: &[u32], gap_us: i64, ack_us: i64, release: (i64, u32)) -> Stall {
        let us = |t: i64| Timestamp::from_nanos(t * 1_000);
        let smss = 1448;
        let small = lens.iter().filter(|&&l| u64::from(l) < smss).count() as u32;
        let last = lens.len() as i64 - 1;
        Stall {
            first: (1, us(0)),
            held_after: (1 + last as u64, us(last * gap_us)),
            held_after_len: *lens.last().unwrap(),
            segments: lens.len() as u32,
            small_segments: small,
            bytes: lens.iter().map(|&l| u64::from(l)).sum(),
            smss,
            ack: (10, us(ack_us)),
            recent_rtt: None,
            prompt_rtt: None,
            acks_before: 0,
            crossed_at: None,
            window: Some(65_535),
            window_grew: false,
            release: Some((11, us(release.0), release.1)),
        }
    }

    /// Sweep s1-028 at the writer (the server), 256.59 ms to the client: 431 B out, the
    /// ACK 297.25 ms later (a 40.66 ms delay), 862 B released 45 µs after it. A quarter
    /// of the round trip (64 ms) rules the delay out as RTT variation unless the
    /// connection measured its own: prompt ACKs 256.44–256.80 ms after their data.
    #[test]
    fn a_timer_beyond_four_times_the_measured_rtt_spread_counts_on_a_long_path() {
        let mut st = stall(&[431], 0, 297_250, (297_295, 862));
        assert!(judge(&st, 0, 0, 256_590_000, 1_000).is_none());
        st.prompt_rtt = Some((256_440_000, 256_800_000, 2));
        let j = judge(&st, 0, 0, 256_590_000, 1_000).unwrap();
        assert_eq!(j.kind, Kind::Nagle);
        assert_eq!(j.delay_ns, 40_660_000);
        // A spread of 11 ms (4 × 11 > 40.66) is RTT variation again.
        st.prompt_rtt = Some((250_000_000, 261_000_000, 2));
        assert!(judge(&st, 0, 0, 256_590_000, 1_000).is_none());
    }

    /// Window scale unknown (SYN options cut): the room is not counted, but an ACK whose
    /// window field grew may be a reader's window update, not a delayed ACK.
    #[test]
    fn an_unknown_window_only_rules_out_acks_that_opened_it() {
        let mut st = stall(&[404], 0, 41_200, (41_250, 404));
        st.window = None;
        assert_eq!(judge(&st, 0, 0, 0, 1_000).unwrap().kind, Kind::Nagle);
        st.window_grew = true;
        assert!(judge(&st, 0, 0, 0, 1_000).is_none());
    }

    /// Seed 05, case 1, at the writer (the server; RTT ≈ 0.7 ms): frame 7 (1023 B) at
    /// .887888, the client's ACK (frame 8) at .925270, the held 165 B (frame 9) at
    /// .925276: Nagle, waiting 37.4 ms.
    #[test]
    fn seed05_write_write_read_is_nagle() {
        let st = stall(&[1023], 0, 37_382, (37_388, 165));
        let j = judge(&st, 0, 0, 700_000, 1_000).unwrap();
        assert_eq!(j.kind, Kind::Nagle);
        assert_eq!(j.cost_ns, 37_388_000);
        assert_eq!(j.delay_ns, 36_682_000);
    }

    /// Seed 05, case 2, at the writer with TCP_NODELAY and cwnd 3: three 132 B segments
    /// (frames 7–9, .333629 to .340035), the ACK (frame 10) at .371416, 792 B (frame 11)
    /// 45 µs later. Three small segments at once: not Nagle.
    #[test]
    fn seed05_three_small_segments_in_flight_is_the_window() {
        let mut st = stall(&[132, 132, 132], 3_203, 37_787, (37_832, 792));
        st.held_after = (3, Timestamp::from_nanos(6_406_000));
        let j = judge(&st, 0, 0, 900_000, 1_000).unwrap();
        assert_eq!(j.kind, Kind::Cwnd);
        assert_eq!(j.cost_ns, 36_887_000);
    }

    /// No delayed-ACK timer fires sooner than `TCP_DELACK_MIN` less one jiffy (30 ms at HZ
    /// 100): an ACK 25 ms beyond the round trip that released a held segment at once was
    /// late for another reason (a loaded receiver, a path whose delay grew), and 31 ms is
    /// a timer at HZ 100.
    #[test]
    fn a_delay_shorter_than_any_delayed_ack_timer_is_no_stall() {
        assert!(judge(
            &stall(&[132], 0, 26_000, (26_010, 132)),
            0,
            0,
            1_000_000,
            1_000
        )
        .is_none());
        let j = judge(
            &stall(&[132], 0, 32_000, (32_010, 132)),
            0,
            0,
            1_000_000,
            1_000,
        )
        .unwrap();
        assert_eq!((j.kind, j.delay_ns), (Kind::Nagle, 31_000_000));
    }

    /// Data that leaves 5 ms after the ACK at the writer was not released by it: think
    /// time. An ACK 5 ms late is no timer. Ten-ms timestamps cannot show a 10 ms delay.
    #[test]
    fn look_alikes_are_not_stalls() {
        assert!(judge(
            &stall(&[132], 0, 41_000, (46_000, 132)),
            0,
            0,
            1_000_000,
            1_000
        )
        .is_none());
        assert!(judge(
            &stall(&[132], 0, 6_000, (6_010, 132)),
            0,
            0,
            1_000_000,
            1_000
        )
        .is_none());
        assert!(judge(
            &stall(&[1448], 0, 10_000, (10_000, 1448)),
            0,
            0,
            0,
            10_000_000
        )
        .is_none());
        // The window case needs the late ACK to be the first of the silence.
        let mut st = stall(&[1448], 0, 41_000, (41_010, 1448));
        assert_eq!(judge(&st, 0, 0, 0, 1_000).unwrap().kind, Kind::Cwnd);
        st.acks_before = 1;
        assert!(judge(&st, 0, 0, 0, 1_000).is_none());
        // At the receiver, the held data arrives one round trip (25 ms) after the ACK.
        let st = stall(&[1448], 0, 41_000, (66_300, 1448));
        assert_eq!(
            judge(&st, 25_000_000, 25_000_000, 0, 1_000)
                .unwrap()
                .delay_ns,
            41_000_000
        );
        let st = stall(&[1448], 0, 41_000, (41_300, 1448));
        assert!(judge(&st, 25_000_000, 25_000_000, 0, 1_000).is_none());
        // Sooner than the shortest round trip a sample showed (20 ms; the handshake's
        // 25 ms leg allows down to 17.75 ms), less 0.25 ms of host reaction and the
        // tick: it left before the ACK reached the sender.
        let st = stall(&[1448], 0, 41_000, (60_000, 1448));
        assert!(judge(&st, 25_000_000, 0, 0, 1_000).is_some());
        assert!(judge(&st, 25_000_000, 20_000_000, 0, 1_000).is_none());
        let st = stall(&[1448], 0, 41_000, (60_800, 1448));
        assert!(judge(&st, 25_000_000, 20_000_000, 0, 1_000).is_some());
    }
}
