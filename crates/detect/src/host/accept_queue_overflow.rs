//! `host.accept_queue_overflow`: ListenOverflows / ListenDrops.
//!
//! Declares its catalogue entry; [`super::audit`] runs it.

use super::*;
use crate::catalogue::HostEntry;

/// `host.accept_queue_overflow` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.accept_queue_overflow",
    title: "accept queue overflow",
    meaning: "ListenOverflows / ListenDrops: SYNs or handshakes dropped because a listener's queue was full",
    fix_goes_to: "`somaxconn`, `tcp_max_syn_backlog`; the application's listen backlog",
};

pub(crate) fn accept_queue_overflow(h: &HostView) -> Option<HostFinding> {
    let over = h.counter("TcpExtListenOverflows");
    let drops = h.counter("TcpExtListenDrops");
    let n = over.map_or(0, Count::n).max(drops.map_or(0, Count::n));
    if n == 0 {
        return None;
    }
    let delta = matches!(over.or(drops), Some(Count::Delta(_)));
    let mut values: Vec<HostValue> = ["TcpExtListenOverflows", "TcpExtListenDrops"]
        .iter()
        .filter_map(|k| counter_value(h, k))
        .collect();
    values.extend(
        ["net.core.somaxconn", "net.ipv4.tcp_max_syn_backlog"]
            .iter()
            .filter_map(|k| sysctl_value(h, k)),
    );
    let somaxconn = h.get("net.core.somaxconn").unwrap_or("?");
    Some(HostFinding {
        id: HostFindingId::AcceptQueueOverflow,
        explanation: format!(
            "A listening socket's accept queue on {} was full: ListenOverflows {}, \
             ListenDrops {}. The kernel dropped the client's handshake ACK or SYN, and the \
             client waits for its SYN retransmission (1 s, then 2 s, …). net.core.somaxconn \
             = {somaxconn} caps every listen() backlog.{}",
            h.label(),
            over.map_or("-".into(), |c| count_text(h, c)),
            drops.map_or("-".into(), |c| count_text(h, c)),
            if delta { "" } else { " These are totals since boot: run with --interval to see whether it happens now." }
        ),
        fix: vec![
            "sysctl -w net.core.somaxconn=4096 net.ipv4.tcp_max_syn_backlog=4096".into(),
            "raise the server's listen backlog (e.g. nginx `listen … backlog=4096`) and accept faster (more accept threads)".into(),
            "ss -ltn: a listener whose Recv-Q reaches its Send-Q is the one overflowing".into(),
        ],
        confidence: if delta { Confidence::High } else { Confidence::Low },
        values,
    })
}
