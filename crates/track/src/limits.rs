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
//!   window is zero (`zero_window`, a part of `rwnd`). Time at the edge counts once the
//!   sender sends new data after it (it had more queued); ended by its FIN, the peer's
//!   next request or the capture's end instead, it is the sender's (a response that
//!   fits the window ends at its edge; `Limits::settle_edge`);
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
//! ACKs take effect here `lag` (the current estimate) after they were seen: exact at the
//! sender (lag ≈ 0), an estimate at the receiver (lag ≈ RTT) or in the middle, where the
//! data's timestamp echo also applies every ACK it proves the sender had
//! (`advance_echoed`). Wireshark's "window full" flag
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

use crate::seq::seq_le;
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
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
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

/// A `Rwnd` kept over an ACK that opened the window, until what the sender does next
/// decides whose time it was: new data that fills the window to its edge again (before
/// the next ACK takes effect) says the window held the sender until it could answer,
/// where Linux's rwnd chrono runs too (the ACK waited for the socket lock, or the host
/// was slow to answer: sweep s10-080's client, 0.8 ms; tcptrace-dsack's sender, ≈ 4 ms
/// every time). Anything else says it did not: data that stops short of the edge (the
/// congestion window, pacing or TSO deferral held it: `tcp_write_xmit` stopped the
/// chrono), a retransmission, everything ACKed, the peer's data or the end (a sender
/// with nothing more to send: zeek-http-206-example-b stream 1, a response's last
/// flight, 73 ms before its final ACK took effect).
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Hold {
    None,
    /// Since the ACK that opened the window, no new data yet.
    Held,
    /// New data came: does it reach the edge before the next ACK takes effect?
    Burst,
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
    /// When it was seen at the capture point: it takes effect the lag as of now later.
    seen: Timestamp,
    ack: u64,
    edge: u64,
    /// Its TSval, when it had timestamps.
    tsval: Option<u32>,
    /// Its window field in bytes: scaled when the scale is known, raw when not
    /// ([`WindowFloor`]).
    field: u32,
}

/// The least the receiver's window can have been, whatever its scale: a Linux receiver
/// never moves its right edge left (`tcp_select_window`), so data the sender sent fits
/// under the edge of the latest ACK it had processed; the scale is one constant for the
/// connection, so a window field of `f` stands for at least `f` × the largest flight /
/// the field that flight was sent under — and for at least `f` itself, the shift being
/// 0 or more (RFC 7323 §2.2). With the snaplen cutting the SYN's window scale this is
/// what is known of the window (sweep s19-032 at snaplen 64: a 259 KB flight under a
/// field of 298, later rounds of 70 KB under the same field; s53-088 at the client: a
/// 33 KB flight held by the server's send buffer under fields near 64 K from a client
/// without window scaling). The flight is the sender's view of it, as this accounting
/// keeps it at any vantage.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub(crate) struct WindowFloor {
    /// The largest flight and the field it was sent under.
    flight: u64,
    field: u32,
    /// The smallest field in effect since.
    min_since: u32,
}

impl WindowFloor {
    /// The window's least value since the largest flight, in bytes; 0 before any.
    pub(crate) fn bytes(self) -> u64 {
        if self.field == 0 {
            return 0;
        }
        let floor = u128::from(self.flight) * u128::from(self.min_since) / u128::from(self.field);
        u64::try_from(floor)
            .unwrap_or(u64::MAX)
            .max(u64::from(self.min_since))
    }
}

/// Echo samples the lag is the shortest of ([`Limits::echo_sample`]).
const RECENT_ECHOES: usize = 4;

/// Per-direction state of the limit accounting.
#[derive(Clone, Debug)]
pub(crate) struct Limits {
    /// Capture-to-sender round trip, when known: the shortest recent sample
    /// ([`Limits::echo_sample`]).
    lag_ns: Option<u64>,
    /// The shortest capture-to-sender round trip seen: the path without queues.
    min_lag_ns: Option<u64>,
    /// [`Limits::waiting_lag`], derived by [`Limits::set_wait`].
    wait_ns: i64,
    recent_echoes: [u64; RECENT_ECHOES],
    recent_next: usize,
    /// The latest data came after everything sent was acknowledged (`Limit::App`).
    after_app: bool,
    /// Allocated at the first ACK that has to wait (empty until then): most connections
    /// of a busy capture never need it, and inline it made every tracked connection
    /// 3 KB larger (the 1 M-connection bench capture).
    ring: Box<[AckView]>,
    ring_head: usize,
    ring_len: usize,
    /// The receiver's ACK and right edge as the sender last saw them (relative sequence
    /// numbers of this direction).
    view: Option<(u64, u64)>,
    /// The window field of the ACK in that view.
    view_field: u32,
    floor: WindowFloor,
    /// End of the highest byte sent (relative).
    highest: Option<u64>,
    /// The highest byte sent when the sender last sent data again (RFC 6582's
    /// `recover`): until the receiver ACKs it, the sender is in loss recovery, where its
    /// reduced congestion window may hold it after an ACK opened the receiver's window.
    recover: Option<u64>,
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
    /// `Rwnd` held over an ACK that opened the window (see `classify`), and its time so
    /// far (`pending_rwnd_ns`), decided by what the sender does next.
    hold: Hold,
    pending_rwnd_ns: u64,
    /// `Rwnd` time with the data at the window's edge, not yet known to be the window's
    /// ([`Limits::settle_edge`]).
    pending_edge_ns: u64,
    /// When the data after the hold began (`Hold::Burst`).
    burst_since: Timestamp,
    /// The peer sent data since the app pause began.
    peer_spoke: bool,
    done: bool,
    pub(crate) out: LimitTimes,
}

impl Default for Limits {
    fn default() -> Self {
        Limits {
            lag_ns: None,
            min_lag_ns: None,
            wait_ns: 0,
            recent_echoes: [0; RECENT_ECHOES],
            recent_next: 0,
            after_app: false,
            ring: Box::default(),
            ring_head: 0,
            ring_len: 0,
            view: None,
            view_field: 0,
            floor: WindowFloor::default(),
            highest: None,
            recover: None,
            mss: 0,
            largest_segment: 0,
            state: Limit::None,
            since: Timestamp::default(),
            pending_app_ns: 0,
            hold: Hold::None,
            pending_rwnd_ns: 0,
            pending_edge_ns: 0,
            burst_since: Timestamp::default(),
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
        self.set_wait();
    }

    /// A shorter round trip than the lag: it is the lag now, for the ACKs already
    /// waiting too (they take effect the current lag after they were seen: [`AckView`]),
    /// or they would hold the view back behind the first packets' delay (sweep s1-055's
    /// client capture: 8 ms counted as `rwnd` at a 1 ms RTT behind an 8.7 ms SYN →
    /// SYN/ACK).
    /// Every sample reaches it or is longer than the lag it leaves, so `min_lag_ns` is
    /// the shortest round trip seen.
    fn shorter_lag(&mut self, ns: u64) {
        if self.lag_ns.is_none_or(|old| ns < old) {
            self.lag_ns = Some(ns);
        }
        self.min_lag_ns = Some(self.min_lag_ns.map_or(ns, |m| m.min(ns)));
    }

    /// A TSval echo by the sender: a capture-to-sender round trip plus its ACK delay.
    /// Like the handshake's leg it cannot be shorter than the round trip (the sender
    /// cannot echo a TSval before a segment carrying it reached it), so the shortest of
    /// the recent echoes is the estimate: a handshake leg inflated by a slow first
    /// packet (the lab's emulator: 36 ms for a 14 ms path in sweep s1-039's client
    /// capture) is replaced by the first echo that shows the path is shorter, and a
    /// queue that builds on the way lengthens the round trip for every echo after it.
    /// The shortest ever would apply each ACK a queue's delay before the sender saw it:
    /// sweep s10-064's client (18 ms path, a 925-packet FIFO at 5 Mbit/s, echoes of
    /// 97 ms) had the sender's answers to a full 59 KB window arrive "before" the ACKs
    /// that released them took effect, and counted 4.7 s of a window-limited transfer
    /// as the sender's own. "Recent" is the last [`RECENT_ECHOES`]: one echo stretched by
    /// the sender's pause, a delayed ACK or a lost segment is one of them, and they
    /// answer the ACKs of at most eight segments, within a round trip of any window
    /// larger than that. Only data that answer ACKs measure that loop: data after
    /// everything was acknowledged echo an ACK that waited through the sender's own pause
    /// (the lab's app-limited: every echo is a write 50 ms after the ACK on a 25 ms
    /// path), and a pure ACK's echo holds its delayed-ACK timer (a run of one-segment
    /// answers delays every one of them 40 ms), so those may only shorten the lag.
    ///
    /// Away from the sender (the shortest round trip seen at least [`LAG_NOISE_NS`]),
    /// waiting ACKs take effect after the longest of the recent echoes instead
    /// ([`Limits::set_wait`]). Every ACK that data echo takes effect with that data at
    /// the latest (`advance_echoed`), so the timer only places the ACKs no data answered
    /// soon, and a timer shorter than their round trip applies them before the sender
    /// could have seen them. Behind a queue that the flight itself fills and drains, the
    /// shortest of four echoes trailed the round trip by half (sweep s44-040's client: a
    /// send buffer and a 37 KB window taking turns into a 15 Mbit/s FIFO, echoes of
    /// 9.6–20.2 ms with the lag at 10.5–12.1 ms): the view ran ahead of the sender, its
    /// 37 KB flights looked like 9 KB, and the window held it 0 % of the time where the
    /// server's capture and tcp_info had 23 %. A stretched echo delays only the ACKs no
    /// data answered within it. The round trip the detectors read
    /// (`DirModel::round_trip_ns`: the path inside a pause) stays the shortest. At the
    /// sender ACKs take effect at once: there an echo is the sender's own delay (pacing,
    /// its qdisc), not a round trip.
    pub(crate) fn echo_sample(&mut self, ns: u64, data: bool) {
        if !data || self.after_app {
            self.shorter_lag(ns);
            self.set_wait();
            return;
        }
        self.recent_echoes[self.recent_next % RECENT_ECHOES] = ns;
        self.recent_next = self.recent_next.wrapping_add(1);
        let n = self.recent_next.min(RECENT_ECHOES);
        let recent = self.recent_echoes[..n].iter().copied().min().unwrap_or(ns);
        match self.lag_ns {
            Some(old) if recent > old && self.recent_next >= RECENT_ECHOES => {
                self.lag_ns = Some(recent)
            }
            _ => self.shorter_lag(recent),
        }
        self.set_wait();
    }

    /// The capture-to-sender round trip as of now (`DirModel::round_trip_ns`).
    pub(crate) fn lag_ns(&self) -> Option<u64> {
        self.lag_ns
    }

    /// The segment size the sender may use: the MSS the receiver announced in its SYN.
    pub(crate) fn set_mss(&mut self, mss: u64) {
        self.mss = mss;
    }

    /// Adds the time since the last change to the state in force, up to `t`.
    #[inline]
    fn account(&mut self, t: Timestamp) {
        let from = self.since;
        let dt = t.elapsed_since(from);
        self.since = t;
        if dt > MAX_SILENCE_NS && self.state != Limit::ZeroWindow {
            if self.state == Limit::App {
                // The pause was not a transfer held back either.
                self.pending_app_ns = u64::MAX;
            }
            return;
        }
        // Of a burst's spread downstream, what a queue on the path can explain.
        let queued = if self.waiting_lag() > 0 && self.hold == Hold::Burst {
            self.queue_ns()
                .saturating_sub(from.elapsed_since(self.burst_since))
                .min(dt)
        } else {
            0
        };
        let o = &mut self.out;
        match self.state {
            Limit::None => {}
            Limit::ZeroWindow => {
                o.rwnd_ns = o.rwnd_ns.saturating_add(dt);
                o.zero_window_ns = o.zero_window_ns.saturating_add(dt);
            }
            Limit::Rwnd if self.hold == Hold::Held => {
                self.pending_rwnd_ns = self.pending_rwnd_ns.saturating_add(dt)
            }
            // Away from the sender, while the data after the hold arrives: a release
            // that leaves the sender at once crosses a bottleneck one segment at a time,
            // so downstream of it the burst takes the bottleneck's time to arrive (sweep
            // s16-032's client: 2 segments per ACK arriving 1 ms apart at 12 Mbit/s, the
            // first stopping one short of the edge; s10-064's, a 925-packet FIFO at
            // 5 Mbit/s). Whose time that was is decided with the hold's. A burst spread
            // by a queue is spread by no more than the queue's delay, which the round
            // trip shows over its minimum (the burst's last segment waited behind the
            // others); a longer spread is the sender's pacing (a BBR sender pacing its
            // release on an uncongested path, sweep s12-029), which stops Linux's rwnd
            // chrono (`tcp_pacing_check` before `tcp_snd_wnd_test`). At the sender a
            // burst leaves at once, and a gap inside it is the sender's own.
            Limit::Sender if queued > 0 => {
                self.pending_rwnd_ns = self.pending_rwnd_ns.saturating_add(queued);
                o.sender_ns = o.sender_ns.saturating_add(dt - queued);
            }
            Limit::Rwnd => self.pending_edge_ns = self.pending_edge_ns.saturating_add(dt),
            Limit::Sender => o.sender_ns = o.sender_ns.saturating_add(dt),
            Limit::App => self.pending_app_ns = self.pending_app_ns.saturating_add(dt),
        }
    }

    /// The state after a change of the view (`by_data` false: an ACK reached the sender)
    /// or of the highest byte sent (`by_data` true).
    ///
    /// A window that held the sender holds it until the sender sends again: an ACK that
    /// opens the window does not by itself end the limit. Linux keeps
    /// TCP_CHRONO_RWND_LIMITED running from the `tcp_write_xmit` whose window test
    /// failed until a later `tcp_write_xmit` ends without that failure (tcp_output.c),
    /// and that runs when the ACK is processed, which on a busy host is not when it
    /// arrived: an ACK that finds the socket owned by the writing application waits in
    /// the backlog until `release_sock` (sweep s10-080's client capture: 0.8 ms between
    /// ACKs opening two segments of a 64 KiB window and the data they released, 338 KB
    /// queued, the kernel's chrono 116 ms rwnd-limited of 124 ms busy where counting
    /// those gaps as the sender's own left 57 ms). What the sender does next decides
    /// whose time the hold was ([`Hold`]). An ACK
    /// of everything sent still ends it (tcp_clean_rtx_queue stops the chronos), and so
    /// does any ACK during loss recovery (data sent again and not yet all ACKed): there
    /// the reduced congestion window may be what holds the sender after the ACK
    /// (tcp_cwnd_test fails first, and `tcp_write_xmit` stops the chrono), where outside
    /// recovery an ACK of new data only frees room in cwnd.
    #[inline]
    fn classify(&mut self, by_data: bool) {
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
        let fresh = if edge <= ack {
            Limit::ZeroWindow
        } else if high.saturating_add(slack) > edge {
            Limit::Rwnd
        } else if high <= ack {
            Limit::App
        } else {
            Limit::Sender
        };
        let next = if fresh == Limit::Sender
            && !by_data
            && matches!(self.state, Limit::Rwnd | Limit::ZeroWindow)
            && self.recover.is_none_or(|r| ack >= r)
        {
            self.hold = Hold::Held;
            Limit::Rwnd
        } else {
            match self.hold {
                // Closed again: still the window; all ACKed: the sender had no more.
                Hold::Held if !by_data => self.settle_held(fresh != Limit::App),
                // The data after the hold reached the edge: the window was the limit.
                Hold::Burst if by_data && fresh == Limit::Rwnd => self.settle_held(true),
                // An ACK took effect before it did: something else held the sender.
                Hold::Burst if !by_data => self.settle_held(false),
                _ => {}
            }
            fresh
        };
        if next == Limit::App && self.state != Limit::App {
            self.pending_app_ns = 0;
            self.peer_spoke = false;
        }
        self.state = next;
    }

    /// Ends the time the data spent at the window's edge: the window's when the sender
    /// sends new data after it, which shows it had more queued (Linux's rwnd chrono runs
    /// only while `tcp_write_xmit` finds a queued skb the window does not admit,
    /// `tcp_snd_wnd_test`, tcp_output.c); the sender's when the hold ends without: its
    /// FIN or RST alone, the peer's next request, the end of the capture. A response
    /// that fits the window can end within a segment of its edge (sweep s96-086's
    /// client: 80,560 B under 80,896 B, then the server's FIN one round trip later,
    /// 361 ms that were nobody's limit; tcp_info rwnd_limited 0). An ACK of everything
    /// decides nothing: under a window of two segments every ACK is one, and the data
    /// it releases shows the sender had more (tests/traces.rs).
    fn settle_edge(&mut self, rwnd: bool) {
        let o = &mut self.out;
        if rwnd {
            o.rwnd_ns = o.rwnd_ns.saturating_add(self.pending_edge_ns);
        } else {
            o.sender_ns = o.sender_ns.saturating_add(self.pending_edge_ns);
        }
        self.pending_edge_ns = 0;
    }

    /// Ends a held `Rwnd`: its time to `rwnd` or to `sender`.
    fn settle_held(&mut self, rwnd: bool) {
        if self.hold == Hold::None {
            return;
        }
        let o = &mut self.out;
        if rwnd {
            o.rwnd_ns = o.rwnd_ns.saturating_add(self.pending_rwnd_ns);
        } else {
            o.sender_ns = o.sender_ns.saturating_add(self.pending_rwnd_ns);
        }
        self.hold = Hold::None;
        self.pending_rwnd_ns = 0;
    }

    /// Applies the ACKs that have reached the sender by `t`.
    #[inline(always)]
    fn advance(&mut self, t: Timestamp) {
        // At the sender (lag 0) nothing ever waits: keep that path to one comparison.
        if self.ring_len > 0 {
            self.advance_ring(t);
        }
    }

    /// Every waiting ACK takes effect the lag *as of now* after it was seen (never
    /// before the time already accounted). A lag fixed when each ACK was queued would
    /// ratchet: each shorter estimate moved the waiting ACKs earlier and no longer one
    /// moved them back, so on a path whose queue held the round trip near 66 ms with
    /// estimates wavering by 1–2 ms, ACKs took effect up to 14 ms early and the view ran
    /// 20 KB ahead of a full window (sweep s16-032's client: 0.2 ms of the kernel's
    /// 144 ms rwnd-limited).
    #[inline(never)]
    fn advance_ring(&mut self, t: Timestamp) {
        let lag = self.waiting_lag();
        while self.ring_len > 0 {
            let a = self.ring[self.ring_head];
            let effective = Timestamp(a.seen.0.saturating_add(lag).max(self.since.0));
            if effective > t {
                break;
            }
            self.apply_oldest(effective);
        }
    }

    /// The oldest waiting ACK takes effect at `effective`.
    #[inline]
    fn apply_oldest(&mut self, effective: Timestamp) {
        let a = self.ring[self.ring_head];
        self.ring_head = (self.ring_head + 1) % ACK_RING;
        self.ring_len -= 1;
        self.account(effective);
        self.apply(a.ack, a.edge, a.field);
    }

    /// Applies the waiting ACKs that data echoing the TSval `x` prove had reached the
    /// sender: the sender echoes the TSval of the latest ACK it processed
    /// (`tcp_store_ts_recent`, RFC 7323 §4.3), and ACKs arrive in order, so every ACK
    /// before the first one carrying `x` had, and that one. (Later ones carrying `x`, in
    /// the same tick of the receiver's clock, may not have.) While a queue on the path
    /// grows, the lag measured by earlier echoes is shorter than the round trip the
    /// latest ACKs will take, and while it is being raised each waiting ACK's time moves
    /// on with it: a sender in slow start into a bottleneck raises the queue a segment's
    /// time per segment, and no ACK would take effect until it stopped (sweep s16-032's
    /// client, the queue growing from 2 to 66 ms). Each takes effect when seen plus the
    /// lag, or with this data if that is later.
    #[inline(never)]
    fn advance_echoed(&mut self, t: Timestamp, x: u32) {
        let lag = self.waiting_lag();
        while self.ring_len > 0 {
            let a = self.ring[self.ring_head];
            let Some(v) = a.tsval.filter(|&v| seq_le(v, x)) else {
                return;
            };
            let effective = Timestamp(a.seen.0.saturating_add(lag).min(t.0).max(self.since.0));
            self.apply_oldest(effective);
            if v == x {
                return;
            }
        }
    }

    /// The ring index of the newest waiting ACK (with at least one waiting).
    #[inline]
    fn newest(&self) -> usize {
        (self.ring_head + self.ring_len - 1) % ACK_RING
    }

    /// The queueing delay on the capture-to-sender round trip: the lag over the
    /// shortest round trip seen.
    fn queue_ns(&self) -> u64 {
        match (self.lag_ns, self.min_lag_ns) {
            (Some(l), Some(m)) => l.saturating_sub(m),
            _ => 0,
        }
    }

    /// The lag ACKs wait, in nanoseconds: 0 at the sender (below [`LAG_NOISE_NS`]).
    /// Kept as a field (`wait_ns`, [`Limits::set_wait`]): it is read on most segments
    /// away from the sender, and changes only with an echo.
    #[inline(always)]
    fn waiting_lag(&self) -> i64 {
        self.wait_ns
    }

    /// Derives `wait_ns` after an echo or a handshake leg: away from the sender the
    /// longest of the recent echoes once data have echoed the peer's TSvals
    /// ([`Limits::echo_sample`]), else the lag.
    fn set_wait(&mut self) {
        let away = self.min_lag_ns.is_some_and(|m| m >= LAG_NOISE_NS);
        let n = self.recent_next.min(RECENT_ECHOES);
        let longest = self.recent_echoes[..n].iter().copied().max();
        self.wait_ns = longest
            .filter(|_| away)
            .or(self.lag_ns)
            .filter(|&l| l >= LAG_NOISE_NS)
            .map_or(0, |l| i64::try_from(l).unwrap_or(i64::MAX));
    }

    #[inline]
    fn apply(&mut self, ack: u64, edge: u64, field: u32) {
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
        if self.view.is_none_or(|(a, _)| ack >= a) {
            self.view_field = field;
        }
        self.view = Some((ack, edge));
        self.floor.min_since = self.floor.min_since.min(self.view_field);
        self.classify(false);
    }

    /// The receiver's ACK `ack` with window `window_bytes` and TSval `tsval`, seen at `t`.
    /// `field` is the window as its field says (`window_bytes` is the edge's distance,
    /// unbounded while the scale is unknown).
    #[inline(always)]
    pub(crate) fn on_ack(
        &mut self,
        t: Timestamp,
        ack: u64,
        window_bytes: u64,
        field: u64,
        tsval: Option<u32>,
    ) {
        self.advance(t);
        let edge = ack.saturating_add(window_bytes);
        let field = u32::try_from(field).unwrap_or(u32::MAX);
        if self.waiting_lag() == 0 {
            self.account(t);
            self.apply(ack, edge, field);
            return;
        }
        let view = AckView {
            seen: t,
            ack,
            edge,
            tsval,
            field,
        };
        if self.ring.is_empty() {
            self.ring = vec![AckView::default(); ACK_RING].into_boxed_slice();
        }
        if self.ring_len == ACK_RING {
            let newest = self.newest();
            self.ring[newest] = AckView {
                seen: self.ring[newest].seen,
                ..view
            };
        } else {
            self.ring[(self.ring_head + self.ring_len) % ACK_RING] = view;
            self.ring_len += 1;
        }
    }

    /// Data of this direction, `len` bytes ending at `end` (relative), seen at `t`,
    /// echoing the TSval `tsecr`.
    #[inline(always)]
    pub(crate) fn on_data(&mut self, t: Timestamp, end: u64, len: u32, tsecr: Option<u32>) {
        self.largest_segment = self.largest_segment.max(u64::from(len));
        // The call only when the oldest waiting ACK is proven (most data echo an ACK that
        // has already taken effect).
        if let (Some(x), true) = (tsecr, self.ring_len > 0) {
            if self.ring[self.ring_head]
                .tsval
                .is_some_and(|v| seq_le(v, x))
            {
                self.advance_echoed(t, x);
            }
        }
        self.advance(t);
        self.account(t);
        self.after_app = matches!(self.state, Limit::App | Limit::None);
        if self.state == Limit::App && self.highest.is_some_and(|h| end > h) {
            if !self.peer_spoke && self.pending_app_ns <= MAX_APP_GAP_NS {
                self.out.app_ns = self.out.app_ns.saturating_add(self.pending_app_ns);
            }
            self.pending_app_ns = 0;
        }
        if self.highest.is_none_or(|h| end > h) {
            self.settle_edge(true);
        }
        match self.highest {
            Some(h) if end <= h => {
                self.recover = Some(h);
                self.settle_held(false);
            }
            _ if self.hold == Hold::Held => {
                self.hold = Hold::Burst;
                self.burst_since = t;
            }
            _ => {}
        }
        self.highest = Some(self.highest.map_or(end, |h| h.max(end)));
        self.raise_floor(end);
        self.classify(true);
    }

    /// The flight up to `end` against the ACK the sender had processed, when the view's
    /// timing is measured: at the sender, or by echoes of the receiver's TSvals. Without
    /// them the lag is the handshake's leg, which a slow first packet inflates (the
    /// lab's emulator: 36 ms for a 14 ms path, sweep s1-039) so that ACKs apply late and
    /// the flight looks larger than it was (s23-069's client at snaplen 64: a floor of
    /// 63 KB under a 42 KB window); then the latest ACK seen here, whose edge the data
    /// cannot have passed either (the edge never moves left), a smaller but sure flight.
    #[inline]
    fn raise_floor(&mut self, end: u64) {
        let Some((view_ack, _)) = self.view else {
            return;
        };
        // The view's ACK is no newer than the latest seen, so its flight is the larger:
        // when even that is no new maximum, nothing changes (most data segments).
        if end.saturating_sub(view_ack) <= self.floor.flight {
            return;
        }
        let timed = self.waiting_lag() == 0 || self.recent_next > 0;
        let (ack, field) = if timed || self.ring_len == 0 {
            (view_ack, self.view_field)
        } else {
            let a = self.ring[self.newest()];
            (a.ack, a.field)
        };
        let flight = end.saturating_sub(ack);
        if flight > self.floor.flight {
            self.floor = WindowFloor {
                flight,
                field,
                min_since: field,
            };
        }
    }

    /// The peer sent data (a request, or its own transfer).
    #[inline]
    pub(crate) fn on_peer_data(&mut self) {
        self.peer_spoke = true;
        // New data after a request answers the request, not an opened window: the hold
        // so far and the time until the next event are the sender's.
        if self.hold == Hold::Held {
            self.state = Limit::Sender;
        }
        self.settle_held(false);
        self.settle_edge(false);
    }

    /// The sender's FIN or RST: the transfer is over.
    pub(crate) fn on_end(&mut self, t: Timestamp) {
        if !self.done {
            self.advance(t);
            self.account(t);
            self.settle_held(false);
            self.settle_edge(false);
            self.done = true;
            self.state = Limit::None;
        }
    }

    /// The limit in force now.
    pub(crate) fn state(&self) -> Limit {
        self.state
    }

    /// The least the receiver's window can have been since the largest flight
    /// ([`WindowFloor`]), in bytes.
    pub(crate) fn window_floor(&self) -> u64 {
        self.floor.bytes()
    }

    /// The largest flight and the window field it was sent under: the window's scale
    /// is at least their ratio, whenever the field was read (the scale is fixed for the
    /// connection, RFC 7323 §2.3). None before any.
    pub(crate) fn scale_floor(&self) -> Option<(u64, u32)> {
        (self.floor.field > 0).then_some((self.floor.flight, self.floor.field))
    }

    /// The totals; time waiting in an app pause that never ended is not counted.
    pub(crate) fn times(&self) -> LimitTimes {
        let mut t = self.out;
        // A hold never settled (the capture ended in it): no new data followed.
        t.sender_ns = t
            .sender_ns
            .saturating_add(self.pending_rwnd_ns)
            .saturating_add(self.pending_edge_ns);
        t
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    const MS: i64 = 1_000_000;
    const SEG: u32 = 1_000;

    fn t(ms: i64) -> Timestamp {
        Timestamp(ms * MS)
    }

    /// A sender at its own capture point (lag 0) with a 10-segment window: it fills the
    /// window at 0 ms, an ACK of two segments opens room at 1 ms, and its next data leave
    /// at 3 ms.
    fn filled() -> Limits {
        let mut l = Limits::default();
        l.set_mss(u64::from(SEG));
        l.on_ack(t(0), 0, 10 * u64::from(SEG), 10 * u64::from(SEG), None);
        for k in 1..=10 {
            l.on_data(t(0), k * u64::from(SEG), SEG, None);
        }
        assert_eq!(l.state(), Limit::Rwnd);
        l.on_ack(
            t(1),
            2 * u64::from(SEG),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            None,
        );
        l
    }

    /// Data that fill the opened window again before the next ACK: the 2 ms between the
    /// ACK and that data were the window's (Linux's rwnd chrono runs through them), and
    /// so was the 1 ms at the edge before the ACK, new data having followed it. The last
    /// 1 ms at the edge, ended by the FIN with nothing new, was not: the sender had no
    /// more to send.
    #[test]
    fn the_answer_that_fills_the_window_again_makes_the_hold_the_windows() {
        let mut l = filled();
        l.on_data(t(3), 11 * u64::from(SEG), SEG, None);
        assert_eq!(l.state(), Limit::Sender);
        l.on_data(t(3), 12 * u64::from(SEG), SEG, None);
        assert_eq!(l.state(), Limit::Rwnd);
        l.on_end(t(4));
        let o = l.times();
        assert_eq!((o.rwnd_ns, o.sender_ns), (3 * MS as u64, MS as u64));
    }

    /// A response that fits the window ends within a segment of its edge: the time until
    /// the ACKs is nobody's limit but the transfer's end, whatever ends it — the FIN, the
    /// peer's next request or the end of the capture, after an ACK of everything or not
    /// (sweep s96-086's client: 361 ms named rwnd.limited, tcp_info rwnd_limited 0).
    #[test]
    fn data_at_the_edge_with_nothing_new_after_is_not_the_windows() {
        let seg = u64::from(SEG);
        let at_edge = || {
            let mut l = Limits::default();
            l.set_mss(seg);
            l.on_ack(t(0), 0, 10 * seg, 10 * seg, None);
            for k in 1..=10 {
                l.on_data(t(0), k * seg, SEG, None);
            }
            assert_eq!(l.state(), Limit::Rwnd);
            l
        };
        let mut fin = at_edge();
        fin.on_end(t(5));
        let mut request = at_edge();
        request.on_ack(t(5), 0, 10 * seg, 10 * seg, None);
        request.on_peer_data();
        let mut all_acked = at_edge();
        all_acked.on_ack(t(5), 10 * seg, 10 * seg, 10 * seg, None);
        all_acked.on_end(t(6));
        let ended = at_edge();
        for l in [fin, request, all_acked, ended] {
            assert_eq!(l.times().rwnd_ns, 0);
        }
        // New data after it: the sender had more, and the window held it.
        let mut more = at_edge();
        more.on_ack(t(5), seg, 10 * seg, 10 * seg, None);
        more.on_data(t(5), 11 * seg, SEG, None);
        assert_eq!(more.times().rwnd_ns, 5 * MS as u64);
    }

    /// Data that stop short of the edge before the next ACK takes effect: something else
    /// (cwnd, pacing, TSO deferral) held the sender, so the hold was the sender's own.
    #[test]
    fn an_answer_that_stops_short_of_the_edge_makes_the_hold_the_senders() {
        let mut l = filled();
        l.on_data(t(3), 11 * u64::from(SEG), SEG, None);
        l.on_ack(
            t(5),
            4 * u64::from(SEG),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            None,
        );
        l.on_end(t(6));
        let o = l.times();
        assert_eq!((o.rwnd_ns, o.sender_ns), (MS as u64, 5 * MS as u64));
    }

    /// No new data after the opening ACK: a retransmission, the peer's request, the end
    /// or an ACK of everything all leave the hold to the sender (nothing more to send),
    /// and, with no new data after it either, the time at the edge before it.
    #[test]
    fn a_hold_without_new_data_is_the_senders() {
        let mut l = filled();
        l.on_data(t(3), 5 * u64::from(SEG), SEG, None);
        l.on_end(t(4));
        assert_eq!((l.times().rwnd_ns, l.times().sender_ns), (0, 4 * MS as u64));

        let mut l = filled();
        l.on_peer_data();
        l.on_data(t(3), 11 * u64::from(SEG), SEG, None);
        l.on_data(t(3), 12 * u64::from(SEG), SEG, None);
        l.on_end(t(3));
        assert_eq!((l.times().rwnd_ns, l.times().sender_ns), (0, 3 * MS as u64));

        let mut l = filled();
        l.on_ack(
            t(2),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            None,
        );
        assert_eq!(l.state(), Limit::App);
        assert_eq!((l.times().rwnd_ns, l.times().sender_ns), (0, 2 * MS as u64));
    }

    /// The window's least value when its scale is unknown (fields raw): s19-032's sender
    /// had 20 segments out under a field of 10; the field then falls to 8 and the floor
    /// with it (20 × 8 / 10 = 16 segments), and a smaller flight does not lower it.
    #[test]
    fn the_window_floor_scales_the_largest_flight_by_the_fields() {
        let seg = u64::from(SEG);
        let mut l = Limits::default();
        assert_eq!(l.window_floor(), 0);
        l.on_ack(t(0), 0, u64::MAX / 2, 10, None);
        l.on_data(t(0), 20 * seg, SEG, None);
        assert_eq!(l.window_floor(), 20 * seg);
        l.on_ack(t(1), 20 * seg, u64::MAX / 2, 8, None);
        l.on_data(t(1), 25 * seg, SEG, None);
        assert_eq!(l.window_floor(), 16 * seg);
        // A flight far below the field: the window is at least the field (s53-088).
        let mut w = Limits::default();
        w.on_ack(t(0), 0, u64::MAX / 2, 65_000, None);
        w.on_data(t(0), 3 * seg, SEG, None);
        assert_eq!(w.window_floor(), 65_000);
        // Away from the sender, without echoes, the lag cannot be trusted: the flight is
        // taken against the latest ACK seen, which the data cannot have passed either.
        let mut r = Limits::default();
        r.set_handshake_lag(10 * MS as u64);
        r.on_ack(t(0), 0, u64::MAX / 2, 10, None);
        r.on_ack(t(1), 0, u64::MAX / 2, 10, None);
        r.on_ack(t(12), 5 * seg, u64::MAX / 2, 10, None);
        r.on_data(t(13), 12 * seg, SEG, None);
        assert_eq!(r.window_floor(), 7 * seg);
    }

    /// The lag follows the shortest of the last four echoes: down at once (a slow first
    /// packet), up once four in a row say the round trip grew (a queue).
    #[test]
    fn the_lag_follows_a_queue_that_builds() {
        let mut l = Limits::default();
        l.set_handshake_lag(19 * MS as u64);
        l.echo_sample(18 * MS as u64, true);
        assert_eq!(l.lag_ns, Some(18 * MS as u64));
        for (k, ms) in [97, 99, 96].into_iter().enumerate() {
            l.echo_sample(ms * MS as u64, true);
            assert_eq!(l.lag_ns, Some(18 * MS as u64), "echo {k}");
        }
        l.echo_sample(98 * MS as u64, true);
        assert_eq!(l.lag_ns, Some(96 * MS as u64));
        // One long echo (the sender's pause) among short ones changes nothing.
        l.echo_sample(300 * MS as u64, true);
        assert_eq!(l.lag_ns, Some(96 * MS as u64));
        l.echo_sample(20 * MS as u64, true);
        assert_eq!(l.lag_ns, Some(20 * MS as u64));
        // Data after everything was ACKed echo an ACK that waited through the sender's
        // pause, and pure ACKs their ACK delay: they only shorten.
        l.on_ack(t(0), 0, 10 * u64::from(SEG), 10 * u64::from(SEG), None);
        l.on_data(t(0), u64::from(SEG), SEG, None);
        l.on_ack(
            t(1),
            u64::from(SEG),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            None,
        );
        l.on_data(t(60), 2 * u64::from(SEG), SEG, None);
        for _ in 0..4 {
            l.echo_sample(60 * MS as u64, true);
        }
        assert_eq!(l.lag_ns, Some(20 * MS as u64));
        for _ in 0..4 {
            l.echo_sample(60 * MS as u64, false);
        }
        assert_eq!(l.lag_ns, Some(20 * MS as u64));
        l.echo_sample(19 * MS as u64, false);
        assert_eq!(l.lag_ns, Some(19 * MS as u64));
    }

    /// A receiver-side view 10 ms from the sender (lag 10 ms), a 4-segment window full
    /// at 0 ms, then an ACK of two segments at 1 ms (TSval 100) that takes effect at
    /// 11 ms.
    fn downstream() -> Limits {
        let mut l = Limits::default();
        l.set_mss(u64::from(SEG));
        l.on_ack(t(0), 0, 4 * u64::from(SEG), 4 * u64::from(SEG), Some(99));
        for k in 1..=4 {
            l.on_data(t(0), k * u64::from(SEG), SEG, Some(1));
        }
        assert_eq!(l.state(), Limit::Rwnd);
        l.set_handshake_lag(10 * MS as u64);
        l.on_ack(
            t(1),
            2 * u64::from(SEG),
            4 * u64::from(SEG),
            4 * u64::from(SEG),
            Some(100),
        );
        l
    }

    /// Waiting ACKs take effect the lag as of now after they were seen: a lag raised
    /// after the ACK was seen delays it too (a lag fixed at queueing ratcheted early).
    #[test]
    fn waiting_acks_take_the_current_lag() {
        let mut l = downstream();
        for _ in 0..RECENT_ECHOES {
            l.echo_sample(15 * MS as u64, true);
        }
        l.advance(t(12));
        assert_eq!(l.view, Some((0, 4 * u64::from(SEG))));
        l.advance(t(16));
        assert_eq!(l.view, Some((2 * u64::from(SEG), 6 * u64::from(SEG))));
    }

    /// Data echoing the ACK's TSval prove it reached the sender, whatever the lag says
    /// (a queue growing faster than the echoes measured it); data echoing an older TSval
    /// prove nothing.
    #[test]
    fn an_echo_applies_the_acks_it_proves() {
        let mut l = downstream();
        l.on_data(t(5), 5 * u64::from(SEG), SEG, Some(99));
        assert_eq!(l.view, Some((0, 4 * u64::from(SEG))));
        l.on_data(t(6), 6 * u64::from(SEG), SEG, Some(100));
        assert_eq!(l.view, Some((2 * u64::from(SEG), 6 * u64::from(SEG))));
        assert_eq!(l.state(), Limit::Rwnd);
    }

    /// Away from the sender, a release that fills the window arrives spread by a
    /// bottleneck: the spread is the window's time while a queue on the path (the lag
    /// over its minimum) can explain it, the sender's beyond that (its pacing).
    #[test]
    fn a_release_spread_within_the_queue_is_the_windows() {
        let run = |queue_ms: i64| {
            let mut l = downstream();
            // The path's own round trip was 10 ms; a queue adds `queue_ms` to it.
            l.lag_ns = Some((10 + queue_ms) as u64 * MS as u64);
            l.advance(t(11 + queue_ms));
            let at = 11 + queue_ms;
            // The release: one segment now, the one that fills the window 4 ms later.
            l.on_data(t(at), 5 * u64::from(SEG), SEG, None);
            l.on_data(t(at + 4), 6 * u64::from(SEG), SEG, None);
            l.on_end(t(at + 4));
            l.times()
        };
        let deep = run(20);
        assert_eq!(deep.sender_ns, 0);
        // A 1 ms queue explains 1 ms of the 4 ms spread.
        let shallow = run(1);
        assert_eq!(shallow.sender_ns, 3 * MS as u64);
    }

    /// In loss recovery (data sent again, not all ACKed) an opening ACK ends the window's
    /// hold at once: the reduced congestion window may be what keeps the sender silent.
    #[test]
    fn no_hold_in_loss_recovery() {
        let mut l = filled();
        l.on_data(t(1), 3 * u64::from(SEG), SEG, None);
        l.on_ack(
            t(2),
            3 * u64::from(SEG),
            10 * u64::from(SEG),
            10 * u64::from(SEG),
            None,
        );
        assert_eq!(l.state(), Limit::Sender);
    }
}
