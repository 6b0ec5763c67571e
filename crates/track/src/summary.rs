//! What the tracker reports: per-connection summaries and per-segment events.

use crate::ipid::IdStep;
use crate::limits::{Limit, LimitTimes};
use crate::model::ConnModel;
use crate::rtt::RttStats;
use serde::{Deserialize, Serialize};
use std::net::IpAddr;
use tcpwhy_capture::{IcmpError, IcmpErrorKind, Timestamp};

/// One end of a connection.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord, Serialize, Deserialize)]
pub struct Endpoint {
    pub addr: IpAddr,
    pub port: u16,
}

impl std::fmt::Display for Endpoint {
    fn fmt(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        match self.addr {
            IpAddr::V4(a) => write!(f, "{a}:{}", self.port),
            IpAddr::V6(a) => write!(f, "[{a}]:{}", self.port),
        }
    }
}

/// One side of a connection by its role: the client opened it (see [`ClientBy`]).
/// Indexes everything kept per direction as `[client, server]` ([`ConnSummary::dirs`],
/// a detector's `[Dir; 2]`), so that no code writes the swap by hand.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub enum Side {
    Client = 0,
    Server = 1,
}

impl Side {
    /// Both sides, in `[client, server]` order.
    pub const BOTH: [Side; 2] = [Side::Client, Side::Server];

    /// The other end of the connection.
    pub const fn peer(self) -> Side {
        match self {
            Side::Client => Side::Server,
            Side::Server => Side::Client,
        }
    }

    /// The side of index `i` of a `[client, server]` pair (anything but 0 is the server).
    pub const fn from_index(i: usize) -> Side {
        if i == 0 {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// Its index in a `[client, server]` pair.
    pub const fn index(self) -> usize {
        self as usize
    }

    /// `"client"` or `"server"`, for explanations.
    pub const fn name(self) -> &'static str {
        match self {
            Side::Client => "client",
            Side::Server => "server",
        }
    }
}

impl<T> std::ops::Index<Side> for [T; 2] {
    type Output = T;
    #[inline]
    fn index(&self, side: Side) -> &T {
        &self[side as usize]
    }
}

impl<T> std::ops::IndexMut<Side> for [T; 2] {
    #[inline]
    fn index_mut(&mut self, side: Side) -> &mut T {
        &mut self[side as usize]
    }
}

/// How the client (the side that opened the connection) was identified.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum ClientBy {
    /// It sent the SYN.
    Syn,
    /// The other side sent the SYN/ACK (the SYN was not captured).
    SynAck,
    /// No handshake captured, but the other endpoint is a server in another connection
    /// of the same capture (identified there by its handshake).
    KnownServer,
    /// No handshake captured: the side with the higher (ephemeral-looking) port.
    PortGuess,
}

/// Window scaling of one direction, as learned from the handshake.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub enum WindowScale {
    /// No SYN or SYN/ACK was captured, or the snaplen cut its options before the
    /// window scale: the scale is unknown and windows are shown raw.
    Unknown,
    /// The handshake was seen and one side lacked the option: windows are not scaled
    /// (RFC 7323 §2.2), so they cannot exceed 65,535 bytes.
    NotNegotiated,
    /// Negotiated: this direction's window field is shifted left by this count.
    Shift(u8),
}

/// Where the capture was taken, inferred from the handshake timing (design.md).
#[derive(Copy, Clone, Debug, PartialEq, Eq, Serialize, Deserialize)]
pub enum Vantage {
    /// SYN→SYN/ACK ≈ RTT and SYN/ACK→ACK ≈ 0.
    Client,
    /// SYN→SYN/ACK ≈ 0 and SYN/ACK→ACK ≈ RTT.
    Server,
    /// Both parts of the handshake take time: a tap or proxy between the hosts.
    Middle,
    /// No complete handshake to judge from.
    Unknown,
}

impl Vantage {
    pub fn name(self) -> &'static str {
        match self {
            Vantage::Client => "client",
            Vantage::Server => "server",
            Vantage::Middle => "middle",
            Vantage::Unknown => "unknown",
        }
    }
}

/// Options one side sent in its SYN or SYN/ACK.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SynOptions {
    pub mss: Option<u16>,
    pub wscale: Option<u8>,
    pub sack_permitted: bool,
    pub timestamps: bool,
}

/// Segment classification counts of one direction. The meanings follow
/// `docs/tracking.md`; where they differ from Wireshark's flags the reason is there.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentCounts {
    /// Every retransmission, including fast and spurious ones (as Wireshark counts).
    pub retransmissions: u64,
    pub fast_retransmissions: u64,
    pub spurious_retransmissions: u64,
    pub out_of_order: u64,
    pub dup_acks: u64,
    pub zero_windows: u64,
    pub zero_window_probes: u64,
    pub window_full: u64,
    pub window_updates: u64,
    pub keep_alives: u64,
    /// ACKs carrying a D-SACK block (RFC 2883).
    pub dsacks: u64,
    /// Segments starting beyond the highest byte seen: earlier data was not captured.
    pub previous_segment_not_captured: u64,
    /// ACKs for data never seen in the capture.
    pub acked_unseen: u64,
    /// Packets the capture recorded twice (same IP ID, seq, length and ACK); they are
    /// counted here and otherwise ignored.
    pub capture_duplicates: u64,
}

/// Statistics of one direction of a connection (from `from` to the other endpoint).
#[derive(Clone, Debug, Default)]
pub struct DirSummary {
    pub packets: u64,
    /// Segments carrying payload.
    pub data_packets: u64,
    /// Payload bytes on the wire, retransmissions included.
    pub bytes: u64,
    /// Distinct sequence space covered (highest byte − first byte), retransmissions excluded.
    pub unique_bytes: u64,
    pub isn: Option<u32>,
    /// Options of this side's SYN or SYN/ACK, if captured: those the capture shows
    /// (see [`Self::syn_cut`]).
    pub syn: Option<SynOptions>,
    /// The snaplen cut that SYN's options: an option missing from [`Self::syn`] may
    /// have been sent. Rules that need to know one is absent use [`Self::syn_whole`].
    pub syn_cut: bool,
    pub wscale: Option<WindowScale>,
    /// Largest window this side advertised, in bytes after scaling (raw when unknown).
    pub max_window_bytes: Option<u64>,
    /// Largest amount of this side's data in flight (sent, not yet ACKed at the capture point).
    pub max_in_flight: Option<u64>,
    /// RTT from this side's data to the ACK covering it (Karn's rule: no retransmitted data).
    pub rtt_ack: Option<RttStats>,
    /// RTT from this side's TSval to the first segment echoing it.
    pub rtt_ts: Option<RttStats>,
    pub counts: SegmentCounts,
    /// Time this side's transfer spent limited by each cause (`limits.rs`,
    /// docs/tracking.md "What limited a transfer").
    pub limits: LimitTimes,
    /// The least the receiver of this side's data can have had as its window since this
    /// side's largest flight, in bytes, whatever the window scale (`limits.rs`,
    /// `WindowFloor`): what is known of the window when the snaplen cut the scale.
    pub window_floor: Option<u64>,
    /// The largest flight of this side's data and the receiver's window field it was
    /// sent under (`limits.rs`, `WindowFloor`): with the scale unknown, the window at
    /// any time is at least its field × flight / field here.
    pub scale_floor: Option<(u64, u32)>,
    pub fin: bool,
    pub rst: bool,
}

/// ICMP and ICMPv6 errors that quoted a segment of a connection (`tcpwhy_capture::icmp_error`):
/// kept as evidence, never taken as segments (no sequence, ACK, RTT or retransmission
/// effect). A path-MTU black hole shows here as "fragmentation needed" or "packet too
/// big" errors the sender did not act on.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct IcmpErrors {
    pub count: u64,
    /// The first one's frame and what it said.
    pub first_frame: u64,
    pub first: IcmpErrorKind,
    /// The first "fragmentation needed" or "packet too big".
    pub too_big_frame: Option<u64>,
    /// The smallest next-hop MTU those reported (routers older than RFC 1191 send none).
    pub next_hop_mtu: Option<u32>,
}

impl IcmpErrors {
    /// The first error, in frame `frame`.
    pub fn new(frame: u64, e: &IcmpError) -> Self {
        IcmpErrors {
            count: 1,
            first_frame: frame,
            first: e.kind,
            too_big_frame: e.kind.too_big().then_some(frame),
            next_hop_mtu: e.next_hop_mtu,
        }
    }

    /// Takes in the errors of another part of the connection (or one more error).
    pub fn add(&mut self, o: &IcmpErrors) {
        self.count = self.count.saturating_add(o.count);
        if o.first_frame < self.first_frame {
            self.first_frame = o.first_frame;
            self.first = o.first;
        }
        self.too_big_frame = match (self.too_big_frame, o.too_big_frame) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
        self.next_hop_mtu = match (self.next_hop_mtu, o.next_hop_mtu) {
            (Some(a), Some(b)) => Some(a.min(b)),
            (a, b) => a.or(b),
        };
    }

    /// `errors` with one more.
    pub fn with(errors: Option<IcmpErrors>, frame: u64, e: &IcmpError) -> IcmpErrors {
        let one = IcmpErrors::new(frame, e);
        match errors {
            Some(mut x) => {
                x.add(&one);
                x
            }
            None => one,
        }
    }
}

/// A finished connection (or the part of one seen before it was finalised).
///
/// [`crate::summary_bytes`] encodes it as the compact row `tcpwhy-pipeline` keeps of it
/// (in its bounded sorted store), whose key holds `stream`, `first_frame` and
/// `continuation` (they change while rows are sorted and numbered): those three are not
/// encoded.
#[derive(Clone, Debug)]
pub struct ConnSummary {
    /// Wireshark's `tcp.stream` index.
    pub stream: u64,
    /// `[client, server]` when the client is known (see `client_by`).
    pub endpoints: [Endpoint; 2],
    pub client_by: ClientBy,
    pub first_frame: u64,
    pub last_frame: u64,
    pub start: Timestamp,
    pub end: Timestamp,
    /// `[client → server, server → client]`.
    pub dirs: [DirSummary; 2],
    /// SYN → SYN/ACK, as seen at the capture point.
    pub syn_to_synack_ns: Option<u64>,
    /// SYN/ACK → first ACK of the client.
    pub synack_to_ack_ns: Option<u64>,
    pub vantage: Vantage,
    /// This stream reused the 4-tuple of an earlier one (a new SYN with another ISN).
    pub reused_port: bool,
    /// More packets arrived after the connection had been finalised; this summary
    /// holds only the later part (merge with the earlier one by `stream`).
    pub continuation: bool,
    /// ICMP errors quoting its segments; a stream opened by one has no packets.
    pub icmp_errors: Option<IcmpErrors>,
}

impl ConnSummary {
    /// The handshake RTT (SYN → first ACK), which is the full path RTT at any vantage.
    pub fn handshake_rtt_ns(&self) -> Option<u64> {
        Some(self.syn_to_synack_ns? + self.synack_to_ack_ns?)
    }

    pub fn duration_ns(&self) -> u64 {
        self.end.elapsed_since(self.start)
    }

    pub fn packets(&self) -> u64 {
        self.dirs[0].packets + self.dirs[1].packets
    }

    /// The effective MSS of `sender`'s data, by the one rule of
    /// [`effective_mss`](crate::effective_mss) (the same as
    /// [`ConnModel::mss`](crate::ConnModel::mss) on a segment's event), read from the
    /// whole SYNs only: `None` when the receiver's SYN was not captured or the snaplen cut
    /// its options. The caller falls back to what it saw of the payloads.
    pub fn mss(&self, sender: Side) -> Option<u32> {
        crate::effective_mss(
            self.dirs[sender].syn_whole(),
            self.dirs[sender.peer()].syn_whole(),
        )
    }
}

/// Classification bits of one segment.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct SegmentKinds(pub u32);

impl SegmentKinds {
    /// Payload not sent before (neither a retransmission, out-of-order nor a probe).
    pub const NEW_DATA: u32 = 1 << 0;
    pub const RETRANSMISSION: u32 = 1 << 1;
    pub const FAST_RETRANSMISSION: u32 = 1 << 2;
    pub const SPURIOUS_RETRANSMISSION: u32 = 1 << 3;
    pub const OUT_OF_ORDER: u32 = 1 << 4;
    pub const DUP_ACK: u32 = 1 << 5;
    pub const ZERO_WINDOW: u32 = 1 << 6;
    pub const ZERO_WINDOW_PROBE: u32 = 1 << 7;
    pub const ZERO_WINDOW_PROBE_ACK: u32 = 1 << 8;
    pub const WINDOW_UPDATE: u32 = 1 << 9;
    pub const WINDOW_FULL: u32 = 1 << 10;
    pub const KEEP_ALIVE: u32 = 1 << 11;
    pub const KEEP_ALIVE_ACK: u32 = 1 << 12;
    pub const DSACK: u32 = 1 << 13;
    pub const PREVIOUS_SEGMENT_NOT_CAPTURED: u32 = 1 << 14;
    pub const ACKED_UNSEEN: u32 = 1 << 15;
    pub const REUSED_PORTS: u32 = 1 << 16;
    /// The capture recorded this packet twice; not analysed further.
    pub const CAPTURE_DUPLICATE: u32 = 1 << 17;

    pub fn has(self, bit: u32) -> bool {
        self.0 & bit != 0
    }
    pub fn set(&mut self, bit: u32) {
        self.0 |= bit;
    }
}

/// What the tracker learned from one segment; the input of the detectors.
#[derive(Copy, Clone, Debug)]
pub struct SegmentEvent {
    pub stream: u64,
    /// True when the segment goes from the client to the server.
    pub from_client: bool,
    pub kinds: SegmentKinds,
    /// Sequence number relative to the sender's ISN, unwrapped to 64 bits.
    pub rel_seq: u64,
    /// Acknowledgment number relative to the receiver's ISN, when the ACK bit is set
    /// and the other direction's base is known.
    pub rel_ack: Option<u64>,
    pub payload_len: u32,
    /// Advertised window in bytes after scaling (raw when the scale is unknown).
    pub window_bytes: u64,
    /// For a duplicate ACK: its number in the run (1 = first duplicate).
    pub dup_ack_num: u32,
    /// An RTT sample this ACK completes: the data frame it acknowledges and the time.
    pub ack_rtt: Option<(u64, u64)>,
    /// An RTT sample from the timestamp echo: the frame whose TSval it echoes and the time.
    pub ts_rtt: Option<(u64, u64)>,
    /// Sender's data in flight after this segment (bytes beyond the other side's ACK).
    pub in_flight: Option<u64>,
    /// For a D-SACK: the frame of the retransmission it reports as needless, if seen.
    pub dsack_of: Option<u64>,
    /// What limits the segment sender's data after this segment, as the sender saw it
    /// (`limits.rs`): e.g. `Rwnd` on data that filled the receiver's window.
    pub limit: Limit,
    /// For data below the highest sequence number seen (a retransmission or an
    /// out-of-order segment): the frame and time of the first captured transmission of
    /// its first bytes, while that is still unacknowledged at the capture point. `None`
    /// when the original was not captured (lost before the capture point) or was ACKed.
    pub original: Option<(u64, Timestamp)>,
    /// What the sender's IPv4 ID says about this packet (lost transmissions before the
    /// capture point, reordering: `ipid.rs`); the default for a capture duplicate,
    /// which is not counted.
    pub ip_id: IdStep,
    /// What the tracker knows of the connection as of this segment (SYN options,
    /// effective MSS, handshake RTT, clock tick, newest TSvals): read it instead of
    /// re-deriving it.
    pub conn: ConnModel,
}

impl SegmentEvent {
    /// The side that sent this segment.
    #[inline]
    pub const fn sender(&self) -> Side {
        if self.from_client {
            Side::Client
        } else {
            Side::Server
        }
    }

    /// The side this segment went to.
    #[inline]
    pub const fn receiver(&self) -> Side {
        self.sender().peer()
    }
}

impl SegmentCounts {
    /// Counts one segment's classification (D-SACKs and capture duplicates are counted
    /// where they are recognised).
    pub fn record(&mut self, k: SegmentKinds) {
        let n = |b: u32| u64::from(k.has(b));
        self.retransmissions += n(SegmentKinds::RETRANSMISSION);
        self.fast_retransmissions += n(SegmentKinds::FAST_RETRANSMISSION);
        self.spurious_retransmissions += n(SegmentKinds::SPURIOUS_RETRANSMISSION);
        self.out_of_order += n(SegmentKinds::OUT_OF_ORDER);
        self.dup_acks += n(SegmentKinds::DUP_ACK);
        self.zero_windows += n(SegmentKinds::ZERO_WINDOW);
        self.zero_window_probes += n(SegmentKinds::ZERO_WINDOW_PROBE);
        self.window_full += n(SegmentKinds::WINDOW_FULL);
        self.window_updates += n(SegmentKinds::WINDOW_UPDATE);
        self.keep_alives += n(SegmentKinds::KEEP_ALIVE);
        self.previous_segment_not_captured += n(SegmentKinds::PREVIOUS_SEGMENT_NOT_CAPTURED);
        self.acked_unseen += n(SegmentKinds::ACKED_UNSEEN);
    }

    /// Adds another set of counts to this one.
    pub fn add(&mut self, o: &SegmentCounts) {
        self.retransmissions += o.retransmissions;
        self.fast_retransmissions += o.fast_retransmissions;
        self.spurious_retransmissions += o.spurious_retransmissions;
        self.out_of_order += o.out_of_order;
        self.dup_acks += o.dup_acks;
        self.zero_windows += o.zero_windows;
        self.zero_window_probes += o.zero_window_probes;
        self.window_full += o.window_full;
        self.window_updates += o.window_updates;
        self.keep_alives += o.keep_alives;
        self.dsacks += o.dsacks;
        self.previous_segment_not_captured += o.previous_segment_not_captured;
        self.acked_unseen += o.acked_unseen;
        self.capture_duplicates += o.capture_duplicates;
    }
}

impl DirSummary {
    /// The SYN's options when all of them were captured: an option missing from them
    /// was not sent. `None` when the SYN was not captured or the snaplen cut its options
    /// (a 64-byte snaplen leaves 10 bytes of a Linux SYN's 20: MSS and SACK-permitted,
    /// not timestamps or window scale), so the options are unknown, not absent.
    pub fn syn_whole(&self) -> Option<SynOptions> {
        self.syn.filter(|_| !self.syn_cut)
    }

    fn absorb(&mut self, o: &DirSummary) {
        self.packets += o.packets;
        self.data_packets += o.data_packets;
        self.bytes += o.bytes;
        self.unique_bytes += o.unique_bytes;
        self.isn = self.isn.or(o.isn);
        if self.syn.is_none() {
            self.syn = o.syn;
            self.syn_cut = o.syn_cut;
        }
        self.max_window_bytes = self.max_window_bytes.max(o.max_window_bytes);
        self.max_in_flight = self.max_in_flight.max(o.max_in_flight);
        self.window_floor = self.window_floor.max(o.window_floor);
        // The larger ratio of flight to field: both bound the same scale from below.
        let ratio = |f: Option<(u64, u32)>| f.map(|(fl, fi)| (u128::from(fl), u128::from(fi)));
        if let (Some((a, b)), Some((c, d))) = (ratio(self.scale_floor), ratio(o.scale_floor)) {
            if c * b > a * d {
                self.scale_floor = o.scale_floor;
            }
        } else if self.scale_floor.is_none() {
            self.scale_floor = o.scale_floor;
        }
        // Quantiles cannot be merged exactly: keep the part with more samples.
        let more = |a: Option<RttStats>, b: Option<RttStats>| match (a, b) {
            (Some(x), Some(y)) if y.samples > x.samples => Some(y),
            (None, y) => y,
            (x, _) => x,
        };
        self.rtt_ack = more(self.rtt_ack, o.rtt_ack);
        self.rtt_ts = more(self.rtt_ts, o.rtt_ts);
        self.counts.add(&o.counts);
        self.limits.add(&o.limits);
        self.fin |= o.fin;
        self.rst |= o.rst;
    }
}

impl ConnSummary {
    /// Folds a continuation (packets that arrived after this connection was finalised)
    /// into this summary.
    pub fn absorb(&mut self, later: &ConnSummary) {
        let same_order = later.endpoints[0] == self.endpoints[0];
        let (a, b) = if same_order { (0, 1) } else { (1, 0) };
        self.dirs[0].absorb(&later.dirs[a]);
        self.dirs[1].absorb(&later.dirs[b]);
        self.first_frame = self.first_frame.min(later.first_frame);
        self.last_frame = self.last_frame.max(later.last_frame);
        self.start = self.start.min(later.start);
        self.end = self.end.max(later.end);
        self.icmp_errors = match (self.icmp_errors, later.icmp_errors) {
            (Some(mut a), Some(b)) => {
                a.add(&b);
                Some(a)
            }
            (a, b) => a.or(b),
        };
    }
}

#[cfg(test)]
mod tests {
    use super::Side;

    #[test]
    fn side_indexes_client_server_pairs() {
        let mut pair = ["client → server", "server → client"];
        assert_eq!(pair[Side::Server], "server → client");
        assert_eq!(pair[Side::Client.peer()], "server → client");
        assert_eq!(Side::Server.peer(), Side::Client);
        pair[Side::Client] = "c";
        assert_eq!(pair, ["c", "server → client"]);
        assert_eq!(Side::from_index(1).index(), 1);
    }
}
