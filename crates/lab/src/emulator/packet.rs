//! Just enough IPv4 + TCP decoding for the emulator's rules: addresses, ports, flags,
//! sequence numbers and payload length, from the first bytes NFQUEUE copies to us.
//!
//! The payload length comes from the IP total length, not from the copied bytes, because
//! the queue copies only the headers (see `COPY_RANGE` in the emulator).

use std::net::Ipv4Addr;

/// IPv4 header: version/IHL at 0, total length at 2, fragment field at 6, protocol at 9,
/// source at 12, destination at 16 (RFC 791 §3.1).
const IP_VERSION_IHL: usize = 0;
const IP_TOTAL_LEN: usize = 2;
const IP_FRAGMENT: usize = 6;
const IP_PROTOCOL: usize = 9;
const IP_SRC: usize = 12;
const IP_DST: usize = 16;
const IP_MIN_HEADER: usize = 20;
/// Fragment offset bits of the flags/fragment field: a non-zero offset has no TCP header.
const IP_FRAGMENT_OFFSET_MASK: u16 = 0x1fff;
const PROTO_TCP: u8 = 6;

/// TCP header: ports at 0 and 2, sequence at 4, acknowledgment at 8, data offset at 12,
/// flags at 13 (RFC 9293 §3.1).
const TCP_SEQ: usize = 4;
const TCP_ACK: usize = 8;
const TCP_DATA_OFFSET: usize = 12;
const TCP_FLAGS: usize = 13;
const TCP_MIN_HEADER: usize = 20;

pub const FIN: u8 = 0x01;
pub const SYN: u8 = 0x02;
pub const RST: u8 = 0x04;
pub const PSH: u8 = 0x08;
pub const ACK: u8 = 0x10;
pub const URG: u8 = 0x20;
pub const ECE: u8 = 0x40;
pub const CWR: u8 = 0x80;

/// The fields of one TCP/IPv4 packet the rules and the log need.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub struct TcpSummary {
    pub src: Ipv4Addr,
    pub dst: Ipv4Addr,
    pub sport: u16,
    pub dport: u16,
    pub seq: u32,
    pub ack: u32,
    pub flags: u8,
    /// TCP payload bytes: IP total length − IP header − TCP header.
    pub payload_len: u32,
}

/// Why a packet is not a [`TcpSummary`]; such packets are accepted at once and counted.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum NotTcp {
    /// Shorter than its headers claim, or a header field is impossible.
    Malformed,
    /// Not IPv4 (the lab has no IPv6 addresses).
    NotIpv4,
    /// IPv4 but another protocol, or a non-first fragment.
    OtherProtocol,
}

impl TcpSummary {
    /// Decodes an IPv4 packet starting at `bytes[0]`; never panics on short or odd input.
    pub fn parse(bytes: &[u8]) -> Result<TcpSummary, NotTcp> {
        if bytes.len() < IP_MIN_HEADER {
            return Err(NotTcp::Malformed);
        }
        if bytes[IP_VERSION_IHL] >> 4 != 4 {
            return Err(NotTcp::NotIpv4);
        }
        let ihl = usize::from(bytes[IP_VERSION_IHL] & 0x0f) * 4;
        let total_len = usize::from(be16(bytes, IP_TOTAL_LEN));
        if ihl < IP_MIN_HEADER || total_len < ihl {
            return Err(NotTcp::Malformed);
        }
        if bytes[IP_PROTOCOL] != PROTO_TCP
            || be16(bytes, IP_FRAGMENT) & IP_FRAGMENT_OFFSET_MASK != 0
        {
            return Err(NotTcp::OtherProtocol);
        }
        let tcp = bytes.get(ihl..).ok_or(NotTcp::Malformed)?;
        if tcp.len() < TCP_MIN_HEADER {
            return Err(NotTcp::Malformed);
        }
        let tcp_header = usize::from(tcp[TCP_DATA_OFFSET] >> 4) * 4;
        if tcp_header < TCP_MIN_HEADER {
            return Err(NotTcp::Malformed);
        }
        let payload_len = total_len
            .checked_sub(ihl + tcp_header)
            .ok_or(NotTcp::Malformed)?;
        Ok(TcpSummary {
            src: ipv4(bytes, IP_SRC),
            dst: ipv4(bytes, IP_DST),
            sport: be16(tcp, 0),
            dport: be16(tcp, 2),
            seq: be32(tcp, TCP_SEQ),
            ack: be32(tcp, TCP_ACK),
            flags: tcp[TCP_FLAGS],
            // total_len is a u16, so this always fits.
            payload_len: payload_len as u32,
        })
    }

    pub fn is_data(&self) -> bool {
        self.payload_len > 0
    }

    /// A connection request: SYN without ACK (a SYN/ACK is the server's answer).
    pub fn is_syn(&self) -> bool {
        self.flags & (SYN | ACK) == SYN
    }

    /// Flags as letters in tcpdump's order of importance, e.g. "SA" for a SYN/ACK,
    /// "PA" for a data push, "FA" for a FIN.
    pub fn flag_letters(&self) -> String {
        [
            (FIN, 'F'),
            (SYN, 'S'),
            (RST, 'R'),
            (PSH, 'P'),
            (ACK, 'A'),
            (URG, 'U'),
            (ECE, 'E'),
            (CWR, 'C'),
        ]
        .iter()
        .filter(|(bit, _)| self.flags & bit != 0)
        .map(|(_, c)| *c)
        .collect()
    }
}

// Callers check the length first; the fallbacks keep these total anyway.
fn be16(b: &[u8], at: usize) -> u16 {
    match b.get(at..at + 2) {
        Some(s) => u16::from_be_bytes([s[0], s[1]]),
        None => 0,
    }
}

fn be32(b: &[u8], at: usize) -> u32 {
    match b.get(at..at + 4) {
        Some(s) => u32::from_be_bytes([s[0], s[1], s[2], s[3]]),
        None => 0,
    }
}

fn ipv4(b: &[u8], at: usize) -> Ipv4Addr {
    match b.get(at..at + 4) {
        Some(s) => Ipv4Addr::new(s[0], s[1], s[2], s[3]),
        None => Ipv4Addr::UNSPECIFIED,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A 20-byte IPv4 header + 32-byte TCP header (timestamps), `payload` bytes claimed by
    /// the total length but not present (as NFQUEUE's copy range truncates them).
    fn packet(flags: u8, payload: u16) -> Vec<u8> {
        let total = 20 + 32 + payload;
        let mut p = vec![0u8; 52];
        p[0] = 0x45;
        p[2..4].copy_from_slice(&total.to_be_bytes());
        p[9] = 6;
        p[12..16].copy_from_slice(&[10, 81, 1, 2]);
        p[16..20].copy_from_slice(&[10, 81, 2, 2]);
        p[20..22].copy_from_slice(&40000u16.to_be_bytes());
        p[22..24].copy_from_slice(&8080u16.to_be_bytes());
        p[24..28].copy_from_slice(&1000u32.to_be_bytes());
        p[28..32].copy_from_slice(&2000u32.to_be_bytes());
        p[32] = 8 << 4;
        p[33] = flags;
        p
    }

    #[test]
    fn syn_then_data_segment_truncated_at_the_copy_range() {
        let syn = TcpSummary::parse(&packet(SYN, 0)).unwrap();
        assert!(syn.is_syn() && !syn.is_data());
        assert_eq!(syn.flag_letters(), "S");
        assert_eq!(
            (syn.sport, syn.dport, syn.seq, syn.ack),
            (40000, 8080, 1000, 2000)
        );
        assert_eq!(syn.src, Ipv4Addr::new(10, 81, 1, 2));

        let data = TcpSummary::parse(&packet(PSH | ACK, 1448)).unwrap();
        assert_eq!(data.payload_len, 1448);
        assert!(data.is_data() && !data.is_syn());
        assert_eq!(data.flag_letters(), "PA");
        assert_eq!(
            TcpSummary::parse(&packet(SYN | ACK, 0))
                .unwrap()
                .flag_letters(),
            "SA"
        );
    }

    #[test]
    fn odd_packets_are_refused_not_panicked_on() {
        assert_eq!(TcpSummary::parse(&[]), Err(NotTcp::Malformed));
        assert_eq!(TcpSummary::parse(&[0x60; 40]), Err(NotTcp::NotIpv4));
        let mut udp = packet(0, 0);
        udp[9] = 17;
        assert_eq!(TcpSummary::parse(&udp), Err(NotTcp::OtherProtocol));
        let mut fragment = packet(ACK, 0);
        fragment[7] = 10;
        assert_eq!(TcpSummary::parse(&fragment), Err(NotTcp::OtherProtocol));
        // Total length shorter than the headers.
        let mut short = packet(ACK, 0);
        short[2..4].copy_from_slice(&30u16.to_be_bytes());
        assert_eq!(TcpSummary::parse(&short), Err(NotTcp::Malformed));
        // TCP header cut off by the copy.
        assert_eq!(
            TcpSummary::parse(&packet(ACK, 0)[..30]),
            Err(NotTcp::Malformed)
        );
        // Data offset below 5 words.
        let mut offset = packet(ACK, 0);
        offset[32] = 2 << 4;
        assert_eq!(TcpSummary::parse(&offset), Err(NotTcp::Malformed));
        // Every prefix of a valid packet decodes or is refused, never panics.
        let p = packet(PSH | ACK, 100);
        for n in 0..p.len() {
            let _ = TcpSummary::parse(&p[..n]);
        }
    }
}
