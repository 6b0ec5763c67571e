//! `host.spurious_retransmissions`: D-SACKs received and spurious RTOs as a share of
//! retransmitted segments.
//!
//! Declares its catalogue entry; [`super::audit`] runs it.

use super::*;
use crate::catalogue::HostEntry;

/// `host.spurious_retransmissions` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.spurious_retransmissions",
    title: "spurious retransmissions",
    meaning: "D-SACKs received and spurious RTOs as a share of retransmitted segments",
    fix_goes_to: "`tcp_recovery` (RACK), `tcp_reordering`",
};

pub(crate) fn spurious_retransmissions(h: &HostView) -> Option<HostFinding> {
    let retrans = h.counter("TcpRetransSegs")?;
    let dsack = h.counter("TcpExtTCPDSACKRecv");
    let rtos = h.counter("TcpExtTCPSpuriousRTOs");
    let spurious = dsack
        .map_or(0, Count::n)
        .saturating_add(rtos.map_or(0, Count::n));
    if retrans.n() == 0 || !retrans.enough(spurious) {
        return None;
    }
    let share = spurious as f64 / retrans.n() as f64;
    if share < SPURIOUS_SHARE_MIN {
        return None;
    }
    let values = [
        "TcpRetransSegs",
        "TcpExtTCPDSACKRecv",
        "TcpExtTCPSpuriousRTOs",
        "TcpExtTCPFastRetrans",
    ]
    .iter()
    .filter_map(|k| counter_value(h, k))
    .collect();
    Some(HostFinding {
        id: HostFindingId::SpuriousRetransmissions,
        explanation: format!(
            "{:.0} % of the segments {} retransmitted were not lost: the receivers reported \
             {} duplicate(s) with D-SACK and {} RTO(s) were spurious, out of {} \
             retransmitted segments. Each spurious retransmission also cut the congestion \
             window. Reordering (veth without RPS, multipath) or a delay spike longer than \
             the RTO causes this.{}",
            share * 100.0,
            h.label(),
            dsack.map_or(0, Count::n),
            rtos.map_or(0, Count::n),
            retrans.n(),
            since_boot_note(retrans)
        ),
        fix: vec![
            "sysctl -w net.ipv4.tcp_recovery=1 (RACK, the default: tolerates reordering by time)".into(),
            "sysctl -w net.ipv4.tcp_reordering=9 (tolerate more reordering before a fast retransmit)".into(),
            "find the reordering or delay: nstat -az TcpExtTCPSACKReorder TcpExtTCPTSReorder".into(),
        ],
        confidence: counter_confidence(retrans, share >= 2.0 * SPURIOUS_SHARE_MIN),
        values,
    })
}
