//! `host.reordering`: TCPSACKReorder / TCPTSReorder / TCPRenoReorder per segment sent;
//! with veth interfaces whose RPS is off (seed 03), the fix is RPS.
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::join::counter_judgement;
use super::*;
use crate::catalogue::HostEntry;

/// `host.reordering` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.reordering",
    title: "reordering",
    meaning: "TCPSACKReorder / TCPTSReorder / TCPRenoReorder per segment sent",
    fix_goes_to: "RPS on veth interfaces; `tcp_reordering`",
};

pub(crate) fn reordering(h: &HostView) -> Option<HostFinding> {
    let names = [
        "TcpExtTCPSACKReorder",
        "TcpExtTCPTSReorder",
        "TcpExtTCPRenoReorder",
    ];
    let counts: Vec<Count> = names.iter().filter_map(|n| h.counter(n)).collect();
    let first = *counts.first()?;
    let n = counts.iter().fold(0u64, |a, c| a.saturating_add(c.n()));
    if !first.enough(n) || per_segment(h, n)? < EVENTS_PER_SEGMENT_MIN {
        return None;
    }
    let mut values: Vec<HostValue> = names
        .iter()
        .chain(&["TcpExtTCPFastRetrans", "TcpExtTCPDSACKRecv"])
        .filter_map(|k| counter_value(h, k))
        .collect();
    values.extend(sysctl_value(h, "net.ipv4.tcp_reordering"));
    let mut why = format!(
        "{} detected reordering {n} time(s) ({:.1} per 1000 segments sent; SACK, \
         timestamp and Reno detections). Packets that arrive out of order look like loss: \
         the sender fast-retransmits and halves its window although nothing was lost.",
        h.label(),
        per_segment(h, n).unwrap_or(0.0) * 1e3
    );
    let mut fix = Vec::new();
    if !h.veth_without_rps.is_empty() {
        why += &format!(
            " veth interface(s) without Receive Packet Steering: {} — if the reordering is \
             on them, a container's packets are queued on whichever CPU the sender runs on \
             and processed out of order (seed 03).",
            h.veth_without_rps.join(", ")
        );
        for v in h.veth_without_rps.iter().take(MAX_NAMED) {
            values.push(HostValue {
                name: format!("/sys/class/net/{v}/queues/rx-*/rps_cpus"),
                value: "0 (RPS off)".into(),
                source: "rps/",
            });
            fix.push(format!(
                "echo <CPU mask, e.g. f for CPUs 0-3> > /sys/class/net/{v}/queues/rx-0/rps_cpus"
            ));
        }
    }
    why += since_boot_note(first);
    fix.push(
        "sysctl -w net.ipv4.tcp_reordering=9 (tolerate more reordering before a fast retransmit)"
            .into(),
    );
    fix.push("find the reordering element (multipath/ECMP, bonding, a veth without RPS)".into());
    Some(HostFinding {
        id: HostFindingId::Reordering,
        explanation: why,
        fix,
        // RPS is off on veth by default, so its absence is a lead, not proof.
        confidence: counter_confidence(
            first,
            per_segment(h, n).unwrap_or(0.0) >= 10.0 * EVENTS_PER_SEGMENT_MIN,
        ),
        values,
    })
}

/// `analyze --host` on `reordering` and `retransmit.spurious`: the reordering and D-SACK counters, and veth interfaces without RPS.
pub(crate) fn judge_reordering(j: &Judging<'_>) -> Verdict {
    let Judging { h, .. } = *j;
    let on = |action: String| j.on(action);
    let (r, mut note, mut fix) = counter_judgement(
        h,
        &[
            "TcpExtTCPSACKReorder",
            "TcpExtTCPTSReorder",
            "TcpExtTCPDSACKRecv",
        ],
        "reordering and D-SACK counters",
        on("sysctl -w net.ipv4.tcp_reordering=9".into()),
    );
    if let Some(v) = h.veth_without_rps.first() {
        note += &format!("; veth {v} has RPS off (seed 03)");
        fix = on(format!(
            "echo <CPU mask> > /sys/class/net/{v}/queues/rx-0/rps_cpus"
        ));
    }
    (r, note, fix)
}
