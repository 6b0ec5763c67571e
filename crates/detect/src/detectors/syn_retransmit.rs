//! `handshake.syn_retransmit`: the connection waited for a retransmitted SYN or SYN/ACK.
//!
//! Mechanism (RFC 6298 §5.7, Linux `tcp_syn_retries`, `TCP_TIMEOUT_INIT`): a SYN that gets
//! no answer is retransmitted after the initial RTO of 1 s, then 2 s, 4 s … (1, 3, 7 s
//! after the first). A lost SYN/ACK makes the server retransmit it the same way, and the
//! client's own SYN retransmission usually crosses it.
//!
//! Signature: at the client, the SYN repeated with the same ISN ≈ 1 s (then 2 s, 4 s) apart
//! before a SYN/ACK; at the server, a SYN/ACK repeated, or a SYN arriving twice (the
//! answer was lost on the way back). A SYN dropped before reaching the server is invisible
//! in a server-side capture: nothing there proves the wait.
//!
//! Cost: from the first SYN to the one that was answered (the last before the SYN/ACK),
//! plus, for SYN/ACK repeats seen at the server, from the first SYN/ACK to the last.
//!
//! Fix: find where SYNs are dropped — the server's accept queue (`nstat` ListenOverflows,
//! ListenDrops: raise the listen backlog and `net.core.somaxconn`), a firewall or
//! conntrack table, loss on the path; clients that cannot wait 1 s retry the connect
//! sooner at the application level.

use crate::detector::{emptied_vec, ms, Connection, Detector, Reusable, Segment, Slots};
use crate::finding::{Confidence, Finding, FindingId, Fix, Host};
use tcpwhy_capture::Timestamp;
use tcpwhy_track::SegmentKinds;

use crate::catalogue::Entry;

/// `handshake.syn_retransmit` in the catalogue (crate::catalogue).
pub const SYN_RETRANSMIT: Entry = Entry {
    id: "handshake.syn_retransmit",
    title: "SYN retransmitted",
    meaning:
        "a SYN or SYN/ACK was lost and the connection waited for the 1 s initial RTO (1, 3, 7 s …)",
    fix_goes_to: "the path; the listener's backlog",
    part_of: None,
    decided_by: None,
    judge: None,
};

#[derive(Default)]
struct Handshake {
    /// (frame, time) of every SYN and SYN/ACK, in order; bounded.
    syns: Vec<(u64, Timestamp)>,
    synacks: Vec<(u64, Timestamp)>,
}

impl Reusable for Handshake {
    fn empty(&mut self) {
        *self = Handshake {
            syns: emptied_vec(&mut self.syns),
            synacks: emptied_vec(&mut self.synacks),
        };
    }
}

/// SYNs remembered per connection (Linux gives up after 6 retries by default).
const MAX_SYNS: usize = 16;

#[derive(Default)]
pub struct SynRetransmit {
    conns: Slots<Handshake>,
}

impl SynRetransmit {
    /// A SYN or SYN/ACK (not a capture duplicate).
    #[inline(never)]
    fn syn(&mut self, seg: &Segment<'_>) {
        let f = seg.pkt.flags;
        let h = self.conns.get_or_default(seg);
        let list = if f.ack() { &mut h.synacks } else { &mut h.syns };
        if list.len() < MAX_SYNS {
            list.push((seg.frame, seg.ts));
        }
    }
}

impl Detector for SynRetransmit {
    /// Inlined into the registry's dispatch, so that the segments without SYN (all but
    /// two or three a connection) cost a test, not a call (23.5 instructions a segment
    /// before, callgrind on the mixed bench capture).
    #[inline]
    fn on_segment(&mut self, seg: &Segment<'_>) {
        if seg.pkt.flags.syn() && !seg.ev.kinds.has(SegmentKinds::CAPTURE_DUPLICATE) {
            self.syn(seg);
        }
    }

    fn on_connection(&mut self, conn: &Connection<'_>, out: &mut Vec<Finding>) {
        let Some(h) = self.conns.take_reusing(conn) else {
            return;
        };
        if h.syns.len() < 2 && h.synacks.len() < 2 {
            return;
        }
        // The SYN that was answered: the last one before the first SYN/ACK.
        let first_synack = h.synacks.first().map(|s| s.1);
        let answered = h
            .syns
            .iter()
            .rev()
            .find(|s| first_synack.is_none_or(|t| s.1 <= t))
            .or(h.syns.last());
        let syn_wait = match (h.syns.first(), answered) {
            (Some(a), Some(b)) => b.1.elapsed_since(a.1),
            _ => 0,
        };
        let synack_wait = match (h.synacks.first(), h.synacks.last()) {
            (Some(a), Some(b)) => b.1.elapsed_since(a.1),
            _ => 0,
        };
        let mut f = conn.finding(FindingId::HandshakeSynRetransmit);
        f.cost_ns = syn_wait.max(synack_wait);
        if f.cost_ns == 0 {
            return;
        }
        f.share = Some(f.cost_ns as f64 / conn.active_ns().max(1) as f64);
        for (i, (frame, ts)) in h.syns.iter().enumerate() {
            let note = if i == 0 {
                "SYN".to_string()
            } else {
                format!(
                    "SYN sent again, {} after the first",
                    ms(ts.elapsed_since(h.syns[0].1))
                )
            };
            f.cite(*frame, *ts, note);
        }
        for (i, (frame, ts)) in h.synacks.iter().enumerate() {
            let note = if i == 0 {
                "SYN/ACK".to_string()
            } else {
                format!(
                    "SYN/ACK sent again, {} after the first",
                    ms(ts.elapsed_since(h.synacks[0].1))
                )
            };
            f.cite(*frame, *ts, note);
        }
        f.evidence.sort_by_key(|e| e.frame);
        let (n_syn, n_synack) = (
            h.syns.len().saturating_sub(1),
            h.synacks.len().saturating_sub(1),
        );
        f.explanation = if syn_wait >= synack_wait {
            format!(
                "The client's SYN went unanswered and was sent {n_syn} more time(s); the connection \
                 was established {} after the first SYN. An unanswered SYN is retransmitted after \
                 the initial retransmission timeout (1 s on Linux, then 2 s, 4 s …), so each lost \
                 SYN costs at least a second.",
                ms(syn_wait)
            )
        } else {
            format!(
                "The server's SYN/ACK was sent {n_synack} more time(s), {} after the first: the \
                 SYN/ACK or the client's ACK was lost. The server retransmits it after its initial \
                 timeout (1 s on Linux, doubling).",
                ms(synack_wait)
            )
        };
        f.fix = vec![
            Fix {
                host: Host::Server,
                action:
                    "check the accept queue: `nstat -az ListenOverflows ListenDrops`; raise the \
                         listen backlog and net.core.somaxconn if they rise"
                        .into(),
            },
            Fix {
                host: Host::Both,
                action: "look for SYN drops on the path: firewall rules, conntrack table full \
                         (`nf_conntrack: table full` in dmesg), packet loss"
                    .into(),
            },
        ];
        f.confidence = Confidence::High;
        out.push(f);
    }

    /// Nothing is kept across connections: each one's state is dropped in `on_connection`.
    fn absorb(&mut self, _other: Self) {}
}
