//! The fields of a queued packet the emulator's rules and log need, decoded by tcpwhy's
//! own decoder (tcpwhy-capture) from the first bytes NFQUEUE copies to us.
//!
//! The payload length comes from the IP total length, not from the copied bytes, because
//! the queue copies only the headers (see `COPY_RANGE` in the emulator).

use std::net::{IpAddr, Ipv4Addr};
use tcpwhy_capture::{decode, Frame, LinkType, SkipReason, Timestamp};

/// No IPv4 packet is longer than this (the total length field is 16 bits): given as the
/// frame's length on the wire, it never caps the length the IP header states.
const MAX_IPV4_PACKET: u32 = 65_535;

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
        let frame = Frame {
            number: 0,
            ts: Timestamp::default(),
            ts_untrusted: false,
            link: LinkType::RawIp,
            interface: 0,
            data: bytes,
            orig_len: MAX_IPV4_PACKET.max(bytes.len() as u32),
        };
        let p = decode(&frame).map_err(|r| match r {
            SkipReason::NotIp => NotTcp::NotIpv4,
            SkipReason::NotTcp | SkipReason::IpFragment => NotTcp::OtherProtocol,
            _ => NotTcp::Malformed,
        })?;
        let (IpAddr::V4(src), IpAddr::V4(dst)) = (p.src, p.dst) else {
            return Err(NotTcp::NotIpv4);
        };
        Ok(TcpSummary {
            src,
            dst,
            sport: p.src_port,
            dport: p.dst_port,
            seq: p.seq,
            ack: p.ack,
            // The eight classic flag bits; NS (bit 8) plays no part in the rules.
            flags: (p.flags.0 & 0xff) as u8,
            payload_len: p.payload_len,
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
        // IPv6 whose next header (0x60) is not TCP; and an IPv6 TCP segment, which the
        // lab (IPv4 only) does not emulate.
        assert_eq!(TcpSummary::parse(&[0x60; 40]), Err(NotTcp::OtherProtocol));
        let mut v6 = vec![0u8; 60];
        v6[0] = 0x60;
        v6[4..6].copy_from_slice(&20u16.to_be_bytes());
        v6[6] = 6;
        v6[40 + 12] = 5 << 4;
        assert_eq!(TcpSummary::parse(&v6), Err(NotTcp::NotIpv4));
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
