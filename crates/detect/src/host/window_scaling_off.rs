//! `host.window_scaling_off`: `tcp_window_scaling = 0`: windows capped at 64 KiB.
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::*;
use crate::catalogue::HostEntry;

/// `host.window_scaling_off` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.window_scaling_off",
    title: "window scaling off",
    meaning: "`tcp_window_scaling = 0`: windows capped at 64 KiB",
    fix_goes_to: "`sysctl -w net.ipv4.tcp_window_scaling=1`",
};

pub(crate) fn window_scaling_off(h: &HostView) -> Option<HostFinding> {
    if h.sysctl.tcp_window_scaling()? {
        return None;
    }
    Some(HostFinding {
        id: HostFindingId::WindowScalingOff,
        explanation: format!(
            "net.ipv4.tcp_window_scaling = 0 on {}: it neither offers nor accepts window \
             scaling (RFC 7323), so every connection's window is at most 65,535 bytes: \
             ≈ 5 Mbit/s at a 100 ms round trip whatever the bandwidth.",
            h.label()
        ),
        fix: vec!["sysctl -w net.ipv4.tcp_window_scaling=1".into()],
        confidence: Confidence::High,
        values: sysctl_value(h, "net.ipv4.tcp_window_scaling")
            .into_iter()
            .collect(),
    })
}

/// `analyze --host` on `rwnd.no_window_scaling`: this host's window scaling.
pub(crate) fn judge_no_window_scaling(j: &Judging<'_>) -> Verdict {
    let Judging { h, side, .. } = *j;
    let on = |action: String| j.on(action);
    // The kernel takes any value but 0 as on; tcp_window_scaling() reads only 0 and 1.
    match h.sysctl.get_u64("net.ipv4.tcp_window_scaling") {
        Some(0) => (
            Relation::Confirms,
            "net.ipv4.tcp_window_scaling = 0 on this host".into(),
            on("sysctl -w net.ipv4.tcp_window_scaling=1".into()),
        ),
        Some(_) => (
            Relation::Contradicts,
            format!("this host has net.ipv4.tcp_window_scaling = 1: the other end, or a middlebox that rewrote the SYN, turned scaling off (the {} side is not the cause)", side.as_str()),
            None,
        ),
        None => (Relation::Silent, "the bundle has no tcp_window_scaling".into(), None),
    }
}
