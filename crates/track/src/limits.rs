//! What limited one direction's transfer, as shares of its time (T-RAT's question: "what
//! limited this transfer?"): the receiver's window, the sender's own window (congestion
//! window or send buffer), or the sending application.
//!
//! Capture time between two events of the direction (its data, the peer's ACKs) goes to
//! the state after the earlier one, as the *sender* saw it:
//! - **receiver window** (`rwnd`): the sender's highest byte sent is within one segment
//!   (the sender's segment size — the MSS less the timestamp option's 12 bytes when both
//!   SYNs had it, as Linux's `tcp_snd_wnd_test` tests a full `mss_now` segment — or the
//!   largest segment the sender has sent if smaller) of the right edge
//!   the receiver advertised (ACK + window, RFC 9293 §3.8.6.2.1), or that
//!   window is zero (`zero_window`, a part of `rwnd`);
//! - **application** (`app`): everything sent is acknowledged and the window is open, yet
//!   the sender sends nothing. Counted only when the same transfer goes on afterwards: the
//!   sender sends new data within [`MAX_APP_GAP_NS`] and the peer sent no data meanwhile
//!   (a new request would make it a pause between exchanges, not a transfer held back);
//! - **sender** (`sender`): data outstanding below the receiver's edge: the congestion
//!   window or the send buffer holds it back. Which of the two the wire cannot tell per
//!   instant; the `sndbuf.limited` detector decides per connection.
//!
//! Vantage: the sender acts on an ACK when it arrives *there*. An ACK seen at the capture
//! point reaches the sender half the capture-to-sender round trip later, and the data it
//! releases is seen here a full capture-to-sender round trip (`lag`) after the ACK: that
//! leg is SYN→SYN/ACK when the sender is the server, SYN/ACK→ACK when it is the client
//! (docs/tracking.md, "Vantage point"), and any TSval echo of the sender's; the shortest
//! of them counts, because none can be shorter than the round trip (the sender cannot
//! answer a segment before it arrived) while any can be longer (a slow first packet, a
//! delayed answer). So
//! ACKs take effect here `lag` after they were seen: exact at the sender (lag ≈ 0), an
//! estimate at the receiver (lag ≈ RTT) or in the middle. Wireshark's "window full" flag
//! compares data with the last ACK seen at the capture point, so at a receiver it almost
//! never fires (no-window-scaling/client.pcap: 0, server.pcap: 514); this does.
//!
//! Known error: a handshake leg inflated by a slow host (tcptrace-discard-solaris.pcap:
//! the Solaris client ACKed the SYN/ACK after 47 ms, its data was ACKed within 2–7 ms;
//! the lab's emulator delays a connection's first packets: 36 ms SYN → SYN/ACK for a
//! 14 ms path in sweep s1-039's client capture) makes the lag too long, and the view too
//! old: more time counts as `rwnd` — until the first TSval echo shows the shorter round
//! trip (without timestamps, for the whole connection).
//!
//! Cost: a few comparisons per segment and a fixed ring of [`ACK_RING`] ACKs per
//! direction; nothing is allocated per packet.

use serde::{Deserialize, Serialize};
use tcpwhy_capture::Timestamp;

/// A pause with nothing outstanding longer than this is a pause between transfers, not a
/// transfer held back by its application (the bound of `app.limited`'s gaps).
pub const MAX_APP_GAP_NS: u64 = 1_000_000_000;
/// Silences longer than this (no data, no ACK of this direction) are not counted in any
/// state but the zero window: a transfer held by a window sends or ACKs something every
/// RTT, so a longer silence is a pause, a dead peer or retransmission backoff
/// (zeek-http-206-example-b.pcap stream 0: 80 s of RTO backoff into a vanished client).
/// A zero window is the receiver's explicit hold and counts however long the persist
/// timer's probes are apart (tcptrace-zwnd.pcap: 22 s).
pub const MAX_SILENCE_NS: u64 = 1_000_000_000;
/// ACKs waiting to take effect at the sender (seen less than `lag` ago). A fast receiver
/// ACKs every second segment: 64 covers 128 segments per capture-to-sender round trip;
/// beyond that, a new ACK replaces the newest waiting one (it supersedes it moments later).
pub const ACK_RING: usize = 64;
/// A capture-to-sender round trip shorter than this is the sender's own processing (the
/// tracker's `HANDSHAKE_NOISE_NS`): the capture is at the sender, whose data leaves
/// microseconds after the ACK that releases it, so ACKs take effect at once. (Left at
/// its 39 µs SYN/ACK time, no-window-scaling/server.pcap's frame 111, sent 8 µs after an
/// ACK, was judged against the ACK before.) On a LAN this also treats a receiver-side
/// capture as if at the sender: an error of less than a millisecond per round.
pub const LAG_NOISE_NS: u64 = 1_000_000;
/// RFC 894's Ethernet MTU (1500) less the IPv4 and TCP headers: the largest segment
/// without jumbo frames. The tracker's segment size when neither the handshake nor the
/// data told one (RFC 9293's default for IPv4 is 536; Ethernet's 1460 is far more common
/// and errs towards "not full"), and the detectors' cap for a sender whose SYNs' MSS was
/// not read (TSO super-segments are not segments).
pub const ETHERNET_MSS: u64 = 1460;

/// Time of one direction spent in each limit, in nanoseconds (docs/tracking.md).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Serialize, Deserialize)]
pub struct LimitTimes {
    /// The receiver's advertised window was full (including zero-window time).
    pub rwnd_ns: u64,
    /// Of `rwnd_ns`, the time the window was zero.
    pub zero_window_ns: u64,
    /// Data outstanding below the receiver's edge: congestion window or send buffer.
    pub sender_ns: u64,
    /// Nothing outstanding, window open, and the transfer went on afterwards.
    pub app_ns: u64,
}

impl LimitTimes {
    /// Time counted in any state.
    pub fn total_ns(&self) -> u64 {
        self.rwnd_ns
            .saturating_add(self.sender_ns)
            .saturating_add(self.app_ns)
    }

    pub fn add(&mut self, o: &LimitTimes) {
        self.rwnd_ns = self.rwnd_ns.saturating_add(o.rwnd_ns);
        self.zero_window_ns = self.zero_window_ns.saturating_add(o.zero_window_ns);
        self.sender_ns = self.sender_ns.saturating_add(o.sender_ns);
        self.app_ns = self.app_ns.saturating_add(o.app_ns);
    }
}

/// The limit in force, as the sender saw it.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum Limit {
    /// Not counting: no data sent yet, no ACK seen yet, or the sender's FIN went out.
    None,
    ZeroWindow,
    Rwnd,
    Sender,
    App,
}

#[derive(Copy, Clone, Debug, Default)]
struct AckView {
    /// When it takes effect at the sender, in capture time.
    effective: Timestamp,
    ack: u64,
    edge: u64,
}

/// Per-direction state of the limit accounting.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Capture-to-sender round trip, when known: the shortest sample so far.
    lag_ns: Option<u64>,
    /// Allocated at the first ACK that has to wait (empty until then): most connections
    /// of a busy capture never need it, and inline it made every tracked connection
    /// 3 KB larger (the 1 M-connection bench capture).
    ring: Box<[AckView]>,
    ring_head: usize,
    ring_len: usize,
    /// The receiver's ACK and right edge as the sender last saw them (relative sequence
    /// numbers of this direction).
    view: Option<(u64, u64)>,
    /// End of the highest byte sent (relative).
    highest: Option<u64>,
    mss: u64,
    /// The largest segment this direction has sent: a sender of small messages is "at
    /// the edge" only when its next small message would not fit, however large the MSS
    /// (zeek-echo-connections.pcap: 1-byte echoes under a 65,495-byte loopback MSS and a
    /// 64,256-byte window were all "window full" when the slack was the MSS).
    largest_segment: u64,
    state: Limit,
    since: Timestamp,
    /// App time waiting for the transfer to go on.
    pending_app_ns: u64,
    /// The peer sent data since the app pause began.
    peer_spoke: bool,
    done: bool,
    pub(crate) out: LimitTimes,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            lag_ns: None,
            ring: Box::default(),
            ring_head: 0,
            ring_len: 0,
            view: None,
            highest: None,
            mss: 0,
            largest_segment: 0,
            state: Limit::None,
            since: Timestamp::default(),
            pending_app_ns: 0,
            peer_spoke: false,
            done: false,
            out: LimitTimes::default(),
        }
    }
}

impl Limits {
    /// [`Limits::default`] holding this one's ring (allocated or not) for the next
    /// connection ([`crate::reuse`]): `ring_len` 0 makes its old entries unread.
    pub(crate) fn emptied(self) -> Self {
        Limits {
            ring: self.ring,
            ..Limits::default()
        }
    }

    /// The capture-to-sender round trip from the handshake.
    pub(crate) fn set_handshake_lag(&mut self, ns: u64) {
        self.shorter_lag(ns);
    }

    /// A round-trip sample: the shortest so far is the lag. ACKs already waiting were
    /// timed with the longer one: they take effect earlier by the difference (not
    /// before the time already accounted), or they would hold the view back behind the
    /// first packets' delay (sweep s1-055's client capture: 8 ms counted as `rwnd` at a
    /// 1 ms RTT behind an 8.7 ms SYN → SYN/ACK).
    fn shorter_lag(&mut self, ns: u64) {
        let old = self.lag_ns.unwrap_or(u64::MAX);
        if ns >= old {
            return;
        }
        self.lag_ns = Some(ns);
        if old == u64::MAX {
            return;
        }
        let by = i64::try_from(old - ns).unwrap_or(i64::MAX);
        for k in 0..self.ring_len {
            let a = &mut self.ring[(self.ring_head + k) % ACK_RING];
            a.effective = Timestamp(a.effective.0.saturating_sub(by).max(self.since.0));
        }
    }

    /// A TSval echo by the sender: a capture-to-sender round trip plus its ACK delay.
    /// Like the handshake's leg it cannot be shorter than the round trip (the sender
    /// cannot echo a TSval before a segment carrying it reached it), so the shortest of
    /// all is the estimate: a handshake leg inflated by a slow first packet (the lab's
    /// emulator: 36 ms for a 14 ms path in sweep s1-039's client capture) is replaced by
    /// the first echo that shows the path is shorter.
    pub(crate) fn echo_sample(&mut self, ns: u64) {
        self.shorter_lag(ns);
    }

    /// The segment size the sender may use: the MSS the receiver announced in its SYN.
    pub(crate) fn set_mss(&mut self, mss: u64) {
        self.mss = mss;
    }

    /// Adds the time since the last change to the state in force, up to `t`.
    #[inline]
    fn account(&mut self, t: Timestamp) {
        let dt = t.elapsed_since(self.since);
        self.since = t;
        if dt > MAX_SILENCE_NS && self.state != Limit::ZeroWindow {
            if self.state == Limit::App {
                // The pause was not a transfer held back either.
                self.pending_app_ns = u64::MAX;
            }
            return;
        }
        let o = &mut self.out;
        match self.state {
            Limit::None => {}
            Limit::ZeroWindow => {
                o.rwnd_ns = o.rwnd_ns.saturating_add(dt);
                o.zero_window_ns = o.zero_window_ns.saturating_add(dt);
            }
            Limit::Rwnd => o.rwnd_ns = o.rwnd_ns.saturating_add(dt),
            Limit::Sender => o.sender_ns = o.sender_ns.saturating_add(dt),
            Limit::App => self.pending_app_ns = self.pending_app_ns.saturating_add(dt),
        }
    }

    /// The state after a change of the view or of the highest byte sent.
    #[inline]
    fn classify(&mut self) {
        if self.done {
            self.state = Limit::None;
            return;
        }
        let (Some((ack, edge)), Some(high)) = (self.view, self.highest) else {
            return;
        };
        let mss = if self.mss == 0 {
            ETHERNET_MSS
        } else {
            self.mss
        };
        let slack = match self.largest_segment {
            0 => mss,
            l => l.min(mss),
        };
        let next = if edge <= ack {
            Limit::ZeroWindow
        } else if high.saturating_add(slack) > edge {
            Limit::Rwnd
        } else if high <= ack {
            Limit::App
        } else {
            Limit::Sender
        };
        if next == Limit::App && self.state != Limit::App {
            self.pending_app_ns = 0;
            self.peer_spoke = false;
        }
        self.state = next;
    }

    /// Applies the ACKs that have reached the sender by `t`.
    #[inline(always)]
    fn advance(&mut self, t: Timestamp) {
        // At the sender (lag 0) nothing ever waits: keep that path to one comparison.
        if self.ring_len > 0 {
            self.advance_ring(t);
        }
    }

    #[inline(never)]
    fn advance_ring(&mut self, t: Timestamp) {
        while self.ring_len > 0 {
            let a = self.ring[self.ring_head];
            if a.effective > t {
                break;
            }
            self.ring_head = (self.ring_head + 1) % ACK_RING;
            self.ring_len -= 1;
            self.account(a.effective);
            self.apply(a.ack, a.edge);
        }
    }

    #[inline]
    fn apply(&mut self, ack: u64, edge: u64) {
        // A reordered or old ACK does not move the sender's view back, and a receiver
        // does not move its right edge left (RFC 9293 §3.8.6.2.2; Linux never shrinks
        // the window): a zero window is the ACK reaching the edge.
        let (ack, edge) = match self.view {
            // A zero window closes the view whatever edge came before: it is news, and
            // without a known window scale the earlier edges were not real ones.
            Some((a, _)) if edge <= ack => (ack.max(a), ack.max(a)),
            Some((a, e)) => (ack.max(a), edge.max(e).max(ack)),
            None => (ack, edge.max(ack)),
        };
        self.view = Some((ack, edge));
        self.classify();
    }

    /// The receiver's ACK `ack` with window `window_bytes`, seen at `t`.
    #[inline(always)]
    pub(crate) fn on_ack(&mut self, t: Timestamp, ack: u64, window_bytes: u64) {
        self.advance(t);
        let edge = ack.saturating_add(window_bytes);
        let lag = self.lag_ns.filter(|&l| l >= LAG_NOISE_NS).unwrap_or(0);
        if lag == 0 {
            self.account(t);
            self.apply(ack, edge);
            return;
        }
        let effective = Timestamp(t.0.saturating_add(i64::try_from(lag).unwrap_or(i64::MAX)));
        let view = AckView {
            effective,
            ack,
            edge,
        };
        if self.ring.is_empty() {
            self.ring = vec![AckView::default(); ACK_RING].into_boxed_slice();
        }
        if self.ring_len == ACK_RING {
            let newest = (self.ring_head + ACK_RING - 1) % ACK_RING;
            self.ring[newest] = AckView {
                effective: self.ring[newest].effective,
                ..view
            };
        } else {
            self.ring[(self.ring_head + self.ring_len) % ACK_RING] = view;
            self.ring_len += 1;
        }
    }

    /// Data of this direction, `len` bytes ending at `end` (relative), seen at `t`.
    #[inline(always)]
    pub(crate) fn on_data(&mut self, t: Timestamp, end: u64, len: u32) {
        self.largest_segment = self.largest_segment.max(u64::from(len));
        self.advance(t);
        self.account(t);
        if self.state == Limit::App && self.highest.is_some_and(|h| end > h) {
            if !self.peer_spoke && self.pending_app_ns <= MAX_APP_GAP_NS {
                self.out.app_ns = self.out.app_ns.saturating_add(self.pending_app_ns);
            }
            self.pending_app_ns = 0;
        }
        self.highest = Some(self.highest.map_or(end, |h| h.max(end)));
        self.classify();
    }

    /// The peer sent data (a request, or its own transfer).
    #[inline]
    pub(crate) fn on_peer_data(&mut self) {
        self.peer_spoke = true;
    }

    /// The sender's FIN or RST: the transfer is over.
    pub(crate) fn on_end(&mut self, t: Timestamp) {
        if !self.done {
            self.advance(t);
            self.account(t);
            self.done = true;
            self.state = Limit::None;
        }
    }

    /// The limit in force now.
    pub(crate) fn state(&self) -> Limit {
        self.state
    }

    /// The totals; time waiting in an app pause that never ended is not counted.
    pub(crate) fn times(&self) -> LimitTimes {
        self.out
    }
}
