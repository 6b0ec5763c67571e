//! Host state as typed facts: the text of `sysctl -a`, /proc/net/sockstat, `nstat -az`,
//! /proc/net/netstat and snmp, `ss -tinmO`, `ip tcp_metrics show`, `ip -d link show` and
//! rps_cpus masks, parsed into the settings and counters that confirm or refute a
//! capture's diagnosis (mechanisms.md "Host state that confirms or refutes a capture
//! diagnosis"). No command runs here: the binary (`tcpwhy collect`) gathers the text into
//! a bundle directory, this crate reads it.
//!
//! Every parser takes text and a source name and returns [`Parsed`]: the facts it read
//! plus a [`Diagnostic`] (source, line number, line text) for each line it did not
//! understand. Unknown fields are kept, new fields never fail a line, and every
//! collection has a named cap, so no input panics or allocates without bound.
//!
//! # Host bundle layout
//!
//! A bundle is a directory (docs/host-bundle.md has the details):
//!
//! | file | content |
//! |---|---|
//! | [`MANIFEST`] `manifest.json` | `bundle_version`, `time`, `time_unix`, `hostname`, `kernel`, `root`, `inputs` (per file: `source`, `status` ok/missing, `bytes`, `reason`, `note`), `after` (`time`, `time_unix`, `inputs`) |
//! | [`SYSCTL`] `sysctl.txt` | `sysctl -a` |
//! | [`PROC_SYS_NET`] `proc-sys-net/…` | copy of /proc/sys/net (`proc-sys-net/ipv4/tcp_mem`), when sysctl is missing |
//! | [`SOCKSTAT`] `sockstat.txt`, [`SOCKSTAT6`] `sockstat6.txt` | /proc/net/sockstat, sockstat6 |
//! | [`NETSTAT`] `netstat.txt`, [`SNMP`] `snmp.txt` | /proc/net/netstat, /proc/net/snmp |
//! | [`NSTAT`] `nstat.txt` | `nstat -asz` (optional) |
//! | [`SS`] `ss.txt` | `ss -tinmO` |
//! | [`TCP_METRICS`] `tcp_metrics.txt` | `ip tcp_metrics show` |
//! | [`IP_LINK`] `ip-link.txt` | `ip -d link show` |
//! | [`RPS_DIR`] `rps/IFACE/rx-N` | /sys/class/net/IFACE/queues/rx-N/rps_cpus |
//! | [`AFTER_DIR`] `after/…` | second snapshot (`--interval`): [`AFTER_FILES`] under the same names |

pub mod bundle;
pub mod counters;
pub mod diag;
pub mod link;
pub mod sockstat;
pub mod ss;
pub mod sysctl;
pub mod tcp_metrics;

pub use bundle::{
    parse_manifest, HostState, Manifest, ManifestInput, Snapshot, AFTER_DIR, AFTER_FILES,
    BUNDLE_VERSION, IP_LINK, MANIFEST, MAX_BUNDLE_FILE_BYTES, NETSTAT, NSTAT, PROC_SYS_NET,
    RPS_DIR, SNMP, SOCKSTAT, SOCKSTAT6, SS, SYSCTL, TCP_METRICS,
};
pub use counters::{parse_nstat, parse_nstat_json, parse_proc_net, CounterDeltas, Counters};
pub use diag::{Diagnostic, Parsed, MAX_DIAGNOSTICS, MAX_DIAG_TEXT};
pub use link::{parse_ip_link, parse_ip_link_json, parse_rps_cpus, CpuMask, Link, Links, RpsQueue};
pub use sockstat::{parse_sockstat, Sockstat, TcpMemLevel, TcpSockstat};
pub use ss::{parse_ss, Skmem, SsOutput, SsSnapshot, SsSocket, TcpInfo};
pub use sysctl::{parse_proc_sys, parse_sysctl_a, BufferTriple, Sysctl, TcpMem};
pub use tcp_metrics::{parse_tcp_metrics, parse_tcp_metrics_json, TcpMetric, TcpMetrics};
