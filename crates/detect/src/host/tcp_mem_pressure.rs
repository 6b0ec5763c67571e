//! `host.tcp_mem_pressure`: `/proc/net/sockstat` "TCP … mem" (pages) above the
//! `tcp_mem` low or pressure threshold, or TCPMemoryPressures rising: windows stop
//! growing (`tcp_grow_window` under `tcp_under_memory_pressure`, seed 04).
//!
//! Declares its catalogue entry; [`super::audit`] runs it.

use super::*;
use crate::catalogue::HostEntry;
use tcpwhy_hoststate::TcpMemLevel;

/// `host.tcp_mem_pressure` in the catalogue (crate::catalogue).
pub const ENTRY: HostEntry = HostEntry {
    id: "host.tcp_mem_pressure",
    title: "TCP memory pressure",
    meaning: "TCP's memory above the `tcp_mem` thresholds, or TCPMemoryPressures rising: windows stop growing",
    fix_goes_to: "`tcp_mem`, if the host has the memory free",
};

pub(crate) fn tcp_mem_pressure(h: &HostView) -> Option<HostFinding> {
    let mem = h.sysctl.tcp_mem();
    let st = h.tcp_sockstat();
    let pressures = h.counter("TcpExtTCPMemoryPressures");
    let aborts = h.counter("TcpExtTCPAbortOnMemory");
    // Above high is worse than pressure (allocations fail): the same finding.
    let over = match mem.and_then(|m| st.mem_level(&m)) {
        Some(TcpMemLevel::Pressure | TcpMemLevel::High) => Some(Confidence::High),
        Some(TcpMemLevel::AboveLow) => Some(Confidence::Medium),
        _ => None,
    };
    let rising = matches!(pressures, Some(Count::Delta(n)) if n > 0)
        || matches!(aborts, Some(Count::Delta(n)) if n > 0);
    let since_boot = matches!(pressures, Some(Count::Total(n)) if n > 0);
    let confidence = match (over, rising, since_boot) {
        (Some(c), _, _) => c.max(if rising { Confidence::High } else { c }),
        (None, true, _) => Confidence::High,
        (None, false, true) => Confidence::Low,
        _ => return None,
    };
    let mut why = String::new();
    let mut values = Vec::new();
    if let (Some(m), Some(u)) = (mem, st.mem_pages) {
        let pct = |t: u64| {
            if t == 0 {
                0.0
            } else {
                u as f64 * 100.0 / t as f64
            }
        };
        why += &format!(
            "TCP memory in use on {} is {u} pages ({} MiB): {:.0} % of tcp_mem low ({}), \
             {:.0} % of pressure ({}), {:.0} % of high ({}).",
            h.label(),
            u.saturating_mul(PAGE_BYTES) >> 20,
            pct(m.low_pages),
            m.low_pages,
            pct(m.pressure_pages),
            m.pressure_pages,
            pct(m.high_pages),
            m.high_pages
        );
        values.extend(sysctl_value(h, "net.ipv4.tcp_mem"));
        values.push(HostValue {
            name: "sockstat TCP mem (pages)".into(),
            value: u.to_string(),
            source: "sockstat.txt",
        });
    }
    if let (Some(inuse), Some(alloc)) = (st.inuse, st.alloc) {
        why += &format!(
            " Sockets: {inuse} in use, {alloc} allocated, {} orphaned, {} in TIME-WAIT.",
            st.orphan.unwrap_or(0),
            st.tw.unwrap_or(0)
        );
    }
    if let Some(p) = pressures {
        why += &format!(" TCPMemoryPressures: {}.", count_text(h, p));
        values.extend(counter_value(h, "TcpExtTCPMemoryPressures"));
    }
    if let Some(a) = aborts.filter(|a| a.n() > 0) {
        why += &format!(" TCPAbortOnMemory: {}.", count_text(h, a));
        values.extend(counter_value(h, "TcpExtTCPAbortOnMemory"));
    }
    why += " Above the pressure threshold every connection's receive window stops growing \
            (tcp_grow_window); above high, allocations fail.";
    if since_boot && over.is_none() && !rising {
        why += " The counter is a total since boot: run with --interval to see whether it is rising now.";
    }
    let fix = match mem {
        Some(m) => vec![
            format!(
                "sysctl -w net.ipv4.tcp_mem=\"{} {} {}\"   (double it, if the host has the memory free)",
                m.low_pages.saturating_mul(2),
                m.pressure_pages.saturating_mul(2),
                m.high_pages.saturating_mul(2)
            ),
            "look for socket leaks: many allocated or orphaned sockets (ss -tan state close-wait; lsof -p PID | grep -c TCP)".into(),
        ],
        None => vec!["raise net.ipv4.tcp_mem; look for socket leaks (orphans, close-wait)".into()],
    };
    Some(HostFinding {
        id: HostFindingId::TcpMemPressure,
        explanation: why.trim().to_string(),
        fix,
        confidence,
        values,
    })
}
