//! `host.slow_start_after_idle`: `net.ipv4.tcp_slow_start_after_idle = 1` with a
//! congestion control without its own `cong_control` hook (CUBIC, Reno …; BBR is
//! exempt: `tcp_slow_start_after_idle_check` returns early for it). Every response
//! after an idle of one RTO restarts from the restart window (RFC 5681 §4.1, seed 01).
//! Confidence low for the setting alone, medium when ss shows connections idle longer
//! than their RTO (`lastsnd` > `rto`) that will pay it on their next send.
//!
//! Declares its catalogue entry, and the host-join rule of the capture findings whose
//! host setting it reads (named in their entries).

use super::*;
use crate::catalogue::HostEntry;

/// `host.slow_start_after_idle` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.slow_start_after_idle",
    title: "slow start after idle is on",
    meaning: "`tcp_slow_start_after_idle = 1` with a congestion control that honours it (CUBIC, Reno; not BBR): every response after an idle RTO restarts from the initial window",
    fix_goes_to: "`sysctl -w net.ipv4.tcp_slow_start_after_idle=0`",
};

/// Congestion controls whose module has its own `cong_control` hook and so skips the
/// idle restart (`tcp_slow_start_after_idle_check`): BBR and its successors.
pub(crate) fn exempt_from_idle_restart(cc: &str) -> bool {
    cc.starts_with("bbr")
}

pub(crate) fn slow_start_after_idle(h: &HostView) -> Option<HostFinding> {
    if !h.sysctl.tcp_slow_start_after_idle()? {
        return None;
    }
    let default = h.sysctl.tcp_congestion_control();
    // Sockets may choose their own congestion control (TCP_CONGESTION): count the live
    // ones that honour the restart.
    let live: Vec<&LiveSocket> = h.sockets.iter().filter(|s| s.state == "ESTAB").collect();
    let honouring = live
        .iter()
        .filter(|s| {
            s.cc.as_deref()
                .is_some_and(|c| !exempt_from_idle_restart(c))
        })
        .count();
    let default_honours = default.is_some_and(|c| !exempt_from_idle_restart(c));
    if !default_honours && honouring == 0 {
        return None;
    }
    let mut values: Vec<HostValue> = [
        "net.ipv4.tcp_slow_start_after_idle",
        "net.ipv4.tcp_congestion_control",
    ]
    .iter()
    .filter_map(|k| sysctl_value(h, k))
    .collect();
    let mut why = format!(
        "net.ipv4.tcp_slow_start_after_idle = 1 on {}: a connection that sent nothing for one \
         retransmission timeout (≥ 200 ms) restarts from the initial window when it sends \
         again (RFC 5681 §4.1), so every response after an idle keep-alive pays slow start \
         again.",
        h.label()
    );
    match default {
        Some(c) if default_honours => why += &format!(" The default congestion control, {c}, honours it."),
        Some(c) => why += &format!(" The default congestion control, {c}, is exempt, but {honouring} of {} live connection(s) chose one that honours it.", live.len()),
        None => {}
    }
    // The setting costs only connections that go idle and send again (keep-alive): with
    // such connections live it is a likely cost, without them a setting to know about.
    let idle = live
        .iter()
        .filter(|s| {
            s.idle_past_rto() && s.cc.as_deref().is_none_or(|c| !exempt_from_idle_restart(c))
        })
        .count();
    if idle > 0 {
        why += &format!(" {idle} live connection(s) have been idle longer than their RTO: their next response restarts.");
        values.push(HostValue {
            name: "ss: connections idle longer than their RTO (lastsnd > rto)".into(),
            value: idle.to_string(),
            source: "ss.txt",
        });
    }
    if honouring > 0 {
        values.push(HostValue {
            name: "ss: connections whose congestion control restarts after idle".into(),
            value: format!("{honouring} of {}", live.len()),
            source: "ss.txt",
        });
    }
    Some(HostFinding {
        id: HostFindingId::SlowStartAfterIdle,
        explanation: why,
        fix: vec![
            "sysctl -w net.ipv4.tcp_slow_start_after_idle=0".into(),
            "echo net.ipv4.tcp_slow_start_after_idle=0 > /etc/sysctl.d/90-tcp-idle.conf (keeps it after a reboot)".into(),
        ],
        confidence: if idle > 0 {
            Confidence::Medium
        } else {
            Confidence::Low
        },
        values,
    })
}

/// `analyze --host` on `slow_start.restart_after_idle`: the sender's setting and its congestion control.
pub(crate) fn judge_restart_after_idle(j: &Judging<'_>) -> Verdict {
    let Judging {
        h,
        socket,
        sibling,
        own,
        ..
    } = *j;
    let on = |action: String| j.on(action);
    let (cc, whose) = match (socket.and_then(|s| s.cc.as_deref()), sibling.and_then(|s| s.cc.as_deref())) {
        (Some(c), _) => (Some(c), "the connection's socket in ss".to_string()),
        (None, Some(c)) => (Some(c), format!("ss: another connection on {own}")),
        _ => (h.sysctl.tcp_congestion_control(), "net.ipv4.tcp_congestion_control; ss shows no connection on this port, and an application may choose its own".to_string()),
    };
    let ssai = h.sysctl.tcp_slow_start_after_idle();
    match (ssai, cc) {
        (Some(false), _) => (
            Relation::Contradicts,
            "net.ipv4.tcp_slow_start_after_idle = 0: the sender does not restart after idle, so the small window after the gap has another cause (pacing in the application, or a receiver's window)".into(),
            None,
        ),
        (_, Some(c)) if exempt_from_idle_restart(c) => (
            Relation::Contradicts,
            format!("the sender runs {c} ({whose}), which skips the restart after idle (it has its own cong_control), so the gap after idle is not a restart"),
            None,
        ),
        (Some(true), Some(c)) => (
            Relation::Confirms,
            format!("net.ipv4.tcp_slow_start_after_idle = 1 and {c} ({whose}) restarts from the initial window after an idle RTO"),
            on("sysctl -w net.ipv4.tcp_slow_start_after_idle=0".into()),
        ),
        _ => (Relation::Silent, "the bundle has no tcp_slow_start_after_idle".into(), None),
    }
}
