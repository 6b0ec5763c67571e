//! The connection tracker: assigns Wireshark-compatible stream indexes, keeps per-direction
//! sequence state, classifies every segment and collects RTT samples, in one pass.
//!
//! The classification follows Wireshark's TCP sequence analysis (packet-tcp.c,
//! `tcp_analyze_sequence_number`, as of tshark 4.0) so that counts can be compared with
//! tshark; every rule is a named step below, and where tcpwhy deliberately differs the
//! reason is written next to it and in `docs/tracking.md`.

use crate::ipid::{IdStep, IpIds};
use crate::limits::{Limit, Limits};
use crate::model::{effective_mss, ConnModel, DirModel, SynSeen, COARSEST_TICK_NS};
use crate::rtt::{RttSamples, RttStats};
use crate::seq::{seq_gt, seq_le, seq_lt, SeqUnwrapper};
use crate::summary::*;
use rustc_hash::FxHashMap;
use std::collections::VecDeque;
use tcpwhy_capture::{FlowAddrs, IcmpError, Ipv4Ends, Packet, TcpFlags, Timestamp};

/// Wireshark's TCP_MAX_UNACKED_SEGMENTS: past this many unacknowledged segments in one
/// direction (the ACKs are not being captured) new ones are not remembered.
const MAX_UNACKED: usize = 10_000;
/// Wireshark's out-of-order threshold when no handshake RTT is known: 3 ms.
const OOO_DEFAULT_NS: i64 = 3_000_000;
/// Wireshark's fast-retransmission rule: within 20 ms of the last duplicate ACK.
const FAST_RETRANSMISSION_NS: i64 = 20_000_000;
/// Wireshark's fast-retransmission rule: at least 2 duplicate ACKs (some may be missing).
const FAST_RETRANSMISSION_DUPACKS: u32 = 2;
/// Largest window scale shift allowed (RFC 7323 §2.3); larger values are used as 14.
const MAX_WSCALE: u8 = 14;
/// Sent TSvals remembered per direction to match timestamp echoes.
const TS_HISTORY: usize = 64;
/// Recent retransmissions remembered per direction to link D-SACKs to.
const RETRANSMISSION_HISTORY: usize = 128;
/// A reset connection is finalised after this much capture time without packets. A RST
/// its receiver accepts ends the connection at both ends (RFC 9293 §3.10.7: the
/// receiver deletes the TCB; Linux `tcp_reset` → `tcp_done`), so what can still come is
/// what was in flight, the RSTs answering it, and the capture's own copies of packets,
/// which come within [`CAPTURE_DUPLICATE_NS`] (zeek-http-m57-long: a RST recorded
/// twice, 1 µs apart); later packets still get the stream from the tombstone (a
/// continuation, counted in `flows`, not judged again by `analyze`). The 1 M-connection
/// bench capture (SYN, SYN/ACK, RST at 20,000 connections/s) kept 200,000 reset
/// connections live with the 10 s of a FIN close.
const RESET_LINGER_NS: i64 = CAPTURE_DUPLICATE_NS;
/// A closed connection (FIN both ways) is finalised after this much capture
/// time without packets. Later packets (a retransmitted FIN, a stray ACK) still get the
/// stream index from the tombstone; 10 s keeps the live set small on captures with
/// thousands of short connections a second.
const CLOSED_LINGER_NS: i64 = 10_000_000_000;
/// The tombstone of a closed connection is forgotten this long after it closed, so that
/// memory does not grow with every connection of a long capture. A packet without SYN on
/// that 4-tuple later than this would start a new stream where Wireshark continues the
/// old one; TIME_WAIT (60 s) makes that practically impossible. Tombstones of
/// connections finalised while open (idle) are kept: they may resume.
const CLOSED_TOMBSTONE_NS: i64 = 300_000_000_000;
/// How often (capture time) the tombstones are scanned for closed ones to forget: a
/// closed connection's is forgotten between [`CLOSED_TOMBSTONE_NS`] and that plus this
/// after its end. A scan instead of a queue in close order, whose 56-byte entries were
/// a sixth of `flows`' memory on the 1 M-connection bench capture.
const TOMBSTONE_SCAN_NS: i64 = 60_000_000_000;
/// An open connection is finalised after this much capture time without packets.
const IDLE_FINALISE_NS: i64 = 600_000_000_000;
/// A reset or finished connection is also closed, and any connection may go idle:
/// `Conn::linger_ns` takes the first that applies as the shortest.
const _: () = assert!(RESET_LINGER_NS < CLOSED_LINGER_NS && CLOSED_LINGER_NS < IDLE_FINALISE_NS);
/// Connections in their handshake (only segments with SYN seen: a SYN, a SYN/ACK, their
/// retransmissions) tracked at once. Past it the oldest is finalised, as an idle one is
/// (a later segment continues its stream and is not judged again), and counted
/// ([`Tracker::cuts`]). A bound on memory, not a rule of TCP: a capture of a
/// SYN flood or a scan whose SYN/ACKs go unanswered, with no RST, holds handshakes that
/// stay open for `IDLE_FINALISE_NS`, ≈ 3 KB of tracker state each (300,000 in 15 s:
/// `flows` 1.45 GB, `analyze` 2.06 GB; bench/README.md, session 32). Linux itself keeps at
/// most min(backlog, `net.core.somaxconn`, 4096 by default since 5.4) handshakes per
/// listener before it drops SYNs or answers them with syncookies
/// (`inet_csk_reqsk_queue_is_full` in `tcp_conn_request`): 32,768 is eight listeners'
/// full queues at that default, or a client opening 327,000 connections a second at
/// 100 ms of RTT (each handshake is open for one RTT). At the bound the state of open
/// handshakes is ≈ 100 MB for `flows`, ≈ 160 MB for `analyze`.
pub const MAX_OPEN_HANDSHAKES: usize = 1 << 15;
/// Live connections (tracked with their full state) past which those least worth keeping
/// are finalised before their time, as idle ones are (a later segment continues the
/// stream and is not judged again), and counted ([`Tracker::cuts`]): closed
/// ones (RST, or FIN both ways: only late copies can still come) and those heard from one
/// side only, oldest last packet first. Past [`MAX_LIVE_CONNECTIONS`] any are. A bound on
/// memory, not a rule of TCP: a flood to random 4-tuples that is not a SYN flood (ACK,
/// FIN or NULL segments, answered by RSTs or not) holds a connection of ≈ 3 KB of tracker
/// state for each packet for `CLOSED_LINGER_NS` if answered, `IDLE_FINALISE_NS` if
/// not (300,000 ACKs in 15 s: `flows` 1.29 GB, `analyze` 1.92 GB; answered, 0.99 and 1.41
/// GB; bench/README.md, session 33). 65,536 is Linux's own bound on the connections a host
/// with connection tracking (a firewall, a NAT, a Kubernetes node) carries at once,
/// `nf_conntrack_max`, on a host of 1 to 4 GiB (`nf_conntrack_init_start`). At it a flood
/// of one packet a connection costs `flows` ≈ 350 MB and `analyze` ≈ 450 MB with the
/// tombstones of the cut ones (≈ 130 bytes each, at most [`MAX_CLOSED_TOMBSTONES`];
/// 1,000,000 ACKs in 50 s: 354 and 449 MB). A capture that is not a flood reaches it with connections
/// closed within `CLOSED_LINGER_NS` (6,554 closing a second), of which only the late
/// copies of their last packets become a continuation, or when taken on one side of an
/// asymmetric route or with `tcpdump -Q out` at a busy host (every connection one-sided):
/// there the connections quiet longest are cut, and no longer judged if they resume.
pub const LIVE_CUT_START: usize = 1 << 16;
/// Live connections past which any, not only the closed and one-sided
/// ([`LIVE_CUT_START`]), are cut: closed ones first, then those whose last packet is
/// oldest. `nf_conntrack_max` on a 64-bit host of more than 4 GiB, 262,144 by default: past
/// it Linux drops the packets of new connections (`__nf_conntrack_alloc`, when
/// `early_drop` finds no unanswered entry to evict), so a capture at or behind such a host
/// never needs more. At it, connections of one to three packets each cost `flows`
/// 1.2–1.3 GB and `analyze` 1.7–1.9 GB (bench/README.md, session 33).
pub const MAX_LIVE_CONNECTIONS: usize = 1 << 18;
/// The most tombstones kept of those forgotten `CLOSED_TOMBSTONE_NS` after their
/// connection's last packet (of closed connections, of handshakes, of one-sided ones cut):
/// past it the oldest are forgotten sooner, and counted ([`Tracker::cuts`]).
/// A bound on memory: each is ≈ 130 bytes (48 in the slab, 40 in a map that holds up to
/// twice as many), and a flood leaves one per connection for 5 min (20,000 a second:
/// 6 M, ≈ 780 MB). Linux itself keeps at most `tcp_max_tw_buckets` connections in
/// TIME_WAIT, half its established hash table of at most 524,288 slots by default
/// (`tcp_init`, `tcp_sk_init`): 262,144; past it a closing connection skips TIME_WAIT
/// (`tcp_time_wait`, "time wait bucket table overflow"). The price: a segment without SYN
/// on a forgotten 4-tuple starts a new stream where Wireshark continues the old one, which
/// takes more than 262,144 such connections ending within 5 min (874 a second) and a
/// late packet after the oldest of them was forgotten.
pub const MAX_CLOSED_TOMBSTONES: usize = MAX_LIVE_CONNECTIONS;
/// The most tombstones kept of the others, which are kept for good because their
/// connection may resume: of connections finalised idle (`IDLE_FINALISE_NS`) or cut
/// while heard both ways. Past it the oldest are forgotten, and counted with the others
/// ([`Tracker::cuts`]). A bound on memory: without it a capture grows by ≈ 130 bytes for
/// every connection that ends without RST or FIN (a client that vanished, a slow scan
/// below [`LIVE_CUT_START`]'s rate: 100 a second is ≈ 50 MB an hour). The same number as
/// [`MAX_LIVE_CONNECTIONS`], `nf_conntrack_max`'s default on a 64-bit host of more than
/// 4 GiB: a firewall or NAT on the path remembers no more connections, whatever their
/// state, and one idle that long behind it has been evicted there too. The price: a
/// segment without SYN on a forgotten 4-tuple starts a new stream where Wireshark
/// continues the old one, which takes a connection quiet for more than 10 min resuming
/// after 262,144 others were finalised after it without closing.
pub const MAX_KEPT_TOMBSTONES: usize = MAX_LIVE_CONNECTIONS;
/// Entries of handshakes no longer open that the tracker's queue of open ones may hold
/// before they are dropped, at least: with few handshakes open at once (the usual
/// capture), the queue is passed over once per this many connections opened, 32 KB of
/// entries at most, instead of on each.
const HANDSHAKE_QUEUE_SLACK: usize = 1024;
/// How often (capture time) finished connections are looked for.
const SWEEP_INTERVAL_NS: i64 = 1_000_000_000;
/// A segment repeating the IP ID, sequence number, length, ACK, window and flags of one
/// seen this recently in the same direction is the capture recording one packet twice
/// (tcptrace-hardware-dups.pcap: copies < 10 ms apart; arkime-wireshark-retrans.pcap:
/// copies 5 µs and 50 ms apart), not a retransmission: stacks give every transmission a
/// new IP ID, and an ID comes back only after 65,536 packets of the same sender.
const CAPTURE_DUPLICATE_NS: i64 = 500_000_000;
/// Recent segments remembered per direction to recognise capture duplicates.
const RECENT_SEGMENTS: usize = 8;
/// Vantage inference: one handshake leg at most this fraction of the other is "≈ 0".
const VANTAGE_RATIO: u64 = 4;
/// Handshake legs shorter than this are host scheduling noise (veth, loopback, LAN),
/// too short to tell which side the capture was on; data→ACK gaps decide then.
const HANDSHAKE_NOISE_NS: u64 = 1_000_000;
/// Without a handshake, data→ACK samples needed in each direction to judge the vantage.
const MIN_VANTAGE_SAMPLES: u64 = 3;

/// The 4-tuple in a compact, cheaply hashed form: addresses as 128-bit integers
/// (IPv4 mapped into IPv6), the lower endpoint first. Stored as 32-bit words: a `u128`
/// field would align the key to 16 bytes and make it 48 instead of 36, in every entry of
/// the live and finalised maps.
#[derive(Copy, Clone, PartialEq, Eq, Hash)]
struct FlowKey {
    lo_addr: [u32; 4],
    hi_addr: [u32; 4],
    /// Low endpoint's port in the high half.
    ports: u32,
}

impl FlowKey {
    /// Whether `e` is the lower endpoint of this 4-tuple.
    fn lo_is(&self, e: &Endpoint) -> bool {
        words(addr_bits(e)) == self.lo_addr && (self.ports >> 16) as u16 == e.port
    }

    /// The lower and the higher endpoint, as IPv4 addresses when `v4`.
    fn endpoints(&self, v4: bool) -> (Endpoint, Endpoint) {
        let addr = |w: &[u32; 4]| {
            if v4 {
                std::net::IpAddr::V4(std::net::Ipv4Addr::from(w[3]))
            } else {
                let bits = w.iter().fold(0u128, |a, &x| a << 32 | u128::from(x));
                std::net::IpAddr::V6(std::net::Ipv6Addr::from(bits))
            }
        };
        (
            Endpoint {
                addr: addr(&self.lo_addr),
                port: (self.ports >> 16) as u16,
            },
            Endpoint {
                addr: addr(&self.hi_addr),
                port: self.ports as u16,
            },
        )
    }

    fn new(src: &Endpoint, dst: &Endpoint) -> Self {
        let (s, d) = ((addr_bits(src), src.port), (addr_bits(dst), dst.port));
        // `s <= d` spelled out: the tuples' `PartialOrd` went through `partial_cmp` and
        // cost ≈ 25 instructions a packet (callgrind).
        let src_lo = s.0 < d.0 || (s.0 == d.0 && s.1 <= d.1);
        let (lo, hi) = if src_lo { (s, d) } else { (d, s) };
        FlowKey {
            lo_addr: words(lo.0),
            hi_addr: words(hi.0),
            ports: u32::from(lo.1) << 16 | u32::from(hi.1),
        }
    }
}

/// Packets after which a shard's load counts half: short, so that the load is the rate of
/// the connections a shard holds now, not a head start (the benchmark capture's bulk
/// streams start 5,800, 9,800 and 2,100 packets apart: with a half-life of 65,536 the
/// first one's head start sent the other three to the same shard). 1,024 packets are a
/// few milliseconds of a busy link.
const SHARD_LOAD_HALF_LIFE: u32 = 1 << 10;

/// A shard's weight of one ([`Sharder::reweigh`]).
const WEIGHT_ONE: u64 = 1 << 8;

/// How far a shard's weight may move from one, either way: far enough for a reader that
/// does a few times a worker's work per packet, near enough that a long run of one
/// signal cannot starve a shard for good.
const WEIGHT_RANGE: u64 = 16;

/// Splits connections between `shards` trackers by load: a 4-tuple seen for the first
/// time goes to the shard that has been given the fewest packets lately (a count halved
/// every [`SHARD_LOAD_HALF_LIFE`] packets, so it follows the current rate of the
/// connections each shard holds rather than their history), and stays there
/// (so each tracker sees whole connections, port reuse included). The reader of a
/// parallel pass runs one `Sharder` over every frame and hands each to its shard.
///
/// Why not a hash of the 4-tuple ([`Tracker::shard_of`]): a few bulk transfers carry
/// most packets of a typical capture, and a hash puts them together as often as not (the
/// benchmark capture: all 4 bulk streams, 92 % of the packets, in one of 2 shards).
/// Memory: one entry per 4-tuple (≈ 60 bytes), small next to the summary kept for each
/// connection.
pub struct Sharder {
    /// Shard of each connection, by a 64-bit hash of its 4-tuple: two 4-tuples with the
    /// same hash share a shard, which is harmless; one 4-tuple always has one shard.
    owner: FxHashMap<u64, u32>,
    /// Packets given to each shard, decayed.
    load: Vec<u64>,
    /// What a packet given to each shard costs it, in 1/[`WEIGHT_ONE`]: a shard whose
    /// thread also does other work (the reader's own shard) is worth fewer packets.
    weight: Vec<u64>,
    /// Packets until the loads are halved.
    until_decay: u32,
    /// The last frame's endpoints and their shard: the next frame is often of the same
    /// connection (81 % of the bench's mixed capture), and comparing the endpoints, in
    /// either direction, costs less than hashing them (the reader of a sharded pass does
    /// this for every frame, alone: its work bounds what a second core gains).
    last: Option<(FlowAddrs, u32)>,
    /// The same for [`Self::shard_v4`]: the last plain IPv4 frame's addresses (as one
    /// `u64`, source high), ports (one `u32`, source high) and shard. Each of the two
    /// stays true whatever the other path sees: a 4-tuple's shard never changes.
    last_v4: Option<(u64, u32, u32)>,
}

impl Sharder {
    pub fn new(shards: usize) -> Self {
        Sharder {
            owner: FxHashMap::default(),
            load: vec![0; shards.clamp(1, u32::MAX as usize)],
            weight: vec![WEIGHT_ONE; shards.clamp(1, u32::MAX as usize)],
            until_decay: SHARD_LOAD_HALF_LIFE,
            last: None,
            last_v4: None,
        }
    }

    /// The same for both directions, and for any two endpoints [`FlowKey`] holds equal.
    fn flow_hash(flow: &FlowAddrs) -> u64 {
        let fold = |a: std::net::IpAddr| match a {
            std::net::IpAddr::V4(a) => fold_v4(a.into()),
            std::net::IpAddr::V6(a) => fold_bits(u128::from(a)),
        };
        Self::pair_hash(
            (fold(flow.src), flow.src_port),
            (fold(flow.dst), flow.dst_port),
        )
    }

    /// [`Self::flow_hash`] of `FlowAddrs::from(e)`, from the numbers.
    #[inline]
    fn v4_hash(e: Ipv4Ends) -> u64 {
        Self::pair_hash((fold_v4(e.src), e.src_port), (fold_v4(e.dst), e.dst_port))
    }

    /// The hash of two endpoints (an address folded to 64 bits, a port) in either order.
    #[inline]
    fn pair_hash(s: (u64, u16), d: (u64, u16)) -> u64 {
        use std::hash::Hasher;
        let (lo, hi) = if s <= d { (s, d) } else { (d, s) };
        let mut h = rustc_hash::FxHasher::default();
        h.write_u64(lo.0);
        h.write_u64(hi.0);
        h.write_u32(u32::from(lo.1) << 16 | u32::from(hi.1));
        h.finish()
    }

    /// The shard of the connection these endpoints belong to; counts one packet for it.
    /// Inline, the lookup out of line: the frame of the last connection again costs a
    /// comparison (the call was ≈ 17 instructions a frame, callgrind).
    #[inline]
    pub fn shard(&mut self, flow: &FlowAddrs) -> usize {
        let same = |l: &FlowAddrs| {
            l == flow
                || (l.src == flow.dst
                    && l.dst == flow.src
                    && l.src_port == flow.dst_port
                    && l.dst_port == flow.src_port)
        };
        let s = match &self.last {
            Some((l, s)) if same(l) => *s as usize,
            _ => self.owner(flow),
        };
        self.count(s)
    }

    /// [`Self::shard`] of `FlowAddrs::from(e)` (the same shard, whichever of the two
    /// the frames of a connection take), for the sharded reader's usual frame: the last
    /// connection's endpoints compared as two integers each way, hashed from the numbers
    /// when they differ. `shard` on the same frames was ≈ 90 instructions a frame with
    /// the `FlowAddrs` built and passed (callgrind, `flows -j 2`, 1 M packets of the
    /// mixed bench capture).
    #[inline(always)]
    pub fn shard_v4(&mut self, e: Ipv4Ends) -> usize {
        let addrs = u64::from(e.src) << 32 | u64::from(e.dst);
        let ports = u32::from(e.src_port) << 16 | u32::from(e.dst_port);
        let s = match self.last_v4 {
            Some((a, p, s))
                if (a == addrs && p == ports)
                    || (a == addrs.rotate_left(32) && p == ports.rotate_left(16)) =>
            {
                s as usize
            }
            _ => self.owner_v4(e, addrs, ports),
        };
        self.count(s)
    }

    /// Counts one packet for shard `s`; returns it.
    #[inline(always)]
    fn count(&mut self, s: usize) -> usize {
        if let Some(l) = self.load.get_mut(s) {
            *l += 1;
        }
        self.until_decay -= 1;
        if self.until_decay == 0 {
            self.decay();
        }
        s
    }

    /// The shard of a connection other than the last one's.
    #[inline(never)]
    fn owner(&mut self, flow: &FlowAddrs) -> usize {
        let s = self.owner_of(Self::flow_hash(flow));
        self.last = Some((*flow, s));
        s as usize
    }

    /// [`Self::owner`] for [`Self::shard_v4`].
    #[inline(never)]
    fn owner_v4(&mut self, e: Ipv4Ends, addrs: u64, ports: u32) -> usize {
        let s = self.owner_of(Self::v4_hash(e));
        self.last_v4 = Some((addrs, ports, s));
        s as usize
    }

    /// The shard of the connection hashed to `key`: its own, or for a new one the least
    /// loaded.
    #[inline(always)]
    fn owner_of(&mut self, key: u64) -> u32 {
        match self.owner.get(&key) {
            Some(&s) => s,
            None => {
                // The first least-loaded shard, by weighted load: ties go to the lowest
                // index.
                let (i, _) = self
                    .load
                    .iter()
                    .zip(&self.weight)
                    .map(|(&l, &w)| l.saturating_mul(w))
                    .enumerate()
                    .min_by_key(|&(i, l)| (l, i))
                    .unwrap_or((0, 0));
                self.owner.insert(key, i as u32);
                i as u32
            }
        }
    }

    /// Makes a packet of `shard` count `factor` times more (a factor above one) or less
    /// towards its load from now on, within [`WEIGHT_RANGE`] of one: for a caller that
    /// sees one shard's thread fall behind or run dry. Existing connections keep their
    /// shard; only where new ones go changes.
    pub fn reweigh(&mut self, shard: usize, factor: f64) {
        if let Some(w) = self.weight.get_mut(shard) {
            let (lo, hi) = (WEIGHT_ONE / WEIGHT_RANGE, WEIGHT_ONE * WEIGHT_RANGE);
            *w = ((*w as f64 * factor) as u64).clamp(lo, hi);
        }
    }

    #[cold]
    fn decay(&mut self) {
        self.until_decay = SHARD_LOAD_HALF_LIFE;
        self.load.iter_mut().for_each(|l| *l /= 2);
    }
}

/// An endpoint's address as 128 bits (IPv4 mapped into IPv6).
#[inline]
fn addr_bits(e: &Endpoint) -> u128 {
    match e.addr {
        std::net::IpAddr::V4(a) => v4_mapped(a),
        std::net::IpAddr::V6(a) => u128::from(a),
    }
}

/// 128 bits as four 32-bit words, most significant first.
#[inline]
fn words(a: u128) -> [u32; 4] {
    [
        (a >> 96) as u32,
        (a >> 64) as u32,
        (a >> 32) as u32,
        a as u32,
    ]
}

/// An IPv4 address as [`Sharder::flow_hash`] folds it: its IPv4-mapped IPv6 form, folded.
#[inline]
fn fold_v4(a: u32) -> u64 {
    fold_bits(v4_mapped(a.into()))
}

/// 128 address bits folded to 64.
#[inline]
fn fold_bits(x: u128) -> u64 {
    (x as u64) ^ ((x >> 64) as u64)
}

/// `u128::from(a.to_ipv6_mapped())` (::ffff:a.b.c.d) without going through 16 bytes.
#[inline]
fn v4_mapped(a: std::net::Ipv4Addr) -> u128 {
    const MAPPED_PREFIX: u128 = 0xffff << 32;
    MAPPED_PREFIX | u128::from(u32::from(a))
}

/// Window scale state of one direction, in Wireshark's three states.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
enum Scale {
    /// Wireshark's -1: no SYN seen.
    Unknown,
    /// Wireshark's -2: scaling known not to be in use.
    None,
    Shift(u8),
}

impl Scale {
    fn shift(self) -> u8 {
        match self {
            Scale::Shift(s) => s,
            _ => 0,
        }
    }
}

#[derive(Copy, Clone, Debug)]
struct Unacked {
    seq: u32,
    /// Next sequence number after it (SYN and FIN count one).
    end: u32,
    ts: Timestamp,
    frame: u64,
    /// Its ACK gives no RTT sample: it was retransmitted (Karn's rule), or sent at a time
    /// that is not its own ([`Tracker::time_untrusted`]).
    no_sample: bool,
}

/// What identifies one packet on the wire, to recognise the capture recording it twice.
#[derive(Copy, Clone, Debug)]
struct RecentSegment {
    ip_id: u16,
    seq: u32,
    len: u32,
    ack: u32,
    window: u16,
    flags: u16,
    ts: Timestamp,
}

impl RecentSegment {
    fn same_packet(&self, o: &RecentSegment) -> bool {
        (
            self.ip_id,
            self.seq,
            self.len,
            self.ack,
            self.window,
            self.flags,
        ) == (o.ip_id, o.seq, o.len, o.ack, o.window, o.flags)
    }
}

/// Per-direction state: Wireshark's `tcp_flow_t` analysis fields plus tcpwhy's own.
#[derive(Debug)]
struct Dir {
    base_seq: Option<u32>,
    unwrap: SeqUnwrapper,
    next_seq: Option<u32>,
    next_seq_time: Timestamp,
    max_seq_to_be_acked: Option<u32>,
    last_ack: Option<u32>,
    last_ack_time: Timestamp,
    window: Option<u16>,
    scale: Scale,
    dupack_num: u32,
    last_segment: SegmentKinds,
    /// Highest cumulative ACK this side has sent.
    max_ack: Option<u32>,
    unacked: VecDeque<Unacked>,
    ts_sent: VecDeque<(u32, Timestamp, u64)>,
    last_tsval: Option<u32>,
    last_tsecr: Option<u32>,
    retransmissions: VecDeque<(u32, u32, u64)>,
    /// The last segments, to spot capture duplicates.
    recent: [Option<RecentSegment>; RECENT_SEGMENTS],
    recent_next: usize,
    rtt_ack: RttSamples,
    rtt_ts: RttSamples,
    first_data_rel: Option<u64>,
    max_end_rel: u64,
    /// This side sent a RST its peer accepts (at the next sequence number): the
    /// connection is over ([`RESET_LINGER_NS`]).
    reset_in_sequence: bool,
    /// What limited this side's data, over time (`limits.rs`).
    limits: Limits,
    /// This side's SYN and newest TSval, for the connection model.
    model: DirModel,
    out: DirSummary,
}

impl Default for Dir {
    fn default() -> Self {
        Dir::new()
    }
}

impl Dir {
    fn new() -> Self {
        Dir {
            base_seq: None,
            unwrap: SeqUnwrapper::new(0),
            next_seq: None,
            next_seq_time: Timestamp::default(),
            max_seq_to_be_acked: None,
            last_ack: None,
            last_ack_time: Timestamp::default(),
            window: None,
            scale: Scale::Unknown,
            dupack_num: 0,
            last_segment: SegmentKinds::default(),
            max_ack: None,
            unacked: VecDeque::new(),
            ts_sent: VecDeque::new(),
            last_tsval: None,
            last_tsecr: None,
            retransmissions: VecDeque::new(),
            recent: [None; RECENT_SEGMENTS],
            recent_next: 0,
            rtt_ack: RttSamples::default(),
            rtt_ts: RttSamples::default(),
            first_data_rel: None,
            max_end_rel: 0,
            reset_in_sequence: false,
            limits: Limits::default(),
            model: DirModel::default(),
            out: DirSummary::default(),
        }
    }

    /// Makes this [`Dir::new`] holding its buffers emptied, for the next connection
    /// ([`crate::reuse`]), in place.
    fn empty(&mut self) {
        use crate::reuse::emptied_deque;
        *self = Dir {
            unacked: emptied_deque(std::mem::take(&mut self.unacked)),
            ts_sent: emptied_deque(std::mem::take(&mut self.ts_sent)),
            retransmissions: emptied_deque(std::mem::take(&mut self.retransmissions)),
            rtt_ack: std::mem::take(&mut self.rtt_ack).emptied(),
            rtt_ts: std::mem::take(&mut self.rtt_ts).emptied(),
            limits: std::mem::take(&mut self.limits).emptied(),
            ..Dir::new()
        };
    }

    /// Whether this segment is one the capture already recorded (same IP ID, sequence
    /// number, length, ACK, window and flags moments ago); remembers it otherwise.
    /// Without a usable IP ID (IPv6, or the ID 0 of Linux's DF packets) only a copy with
    /// the very same timestamp counts: no stack retransmits within the same nanosecond
    /// (zeek-tcp-ssh-dups.pcap records each frame four times at one instant).
    #[inline(always)]
    fn is_capture_duplicate(&mut self, ts: Timestamp, pkt: &Packet<'_>) -> bool {
        let id = pkt.ip_id.unwrap_or(0);
        // Only a segment that carries nothing beyond what was seen can be a copy of an
        // earlier one; for new data (most segments of a transfer) skip the search.
        let mut end = pkt.seq.wrapping_add(pkt.payload_len);
        if pkt.flags.syn() || pkt.flags.fin() {
            end = end.wrapping_add(1);
        }
        let may_repeat = self.next_seq.is_none_or(|n| !seq_gt(end, n));
        let key = RecentSegment {
            ip_id: id,
            seq: pkt.seq,
            len: pkt.payload_len,
            ack: pkt.ack,
            window: pkt.window,
            flags: pkt.flags.0,
            ts,
        };
        let limit = if id == 0 { 0 } else { CAPTURE_DUPLICATE_NS };
        let dup = may_repeat
            && self
                .recent
                .iter()
                .flatten()
                .any(|r| r.same_packet(&key) && ts.since(r.ts).abs() <= limit);
        if !dup {
            self.recent[self.recent_next] = Some(key);
            self.recent_next = (self.recent_next + 1) % RECENT_SEGMENTS;
        }
        dup
    }

    /// The direction's summary, `rtt_ack` its [`RttSamples::stats_in_place`] already
    /// taken (the vantage inference reads them too).
    fn summary(&mut self, rtt_ack: Option<RttStats>) -> DirSummary {
        let mut out = self.out.clone();
        out.unique_bytes = self
            .first_data_rel
            .map_or(0, |f| self.max_end_rel.saturating_sub(f));
        out.rtt_ack = rtt_ack;
        out.rtt_ts = self.rtt_ts.stats_in_place();
        out.limits = self.limits.times();
        out.window_floor = Some(self.limits.window_floor()).filter(|&f| f > 0);
        out.scale_floor = self.limits.scale_floor();
        out.wscale = Some(match self.scale {
            Scale::Unknown => WindowScale::Unknown,
            Scale::None => WindowScale::NotNegotiated,
            Scale::Shift(s) => WindowScale::Shift(s),
        });
        out
    }
}

struct Conn {
    stream: u64,
    /// Source of direction 0 (the first packet's sender).
    origin: Endpoint,
    other: Endpoint,
    dirs: [Dir; 2],
    first_frame: u64,
    last_frame: u64,
    start: Timestamp,
    end: Timestamp,
    /// Most recent SYN (Wireshark's `ts_mru_syn`).
    syn_time: Option<Timestamp>,
    synack_time: Option<Timestamp>,
    /// Wireshark's `ts_first_rtt`: first ACK after the most recent SYN.
    irtt_ns: Option<i64>,
    syn_to_synack_ns: Option<u64>,
    synack_to_ack_ns: Option<u64>,
    client: Option<(usize, ClientBy)>,
    reused_port: bool,
    continuation: bool,
    /// The senders' IP ID counters; `None` when the tracker's user does not read
    /// [`SegmentEvent::ip_id`] ([`Tracker::without_ip_ids`]).
    ids: Option<IpIds>,
    /// The capture clock's tick as far as seen, and the last segment's time it was
    /// judged on (`ConnModel::tick_ns`).
    tick_ns: u64,
    tick_last: Option<Timestamp>,
    /// The smallest RTT sample so far (`ConnModel::min_rtt_sample_ns`).
    min_rtt_sample_ns: Option<u64>,
    /// ICMP errors quoting its segments ([`Tracker::icmp_error`]).
    icmp_errors: Option<IcmpErrors>,
    /// Opened by a SYN or SYN/ACK and no segment without SYN since: a handshake still
    /// open, counted in [`Tracker`]'s `handshakes` (set and cleared there, not by
    /// [`Self::segment`]).
    handshake: bool,
}

/// The little that is kept of a finalised connection so that later packets on its
/// 4-tuple get the same stream index, as in Wireshark.
#[derive(Copy, Clone)]
struct Tombstone {
    stream: u64,
    origin: Endpoint,
    other: Endpoint,
    base_seq: [Option<u32>; 2],
    /// Enough of each direction's sequence state to classify a late packet (a SYN
    /// retransmitted long after a RST is still a retransmission).
    seq: [TombSeq; 2],
}

#[derive(Copy, Clone)]
struct TombSeq {
    next_seq: Option<u32>,
    last_ack: Option<u32>,
    window: Option<u16>,
    scale: Scale,
    end: Timestamp,
}

/// The tombstones of finalised connections: a map from 4-tuple to a slot of a slab, so
/// that the map's entries are 40 bytes instead of 176 (a hash table keeps about twice as
/// many entries as it holds: 370 MB for the million tombstones of a SYN flood).
struct Tombstones {
    index: FxHashMap<FlowKey, u32>,
    slab: Vec<PackedTomb>,
    free: Vec<u32>,
    /// Entries that may be forgotten (`CLOSED`: after [`CLOSED_TOMBSTONE_NS`], or sooner
    /// past `cap[1]`); the others are kept for good, or until more than `cap[0]` are.
    closed: usize,
    /// Most entries kept: `[not CLOSED, CLOSED]` ([`MAX_KEPT_TOMBSTONES`] and
    /// [`MAX_CLOSED_TOMBSTONES`], or a shard's share).
    cap: [usize; 2],
    /// Entries forgotten before their time because more than their `cap` were kept.
    forgotten_early: u64,
}

/// A [`Tombstone`] in 48 bytes instead of 128: the endpoints come back from the 4-tuple
/// it is filed under, `Option`s become presence bits, and both directions share the end
/// time (the million tombstones of a SYN flood: 128 → 48 MB).
#[derive(Copy, Clone, Default)]
struct PackedTomb {
    stream: u64,
    end: i64,
    /// `[dir 0, dir 1]` each: base sequence number, next sequence number, last ACK.
    seqs: [[u32; 3]; 2],
    windows: [u16; 2],
    /// [`Scale`] of each direction: `SCALE_UNKNOWN`, `SCALE_NONE` or the shift.
    scales: [u8; 2],
    /// Which of `seqs` and `windows` hold a value (bit `3 * dir + field`, windows at 6 + dir).
    present: u8,
    /// `ORIGIN_IS_LO`, `V4`, `CLOSED`.
    flags: u8,
}

const SCALE_UNKNOWN: u8 = u8::MAX;
const SCALE_NONE: u8 = u8::MAX - 1;
const ORIGIN_IS_LO: u8 = 1;
const V4: u8 = 2;
const CLOSED: u8 = 4;

impl PackedTomb {
    fn pack(key: &FlowKey, t: &Tombstone) -> Self {
        let mut p = PackedTomb {
            stream: t.stream,
            end: t.seq[0].end.0,
            ..PackedTomb::default()
        };
        for d in 0..2 {
            let fields = [t.base_seq[d], t.seq[d].next_seq, t.seq[d].last_ack];
            for (f, v) in fields.into_iter().enumerate() {
                if let Some(v) = v {
                    p.seqs[d][f] = v;
                    p.present |= 1 << (3 * d + f);
                }
            }
            if let Some(w) = t.seq[d].window {
                p.windows[d] = w;
                p.present |= 1 << (6 + d);
            }
            p.scales[d] = match t.seq[d].scale {
                Scale::Unknown => SCALE_UNKNOWN,
                Scale::None => SCALE_NONE,
                Scale::Shift(n) => n.min(MAX_WSCALE),
            };
        }
        if key.lo_is(&t.origin) {
            p.flags |= ORIGIN_IS_LO;
        }
        if t.origin.addr.is_ipv4() {
            p.flags |= V4;
        }
        p
    }

    fn unpack(&self, key: &FlowKey) -> Tombstone {
        let v4 = self.flags & V4 != 0;
        let (lo, hi) = key.endpoints(v4);
        let (origin, other) = if self.flags & ORIGIN_IS_LO != 0 {
            (lo, hi)
        } else {
            (hi, lo)
        };
        let get = |d: usize, f: usize| {
            (self.present & (1 << (3 * d + f)) != 0).then_some(self.seqs[d][f])
        };
        let seq = [0, 1].map(|d| TombSeq {
            next_seq: get(d, 1),
            last_ack: get(d, 2),
            window: (self.present & (1 << (6 + d)) != 0).then_some(self.windows[d]),
            scale: match self.scales[d] {
                SCALE_UNKNOWN => Scale::Unknown,
                SCALE_NONE => Scale::None,
                n => Scale::Shift(n),
            },
            end: Timestamp(self.end),
        });
        Tombstone {
            stream: self.stream,
            origin,
            other,
            base_seq: [get(0, 0), get(1, 0)],
            seq,
        }
    }
}

impl Tombstones {
    fn new(cap: [usize; 2]) -> Self {
        Tombstones {
            index: FxHashMap::default(),
            slab: Vec::new(),
            free: Vec::new(),
            closed: 0,
            cap,
            forgotten_early: 0,
        }
    }

    /// Entries of the class `closed` (`CLOSED` or not).
    fn count(&self, closed: bool) -> usize {
        if closed {
            self.closed
        } else {
            self.len() - self.closed
        }
    }

    fn len(&self) -> usize {
        self.index.len()
    }

    /// Forgets the tombstones of the class `closed` that ended before `before`.
    fn forget(&mut self, closed: bool, before: Timestamp) {
        // Nothing of the class: no pass over the others (a slow scan's 262,144 idle
        // tombstones each minute of capture, for the closed ones it never has).
        if self.count(closed) == 0 {
            return;
        }
        let (slab, free, n_closed) = (&self.slab, &mut self.free, &mut self.closed);
        self.index.retain(|_, &mut i| {
            let Some(t) = slab.get(i as usize) else {
                free.push(i);
                return false;
            };
            let old = (t.flags & CLOSED != 0) == closed && t.end < before.0;
            if old {
                free.push(i);
                *n_closed -= usize::from(closed);
            }
            !old
        });
    }

    /// Forgets the oldest tombstones of the class `closed` (by end time) until an eighth
    /// of its cap is free: one pass over the tombstones per that many of the class filed.
    #[cold]
    #[inline(never)]
    fn forget_oldest(&mut self, closed: bool) {
        let cap = self.cap[usize::from(closed)];
        let keep = cap - cap / 8;
        let Some(n) = self.count(closed).checked_sub(keep).filter(|&n| n > 0) else {
            return;
        };
        let slab = &self.slab;
        let mut ends: Vec<i64> = self
            .index
            .values()
            .filter_map(|&i| slab.get(i as usize))
            .filter(|t| (t.flags & CLOSED != 0) == closed)
            .map(|t| t.end)
            .collect();
        if n > ends.len() {
            // Never so, as `closed` counts them; should it be, it is counted again here,
            // not on every tombstone filed from now on.
            if closed {
                self.closed = ends.len();
            }
            return;
        }
        let nth = *ends.select_nth_unstable(n - 1).1;
        let before = self.len();
        self.forget(closed, Timestamp(nth.saturating_add(1)));
        self.forgotten_early += (before - self.len()) as u64;
    }

    fn remove(&mut self, key: &FlowKey) -> Option<Tombstone> {
        let i = self.index.remove(key)?;
        self.free.push(i);
        let t = self.slab.get(i as usize)?;
        if t.flags & CLOSED != 0 {
            self.closed -= 1;
        }
        Some(t.unpack(key))
    }

    /// Files `t` under `key`; `closed`: forgotten [`CLOSED_TOMBSTONE_NS`] after its end,
    /// or sooner if more than `cap` such are kept.
    fn insert(&mut self, key: FlowKey, t: Tombstone, closed: bool) {
        let mut t = PackedTomb::pack(&key, &t);
        if closed {
            t.flags |= CLOSED;
        }
        if let Some(old) = self
            .index
            .get(&key)
            .and_then(|&i| self.slab.get_mut(i as usize))
        {
            self.closed -= usize::from(old.flags & CLOSED != 0);
            self.closed += usize::from(closed);
            *old = t;
        } else {
            let i = match self.free.pop() {
                Some(i) => i,
                None => {
                    // 2^32 tombstones would need 500 GB; past that, forget new ones.
                    let Ok(i) = u32::try_from(self.slab.len()) else {
                        return;
                    };
                    self.slab.push(t);
                    i
                }
            };
            if let Some(slot) = self.slab.get_mut(i as usize) {
                *slot = t;
            }
            self.index.insert(key, i);
            self.closed += usize::from(closed);
        }
        if self.count(closed) > self.cap[usize::from(closed)] {
            self.forget_oldest(closed);
        }
    }
}

/// Connections to finalise after a RST: its time, the 4-tuple and the stream.
type Resets = VecDeque<(Timestamp, FlowKey, u64)>;

/// Whether `step` is a multiple of `tick`, a power of ten up to [`COARSEST_TICK_NS`]
/// (the clock tick of [`ConnModel::tick_ns`]): each power a constant divisor, tested
/// with a multiply, where the remainder by the tick as a variable was a hardware
/// division on most packets of `analyze` (one instruction to callgrind, ≈ 25 cycles).
#[inline]
fn multiple_of_tick(step: u64, tick: u64) -> bool {
    match tick {
        1 => true,
        10 => step % 10 == 0,
        100 => step % 100 == 0,
        1_000 => step % 1_000 == 0,
        10_000 => step % 10_000 == 0,
        100_000 => step % 100_000 == 0,
        1_000_000 => step % 1_000_000 == 0,
        10_000_000 => step % 10_000_000 == 0,
        _ => step % tick == 0,
    }
}

/// Marks the provisional stream ids of [`Tracker::with_provisional_streams`]; frame
/// numbers never reach it.
pub const PROVISIONAL_STREAM: u64 = 1 << 63;

/// What [`Conn::segment`] hands back: the segment's event for [`Tracker::process`], or
/// nothing for [`Tracker::track`], whose user reads only the summaries (`flows`). Without
/// events the tracker neither builds the event (with its copy of the connection model)
/// nor keeps what only events carry: the model's clock tick, newest TSvals and smallest
/// RTT sample, and the retransmissions a D-SACK is linked to (callgrind, `flows` on 1 M
/// packets of the mixed bench capture: ≈ 150 of the tracker's 1,177 instructions a
/// packet). Every count and summary is the same either way.
trait Emit: Sized {
    /// Whether the event is wanted (and the state only it reads kept).
    const EVENTS: bool;
    fn emit(make: impl FnOnce() -> SegmentEvent) -> Self;
    /// Marks the segment as reusing a 4-tuple ([`SegmentKinds::REUSED_PORTS`]).
    fn reused_ports(&mut self);
}

impl Emit for SegmentEvent {
    const EVENTS: bool = true;
    #[inline(always)]
    fn emit(make: impl FnOnce() -> SegmentEvent) -> Self {
        make()
    }
    fn reused_ports(&mut self) {
        self.kinds.set(SegmentKinds::REUSED_PORTS);
    }
}

impl Emit for () {
    const EVENTS: bool = false;
    #[inline(always)]
    fn emit(_: impl FnOnce() -> SegmentEvent) -> Self {}
    fn reused_ports(&mut self) {}
}

/// The connection a segment last found in the live map, by that segment's endpoints as
/// decoded: a segment with the same two (either way round) belongs to it without building
/// its [`FlowKey`] (≈ 45 instructions: the addresses widened to 128 bits and ordered) and
/// comparing it (callgrind, `flows` on the mixed bench capture). Endpoints that differ
/// only in how an IPv4 address is written (mapped or not) miss and take the map.
#[derive(Copy, Clone)]
struct RecentFlow {
    /// Sender and receiver of that segment.
    src: Endpoint,
    dst: Endpoint,
    key: FlowKey,
    slot: usize,
    /// The direction of a segment sent by `src`, and of one sent by `dst`.
    dirs: [usize; 2],
}

/// Tracks every TCP connection of one capture.
pub struct Tracker {
    /// Connections with their full state, as indexes into `slots`; the only map a
    /// segment of an established connection looks at (when it misses `recent`).
    live: FxHashMap<FlowKey, usize>,
    /// Live connections; a finalised one leaves its slot empty for the next.
    slots: Vec<Option<Box<Conn>>>,
    /// For each slot, a time (ns) before which its connection cannot expire: what the
    /// last sweep that looked at it found ([`Conn::expiry_ns`]), `i64::MIN` to look
    /// again, `i64::MAX` for a free slot; the sweep reads it front to back. A segment can
    /// only bring that time forward if it carries a FIN or RST, or goes to a connection
    /// that had one, or is earlier than the connection's last: those reset it. So the
    /// sweep reads a connection's state only when it may have expired, not each one every
    /// second of capture (1 M one-ACK connections at 100 a second, ≈ 60,000 live: 89 % of
    /// `flows`' 101 s went to that; bench/README.md, sessions 34 and 35).
    expiry_floor: Vec<i64>,
    free_slots: Vec<usize>,
    /// Finalised connections' state, buffers emptied, for the next ones
    /// ([`crate::reuse`]); never more than `free_slots`. Boxed: each goes into a slot
    /// as it is, its allocation with it.
    #[allow(clippy::vec_box)]
    spare: Vec<Box<Conn>>,
    /// The last connection looked up: the segments and ACKs of one connection often
    /// follow each other, and this saves the 4-tuple's key, the hash and the probe.
    /// Cleared when that slot is emptied.
    recent: Option<RecentFlow>,
    /// Finalised connections.
    done: Tombstones,
    /// When the tombstones were last scanned for closed ones to forget.
    last_tomb_scan: Option<Timestamp>,
    next_stream: u64,
    /// Number streams [`PROVISIONAL_STREAM`] | first frame (see `with_provisional_streams`).
    provisional: bool,
    finished: Vec<ConnSummary>,
    /// When the next sweep is due (the last one's time + [`SWEEP_INTERVAL_NS`]), in
    /// nanoseconds: one comparison a packet instead of a saturating subtraction
    /// (callgrind: ≈ 5 instructions a packet). `None`: never (the sum overflowed, so no
    /// later time can be an interval on); `i64::MIN` before the first packet.
    next_sweep: Option<i64>,
    max_live: usize,
    /// Connections whose peer accepted a RST, with the RST's time, in capture order:
    /// finalised [`RESET_LINGER_NS`] after their last packet, without waiting for a sweep.
    resets: Resets,
    /// Keep the senders' IP ID order ([`Tracker::without_ip_ids`]).
    ip_ids: bool,
    /// The next segments' times are not their own ([`Tracker::time_untrusted`]).
    untimed: bool,
    /// Live connections still in their handshake, oldest first ([`MAX_OPEN_HANDSHAKES`]).
    handshakes: Handshakes,
    /// The bounds on live connections ([`LIVE_CUT_START`], [`MAX_LIVE_CONNECTIONS`]).
    cut: LiveCut,
}

/// [`LIVE_CUT_START`] and [`MAX_LIVE_CONNECTIONS`] (or a shard's share of them), when the
/// live connections are next looked over for some to cut, and how many were.
struct LiveCut {
    start: usize,
    max: usize,
    /// Live connections at which the next are opened only after a look: after each, the
    /// number then plus an eighth of `start`, so that there is one pass over the live
    /// connections per that many opened, within `start..=max`.
    next_look: usize,
    cut: u64,
}

impl LiveCut {
    fn new(max: usize) -> Self {
        let max = max.max(32);
        let start = max / (MAX_LIVE_CONNECTIONS / LIVE_CUT_START);
        LiveCut {
            start,
            max,
            next_look: start,
            cut: 0,
        }
    }
}

/// What the tracker's bounds on memory did: connections finalised, or their streams
/// forgotten, before their time (docs/tracking.md). All zero on a capture that is not a
/// flood or a scan.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct Cuts {
    /// Handshakes finalised while open ([`MAX_OPEN_HANDSHAKES`]).
    pub handshakes: u64,
    /// Live connections finalised ([`LIVE_CUT_START`], [`MAX_LIVE_CONNECTIONS`]).
    pub connections: u64,
    /// Ended connections whose streams were forgotten ([`MAX_CLOSED_TOMBSTONES`],
    /// [`MAX_KEPT_TOMBSTONES`]).
    pub streams_forgotten: u64,
}

impl std::ops::AddAssign for Cuts {
    fn add_assign(&mut self, o: Cuts) {
        self.handshakes += o.handshakes;
        self.connections += o.connections;
        self.streams_forgotten += o.streams_forgotten;
    }
}

/// The connection of a handshake queue entry (`(slot, stream)`), if it is still that
/// stream's and still in its handshake; `None` for a stale entry.
fn open_handshake(slots: &[Option<Box<Conn>>], (slot, stream): (usize, u64)) -> Option<&Conn> {
    slots
        .get(slot)?
        .as_deref()
        .filter(|c| c.stream == stream && c.handshake)
}

/// Live connections that have seen only segments with SYN: how many, and each one's
/// slot and stream in the order they opened, to find the oldest. An entry whose slot
/// no longer holds that stream in its handshake (it was answered, or ended) is stale:
/// skipped when reached, and dropped when stale ones are most of the queue.
#[derive(Default)]
struct Handshakes {
    open: usize,
    queue: VecDeque<(usize, u64)>,
    /// Handshakes finalised while open because more than `cap` were.
    cut: u64,
    cap: usize,
}

impl Default for Tracker {
    fn default() -> Self {
        Self::new()
    }
}

impl Tracker {
    pub fn new() -> Self {
        Tracker {
            live: FxHashMap::default(),
            slots: Vec::new(),
            expiry_floor: Vec::new(),
            free_slots: Vec::new(),
            spare: Vec::new(),
            recent: None,
            done: Tombstones::new([MAX_KEPT_TOMBSTONES, MAX_CLOSED_TOMBSTONES]),
            last_tomb_scan: None,
            next_stream: 0,
            provisional: false,
            finished: Vec::new(),
            next_sweep: Some(i64::MIN),
            max_live: 0,
            resets: VecDeque::new(),
            ip_ids: true,
            untimed: false,
            handshakes: Handshakes {
                cap: MAX_OPEN_HANDSHAKES,
                ..Handshakes::default()
            },
            cut: LiveCut::new(MAX_LIVE_CONNECTIONS),
        }
    }

    /// A tracker for one shard of a parallel pass: it sees only some connections, so it
    /// cannot know their `tcp.stream` numbers. Each stream is numbered
    /// [`PROVISIONAL_STREAM`] | its first frame instead, unique across shards;
    /// the pass that joins the shards then assigns the final numbers (the order of the
    /// first frames; `tcpwhy-pipeline`'s `StreamNumbers` and `Connections`).
    pub fn with_provisional_streams() -> Self {
        Tracker {
            provisional: true,
            ..Tracker::new()
        }
    }

    /// This tracker's events will not be read for [`SegmentEvent::ip_id`] (`flows`
    /// reads only the summaries): the senders' IP ID order is not kept, which was 4 % of
    /// `flows`' instructions (callgrind, 300 k packets of the mixed bench capture); every
    /// event's `ip_id` is then the default.
    pub fn without_ip_ids(self) -> Self {
        Tracker {
            ip_ids: false,
            ..self
        }
    }

    /// Whether the segments processed from now on are at a time that is not their own
    /// (`tcpwhy_capture::Frame::ts_untrusted`: the capture's clock ran backwards, or the
    /// record's time was out of range, and the pass gave the frame the latest trusted
    /// time before it). Such a segment is tracked as any other, but no RTT sample starts
    /// or ends at it (docs/tracking.md "Untrusted times").
    #[inline(always)]
    pub fn time_untrusted(&mut self, untrusted: bool) {
        self.untimed = untrusted;
    }

    /// Connections currently tracked with their full state.
    pub fn live_connections(&self) -> usize {
        self.live.len()
    }

    /// Finalised connections whose stream index is still remembered.
    pub fn remembered_connections(&self) -> usize {
        self.done.len()
    }

    /// Most connections tracked with full state at once so far.
    pub fn max_live_connections(&self) -> usize {
        self.max_live
    }

    /// A tracker (before its first segment) that keeps at most `cap` handshakes open
    /// instead of [`MAX_OPEN_HANDSHAKES`]: each shard of a parallel pass its share of
    /// it, so that the pass's memory does not grow with its threads; tests, a small one.
    pub fn with_handshake_cap(self, cap: usize) -> Self {
        Tracker {
            handshakes: Handshakes {
                cap,
                ..Handshakes::default()
            },
            ..self
        }
    }

    /// What the bounds on memory did so far: handshakes finalised while open because
    /// more than [`MAX_OPEN_HANDSHAKES`] were (the oldest first), live connections
    /// finalised before their time because more than [`LIVE_CUT_START`] were live (closed
    /// and one-sided ones) or more than [`MAX_LIVE_CONNECTIONS`] (any), and tombstones
    /// forgotten before their time because more than [`MAX_CLOSED_TOMBSTONES`] or
    /// [`MAX_KEPT_TOMBSTONES`] of their kind were kept.
    pub fn cuts(&self) -> Cuts {
        Cuts {
            handshakes: self.handshakes.cut,
            connections: self.cut.cut,
            streams_forgotten: self.done.forgotten_early,
        }
    }

    /// A tracker (before its first segment) that keeps at most `max` connections live
    /// instead of [`MAX_LIVE_CONNECTIONS`] (at least 32), starts cutting closed and
    /// one-sided ones at the same fraction of it as [`LIVE_CUT_START`] is, and keeps the
    /// same share of [`MAX_CLOSED_TOMBSTONES`] and [`MAX_KEPT_TOMBSTONES`]: as
    /// [`Self::with_handshake_cap`], for the shards of a parallel pass and tests.
    pub fn with_live_cap(self, max: usize) -> Self {
        let cut = LiveCut::new(max);
        let share = |bound: usize| cut.max.saturating_mul(bound) / MAX_LIVE_CONNECTIONS;
        Tracker {
            done: Tombstones::new([share(MAX_KEPT_TOMBSTONES), share(MAX_CLOSED_TOMBSTONES)]),
            cut,
            ..self
        }
    }

    /// Number of streams seen so far.
    pub fn streams(&self) -> u64 {
        self.next_stream
    }

    /// Summaries of connections finalised so far (closed or idle), in finalisation order.
    pub fn drain_finished(&mut self) -> std::vec::Drain<'_, ConnSummary> {
        self.finished.drain(..)
    }

    /// Finalises every connection still open; returns all summaries not yet drained. No
    /// tombstone is forgotten meanwhile (they all go with the tracker): the counts read
    /// before it are final.
    pub fn finish(mut self) -> Vec<ConnSummary> {
        self.done.cap = [usize::MAX; 2];
        let keys: Vec<FlowKey> = self.live.keys().copied().collect();
        for k in keys {
            self.finalise(&k);
        }
        self.finished
    }

    /// Which of `shards` independent trackers owns this segment's connection: the same
    /// for both directions and for every connection on the same 4-tuple, so that each
    /// shard sees whole connections (including port reuse) and nothing else.
    pub fn shard_of(pkt: &Packet<'_>, shards: usize) -> usize {
        use std::hash::{Hash, Hasher};
        let src = Endpoint {
            addr: pkt.src,
            port: pkt.src_port,
        };
        let dst = Endpoint {
            addr: pkt.dst,
            port: pkt.dst_port,
        };
        let mut h = rustc_hash::FxHasher::default();
        FlowKey::new(&src, &dst).hash(&mut h);
        // The high bits of an Fx hash are the well-mixed ones.
        ((h.finish() >> 32) % shards.max(1) as u64) as usize
    }

    /// Processes one TCP segment seen at `ts` in frame `frame`.
    pub fn process(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) -> SegmentEvent {
        self.segment(frame, ts, pkt)
    }

    /// Processes one TCP segment as [`Self::process`] does, for a user that reads only
    /// the connections' summaries: no [`SegmentEvent`] is made (see `Emit`).
    pub fn track(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) {
        self.segment(frame, ts, pkt)
    }

    #[inline(always)]
    fn segment<O: Emit>(&mut self, frame: u64, ts: Timestamp, pkt: &Packet<'_>) -> O {
        self.finalise_resets(ts);
        self.maybe_sweep(ts);
        let src = Endpoint {
            addr: pkt.src,
            port: pkt.src_port,
        };
        let dst = Endpoint {
            addr: pkt.dst,
            port: pkt.dst_port,
        };
        let syn_only = pkt.flags.0 & (TcpFlags::SYN | TcpFlags::ACK) == TcpFlags::SYN;

        // Stream assignment (Wireshark: a SYN whose sequence number differs from the
        // base of a known conversation starts a new one — port reuse). The common case,
        // the connection of the last segment and no new SYN, compares endpoints; another
        // live connection costs one hash lookup (and becomes `recent`).
        let recent = self.recent.as_ref().and_then(|r| {
            if r.src == src && r.dst == dst {
                Some((r.slot, r.dirs[0]))
            } else if r.src == dst && r.dst == src {
                Some((r.slot, r.dirs[1]))
            } else {
                None
            }
        });
        let mut key = None;
        let found = match recent {
            Some(hit) => Some(hit),
            None => {
                let k = FlowKey::new(&src, &dst);
                key = Some(k);
                self.live.get(&k).and_then(|&i| {
                    let c = self.slots.get(i)?.as_ref()?;
                    let dirs = [usize::from(src != c.origin), usize::from(dst != c.origin)];
                    self.recent = Some(RecentFlow {
                        src,
                        dst,
                        key: k,
                        slot: i,
                        dirs,
                    });
                    Some((i, dirs[0]))
                })
            }
        };
        if let (Some((slot, d)), Some(r)) = (found, &self.recent) {
            if let Some(c) = self.slots.get_mut(slot).and_then(|c| c.as_mut()) {
                if !(syn_only && c.dirs[d].base_seq.is_some_and(|b| b != pkt.seq)) {
                    // A segment without SYN ends an open handshake.
                    if c.handshake && !pkt.flags.syn() {
                        c.handshake = false;
                        self.handshakes.open -= 1;
                    }
                    if pkt.flags.0 & (TcpFlags::FIN | TcpFlags::RST) != 0
                        || c.fin_or_rst_seen()
                        || ts < c.end
                    {
                        if let Some(e) = self.expiry_floor.get_mut(slot) {
                            *e = i64::MIN;
                        }
                    }
                    // The one call of the per-segment path (inlined, it cost ≈ 30
                    // instructions a packet more in spills). The event goes straight to
                    // the caller (a copy of it here cost a 250-byte memcpy a
                    // packet); the RST's linger is queued inside.
                    return c.segment::<O>(
                        frame,
                        ts,
                        d,
                        pkt,
                        Some((&mut self.resets, &r.key)),
                        self.untimed,
                    );
                }
            }
        }
        let key = key.unwrap_or_else(|| FlowKey::new(&src, &dst));
        self.process_slow(key, frame, ts, src, dst, pkt)
    }

    /// A segment that opens a stream: the first of a 4-tuple, a port reuse, or a late
    /// packet of a finalised connection. Kept out of line so that the per-segment path
    /// has a small stack frame.
    #[cold]
    #[inline(never)]
    fn process_slow<O: Emit>(
        &mut self,
        key: FlowKey,
        frame: u64,
        ts: Timestamp,
        src: Endpoint,
        dst: Endpoint,
        pkt: &Packet<'_>,
    ) -> O {
        let syn_only = pkt.flags.0 & (TcpFlags::SYN | TcpFlags::ACK) == TcpFlags::SYN;
        let mut reused = false;
        let mut revive: Option<Tombstone> = None;
        if self.live.contains_key(&key) {
            // `process` handled every other segment of a live connection.
            reused = true;
        } else if let Some(t) = self.done.remove(&key) {
            let d = usize::from(src != t.origin);
            if syn_only && t.base_seq[d].is_some_and(|b| b != pkt.seq) {
                reused = true;
            } else {
                revive = Some(t);
            }
        }
        if reused {
            self.finalise(&key);
        }
        let mut conn = self.open(frame, ts, src, dst, revive);
        conn.reused_port = reused;
        let f = usize::from(src != conn.origin);
        let mut ev = conn.segment::<O>(frame, ts, f, pkt, None, self.untimed);
        if reused {
            ev.reused_ports();
        }
        conn.handshake = pkt.flags.syn();
        let (handshake, stream) = (conn.handshake, conn.stream);
        let slot = self.insert_live(key, conn);
        if handshake {
            self.handshake_opened(slot, stream);
        }
        ev
    }

    /// Counts a connection opened by a SYN or SYN/ACK, then finalises the oldest open
    /// handshakes beyond [`MAX_OPEN_HANDSHAKES`].
    fn handshake_opened(&mut self, slot: usize, stream: u64) {
        let h = &mut self.handshakes;
        h.open += 1;
        h.queue.push_back((slot, stream));
        // Stale entries dropped once they are half the queue: one pass over it for
        // every `open` (at least `HANDSHAKE_QUEUE_SLACK`) connections opened since.
        if h.queue.len() > 2 * h.open.max(HANDSHAKE_QUEUE_SLACK) {
            let slots = &self.slots;
            h.queue.retain(|&e| open_handshake(slots, e).is_some());
        }
        while self.handshakes.open > self.handshakes.cap {
            let Some(oldest) = self.handshakes.queue.pop_front() else {
                break;
            };
            if let Some(c) = open_handshake(&self.slots, oldest) {
                let key = FlowKey::new(&c.origin, &c.other);
                self.finalise(&key);
                self.handshakes.cut += 1;
            }
        }
    }

    /// A connection opened by frame `frame`, sent by `src`: the continuation of a
    /// finalised one (`revive`, its tombstone), or a new stream.
    fn open(
        &mut self,
        frame: u64,
        ts: Timestamp,
        src: Endpoint,
        dst: Endpoint,
        revive: Option<Tombstone>,
    ) -> Box<Conn> {
        if self.live.len() >= self.cut.next_look {
            self.cut_live();
        }
        let spare = self.spare.pop();
        let ip_ids = self.ip_ids;
        let new_conn = |stream, origin, other| {
            // A spare's directions were emptied when it was finalised: taken as they are.
            let mut c = spare.unwrap_or_else(|| Box::new(Conn::blank(origin, other)));
            c.renew(stream, origin, other, frame, ts, ip_ids);
            c
        };
        match revive {
            Some(t) => {
                let mut c = new_conn(t.stream, t.origin, t.other);
                for (d, b) in t.base_seq.iter().enumerate() {
                    if let Some(b) = *b {
                        c.dirs[d].base_seq = Some(b);
                        c.dirs[d].unwrap = SeqUnwrapper::new(b);
                    }
                    let (dir, old) = (&mut c.dirs[d], t.seq[d]);
                    dir.next_seq = old.next_seq;
                    dir.next_seq_time = old.end;
                    dir.max_seq_to_be_acked = old.next_seq;
                    dir.last_ack = old.last_ack;
                    dir.last_ack_time = old.end;
                    dir.window = old.window;
                    dir.scale = old.scale;
                }
                c.continuation = true;
                c
            }
            None => {
                let s = if self.provisional {
                    PROVISIONAL_STREAM | frame
                } else {
                    self.next_stream
                };
                self.next_stream += 1;
                new_conn(s, src, dst)
            }
        }
    }

    /// Looks over the live connections before one more is opened at
    /// [`LiveCut::next_look`]: past [`LIVE_CUT_START`], finalises the closed and
    /// one-sided ones, oldest last packet first, until an eighth of it is free; at
    /// [`MAX_LIVE_CONNECTIONS`], any until an eighth of that is. The stream breaks ties,
    /// so that every run cuts the same.
    #[cold]
    #[inline(never)]
    fn cut_live(&mut self) {
        let slots = &self.slots;
        // 0: closed, 1: heard from one side only, 2: any other.
        let mut order: Vec<((u8, i64, u64), FlowKey)> = self
            .live
            .iter()
            .filter_map(|(k, &i)| {
                let c = slots.get(i)?.as_deref()?;
                let class = if c.closed() {
                    0
                } else if c.one_sided() {
                    1
                } else {
                    2
                };
                Some(((class, c.end.0, c.stream), *k))
            })
            .collect();
        let over = |bound: usize| order.len().saturating_sub(bound - bound / 8);
        let expendable = order.iter().filter(|&&((class, ..), _)| class < 2).count();
        let (start, max) = (self.cut.start, self.cut.max);
        let mut cut = over(start).min(expendable);
        if order.len() >= max {
            cut = cut.max(over(max));
        }
        if cut > 0 && cut < order.len() {
            order.select_nth_unstable_by_key(cut, |&(rank, _)| rank);
        }
        order.truncate(cut);
        order.sort_unstable_by_key(|&(rank, _)| rank);
        for (_, key) in order {
            self.finalise_cut(&key);
        }
        self.cut.cut += cut as u64;
        self.cut.next_look = (self.live.len() + start / 8).clamp(start, max);
    }

    /// Makes `conn` the live connection of `key`.
    fn insert_live(&mut self, key: FlowKey, conn: Box<Conn>) -> usize {
        let conn = Some(conn);
        let slot = match self.free_slots.pop() {
            Some(i) => {
                self.slots[i] = conn;
                i
            }
            None => {
                self.slots.push(conn);
                self.slots.len() - 1
            }
        };
        self.expiry_floor.resize(self.slots.len(), i64::MIN);
        self.expiry_floor[slot] = i64::MIN;
        self.live.insert(key, slot);
        self.max_live = self.max_live.max(self.live.len());
        slot
    }

    /// An ICMP or ICMPv6 error quoting a segment, in frame `frame`: evidence on the
    /// connection of the quoted 4-tuple (either direction; a finalised one continues, as
    /// with a late segment), or a new stream when none is known, which later segments of
    /// that 4-tuple join. Wireshark numbers the quoted header so (tshark 4.0,
    /// docs/tshark-comparison.md "ICMP errors"). The quoted header is not a segment: no
    /// sequence, ACK, window, RTT or retransmission state changes, nor the connection's
    /// last frame and end time; it never starts a new stream on port reuse.
    pub fn icmp_error(&mut self, frame: u64, ts: Timestamp, e: &IcmpError) {
        let src = Endpoint {
            addr: e.quoted.src,
            port: e.quoted.src_port,
        };
        let dst = Endpoint {
            addr: e.quoted.dst,
            port: e.quoted.dst_port,
        };
        let key = FlowKey::new(&src, &dst);
        if let Some(c) = self
            .live
            .get(&key)
            .and_then(|&i| self.slots.get_mut(i))
            .and_then(|c| c.as_mut())
        {
            c.icmp_errors = Some(IcmpErrors::with(c.icmp_errors, frame, e));
            return;
        }
        let revive = self.done.remove(&key);
        let mut conn = self.open(frame, ts, src, dst, revive);
        conn.icmp_errors = Some(IcmpErrors::new(frame, e));
        self.insert_live(key, conn);
    }

    /// Finalises the reset connections quiet for [`RESET_LINGER_NS`] by `now`. The test
    /// is inline and the work out of line: on most packets there is none, and the call
    /// with its frame cost ≈ 17 instructions a packet.
    #[inline(always)]
    fn finalise_resets(&mut self, now: Timestamp) {
        if self
            .resets
            .front()
            .is_some_and(|&(at, _, _)| now.since(at) > RESET_LINGER_NS)
        {
            self.finalise_resets_due(now);
        }
    }

    #[inline(never)]
    fn finalise_resets_due(&mut self, now: Timestamp) {
        while let Some(&(at, key, stream)) = self.resets.front() {
            if now.since(at) <= RESET_LINGER_NS {
                break;
            }
            self.resets.pop_front();
            let Some(c) = self
                .live
                .get(&key)
                .and_then(|&i| self.slots.get(i))
                .and_then(|c| c.as_ref())
            else {
                continue;
            };
            if c.stream != stream {
                continue;
            }
            if now.since(c.end) > RESET_LINGER_NS {
                self.finalise(&key);
            } else {
                // Packets came after the RST: wait for quiet again.
                self.resets.push_back((c.end, key, stream));
            }
        }
    }

    /// Sweeps every [`SWEEP_INTERVAL_NS`]: the test inline, the sweep out of line (the
    /// call cost ≈ 20 instructions a packet).
    #[inline(always)]
    fn maybe_sweep(&mut self, now: Timestamp) {
        if self.next_sweep.is_some_and(|at| now.0 >= at) {
            self.sweep(now);
        }
    }

    #[inline(never)]
    fn sweep(&mut self, now: Timestamp) {
        self.next_sweep = now.0.checked_add(SWEEP_INTERVAL_NS);
        // The slots' times front to back, not the live map's entries: 8 bytes a slot read
        // in order, where the map's took a random access each (61 % of `flows`' time on
        // 1 M one-ACK connections at 100 a second, ≈ 60,000 live).
        let mut done = Vec::new();
        for (floor, slot) in self.expiry_floor.iter_mut().zip(&self.slots) {
            if *floor > now.0 {
                continue;
            }
            let Some(c) = slot else {
                continue;
            };
            *floor = c.expiry_ns();
            if c.expired(now) {
                done.push(FlowKey::new(&c.origin, &c.other));
            }
        }
        for k in done {
            self.finalise(&k);
        }
        // Connections ended: the next look comes an eighth of the start past those left.
        let c = &mut self.cut;
        c.next_look = c.next_look.min(self.live.len() + c.start / 8).max(c.start);
        let scan_due = self
            .last_tomb_scan
            .is_none_or(|t| now.since(t) >= TOMBSTONE_SCAN_NS);
        if scan_due {
            self.last_tomb_scan = Some(now);
            self.done
                .forget(true, Timestamp(now.0.saturating_sub(CLOSED_TOMBSTONE_NS)));
        }
    }

    /// Turns a live connection into a summary and a tombstone.
    fn finalise(&mut self, key: &FlowKey) {
        self.finalise_as(key, false);
    }

    /// [`Self::finalise`] for a connection cut ([`LIVE_CUT_START`]): the tombstone
    /// of one heard from one side only is forgotten as a closed connection's, so that a
    /// flood of one-packet connections to random 4-tuples leaves five minutes of them, not
    /// one for every packet of the capture. A later packet on such a 4-tuple starts a new
    /// stream where Wireshark would continue the old one.
    fn finalise_cut(&mut self, key: &FlowKey) {
        self.finalise_as(key, true);
    }

    fn finalise_as(&mut self, key: &FlowKey, cut: bool) {
        let slot = self.live.remove(key);
        if self.recent.is_some_and(|r| Some(r.slot) == slot) {
            self.recent = None;
        }
        let conn = slot.and_then(|i| {
            self.free_slots.push(i);
            if let Some(e) = self.expiry_floor.get_mut(i) {
                *e = i64::MAX; // nothing to expire until the slot is filled again
            }
            self.slots.get_mut(i).and_then(Option::take)
        });
        if let Some(mut c) = conn {
            if c.handshake {
                self.handshakes.open -= 1;
            }
            let tomb = Tombstone {
                stream: c.stream,
                origin: c.origin,
                other: c.other,
                base_seq: [c.dirs[0].base_seq, c.dirs[1].base_seq],
                seq: [0, 1].map(|d| {
                    let x = &c.dirs[d];
                    TombSeq {
                        next_seq: x.next_seq,
                        last_ack: x.last_ack,
                        window: x.window,
                        scale: x.scale,
                        end: c.end,
                    }
                }),
            };
            self.finished.push(c.summary());
            // A handshake's tombstone is forgotten as a closed connection's: Linux gives
            // up a handshake after its last retransmission (`tcp_syn_retries`,
            // `tcp_synack_retries`), each at most `TCP_RTO_MAX` (120 s) after the one
            // before, so nothing of it comes [`CLOSED_TOMBSTONE_NS`] after its last packet.
            let forget = c.closed() || c.handshake || (cut && c.one_sided());
            self.done.insert(*key, tomb, forget);
            // Its buffers emptied now (those past `MAX_REUSED_BYTES` freed), kept for the
            // connection that takes the slot freed above.
            c.dirs.iter_mut().for_each(Dir::empty);
            self.spare.push(c);
        }
    }
}

impl Conn {
    /// A connection with new directions and every other field a placeholder, for
    /// [`Self::renew`] to make it a new connection: `renew` alone says what one starts
    /// from.
    fn blank(origin: Endpoint, other: Endpoint) -> Self {
        Conn {
            stream: 0,
            origin,
            other,
            dirs: [Dir::new(), Dir::new()],
            first_frame: 0,
            last_frame: 0,
            start: Timestamp::default(),
            end: Timestamp::default(),
            syn_time: None,
            synack_time: None,
            irtt_ns: None,
            syn_to_synack_ns: None,
            synack_to_ack_ns: None,
            client: None,
            reused_port: false,
            continuation: false,
            ids: None,
            tick_ns: 0,
            tick_last: None,
            min_rtt_sample_ns: None,
            icmp_errors: None,
            handshake: false,
        }
    }

    /// Makes this a new connection, in place, keeping the directions it has (a blank
    /// one's, or a spare's, emptied when it was finalised): a spare rebuilt around its
    /// directions and moved back into its box was ≈ 12 KB of copies a connection
    /// (`Tracker::open`, 1.1 % of `analyze`'s time on the mixed bench capture, perf).
    fn renew(
        &mut self,
        stream: u64,
        origin: Endpoint,
        other: Endpoint,
        frame: u64,
        ts: Timestamp,
        ip_ids: bool,
    ) {
        // Every field named: one added is a compile error here until it is set.
        let Conn {
            stream: my_stream,
            origin: my_origin,
            other: my_other,
            dirs: _,
            first_frame,
            last_frame,
            start,
            end,
            syn_time,
            synack_time,
            irtt_ns,
            syn_to_synack_ns,
            synack_to_ack_ns,
            client,
            reused_port,
            continuation,
            ids,
            tick_ns,
            tick_last,
            min_rtt_sample_ns,
            icmp_errors,
            handshake,
        } = self;
        (*my_stream, *my_origin, *my_other) = (stream, origin, other);
        (*first_frame, *last_frame, *start, *end) = (frame, frame, ts, ts);
        (*syn_time, *synack_time, *irtt_ns) = (None, None, None);
        (*syn_to_synack_ns, *synack_to_ack_ns, *client) = (None, None, None);
        (*reused_port, *continuation) = (false, false);
        *ids = ip_ids.then(IpIds::default);
        (*tick_ns, *tick_last, *min_rtt_sample_ns) = (COARSEST_TICK_NS, None, None);
        *icmp_errors = None;
        // The caller counts it, if its first segment is a SYN ([`Tracker::process_slow`]).
        *handshake = false;
    }

    /// FIN both ways, or a RST.
    fn closed(&self) -> bool {
        let [a, b] = &self.dirs;
        a.out.rst || b.out.rst || (a.out.fin && b.out.fin)
    }

    /// No segment seen from one of the two sides (a flood's or a scan's packet to a
    /// random 4-tuple, an unanswered one, or a capture of one direction only).
    fn one_sided(&self) -> bool {
        self.dirs.iter().any(|d| d.out.packets == 0)
    }

    /// Both FINs acknowledged at the capture point: each side delivered everything it
    /// sent (the FIN is sequenced after the data, RFC 9293 §3.6), so what can still come
    /// is a FIN or last ACK sent again when that ACK was lost after the capture point,
    /// and the capture's own copies: it is as over as after an accepted RST.
    fn finished(&self) -> bool {
        let fin_acked = |me: &Dir, peer: &Dir| {
            me.out.fin && matches!((me.next_seq, peer.max_ack), (Some(n), Some(a)) if seq_le(n, a))
        };
        fin_acked(&self.dirs[0], &self.dirs[1]) && fin_acked(&self.dirs[1], &self.dirs[0])
    }

    fn expired(&self, now: Timestamp) -> bool {
        now.since(self.end) > self.linger_ns()
    }

    /// How long after its last packet the connection, as it is, is finalised: the
    /// shortest linger that applies (their order is asserted after `IDLE_FINALISE_NS`).
    fn linger_ns(&self) -> i64 {
        let reset = self.dirs[0].reset_in_sequence || self.dirs[1].reset_in_sequence;
        if reset || self.finished() {
            RESET_LINGER_NS
        } else if self.closed() {
            CLOSED_LINGER_NS
        } else {
            IDLE_FINALISE_NS
        }
    }

    /// The time (ns) up to which the connection, as it is, is not [`Self::expired`]
    /// (`Tracker::expiry_floor`).
    fn expiry_ns(&self) -> i64 {
        self.end.0.saturating_add(self.linger_ns())
    }

    /// A FIN or RST was seen either way: the connection's linger may be shortened.
    fn fin_or_rst_seen(&self) -> bool {
        let [a, b] = &self.dirs;
        a.out.fin || b.out.fin || a.out.rst || b.out.rst
    }

    fn client_dir(&self) -> (usize, ClientBy) {
        if let Some(c) = self.client {
            return c;
        }
        // No handshake: the side with the higher port looks like the ephemeral one.
        let d = usize::from(self.other.port > self.origin.port);
        (d, ClientBy::PortGuess)
    }

    /// The connection's summary; its RTT samples are left sorted (it is being finalised).
    fn summary(&mut self) -> ConnSummary {
        let (c, client_by) = self.client_dir();
        let s = 1 - c;
        let ends = [self.origin, self.other];
        let rtt_ack = [
            self.dirs[c].rtt_ack.stats_in_place(),
            self.dirs[s].rtt_ack.stats_in_place(),
        ];
        // Data→ACK gaps are long for data sent from the capture side (a full RTT) and
        // short for data it receives (only the peer's ACK delay).
        let median = |d: Option<RttStats>| {
            d.filter(|s| s.samples >= MIN_VANTAGE_SAMPLES)
                .map(|s| s.median_ns)
        };
        let by_data = match (median(rtt_ack[0]), median(rtt_ack[1])) {
            (Some(a), Some(b)) if b.saturating_mul(VANTAGE_RATIO) <= a => Vantage::Client,
            (Some(a), Some(b)) if a.saturating_mul(VANTAGE_RATIO) <= b => Vantage::Server,
            _ => Vantage::Unknown,
        };
        let by_handshake = match (self.syn_to_synack_ns, self.synack_to_ack_ns) {
            (Some(a), Some(b)) if a + b > 0 => Some((a.max(b), {
                if b.saturating_mul(VANTAGE_RATIO) <= a {
                    Vantage::Client
                } else if a.saturating_mul(VANTAGE_RATIO) <= b {
                    Vantage::Server
                } else {
                    Vantage::Middle
                }
            })),
            _ => None,
        };
        let vantage = match by_handshake {
            // Handshake legs long enough to be path delay, not scheduling noise.
            Some((longest, v)) if longest >= HANDSHAKE_NOISE_NS => v,
            Some((_, v)) if by_data == Vantage::Unknown => v,
            _ => by_data,
        };
        ConnSummary {
            stream: self.stream,
            endpoints: [ends[c], ends[s]],
            client_by,
            first_frame: self.first_frame,
            last_frame: self.last_frame,
            start: self.start,
            end: self.end,
            dirs: {
                let [a, b] = &mut self.dirs;
                let (dc, ds) = if c == 0 { (a, b) } else { (b, a) };
                [dc.summary(rtt_ack[0]), ds.summary(rtt_ack[1])]
            },
            syn_to_synack_ns: self.syn_to_synack_ns,
            synack_to_ack_ns: self.synack_to_ack_ns,
            vantage,
            reused_port: self.reused_port,
            continuation: self.continuation,
            icmp_errors: self.icmp_errors,
        }
    }

    /// One segment of this connection in direction `f` (0: from `origin`).
    /// `resets`: where a RST its receiver accepts queues the connection (under `key`)
    /// to be finalised after [`RESET_LINGER_NS`]; `None` for a connection's first packet.
    /// The direction and the key's reference rather than the sender's endpoint and the
    /// key by value: the caller knows both, and the copies were ≈ 20 instructions a
    /// packet.
    fn segment<O: Emit>(
        &mut self,
        frame: u64,
        ts: Timestamp,
        f: usize,
        pkt: &Packet<'_>,
        resets: Option<(&mut Resets, &FlowKey)>,
        untimed: bool,
    ) -> O {
        let f = f & 1;
        self.last_frame = frame;
        self.end = ts;
        let flags = pkt.flags;
        let seq = pkt.seq;
        let ack = pkt.ack;
        let seglen = pkt.payload_len;

        if self.dirs[f].base_seq.is_none() {
            // Wireshark: the base is the ISN on a SYN, else one before the first seq.
            let base = if flags.syn() {
                seq
            } else {
                seq.wrapping_sub(1)
            };
            self.dirs[f].base_seq = Some(base);
            self.dirs[f].unwrap = SeqUnwrapper::new(base);
        }

        // A copy of a packet already seen is counted and otherwise invisible.
        let queue_reset = |c: &Conn, resets: Option<(&mut Resets, &FlowKey)>| {
            if let Some((q, key)) = resets {
                if flags.rst() && c.dirs[f].reset_in_sequence {
                    q.push_back((ts, *key, c.stream));
                }
            }
        };
        if self.dirs[f].is_capture_duplicate(ts, pkt) {
            let d = &mut self.dirs[f];
            d.out.packets += 1;
            d.out.counts.capture_duplicates += 1;
            queue_reset(self, resets);
            return O::emit(|| {
                let (client, _) = self.client_dir();
                let conn = self.model(client);
                let d = &self.dirs[f];
                let mut kinds = SegmentKinds::default();
                kinds.set(SegmentKinds::CAPTURE_DUPLICATE);
                SegmentEvent {
                    stream: self.stream,
                    from_client: f == client,
                    kinds,
                    rel_seq: d.unwrap.peek(seq),
                    rel_ack: None,
                    payload_len: seglen,
                    window_bytes: u64::from(pkt.window) << d.scale.shift(),
                    dup_ack_num: 0,
                    ack_rtt: None,
                    ts_rtt: None,
                    in_flight: None,
                    dsack_of: None,
                    limit: Limit::None,
                    original: None,
                    ip_id: IdStep::default(),
                    conn,
                }
            });
        }

        // A SYN/ACK with another ISN than the base this side had (set from a stray packet
        // before it, e.g. an old ACK) restarts this side's relative numbering, on the same
        // stream, as Wireshark does (frame 158 of suricata-verify-tls-subjectaltname.pcap).
        let mut synack_rebased = false;
        if flags.syn() && flags.ack() && self.dirs[f].base_seq.is_some_and(|b| b != seq) {
            self.dirs[f].base_seq = Some(seq);
            self.dirs[f].unwrap = SeqUnwrapper::new(seq);
            synack_rebased = true;
        }

        // The clock tick from differences, not the timestamps: a coarse clock may have
        // an offset (tcptrace-zwnd.pcap: 10 ms steps from …688.2545 s).
        if O::EVENTS {
            if let Some(last) = self.tick_last {
                let step = ts.since(last).unsigned_abs();
                while step > 0 && self.tick_ns > 1 && !multiple_of_tick(step, self.tick_ns) {
                    self.tick_ns /= 10;
                }
            }
            self.tick_last = Some(ts);
        }

        // Only a SYN, or an ACK that can still give a handshake leg, has work there;
        // the test inline, the work out of line (the call was ≈ 16 instructions a
        // packet, every packet).
        if flags.syn()
            || (flags.ack()
                && ((self.irtt_ns.is_none() && self.syn_time.is_some())
                    || (self.synack_to_ack_ns.is_none() && self.synack_time.is_some())))
        {
            self.handshake(f, ts, pkt);
        }
        let ip_id = self
            .ids
            .as_mut()
            .map_or_else(IdStep::default, |ids| ids.observe(f, pkt));

        let (mut kinds, original) = self.analyze::<O>(f, frame, ts, pkt, untimed);
        if synack_rebased {
            kinds.set(SegmentKinds::REUSED_PORTS);
        }
        let repeat = SegmentKinds::RETRANSMISSION | SegmentKinds::OUT_OF_ORDER;
        if seglen > 0 && kinds.0 & repeat == 0 && !kinds.has(SegmentKinds::ZERO_WINDOW_PROBE) {
            kinds.set(SegmentKinds::NEW_DATA);
        }

        // Our own additions, which Wireshark's flags do not carry.
        let (fwd, rev) = self.pair(f);
        let rel_seq = fwd.unwrap.unwrap(seq);
        let rel_ack = (flags.ack() && rev.base_seq.is_some()).then(|| rev.unwrap.peek(ack));
        let window_bytes = if flags.syn() {
            u64::from(pkt.window)
        } else {
            u64::from(pkt.window) << fwd.scale.shift()
        };
        fwd.out.packets += 1;
        if seglen > 0 {
            fwd.out.data_packets += 1;
            fwd.out.bytes += u64::from(seglen);
            let end = rel_seq + u64::from(seglen);
            fwd.first_data_rel = Some(fwd.first_data_rel.map_or(rel_seq, |s| s.min(rel_seq)));
            fwd.max_end_rel = fwd.max_end_rel.max(end);
        }
        if !flags.syn() {
            fwd.out.max_window_bytes = Some(
                fwd.out
                    .max_window_bytes
                    .map_or(window_bytes, |w| w.max(window_bytes)),
            );
        }
        if flags.fin() {
            fwd.out.fin = true;
        }
        if flags.rst() {
            fwd.out.rst = true;
            // RFC 5961 §3.2, Linux `tcp_validate_incoming`: only a RST at exactly the next
            // expected sequence number resets the receiver; any other draws a challenge
            // ACK and the connection goes on (suricata-verify-tls-subjectaltname: a
            // client in SYN-SENT resets a bogus ACK and retries its SYN 3 s later).
            fwd.reset_in_sequence |= fwd.next_seq == Some(pkt.seq);
        } else if rev.reset_in_sequence {
            // The peer goes on sending after the RST: it did not take it (a stack that
            // ignores RSTs without ACK, wireshark-sample-ftpv6-2 stream 1), or this was in
            // flight. Either way the connection is not known to be over: linger as after
            // a FIN.
            rev.reset_in_sequence = false;
        }

        // Bytes in flight after a data segment: highest byte sent − the peer's last ACK.
        let in_flight = match (seglen > 0, fwd.next_seq, rev.last_ack) {
            (true, Some(n), Some(a)) if seq_le(a, n) => {
                let v = u64::from(n.wrapping_sub(a));
                fwd.out.max_in_flight = Some(fwd.out.max_in_flight.map_or(v, |m| m.max(v)));
                Some(v)
            }
            _ => None,
        };

        // What limits each direction (limits.rs). The peer's ACK moves this side's view of
        // the other direction; a window whose scale is unknown (no handshake) is not a
        // right edge, so only a zero window counts then.
        if flags.ack() && !flags.syn() {
            if let Some(a) = rel_ack {
                let w = if fwd.scale == Scale::Unknown && pkt.window != 0 {
                    u64::MAX / 2
                } else {
                    window_bytes
                };
                let tsval = pkt.options.timestamps.map(|t| t.0);
                rev.limits.on_ack(ts, a, w, window_bytes, tsval);
            }
        }
        if seglen > 0 && !flags.syn() {
            // An echo of 0 is none (a segment without ACK, RFC 7323 §3.2).
            let tsecr = pkt
                .options
                .timestamps
                .map(|t| t.1)
                .filter(|&e| e != 0 && flags.ack());
            fwd.limits
                .on_data(ts, rel_seq.saturating_add(u64::from(seglen)), seglen, tsecr);
            rev.limits.on_peer_data();
        }
        if flags.fin() || flags.rst() {
            fwd.limits.on_end(ts);
        }
        if flags.rst() {
            rev.limits.on_end(ts);
        }
        let limit = fwd.limits.state();

        // Remember retransmissions so a later D-SACK can be linked to one.
        if O::EVENTS && kinds.has(SegmentKinds::RETRANSMISSION) && seglen > 0 {
            if fwd.retransmissions.len() == RETRANSMISSION_HISTORY {
                fwd.retransmissions.pop_front();
            }
            fwd.retransmissions
                .push_back((seq, seq.wrapping_add(seglen), frame));
        }

        // RTT from data to the ACK covering it (Karn's rule: never from retransmitted data).
        let mut min_sample = u64::MAX;
        let mut ack_rtt = None;
        if flags.ack() {
            let advanced = fwd.max_ack.is_none_or(|m| seq_gt(ack, m));
            if advanced {
                fwd.max_ack = Some(ack);
                let mut last: Option<Unacked> = None;
                while let Some(u) = rev.unacked.front() {
                    if seq_le(u.end, ack) {
                        last = rev.unacked.pop_front();
                    } else {
                        break;
                    }
                }
                if let Some(u) = last {
                    if !u.no_sample && !untimed && ts >= u.ts {
                        let ns = ts.elapsed_since(u.ts);
                        rev.rtt_ack.add(ns);
                        min_sample = min_sample.min(ns);
                        ack_rtt = Some((u.frame, ns));
                    }
                }
            }
        }

        // RTT from the timestamp echo (RFC 7323): the first segment echoing a TSval.
        let mut ts_rtt = None;
        if let Some((tsval, tsecr)) = pkt.options.timestamps {
            // RFC 7323 §5.3: TSvals compare modulo 2^32.
            if O::EVENTS
                && fwd
                    .model
                    .tsval_max
                    .is_none_or(|m| (tsval.wrapping_sub(m) as i32) > 0)
            {
                fwd.model.tsval_max = Some(tsval);
            }
            if O::EVENTS && flags.ack() && tsecr != 0 {
                fwd.model.tsecr = Some(tsecr);
            }
            // A TSval first sent at an untrusted time starts no sample.
            if fwd.last_tsval != Some(tsval) {
                fwd.last_tsval = Some(tsval);
                if !untimed {
                    if fwd.ts_sent.len() == TS_HISTORY {
                        fwd.ts_sent.pop_front();
                    }
                    fwd.ts_sent.push_back((tsval, ts, frame));
                }
            }
            if flags.ack() && tsecr != 0 && fwd.last_tsecr != Some(tsecr) {
                fwd.last_tsecr = Some(tsecr);
                if let Some(i) = rev.ts_sent.iter().rposition(|e| e.0 == tsecr) {
                    let (_, t, fr) = rev.ts_sent[i];
                    if !untimed && ts >= t {
                        let ns = ts.elapsed_since(t);
                        rev.rtt_ts.add(ns);
                        min_sample = min_sample.min(ns);
                        fwd.limits.echo_sample(ns, seglen > 0);
                        ts_rtt = Some((fr, ns));
                    }
                    rev.ts_sent.drain(..=i);
                }
            }
        }

        // D-SACK (RFC 2883 §4): the first SACK block lies below the cumulative ACK, or
        // inside the second block.
        let mut dsack_of = None;
        let blocks = pkt.options.sack_blocks();
        if flags.ack() && !blocks.is_empty() {
            let (l, rr) = blocks[0];
            let below = seq_le(rr, ack);
            let inside = blocks
                .get(1)
                .is_some_and(|&(l2, r2)| seq_le(l2, l) && seq_le(rr, r2));
            if below || inside {
                kinds.set(SegmentKinds::DSACK);
                fwd.out.counts.dsacks += 1;
                dsack_of = rev
                    .retransmissions
                    .iter()
                    .rev()
                    .find(|&&(s, e, _)| seq_lt(s, rr) && seq_gt(e, l))
                    .map(|&(_, _, fr)| fr);
            }
        }

        if kinds.0 & !SegmentKinds::NEW_DATA != 0 {
            fwd.out.counts.record(kinds);
        }

        queue_reset(self, resets);
        if O::EVENTS && min_sample != u64::MAX {
            self.min_rtt_sample_ns = Some(
                self.min_rtt_sample_ns
                    .map_or(min_sample, |m| m.min(min_sample)),
            );
        }
        O::emit(|| {
            let (client, _) = self.client_dir();
            SegmentEvent {
                stream: self.stream,
                from_client: f == client,
                kinds,
                rel_seq,
                rel_ack,
                payload_len: seglen,
                window_bytes,
                dup_ack_num: if kinds.has(SegmentKinds::DUP_ACK) {
                    self.dirs[f].dupack_num
                } else {
                    0
                },
                ack_rtt,
                ts_rtt,
                in_flight,
                dsack_of,
                limit,
                original,
                ip_id,
                conn: self.model(client),
            }
        })
    }

    /// The connection model as of now, by side; `client` is [`Self::client_dir`]'s
    /// direction, which the caller has already looked up for the event.
    fn model(&self, client: usize) -> ConnModel {
        let c = client & 1;
        ConnModel {
            dirs: [c, 1 - c].map(|i| DirModel {
                round_trip_ns: self.dirs[i].limits.lag_ns(),
                ..self.dirs[i].model
            }),
            syn_to_synack_ns: self.syn_to_synack_ns,
            synack_to_ack_ns: self.synack_to_ack_ns,
            tick_ns: self.tick_ns,
            min_rtt_sample_ns: self.min_rtt_sample_ns,
        }
    }

    fn pair(&mut self, f: usize) -> (&mut Dir, &mut Dir) {
        let [a, b] = &mut self.dirs;
        if f == 0 {
            (a, b)
        } else {
            (b, a)
        }
    }

    /// SYN options, window scale state, handshake timing and the client's identity;
    /// called only for a segment that can change them (see the caller's test).
    #[inline(never)]
    fn handshake(&mut self, f: usize, ts: Timestamp, pkt: &Packet<'_>) {
        let flags = pkt.flags;
        let r = 1 - f;
        if flags.syn() {
            let o = &pkt.options;
            self.dirs[f].out.syn = Some(SynOptions {
                mss: o.mss,
                wscale: o.wscale,
                sack_permitted: o.sack_permitted,
                timestamps: o.timestamps.is_some(),
            });
            self.dirs[f].out.syn_cut = o.truncated;
            self.dirs[f].model.syn = if o.truncated {
                SynSeen::Cut { mss: o.mss }
            } else {
                SynSeen::Options(SynOptions {
                    mss: o.mss,
                    wscale: o.wscale,
                    sack_permitted: o.sack_permitted,
                    timestamps: o.timestamps.is_some(),
                })
            };
            self.dirs[f].out.isn = Some(pkt.seq);
            if let Some(m) = o.mss {
                // The peer's data to this side comes in segments of at most this.
                self.dirs[r].limits.set_mss(u64::from(m));
            }
            // With both SYNs seen, each sender's segment is the model's SMSS: the
            // timestamp option takes 12 of the MSS's bytes from every segment, and the
            // sender's window test is against that size (tcp_snd_wnd_test with
            // mss_now), not the announced MSS.
            if let (Some(a), Some(b)) = (self.dirs[f].out.syn, self.dirs[r].out.syn) {
                if let Some(m) = effective_mss(Some(a), Some(b)) {
                    self.dirs[f].limits.set_mss(u64::from(m));
                }
                if let Some(m) = effective_mss(Some(b), Some(a)) {
                    self.dirs[r].limits.set_mss(u64::from(m));
                }
            }
            if let Some(ws) = o.wscale {
                self.dirs[f].scale = Scale::Shift(ws.min(MAX_WSCALE));
            }
            // Wireshark's verify_tcp_window_scaling: a SYN or SYN/ACK without the option
            // means neither direction scales; a SYN/ACK with it after a SYN without it
            // does not scale either.
            if o.wscale.is_none() && o.truncated {
                // The snaplen cut the options before the window scale (a 64-byte snaplen
                // leaves a Linux SYN its MSS and SACK-permitted): it is unknown, not
                // absent. This side's shift is unknown, and with it whether the peer's
                // applies — unless the peer already turned scaling off. A later SYN/ACK
                // that carries the option proves the SYN had it (RFC 7323 §2.2: it may be
                // sent only in reply to one; Linux's tcp_synack_options adds it only when
                // the request's wscale_ok), so the peer's shift then holds.
                if self.dirs[r].scale == Scale::None {
                    self.dirs[f].scale = Scale::None;
                } else {
                    self.dirs[f].scale = Scale::Unknown;
                    if flags.ack() {
                        self.dirs[r].scale = Scale::Unknown;
                    }
                }
            } else if o.wscale.is_none() {
                self.dirs[f].scale = Scale::None;
                self.dirs[r].scale = Scale::None;
            } else if flags.ack() && self.dirs[r].scale == Scale::None {
                self.dirs[f].scale = Scale::None;
            }
            if flags.ack() {
                if self.synack_time.is_none() {
                    self.synack_time = Some(ts);
                    if let Some(s) = self.syn_time {
                        let leg = ts.elapsed_since(s);
                        self.syn_to_synack_ns = Some(leg);
                        // The round trip from the capture point to the server and back.
                        self.dirs[f].limits.set_handshake_lag(leg);
                    }
                }
                if self.client.is_none() {
                    self.client = Some((r, ClientBy::SynAck));
                }
            } else {
                self.syn_time = Some(ts);
                if !matches!(self.client, Some((_, ClientBy::Syn))) {
                    self.client = Some((f, ClientBy::Syn));
                }
            }
        } else if flags.ack() {
            if self.irtt_ns.is_none() {
                if let Some(s) = self.syn_time {
                    self.irtt_ns = Some(ts.since(s));
                }
            }
            let from_client = self.client.is_some_and(|(c, _)| c == f);
            if from_client && self.synack_to_ack_ns.is_none() {
                if let Some(sa) = self.synack_time {
                    let leg = ts.elapsed_since(sa);
                    self.synack_to_ack_ns = Some(leg);
                    // The round trip from the capture point to the client and back.
                    self.dirs[f].limits.set_handshake_lag(leg);
                }
            }
        }
    }

    /// Wireshark's sequence analysis for one segment from direction `f`; with it, for
    /// repeated data, the first captured transmission it repeats
    /// ([`SegmentEvent::original`]).
    fn analyze<O: Emit>(
        &mut self,
        f: usize,
        frame: u64,
        ts: Timestamp,
        pkt: &Packet<'_>,
        untimed: bool,
    ) -> (SegmentKinds, Option<(u64, Timestamp)>) {
        let irtt = self.irtt_ns;
        let (fwd, rev) = self.pair(f);
        let flags = pkt.flags;
        let (seq, ack, seglen, window) = (pkt.seq, pkt.ack, pkt.payload_len, pkt.window);
        let syn_fin_rst = flags.0 & (TcpFlags::SYN | TcpFlags::FIN | TcpFlags::RST) != 0;
        let mut k = SegmentKinds::default();
        let next_seq = fwd.next_seq;
        let fwd_last_ack = fwd.last_ack;

        'fwd: {
            // Zero-window probe: one byte at the next expected sequence number while
            // the peer's window is zero.
            if seglen == 1 && next_seq == Some(seq) && rev.window == Some(0) {
                k.set(SegmentKinds::ZERO_WINDOW_PROBE);
                break 'fwd;
            }
            // Zero window: window 0 on a segment without SYN, FIN or RST.
            if window == 0 && !syn_fin_rst {
                k.set(SegmentKinds::ZERO_WINDOW);
            }
            // Previous segment not captured: this one starts beyond the highest byte seen.
            if next_seq.is_some_and(|n| seq_gt(seq, n)) && !flags.rst() {
                k.set(SegmentKinds::PREVIOUS_SEGMENT_NOT_CAPTURED);
            }
            // Keep-alive: 0 or 1 byte starting one byte before the next expected seq.
            if seglen <= 1 && next_seq.is_some_and(|n| seq == n.wrapping_sub(1)) && !syn_fin_rst {
                k.set(SegmentKinds::KEEP_ALIVE);
            }
            let same_pos =
                seglen == 0 && next_seq == Some(seq) && fwd_last_ack == Some(ack) && !syn_fin_rst;
            // Window update: nothing new but the window.
            if same_pos && window != 0 && fwd.window != Some(window) {
                k.set(SegmentKinds::WINDOW_UPDATE);
            }
            // Window full: data reaching exactly the right edge of the peer's window.
            if seglen > 0 && rev.scale != Scale::Unknown && !syn_fin_rst {
                if let (Some(la), Some(w)) = (rev.last_ack, rev.window) {
                    let edge = la.wrapping_add(u32::from(w) << rev.scale.shift());
                    if seq.wrapping_add(seglen) == edge {
                        k.set(SegmentKinds::WINDOW_FULL);
                    }
                }
            }
            // Keep-alive ACK: repeats the previous ACK right after a keep-alive.
            if same_pos
                && window != 0
                && fwd.window == Some(window)
                && rev.last_segment.has(SegmentKinds::KEEP_ALIVE)
            {
                k.set(SegmentKinds::KEEP_ALIVE_ACK);
                break 'fwd;
            }
            // Zero-window probe ACK: repeats the zero window right after a probe.
            if seglen == 0
                && window == 0
                && fwd.window == Some(0)
                && next_seq == Some(seq)
                && fwd_last_ack.is_some_and(|la| ack == la || ack == la.wrapping_add(1))
                && rev.last_segment.has(SegmentKinds::ZERO_WINDOW_PROBE)
                && !syn_fin_rst
            {
                k.set(SegmentKinds::ZERO_WINDOW_PROBE_ACK);
                if fwd_last_ack.is_some_and(|la| ack == la.wrapping_add(1)) {
                    rev.next_seq = rev.next_seq.map(|n| n.wrapping_add(1));
                }
                break 'fwd;
            }
            // Duplicate ACK: same seq, ACK and window as before, no data.
            if same_pos && window != 0 && fwd.window == Some(window) {
                fwd.dupack_num += 1;
                k.set(SegmentKinds::DUP_ACK);
            }
        }
        // tshark 4.0 keeps the duplicate-ACK run through segments that repeat the same
        // ACK with data (frames 33–42 of arkime-wireshark-retrans.pcap): only a new ACK
        // value ends it.
        if !k.has(SegmentKinds::DUP_ACK) && fwd_last_ack != Some(ack) {
            fwd.dupack_num = 0;
        }

        // ACKed segment not captured: the ACK goes beyond what the peer was seen to send.
        if flags.ack() && rev.max_seq_to_be_acked.is_some_and(|m| seq_gt(ack, m)) {
            k.set(SegmentKinds::ACKED_UNSEEN);
            rev.max_seq_to_be_acked = rev.next_seq;
        }

        let mut end = seq.wrapping_add(seglen);
        if flags.syn() || flags.fin() {
            end = end.wrapping_add(1);
        }
        // Retransmission, fast retransmission, out-of-order, spurious retransmission.
        if (seglen > 0 || flags.syn() || flags.fin()) && !k.has(SegmentKinds::KEEP_ALIVE) {
            let not_advanced = next_seq.is_some_and(|n| seq_lt(seq, n));
            // Already acknowledged at the capture point (tshark checks this before
            // out-of-order: frame 1126 of tcptrace-discard-solaris.pcap).
            let spurious = seglen > 0
                && rev
                    .last_ack
                    .is_some_and(|la| la != 0 && seq_le(seq.wrapping_add(seglen), la));
            if !not_advanced {
                // New data, the common case: only the spurious test applies. The times
                // since the last duplicate ACK and the highest segment are taken below,
                // where they are read (computed for every data segment they were ≈ 15
                // instructions a packet, callgrind).
                if spurious {
                    k.set(SegmentKinds::SPURIOUS_RETRANSMISSION);
                    k.set(SegmentKinds::RETRANSMISSION);
                }
            } else if rev.dupack_num >= FAST_RETRANSMISSION_DUPACKS
                && rev.last_ack == Some(seq)
                && ts.since(rev.last_ack_time) < FAST_RETRANSMISSION_NS
            {
                k.set(SegmentKinds::FAST_RETRANSMISSION);
                k.set(SegmentKinds::RETRANSMISSION);
            } else if spurious {
                k.set(SegmentKinds::SPURIOUS_RETRANSMISSION);
                k.set(SegmentKinds::RETRANSMISSION);
            } else if ts.since(fwd.next_seq_time)
                < irtt.filter(|&v| v != 0).unwrap_or(OOO_DEFAULT_NS)
                && next_seq != Some(end)
            {
                k.set(SegmentKinds::OUT_OF_ORDER);
            } else {
                k.set(SegmentKinds::RETRANSMISSION);
            }
        }

        let mut original = None;
        if O::EVENTS && seglen > 0 && k.has(SegmentKinds::OUT_OF_ORDER) {
            original = fwd
                .unacked
                .iter()
                .find(|u| seq_lt(u.seq, end) && seq_gt(u.end, seq))
                .map(|u| (u.frame, u.ts));
        }
        if seglen > 0 || flags.syn() || flags.fin() {
            if k.has(SegmentKinds::RETRANSMISSION) {
                // Karn's rule: mark what it repeats so its ACK gives no RTT sample.
                for u in fwd.unacked.iter_mut() {
                    if seq_lt(u.seq, end) && seq_gt(u.end, seq) {
                        u.no_sample = true;
                        original.get_or_insert((u.frame, u.ts));
                    }
                }
            } else if fwd.unacked.len() < MAX_UNACKED {
                fwd.unacked.push_back(Unacked {
                    seq,
                    end,
                    ts,
                    frame,
                    no_sample: untimed,
                });
            }
        }

        // A zero-window probe does not advance the next expected sequence number, and
        // neither does a RST, which consumes no sequence space (frames 251–259 of
        // suricata-verify-tls-subjectaltname.pcap: tshark 4.0 does not let a RST with a
        // far-off sequence number turn the data after it into retransmissions).
        let zwp = k.has(SegmentKinds::ZERO_WINDOW_PROBE);
        if next_seq.is_none_or(|n| seq_gt(end, n)) && !zwp && !flags.rst() {
            fwd.next_seq = Some(end);
            fwd.next_seq_time = ts;
        }
        if (fwd.max_seq_to_be_acked.is_none() || fwd.max_seq_to_be_acked == Some(seq)) && !zwp {
            fwd.max_seq_to_be_acked = fwd.next_seq;
        }
        fwd.window = Some(window);
        fwd.last_ack = flags.ack().then_some(ack);
        fwd.last_ack_time = ts;
        fwd.last_segment = k;
        (k, original)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn multiple_of_tick_is_the_remainder() {
        let mut tick = COARSEST_TICK_NS;
        loop {
            for step in [
                0,
                1,
                9,
                10,
                999,
                1_000,
                1_500,
                20_000_000,
                123_456_789_000,
                u64::MAX,
            ] {
                assert_eq!(
                    multiple_of_tick(step, tick),
                    step % tick == 0,
                    "{step} {tick}"
                );
            }
            if tick == 1 {
                break;
            }
            tick /= 10;
        }
    }

    fn flow(client_port: u16) -> FlowAddrs {
        FlowAddrs {
            src: "10.0.0.1".parse().unwrap(),
            dst: "10.0.0.2".parse().unwrap(),
            src_port: client_port,
            dst_port: 80,
        }
    }

    fn reversed(f: FlowAddrs) -> FlowAddrs {
        FlowAddrs {
            src: f.dst,
            dst: f.src,
            src_port: f.dst_port,
            dst_port: f.src_port,
        }
    }

    /// Two bulk transfers that start one after the other end up on different shards,
    /// although the first has a head start; both directions and later packets of a
    /// connection stay on its shard.
    #[test]
    fn sharder_splits_by_current_load_and_keeps_owners() {
        let mut s = Sharder::new(2);
        let a = s.shard(&flow(40000));
        for _ in 0..5_000 {
            assert_eq!(s.shard(&flow(40000)), a);
            assert_eq!(s.shard(&reversed(flow(40000))), a);
        }
        let b = s.shard(&flow(40001));
        assert_ne!(a, b);
        // Both run at the same rate: a third connection goes to the lighter shard, and
        // a fourth, started while the third runs, to the other one.
        for _ in 0..5_000 {
            s.shard(&flow(40000));
            s.shard(&flow(40001));
        }
        let c = s.shard(&flow(40002));
        for _ in 0..5_000 {
            s.shard(&flow(40000));
            s.shard(&flow(40001));
            s.shard(&flow(40002));
        }
        let d = s.shard(&flow(40003));
        assert_ne!(c, d);
        assert_eq!(s.shard(&reversed(flow(40001))), b);
    }

    /// A shard weighed twice as heavy takes a new connection only when its packets are
    /// fewer than half the other's. The weight stays within 1/16 … 16 however often it is
    /// moved.
    #[test]
    fn a_heavier_shard_takes_fewer_new_connections() {
        let mut s = Sharder::new(2);
        s.reweigh(0, 2.0);
        // Both empty: the tie goes to shard 0; then 1 × 2 against 0.
        assert_eq!(s.shard(&flow(40000)), 0);
        assert_eq!(s.shard(&flow(40001)), 1);
        (0..99).for_each(|_| _ = s.shard(&flow(40000)));
        (0..149).for_each(|_| _ = s.shard(&flow(40001)));
        // 100 × 2 against 150.
        assert_eq!(s.shard(&flow(40002)), 1);
        (0..50).for_each(|_| _ = s.shard(&flow(40001)));
        // 100 × 2 against 201.
        assert_eq!(s.shard(&flow(40003)), 0);
        for _ in 0..100 {
            s.reweigh(0, 2.0);
        }
        assert_eq!(s.weight[0], WEIGHT_ONE * WEIGHT_RANGE);
        for _ in 0..100 {
            s.reweigh(0, 0.5);
        }
        assert_eq!(s.weight[0], WEIGHT_ONE / WEIGHT_RANGE);
    }

    #[test]
    fn a_tombstone_packs_into_48_bytes_and_back() {
        assert_eq!(std::mem::size_of::<PackedTomb>(), 48);
        let ep = |a: &str, port| Endpoint {
            addr: a.parse().unwrap(),
            port,
        };
        for (origin, other) in [
            (ep("10.0.0.9", 40000), ep("10.0.0.1", 80)),
            (ep("10.0.0.1", 80), ep("10.0.0.9", 40000)),
            (ep("2001:db8::2", 443), ep("::ffff:10.0.0.1", 5000)),
        ] {
            let t = Tombstone {
                stream: 7,
                origin,
                other,
                base_seq: [Some(1), None],
                seq: [
                    TombSeq {
                        next_seq: Some(u32::MAX),
                        last_ack: None,
                        window: Some(0),
                        scale: Scale::Shift(7),
                        end: Timestamp(-5),
                    },
                    TombSeq {
                        next_seq: None,
                        last_ack: Some(0),
                        window: None,
                        scale: Scale::None,
                        end: Timestamp(-5),
                    },
                ],
            };
            let key = FlowKey::new(&origin, &other);
            let back = PackedTomb::pack(&key, &t).unpack(&key);
            assert_eq!((back.origin, back.other, back.stream), (origin, other, 7));
            assert_eq!(back.base_seq, t.base_seq);
            for d in 0..2 {
                let (a, b) = (back.seq[d], t.seq[d]);
                assert_eq!(
                    (a.next_seq, a.last_ack, a.window, a.scale, a.end),
                    (b.next_seq, b.last_ack, b.window, b.scale, b.end)
                );
            }
        }
    }

    #[test]
    fn v4_mapped_is_the_mapped_ipv6_address() {
        for a in ["10.78.0.1", "0.0.0.0", "255.255.255.255", "192.0.2.7"] {
            let a: std::net::Ipv4Addr = a.parse().unwrap();
            assert_eq!(v4_mapped(a), u128::from(a.to_ipv6_mapped()));
        }
    }

    /// A plain IPv4 frame's numbers give the hash, and so the shard, its `FlowAddrs`
    /// give: a connection whose frames take both paths (tagged and untagged, with IP
    /// options or without) stays on one shard, and the shards chosen do not depend on the
    /// path. Few hosts and ports, so that equal addresses or ports in one 4-tuple occur.
    #[test]
    fn the_ipv4_shortcut_shards_as_the_addresses_do() {
        let mut x: u64 = 0x9e37_79b9_7f4a_7c15;
        let mut next = move |n: u64| {
            x = x
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (x >> 33) % n
        };
        let conns: Vec<Ipv4Ends> = (0..200)
            .map(|_| Ipv4Ends {
                src: 0x0a00_0000 | next(4) as u32,
                dst: 0x0a00_0000 | next(4) as u32,
                src_port: 80 + next(3) as u16,
                dst_port: 80 + next(3) as u16,
            })
            .collect();
        for &e in &conns {
            assert_eq!(Sharder::v4_hash(e), Sharder::flow_hash(&FlowAddrs::from(e)));
        }
        let (mut by_v4, mut by_addrs, mut mixed) =
            (Sharder::new(3), Sharder::new(3), Sharder::new(3));
        let mut e = conns[0];
        for i in 0..200_000 {
            // Mostly the last connection again, as in a capture.
            if next(4) == 0 {
                e = conns[next(conns.len() as u64) as usize];
            }
            if next(2) == 0 {
                e = Ipv4Ends {
                    src: e.dst,
                    dst: e.src,
                    src_port: e.dst_port,
                    dst_port: e.src_port,
                };
            }
            let a = by_v4.shard_v4(e);
            let b = by_addrs.shard(&FlowAddrs::from(e));
            let c = match next(2) {
                0 => mixed.shard_v4(e),
                _ => mixed.shard(&FlowAddrs::from(e)),
            };
            assert_eq!((a, c), (b, b), "frame {i}: {e:?}");
            if i % 1000 == 999 {
                let factor = [0.5, 2.0][next(2) as usize];
                let shard = next(3) as usize;
                for s in [&mut by_v4, &mut by_addrs, &mut mixed] {
                    s.reweigh(shard, factor);
                }
            }
        }
    }

    /// IPv4 endpoints and their IPv4-mapped IPv6 form are one 4-tuple to the tracker,
    /// so they must be one to the sharder.
    #[test]
    fn sharder_agrees_with_flow_key_on_mapped_addresses() {
        let mut s = Sharder::new(4);
        let v4 = flow(40000);
        let mapped = FlowAddrs {
            src: "::ffff:10.0.0.1".parse().unwrap(),
            dst: "::ffff:10.0.0.2".parse().unwrap(),
            ..v4
        };
        assert_eq!(Sharder::flow_hash(&v4), Sharder::flow_hash(&mapped));
        assert_eq!(s.shard(&v4), s.shard(&reversed(mapped)));
    }
}
