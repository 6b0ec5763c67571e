//! `app.limited`: in the middle of a transfer the sender had everything acknowledged and
//! an open window, and sent nothing — the application had no data ready. Not a TCP
//! problem; the report says so (mechanisms.md "app.server_think_time, app.limited").
//!
//! Mechanism: TCP sends what the application has written, as far as the windows allow
//! (RFC 9293 §3.8.6; Linux marks such a socket `app_limited` in `tcp_info` and `ss`,
//! RFC 7661 calls it "rate-limited"). When the application writes slower than the path
//! carries, each write drains in about one RTT and the connection then waits, open, for
//! the next write: throughput is the application's rate.
//!
//! Signature: the sender's data is all acknowledged (nothing in flight: the window, its
//! cwnd and the peer's advertised window, is certainly open), the peer's last ACK
//! advertises a non-zero window, the peer sends no data (no new request: that is think
//! time or a pause between exchanges), and then the sender sends more new data. Or,
//! with data still in flight, Linux's own definition (`tcp_rate_check_app_limited`,
//! net/ipv4/tcp_rate.c: at a write, less than one MSS unsent and fewer packets in flight
//! than cwnd): an ACK that advances the cumulative ACK outside loss recovery frees room
//! in cwnd (RFC 5681 never shrinks cwnd on such an ACK; RFC 6582's `recover` bounds the
//! recovery), the peer's window has room for a burst, and the sender stays silent for at
//! least `MIN_GAP_NS` until new data leaves on no ACK — the application's next write. A
//! sender with data queued would have sent on the ACK (tcp_ack → tcp_data_snd_check).
//! Data that leaves within `LAG_NOISE_NS` of an ACK is that ACK's doing, not a write:
//! room it opened, or memory it freed that woke a writer asleep on a full send buffer
//! (tcp_check_space → sk_stream_write_space, once a third of the buffer is free); on a
//! connection where `sndbuf.limited` is named, no pause with data in flight counts (the
//! woken writer may take its scheduler's milliseconds). And
//! more than two segments must leave at once: a pacing sender's slot is two
//! (tcp_tso_autosize's tcp_min_tso_segs) whenever its slots are `MIN_GAP_NS` apart.
//! That is the paced writer whose writes come more often than once per RTT, whose flight
//! never empties. Its flight drains from the path's queue during the pause: a pause
//! whose flight was ACKed later than the new data could have followed it on an empty
//! path (`path_idle_ns`) is a pacing or cwnd-limited sender behind its own queue. Judged only at the sender, and only for a sender seen answering an ACK
//! within `LAG_NOISE_NS` (elsewhere the ACK's effect is an estimate a millisecond off).
//! Likewise a pause that begins when the receiver reopens a window that had closed on
//! the sender (everything ACKed, no room for a burst, then an update), or ACKs data that
//! had filled its window to the edge: Linux sends what is queued on that update, so the
//! data that follows is its answer, and away from the sender a late answer is the
//! path's jitter as often as an idle application.
//! At the sender the ACK and the next data are seen where they happen; elsewhere the ACK
//! takes the way to the sender and the data the way back, so the capture point's round
//! trip to the sender as it was when the data came (`DirModel::round_trip_ns`: the
//! handshake's leg, then the shortest recent echo of the peer's TSvals) is subtracted
//! from the gap: at the receiver the whole RTT, in the middle the tap-to-sender part.
//! There the data must also echo the ACK that began the pause (its TSecr at least that
//! ACK's TSval): data echoing an older one left before that ACK reached the sender.
//!
//! Cost: the sum of those open-window gaps between `MIN_GAP_NS` and `MAX_GAP_NS`,
//! conservatively: time with data in flight but a partly open window is not counted, nor
//! the think time before a response (`app.server_think_time`), nor the gaps between
//! exchanges, nor silences longer than `MAX_GAP_NS` (pauses between transfers).
//!
//! Fix: on the sending application: why does it write slowly — a producer, disk or
//! database rate, a rate limiter, small writes with sleeps. TCP settings will not help.
//!
//! Known false positives: a pacing sender (BBR, fq) with data queued sends on its pacing
//! timer, not on ACKs; below ≈ 4.6 Mbit/s its 2-segment slots (tcp_tso_autosize's
//! minimum) are more than `MIN_GAP_NS` apart, which is why such pauses need more than two
//! segments after them — but at a minimum RTT of a few ms tcp_tso_autosize adds
//! 64 KB >> (min RTT / 512 µs, tcp_tso_rtt_log) to each slot, so a slow paced sender
//! there sends larger slots. Known misses: a paced writer of at most two segments per write with data in
//! flight (indistinguishable from pacing), and a write that leaves within
//! `LAG_NOISE_NS` of an ACK by chance. BBR's ProbeRTT
//! (cwnd 4 packets for 200 ms) holds a sender with room freed by ACKs. Interactive
//! protocols (a terminal, a chat) are "app-limited" by nature; pauses followed by less than `MIN_BURST_BYTES` are not counted for that
//! reason. Request pipelining without new
//! client data (server push, streaming) is counted, which is right for streaming.

use crate::detector::{emptied_vec, ms, Connection, Detector, Reusable, Seat, Segment, Slots};
use crate::detectors::server_think_time::MIN_THINK_NS;
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::limits::{Limit, ETHERNET_MSS, LAG_NOISE_NS};
use tcpwhy_track::{SegmentKinds, Side, Vantage};

use crate::catalogue::Entry;

/// `app.limited` in the catalogue (crate::catalogue).
pub const APP_LIMITED: Entry = Entry {
    id: "app.limited",
    title: "application-limited",
    meaning:
        "not TCP: the sender had room in its windows (often everything acknowledged) and nothing to send",
    fix_goes_to: "the application",
    part_of: None,
    decided_by: None,
    judge: None,
};

/// Gaps shorter than this (after the vantage correction) are scheduling, ACK processing
/// and timestamp noise; the same bound as `app.server_think_time`.
pub const MIN_GAP_NS: u64 = MIN_THINK_NS;
/// Silences longer than this are pauses between transfers, not a transfer held back.
pub const MAX_GAP_NS: u64 = 1_000_000_000;
/// At least this many open-window gaps: one alone is a hiccup, not an application rate.
pub const MIN_GAPS: usize = 2;
/// The data sent after a pause must be at least this (two full 1448-byte segments): a
/// transfer held back, not keystrokes or small interactive messages, whose "pauses" are
/// a person's or a protocol's turn-taking.
pub const MIN_BURST_BYTES: u64 = 2 * tcpwhy_track::model::ETHERNET_TIMESTAMPS_MSS;
/// One segment on Ethernet with timestamps (1500 − 40 − 12): what an ACK must cover to
/// free a packet of cwnd when the capture shows the sender's TSO super-segments (a
/// 64 KB "segment" at the sender is 45 packets to cwnd).
const ETHERNET_SEGMENT: u64 = ETHERNET_MSS - 12;
/// Gaps remembered per direction of a connection.
const MAX_GAPS: usize = 4096;
/// Gaps cited as evidence (two lines each), the longest ones.
const CITED_GAPS: usize = 5;

/// Whether the capture sits at `sender`'s end: its capture-to-sender round trip (the
/// handshake's leg: SYN → SYN/ACK for the server, SYN/ACK → ACK for the client) is below
/// the tracker's `LAG_NOISE_NS`. Elsewhere the data that arrives after an ACK may have
/// left the sender before the ACK reached it, and an error of a millisecond in that
/// round trip (the handshake's leg against a later, shorter RTT) would turn ACK-clocked
/// data into a "pause" ended by the next write: pauses with data in flight are not judged
/// there.
fn at_sender(seg: &Segment<'_>, sender: Side) -> bool {
    seg.ev
        .conn
        .handshake_leg_to(sender)
        .is_some_and(|ns| ns < LAG_NOISE_NS)
}

/// One pause of the sender with room in its windows and nothing sent.
#[derive(Copy, Clone, Debug)]
struct Gap {
    ack_frame: u64,
    ack_ts: Timestamp,
    window_bytes: u64,
    /// The sender's data still unacknowledged at that ACK (0: all of it acknowledged).
    in_flight: u64,
    data_frame: u64,
    data_ts: Timestamp,
    /// New data the sender sent after the pause, until its next drain.
    burst_bytes: u64,
    /// New data it sent at once after the pause: until its first silence of half the
    /// pause or more (`Dir::prompt`).
    prompt_bytes: u64,
    /// For a pause with data in flight: the end of that flight (the highest byte sent
    /// before the pause ended), and once the ACK of it came, how long the path could
    /// have idled before the new data reached the point where the old left it
    /// ([`path_idle_ns`]).
    flight_end: u64,
    path_idle_ns: Option<u64>,
    /// The capture point's round trip to the sender when the data came
    /// (`DirModel::round_trip_ns`).
    round_trip_ns: Option<u64>,
}

/// How long a path could have gone without this sender's data during a pause with data
/// in flight: the flight's last byte left the path's bottleneck no sooner than one
/// minimum RTT's return half before its ACK, and the data that ended the pause reached
/// the bottleneck no later than one forward half after it left, so the bottleneck idled
/// at most `data + min RTT − ACK of the flight` (zero when that ACK came later). A
/// pause its own queue spans (less than `MIN_GAP_NS` of possible idling) is the
/// sender's pacing or cwnd behind a standing queue, not a missing write: a sender with
/// nothing to write lets the path drain (sweep s11-000: BBR paced 17 KB slots every
/// 7–9 ms at 18 Mbit/s into a 599-packet FIFO, and each slot's data were ACKed 8 ms
/// after the next slot left, on a 3.5 ms path). A pause that passes is counted whole,
/// as every pause is: the time the sender waited with room (the bottleneck's idle time
/// is shorter by the flight's own serialization, a paced writer's 3–7 ms).
fn path_idle_ns(data_ts: Timestamp, min_rtt_ns: u64, flight_acked: Timestamp) -> u64 {
    data_ts
        .elapsed_since(flight_acked)
        .saturating_add(min_rtt_ns)
        .saturating_sub(flight_acked.elapsed_since(data_ts))
}

impl Gap {
    fn raw_ns(&self) -> u64 {
        self.data_ts.elapsed_since(self.ack_ts)
    }
}

/// The ACK that opened a pause.
#[derive(Clone, Copy)]
struct Drained {
    frame: u64,
    ts: Timestamp,
    /// The window it advertised.
    window_bytes: u64,
    /// Bytes still unacknowledged (0 when it covered everything sent).
    in_flight: u64,
    /// It reopened a window that had closed on the sender (no room for a burst after
    /// everything sent was acknowledged).
    reopened: bool,
    /// Its TSval (the newest its sender had sent), when timestamps are on.
    tsval: Option<u32>,
}

/// One direction's state: `[client → server, server → client]`.
#[derive(Default)]
struct Dir {
    /// End of the highest new data sent (relative sequence number).
    highest: Option<u64>,
    /// The ACK that opened the pause.
    drained: Option<Drained>,
    /// Highest cumulative ACK of this direction's data, and the window that ACK
    /// advertised.
    acked: u64,
    acked_window: u64,
    /// The largest segment this direction sent.
    largest_segment: u64,
    /// When the last ACK that advanced `acked` was seen, and the shortest time from such
    /// an ACK to this direction's next new data: the sender's reaction as the capture
    /// sees it (microseconds for Linux at its own interface).
    acked_ts: Option<Timestamp>,
    min_reaction_ns: Option<u64>,
    /// The highest byte sent when this direction last retransmitted (RFC 6582's
    /// `recover`): until the ACK passes it, the sender is in loss recovery and its cwnd
    /// is being reduced (PRR, RFC 6937), so a freed slot is no proof of room.
    recover: Option<u64>,
    /// When the peer's latest ACK of this direction's data was seen (any ACK: one that
    /// frees memory or room need not advance the window's right edge).
    last_ack_ts: Option<Timestamp>,
    /// The peer sent data since `drained`.
    peer_spoke: bool,
    bytes: u64,
    first_data: Option<Timestamp>,
    last_data: Option<Timestamp>,
    gaps: Vec<Gap>,
    /// The gap whose burst is being sent.
    in_burst: Option<usize>,
    /// The first gap whose flight's ACK has not come yet (`Gap::path_idle_ns`).
    unsettled: usize,
    /// When the latest ACK that advanced `acked` was seen.
    advanced_ts: Option<Timestamp>,
    /// The latest new data filled the peer's window to its edge (`Limit::Rwnd` or
    /// `ZeroWindow`): the ACK of it that opens room releases a window-limited sender.
    at_edge: bool,
    /// The smallest RTT sample of this direction's data (data → its ACK).
    min_rtt_ns: Option<u64>,
    /// The gap whose prompt burst is being sent, and when its latest data left.
    prompt: Option<(usize, Timestamp)>,
    /// The window of the peer's latest ACK of this direction's data (any ACK: it sets
    /// the sender's send window, tcp_ack_update_window).
    last_ack_window: u64,
    /// With the window scale unknown (the snaplen cut the SYNs' options, issue 12 class
    /// 8) the ACKs' windows are raw fields: the smallest raw window after which this
    /// direction had a burst ([`MIN_BURST_BYTES`]) or more in flight beyond the ACK. The
    /// sender never sends past the ACK's right edge, so that window, scaled, held a
    /// burst; any raw window at least as large does too (one shift per direction, fixed
    /// at the handshake, RFC 7323 §2.3).
    burst_window_raw: Option<u64>,
}

impl Dir {
    /// Whether a window the peer advertised leaves room for a burst: in bytes, or with
    /// the scale unknown, as proven by [`Dir::burst_window_raw`] (a raw 63 can be 8,064 B
    /// at scale 7; sweep s11-016 at snaplen 64: a writer pausing 54 ms of every 64 ms,
    /// with the client's raw window 63–80 throughout, was never judged).
    fn has_room(&self, window: u64, scale_unknown: bool) -> bool {
        window >= MIN_BURST_BYTES
            || (scale_unknown && self.burst_window_raw.is_some_and(|w| window >= w))
    }
}

impl Reusable for [Dir; 2] {
    fn empty(&mut self) {
        for d in self {
            *d = Dir {
                gaps: emptied_vec(&mut d.gaps),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct AppLimited {
    conns: Slots<[Dir; 2]>,
}

impl Detector for AppLimited {
    // Judges pauses between data.
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let dirs = self.conns.get_or_default(seg);
        let (me, peer) = (ev.sender(), ev.receiver());
        let scale_unknown = ev.conn.dirs.iter().any(|m| m.syn.options().is_none());
        // This segment as the peer's ACK of the other direction's data.
        if let (Some(ack), Some(high)) = (ev.rel_ack, dirs[peer].highest) {
            let d = &mut dirs[peer];
            // The pause starts when everything is acknowledged and the window is open
            // (a window update after a nearly closed window restarts it: until then the
            // sender was held by the receiver, `rwnd.*`).
            let closed = d
                .drained
                .is_some_and(|p| !d.has_room(p.window_bytes, scale_unknown));
            if d.recover.is_some_and(|r| ack >= r) {
                d.recover = None;
            }
            // A pause opened with data in flight (below) gives way to the ACK of
            // everything: the conservative start, as before such pauses were judged.
            let in_flight_pause = d.drained.is_some_and(|p| p.in_flight > 0);
            if ack >= high && (d.drained.is_none() || closed || in_flight_pause) {
                d.drained = Some(Drained {
                    frame: seg.frame,
                    ts: seg.ts,
                    window_bytes: ev.window_bytes,
                    in_flight: 0,
                    reopened: closed || d.at_edge,
                    tsval: ev.conn.dirs[me].tsval_max,
                });
                d.peer_spoke = false;
                d.in_burst = None;
            } else if at_sender(seg, peer)
                && ack < high
                && d.drained.is_none()
                && d.recover.is_none()
                && d.largest_segment > 0
                && ack
                    >= d.acked
                        .saturating_add(d.largest_segment.min(ETHERNET_SEGMENT))
                && (ack.saturating_add(ev.window_bytes) >= high.saturating_add(MIN_BURST_BYTES)
                    || (ack >= d.acked.saturating_add(MIN_BURST_BYTES)
                        && ev.window_bytes >= d.acked_window))
            {
                // Or with data still in flight: an ACK that advanced snd_una by a
                // segment or more outside loss recovery freed room for one in cwnd
                // (packets_in_flight fell and RFC 5681 never shrinks cwnd on such an ACK;
                // RFC 6582's `recover` bounds the recovery), and the peer's window has
                // room for a burst (two segments) beyond the highest byte sent: seen
                // directly, or, when the snaplen cut the window scale, because the ACK
                // moved the right edge that far (it advanced by a burst with a raw
                // window no smaller than the last one: the shift is the same, and the
                // room before it was never negative). One segment of room is not
                // enough: a sender may wait for more (sender-side SWS avoidance, RFC
                // 9293 §3.8.6.2.1; tcp_tso_should_defer) — tcptrace-dsack.pcap frame
                // 405 opens 2,444 B and the sender waits 99 ms for the next ACK. A
                // sender with data queued sends at once (tcp_ack → tcp_data_snd_check);
                // one that stays silent until a later moment that is no ACK had nothing
                // to send: Linux's `tcp_rate_check_app_limited` (net/ipv4/tcp_rate.c:
                // less than one MSS unsent, flight below cwnd, at the application's next
                // write). That is a paced application whose writes are closer than one
                // RTT (sweep s3-024: 5,120 B every 59 ms at 293 ms; s3-048: 20 KB every
                // 96 ms at 113 ms): its flight never empties. Only at the sender (see
                // `at_sender`).
                d.drained = Some(Drained {
                    frame: seg.frame,
                    ts: seg.ts,
                    window_bytes: ev.window_bytes,
                    in_flight: high - ack,
                    reopened: false,
                    tsval: ev.conn.dirs[me].tsval_max,
                });
                d.peer_spoke = false;
            }
            // The flight's ACK, when it is not one a receiver may delay: an ACK of two
            // full segments or more leaves at once (__tcp_ack_snd_check: more than one
            // full-sized segment unacknowledged), one of less may wait for the
            // delayed-ACK timer (40 ms and more), which would hide the path's idling
            // (the lab's app-limited: a write's odd last segment, ACKed 40 ms late).
            // For such a one the ACK before it stands in: it did not cover the flight's
            // last data, so it left the receiver before that data arrived, and less
            // than two segments were still to cross the path.
            let segment = d.largest_segment.clamp(1, ETHERNET_SEGMENT);
            let prompt = ack >= d.acked.saturating_add(2 * segment);
            if let Some((_, rtt)) = ev.ack_rtt {
                d.min_rtt_ns = Some(d.min_rtt_ns.map_or(rtt, |m| m.min(rtt)));
            }
            let flight_acked = if prompt { Some(seg.ts) } else { d.advanced_ts };
            while let Some(g) = d.gaps.get_mut(d.unsettled) {
                if g.in_flight > 0 {
                    if ack < g.flight_end {
                        break;
                    }
                    // The path's RTT without a queue, as far as this data's ACKs told
                    // (the model's smallest sample may be the peer's own reaction).
                    let min_rtt = d.min_rtt_ns.unwrap_or(0);
                    g.path_idle_ns = flight_acked.map(|t| path_idle_ns(g.data_ts, min_rtt, t));
                }
                d.unsettled += 1;
            }
            if ack > d.acked {
                d.advanced_ts = Some(seg.ts);
            }
            d.last_ack_ts = Some(seg.ts);
            d.last_ack_window = ev.window_bytes;
            if ack > d.acked || d.acked_window == 0 {
                d.acked_window = ev.window_bytes;
                d.acked_ts = Some(seg.ts);
            }
            d.acked = d.acked.max(ack);
        }
        if ev.payload_len == 0 {
            return;
        }
        dirs[peer].peer_spoke = true;
        let d = &mut dirs[me];
        if ev.kinds.has(SegmentKinds::RETRANSMISSION) {
            d.recover = d.highest;
            // A retransmission is not the application's write: the pause, if any, was
            // the loss's (RTO, TLP), not the application's.
            if d.drained.is_some_and(|p| p.in_flight > 0) {
                d.drained = None;
            }
        }
        if !ev.kinds.has(SegmentKinds::NEW_DATA) {
            return;
        }
        // The data that leaves at once after a pause: a silence of half the pause ends it.
        if let Some((i, last)) = d.prompt {
            match d.gaps.get_mut(i) {
                Some(g) if seg.ts.elapsed_since(last) < g.raw_ns() / 2 => {
                    g.prompt_bytes += u64::from(ev.payload_len);
                    d.prompt = Some((i, seg.ts));
                }
                _ => d.prompt = None,
            }
        }
        if let Some(Drained {
            frame,
            ts,
            window_bytes,
            in_flight,
            reopened,
            tsval,
        }) = d.drained.take()
        {
            // A pause with data in flight is kept only when it lasted: the data that
            // follows an ACK at once is the ACK's clock, not a write (and keeping every
            // one would fill `gaps` with microsecond pauses).
            // And the data that ends it must continue the highest byte seen: data that
            // starts beyond it was sent during the "pause" and not captured
            // (tcptrace-ipv6-ftp-nasa.pcap stream 2, frame 207 → 208: 120 KB missing),
            // whether or not all the data seen was acknowledged (sweep s71-034 at the
            // router: the segment at 868,801 held 19 ms upstream of the tap, the client
            // ACKing everything the tap had seen, and the next data, at 870,249, 9.4 ms
            // later: the server's TSval moved 2 ms).
            let contiguous = d.highest.is_some_and(|h| ev.rel_seq <= h);
            // And with data in flight, the data that ends it must not leave on an ACK:
            // what an ACK releases is the stack's doing, not a write. tcp_ack sends what
            // the ACK let through (tcp_data_snd_check), and frees the memory its data
            // held (tcp_check_space → sk_stream_write_space), which wakes a writer
            // asleep in sk_stream_wait_memory only once a third of the send buffer is
            // free: a back-to-back writer of one-MSS writes on a small buffer
            // (sweep s6-072: 1,448 B writes, 32 KB SO_SNDBUF, 162 "pauses" of up to
            // 98 ms, each ended 54 µs after an ACK), or a window that opened
            // (s4-064: data 4 µs after the ACK). A paced application's write comes at
            // its own time; one that happens to follow an ACK within the sender's
            // reaction is lost, which only lowers the cost.
            let on_ack = in_flight > 0
                && d.last_ack_ts
                    .is_some_and(|t| seg.ts.elapsed_since(t) < LAG_NOISE_NS);
            let lasted = contiguous
                && (in_flight == 0 || (!on_ack && seg.ts.elapsed_since(ts) >= MIN_GAP_NS));
            // (Room in the peer's window: all acknowledged with a window of a burst, or
            // the right edge moved by a segment, above.)
            let room = in_flight > 0 || d.has_room(window_bytes, scale_unknown);
            // A pause that began when the receiver reopened a window that had closed on
            // the sender is the window's release: Linux sends what is queued on that
            // ACK (tcp_ack → tcp_data_snd_check), so the data that follows answers it,
            // and only at the sender is the answer's timing seen exactly. Elsewhere a
            // late answer is the path's jitter as often as an idle application: sweep
            // s11-029's client (a slow reader at 32 ms RTT) saw the reply 26 ms "late"
            // because the update itself took 38 ms to reach the sender instead of 16;
            // s12-085's client, 9.6 ms after a zero window reopened, because the data
            // took 39 ms on a 29 ms path (they left 20 µs after the update arrived).
            let judged = !reopened || at_sender(seg, me);
            // And away from the sender the data must echo that ACK (RFC 7323 §4.3: its
            // TSecr is the newest TSval the sender had received; Linux's
            // tcp_store_ts_recent): data that echo an older one left before the ACK
            // reached the sender, answering an earlier ACK on a path slower than the
            // capture point's estimate of it (sweep s12-087's router, a loaded machine:
            // frame 268 echoes the client's TSval of 12 ms before the drained ACK 267,
            // and arrived 9.6 ms after it on a 3.7 ms path). At the sender the ACK's
            // arrival is seen. (Stacks differ in which ACKs update TS.Recent:
            // sharkfest20-trace3's client, captured without its handshake so not known
            // to be at the sender, echoes the ACK before the one that drained it after
            // 11 of its 264 pauses, 74 ms of 33 s, which are no longer counted.)
            let echoed = at_sender(seg, me)
                || match (tsval, ev.conn.dirs[me].tsecr) {
                    (Some(a), Some(e)) => e.wrapping_sub(a) as i32 >= 0,
                    _ => true,
                };
            if !d.peer_spoke && lasted && room && judged && echoed && d.gaps.len() < MAX_GAPS {
                d.gaps.push(Gap {
                    ack_frame: frame,
                    ack_ts: ts,
                    window_bytes,
                    in_flight,
                    data_frame: seg.frame,
                    data_ts: seg.ts,
                    burst_bytes: 0,
                    prompt_bytes: u64::from(ev.payload_len),
                    flight_end: d.highest.unwrap_or(0),
                    path_idle_ns: None,
                    round_trip_ns: ev.conn.dirs[me].round_trip_ns,
                });
                d.in_burst = Some(d.gaps.len() - 1);
                d.prompt = Some((d.gaps.len() - 1, seg.ts));
            }
        }
        let end = ev.rel_seq + u64::from(ev.payload_len);
        // With the window scale unknown the tracker cannot place the edge; the data that
        // ends exactly at the latest ACK plus its raw window shifted by some scale (0–14,
        // RFC 7323 §2.3) stopped there (sweep s11-029 at snaplen 64: 17,148 B past ACK
        // 349,871 = raw window 8,574 << 1, then 71.8 ms of "pause" that was the path's
        // jitter on the window update's round trip).
        d.at_edge = matches!(ev.limit, Limit::Rwnd | Limit::ZeroWindow)
            || (scale_unknown
                && d.last_ack_window > 0
                && (0..=14).any(|s| d.acked.saturating_add(d.last_ack_window << s) == end));
        d.largest_segment = d.largest_segment.max(u64::from(ev.payload_len));
        if let Some(t) = d.acked_ts.take() {
            let r = seg.ts.elapsed_since(t);
            d.min_reaction_ns = Some(d.min_reaction_ns.map_or(r, |m| m.min(r)));
        }
        if let Some(g) = d.in_burst.and_then(|i| d.gaps.get_mut(i)) {
            g.burst_bytes += u64::from(ev.payload_len);
        }
        if scale_unknown
            && d.last_ack_ts.is_some()
            && end.saturating_sub(d.acked) >= MIN_BURST_BYTES
        {
            let w = d.last_ack_window;
            d.burst_window_raw = Some(d.burst_window_raw.map_or(w, |b| b.min(w)));
        }
        d.highest = Some(d.highest.map_or(end, |h| h.max(end)));
        d.bytes += u64::from(ev.payload_len);
        d.first_data.get_or_insert(seg.ts);
        d.last_data = Some(seg.ts);
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(dirs) = self.conns.take_reusing(conn) else {
            return;
        };
        // A send buffer named on this connection (judged before, in the registry's order)
        // explains a pause with data in flight: the writer asleep on the full buffer is
        // woken only once the ACKs have freed a third of it (tcp_check_space →
        // sk_stream_write_space), and then takes its scheduler's time to write (sweep
        // s74-080 at the server: BBR with a 35,840 B SO_SNDBUF, two "pauses" of 48 and
        // 40 ms with 65 KB in flight, each ended 2.4 ms after the ACK that had freed 45 %
        // of it; tcp_info sndbuf_limited 2,436 ms). The pauses with nothing in flight
        // stay the application's: no buffer explains them.
        let buffer_held = out
            .iter()
            .rev()
            .take_while(|f| f.stream == conn.summary.stream)
            .any(|f| f.id == FindingId::SndbufLimited);
        for (i, d) in dirs.iter().enumerate() {
            let sender_is_server = i == 1;
            // The part of the RTT inside each measured gap, by where the capture sits
            // relative to this direction's sender.
            let at_sender = conn.seat(Side::from_index(i)) == Seat::Sender;
            // The handshake's part, for a gap whose data came before any round trip to the
            // sender was known; otherwise the round trip as of that data
            // (`DirModel::round_trip_ns`: the recent echoes' shortest), which follows a
            // queue or a path that changed (sweep s13-086: 31 → 287 ms mid-connection,
            // 458 ms of "pauses" at the client that were the new path; s12-072's
            // client: a 41.8 ms handshake on a 37.4 ms path, 4.4 ms too much off each
            // of 28 pauses).
            let handshake_inside = if at_sender {
                0
            } else if conn.vantage == Vantage::Middle {
                let part = if sender_is_server {
                    conn.summary.syn_to_synack_ns
                } else {
                    conn.summary.synack_to_ack_ns
                };
                part.or(conn.rtt_ns).unwrap_or(0)
            } else {
                match (conn.vantage, conn.rtt_ns) {
                    (Vantage::Client | Vantage::Server, Some(r)) if r > 0 => r,
                    _ => continue, // no handshake: cannot tell the wait from the path
                }
            };
            // Pauses with data in flight need a sender that answers ACKs at once: one
            // whose quickest answer to an ACK took a millisecond or more (a slow host, or
            // a capture point that is not really at it) spends that time on any ACK, and
            // a pause of a few of its milliseconds is its own processing, not the
            // application (tcptrace-dsack.pcap: the client sends 2–7 ms after each ACK;
            // its 21 "pauses" of 6.4–7.4 ms were that).
            let reacts_at_once = d.min_reaction_ns.is_some_and(|r| r < LAG_NOISE_NS);
            // A pause with data in flight ended by at most two segments sent at once is
            // what a pacing sender does with data queued (BBR always paces, CUBIC and
            // Reno under fq): tcp_tso_autosize sends max(the pacing rate's 1 ms,
            // tcp_min_tso_segs = 2 segments) per slot, so its slots are 5 ms or more
            // apart only when the rate is below 2 segments per 5 ms (≈ 4.6 Mbit/s), and
            // then each slot is those 2 segments (BBR: 1 below 1.2 Mbit/s,
            // bbr_min_tso_segs). BBR's STARTUP at a 200 ms RTT paces its first rounds
            // so (sweep s2-005, s2-056, s3-042, s4-011: 2,896 B every 8–13 ms, queued
            // data, no write missing). An application's write leaves whole (or paced
            // faster than its pauses); one of two segments or less, with data in flight,
            // cannot be told from the pacing timer.
            let segment = d.largest_segment.clamp(1, ETHERNET_SEGMENT);
            let mut kept: Vec<(Gap, u64)> = d
                .gaps
                .iter()
                .filter(|g| g.in_flight == 0 || (reacts_at_once && !buffer_held))
                .filter(|g| g.in_flight == 0 || g.prompt_bytes > 2 * segment)
                .filter(|g| g.raw_ns() <= MAX_GAP_NS && g.burst_bytes >= MIN_BURST_BYTES)
                .filter(|g| g.path_idle_ns.is_none_or(|idle| idle >= MIN_GAP_NS))
                .map(|g| {
                    let inside = if at_sender {
                        0
                    } else {
                        g.round_trip_ns
                            .filter(|&r| r > 0)
                            .unwrap_or(handshake_inside)
                    };
                    (*g, g.raw_ns().saturating_sub(inside))
                })
                .filter(|&(_, open)| open >= MIN_GAP_NS)
                .collect();
            if kept.len() < MIN_GAPS {
                continue;
            }
            let mut f = conn.finding(FindingId::AppLimited);
            f.cost_ns = kept.iter().map(|k| k.1).sum();
            f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
            let longest = kept.iter().map(|k| k.1).max().unwrap_or(0);
            let (sender, receiver) = if sender_is_server {
                ("server", "client")
            } else {
                ("client", "server")
            };
            let span = match (d.first_data, d.last_data) {
                (Some(a), Some(b)) => b.elapsed_since(a),
                _ => 0,
            };
            let rate = if span > 0 {
                format!(
                    " It sent {} B in {} (≈ {:.0} kB/s): that is the application's rate.",
                    d.bytes,
                    ms(span),
                    d.bytes as f64 / (span as f64 / 1e9) / 1e3
                )
            } else {
                String::new()
            };
            let inside = kept.iter().map(|(g, open)| g.raw_ns() - open);
            let (lo, hi) = (inside.clone().min().unwrap_or(0), inside.max().unwrap_or(0));
            let rtt_note = if hi == 0 {
                String::new()
            } else if ms(lo) == ms(hi) {
                format!(
                    " (each gap seen here minus the {} of path it contains)",
                    ms(hi)
                )
            } else {
                format!(
                    " (each gap seen here minus the {}–{} of path it contains, the round \
                     trip to the {sender} as it was then)",
                    ms(lo),
                    ms(hi)
                )
            };
            let held = if kept.iter().any(|k| k.0.in_flight > 0) {
                "room in its window (ACKs had freed it; some pauses with data still in \
                 flight, as a paced writer's whose writes are closer than one RTT)"
            } else {
                "all its data acknowledged and an open window"
            };
            f.explanation = format!(
                "The {sender} had {held}, yet sent \
                 nothing for {} in {} pause(s) in the middle of its transfer{rtt_note}, {} at \
                 most; the {receiver} had asked for nothing new. The application was not \
                 writing fast enough: this is not a TCP problem, and no TCP setting will \
                 change it.{rate}",
                ms(f.cost_ns),
                kept.len(),
                ms(longest),
            );
            kept.sort_by(|a, b| b.1.cmp(&a.1).then(a.0.ack_frame.cmp(&b.0.ack_frame)));
            kept.truncate(CITED_GAPS);
            kept.sort_by_key(|k| k.0.ack_frame);
            // With the scale unknown the window is a raw field, not bytes (issue 12
            // class 8): say so rather than print "window 80 B".
            let scale_unknown = if conn.summary.dirs.iter().any(|d| d.syn_cut) {
                Some("the snaplen cut the SYNs' options")
            } else if conn.summary.dirs.iter().any(|d| d.syn.is_none()) {
                Some("no SYN captured")
            } else {
                None
            };
            for (g, open) in &kept {
                f.cite(
                    g.ack_frame,
                    g.ack_ts,
                    if let (0, Some(why)) = (g.in_flight, scale_unknown) {
                        format!(
                            "the {receiver}'s ACK: all the {sender}'s data acknowledged, window \
                             field {} (its scale unknown: {why})",
                            g.window_bytes
                        )
                    } else if g.in_flight == 0 {
                        format!(
                            "the {receiver}'s ACK: all the {sender}'s data acknowledged, window {} B",
                            g.window_bytes
                        )
                    } else {
                        format!(
                            "the {receiver}'s ACK frees room: {} B of the {sender}'s data still \
                             in flight, the window's edge moved with it; nothing more follows",
                            g.in_flight
                        )
                    },
                );
                f.cite(
                    g.data_frame,
                    g.data_ts,
                    format!(
                        "the {sender}'s next data, {} later ({} with the window open)",
                        ms(g.raw_ns()),
                        ms(*open)
                    ),
                );
            }
            f.fix = vec![Fix {
                host: if sender_is_server {
                    Host::Server
                } else {
                    Host::Client
                },
                action: "profile the sending application: why it writes slower than the \
                         connection carries (its producer, disk or database, a rate limiter, \
                         sleeps between small writes)"
                    .into(),
            }];
            f.confidence = if at_sender {
                Confidence::High
            } else {
                Confidence::Medium
            };
            out.push(f);
        }
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}
