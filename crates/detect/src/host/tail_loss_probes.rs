//! `host.tail_loss_probes`: TCPLossProbes (RFC 8985 TLP) per segment sent.
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::join::counter_judgement;
use super::*;
use crate::catalogue::HostEntry;

/// `host.tail_loss_probes` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.tail_loss_probes",
    title: "frequent tail loss probes",
    meaning: "TCPLossProbes per segment sent: bursts whose last segments are lost",
    fix_goes_to: "the path; `tcp_early_retrans=3`",
};

pub(crate) fn tail_loss_probes(h: &HostView) -> Option<HostFinding> {
    let probes = h.counter("TcpExtTCPLossProbes")?;
    if !probes.enough(probes.n()) {
        return None;
    }
    let rate = per_segment(h, probes.n())?;
    if rate < EVENTS_PER_SEGMENT_MIN {
        return None;
    }
    let recovered = h.counter("TcpExtTCPLossProbeRecovery").map_or(0, Count::n);
    let mut values: Vec<HostValue> = [
        "TcpExtTCPLossProbes",
        "TcpExtTCPLossProbeRecovery",
        "TcpOutSegs",
    ]
    .iter()
    .filter_map(|k| counter_value(h, k))
    .collect();
    values.extend(sysctl_value(h, "net.ipv4.tcp_early_retrans"));
    let tlp_on = h.sysctl.tail_loss_probe_enabled().unwrap_or(true);
    Some(HostFinding {
        id: HostFindingId::TailLossProbes,
        explanation: format!(
            "{} sent {} tail loss probe(s) ({:.1} per 1000 segments sent): the last segments \
             of a burst went unacknowledged for about two round trips, so the sender \
             retransmitted one to provoke a SACK (RFC 8985). {recovered} of them recovered a \
             real loss; each costs ≥ 2 RTT of waiting at the end of a response.{}",
            h.label(),
            probes.n(),
            rate * 1e3,
            since_boot_note(probes)
        ),
        fix: if tlp_on {
            vec![
                "find where the tails are dropped: tc -s qdisc (drops, overlimits), ethtool -S IFACE | grep -i drop".into(),
                "keep net.ipv4.tcp_early_retrans=3 (TLP): without it each tail loss waits for the RTO (≥ 200 ms)".into(),
            ]
        } else {
            vec!["sysctl -w net.ipv4.tcp_early_retrans=3 (tail loss probes instead of RTOs)".into()]
        },
        confidence: counter_confidence(probes, recovered > 0),
        values,
    })
}

/// `analyze --host` on `loss.tail_loss_probe`: the probe counter between snapshots.
pub(crate) fn judge_tail_loss_probe(j: &Judging<'_>) -> Verdict {
    let Judging { h, .. } = *j;
    let on = |action: String| j.on(action);
    counter_judgement(
        h,
        &["TcpExtTCPLossProbes"],
        "tail loss probes",
        on("keep net.ipv4.tcp_early_retrans=3; find the tail drops (tc -s qdisc)".into()),
    )
}
