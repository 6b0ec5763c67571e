//! `host.metrics_cached_ssthresh`: `ip tcp_metrics show` holds an ssthresh for some
//! peers and `tcp_no_ssthresh_metrics_save = 0`, so `tcp_init_metrics` starts new
//! connections to them in congestion avoidance at that ssthresh (seed 02).
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::view::unmap;
use super::*;
use crate::catalogue::HostEntry;

/// `host.metrics_cached_ssthresh` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.metrics_cached_ssthresh",
    title: "a cached ssthresh",
    meaning: "`ip tcp_metrics` holds an ssthresh for some peers that new connections to them start from, in congestion avoidance",
    fix_goes_to: "`ip tcp_metrics delete`; `tcp_no_ssthresh_metrics_save=1`",
};

pub(crate) fn metrics_cached_ssthresh(h: &HostView) -> Option<HostFinding> {
    // tcp_init_metrics uses a cached ssthresh only when this is 0. Not
    // Sysctl::ssthresh_cached(): tcp_no_metrics_save = 1 only stops new entries being
    // saved, the ones ip tcp_metrics shows are still applied.
    if h.sysctl.tcp_no_ssthresh_metrics_save()? {
        return None;
    }
    let cached: Vec<&MetricsEntry> = h.metrics.iter().filter(|m| m.ssthresh.is_some()).collect();
    if cached.is_empty() {
        return None;
    }
    let mut values: Vec<HostValue> = [
        "net.ipv4.tcp_no_metrics_save",
        "net.ipv4.tcp_no_ssthresh_metrics_save",
    ]
    .iter()
    .filter_map(|k| sysctl_value(h, k))
    .collect();
    let mut named = Vec::new();
    for m in cached.iter().take(MAX_NAMED) {
        let s = m.ssthresh.unwrap_or(0);
        named.push(format!("{} (ssthresh {s})", m.addr));
        values.push(HostValue {
            name: format!("tcp_metrics {} ssthresh", m.addr),
            value: s.to_string(),
            source: "tcp_metrics.txt",
        });
    }
    if cached.len() > MAX_NAMED {
        named.push(format!("and {} more", cached.len() - MAX_NAMED));
    }
    let first = cached[0].addr;
    Some(HostFinding {
        id: HostFindingId::MetricsCachedSsthresh,
        explanation: format!(
            "{} caches the ssthresh of closed connections per destination and starts new \
             connections to it there (tcp_no_ssthresh_metrics_save = 0): {}. A connection \
             to these peers leaves slow start at that window and then grows by one segment \
             per round trip, even when the path is idle now.",
            h.label(),
            named.join(", ")
        ),
        fix: vec![
            format!("ip tcp_metrics delete {first}   (or: ip tcp_metrics flush all)"),
            "sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1".into(),
        ],
        confidence: Confidence::High,
        values,
    })
}

/// `analyze --host` on `slow_start.early_exit`: a cached ssthresh for the peer.
pub(crate) fn judge_early_exit(j: &Judging<'_>) -> Verdict {
    let Judging { h, peer, .. } = *j;
    let on = |action: String| j.on(action);
    let save = h.sysctl.tcp_no_ssthresh_metrics_save();
    let entry = h.metrics.iter().find(|m| unmap(m.addr) == unmap(peer));
    match (save, entry.and_then(|m| m.ssthresh)) {
        (Some(false), Some(t)) => (
            Relation::Confirms,
            format!("ip tcp_metrics holds ssthresh {t} for {peer} and tcp_no_ssthresh_metrics_save = 0, so new connections to it start in congestion avoidance at {t} segments"),
            on(format!("ip tcp_metrics delete {peer}; sysctl -w net.ipv4.tcp_no_ssthresh_metrics_save=1")),
        ),
        (Some(true), _) => (
            Relation::Contradicts,
            "tcp_no_ssthresh_metrics_save = 1: no cached ssthresh is applied, so the early exit is not the metrics cache (look at HyStart's delay detection or a loss the capture missed)".into(),
            None,
        ),
        (_, None) => (
            Relation::Contradicts,
            format!("ip tcp_metrics shows no ssthresh for {peer}: the early exit is not a cached ssthresh (look at HyStart's delay detection or a loss the capture missed)"),
            None,
        ),
        _ => (Relation::Silent, "the bundle has no tcp_no_ssthresh_metrics_save".into(), None),
    }
}
