//! Frame bytes → IP and TCP header fields, without allocation.
//!
//! Every frame either decodes to a [`Packet`] or is skipped with a [`SkipReason`]; the
//! caller counts reasons in [`SkipCounts`] so nothing disappears silently.

use crate::frame::{Frame, LinkType, Timestamp};
use std::net::IpAddr;

pub use icmp::{icmp_error, IcmpError, IcmpErrorKind};

mod bytes;
mod encap;
mod icmp;
mod ip;
mod link;
mod tcp;

/// Tunnels (IP in IP, GRE, VXLAN, GENEVE, GTP-U, Teredo; see `encap`) followed to find
/// the TCP header; real captures nest one to three (6in4 through a VPN, VXLAN mirrored
/// over ERSPAN), more is garbage or a loop-crafted packet:
/// [`SkipReason::TooDeeplyNested`].
const MAX_TUNNEL_DEPTH: usize = 8;

/// At most four SACK blocks fit in the 40 bytes of TCP options (RFC 2018).
pub const MAX_SACK_BLOCKS: usize = 4;

/// TCP flag bits as in the header's 12-bit flags field (NS is bit 8).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq, Hash)]
pub struct TcpFlags(pub u16);

impl TcpFlags {
    pub const FIN: u16 = 0x001;
    pub const SYN: u16 = 0x002;
    pub const RST: u16 = 0x004;
    pub const PSH: u16 = 0x008;
    pub const ACK: u16 = 0x010;
    pub const URG: u16 = 0x020;
    pub const ECE: u16 = 0x040;
    pub const CWR: u16 = 0x080;
    pub const NS: u16 = 0x100;

    pub const fn has(self, bit: u16) -> bool {
        self.0 & bit != 0
    }
    pub const fn syn(self) -> bool {
        self.has(Self::SYN)
    }
    pub const fn ack(self) -> bool {
        self.has(Self::ACK)
    }
    pub const fn fin(self) -> bool {
        self.has(Self::FIN)
    }
    pub const fn rst(self) -> bool {
        self.has(Self::RST)
    }
}

/// TCP options tcpwhy uses, as parsed from one segment.
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct TcpOptions {
    /// Maximum segment size (kind 2).
    pub mss: Option<u16>,
    /// Window scale shift count as sent (kind 3); values above 14 are kept as sent.
    pub wscale: Option<u8>,
    /// SACK-permitted (kind 4).
    pub sack_permitted: bool,
    /// Timestamps (kind 8): (TSval, TSecr).
    pub timestamps: Option<(u32, u32)>,
    /// SACK blocks (kind 5) as (left edge, right edge); only the first `sack_count` are set.
    pub sack: [(u32, u32); MAX_SACK_BLOCKS],
    pub sack_count: u8,
    /// An option had a bad length (0, 1, past the header, wrong for its kind).
    /// Options before it are kept.
    pub malformed: bool,
    /// The snaplen cut the options: what was captured is kept.
    pub truncated: bool,
    /// The options' length in bytes as the data offset declares it (0–40), captured or
    /// not: where the snaplen cut them, it still tells how much was there (a SACK option
    /// adds 8 bytes a block, RFC 2018 §3).
    pub declared_len: u8,
}

impl TcpOptions {
    pub fn sack_blocks(&self) -> &[(u32, u32)] {
        &self.sack[..usize::from(self.sack_count).min(MAX_SACK_BLOCKS)]
    }
}

/// A decoded TCP segment: the IP and TCP header fields of one frame.
#[derive(Copy, Clone, Debug)]
pub struct Packet<'a> {
    pub src: IpAddr,
    pub dst: IpAddr,
    /// IPv4 identification field; `None` for IPv6.
    pub ip_id: Option<u16>,
    /// IPv4 TTL or IPv6 hop limit.
    pub ttl: u8,
    pub src_port: u16,
    pub dst_port: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: TcpFlags,
    /// The raw 16-bit window field, before any scaling.
    pub window: u16,
    pub urgent: u16,
    pub options: TcpOptions,
    /// TCP payload length according to the IP header (what was on the wire, not what
    /// was captured): IP total/payload length − IP header(s) − TCP header.
    pub payload_len: u32,
    /// The captured part of the payload (possibly shorter than `payload_len`).
    pub payload: &'a [u8],
}

/// Why a frame was not analysed as TCP. Every variant is counted and reported.
#[derive(Copy, Clone, Debug, PartialEq, Eq, Hash)]
pub enum SkipReason {
    /// The frame's link type is not one tcpwhy decodes.
    UnsupportedLinkType,
    /// The link-layer header is cut short.
    TruncatedLinkHeader,
    /// Not IPv4 or IPv6 (ARP, LLDP, …).
    NotIp,
    /// IPv4/IPv6 header cut short by the snaplen or the record.
    TruncatedIpHeader,
    /// IPv4/IPv6 header inconsistent: wrong version, IHL < 5, total length smaller than
    /// the header, a broken extension-header chain.
    BadIpHeader,
    /// A non-first IP fragment: it carries no TCP header.
    IpFragment,
    /// IP carries something other than TCP (UDP, ICMP, …).
    NotTcp,
    /// TCP header cut short before its fixed 20 bytes.
    TruncatedTcpHeader,
    /// TCP data offset < 5 or pointing past the IP payload.
    BadTcpHeader,
    /// More encapsulation than a real network stacks (VLAN tags, MPLS labels, tunnels in
    /// tunnels beyond the bounds in [`encap`]): garbage or a crafted loop, not followed.
    TooDeeplyNested,
}

impl SkipReason {
    pub const ALL: [SkipReason; 10] = [
        SkipReason::UnsupportedLinkType,
        SkipReason::TruncatedLinkHeader,
        SkipReason::NotIp,
        SkipReason::TruncatedIpHeader,
        SkipReason::BadIpHeader,
        SkipReason::IpFragment,
        SkipReason::NotTcp,
        SkipReason::TruncatedTcpHeader,
        SkipReason::BadTcpHeader,
        SkipReason::TooDeeplyNested,
    ];

    /// Stable snake_case name used in JSON output.
    pub const fn name(self) -> &'static str {
        match self {
            SkipReason::UnsupportedLinkType => "unsupported_link_type",
            SkipReason::TruncatedLinkHeader => "truncated_link_header",
            SkipReason::NotIp => "not_ip",
            SkipReason::TruncatedIpHeader => "truncated_ip_header",
            SkipReason::BadIpHeader => "bad_ip_header",
            SkipReason::IpFragment => "ip_fragment",
            SkipReason::NotTcp => "not_tcp",
            SkipReason::TruncatedTcpHeader => "truncated_tcp_header",
            SkipReason::BadTcpHeader => "bad_tcp_header",
            SkipReason::TooDeeplyNested => "too_deeply_nested",
        }
    }

    /// Human description used in text output.
    pub const fn describe(self) -> &'static str {
        match self {
            SkipReason::UnsupportedLinkType => "unsupported link type",
            SkipReason::TruncatedLinkHeader => "link header cut short",
            SkipReason::NotIp => "not IP",
            SkipReason::TruncatedIpHeader => "IP header cut short",
            SkipReason::BadIpHeader => "bad IP header",
            SkipReason::IpFragment => "non-first IP fragment",
            SkipReason::NotTcp => "not TCP",
            SkipReason::TruncatedTcpHeader => "TCP header cut short",
            SkipReason::BadTcpHeader => "bad TCP header length",
            SkipReason::TooDeeplyNested => "encapsulation nested too deep",
        }
    }

    const fn index(self) -> usize {
        self as usize
    }
}

/// Unsupported link types [`SkipCounts`] names with their frame counts; a pcapng file
/// may have one per interface, and more than a few different ones is not a capture
/// anyone brings (their frames are still counted, under the reason).
pub const MAX_NAMED_LINK_TYPES: usize = 8;

/// Counts of skipped frames by reason, and by link type for unsupported link types; and
/// the anomalies of frames' times: running backwards, out of range.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct SkipCounts {
    counts: [u64; SkipReason::ALL.len()],
    /// (LINKTYPE number, frames), sorted by number, the first `link_types_len` used:
    /// sorted so that merging the counts of several threads gives one order.
    link_types: [(u32, u64); MAX_NAMED_LINK_TYPES],
    link_types_len: usize,
    /// Frames earlier than the latest trusted time before them, frames whose pcap
    /// fraction of a second was out of range, and that latest trusted time.
    time_backwards: u64,
    time_out_of_range: u64,
    latest: Option<Timestamp>,
}

impl SkipCounts {
    pub fn add(&mut self, reason: SkipReason) {
        self.counts[reason.index()] += 1;
    }

    /// Counts a frame of link type `link` skipped for `reason`: an unsupported link type
    /// is also counted under its number.
    pub fn add_frame(&mut self, reason: SkipReason, link: LinkType) {
        self.add(reason);
        if reason == SkipReason::UnsupportedLinkType {
            self.add_link_type(link.number(), 1);
        }
    }

    fn add_link_type(&mut self, number: u32, frames: u64) {
        let used = &mut self.link_types[..self.link_types_len];
        match used.binary_search_by_key(&number, |(n, _)| *n) {
            Ok(i) => used[i].1 += frames,
            Err(i) if self.link_types_len < MAX_NAMED_LINK_TYPES => {
                self.link_types[i..=self.link_types_len].rotate_right(1);
                self.link_types[i] = (number, frames);
                self.link_types_len += 1;
            }
            Err(_) => {}
        }
    }

    /// Takes in the next frame of the file, in file order (the reader's thread: the
    /// order of the file, whatever the threads), and gives it a time the analysis can
    /// use. A frame earlier than the latest trusted time before it (a capture clock
    /// stepping back, merged files) and one whose pcap fraction of a second was out of
    /// range (a µs field ≥ 10^6, a ns field ≥ 10^9: the reader set
    /// [`Frame::ts_untrusted`]) are counted, and analysed at that latest trusted time,
    /// marked untrusted: no duration measured across them is negative, or longer than
    /// the trusted times around them say (docs/tracking.md "Untrusted times"). A first
    /// frame out of range keeps its whole second.
    #[inline]
    pub fn observe_time(&mut self, frame: &mut Frame<'_>) {
        match self.latest {
            Some(latest) if frame.ts_untrusted || frame.ts < latest => {
                if frame.ts_untrusted {
                    self.time_out_of_range += 1;
                } else {
                    self.time_backwards += 1;
                }
                frame.ts = latest;
                frame.ts_untrusted = true;
            }
            None if frame.ts_untrusted => self.time_out_of_range += 1,
            _ => self.latest = Some(frame.ts),
        }
    }

    /// Frames whose time was earlier than a frame before them ([`Self::observe_time`]).
    pub fn time_backwards(&self) -> u64 {
        self.time_backwards
    }

    /// Frames whose pcap fraction of a second was out of range ([`Self::observe_time`]).
    pub fn time_out_of_range(&self) -> u64 {
        self.time_out_of_range
    }

    /// Frames skipped for an unsupported link type, by LINKTYPE number (ascending).
    pub fn link_types(&self) -> &[(u32, u64)] {
        &self.link_types[..self.link_types_len]
    }
    pub fn get(&self, reason: SkipReason) -> u64 {
        self.counts[reason.index()]
    }
    pub fn total(&self) -> u64 {
        self.counts.iter().sum()
    }
    /// Non-zero counts, in the order of [`SkipReason::ALL`].
    pub fn iter(&self) -> impl Iterator<Item = (SkipReason, u64)> + '_ {
        SkipReason::ALL
            .iter()
            .map(|r| (*r, self.get(*r)))
            .filter(|(_, n)| *n > 0)
    }
    pub fn merge(&mut self, other: &SkipCounts) {
        for (a, b) in self.counts.iter_mut().zip(other.counts.iter()) {
            *a += b;
        }
        for &(n, frames) in other.link_types() {
            self.add_link_type(n, frames);
        }
        self.time_backwards += other.time_backwards;
        self.time_out_of_range += other.time_out_of_range;
    }

    /// One line saying how many frames were skipped and why, by reason and (for
    /// unsupported link types) the link type number and name: "12 not TCP, 3 unsupported
    /// link type 147 (USER0)". Empty when none was.
    pub fn describe(&self) -> String {
        let mut parts = Vec::new();
        for (r, n) in self.iter() {
            if r == SkipReason::UnsupportedLinkType && !self.link_types().is_empty() {
                let named: u64 = self.link_types().iter().map(|(_, f)| f).sum();
                for &(lt, f) in self.link_types() {
                    let name = LinkType::name_of(lt).unwrap_or("unknown");
                    parts.push(format!("{f} {} {lt} ({name})", r.describe()));
                }
                if n > named {
                    parts.push(format!("{} {} (others)", n - named, r.describe()));
                }
            } else {
                parts.push(format!("{n} {}", r.describe()));
            }
        }
        parts.join(", ")
    }
}

/// The endpoints of a frame's TCP segment: enough to choose which thread analyses its
/// connection before paying for a full [`decode`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct FlowAddrs {
    pub src: IpAddr,
    pub dst: IpAddr,
    pub src_port: u16,
    pub dst_port: u16,
}

impl FlowAddrs {
    /// The endpoints of a decoded segment.
    pub fn of(pkt: &Packet<'_>) -> Self {
        FlowAddrs {
            src: pkt.src,
            dst: pkt.dst,
            src_port: pkt.src_port,
            dst_port: pkt.dst_port,
        }
    }
}

/// The endpoints of a TCP segment in IPv4 as numbers ([`plain_ipv4_ends`]): what the
/// reader of a sharded pass compares and hashes for most frames, without building
/// [`FlowAddrs`].
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct Ipv4Ends {
    pub src: u32,
    pub dst: u32,
    pub src_port: u16,
    pub dst_port: u16,
}

impl From<Ipv4Ends> for FlowAddrs {
    #[inline(always)]
    fn from(e: Ipv4Ends) -> Self {
        FlowAddrs {
            src: IpAddr::V4(e.src.into()),
            dst: IpAddr::V4(e.dst.into()),
            src_port: e.src_port,
            dst_port: e.dst_port,
        }
    }
}

/// Reads only the addresses and ports of a frame, for the common case of TCP directly in
/// IPv4 or IPv6: about a third of [`decode`]'s work. The promise: whenever [`decode`]
/// accepts the frame and this returns `Some`, both give the same endpoints. `None` means
/// only [`decode`] can tell (tunnels, IPv6 extension headers, short frames, not TCP); a
/// `Some` does not mean the frame decodes (a later IPv4 fragment, a bad length).
#[inline]
pub fn flow_addrs(frame: &Frame<'_>) -> Option<FlowAddrs> {
    match plain_flow_addrs(frame) {
        Some(a) => Some(a),
        None => flow_addrs_any(frame),
    }
}

/// [`flow_addrs`] of the frames [`plain_ipv4`] reads, at its fixed offsets with one
/// length check: untagged Ethernet, IPv4 without options, TCP in it. The reader of a
/// sharded pass finds every frame's endpoints alone, and the general walk (link type,
/// header length, each field's bounds) was ≈ 77 instructions a frame (callgrind,
/// `flows -j 2`, 1 M packets of the mixed bench capture).
#[inline(always)]
fn plain_flow_addrs(frame: &Frame<'_>) -> Option<FlowAddrs> {
    plain_ipv4_ends(frame).map(FlowAddrs::from)
}

/// The endpoints [`flow_addrs`] gives for the frames it reads at fixed offsets (untagged
/// Ethernet, IPv4 without options, TCP in it), as numbers; `None` for every other frame.
#[inline(always)]
pub fn plain_ipv4_ends(frame: &Frame<'_>) -> Option<Ipv4Ends> {
    const PORTS_END: usize = PLAIN_TCP_AT + 4;
    if !matches!(frame.link, LinkType::Ethernet) {
        return None;
    }
    let h: &[u8; PORTS_END] = frame.data.get(..PORTS_END)?.try_into().ok()?;
    let at = PLAIN_IP_AT;
    if u16::from_be_bytes([h[at - 2], h[at - 1]]) != link::ETHERTYPE_IPV4
        || h[at] != IPV4_NO_OPTIONS
        || h[at + 9] != ip::PROTO_TCP
    {
        return None;
    }
    let v4 = |i: usize| u32::from_be_bytes([h[i], h[i + 1], h[i + 2], h[i + 3]]);
    let port = |i: usize| u16::from_be_bytes([h[i], h[i + 1]]);
    Some(Ipv4Ends {
        src: v4(at + 12),
        dst: v4(at + 16),
        src_port: port(PLAIN_TCP_AT),
        dst_port: port(PLAIN_TCP_AT + 2),
    })
}

/// [`flow_addrs`] for every frame.
#[inline(never)]
fn flow_addrs_any(frame: &Frame<'_>) -> Option<FlowAddrs> {
    let (net, ip_start) = link::locate(frame.link, frame.data).ok()?;
    let (src, dst, seg) = ip::flow_addrs(net, frame.data.get(ip_start..)?)?;
    let (src_port, dst_port) = tcp::ports(seg)?;
    Some(FlowAddrs {
        src,
        dst,
        src_port,
        dst_port,
    })
}

/// Decodes one frame down to its TCP header. Never panics, never allocates.
///
/// Lengths: `payload_len` is what was on the wire — the IP length field, capped by the
/// frame's original length, or the original length when the IP length is 0 (TSO/GSO
/// super-segments captured on the sender); see the `ip` module. Headers cut by the
/// snaplen keep what was captured: TCP options cut short are marked `truncated`.
#[inline]
pub fn decode<'a>(frame: &Frame<'a>) -> Result<Packet<'a>, SkipReason> {
    match plain_ipv4(frame) {
        // Built right in the result: a `Packet` made by the shortcut and moved into it
        // was a 136-byte copy a frame (≈ 23 instructions, callgrind).
        Some((h, lens)) => Ok(plain_packet(frame.data, h, lens)),
        None => decode_any(frame),
    }
}

/// Untagged Ethernet, an IPv4 header without options, the fixed TCP header: what
/// [`plain_ipv4`] reads with one length check.
const PLAIN_IPV4_LEN: usize = PLAIN_TCP_AT + TCP_HEADER_LEN;
/// Where the IPv4 and the TCP header start in such a frame.
const PLAIN_IP_AT: usize = link::ETHERNET_HEADER_LEN;
const PLAIN_TCP_AT: usize = PLAIN_IP_AT + IPV4_HEADER_LEN;
/// An IPv4 header without options; the TCP header without options.
const IPV4_HEADER_LEN: usize = ip::IPV4_MIN_HEADER_LEN;
const TCP_HEADER_LEN: usize = tcp::TCP_MIN_HEADER_LEN;
/// Version 4, IHL 5 words.
const IPV4_NO_OPTIONS: u8 = 0x45;

/// The lengths [`plain_ipv4`] worked out: the TCP header's (from its data offset), and
/// the segment's on the wire.
#[derive(Copy, Clone)]
struct PlainLens {
    tcp_header: usize,
    segment_wire: usize,
}

fn be16_at(h: &[u8; PLAIN_IPV4_LEN], at: usize) -> u16 {
    u16::from_be_bytes([h[at], h[at + 1]])
}

fn be32_at(h: &[u8; PLAIN_IPV4_LEN], at: usize) -> u32 {
    u32::from_be_bytes([h[at], h[at + 1], h[at + 2], h[at + 3]])
}

/// Whether [`decode`] can take its shortcut for `frame`: the frames of almost every
/// capture, untagged Ethernet, IPv4 without options (version and IHL byte 0x45), TCP
/// right in it, not a later fragment, the fixed TCP header captured and its data offset
/// within the segment. Then [`plain_packet`] gives the same [`Packet`] as
/// [`decode_any`], which reads every other frame (and every one this declines: `None`
/// says only "not the common case"): the rules here are its rules for these headers,
/// with the offsets fixed. The general walk built the IP and TCP headers as values and
/// copied them into the packet: ≈ 300 instructions a frame against ≈ 120 here
/// (callgrind, `flows -j 1`, 300 k packets of the mixed bench capture).
#[inline(always)]
fn plain_ipv4<'f>(frame: &Frame<'f>) -> Option<(&'f [u8; PLAIN_IPV4_LEN], PlainLens)> {
    let data = frame.data;
    if !matches!(frame.link, LinkType::Ethernet) {
        return None;
    }
    let h: &[u8; PLAIN_IPV4_LEN] = data.get(..PLAIN_IPV4_LEN)?.try_into().ok()?;
    let (at_ip, at_tcp) = (PLAIN_IP_AT, PLAIN_TCP_AT);
    // EtherType, version and IHL, protocol, fragment offset.
    if be16_at(h, at_ip - 2) != link::ETHERTYPE_IPV4
        || h[at_ip] != IPV4_NO_OPTIONS
        || h[at_ip + 9] != ip::PROTO_TCP
        || be16_at(h, at_ip + 6) & ip::IPV4_FRAG_OFFSET_MASK != 0
    {
        return None;
    }
    // `ip::ipv4`'s lengths: the wire length from the IP header on (a bogus orig_len
    // below what was captured is not believed), the total length field capped by it, or
    // the wire length when the field is 0 (TSO).
    let ip_wire_len = (frame.orig_len as usize)
        .saturating_sub(at_ip)
        .max(data.len() - at_ip);
    let total = usize::from(be16_at(h, at_ip + 2));
    let datagram_len = if total == 0 {
        ip_wire_len
    } else {
        total.min(ip_wire_len)
    };
    // `tcp::parse`'s checks: room for the fixed header on the wire, a data offset of at
    // least 5 words and within the segment.
    let segment_wire = datagram_len.checked_sub(IPV4_HEADER_LEN)?;
    let tcp_header = usize::from(h[at_tcp + 12] >> 4) * 4;
    if segment_wire < TCP_HEADER_LEN || tcp_header < TCP_HEADER_LEN || tcp_header > segment_wire {
        return None;
    }
    Some((
        h,
        PlainLens {
            tcp_header,
            segment_wire,
        },
    ))
}

/// The packet of a frame [`plain_ipv4`] accepted (`h`: its first bytes, `data`: all).
#[inline(always)]
fn plain_packet<'a>(data: &'a [u8], h: &[u8; PLAIN_IPV4_LEN], lens: PlainLens) -> Packet<'a> {
    let (at_ip, at_tcp) = (PLAIN_IP_AT, PLAIN_TCP_AT);
    let PlainLens {
        tcp_header,
        segment_wire,
    } = lens;
    let seg = data.get(at_tcp..).unwrap_or(&[]);
    let mut options = tcp::parse_options(
        seg.get(TCP_HEADER_LEN..tcp_header.min(seg.len()))
            .unwrap_or(&[]),
        tcp_header - TCP_HEADER_LEN,
    );
    if seg.len() < tcp_header {
        options.truncated = true;
    }
    Packet {
        src: IpAddr::V4(be32_at(h, at_ip + 12).into()),
        dst: IpAddr::V4(be32_at(h, at_ip + 16).into()),
        ip_id: Some(be16_at(h, at_ip + 4)),
        ttl: h[at_ip + 8],
        src_port: be16_at(h, at_tcp),
        dst_port: be16_at(h, at_tcp + 2),
        seq: be32_at(h, at_tcp + 4),
        ack: be32_at(h, at_tcp + 8),
        flags: TcpFlags(be16_at(h, at_tcp + 12) & tcp::FLAGS_MASK),
        window: be16_at(h, at_tcp + 14),
        urgent: be16_at(h, at_tcp + 18),
        options,
        payload_len: u32::try_from(segment_wire - tcp_header).unwrap_or(u32::MAX),
        payload: seg
            .get(tcp_header..segment_wire.min(seg.len()))
            .unwrap_or(&[]),
    }
}

/// [`decode`] for every frame: link layers, IPv6, tunnels, and each reason to skip.
#[inline(never)]
fn decode_any<'a>(frame: &Frame<'a>) -> Result<Packet<'a>, SkipReason> {
    let data = frame.data;
    let (net, ip_start) = link::locate(frame.link, data)?;
    let mut ip_bytes = data
        .get(ip_start..)
        .ok_or(SkipReason::TruncatedLinkHeader)?;
    // Bytes from the IP header on, as on the wire; a bogus orig_len smaller than what
    // was captured is not believed.
    let ip_wire_len = (frame.orig_len as usize)
        .saturating_sub(ip_start)
        .max(ip_bytes.len());
    let mut ip = ip::parse(net, ip_bytes, ip_wire_len)?;
    if ip.protocol != ip::PROTO_TCP {
        (ip_bytes, ip) = innermost(ip_bytes, ip)?;
    }
    let seg = ip_bytes.get(ip.header_len..).unwrap_or(&[]);
    let tcp = tcp::parse(seg, ip.payload_wire_len)?;
    // The captured payload stops at the segment's end (Ethernet padding is not payload).
    let payload_end = tcp
        .header_len
        .saturating_add(tcp.payload_len)
        .min(seg.len());
    let payload = seg.get(tcp.header_len..payload_end).unwrap_or(&[]);
    Ok(Packet {
        src: ip.src,
        dst: ip.dst,
        ip_id: ip.ip_id,
        ttl: ip.ttl,
        src_port: tcp.src_port,
        dst_port: tcp.dst_port,
        seq: tcp.seq,
        ack: tcp.ack,
        flags: tcp.flags,
        window: tcp.window,
        urgent: tcp.urgent,
        options: tcp.options,
        payload_len: u32::try_from(tcp.payload_len).unwrap_or(u32::MAX),
        payload,
    })
}

/// Tunnels: the innermost IP header is the connection's; `outer` was read from the
/// start of `ip_bytes`. Out of line: with the loop inline the common case (TCP right
/// in the first header) kept that header in memory, not in registers (callgrind).
#[cold]
#[inline(never)]
fn innermost(
    mut ip_bytes: &[u8],
    outer: ip::IpHeader,
) -> Result<(&[u8], ip::IpHeader), SkipReason> {
    let mut ip = outer;
    for _ in 0..MAX_TUNNEL_DEPTH {
        let payload = ip_bytes.get(ip.header_len..).unwrap_or(&[]);
        let (net, start) = encap::inner(ip.protocol, payload)?;
        ip_bytes = payload
            .get(start..)
            .ok_or(SkipReason::TruncatedLinkHeader)?;
        // What the tunnel's headers took of the outer payload on the wire.
        let wire_len = ip
            .payload_wire_len
            .saturating_sub(start)
            .max(ip_bytes.len());
        ip = ip::parse(net, ip_bytes, wire_len)?;
        if ip.protocol == ip::PROTO_TCP {
            return Ok((ip_bytes, ip));
        }
    }
    Err(SkipReason::TooDeeplyNested)
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(link: LinkType, data: &[u8], orig_len: u32) -> Frame<'_> {
        Frame {
            number: 1,
            ts: Timestamp(0),
            ts_untrusted: false,
            link,
            interface: 0,
            data,
            orig_len,
        }
    }

    /// Ethernet, one 802.1Q tag (VID 42), IPv4 10.1.1.1 → 10.2.2.2 (id 0x0101, TTL 63),
    /// TCP 80 → 40000 ACK|PSH with NOP NOP TS(7, 5) and 5 bytes of data, then 4 bytes of
    /// Ethernet padding that are not payload.
    #[test]
    fn ethernet_vlan_ipv4_tcp_data_with_padding() {
        let mut f = vec![
            2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 42, 0x08, 0x00,
        ];
        ipv4_tcp_hello(&mut f);
        let p = decode(&frame(LinkType::Ethernet, &f, f.len() as u32)).unwrap();
        assert_eq!(p.src, "10.1.1.1".parse::<IpAddr>().unwrap());
        assert_eq!(p.dst, "10.2.2.2".parse::<IpAddr>().unwrap());
        assert_eq!((p.ip_id, p.ttl), (Some(0x0101), 63));
        assert_eq!((p.src_port, p.dst_port), (80, 40000));
        assert_eq!((p.seq, p.ack, p.window), (1000, 2000, 501));
        assert!(p.flags.ack() && p.flags.has(TcpFlags::PSH));
        assert_eq!(p.options.timestamps, Some((7, 5)));
        assert_eq!(p.payload_len, 5);
        assert_eq!(p.payload, b"hello");
    }

    /// The same segment over IPv6 in IPv4 (6in4, protocol 41), on raw IP.
    #[test]
    fn six_in_four_tunnel_decodes_the_inner_segment() {
        let mut f = vec![
            0x45, 0, 0, 80, 0, 0, 0, 0, 64, 41, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
        ];
        f.extend_from_slice(&[0x60, 0, 0, 0, 0, 20, 6, 64]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 1]);
        f.extend_from_slice(&[0x20, 0x01, 0x0d, 0xb8, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 0, 2]);
        f.extend_from_slice(&[
            0, 21, 0xc0, 0x00, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x10, 0, 0, 0, 0, 0,
        ]);
        let p = decode(&frame(LinkType::RawIp, &f, 80)).unwrap();
        assert_eq!(p.src, "2001:db8::1".parse::<IpAddr>().unwrap());
        assert_eq!((p.src_port, p.dst_port), (21, 49152));
        assert!(p.flags.syn());
        assert_eq!(p.payload_len, 0);
    }

    /// The shortcut to the endpoints agrees with the full decoder where it answers, and
    /// leaves tunnels to it.
    #[test]
    fn flow_addrs_agree_with_decode() {
        let mut f = vec![
            2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x81, 0x00, 0x00, 42, 0x08, 0x00,
        ];
        f.extend_from_slice(&[0x46, 0, 0, 44, 0x01, 0x01, 0x40, 0, 63, 6, 0, 0]);
        f.extend_from_slice(&[10, 1, 1, 1, 10, 2, 2, 2, 1, 1, 1, 1]); // one option word
        f.extend_from_slice(&[0, 80, 0x9c, 0x40, 0, 0, 0, 1, 0, 0, 0, 0]);
        f.extend_from_slice(&[0x50, 0x10, 0x01, 0xf5, 0, 0, 0, 0]);
        let fr = frame(LinkType::Ethernet, &f, f.len() as u32);
        let p = decode(&fr).unwrap();
        assert_eq!(flow_addrs(&fr), Some(FlowAddrs::of(&p)));
        assert_eq!(FlowAddrs::of(&p).src_port, 80);

        let mut t = vec![
            0x45, 0, 0, 80, 0, 0, 0, 0, 64, 41, 0, 0, 192, 0, 2, 1, 192, 0, 2, 2,
        ];
        t.extend_from_slice(&[0x60, 0, 0, 0, 0, 20, 6, 64]);
        t.extend_from_slice(&[0; 32]);
        t.extend_from_slice(&[
            0, 21, 0xc0, 0x00, 0, 0, 0, 1, 0, 0, 0, 0, 0x50, 0x02, 0x10, 0,
        ]);
        t.extend_from_slice(&[0; 4]);
        let fr = frame(LinkType::RawIp, &t, 80);
        assert!(decode(&fr).is_ok());
        assert_eq!(flow_addrs(&fr), None);
    }

    /// The shortcut for plain Ethernet/IPv4/TCP frames gives what the general walk
    /// gives, or declines: over cut lengths, wire lengths, IP total lengths, data
    /// offsets, options and the headers it must leave to the walk.
    /// Appends to a link header: IPv4 10.1.1.1 → 10.2.2.2 (no options, total length
    /// 57), TCP 80 → 40000, seq 1000, ack 2000, PSH/ACK, NOP NOP TS 7/5, "hello", and 4
    /// bytes of link trailer.
    fn ipv4_tcp_hello(f: &mut Vec<u8>) {
        f.extend_from_slice(&[0x45, 0, 0, 57, 0x01, 0x01, 0x40, 0, 63, 6, 0, 0]);
        f.extend_from_slice(&[10, 1, 1, 1, 10, 2, 2, 2]);
        f.extend_from_slice(&[0, 80, 0x9c, 0x40]);
        f.extend_from_slice(&1000u32.to_be_bytes());
        f.extend_from_slice(&2000u32.to_be_bytes());
        f.extend_from_slice(&[0x80, 0x18, 0x01, 0xf5, 0, 0, 0, 0]);
        f.extend_from_slice(&[1, 1, 8, 10, 0, 0, 0, 7, 0, 0, 0, 5]);
        f.extend_from_slice(b"hello");
        f.extend_from_slice(&[0; 4]);
    }

    #[test]
    fn plain_ipv4_agrees_with_the_general_walk() {
        let mut base = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
        ipv4_tcp_hello(&mut base);
        let sack = [1u8, 1, 5, 10, 0, 0, 0, 9, 0, 0, 0, 12];
        let mut taken = 0;
        for (byte, values) in [
            (12usize, &[0x08u8, 0x86, 0x81][..]), // EtherType
            (14, &[0x45, 0x46, 0x44, 0x65][..]),  // version, IHL
            (16, &[0, 1][..]),                    // total length, high byte
            (17, &[0, 19, 20, 39, 40, 52, 57, 200][..]),
            (20, &[0, 0x20, 0x40, 0x01][..]), // flags, fragment offset
            (23, &[6, 17, 41][..]),           // protocol
            (46, &[0x00, 0x40, 0x50, 0x70, 0x80, 0x90, 0xf0][..]), // data offset
            (54, &[1, 2, 5, 8][..]),          // first option byte
        ] {
            for &v in values {
                for opts in [None, Some(&sack)] {
                    let mut f = base.clone();
                    f[byte] = v;
                    if let Some(o) = opts {
                        f[54..66].copy_from_slice(o);
                    }
                    for cut in 0..=f.len() {
                        for orig in [0, 40, cut as u32, f.len() as u32, 2000] {
                            let fr = frame(LinkType::Ethernet, &f[..cut], orig);
                            let general = format!("{:?}", decode_any(&fr));
                            if let Some((h, lens)) = plain_ipv4(&fr) {
                                taken += 1;
                                let p = plain_packet(fr.data, h, lens);
                                assert_eq!(format!("{:?}", Ok::<_, SkipReason>(p)), general);
                            }
                            assert_eq!(format!("{:?}", decode(&fr)), general);
                        }
                    }
                }
            }
        }
        assert!(taken > 1000, "{taken}");
        let f = frame(LinkType::LinuxSll, &base, base.len() as u32);
        assert!(plain_ipv4(&f).is_none());
    }

    /// The endpoints' shortcut gives what the general walk gives, or declines: over the
    /// headers it reads, cut lengths and link types; and it takes the plain frame.
    #[test]
    fn plain_flow_addrs_agree_with_the_general_walk() {
        let mut base = vec![2, 0, 0, 0, 0, 1, 2, 0, 0, 0, 0, 2, 0x08, 0x00];
        ipv4_tcp_hello(&mut base);
        let mut taken = 0;
        for (byte, values) in [
            (12usize, &[0x08u8, 0x86, 0x81][..]), // EtherType
            (13, &[0x00, 0xdd][..]),
            (14, &[0x45, 0x46, 0x44, 0x65, 0x55][..]), // version, IHL
            (20, &[0, 0x20, 0x01][..]),                // flags, fragment offset
            (23, &[6, 17, 41][..]),                    // protocol
            (26, &[10, 0][..]),                        // source address
            (33, &[2, 255][..]),                       // destination address
            (35, &[80, 0][..]),                        // source port
            (36, &[0x9c, 0][..]),                      // destination port
        ] {
            for &v in values {
                let mut f = base.clone();
                f[byte] = v;
                for cut in 0..=f.len() {
                    for link in [LinkType::Ethernet, LinkType::LinuxSll, LinkType::RawIp] {
                        let fr = frame(link, &f[..cut], f.len() as u32);
                        let general = flow_addrs_any(&fr);
                        if let Some(a) = plain_flow_addrs(&fr) {
                            taken += 1;
                            assert_eq!(Some(a), general, "byte {byte} = {v}, cut {cut}");
                        }
                        assert_eq!(flow_addrs(&fr), general);
                    }
                }
            }
        }
        assert!(taken > 20, "{taken}");
        let fr = frame(LinkType::Ethernet, &base, base.len() as u32);
        let p = decode(&fr).unwrap();
        assert_eq!(plain_flow_addrs(&fr), Some(FlowAddrs::of(&p)));
    }

    #[test]
    fn skip_counts_by_reason() {
        let mut c = SkipCounts::default();
        c.add(SkipReason::NotTcp);
        c.add(SkipReason::NotTcp);
        c.add(SkipReason::IpFragment);
        assert_eq!(c.total(), 3);
        assert_eq!(
            c.iter().collect::<Vec<_>>(),
            vec![(SkipReason::IpFragment, 1), (SkipReason::NotTcp, 2)]
        );
    }
}
