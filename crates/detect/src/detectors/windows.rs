//! The receiver's window as the limit of a transfer: `rwnd.limited`,
//! `rwnd.no_window_scaling`, `rwnd.zero_window`, `rwnd.not_growing` (mechanisms.md,
//! "rwnd.no_window_scaling" and "rwnd.limited, rwnd.zero_window, rwnd.not_growing"; seeds
//! 02 and 04).
//!
//! Mechanism: a sender may have at most the receiver's advertised window unacknowledged
//! (RFC 9293 §3.8.6.2.1): once its flight reaches the right edge (ACK + window) it waits
//! for the next ACK, so throughput is at most window / RTT whatever the path carries.
//! - `rwnd.no_window_scaling`: the window field has 16 bits; without the window-scale
//!   option in BOTH the SYN and the SYN/ACK (RFC 7323 §2.2) the window cannot exceed
//!   65,535 B, so at 150 ms the ceiling is 437 kB/s. One side lacking it (Linux
//!   `net.ipv4.tcp_window_scaling=0`, or a load balancer / proxy that strips or does not
//!   send it) disables scaling both ways.
//! - `rwnd.zero_window`: the receiver advertised 0 because its application did not read
//!   (its receive buffer is full); the sender probes on its persist timer (RFC 9293
//!   §3.8.6.1; Linux `tcp_probe_timer`, backing off from the RTO) until a window update.
//! - `rwnd.not_growing`: the receiver keeps up (never 0) but its window stays flat. Linux
//!   grows the window with the data the application reads (`tcp_rcv_space_adjust`, DRS)
//!   and `tcp_grow_window`, which is skipped while TCP is under memory pressure
//!   (`tcp_under_memory_pressure`: sockstat "TCP: … mem" above the middle value of
//!   `net.ipv4.tcp_mem`, seed 04) and which a fixed `SO_RCVBUF` (autotuning off) caps.
//!   A window flat from the start looks the same for both; host evidence tells them
//!   apart. But pressure does more than stop the growth: it clamps rcv_ssthresh to
//!   4 × advmss, so a window that had grown falls to about 4 × MSS and stays there while
//!   the reader keeps up (seed 04, issue 12 class 5): that shape is pressure's alone and
//!   is named as such (the section "rwnd.not_growing under TCP memory pressure" below).
//! - `rwnd.limited`: the umbrella: the receiver's window, not the congestion window,
//!   stopped a sender that had data, for a time that cost the transfer time. This is
//!   Linux's own definition: `tcp_write_xmit` (tcp_output.c) checks `tcp_cwnd_test`
//!   first, then `tcp_snd_wnd_test` (does a full `mss_now` segment end beyond
//!   `snd_una + snd_wnd`?); when only the latter fails it starts
//!   `TCP_CHRONO_RWND_LIMITED` (`tcp_chrono_start`), and the next `tcp_write_xmit` that
//!   is not stopped by the window ends it (`tcp_chrono_stop`): tcp_info's
//!   `tcpi_rwnd_limited`, whatever share of the transfer it is.
//!
//! Signature: the tracker's per-direction accounting (`tcpwhy_track::limits`, shown by
//! `tcpwhy flows` as LIMIT) gives the share of the transfer time during which the sender's
//! flight was within one MSS of the receiver's right edge, as the sender saw it (the ACKs
//! are delayed by the capture-to-sender round trip, so this holds at the sender, the
//! receiver or in the middle; at the sender it is exact, elsewhere an estimate — and
//! Wireshark's "window full" flag, which compares with the last ACK at the capture
//! point, almost never shows at a receiver). That time tracks the kernel's
//! `tcpi_rwnd_limited` from all three vantages (sweeps s4, seeds 1 and 2: within 10 % on
//! every transfer the kernel counted 50 ms or more, except behind TSO deferral, below).
//! `rwnd.limited` is named whenever that time cost something (below, [`limited_cost`]);
//! what is shown is `--min-cost`'s decision, not a share of the transfer (a window that
//! cost 24 ms of a 163 ms transfer is as real as one that cost all of it). `no_window_scaling` adds a handshake
//! without the option on one side and a window that never exceeded 65,535 B;
//! `not_growing` a window that never went to zero and never grew past
//! [`FLAT_GROWTH`] × its value at the start of the transfer, or one that fell from at
//! least [`COLLAPSE_FROM`] × the pressure clamp to the clamp and stayed there for
//! [`COLLAPSE_MIN_ROUNDS`] RTTs while the reader read [`COLLAPSE_MIN_READ`] clamps; `zero_window` a zero window
//! with the transfer still going (probes during it, or data after it).
//!
//! Cost ([`limited_cost`]): the time the transfer took (first to last new data) minus
//! the time it would have taken without the limit, at most the time spent window-limited.
//! The capture cannot show the path's capacity while the window holds the rate below it,
//! so the alternative is a window growing as slow start does, doubling each RTT from the
//! initial 10 segments (RFC 6928), until the data is sent: `(rounds − 1) × RTT` (the last
//! round leaves one RTT after the one before), with the path's shortest RTT seen from
//! this vantage ([`path_rtt_ns`]: a handshake slowed by a first packet would inflate it).
//! On the lab's clean path 2 MB took 7.5 RTTs from first to last byte
//! (clean-bulk/client.pcap frames 4 → 2690: 190 ms at 25.3 ms), the model says 7. The
//! window-limited time alone is not the cost: a window that capped a round of slow start
//! without adding a round held the sender and cost nothing (sweep s1-016: rounds of 10,
//! 20, 40, 80, 115, 148 segments, 73 ms at the window, the six rounds slow start needs
//! anyway; s1-010: 200 ms at the window, the 8 rounds of 197 ms slow start needs). Nor
//! did a window that a round of slow start met exactly: a round that doubled to the
//! segment was the congestion window's, which Linux tests first
//! (`fulls_in_doubling_rounds`). A
//! bottleneck slower than slow start makes the real saving smaller, and it can be
//! measured when the window stood above its bandwidth-delay product: the RTT then rises
//! with the flight and a queue stands (`bufferbloat::capacity`, `Connection::bottleneck`),
//! the link never idles, and what it delivered is its capacity. The alternative is then
//! no shorter than the bytes at that rate: a window above the bottleneck's BDP only
//! lengthens its queue, and its chrono in tcp_info (`tcpi_rwnd_limited`) runs while the
//! link is busy all the same (sweep s10-064, s44-040, s50-072: transfers at the link's
//! payload rate, 0.2–4.5 s of rwnd_limited).
//! `zero_window`: the time from each zero window to the window update that reopened it.
//! `no_window_scaling` and `not_growing` name the cause of `rwnd.limited`'s time, and
//! carry the same cost (not to be added).
//!
//! Fix: on the receiver (no_window_scaling: on the side whose SYN lacked the option).
//!
//! Known false positives: a receiver whose application reads slowly on purpose (rate
//! limiting by not reading) is reported as limited by its window, which is true. A
//! capture without the handshake has no window scale: windows are then not edges, only
//! zero windows count.
//!
//! Known misses: with TSO/GSO, `tcp_tso_should_defer` also starts the chrono when it
//! holds back a send because the window's room is below the skb, under a third of the
//! window (`sysctl_tcp_tso_win_divisor`) and the next ACK is due within half an RTT: the
//! sender waits with room for more than a segment unused, which on the wire is not "at
//! the edge". Sweep s2-058 (4 ms RTT, TSO):
//! the kernel 36 ms, the tracker 8.8 ms at the sender; the finding is named, priced low.

use crate::detector::{emptied_vec, ms, Connection, Detector, Reusable, Seat, Segment, Slots};
use crate::exchange::Span;
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::{TcpFlags, Timestamp};
use tcpwhy_track::model::ETHERNET_TIMESTAMPS_MSS;
use tcpwhy_track::{ConnSummary, Limit, LimitTimes, SegmentKinds, Side, WindowScale};

use crate::catalogue::Entry;

/// `rwnd.no_window_scaling` in the catalogue (crate::catalogue).
pub const NO_WINDOW_SCALING: Entry = Entry {
    id: "rwnd.no_window_scaling",
    title: "no window scaling",
    meaning: "the window-scale option missing from the SYN or the SYN/ACK capped the window at 64 KiB, with the throughput ceiling",
    fix_goes_to: "the side lacking window scaling (or a middlebox rewriting the SYN)",
    part_of: Some(FindingId::RwndLimited),
    decided_by: None,
    judge: Some(crate::host::window_scaling_off::judge_no_window_scaling),
};

/// `rwnd.limited` in the catalogue (crate::catalogue).
pub const LIMITED: Entry = Entry {
    id: "rwnd.limited",
    title: "receive window limit",
    meaning: "the receiver's advertised window capped the sender's flight, with the throughput ceiling (window / RTT)",
    fix_goes_to: "the receiver: its buffer (`tcp_rmem`, SO_RCVBUF) or how fast it reads",
    part_of: None,
    decided_by: Some(crate::host::BundleSide::Client),
    judge: Some(crate::host::buffer_below_bdp::judge_receive_window),
};

/// `rwnd.zero_window` in the catalogue (crate::catalogue).
pub const ZERO_WINDOW: Entry = Entry {
    id: "rwnd.zero_window",
    title: "zero window",
    meaning: "a slow reader closed the window and the sender waited for it to open",
    fix_goes_to: "the receiving application: read faster or in larger reads",
    part_of: Some(FindingId::RwndLimited),
    decided_by: Some(crate::host::BundleSide::Client),
    judge: Some(crate::host::buffer_below_bdp::judge_receive_window),
};

/// `rwnd.not_growing` in the catalogue (crate::catalogue).
pub const NOT_GROWING: Entry = Entry {
    id: "rwnd.not_growing",
    title: "window not growing",
    meaning: "the receiver's window stayed small (a fixed SO_RCVBUF) or fell to 4 × MSS and stayed there (TCP memory pressure) while the sender waited on it",
    fix_goes_to: "the receiver: SO_RCVBUF, `tcp_rmem`, `tcp_mem`",
    part_of: Some(FindingId::RwndLimited),
    decided_by: Some(crate::host::BundleSide::Client),
    judge: Some(crate::host::buffer_below_bdp::judge_receive_window),
};

/// The largest window of a window-scaling-less connection (a 16-bit field).
pub const UNSCALED_MAX: u64 = 65_535;
/// Without scaling, the missing option is the limit only when the window reached the top
/// of the 16-bit range (Linux advertises 65,535 B, Windows 64,240 B); a smaller window is
/// the receiver's buffer (tcptrace-discard-solaris.pcap: Solaris' 8,192 B), which
/// scaling would not have changed.
pub const UNSCALED_NEAR_MAX: u64 = 49_152;
/// "Not growing": the receiver's window never exceeded this multiple of its value at the
/// start of the transfer (Linux autotuning grew it 67 KB → 5.6 MB within 230 ms on the
/// lab's clean path; a fixed 32 KB SO_RCVBUF kept it at 34.7 → 39.1 KB).
pub const FLAT_GROWTH: f64 = 1.5;
/// The initial window of the no-limit model: RFC 6928, Linux's default.
pub const INITIAL_WINDOW_SEGMENTS: u64 = 10;
/// Transitions into "window full" cited as evidence.
const CITED_FULL: usize = 4;
/// Zero-window periods remembered per direction; later ones are counted only.
const MAX_ZERO_PERIODS: usize = 1024;
/// Zero-window periods cited.
const CITED_ZERO: usize = 3;

/// One zero window and the update that ended it.
#[derive(Copy, Clone, Debug)]
struct ZeroPeriod {
    frame: u64,
    ts: Timestamp,
    end: Option<(u64, Timestamp, u64)>,
    probes: u32,
}

/// Per data direction (`[client → server, server → client]`).
#[derive(Default)]
struct Dir {
    first_data: Option<(u64, Timestamp)>,
    last_data: Option<(u64, Timestamp)>,
    largest_segment: u64,
    /// The data segment before was window-limited.
    was_full: bool,
    full: Vec<(u64, Timestamp, u64)>,
    full_times: u64,
    /// Sum of the receiver's windows at those times, for their mean.
    full_window_sum: u64,
    /// The receiver's window in force (its last ACK) and the window of its first ACK
    /// after data began.
    window: Option<u64>,
    first_window: Option<(u64, Timestamp, u64)>,
    max_window: Option<(u64, Timestamp, u64)>,
    zeros: Vec<ZeroPeriod>,
    zero_count: u64,
    zero_ns: u64,
    /// The sender sent new data after the last zero window ended.
    data_after_zero: bool,
    /// The window's fall to the memory-pressure clamp, for `rwnd.not_growing`.
    collapse: Collapse,
}

#[derive(Default)]
struct Conn {
    syn: Option<(u64, Timestamp)>,
    synack: Option<(u64, Timestamp)>,
    dirs: [Dir; 2],
}

impl Reusable for Conn {
    fn empty(&mut self) {
        // Every field named: one added is a compile error here until it is reset.
        let Conn { syn, synack, dirs } = self;
        (*syn, *synack) = (None, None);
        for d in dirs {
            *d = Dir {
                full: emptied_vec(&mut d.full),
                zeros: emptied_vec(&mut d.zeros),
                ..Dir::default()
            };
        }
    }
}

#[derive(Default)]
pub struct Windows {
    conns: Slots<Conn>,
}

impl Detector for Windows {
    // Judges a direction only if it carried data (`report_direction`).
    const JUDGES_DATALESS: bool = false;

    fn on_segment(&mut self, seg: &Segment<'_>) {
        let ev = seg.ev;
        if ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            return;
        }
        let c = self.conns.get_or_default(seg);
        let flags = seg.pkt.flags;
        if flags.syn() {
            let slot = if flags.ack() {
                &mut c.synack
            } else {
                &mut c.syn
            };
            slot.get_or_insert((seg.frame, seg.ts));
            return;
        }
        let (me, peer) = (ev.sender(), ev.receiver());
        // This segment as the receiver's ACK of the other direction.
        if flags.ack() && flags.0 & (TcpFlags::RST | TcpFlags::FIN) == 0 {
            let d = &mut c.dirs[peer];
            if d.first_data.is_some() {
                let w = ev.window_bytes;
                if d.first_window.is_none() {
                    d.first_window = Some((seg.frame, seg.ts, w));
                }
                if d.max_window.is_none_or(|m| w > m.2) {
                    d.max_window = Some((seg.frame, seg.ts, w));
                }
                if w == 0 && d.window != Some(0) {
                    d.zero_count += 1;
                    if d.zeros.len() < MAX_ZERO_PERIODS {
                        d.zeros.push(ZeroPeriod {
                            frame: seg.frame,
                            ts: seg.ts,
                            end: None,
                            probes: 0,
                        });
                    }
                    d.data_after_zero = false;
                } else if w > 0 && d.window == Some(0) {
                    if let Some(z) = d.zeros.last_mut().filter(|z| z.end.is_none()) {
                        z.end = Some((seg.frame, seg.ts, w));
                        d.zero_ns = d.zero_ns.saturating_add(seg.ts.elapsed_since(z.ts));
                    }
                }
                d.window = Some(w);
                d.collapse.on_ack(seg.frame, seg.ts, w, ev.rel_ack, || {
                    pressure_ceiling(&ev.conn, me)
                });
            }
        }
        if ev.payload_len == 0 {
            return;
        }
        let d = &mut c.dirs[me];
        if ev.kinds.has(SegmentKinds::ZERO_WINDOW_PROBE) {
            if let Some(z) = d.zeros.last_mut().filter(|z| z.end.is_none()) {
                z.probes += 1;
            }
        }
        if !ev.kinds.has(SegmentKinds::NEW_DATA) {
            return;
        }
        d.first_data.get_or_insert((seg.frame, seg.ts));
        d.last_data = Some((seg.frame, seg.ts));
        d.largest_segment = d.largest_segment.max(u64::from(ev.payload_len));
        if d.window != Some(0) && !d.zeros.is_empty() {
            d.data_after_zero = true;
        }
        let full = matches!(ev.limit, Limit::Rwnd | Limit::ZeroWindow);
        if full && !d.was_full {
            d.full_times += 1;
            d.full_window_sum = d.full_window_sum.saturating_add(d.window.unwrap_or(0));
            if d.full.len() < CITED_FULL {
                d.full.push((seg.frame, seg.ts, d.window.unwrap_or(0)));
            }
        }
        d.was_full = full;
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(c) = self.conns.take_reusing(conn) else {
            return;
        };
        for (i, d) in c.dirs.iter().enumerate() {
            report_direction(conn, &c, d, i == 1, out);
        }
    }

    /// Nothing is kept across connections.
    fn absorb(&mut self, _other: Self) {}
}

/// Names for the two ends of one data direction.
pub(crate) struct Roles {
    pub sender: &'static str,
    pub receiver: &'static str,
    pub sender_host: Host,
    pub receiver_host: Host,
}

pub(crate) fn roles(sender_is_server: bool) -> Roles {
    if sender_is_server {
        Roles {
            sender: "server",
            receiver: "client",
            sender_host: Host::Server,
            receiver_host: Host::Client,
        }
    } else {
        Roles {
            sender: "client",
            receiver: "server",
            sender_host: Host::Client,
            receiver_host: Host::Server,
        }
    }
}

/// A rate for explanations: "437 kB/s" (decimal kilobytes, as the bytes are counted).
pub(crate) fn rate(bytes_per_s: f64) -> String {
    if bytes_per_s >= 10e6 {
        format!("{:.1} MB/s", bytes_per_s / 1e6)
    } else {
        format!("{:.0} kB/s", bytes_per_s / 1e3)
    }
}

/// "12,345": bytes for explanations.
pub(crate) fn thousands(n: u64) -> String {
    let s = n.to_string();
    let mut out = String::with_capacity(s.len() + s.len() / 3);
    for (i, ch) in s.chars().enumerate() {
        if i > 0 && (s.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// First to last new data of a direction, as seen at the capture point.
pub(crate) fn span_ns(first: Option<(u64, Timestamp)>, last: Option<(u64, Timestamp)>) -> u64 {
    match (first, last) {
        (Some(a), Some(b)) => b.1.elapsed_since(a.1),
        _ => 0,
    }
}

/// The time `bytes` take from first to last byte with a window doubling each RTT from
/// the initial window (slow start without a limit): `(rounds − 1) × rtt`.
pub fn unlimited_ns(bytes: u64, segment: u64, rtt_ns: u64) -> u64 {
    let iw = INITIAL_WINDOW_SEGMENTS.saturating_mul(segment.max(1));
    let (mut sent, mut window, mut rounds) = (0u64, iw, 0u64);
    while sent < bytes && rounds < 64 {
        sent = sent.saturating_add(window);
        window = window.saturating_mul(2);
        rounds += 1;
    }
    rounds.saturating_sub(1).saturating_mul(rtt_ns)
}

/// The path's round trip for the no-limit model, at any vantage: the shortest data →
/// ACK sample of the direction (capture point → receiver → capture point) plus the
/// shortest echo of the receiver's TSval by the sender (capture point → sender → capture
/// point), or the handshake's, whichever is shorter. None of them can be shorter than the
/// path; the handshake's can be much longer (the lab's emulator delays a connection's
/// first packets: 42.7 ms for a 6 ms path in sweep s2-007's client capture, which would
/// have priced slow start at 7 times its rounds).
fn path_rtt_ns(s: &ConnSummary, i: Side, handshake: u64) -> u64 {
    let legs = s.dirs[i]
        .rtt_ack
        .zip(s.dirs[i.peer()].rtt_ts)
        .map(|(to_receiver, to_sender)| to_receiver.min_ns.saturating_add(to_sender.min_ns));
    legs.filter(|&l| l > 0)
        .map_or(handshake, |l| l.min(handshake))
}

/// `rwnd.limited`'s cost (module doc, "Cost"): the time the receiver's window held back
/// a sender that had data (`rwnd_ns`, the tracker's counterpart of Linux's
/// `TCP_CHRONO_RWND_LIMITED`, which `tcp_write_xmit` starts when `tcp_snd_wnd_test`
/// fails with room in the congestion window), as far as the transfer took longer than
/// without the limit (`alt`, [`unlimited_ns`]). The transfer's time is first to last
/// new data (`span`) less what the tracker counted in no limit — pauses between
/// exchanges, silences — like the kernel's `tcpi_busy_time`, which stops when nothing is
/// queued or in flight. Zero — no finding — when the window never blocked the sender,
/// or when the transfer took no longer than slow start would have without any window (a
/// window that capped one round of a transfer whose rounds it did not add to, sweep
/// s1-010).
pub(crate) fn limited_cost(l: &LimitTimes, span: u64, alt: u64) -> u64 {
    span.min(l.total_ns()).saturating_sub(alt).min(l.rwnd_ns)
}

/// Whether every time the server's flight reached the receiver's window it did so in a
/// round of slow start that doubled exactly, so that the congestion window stopped it
/// there as well. In slow start the congestion window grows by one segment per segment
/// ACKed (RFC 5681 §3.1; Linux's `tcp_slow_start`: `cwnd += acked`), so a round is
/// twice the one before, to the segment, unless something else held it; a window that
/// held the sender shows as a round a segment or more short of that (s51-061: 78
/// segments after 40, under a slow reader's window). A flight that reached the window's
/// edge in a round that doubled all the same met both limits there, and Linux's
/// `tcp_write_xmit` tests the congestion window first (`tcp_cwnd_test`, then
/// `tcp_snd_wnd_test`): its chrono counts the wait for the next ACK as the congestion
/// window's (control s58-015: rounds of 10, 20, 40, 80 and 160 segments, the fourth
/// 896 B short of a 116,736 B window for the 142 ms until the next ACK; control s65-095
/// the same at 25 ms, before HyStart ended the doubling; `rwnd_limited` 0 in both).
/// Each time must fall in a round after the first (the initial window is not known to
/// be the congestion window's), the round after it must not have been held either (it
/// doubled too, or it was the last, what was left: s53-013's slow reader filled the
/// window in a round of 20 after 10, then sent rounds of 1–4 segments for 792 ms), and
/// every time must be known (`fulls` holds them all).
fn fulls_in_doubling_rounds(
    conn: &Connection<'_>,
    fulls: &[(u64, Timestamp, u64)],
    segment: u64,
) -> bool {
    let responses = conn
        .exchanges
        .iter()
        .filter(|x| x.response.is_some())
        .map(|x| x.clock_rounds().unwrap_or(&x.rounds));
    let all = std::iter::once(conn.server_first_rounds).chain(responses);
    let doubled = |rounds: &[Span], i: usize| {
        i >= 1
            && rounds[i]
                .bytes
                .abs_diff(rounds[i - 1].bytes.saturating_mul(2))
                < segment
    };
    !fulls.is_empty()
        && fulls.iter().all(|&(frame, _, _)| {
            all.clone().any(|rounds| {
                let Some(i) = rounds
                    .iter()
                    .position(|r| (r.first_frame..=r.last_frame).contains(&frame))
                else {
                    return false;
                };
                // The round it ended doubled, and the window did not hold the next one
                // either: it doubled too, or it was the last, what was left.
                doubled(rounds, i) && (i + 2 >= rounds.len() || doubled(rounds, i + 1))
            })
        })
}

/// The shares of a direction's limits, for explanations: "rwnd 90 %, own window 10 %,
/// application 0 %".
pub(crate) fn shares_text(l: &LimitTimes) -> String {
    let total = l.total_ns().max(1) as f64;
    let p = |v: u64| v as f64 * 100.0 / total;
    format!(
        "receiver's window {:.0} %, sender's own window (congestion window or send buffer) \
         {:.0} %, application {:.0} %",
        p(l.rwnd_ns),
        p(l.sender_ns),
        p(l.app_ns)
    )
}

/// The side whose SYN lacked the window-scale option: 0 = client, 1 = server. A SYN whose
/// options the snaplen cut lacks nothing that can be known.
fn side_without_wscale(s: &ConnSummary) -> Option<usize> {
    let lacks = |i: usize| s.dirs[i].syn_whole().is_some_and(|o| o.wscale.is_none());
    if lacks(0) {
        Some(0)
    } else if lacks(1) {
        Some(1)
    } else {
        None
    }
}

fn report_direction(
    conn: &Connection<'_>,
    c: &Conn,
    d: &Dir,
    sender_is_server: bool,
    out: &mut Vec<Finding>,
) {
    let s = conn.summary;
    let i = Side::from_index(usize::from(sender_is_server));
    let dir = &s.dirs[i];
    let r = roles(sender_is_server);
    let span = span_ns(d.first_data, d.last_data);
    let bytes = dir.unique_bytes;
    if span == 0 || bytes == 0 {
        return;
    }
    let seat = conn.seat(i);
    let at_sender = seat == Seat::Sender;
    let confidence = if at_sender {
        Confidence::High
    } else {
        Confidence::Medium
    };
    let avg = bytes as f64 / (span as f64 / 1e9);

    // rwnd.zero_window: its own cost, whatever the shares.
    let zero_ended = d.zeros.iter().filter(|z| z.end.is_some()).count();
    let probes: u32 = d.zeros.iter().map(|z| z.probes).sum();
    if d.zero_count > 0 && d.zero_ns > 0 && (probes > 0 || d.data_after_zero) {
        let mut f = conn.finding(FindingId::RwndZeroWindow);
        f.cost_ns = d.zero_ns;
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        let longest = d
            .zeros
            .iter()
            .filter_map(|z| z.end.map(|e| e.1.elapsed_since(z.ts)))
            .max()
            .unwrap_or(0);
        f.explanation = format!(
            "The {rx} advertised a zero window {n} time(s) while the {tx} still had data to \
             send: its receive buffer was full because its application did not read fast \
             enough. The {tx} could send nothing{probe_text} for {t} in all, {longest} at most, from each zero window to the \
             update that reopened it. The {tx}'s {b} B took {span} (≈ {avg}).",
            rx = r.receiver,
            tx = r.sender,
            n = d.zero_count,
            probe_text = if probes > 0 {
                format!(" but {probes} zero-window probe(s) on its persist timer")
            } else {
                String::new()
            },
            t = ms(d.zero_ns),
            longest = ms(longest),
            b = thousands(bytes),
            span = ms(span),
            avg = rate(avg),
        );
        for z in d.zeros.iter().filter(|z| z.end.is_some()).take(CITED_ZERO) {
            f.cite(z.frame, z.ts, format!("the {}'s zero window", r.receiver));
            if let Some((fr, ts, w)) = z.end {
                f.cite(
                    fr,
                    ts,
                    format!(
                        "window update to {} B, {} later ({} in between)",
                        thousands(w),
                        ms(ts.elapsed_since(z.ts)),
                        match z.probes {
                            0 => "no probe".to_string(),
                            1 => "1 probe".to_string(),
                            n => format!("{n} probes"),
                        }
                    ),
                );
            }
        }
        if zero_ended == 0 {
            if let Some(z) = d.zeros.first() {
                f.cite(z.frame, z.ts, format!("the {}'s zero window", r.receiver));
            }
        }
        f.fix = vec![Fix {
            host: r.receiver_host,
            action: "make the receiving application read faster or in larger reads (a \
                     blocking step between reads, a slow consumer, a too small read buffer); \
                     a larger receive buffer only delays the zero window"
                .into(),
        }];
        f.confidence = Confidence::High;
        out.push(f);
    }

    // rwnd.limited and its causes: priced with the RTT (a handshake with 10 ms clock
    // ticks, as in tcptrace-zwnd.pcap, gives none).
    let Some(rtt) = conn.rtt_ns.filter(|&r| r > 0) else {
        return;
    };
    let l = &dir.limits;
    let total = l.total_ns();
    if total == 0 {
        return;
    }
    let share = l.rwnd_ns as f64 / total as f64;
    let segment = if d.largest_segment > 0 {
        d.largest_segment
            .min(dir.syn.and_then(|o| o.mss).map_or(u64::MAX, u64::from))
    } else {
        ETHERNET_TIMESTAMPS_MSS
    };
    let path_rtt = path_rtt_ns(s, i, rtt);
    let slow_start = unlimited_ns(bytes, segment, path_rtt);
    // A standing queue proved the path's capacity (`Connection::bottleneck`): no window,
    // however large, passes the bytes through the bottleneck faster than it delivered
    // them while the queue stood; the flight above its bandwidth-delay product only
    // waited in its queue (sweep s10-064: 2.8 MB behind a 5 Mbit/s link, 4.7 s whatever
    // the receiver's window).
    let capacity = conn.bottleneck[i].filter(|b| b.rate > 0.0);
    let at_capacity = capacity.map_or(0, |b| (bytes as f64 / b.rate * 1e9) as u64);
    let alt = slow_start.max(at_capacity);
    let cost = limited_cost(l, span, alt);
    let all_known = d.full_times <= d.full.len() as u64;
    if cost == 0
        || (sender_is_server && all_known && fulls_in_doubling_rounds(conn, &d.full, segment))
    {
        return;
    }
    let max_window = d.max_window.map_or(0, |m| m.2);
    let unscaled = dir_wscale_off(s) && (UNSCALED_NEAR_MAX..=UNSCALED_MAX).contains(&max_window);
    // The ceiling: the receiver's mean window when the sender reached it, per the RTT
    // the window cycled at (the median of the samples that span the path at this
    // vantage point: they include the receiver's ACK delay, which the window waits for
    // too), else the handshake's.
    let window = d.full_window_sum / d.full_times.max(1);
    let cycle = match seat {
        Seat::Sender => dir.rtt_ack,
        Seat::Receiver => s.dirs[i.peer()].rtt_ts,
        Seat::Elsewhere => None,
    }
    .map_or(rtt, |r| r.median_ns.max(1));
    let ceiling = window as f64 / (cycle as f64 / 1e9);
    let ceiling_text = format!(
        "{} B (the window when full, on average) per {} RTT = {}; the transfer averaged \
         {} ({} B in {})",
        thousands(window),
        ms(cycle),
        rate(ceiling),
        rate(avg),
        thousands(bytes),
        ms(span)
    );
    let without = match capacity {
        Some(b) if at_capacity > slow_start => format!(
            "Without the limit the {} B would still have taken ≈ {}: the RTT rose from {} \
             to {} (median) with the data in flight, a queue at a bottleneck that \
             delivered {} while it stood, and no window passes \
             data through a bottleneck faster than that; above the bottleneck's \
             bandwidth-delay product a larger window only lengthens its queue",
            thousands(bytes),
            ms(alt),
            ms(b.min_rtt_ns),
            ms(b.median_rtt_ns),
            rate(b.rate)
        ),
        _ => format!(
            "Without the limit the {} B would have taken ≈ {} (a window doubling each \
             round trip of the path, {} at its shortest, from {} segments, as slow start \
             does: the path's capacity cannot be measured while the window holds the rate \
             below it)",
            thousands(bytes),
            ms(alt),
            ms(path_rtt),
            INITIAL_WINDOW_SEGMENTS
        ),
    };
    let mut limited = conn.finding(FindingId::RwndLimited);
    limited.cost_ns = cost;
    limited.share = Some(cost as f64 / conn.active_ns().max(1) as f64);
    let cause = if unscaled {
        " The window could not grow because window scaling is off (rwnd.no_window_scaling: \
         the same time, not in addition)."
    } else if d.zero_count > 0 {
        " The window closed because the receiving application read slowly (rwnd.zero_window: \
         its time is part of this one)."
    } else {
        ""
    };
    let where_ = if at_sender {
        "seen here at the sender"
    } else {
        "estimated from the ACKs seen here, delayed by the path to the sender"
    };
    limited.explanation = format!(
        "For {lim} of the {tx}'s transfer the {tx}'s data in flight was at the right edge of \
         the {rx}'s advertised window ({where_}; {n} time(s) it filled the window), so the \
         {rx}'s window, not the network or the {tx}, set the pace: {shares}. Ceiling: \
         {ceiling_text}. {without}, so the window cost ≈ {cost}.{cause}",
        lim = ms(l.rwnd_ns),
        tx = r.sender,
        rx = r.receiver,
        n = d.full_times,
        shares = shares_text(l),
        cost = ms(cost),
    );
    for &(fr, ts, w) in &d.full {
        limited.cite(
            fr,
            ts,
            format!(
                "the {}'s data in flight reaches (within one segment) the right edge of the \
                 {}'s window ({} B): window full",
                r.sender,
                r.receiver,
                thousands(w)
            ),
        );
    }
    if let Some((fr, ts, w)) = d.max_window {
        limited.cite(
            fr,
            ts,
            format!("the {}'s largest window: {} B", r.receiver, thousands(w)),
        );
    }
    let buffer_fix = Fix {
        host: r.receiver_host,
        action: format!(
            "give the {rx}'s socket a receive buffer of at least the bandwidth-delay \
             product: remove a fixed SO_RCVBUF (it turns autotuning off), raise \
             net.ipv4.tcp_rmem's max (and net.core.rmem_max), and check TCP memory \
             pressure (/proc/net/sockstat 'TCP: … mem' vs net.ipv4.tcp_mem, nstat \
             TCPMemoryPressures). A fixed SO_RCVBUF and memory pressure look the same on \
             the wire; `tcpwhy host` on the {rx} tells them apart",
            rx = r.receiver
        ),
    };
    // Without window scaling no buffer can lift the window above 65,535 B: the option is
    // the fix, on the side whose SYN lacked it (which may be the sender).
    limited.fix = match (unscaled, side_without_wscale(s)) {
        (true, side) => {
            let (lacking, host) = match side {
                Some(0) => ("client", Host::Client),
                Some(_) => ("server", Host::Server),
                None => ("side lacking it", Host::Both),
            };
            vec![Fix {
                host,
                action: format!(
                    "enable window scaling on the {lacking} (see rwnd.no_window_scaling): \
                     without it no receive buffer can raise the window above 65,535 B"
                ),
            }]
        }
        (false, _) => vec![buffer_fix],
    };
    limited.confidence = confidence;

    if unscaled {
        let side = side_without_wscale(s);
        let (lacking, host) = match side {
            Some(0) => ("client", Host::Client),
            Some(_) => ("server", Host::Server),
            None => ("one side", Host::Both),
        };
        let mut f = conn.finding(FindingId::RwndNoWindowScaling);
        f.cost_ns = cost;
        f.share = limited.share;
        f.explanation = format!(
            "The {lacking}'s {} had no window-scale option (RFC 7323), so neither direction \
             scales its window and the {rx}'s window cannot exceed 65,535 B. Ceiling: \
             {ceiling_text}; the {tx}'s data was window-limited {pct:.0} % of the \
             transfer. {without}, so the missing option cost ≈ {cost}.",
            if side == Some(1) { "SYN/ACK" } else { "SYN" },
            rx = r.receiver,
            tx = r.sender,
            pct = share * 100.0,
            cost = ms(cost),
        );
        let syn_note = |i: usize, what: &str, who: &str| {
            let d = &s.dirs[i];
            if d.syn.is_some_and(|o| o.wscale.is_some()) {
                format!("the {who}'s {what} offers window scaling")
            } else if d.syn_cut {
                format!("the {who}'s {what}: options cut by the snaplen (window scale unknown)")
            } else {
                format!("the {who}'s {what}: no window-scale option")
            }
        };
        if let Some((fr, ts)) = c.syn {
            f.cite(fr, ts, syn_note(0, "SYN", "client"));
        }
        if let Some((fr, ts)) = c.synack {
            f.cite(fr, ts, syn_note(1, "SYN/ACK", "server"));
        }
        for e in limited.evidence.iter().take(CITED_FULL) {
            f.cite(e.frame, e.ts, e.note.clone());
        }
        f.fix = vec![Fix {
            host,
            action: format!(
                "enable window scaling on the {lacking}: sysctl -w \
                 net.ipv4.tcp_window_scaling=1 (Linux), or the window-scaling / TCP-options \
                 setting of the load balancer or proxy in front of it"
            ),
        }];
        f.confidence = Confidence::High;
        out.push(f);
    } else if let Some(f) = pressure_collapse(
        conn,
        d,
        &r,
        &Priced {
            rtt,
            cycle,
            cost,
            share,
            avg,
            without: &without,
            confidence,
        },
        &limited,
    ) {
        out.push(f);
    } else if d.zero_count == 0 {
        let flat = match (d.first_window, d.max_window) {
            (Some(a), Some(m)) => (m.2 as f64) <= FLAT_GROWTH * a.2 as f64,
            _ => false,
        };
        if flat {
            let (a, m) = (
                d.first_window.unwrap_or_default(),
                d.max_window.unwrap_or_default(),
            );
            let mut f = conn.finding(FindingId::RwndNotGrowing);
            f.cost_ns = cost;
            f.share = limited.share;
            f.explanation = format!(
                "The {rx} kept up (its window never reached zero) but its advertised window \
                 stayed flat: {} B at the start of the transfer, {} B at most, while the \
                 {tx} waited on it {pct:.0} % of the transfer. Linux grows the window as \
                 the application reads unless a fixed SO_RCVBUF turned autotuning off or \
                 TCP is under memory pressure (sockstat mem above tcp_mem's middle value: \
                 tcp_grow_window is skipped); both look the same on the wire, `tcpwhy host` \
                 on the {rx} (sockstat, nstat TCPMemoryPressures, tcp_mem) tells them \
                 apart. Ceiling: {ceiling_text}. {without}, so it cost ≈ {cost}.",
                thousands(a.2),
                thousands(m.2),
                rx = r.receiver,
                tx = r.sender,
                pct = share * 100.0,
                cost = ms(cost),
            );
            f.cite(
                a.0,
                a.1,
                format!(
                    "the {}'s window at the start: {} B",
                    r.receiver,
                    thousands(a.2)
                ),
            );
            f.cite(
                m.0,
                m.1,
                format!("its largest window: {} B", thousands(m.2)),
            );
            for e in limited.evidence.iter().take(CITED_FULL - 1) {
                f.cite(e.frame, e.ts, e.note.clone());
            }
            f.fix = vec![
                Fix {
                    host: r.receiver_host,
                    action: "if the application sets SO_RCVBUF, remove it (autotuning \
                             grows the window up to net.ipv4.tcp_rmem's max)"
                        .into(),
                },
                Fix {
                    host: r.receiver_host,
                    action: "if /proc/net/sockstat 'TCP: … mem' is above net.ipv4.tcp_mem's \
                             middle value (nstat TCPMemoryPressures rising): raise tcp_mem if \
                             memory is free, and look for socket or fd leaks (sockstat \
                             'alloc', orphans)"
                        .into(),
                },
            ];
            f.confidence = confidence;
            out.push(f);
        }
    }
    out.push(limited);
}

// ---------------------------------------------------------------------------------------
// rwnd.not_growing under TCP memory pressure: the window's collapse to the clamp.
//
// Linux (net/ipv4/tcp_input.c, tcp_output.c, include/net/tcp.h): while TCP is under
// memory pressure (`tcp_under_memory_pressure`: the global flag `tcp_enter_memory_pressure`
// sets when `__sk_mem_raise_allocated` finds TCP's pages, sockstat "TCP: … mem", above
// `net.ipv4.tcp_mem`'s middle value, until they are back at its low value; it counts
// TCPMemoryPressures) every data segment the receiver takes in reaches `tcp_grow_window`,
// which then does not grow rcv_ssthresh but clamps it, `tcp_adjust_rcv_ssthresh`, to
// 4 × advmss; `__tcp_select_window` does the same whenever less than half the receive
// space is free, and `tcp_prune_queue` when the queue must be pruned. The window offered
// is at most rcv_ssthresh, rounded up to the window scale's unit; `tcp_select_window`
// never moves the right edge back, so a large window drains as data arrives and then
// stays at the clamp. Nothing else lowers rcv_ssthresh that far and keeps it there:
// `tcp_clamp_window` (a queue that overran its buffer) sets 2 × advmss once, and without
// pressure `tcp_grow_window` raises it again by 2 × advmss per segment.
//
// On the wire: a window of at least [`COLLAPSE_FROM`] × the clamp (autotuning had grown
// it) falls to at most 4 × MSS (rounded up to the scale unit) and stays there for
// [`COLLAPSE_MIN_ROUNDS`] RTTs, never zero, while the right edge (ACK + window) moves on by at least
// [`COLLAPSE_MIN_READ`] windows: the application kept reading. Told apart from
// - a fixed small SO_RCVBUF: its window is small from the start, it never fell from a
//   large one (that stays the flat shape above);
// - an application that stopped reading: the right edge stops, the window shrinks to
//   zero (rwnd.zero_window), and without pressure a non-zero window below 1/16 of the
//   receive space is never offered (`__tcp_select_window` offers zero instead);
// - autotuning's ramp on a new connection (class 4): it rises, never falls.

/// tcp_adjust_rcv_ssthresh's clamp: rcv_ssthresh ≤ 4 × advmss under pressure.
pub const PRESSURE_CLAMP_SEGMENTS: u64 = 4;
/// The window must have been at least this many clamps (16 × MSS) before it fell: a
/// fall from Linux's initial 64 KB window (44 segments) or from an autotuned one, not a
/// fixed buffer that was small all along.
pub const COLLAPSE_FROM: u64 = 4;
/// While at the clamp the right edge must move on by this many clamps: the receiving
/// application read that much (a stopped reader's edge stands still).
pub const COLLAPSE_MIN_READ: u64 = 8;
/// At the clamp for at least this many RTTs: a reader that fell behind for a moment
/// drains the window and reopens it within a round or two (tcp_cleanup_rbuf sends the
/// window update once it has read), pressure holds it there until the host's TCP memory
/// falls back below tcp_mem's middle value. A judgement (it was `MIN_ROUNDS`, the
/// share rule's, which rwnd.limited no longer uses), not a kernel constant.
pub const COLLAPSE_MIN_ROUNDS: u64 = 4;

/// The largest window Linux offers under memory pressure with an empty receive queue:
/// 4 × the receiver's MSS option (its advmss is that, less 12 bytes with timestamps: the
/// option gives the upper bound), rounded up to its window scale's unit. `None` without
/// both SYNs (no MSS, no scale: the windows are not known as edges).
fn pressure_ceiling(m: &tcpwhy_track::ConnModel, receiver: Side) -> Option<u64> {
    let own = m.dirs[receiver].syn.options()?;
    let peer = m.dirs[receiver.peer()].syn.options()?;
    let mss = u64::from(own.mss?);
    let shift = match (own.wscale, peer.wscale) {
        (Some(s), Some(_)) => u32::from(s.min(14)),
        _ => 0,
    };
    let unit = 1u64 << shift;
    Some(
        PRESSURE_CLAMP_SEGMENTS
            .saturating_mul(mss)
            .div_ceil(unit)
            .saturating_mul(unit),
    )
}

/// One ACK's window: frame, time, bytes.
type WindowAt = (u64, Timestamp, u64);

/// A run of consecutive receiver ACKs whose window was at or below the clamp, after a
/// window of at least [`COLLAPSE_FROM`] clamps.
#[derive(Copy, Clone, Debug)]
struct LowRun {
    /// The largest window before the fall.
    from: WindowAt,
    first: WindowAt,
    last: WindowAt,
    /// The right edge (ACK + window) at the first and at the last ACK of the run.
    edge_first: u64,
    edge_last: u64,
    acks: u64,
    /// The largest window in the run, and the clamp it was held to.
    max: u64,
    ceiling: u64,
}

impl LowRun {
    fn duration_ns(&self) -> u64 {
        self.last.1.elapsed_since(self.first.1)
    }

    /// How far the right edge moved on while at the clamp: what the application read.
    fn read(&self) -> u64 {
        self.edge_last.saturating_sub(self.edge_first)
    }

    /// At the clamp for [`COLLAPSE_MIN_ROUNDS`] RTTs while the application read
    /// [`COLLAPSE_MIN_READ`] clamps: the memory-pressure shape.
    fn held(&self, rtt_ns: u64) -> bool {
        self.duration_ns() >= rtt_ns.saturating_mul(COLLAPSE_MIN_ROUNDS)
            && self.read() >= COLLAPSE_MIN_READ.saturating_mul(self.ceiling)
    }
}

/// The receiver's windows as the memory-pressure shape needs them.
#[derive(Default)]
struct Collapse {
    /// The clamp, once the SYNs gave it (they come before any ACK of data).
    ceiling: Option<u64>,
    peak: Option<WindowAt>,
    run: Option<LowRun>,
    /// The longest run that ended.
    best: Option<LowRun>,
}

impl Collapse {
    fn on_ack(
        &mut self,
        frame: u64,
        ts: Timestamp,
        w: u64,
        ack: Option<u64>,
        ceiling: impl FnOnce() -> Option<u64>,
    ) {
        if self.ceiling.is_none() {
            self.ceiling = ceiling();
        }
        let ceiling = self.ceiling;
        let at = (frame, ts, w);
        let low = match (ceiling, ack, self.peak) {
            (Some(c), Some(a), Some(p))
                if w > 0 && w <= c && p.2 >= COLLAPSE_FROM.saturating_mul(c) =>
            {
                Some((c, a.saturating_add(w)))
            }
            _ => None,
        };
        match (low, self.run.as_mut()) {
            (Some((_, edge)), Some(r)) => {
                r.last = at;
                r.edge_last = r.edge_last.max(edge);
                r.acks += 1;
                r.max = r.max.max(w);
            }
            (Some((c, edge)), None) => {
                self.run = Some(LowRun {
                    from: self.peak.unwrap_or(at),
                    first: at,
                    last: at,
                    edge_first: edge,
                    edge_last: edge,
                    acks: 1,
                    max: w,
                    ceiling: c,
                });
            }
            (None, _) => self.end_run(),
        }
        if self.peak.is_none_or(|p| w > p.2) {
            self.peak = Some(at);
        }
    }

    fn end_run(&mut self) {
        if let Some(r) = self.run.take() {
            if self.best.is_none_or(|b| r.duration_ns() > b.duration_ns()) {
                self.best = Some(r);
            }
        }
    }

    /// The longest run, the one still going included.
    fn longest(&self) -> Option<LowRun> {
        match (self.best, self.run) {
            (Some(b), Some(r)) if r.duration_ns() > b.duration_ns() => Some(r),
            (Some(b), _) => Some(b),
            (None, r) => r,
        }
    }
}

/// What rwnd.limited priced, for the findings that name its cause.
struct Priced<'a> {
    rtt: u64,
    /// The RTT the window cycled at (rwnd.limited's median sample).
    cycle: u64,
    cost: u64,
    share: f64,
    /// The transfer's average rate, bytes/s.
    avg: f64,
    without: &'a str,
    confidence: Confidence,
}

/// `rwnd.not_growing` with the memory-pressure shape: the window fell to the clamp and
/// stayed there for [`COLLAPSE_MIN_ROUNDS`] RTTs while the reader kept up, no zero window.
fn pressure_collapse(
    conn: &Connection<'_>,
    d: &Dir,
    r: &Roles,
    p: &Priced<'_>,
    limited: &Finding,
) -> Option<Finding> {
    if d.zero_count > 0 {
        return None;
    }
    let run = d.collapse.longest().filter(|r| r.held(p.rtt))?;
    let read = run.read();
    let mut f = conn.finding(FindingId::RwndNotGrowing);
    f.cost_ns = p.cost;
    f.share = limited.share;
    f.explanation = format!(
        "The {rx}'s advertised window fell from {from} B to {first} B within {fall} and \
         stayed at or below {ceil} B (4 × its MSS, rounded to its window scale) for {held} \
         ({acks} ACKs) while its application kept reading: the window's right edge moved on \
         by {read} B and never closed to zero. That is Linux under TCP memory pressure: \
         when the host's TCP memory (/proc/net/sockstat 'TCP: … mem', in pages) rises above \
         net.ipv4.tcp_mem's middle value, every socket's rcv_ssthresh is clamped to 4 × \
         advmss (tcp_adjust_rcv_ssthresh, from tcp_grow_window and __tcp_select_window) \
         until the memory is back below tcp_mem's low value; a fixed SO_RCVBUF never falls \
         from a large window, and a reader that stopped closes it to zero. The {tx} waited \
         on the window {pct:.0} % of the transfer. At the clamp the ceiling is {ceil} B per \
         {rtt} RTT = {clamp_rate}; the transfer averaged {avg}. {without}, so it cost ≈ \
         {cost}.",
        rx = r.receiver,
        tx = r.sender,
        from = thousands(run.from.2),
        first = thousands(run.first.2),
        fall = ms(run.first.1.elapsed_since(run.from.1)),
        ceil = thousands(run.ceiling),
        held = ms(run.duration_ns()),
        acks = run.acks,
        read = thousands(read),
        pct = p.share * 100.0,
        rtt = ms(p.cycle),
        clamp_rate = rate(run.ceiling as f64 / (p.cycle.max(1) as f64 / 1e9)),
        avg = rate(p.avg),
        without = p.without,
        cost = ms(p.cost),
    );
    f.cite(
        run.from.0,
        run.from.1,
        format!(
            "the {}'s largest window before the fall: {} B",
            r.receiver,
            thousands(run.from.2)
        ),
    );
    f.cite(
        run.first.0,
        run.first.1,
        format!(
            "its window at the memory-pressure clamp: {} B",
            thousands(run.first.2)
        ),
    );
    f.cite(
        run.last.0,
        run.last.1,
        format!(
            "still at the clamp {} later: {} B",
            ms(run.duration_ns()),
            thousands(run.last.2)
        ),
    );
    for e in limited.evidence.iter().take(CITED_FULL - 1) {
        f.cite(e.frame, e.ts, e.note.clone());
    }
    f.fix = vec![Fix {
        host: r.receiver_host,
        action: format!(
            "on the {}: compare /proc/net/sockstat 'TCP: … mem' with net.ipv4.tcp_mem and \
             watch nstat TCPMemoryPressures (`tcpwhy host`: host.tcp_mem_pressure gives the \
             values); raise tcp_mem if the host has the memory free, and look for what holds \
             TCP memory (socket or fd leaks: sockstat 'alloc', orphans; large unread \
             receive queues in ss -tm)",
            r.receiver
        ),
    }];
    f.confidence = p.confidence;
    Some(f)
}

/// Window scaling was not in use on this connection (the handshake was seen).
fn dir_wscale_off(s: &ConnSummary) -> bool {
    s.dirs
        .iter()
        .any(|d| d.wscale == Some(WindowScale::NotNegotiated))
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2 MB from 10 × 1448 B doubling: 14,480 × (2^8 − 1) ≥ 2,097,152 > 14,480 × 127, so
    /// 8 rounds, the last leaving 7 RTTs after the first.
    #[test]
    fn unlimited_time_is_slow_start_rounds() {
        assert_eq!(unlimited_ns(2_097_152, 1448, 150_000_000), 7 * 150_000_000);
        assert_eq!(unlimited_ns(14_480, 1448, 10), 0);
        assert_eq!(unlimited_ns(14_481, 1448, 10), 10);
        assert_eq!(unlimited_ns(u64::MAX, 0, u64::MAX), u64::MAX);
    }

    /// Both SYNs with MSS 1460, window scale `shift` and timestamps (the lab's veths:
    /// shift 10 for its tcp_rmem max of 32 MB).
    fn lab_model(shift: u8) -> tcpwhy_track::ConnModel {
        let o = tcpwhy_track::SynOptions {
            mss: Some(1460),
            wscale: Some(shift),
            sack_permitted: true,
            timestamps: true,
        };
        let mut m = tcpwhy_track::ConnModel::default();
        m.dirs[0].syn = tcpwhy_track::SynSeen::Options(o);
        m.dirs[1].syn = tcpwhy_track::SynSeen::Options(o);
        m
    }

    /// 4 × 1460 = 5,840 rounded up to the scale unit: 6,144 (6 × 1024) at shift 10, as
    /// tcp-mem-pressure's client advertised (client.pcap frames 566 → 1788); 5,888
    /// (46 × 128) at shift 7. Without window scaling, 5,840; without the SYNs, unknown.
    #[test]
    fn the_pressure_clamp_is_four_mss_rounded_to_the_scale() {
        assert_eq!(pressure_ceiling(&lab_model(10), Side::Client), Some(6_144));
        let mut m = lab_model(7);
        assert_eq!(pressure_ceiling(&m, Side::Client), Some(5_888));
        m.dirs[1].syn = tcpwhy_track::SynSeen::Options(tcpwhy_track::SynOptions {
            mss: Some(1460),
            wscale: None,
            sack_permitted: true,
            timestamps: true,
        });
        assert_eq!(pressure_ceiling(&m, Side::Client), Some(5_840));
        m.dirs[1].syn = tcpwhy_track::SynSeen::Cut { mss: None };
        assert_eq!(pressure_ceiling(&m, Side::Client), None);
    }

    /// Receiver ACKs 5 ms apart (frame = index + 1) with these windows; the ACK number
    /// advances by `step` bytes each.
    fn feed(windows: &[u64], step: u64) -> Collapse {
        let mut c = Collapse::default();
        for (i, &w) in windows.iter().enumerate() {
            let i = i as u64;
            let ts = Timestamp(i as i64 * 5_000_000);
            c.on_ack(i + 1, ts, w, Some(i * step), || Some(5_888));
        }
        c
    }

    /// Seed 04's shape: autotuning grew the window to 3 MB, pressure began, the window
    /// drained (the right edge does not move back) to the clamp and stayed there while
    /// each ACK acknowledged 4 segments: 40 ACKs at the clamp over 195 ms, 40 × 5,792 B
    /// read beyond the first.
    #[test]
    fn a_window_held_at_the_clamp_after_a_large_one_is_pressure() {
        let mut w = vec![65_536, 1_048_576, 3_145_728, 1_572_864, 262_144, 24_576];
        w.extend([5_888; 40]);
        let c = feed(&w, 5_792);
        let r = c.longest().expect("a run at the clamp");
        assert_eq!(r.from, (3, Timestamp(10_000_000), 3_145_728));
        assert_eq!((r.first.0, r.last.0, r.acks), (7, 46, 40));
        assert_eq!(r.duration_ns(), 195_000_000);
        assert_eq!(r.read(), 39 * 5_792);
        assert!(r.held(25_000_000));
        // Four RTTs of 50 ms would be 200 ms: not yet.
        assert!(!r.held(50_000_000));
    }

    /// A reader that stopped: the window drains to zero and the right edge stands still
    /// (each ACK's advance is the window's fall), so nothing was read at the clamp.
    #[test]
    fn a_window_draining_to_zero_is_not_pressure() {
        let mut c = Collapse::default();
        let edge = 200_000u64;
        for (i, w) in [65_536u64, 40_000, 20_000, 5_792, 4_344, 2_896, 1_448, 0]
            .into_iter()
            .enumerate()
        {
            let i = i as u64;
            c.on_ack(
                i + 1,
                Timestamp(i as i64 * 25_000_000),
                w,
                Some(edge - w),
                || Some(5_888),
            );
        }
        let r = c.longest().expect("a run below the clamp");
        assert_eq!(r.read(), 0);
        assert!(!r.held(1_000_000));
    }

    /// A fixed 32 KB SO_RCVBUF (fixed-rcvbuf: 34.7 → 39.1 KB) and autotuning's ramp on a
    /// new connection (class 4: 67 → 81 KB) never reach the clamp; a buffer small from
    /// the start (5,888 B all along) never fell from a large window.
    #[test]
    fn flat_and_ramping_windows_have_no_run() {
        assert!(feed(&[34_688, 36_352, 39_168, 39_168, 39_168], 1448)
            .longest()
            .is_none());
        assert!(feed(&[67_072, 70_000, 75_000, 81_024], 1448)
            .longest()
            .is_none());
        assert!(feed(&[5_888; 50], 5_792).longest().is_none());
    }

    const MS: u64 = 1_000_000;

    /// Sweep s2-007-control, server.pcap (4 MiB at a 6 ms RTT, the sender's capture): the
    /// receiver's autotuning ramp held the sender at its window in short phases, 23.9 ms
    /// of a 163.2 ms transfer (frames 4 → 3707; the tracker: rwnd 23.865 ms, sender
    /// 139.321, app 0.024; the kernel's tcpi_rwnd_limited 32 ms of busy 168 ms). Its
    /// shortest data → ACK RTT is 6.27 ms (the handshake's, 15.09 ms, is the emulator's
    /// slow first packet): slow start needs 9 rounds for 4,194,304 B
    /// (14,480 × (2^9 − 1) ≥ 4,194,304 > 14,480 × 255), 8 × 6.27 = 50.2 ms after the
    /// first. The transfer took 113 ms longer, so all 23.9 ms window-limited cost time.
    /// The rule before (share ≥ 0.5, ≥ 4 RTTs) named nothing: 14.6 % of the time.
    #[test]
    fn short_window_limited_phases_of_a_long_transfer_cost_their_time() {
        let l = LimitTimes {
            rwnd_ns: 23_865_000,
            zero_window_ns: 0,
            sender_ns: 139_321_000,
            app_ns: 24_000,
        };
        let alt = unlimited_ns(4_194_304, 1448, 6_270_000);
        assert_eq!(alt, 8 * 6_270_000);
        let span = 163_210_000;
        assert_eq!(limited_cost(&l, span, alt), 23_865_000);
        assert!((l.rwnd_ns as f64 / l.total_ns() as f64) < 0.5);
    }

    /// Sweep s1-016-bulk, client.pcap (a 598,016 B upload at a 72.5 ms RTT): the server's
    /// window capped the fifth and sixth rounds (10, 20, 40, 80, 115, 148 segments; the
    /// tracker 72.9 ms window-limited, the kernel 76 ms), but the 413 segments needed six
    /// rounds without any window too (10 + 20 + 40 + 80 + 160 < 413): 366.6 ms from first
    /// to last data against slow start's 5 × 72.48 = 362.4 ms, and of those the tracker
    /// counted 294.1 ms in a limit (none before the first ACK of data reached the client).
    /// The window cost at most 4.2 ms, not the 72.9 it held the sender: a transfer no
    /// slower than slow start costs nothing, so it is not named.
    #[test]
    fn window_limited_rounds_that_add_no_round_cost_little() {
        let l = LimitTimes {
            rwnd_ns: 72_934_000,
            zero_window_ns: 0,
            sender_ns: 221_205_000,
            app_ns: 0,
        };
        let alt = unlimited_ns(598_016, 1448, 72_480_000);
        assert_eq!(alt, 5 * 72_480_000);
        assert_eq!(limited_cost(&l, 366_617_000, alt), 0);
        let all_counted = LimitTimes {
            sender_ns: 300 * MS,
            ..l
        };
        assert_eq!(
            limited_cost(&all_counted, 366_617_000, alt),
            366_617_000 - 5 * 72_480_000
        );
        assert_eq!(limited_cost(&all_counted, 350 * MS, alt), 0);
        assert_eq!(limited_cost(&LimitTimes::default(), 10_000 * MS, alt), 0);
    }

    #[test]
    fn thousands_groups_digits() {
        assert_eq!(thousands(65_535), "65,535");
        assert_eq!(thousands(999), "999");
        assert_eq!(thousands(1_000_000), "1,000,000");
    }
}
