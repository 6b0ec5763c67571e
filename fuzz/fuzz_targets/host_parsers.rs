//! Every host-state parser on arbitrary text, with the invariants they promise: no
//! panic, diagnostics capped, results bounded by the input. Shared by the `host_*` fuzz
//! targets and the hoststate crate's fixed-seed test (crates/hoststate/tests), so both
//! explore the same checks.

#![allow(dead_code)] // each fuzz target calls one of these; the crate test calls all

use tcpwhy_hoststate::counters::MAX_COUNTERS;
use tcpwhy_hoststate::{Diagnostic, Parsed, MAX_DIAGNOSTICS, MAX_DIAG_TEXT};

/// Diagnostics are capped (plus one summary) and each keeps a short excerpt; formatting
/// them must not panic either.
fn check_diags<T>(p: &Parsed<T>) {
    assert!(p.diagnostics.len() <= MAX_DIAGNOSTICS + 1);
    for d in &p.diagnostics {
        check_diag(d);
    }
}

fn check_diag(d: &Diagnostic) {
    // The excerpt may end with "…" (3 bytes) after MAX_DIAG_TEXT bytes.
    assert!(d.text.len() <= MAX_DIAG_TEXT + 3);
    let _ = d.to_string();
}

fn lines(text: &str) -> usize {
    text.lines().count()
}

pub fn sysctl(text: &str) {
    let p = tcpwhy_hoststate::parse_sysctl_a(text, "sysctl");
    check_diags(&p);
    assert!(p.value.values.len() <= lines(text));
    let s = &p.value;
    let _ = (
        s.tcp_rmem(),
        s.tcp_wmem(),
        s.tcp_mem(),
        s.tcp_slow_start_after_idle(),
    );
    let _ = (s.tcp_available_congestion_control(), s.tcp_adv_win_scale());
    // The same text as one /proc/sys file per line.
    let pairs: Vec<(&str, &str)> = text.lines().filter_map(|l| l.split_once('=')).collect();
    let p = tcpwhy_hoststate::parse_proc_sys(pairs.iter().copied(), "proc-sys");
    check_diags(&p);
    assert!(p.value.values.len() <= pairs.len());
}

pub fn sockstat(text: &str) {
    let p = tcpwhy_hoststate::parse_sockstat(text, "sockstat");
    check_diags(&p);
    assert!(p.value.protocols.len() <= lines(text));
    let _ = (p.value.tcp(), p.value.sockets_used(), p.value.tcp6_inuse());
}

pub fn counters(text: &str) {
    let a = tcpwhy_hoststate::parse_nstat(text, "nstat");
    check_diags(&a);
    assert!(a.value.values.len() <= lines(text).min(MAX_COUNTERS));
    let b = tcpwhy_hoststate::parse_proc_net(text, "netstat");
    check_diags(&b);
    assert!(b.value.values.len() <= MAX_COUNTERS);
    let c = tcpwhy_hoststate::parse_nstat_json(text, "nstat.json");
    check_diags(&c);
    let d = tcpwhy_hoststate::CounterDeltas::between(&a.value, &b.value, Some(1000));
    for k in d.deltas.keys() {
        let _ = d.per_second(k);
    }
    let _ = d.changed();
}

pub fn ss(text: &str) {
    let p = tcpwhy_hoststate::parse_ss(text, "ss");
    check_diags(&p);
    let n = p.value.sockets().count();
    assert!(n <= lines(text).min(tcpwhy_hoststate::ss::MAX_SS_SOCKETS));
    for s in p.value.sockets() {
        assert!(s.unknown.len() <= tcpwhy_hoststate::ss::MAX_SS_UNKNOWN);
        let _ = (s.local_port(), s.peer_port());
    }
}

pub fn tcp_metrics(text: &str) {
    let p = tcpwhy_hoststate::parse_tcp_metrics(text, "tcp_metrics");
    check_diags(&p);
    assert!(p.value.entries.len() <= lines(text));
    let j = tcpwhy_hoststate::parse_tcp_metrics_json(text, "tcp_metrics.json");
    check_diags(&j);
}

pub fn link(text: &str) {
    let p = tcpwhy_hoststate::parse_ip_link(text, "ip-link");
    check_diags(&p);
    assert!(p.value.links.len() <= lines(text));
    let j = tcpwhy_hoststate::parse_ip_link_json(text, "ip-link.json");
    check_diags(&j);
    let r = tcpwhy_hoststate::parse_rps_cpus(text, "rps");
    check_diags(&r);
    if let Some(m) = &r.value {
        assert!(m.words.len() <= tcpwhy_hoststate::link::MAX_RPS_MASK_WORDS);
        assert_eq!(m.cpus().len() as u32, m.count());
    }
}

pub fn manifest(text: &str) {
    let p = tcpwhy_hoststate::bundle::parse_manifest(text, "manifest.json");
    check_diags(&p);
    let _ = p.value.interval_ms();
}

/// Every parser.
pub fn all(text: &str) {
    sysctl(text);
    sockstat(text);
    counters(text);
    ss(text);
    tcp_metrics(text);
    link(text);
    manifest(text);
}
