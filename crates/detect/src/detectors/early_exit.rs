//! `slow_start.early_exit`: a new connection leaves slow start at a small window although
//! nothing told it to — usually a small ssthresh cached from an earlier connection.
//!
//! Mechanism (Linux `tcp_metrics`, seed 02): on close, a connection's ssthresh, cwnd and
//! RTT are cached per destination unless `net.ipv4.tcp_no_metrics_save=1` (newer kernels
//! also need `tcp_no_ssthresh_metrics_save=0` for ssthresh). A new connection to the same
//! destination starts with the cached ssthresh (`tcp_init_metrics`); when it is small
//! (left by a lossy period), cwnd stops doubling at that value and grows by about one
//! segment per RTT (congestion avoidance, RFC 5681 §3.1) although nothing was lost.
//!
//! Signature, read from the response's RTT rounds (the same at both ends): the rounds
//! double from the initial window, then, at a round well below the receiver's advertised
//! window, grow by less than ×`MIN_SS_GROWTH` and keep growing slowly
//! (≤ ×`MAX_CA_GROWTH` per round on average) for at least `MIN_CA_ROUNDS` rounds, with no
//! retransmission, D-SACK or ECN echo before the switch and no RTT jump (the round before
//! the switch took at most `MAX_RTT_JUMP` × the first round's duration — a jump would be
//! HyStart's delay exit, RFC 9406). Two facts of Linux's CUBIC tell a small initial
//! ssthresh from the look-alikes:
//! - The flight was cwnd-limited after the switch: congestion avoidance grows cwnd only
//!   while `tcp_is_cwnd_limited` (`cubictcp_cong_avoid` returns first otherwise, tcp.h /
//!   tcp_cubic.c), and then by at least CUBIC's Reno-friendly rate, 3(1 − β)/(1 + β) =
//!   0.53 segment per RTT (RFC 9438 §4.3, `tcp_friendliness`). A flight held by the send
//!   buffer, the receive window or the application stays flat: the rounds' trend must
//!   grow by at least [`MIN_CA_GROWTH_SEGMENTS`] segment per round. The trend is the
//!   median of the slopes between every two rounds (Theil–Sen), which a round cut by a
//!   boundary, one still filling a send buffer or two rounds joined do not carry: read
//!   from the first and last rounds alone, a flat flight could look growing. Nor does a
//!   cwnd-limited flight shrink: cwnd falls only on a loss, ECN echo or undo
//!   (`tcp_enter_recovery`, `tcp_enter_loss`, `tcp_cwnd_reduction`;
//!   `tcp_cwnd_application_limited` only when not cwnd-limited), so no round after the
//!   exit may fall below an earlier one by more than a round boundary can move
//!   ([`ROUND_NOISE_SEGMENTS`]) before the first signal. A send buffer whose writes
//!   overshoot it (sndbuf-capped) makes rounds that rise and fall around a flat trend.
//! - HyStart did not end slow start (`hystart_update`, on by default, from a cwnd of
//!   `hystart_low_window` = 16 segments): neither its ACK-train test — the ACKs of one
//!   round spread over at least half the minimum RTT, i.e. a round whose data took
//!   ≥ RTT / 2 to pass ([`HYSTART_LOW_WINDOW_SEGMENTS`]) — nor its delay test — a round's
//!   RTT above the minimum + clamp(min / 8, 4 ms, 16 ms) (`HYSTART_DELAY_MIN`/`MAX`). At
//!   a 1 ms RTT with TSO the ACK train fires after a few rounds: slow start ends for
//!   the path, not for a cache. Below twice the round splitter's floor
//!   (`exchange::MIN_ROUND_GAP_NS`, 1 ms) the capture's rounds are not RTT rounds and
//!   nothing is judged.
//!
//! Repeatable across new connections to the same peer; an earlier connection to the
//! same peer that lost some of the server's data or its FIN and closed well (FINs both
//! ways, no RST) before this one began explains where the small ssthresh came from (both
//! raise the confidence). Only such a close updates the cache (`tcp_update_metrics`), and
//! a loss during the handshake never reaches it: `tcp_init_metrics` sets ssthresh back
//! when the handshake completes (crates/pipeline/tests/ssthresh_cache.rs).
//!
//! Cost: the rounds the response took minus the rounds it would have needed had slow
//! start continued (doubling) up to the largest round the connection reached, × RTT. A
//! conservative price: the path may carry more than that largest round.
//!
//! Fix (on the sender): `ip tcp_metrics delete ADDR` (the peer) or `ip tcp_metrics flush`;
//! `sysctl -w net.ipv4.tcp_no_metrics_save=1` to stop caching.
//!
//! Known false positives: a sender limited by its send buffer or the application whose
//! rounds happen to grow (they are flat on average, see above); HyStart exits that the
//! capture cannot show (an ACK train compressed after the capture point). A cached
//! ssthresh on a path whose rounds already span half the RTT is not claimed (HyStart
//! would have ended slow start there too). Responses that fit in a few rounds cannot
//! show the pattern and are not judged.

use crate::detector::{ms, Connection, Detector, Segment, Slots};
use crate::detectors::new_connection::MAX_PENDING;
use crate::detectors::short_lived::MAX_TRACKED;
use crate::exchange::Span;
use crate::finding::{Confidence, Finding, FindingId, Fix, Host, StreamRef};
use std::collections::HashMap;
use std::net::IpAddr;
use tcpwhy_capture::{TcpFlags, Timestamp};
use tcpwhy_track::model::ETHERNET_TIMESTAMPS_MSS;
use tcpwhy_track::SegmentKinds;

use crate::catalogue::Entry;

/// `slow_start.early_exit` in the catalogue (crate::catalogue).
pub const EARLY_EXIT: Entry = Entry {
    id: "slow_start.early_exit",
    title: "early exit from slow start",
    meaning: "a new connection stops doubling at a small window without a loss, HyStart or a send buffer, receive window or application holding the flight: usually an ssthresh cached from an earlier connection",
    fix_goes_to: "the sender: `ip tcp_metrics`, `tcp_no_metrics_save`",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Server),
    judge: Some(crate::host::metrics_cached_ssthresh::judge_early_exit),
};

/// Slow start at least doubles per round (RFC 5681 §3.1 with ABC); a round growing less
/// than this over the one before has left slow start (delayed ACKs give ≈ ×1.5–2).
pub const MIN_SS_GROWTH: f64 = 1.4;
/// Congestion avoidance grows by about one MSS per RTT (CUBIC a few); an average growth
/// per round above this is not congestion avoidance at these window sizes.
pub const MAX_CA_GROWTH: f64 = 1.15;
/// Full rounds after the switch needed to call the growth linear.
pub const MIN_CA_ROUNDS: usize = 4;
/// A window at or above this share of the receiver's largest advertised window may be
/// the receiver's limit (`rwnd.limited`), not an early exit.
pub const MAX_RWND_SHARE: f64 = 0.5;
/// Exit windows below this (four 1448-byte segments) are too small to tell a doubling
/// from delayed-ACK and receiver pacing noise (old stacks with an IW of 1–2 segments).
pub const MIN_EXIT_WINDOW_BYTES: u64 = 4 * ETHERNET_TIMESTAMPS_MSS;
/// A round before the switch lasting more than this × the first round's gap means the
/// RTT rose (queueing): HyStart's delay exit, a real signal.
pub const MAX_RTT_JUMP: f64 = 1.5;
/// Least growth per round of the rounds' trend after the switch, in segments, of a
/// cwnd-limited flight: half of CUBIC's slowest, its Reno-friendly 0.53 segment per RTT
/// (RFC 9438 §4.3; Reno's is 1, RFC 5681 §3.1), for the noise of round boundaries.
pub const MIN_CA_GROWTH_SEGMENTS: f64 = 0.25;
/// Segments a round boundary can move between two rounds of a cwnd-limited flight: one
/// ACK's release, two segments under delayed ACKs (RFC 1122 §4.2.3.2, Linux's quick ACK
/// aside) and as many again of slow start's growth (`tcp_slow_start` adds what was ACKed).
pub const ROUND_NOISE_SEGMENTS: u64 = 4;
/// HyStart runs only from this cwnd on (tcp_cubic.c `hystart_low_window`, default 16).
pub const HYSTART_LOW_WINDOW_SEGMENTS: u64 = 16;
/// HyStart's delay threshold: the minimum RTT / 8, clamped to [4 ms, 16 ms]
/// (tcp_cubic.c `HYSTART_DELAY_MIN`, `HYSTART_DELAY_MAX`, `HYSTART_DELAY_THRESH`).
pub const HYSTART_DELAY_MIN_NS: u64 = 4_000_000;
pub const HYSTART_DELAY_MAX_NS: u64 = 16_000_000;

#[derive(Default)]
struct Conn {
    /// Frame of the first event that legitimately ends slow start: a loss of the server's
    /// data or FIN (seen as a retransmission at the sender, a hole or duplicate ACKs at
    /// the receiver), a D-SACK or an ECN echo from the client.
    first_signal: Option<(u64, &'static str)>,
    /// Segments that showed a loss of the server's data or FIN.
    loss_signals: u64,
    /// The server's first data or FIN was seen: from then on a client's duplicate ACK of
    /// the SYN/ACK alone is about data (before, it answers a SYN/ACK sent again).
    server_sent: bool,
}

impl Conn {
    fn signal(&mut self, frame: u64, what: &'static str, loss: bool) {
        if loss {
            self.loss_signals += 1;
        }
        self.first_signal.get_or_insert((frame, what));
    }
}

/// A connection that left slow start early, waiting for `finish` to learn whether
/// other connections to the same peer did too. At most new_connection's
/// [`MAX_PENDING`] wait, each with its finding's explanation and fixes (they were
/// unbounded, one per early exit of the capture); the others are judged when they end
/// ([`EarlyExit::hold`]).
struct Pending {
    finding: Finding,
    peer: (IpAddr, IpAddr),
    start: Timestamp,
}

/// A connection's history with a peer.
struct PeerConn {
    stream: u64,
    loss_signals: u64,
    /// When the server could have cached its ssthresh: the end of a connection that
    /// finished well, FINs both ways and no RST. `tcp_update_metrics` runs only on
    /// entering TIME-WAIT or going from LAST-ACK to CLOSE (tcp_minisocks.c `tcp_time_wait`,
    /// tcp_input.c `tcp_rcv_state_process`); a reset connection (`tcp_reset`, `tcp_done`)
    /// caches nothing, and one still open has not cached yet.
    cached_at: Option<Timestamp>,
    early_exit: bool,
}

#[derive(Default)]
pub struct EarlyExit {
    conns: Slots<Conn>,
    pending: Vec<Pending>,
    peers: HashMap<(IpAddr, IpAddr), Vec<PeerConn>>,
    /// Connections in `peers`, all pairs together: at most short_lived's and idle_close's
    /// [`MAX_TRACKED`] (the bound per pair alone let a capture of many clients, each with
    /// a lossy connection, keep one record per connection without end).
    remembered: usize,
}

/// Connections remembered per peer pair for the cross-connection check: those it reads,
/// with an early exit or a loss signal (bounded memory).
const MAX_PEER_CONNS: usize = 4096;

/// What the tracker flags on the server's data as lost: a retransmission at the sender,
/// a hole before the segment at the receiver.
const LOST: u32 = SegmentKinds::RETRANSMISSION
    | SegmentKinds::OUT_OF_ORDER
    | SegmentKinds::PREVIOUS_SEGMENT_NOT_CAPTURED;

impl EarlyExit {
    /// Keeps `c` for the check across `peer`'s connections, within the bounds.
    fn remember(&mut self, peer: (IpAddr, IpAddr), c: PeerConn) {
        if self.remembered >= MAX_TRACKED {
            return;
        }
        let list = self.peers.entry(peer).or_default();
        if list.len() < MAX_PEER_CONNS {
            list.push(c);
            self.remembered += 1;
        }
    }

    /// Holds `p` to learn of the peer's later connections; beyond [`MAX_PENDING`] held,
    /// judges it at once with the connections known so far.
    fn hold(&mut self, p: Pending, out: &mut Vec<Finding>) {
        if self.pending.len() < MAX_PENDING {
            self.pending.push(p);
        } else {
            out.push(self.settle(p));
        }
    }

    /// A held finding, judged against the peer's connections known now: how many others
    /// exited early, and the latest lossy one whose ssthresh could have been cached
    /// before this one began.
    fn settle(&self, mut p: Pending) -> Finding {
        let list = self.peers.get(&p.peer).map(Vec::as_slice).unwrap_or(&[]);
        let others = list
            .iter()
            .filter(|c| c.early_exit && c.stream != p.finding.stream)
            .count();
        // The latest lossy connection whose close could have cached its ssthresh
        // before this one began.
        let lossy_before = list
            .iter()
            .filter(|c| c.loss_signals > 0 && c.cached_at.is_some_and(|t| t <= p.start))
            .max_by_key(|c| c.cached_at);
        if others > 0 {
            p.finding.explanation.push_str(&format!(
                " {others} other connection(s) to the same peer show the same early exit."
            ));
        }
        if let Some(c) = lossy_before {
            p.finding.explanation.push_str(&format!(
                " An earlier connection to this peer (stream {}) lost data ({} segment(s) \
                 show it): its reduced ssthresh is what the kernel cached when it closed.",
                StreamRef(c.stream),
                c.loss_signals
            ));
        }
        if others > 0 || lossy_before.is_some() {
            p.finding.confidence = Confidence::High;
        }
        p.finding
    }

    /// A segment that may signal a loss, picked out by [`Detector::on_segment`].
    #[inline(never)]
    fn note(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        let flags = seg.pkt.flags;
        // From the server only its data or FIN: a SYN/ACK sent again is no loss that
        // ends slow start or reaches the cache, since `tcp_init_metrics` sets ssthresh
        // back when the handshake completes ("ssthresh may have been reduced
        // unnecessarily during 3WHS").
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE)
            || (!ev.from_client && ev.payload_len == 0 && !flags.fin())
            || (ev.from_client && flags.syn())
        {
            return;
        }
        let c = self.conns.get_or_default(seg);
        if !ev.from_client {
            // Its first data or FIN, or a loss of it.
            c.server_sent = true;
            if ev.kinds.0 & LOST != 0 {
                c.signal(seg.frame, "loss", true);
            }
        } else if ev.kinds.0 & (SegmentKinds::DUP_ACK | SegmentKinds::DSACK) != 0 {
            // Duplicate ACKs or a D-SACK: of the server's data when they ACK some of it,
            // or once it has sent some; an ACK of the SYN/ACK alone repeated before that
            // answers the SYN/ACK sent again (with a D-SACK of it, `tcp_send_dupack`).
            if ev.rel_ack.is_some_and(|a| a > 1) || c.server_sent {
                c.signal(seg.frame, "duplicate ACK or D-SACK", true);
            }
        } else {
            c.signal(seg.frame, "ECN echo", false);
        }
    }
}

impl Detector for EarlyExit {
    // Judges the rounds of a response, and keeps for the peer losses of data or a FIN:
    // a connection without either has neither (see `note`).
    const JUDGES_DATALESS: bool = false;

    // Inlined into the registry's one call per segment (detectors/mod.rs).
    #[inline(always)]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.from_client {
            // Duplicate ACKs or a D-SACK, an ECN echo.
            if ev.kinds.0 & (SegmentKinds::DUP_ACK | SegmentKinds::DSACK) == 0
                && !seg.pkt.flags.has(TcpFlags::ECE)
            {
                return;
            }
        } else if ev.kinds.0 & LOST == 0
            && (ev.rel_seq > 1 || (ev.payload_len == 0 && !seg.pkt.flags.fin()))
        {
            // The server's segments the tracker does not flag, but its first data or FIN.
            return;
        }
        // Most segments returned above and touch no state (a connection never signalled
        // is the default `on_connection` assumes).
        self.note(seg);
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let st = self.conns.take(conn).unwrap_or_default();
        let [client, server] = conn.summary.endpoints;
        let peer = (server.addr, client.addr);
        let early = conn.rtt_ns.filter(|&r| r > 0).and_then(|rtt| {
            let x = conn.exchanges.first()?;
            let resp = x.response.as_ref()?;
            let rwnd = conn.summary.dirs[0].max_window_bytes?;
            // The server's segment (SMSS) from both SYNs' options, as the connection model
            // gives it (MSS comes first, so a SYN the snaplen cut still gives it).
            let segment =
                tcpwhy_track::effective_mss(conn.summary.dirs[1].syn, conn.summary.dirs[0].syn)
                    .map_or(ETHERNET_TIMESTAMPS_MSS, u64::from);
            let path = Path {
                rtt_ns: rtt,
                segment,
            };
            judge(
                &x.rounds,
                resp.bytes,
                rwnd,
                st.first_signal.map(|s| s.0),
                path,
            )
            .map(|j| (j, rtt, x.index))
        });
        // Only what `finish` reads: the others leave no trace (a capture of a million
        // short connections between 65 k host pairs kept a record of each here: 54 of
        // analyze's 351 MB peak, and 9 % of its time).
        let [up, down] = &conn.summary.dirs;
        let cached_at = (up.fin && down.fin && !up.rst && !down.rst).then_some(conn.summary.end);
        if early.is_some() || (st.loss_signals > 0 && cached_at.is_some()) {
            self.remember(
                peer,
                PeerConn {
                    stream: conn.summary.stream,
                    loss_signals: st.loss_signals,
                    cached_at,
                    early_exit: early.is_some(),
                },
            );
        }
        let Some((j, rtt, index)) = early else {
            return;
        };
        let mut f = conn.finding(FindingId::SlowStartEarlyExit);
        f.cost_ns = j.extra_rounds as u64 * rtt;
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        let r = &j.rounds;
        f.cite(
            r[0].first_frame,
            r[0].start,
            format!("response {}: first round, {} B", index + 1, r[0].bytes),
        );
        f.cite(
            r[j.exit].first_frame,
            r[j.exit].start,
            format!(
                "round {}: {} B, slow start's last doubling",
                j.exit + 1,
                r[j.exit].bytes
            ),
        );
        f.cite(
            r[j.exit + 1].first_frame,
            r[j.exit + 1].start,
            format!(
                "round {}: only {} B (×{:.2}), nothing lost before it",
                j.exit + 2,
                r[j.exit + 1].bytes,
                r[j.exit + 1].bytes as f64 / r[j.exit].bytes.max(1) as f64
            ),
        );
        let last_full = r.len() - 2;
        f.cite(
            r[last_full].first_frame,
            r[last_full].start,
            format!(
                "round {}: {} B, {} rounds later: growing by ≈ {} B per round",
                last_full + 1,
                r[last_full].bytes,
                last_full - j.exit - 1,
                j.growth_per_round
            ),
        );
        f.explanation = format!(
            "Slow start ended at a window of {} B after {} round(s), with no loss, D-SACK, ECN \
             echo or RTT rise before it and no round long enough for HyStart's ACK-train test \
             (half an RTT), and the window then grew by only ≈ {} B per round (congestion \
             avoidance, which grows only a window that limits the flight: not a send buffer, \
             receive window or application) up to {} B: the connection started with a small \
             slow-start threshold. On Linux that is a ssthresh cached from an earlier connection to the same \
             peer (tcp_metrics). The response took {} rounds of {}; continuing slow start up to \
             {} B would have taken {}.",
            r[j.exit].bytes,
            j.exit + 1,
            j.growth_per_round,
            j.max_round,
            r.len(),
            ms(rtt),
            j.max_round,
            r.len() - j.extra_rounds,
        );
        f.fix = vec![
            Fix {
                host: Host::Server,
                action: format!(
                    "ip tcp_metrics show {0}; ip tcp_metrics delete {0} (or ip tcp_metrics \
                     flush) on the sender",
                    client.addr
                ),
            },
            Fix {
                host: Host::Server,
                action: "sysctl -w net.ipv4.tcp_no_metrics_save=1 (stop caching ssthresh per \
                         destination)"
                    .into(),
            },
        ];
        f.confidence = Confidence::Medium;
        let p = Pending {
            finding: f,
            peer,
            start: conn.summary.start,
        };
        self.hold(p, out);
    }

    fn finish(&mut self, out: &mut Vec<Finding>) {
        for p in std::mem::take(&mut self.pending) {
            out.push(self.settle(p));
        }
    }

    fn absorb(&mut self, o: Self) {
        self.pending.extend(o.pending);
        // Keys first, then each one moved once (as new_connection's).
        self.pending.sort_by_cached_key(|p| p.finding.stream);
        for (peer, list) in o.peers {
            let mine = self.peers.entry(peer).or_default();
            mine.extend(list);
            // As one thread would have kept them: the first connections by stream.
            mine.sort_by_key(|c| c.stream);
            mine.truncate(MAX_PEER_CONNS);
        }
        self.remembered = self.peers.values().map(Vec::len).sum();
    }
}

/// The verdict on one response's rounds.
struct Judgement {
    rounds: Vec<Span>,
    /// Index of the last round that doubled.
    exit: usize,
    extra_rounds: usize,
    growth_per_round: u64,
    max_round: u64,
}

/// What the judgement needs of the path: its RTT (the handshake's) and the sender's
/// segment size.
#[derive(Clone, Copy)]
struct Path {
    rtt_ns: u64,
    segment: u64,
}

/// Whether `rounds` (of a response of `bytes`) show slow start ending early; `rwnd` is the
/// receiver's largest advertised window, `signal` the frame of the first loss/ECN signal.
fn judge(
    rounds: &[Span],
    bytes: u64,
    rwnd: u64,
    signal: Option<u64>,
    path: Path,
) -> Option<Judgement> {
    // Rounds are RTT rounds only when the RTT is above the splitter's floor: gaps under
    // MIN_ROUND_GAP_NS never separate rounds (exchange.rs), so at a shorter RTT a
    // "round" is a burst between scheduling pauses (1 ms RTT with TSO: 1.5–5 ms apart).
    if path.rtt_ns < 2 * crate::exchange::MIN_ROUND_GAP_NS {
        return None;
    }
    // The last round is cut by the response's end: judge only the full ones.
    let full = rounds.get(..rounds.len().checked_sub(1)?)?;
    if full.len() < 2 + MIN_CA_ROUNDS {
        return None;
    }
    // The first round that failed to double.
    let switch = (1..full.len())
        .find(|&i| (full[i].bytes as f64) < MIN_SS_GROWTH * full[i - 1].bytes as f64)?;
    let exit = switch - 1;
    if exit == 0 {
        return None; // no doubling seen: nothing shows the sender was in slow start
    }
    if full[exit].bytes < MIN_EXIT_WINDOW_BYTES {
        return None;
    }
    let ca = &full[exit..];
    if ca.len() < MIN_CA_ROUNDS + 1 {
        return None;
    }
    // Linear-looking growth after the switch, read from the trend of all its rounds: the
    // first and the last alone are each off by as much as a round boundary moves, and
    // one of them a round still filling the send buffer or two rounds the splitter could
    // not part made a flat flight look growing (sndbuf-capped: 27 segments after the
    // switch, 29 for 40 rounds, one of 58 at the end).
    let trend = Trend::of(ca);
    let steps = (ca.len() - 1) as f64;
    let (w0, w1) = (trend.at(0.0), trend.at(steps));
    if w1 > w0 * MAX_CA_GROWTH.powf(steps) || w1 < w0 * 0.8 {
        return None;
    }
    // cwnd-limited: a congestion window in avoidance grows; a send buffer, receive
    // window or application holding the flight leaves the rounds flat.
    if trend.per_round < MIN_CA_GROWTH_SEGMENTS * path.segment as f64 {
        return None;
    }
    // cwnd-limited, again: cwnd never falls without a loss, ECN echo or undo
    // (tcp_enter_recovery, tcp_enter_loss, tcp_cwnd_reduction; tcp_cwnd_application_limited
    // only while the flight is not cwnd-limited), and each ACKed segment frees its slot, so
    // a cwnd-limited round is at least the one before it. A round boundary in the capture
    // moves at most one ACK's release: two segments (delayed ACK) and, in slow start, as
    // many again of growth ([`ROUND_NOISE_SEGMENTS`]). A round after the exit smaller than
    // an earlier one by more, with nothing signalled before it, was held by something else
    // (the send buffer: sk_stream_memory_free stops the writer, tcp_write_xmit has no skb).
    let noise = ROUND_NOISE_SEGMENTS.saturating_mul(path.segment);
    let mut largest = 0u64;
    for r in ca {
        if signal.is_some_and(|fr| fr <= r.first_frame) {
            break; // a loss or ECN echo may cut cwnd from here on
        }
        if r.bytes.saturating_add(noise) < largest {
            return None;
        }
        largest = largest.max(r.bytes);
    }
    // Small: well below what the receiver offered.
    if full[exit].bytes as f64 >= MAX_RWND_SHARE * rwnd as f64 {
        return None;
    }
    // Nothing that legitimately ends slow start before the switch.
    if signal.is_some_and(|fr| fr <= full[switch].first_frame) {
        return None;
    }
    // No RTT rise before the switch (HyStart's delay exit): the round gaps stay flat,
    // within HyStart's own delay threshold too.
    let gap = |i: usize| full[i + 1].start.elapsed_since(full[i].start) as f64;
    let first_gap = gap(0);
    let hystart_delay = (first_gap as u64 / 8).clamp(HYSTART_DELAY_MIN_NS, HYSTART_DELAY_MAX_NS);
    let rise = (MAX_RTT_JUMP * first_gap).min(first_gap + hystart_delay as f64);
    if (0..switch).any(|i| gap(i) > rise) {
        return None;
    }
    // HyStart's ACK train: a round of at least its low window whose data took half an
    // RTT to pass (the ACKs come back as spread) ended slow start for the path.
    let hystart_window = HYSTART_LOW_WINDOW_SEGMENTS.saturating_mul(path.segment);
    if full[..=switch]
        .iter()
        .any(|r| r.bytes >= hystart_window && r.duration_ns().saturating_mul(2) >= path.rtt_ns)
    {
        return None;
    }
    // The largest full round: the last one is cut by the response's end, or holds every
    // segment after MAX_ROUNDS.
    let max_round = full.iter().map(|r| r.bytes).max()?;
    let needed = rounds_capped(rounds[0].bytes, max_round, bytes);
    let extra = rounds.len().checked_sub(needed).filter(|&e| e > 0)?;
    Some(Judgement {
        rounds: rounds.to_vec(),
        exit,
        extra_rounds: extra,
        growth_per_round: trend.per_round.max(0.0) as u64,
        max_round,
    })
}

/// The straight line through rounds' sizes that outliers do not move (Theil–Sen): its
/// slope is the median of the slopes between every two rounds, its intercept the median
/// of what each round leaves. Up to 29 % of the rounds can be anything — a round cut by
/// a boundary, two rounds joined — without carrying the line.
struct Trend {
    at_zero: f64,
    per_round: f64,
}

impl Trend {
    /// At most [`crate::exchange::MAX_ROUNDS`] rounds: 2,016 slopes.
    fn of(rounds: &[Span]) -> Trend {
        let y = |i: usize| rounds[i].bytes as f64;
        let mut slopes: Vec<f64> = (0..rounds.len())
            .flat_map(|i| ((i + 1)..rounds.len()).map(move |j| (y(j) - y(i)) / (j - i) as f64))
            .collect();
        let per_round = median(&mut slopes);
        let mut rest: Vec<f64> = (0..rounds.len())
            .map(|i| y(i) - per_round * i as f64)
            .collect();
        Trend {
            at_zero: median(&mut rest),
            per_round,
        }
    }

    fn at(&self, round: f64) -> f64 {
        self.at_zero + self.per_round * round
    }
}

/// The median of `v` (0 when empty): the mean of the two middle values of an even count.
fn median(v: &mut [f64]) -> f64 {
    if v.is_empty() {
        return 0.0;
    }
    v.sort_by(f64::total_cmp);
    let m = v.len() / 2;
    if v.len() % 2 == 1 {
        v[m]
    } else {
        (v[m - 1] + v[m]) / 2.0
    }
}

/// Rounds to send `bytes` from a first window of `first`, doubling up to `cap`.
pub fn rounds_capped(first: u64, cap: u64, bytes: u64) -> usize {
    let (mut w, mut sent, mut n) = (first.max(1), 0u64, 0usize);
    while sent < bytes && n < crate::exchange::MAX_ROUNDS {
        sent = sent.saturating_add(w);
        w = w.saturating_mul(2).min(cap.max(first));
        n += 1;
    }
    n
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Early exits wait for the end of the capture up to [`MAX_PENDING`]; the next is
    /// judged when it ends, against the peer's connections known then (here one other
    /// early exit: its finding says so at once).
    /// Connections remembered for the check across a peer's connections: at most
    /// [`MAX_PEER_CONNS`] a pair and [`MAX_TRACKED`] in all.
    #[test]
    fn connections_remembered_are_bounded_per_pair_and_in_all() {
        let peer = |a: u8| (IpAddr::from([10, 0, 1, a]), IpAddr::from([10, 0, 0, 1]));
        let conn = |stream| PeerConn {
            stream,
            loss_signals: 1,
            cached_at: None,
            early_exit: false,
        };
        let mut d = EarlyExit::default();
        for s in 0..MAX_PEER_CONNS as u64 + 5 {
            d.remember(peer(1), conn(s));
        }
        assert_eq!(d.peers[&peer(1)].len(), MAX_PEER_CONNS);
        assert_eq!(d.remembered, MAX_PEER_CONNS);
        // Another pair, one short of the bound in all: one more is kept, then none.
        d.remembered = MAX_TRACKED - 1;
        d.remember(peer(2), conn(1));
        d.remember(peer(2), conn(2));
        d.remember(peer(3), conn(3));
        assert_eq!(d.peers[&peer(2)].len(), 1);
        assert!(!d.peers.contains_key(&peer(3)));
        assert_eq!(d.remembered, MAX_TRACKED);
    }

    #[test]
    fn early_exits_held_are_bounded() {
        let ep = |a: u8| tcpwhy_track::Endpoint {
            addr: IpAddr::from([10, 0, 0, a]),
            port: 80,
        };
        let pending = |stream: u64| Pending {
            finding: Finding::new(
                FindingId::SlowStartEarlyExit,
                stream,
                [ep(1), ep(2)],
                tcpwhy_track::Vantage::Server,
            ),
            peer: (ep(2).addr, ep(1).addr),
            start: Timestamp::from_nanos(0),
        };
        let mut d = EarlyExit::default();
        d.peers.insert(
            (ep(2).addr, ep(1).addr),
            vec![PeerConn {
                stream: 7,
                loss_signals: 0,
                cached_at: None,
                early_exit: true,
            }],
        );
        let mut out = Vec::new();
        for s in 0..MAX_PENDING as u64 {
            d.hold(pending(s), &mut out);
        }
        assert!(out.is_empty());
        assert_eq!(d.pending.len(), MAX_PENDING);
        d.hold(pending(MAX_PENDING as u64), &mut out);
        assert_eq!(d.pending.len(), MAX_PENDING);
        assert_eq!(out.len(), 1);
        assert_eq!(out[0].stream, MAX_PENDING as u64);
        assert!(
            out[0]
                .explanation
                .contains("1 other connection(s) to the same peer show the same early exit"),
            "{}",
            out[0].explanation
        );
    }

    /// 512 segments from IW 10 doubling up to 46: 10+20+40 = 70, then 442 / 46 → 10 more
    /// rounds (9 × 46 = 414 < 442) = 13.
    /// Rounds of `segs` × 1448 B starting one `rtt_ms` apart, each sent over `dur_us`.
    fn rounds(segs: &[u64], rtt_ms: i64, dur_us: i64) -> Vec<Span> {
        let mut frame = 1;
        segs.iter()
            .enumerate()
            .map(|(i, &n)| {
                let start = Timestamp::from_nanos(i as i64 * rtt_ms * 1_000_000);
                let r = Span {
                    first_frame: frame,
                    last_frame: frame + n - 1,
                    start,
                    end: Timestamp::from_nanos(start.nanos() + dur_us * 1000),
                    bytes: n * 1448,
                    segments: n as u32,
                    max_gap_ns: 0,
                };
                frame += n;
                r
            })
            .collect()
    }

    fn path(rtt_ms: u64) -> Path {
        Path {
            rtt_ns: rtt_ms * 1_000_000,
            segment: 1448,
        }
    }

    /// cached-ssthresh/server.pcap, stream 1 (the lab's 25 ms RTT, ssthresh 24 cached):
    /// 10, 20, then ≈ 1.4 segments more per round, each round a burst.
    const CACHED: &[u64] = &[
        10, 20, 24, 26, 27, 27, 30, 30, 33, 32, 36, 38, 39, 40, 43, 46, 11,
    ];

    #[test]
    fn a_cached_ssthresh_grows_in_congestion_avoidance() {
        let r = rounds(CACHED, 25, 300);
        let bytes = CACHED.iter().sum::<u64>() * 1448;
        let j = judge(&r, bytes, 3 << 20, None, path(25)).expect("early exit");
        assert_eq!((j.exit, j.max_round), (1, 46 * 1448));
    }

    /// sndbuf-capped (issue 12 class 3a): the send buffer's cap holds the flight at
    /// ≈ 25 segments after the doubling; cwnd is not the limit, so the rounds stay flat.
    #[test]
    fn a_flat_flight_held_by_the_send_buffer_is_not_an_early_exit() {
        let segs = [10, 20, 30, 29, 29, 25, 28, 29, 27, 29, 29, 12];
        let bytes = segs.iter().sum::<u64>() * 1448;
        assert!(judge(&rounds(&segs, 150, 300), bytes, 3 << 20, None, path(150)).is_none());
    }

    /// sndbuf-capped as twelve runs on 2026-12-01 gave it (client captures): the flight
    /// rises from 20 segments through a round still filling the buffer (23–27) to ≈ 29,
    /// where it stays, single rounds 2–6 above or below. Read from its ends (the exit
    /// round's 20 to a last full round of 33: 0.38 segment per round) it grew like
    /// congestion avoidance, and a clean-clone CI run at 9ce4516 named an early exit "at
    /// 28960 B after 2 rounds"; its trend is flat.
    #[test]
    fn a_flat_flight_with_a_high_last_round_is_not_an_early_exit() {
        let segs: Vec<u64> = [10, 20, 27]
            .into_iter()
            .chain([29; 30])
            .chain([30, 31, 33, 12])
            .collect();
        let bytes = segs.iter().sum::<u64>() * 1448;
        assert!(judge(&rounds(&segs, 150, 300), bytes, 3 << 20, None, path(150)).is_none());
        // Growing by half a segment a round from the same start is congestion avoidance.
        let ca: Vec<u64> = [10, 20]
            .into_iter()
            .chain((0..34).map(|i| 27 + i / 2))
            .chain([12])
            .collect();
        let bytes = ca.iter().sum::<u64>() * 1448;
        let j = judge(&rounds(&ca, 150, 300), bytes, 3 << 20, None, path(150));
        assert_eq!(j.map(|j| (j.exit, j.growth_per_round)), Some((1, 724)));
    }

    /// sndbuf-capped run 3 (/work/notes/sndbuf-capped-runs, the server's rounds in
    /// segments): no ssthresh (ss: none, cwnd 74 → 199), the send buffer held the flight.
    /// The exit round (32) is followed by 21 and 20 with nothing lost, which a cwnd that
    /// never falls without a loss cannot send; the ends (32 → 40 over 31 rounds) grow by
    /// exactly 0.25 segment per round, so the growth test alone passed it (2745 ms).
    const SNDBUF_RUN3: &[u64] = &[
        10, 20, 32, 21, 20, 35, 35, 36, 50, 41, 60, 74, 29, 26, 40, 36, 41, 35, 34, 42, 29, 44, 40,
        99, 50, 49, 37, 49, 35, 42, 40, 84, 44, 42, 40, 7,
    ];

    #[test]
    fn a_round_falling_below_the_exit_without_a_loss_is_not_cwnd_limited() {
        let bytes = SNDBUF_RUN3.iter().sum::<u64>() * 1448;
        let r = rounds(SNDBUF_RUN3, 150, 300);
        assert!(judge(&r, bytes, 3 << 20, None, path(150)).is_none());
        // The same rounds with the falls removed (each round at least the largest before
        // it, less ROUND_NOISE_SEGMENTS) would be a cwnd-limited early exit.
        let mut top = 0;
        let held: Vec<u64> = SNDBUF_RUN3[..SNDBUF_RUN3.len() - 1]
            .iter()
            .map(|&n| {
                top = top.max(n);
                n.max(top - 4)
            })
            .chain([7])
            .collect();
        let bytes = held.iter().sum::<u64>() * 1448;
        let j = judge(&rounds(&held, 150, 300), bytes, 3 << 20, None, path(150));
        assert_eq!(j.map(|j| j.exit), Some(2));
    }

    /// A loss after the switch may cut cwnd: falls from then on do not count.
    #[test]
    fn a_fall_after_a_loss_does_not_clear_the_early_exit() {
        let mut segs = CACHED.to_vec();
        segs[10] = 20; // 36 → 20 at round 11, after a loss
        let r = rounds(&segs, 25, 300);
        let bytes = segs.iter().sum::<u64>() * 1448;
        assert!(judge(&r, bytes, 3 << 20, None, path(25)).is_none());
        let loss = r[10].first_frame;
        let j = judge(&r, bytes, 3 << 20, Some(loss), path(25)).expect("early exit");
        assert_eq!(j.exit, 1);
    }

    /// A round whose data took half an RTT to pass: HyStart's ACK train ended slow start
    /// (tcp_cubic.c hystart_update), whatever came after.
    #[test]
    fn a_round_spanning_half_the_rtt_is_hystart() {
        let r = rounds(CACHED, 25, 12_500);
        let bytes = CACHED.iter().sum::<u64>() * 1448;
        assert!(judge(&r, bytes, 3 << 20, None, path(25)).is_none());
    }

    /// hystart-1ms (issue 12 class 3b): at 1 ms RTT rounds are bursts between pauses.
    #[test]
    fn no_judgement_below_the_round_splitters_floor() {
        let r = rounds(CACHED, 1, 50);
        let bytes = CACHED.iter().sum::<u64>() * 1448;
        assert!(judge(&r, bytes, 3 << 20, None, path(1)).is_none());
    }

    #[test]
    fn rounds_when_slow_start_continues_to_the_largest_window() {
        assert_eq!(rounds_capped(10, 46, 512), 13);
        assert_eq!(rounds_capped(10, 1000, 512), 6);
    }
}
