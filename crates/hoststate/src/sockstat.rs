//! /proc/net/sockstat and /proc/net/sockstat6: socket counts and TCP memory in pages.
//! `TCP: inuse 5 orphan 0 tw 2 alloc 7 mem 1` — `mem` is compared with net.ipv4.tcp_mem
//! (pages) for memory pressure (seed 04).

use std::collections::BTreeMap;

use crate::diag::{Diags, Parsed};
use crate::sysctl::TcpMem;

/// Most protocol lines kept (sockstat has 6, sockstat6 5; a future kernel may add a few).
pub const MAX_SOCKSTAT_PROTOCOLS: usize = 64;

/// Most `key value` pairs kept per protocol line (TCP has 5).
pub const MAX_SOCKSTAT_FIELDS: usize = 32;

/// The TCP line of /proc/net/sockstat.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
pub struct TcpSockstat {
    /// TCP sockets in use (not TIME-WAIT), IPv4 and IPv6 together.
    pub inuse: Option<u64>,
    /// Orphaned sockets (closed by the application, still holding data or in FIN states).
    pub orphan: Option<u64>,
    /// TIME-WAIT sockets.
    pub tw: Option<u64>,
    /// Allocated TCP sockets (all states, both families).
    pub alloc: Option<u64>,
    /// Memory of all TCP sockets, in pages (compare with net.ipv4.tcp_mem).
    pub mem_pages: Option<u64>,
}

/// Where TCP's memory use stands against net.ipv4.tcp_mem (tcp_under_memory_pressure(),
/// __sk_mem_raise_allocated(); seed 04).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
pub enum TcpMemLevel {
    /// At or below `low`: no regulation.
    Normal,
    /// Between `low` and `pressure`: still no regulation (the kernel leaves pressure only
    /// when usage falls below `low`, so this is "recovering" if it was above).
    AboveLow,
    /// Above `pressure`: receive windows stop growing, buffers are trimmed
    /// (TCPMemoryPressures counts entries into this state).
    Pressure,
    /// Above `high`: allocations fail, packets are dropped, sockets can be aborted
    /// (TCPAbortOnMemory).
    High,
}

impl TcpSockstat {
    /// The TCP line's fields, typed (`fields` as [`Sockstat::protocols`] holds them).
    pub fn from_fields(fields: &BTreeMap<String, u64>) -> TcpSockstat {
        let get = |k: &str| fields.get(k).copied();
        TcpSockstat {
            inuse: get("inuse"),
            orphan: get("orphan"),
            tw: get("tw"),
            alloc: get("alloc"),
            mem_pages: get("mem"),
        }
    }

    /// `mem` against the three tcp_mem thresholds (all in pages).
    pub fn mem_level(&self, limits: &TcpMem) -> Option<TcpMemLevel> {
        let m = self.mem_pages?;
        Some(if m > limits.high_pages {
            TcpMemLevel::High
        } else if m > limits.pressure_pages {
            TcpMemLevel::Pressure
        } else if m > limits.low_pages {
            TcpMemLevel::AboveLow
        } else {
            TcpMemLevel::Normal
        })
    }
}

/// One sockstat or sockstat6 file: protocol (`TCP`, `TCP6`, `UDP`, `sockets`, …) →
/// field → value.
#[derive(Clone, Debug, Default, PartialEq, Eq)]
pub struct Sockstat {
    pub protocols: BTreeMap<String, BTreeMap<String, u64>>,
}

impl Sockstat {
    /// One field of one protocol line (`get("TCP", "mem")`).
    pub fn get(&self, protocol: &str, field: &str) -> Option<u64> {
        self.protocols.get(protocol)?.get(field).copied()
    }

    /// The TCP line (sockstat), typed.
    pub fn tcp(&self) -> Option<TcpSockstat> {
        self.protocols.get("TCP").map(TcpSockstat::from_fields)
    }

    /// `sockets: used N` (all socket types).
    pub fn sockets_used(&self) -> Option<u64> {
        self.get("sockets", "used")
    }

    /// TCP6 inuse (sockstat6).
    pub fn tcp6_inuse(&self) -> Option<u64> {
        self.get("TCP6", "inuse")
    }
}

/// Reads sockstat or sockstat6 text. Each line is `PROTO: key value key value …`;
/// a pair whose value is not a number is skipped with a diagnostic, the rest of the line
/// is kept.
pub fn parse_sockstat(text: &str, source: &str) -> Parsed<Sockstat> {
    let mut diags = Diags::new(source);
    let mut out = Sockstat::default();
    for (i, raw) in text.lines().enumerate() {
        let line = raw.trim_end_matches('\r');
        if line.trim().is_empty() || line.starts_with('#') {
            continue;
        }
        let Some((proto, rest)) = line.split_once(':') else {
            diags.line(i + 1, line, "no `PROTO:` prefix");
            continue;
        };
        let proto = proto.trim();
        if proto.is_empty() || proto.contains(char::is_whitespace) {
            diags.line(i + 1, line, "no `PROTO:` prefix");
            continue;
        }
        if out.protocols.len() >= MAX_SOCKSTAT_PROTOCOLS && !out.protocols.contains_key(proto) {
            diags.line(
                i + 1,
                line,
                "more than MAX_SOCKSTAT_PROTOCOLS lines, skipped",
            );
            continue;
        }
        let fields = out.protocols.entry(proto.to_string()).or_default();
        let mut words = rest.split_whitespace();
        while let Some(key) = words.next() {
            let Some(value) = words.next() else {
                diags.line(i + 1, line, format!("field {key:?} has no value"));
                break;
            };
            match value.parse::<u64>() {
                Ok(v) if fields.len() < MAX_SOCKSTAT_FIELDS || fields.contains_key(key) => {
                    fields.insert(key.to_string(), v);
                }
                Ok(_) => diags.line(i + 1, line, "more than MAX_SOCKSTAT_FIELDS fields"),
                Err(_) => diags.line(
                    i + 1,
                    line,
                    format!("field {key:?}: {value:?} is not a count"),
                ),
            }
        }
    }
    diags.wrap(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tcp_line_from_its_fields() {
        let s = parse_sockstat("TCP: inuse 7 orphan 0 tw 1 alloc 8 mem 59932\n", "t").value;
        let t = TcpSockstat::from_fields(&s.protocols["TCP"]);
        assert_eq!(s.tcp(), Some(t));
        assert_eq!(
            (t.inuse, t.tw, t.mem_pages),
            (Some(7), Some(1), Some(59932))
        );
        // Seed 04: 59932 pages against tcp_mem 42492 56658 84984.
        let limits = TcpMem {
            low_pages: 42492,
            pressure_pages: 56658,
            high_pages: 84984,
        };
        assert_eq!(t.mem_level(&limits), Some(TcpMemLevel::Pressure));
        let missing = TcpSockstat::from_fields(&BTreeMap::new());
        assert_eq!(missing, TcpSockstat::default());
    }
}
