//! The connection model: what the tracker knows of a connection that detectors would
//! otherwise each re-derive (SYN options, the effective MSS, the handshake RTT, the
//! capture clock's tick, the newest TSval, the smallest RTT sample). One rule each,
//! written here; the tracker keeps the state and hands a copy to every segment's event
//! ([`SegmentEvent::conn`](crate::SegmentEvent::conn)), indexed by [`Side`].

use crate::summary::{Side, SynOptions};

/// TCP timestamps option with its padding (RFC 7323 §3: 10 bytes, sent as 12 with two
/// NOPs): carried by every segment once negotiated, so it comes off the MSS.
pub const TIMESTAMPS_OPTION_BYTES: u32 = 12;
/// An Ethernet segment with timestamps: RFC 894's 1500-byte MTU less the IPv4 and TCP
/// headers and [`TIMESTAMPS_OPTION_BYTES`] (1448), what Linux sends on an Ethernet path
/// with timestamps negotiated. The segment size assumed when neither the SYNs nor the
/// data tell one.
pub const ETHERNET_TIMESTAMPS_MSS: u64 =
    crate::limits::ETHERNET_MSS - TIMESTAMPS_OPTION_BYTES as u64;
/// The coarsest capture clock looked for: timestamps that are all multiples of 10 ms
/// (tcptrace-zwnd.pcap).
pub const COARSEST_TICK_NS: u64 = 10_000_000;

/// What the capture shows of one side's SYN (or SYN/ACK).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub enum SynSeen {
    /// No SYN of this side was captured: its options are unknown.
    #[default]
    NotCaptured,
    /// The SYN was captured, but the snaplen cut its options: what was read may lack
    /// some, so none is relied on but the MSS, when its option was read whole (Linux
    /// writes it first, `tcp_options_write`; so do the BSDs and Windows): a bound, since
    /// whether timestamps followed is unknown ([`ConnModel::full_segment_floor`]).
    Cut { mss: Option<u16> },
    /// The SYN and all its options.
    Options(SynOptions),
}

impl SynSeen {
    /// The options, when the whole SYN was captured.
    pub fn options(self) -> Option<SynOptions> {
        match self {
            SynSeen::Options(o) => Some(o),
            _ => None,
        }
    }
}

/// The full-sized segment of a sender (its SMSS): the smaller of the receiver's MSS
/// option (the most the receiver accepts, RFC 9293 §3.7.1) and the sender's own (its own
/// path's MTU; Linux caps the send MSS by both, `tcp_sync_mss` → `tcp_mtu_to_mss` bounded
/// by `mss_clamp`: wireshark-sample-nntp-sack.pcap announces 1460 and 1380 and sends
/// 1368), less [`TIMESTAMPS_OPTION_BYTES`] when both SYNs carried timestamps (Linux's
/// `tcp_current_mss` takes every segment's option bytes off). `None` without the
/// receiver's MSS option: the caller falls back to the payloads it saw. At least 1.
pub fn effective_mss(sender: Option<SynOptions>, receiver: Option<SynOptions>) -> Option<u32> {
    let peer = receiver?.mss?;
    let mss = match sender.and_then(|o| o.mss) {
        Some(own) => peer.min(own),
        None => peer,
    };
    let ts = sender.is_some_and(|o| o.timestamps) && receiver.is_some_and(|o| o.timestamps);
    let opts = if ts { TIMESTAMPS_OPTION_BYTES } else { 0 };
    Some(u32::from(mss).saturating_sub(opts).max(1))
}

/// What the tracker knows of one direction (its sender's side of the connection).
#[derive(Copy, Clone, Debug, Default, PartialEq, Eq)]
pub struct DirModel {
    /// The sender's SYN or SYN/ACK.
    pub syn: SynSeen,
    /// The newest TSval the sender sent (RFC 7323 §5.3 modular order), capture
    /// duplicates left out.
    pub tsval_max: Option<u32>,
    /// The TSecr of the sender's latest segment with an ACK: the newest of the peer's
    /// TSvals it had received when it sent it (RFC 7323 §4.3's TS.Recent).
    pub tsecr: Option<u32>,
    /// The round trip from the capture point to the sender and back as of now: how long
    /// an ACK seen here takes to reach the sender and its answer to come back (at the
    /// sender, its own reaction). The handshake's leg, then the shortest of the recent
    /// echoes of the peer's TSvals by this side (`limits.rs`, `Limits::echo_sample`):
    /// it follows a queue that builds on the path.
    pub round_trip_ns: Option<u64>,
}

/// What the tracker knows of a connection, as of the segment it comes with.
#[derive(Copy, Clone, Debug, PartialEq, Eq)]
pub struct ConnModel {
    /// `[client → server, server → client]`, by sender.
    pub dirs: [DirModel; 2],
    /// SYN → SYN/ACK at the capture point: from the SYN that was the latest when the
    /// first SYN/ACK came (a retransmitted SYN's timeout is no round trip).
    pub syn_to_synack_ns: Option<u64>,
    /// SYN/ACK → the client's first ACK after it.
    pub synack_to_ack_ns: Option<u64>,
    /// The capture clock's resolution as far as seen: the largest power of ten, up to
    /// [`COARSEST_TICK_NS`], that divides the time between any two of the connection's
    /// segments (one clock stamps both directions).
    pub tick_ns: u64,
    /// The smallest RTT sample so far, data → ACK or timestamp echo, either direction.
    /// At a middle vantage it is one leg of the path only.
    pub min_rtt_sample_ns: Option<u64>,
}

impl Default for ConnModel {
    fn default() -> Self {
        ConnModel {
            dirs: [DirModel::default(); 2],
            syn_to_synack_ns: None,
            synack_to_ack_ns: None,
            tick_ns: COARSEST_TICK_NS,
            min_rtt_sample_ns: None,
        }
    }
}

impl ConnModel {
    /// The handshake RTT, the full path RTT at any vantage point: SYN → SYN/ACK plus
    /// SYN/ACK → the client's first ACK ([`Self::syn_to_synack_ns`]). `None` until the
    /// client's ACK, and when the SYN or the SYN/ACK was not captured. The one definition
    /// every detector and the summary use.
    pub fn handshake_rtt_ns(&self) -> Option<u64> {
        Some(
            self.syn_to_synack_ns?
                .saturating_add(self.synack_to_ack_ns?),
        )
    }

    /// The handshake's round trip from the capture point to `side` and back: SYN →
    /// SYN/ACK to the server, SYN/ACK → the client's ACK to the client (`None` when not
    /// captured). About 0 at that side's own capture point.
    #[inline]
    pub fn handshake_leg_to(&self, side: Side) -> Option<u64> {
        match side {
            Side::Client => self.synack_to_ack_ns,
            Side::Server => self.syn_to_synack_ns,
        }
    }

    /// The effective MSS of `sender`'s data ([`effective_mss`]); `None` without the
    /// receiver's whole SYN. The same rule read from the two SYNs in place: through
    /// [`SynSeen::options`] each SYN's options were copied out into an `Option` first,
    /// ≈ 29 instructions more (sndbuf asks on every data segment; callgrind,
    /// bench/README.md session 12).
    #[inline]
    pub fn mss(&self, sender: Side) -> Option<u32> {
        let SynSeen::Options(receiver) = &self.dirs[sender.peer()].syn else {
            return None;
        };
        let peer = receiver.mss?;
        let (mss, ts) = match &self.dirs[sender].syn {
            SynSeen::Options(own) => (
                own.mss.map_or(peer, |m| peer.min(m)),
                own.timestamps && receiver.timestamps,
            ),
            _ => (peer, false),
        };
        let opts = if ts { TIMESTAMPS_OPTION_BYTES } else { 0 };
        Some(u32::from(mss).saturating_sub(opts).max(1))
    }

    /// The least `sender`'s full-sized segment can be: [`Self::mss`] when both SYNs were
    /// whole; when the snaplen cut either, the MSS options read (the smaller, as
    /// [`effective_mss`]) less [`TIMESTAMPS_OPTION_BYTES`], since the timestamps option
    /// that would take them off every segment may have been among the bytes cut (sweep
    /// s31-020 at snaplen 64: MSS 1460 read, Nagle holding 740 B echoes, which the
    /// largest payload seen had made "full-sized"). `None` without the receiver's MSS.
    pub fn full_segment_floor(&self, sender: Side) -> Option<u32> {
        let read = |seen: &SynSeen| match seen {
            SynSeen::Options(o) => o.mss,
            SynSeen::Cut { mss } => *mss,
            SynSeen::NotCaptured => None,
        };
        let (own, peer) = (&self.dirs[sender].syn, &self.dirs[sender.peer()].syn);
        let cut = matches!(own, SynSeen::Cut { .. }) || matches!(peer, SynSeen::Cut { .. });
        if !cut {
            return self.mss(sender);
        }
        let peer_mss = read(peer)?;
        let mss = read(own).map_or(peer_mss, |m| m.min(peer_mss));
        Some(
            u32::from(mss)
                .saturating_sub(TIMESTAMPS_OPTION_BYTES)
                .max(1),
        )
    }

    /// Both sides offered SACK (RFC 2018); `None` while a SYN is unknown.
    pub fn sack_permitted(&self) -> Option<bool> {
        let [c, s] = self.dirs.map(|d| d.syn.options().map(|o| o.sack_permitted));
        Some(c? && s?)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn syn(mss: Option<u16>, timestamps: bool) -> Option<SynOptions> {
        Some(SynOptions {
            mss,
            wscale: Some(7),
            sack_permitted: true,
            timestamps,
        })
    }

    #[test]
    fn effective_mss_is_the_smaller_option_less_timestamps() {
        // wireshark-sample-nntp-sack.pcap: 1460 and 1380, no timestamps → 1380 each way.
        assert_eq!(
            effective_mss(syn(Some(1460), false), syn(Some(1380), false)),
            Some(1380)
        );
        assert_eq!(
            effective_mss(syn(Some(1380), false), syn(Some(1460), false)),
            Some(1380)
        );
        // Linux on Ethernet: 1460 both ways with timestamps → 1448.
        assert_eq!(
            effective_mss(syn(Some(1460), true), syn(Some(1460), true)),
            Some(1448)
        );
        // Timestamps offered by one side only are not negotiated.
        assert_eq!(
            effective_mss(syn(Some(1460), true), syn(Some(1460), false)),
            Some(1460)
        );
        // The sender's SYN unknown: the receiver's option bounds it.
        assert_eq!(effective_mss(None, syn(Some(1424), true)), Some(1424));
        // The receiver's MSS unknown: no rule.
        assert_eq!(effective_mss(syn(Some(1460), true), syn(None, true)), None);
        assert_eq!(effective_mss(syn(Some(1460), true), None), None);
        assert_eq!(
            effective_mss(syn(Some(8), true), syn(Some(8), true)),
            Some(1)
        );
    }

    #[test]
    fn the_models_mss_is_effective_mss_of_its_syns() {
        let seen = |mss, timestamps| match (mss, timestamps) {
            (Some(0), _) => SynSeen::NotCaptured,
            (Some(1), _) => SynSeen::Cut { mss: Some(1400) },
            (mss, ts) => SynSeen::Options(syn(mss, ts).unwrap()),
        };
        let cases = [
            Some(0),
            Some(1),
            None,
            Some(8),
            Some(536),
            Some(1380),
            Some(1460),
        ];
        for a in cases {
            for b in cases {
                for (ta, tb) in [(false, false), (true, false), (false, true), (true, true)] {
                    let mut m = ConnModel::default();
                    m.dirs[Side::Client].syn = seen(a, ta);
                    m.dirs[Side::Server].syn = seen(b, tb);
                    for side in Side::BOTH {
                        let rule = effective_mss(
                            m.dirs[side].syn.options(),
                            m.dirs[side.peer()].syn.options(),
                        );
                        assert_eq!(m.mss(side), rule, "{a:?} {b:?} {ta} {tb} {side:?}");
                    }
                }
            }
        }
    }

    #[test]
    fn handshake_rtt_needs_both_legs() {
        let mut m = ConnModel {
            syn_to_synack_ns: Some(20_000_000),
            ..ConnModel::default()
        };
        assert_eq!(m.handshake_rtt_ns(), None);
        m.synack_to_ack_ns = Some(150_000);
        assert_eq!(m.handshake_rtt_ns(), Some(20_150_000));
        assert_eq!(m.sack_permitted(), None);
        m.dirs[Side::Client].syn = SynSeen::Options(syn(Some(1460), true).unwrap());
        m.dirs[Side::Server].syn = SynSeen::Cut { mss: None };
        assert_eq!(m.sack_permitted(), None);
        assert_eq!(m.mss(Side::Server), Some(1460));
        assert_eq!(m.mss(Side::Client), None);
    }

    /// With a SYN cut after its MSS option, a sender's full segment is at least the
    /// smaller MSS read less the timestamps that may have been cut; with both SYNs whole,
    /// exactly the model's MSS; without the receiver's MSS, unknown.
    #[test]
    fn a_cut_syn_bounds_the_full_segment_from_below() {
        let mut m = ConnModel::default();
        m.dirs[Side::Client].syn = SynSeen::Options(syn(Some(1460), true).unwrap());
        m.dirs[Side::Server].syn = SynSeen::Cut { mss: Some(1400) };
        assert_eq!(m.full_segment_floor(Side::Server), Some(1388));
        assert_eq!(m.full_segment_floor(Side::Client), Some(1388));
        m.dirs[Side::Server].syn = SynSeen::Cut { mss: None };
        assert_eq!(m.full_segment_floor(Side::Client), None);
        assert_eq!(m.full_segment_floor(Side::Server), Some(1448));
        m.dirs[Side::Server].syn = SynSeen::Options(syn(Some(1400), true).unwrap());
        assert_eq!(m.full_segment_floor(Side::Server), m.mss(Side::Server));
        assert_eq!(m.full_segment_floor(Side::Server), Some(1388));
        m.dirs[Side::Server].syn = SynSeen::NotCaptured;
        assert_eq!(m.full_segment_floor(Side::Client), None);
        assert_eq!(m.full_segment_floor(Side::Server), Some(1460));
    }
}
