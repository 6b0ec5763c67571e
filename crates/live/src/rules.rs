//! The per-socket rules of `tcpwhy watch`: two samples of one socket's `tcp_info`, the
//! time between them and the host's memory state in, findings from the catalogue out,
//! each priced as the share of the interval it cost. No I/O, no clock.
//!
//! Every rule reads counters the kernel keeps for exactly that mechanism, so a finding
//! is the kernel's own account, not an inference from thresholds:
//!
//! | id | reads | kernel |
//! |---|---|---|
//! | `rwnd.limited` | Δ`tcpi_rwnd_limited` | `TCP_CHRONO_RWND_LIMITED`, started by `tcp_write_xmit` when `tcp_snd_wnd_test` fails (net/ipv4/tcp_output.c); reported by `tcp_get_info_chrono_stats` (net/ipv4/tcp.c) |
//! | `sndbuf.limited` | Δ`tcpi_sndbuf_limited` | `TCP_CHRONO_SNDBUF_LIMITED`, started by `tcp_cwnd_validate` when the write queue is empty and the socket is `SOCK_NOSPACE` (tcp_output.c) |
//! | `loss.rto` / `loss.fast_retransmit` | Δ`tcpi_total_retrans` − Δ`tcpi_dsack_dups`; kind from `tcpi_ca_state` and `tcpi_backoff` | `__tcp_retransmit_skb` counts `tp->total_retrans`; `tcp_enter_loss` (RTO, `TCP_CA_Loss`, backoff) vs `tcp_enter_recovery` (`TCP_CA_Recovery`) in tcp_input.c / tcp_timer.c |
//! | `retransmit.spurious` | Δ`tcpi_dsack_dups` | `tcp_dsack_seen` counts D-SACKs (RFC 2883) into `tp->dsack_dups` (tcp_input.c) |
//! | `reordering` | Δ`tcpi_reord_seen`, `tcpi_reordering` | `tcp_check_sack_reordering` / RACK count `tp->reord_seen` (tcp_input.c, tcp_recovery.c) |
//! | `slow_start.restart_after_idle` | `tcpi_last_data_sent` ≥ `tcpi_rto` with nothing in flight, then data sent and `tcpi_snd_cwnd` lower without a retransmission | `tcp_cwnd_restart` (tcp_output.c) via `tcp_slow_start_after_idle_check` (include/net/tcp.h), sysctl `tcp_slow_start_after_idle` |
//! | `rwnd.not_growing` | `tcpi_rcv_ssthresh` ≤ 4 × `tcpi_advmss` while data arrives, with sockstat mem > `tcp_mem[1]` or a fall from above | `tcp_adjust_rcv_ssthresh` under `tcp_under_memory_pressure` (tcp_input.c, `__tcp_select_window` in tcp_output.c); `tcp_grow_window` skipped |
//! | `app.limited` | `tcpi_delivery_rate_app_limited`, Δ`tcpi_busy_time` < interval while data was acknowledged | `tcp_rate_check_app_limited` (net/ipv4/tcp_rate.c); busy = all chrono states |
//!
//! The cost model per rule is in each rule's comment and in docs/watch.md.

use crate::sample::{HostMemory, TcpSample, CA_LOSS, INFINITE_SSTHRESH};
use tcpwhy_detect::FindingId;

/// `TCP_INIT_CWND` (include/net/tcp.h): the initial window a restart returns to, in
/// packets, unless the route sets `initcwnd`.
pub const INIT_CWND: u32 = 10;
/// `tcp_adjust_rcv_ssthresh` clamps `rcv_ssthresh` to this many `advmss` under memory
/// pressure (mechanisms.md, rwnd.not_growing).
pub const PRESSURE_CLAMP_MSS: u32 = 4;

/// One finding on one socket over one interval.
#[derive(Debug, Clone, PartialEq)]
pub struct Finding {
    pub id: FindingId,
    /// Time the mechanism cost in the interval, µs (at most the interval).
    pub cost_us: u64,
    /// `cost_us` over the interval: the share of the socket's time it cost.
    pub share: f64,
    /// The kernel function and `tcp_info` field the rule read.
    pub kernel: &'static str,
    /// The numbers the rule used, by name (deltas are over the interval).
    pub evidence: Vec<(&'static str, u64)>,
    /// One line saying what happened, with the numbers.
    pub note: String,
}

/// Two samples of one socket and what surrounds them.
#[derive(Debug, Clone, Copy)]
pub struct Interval<'a> {
    pub prev: &'a TcpSample,
    pub cur: &'a TcpSample,
    /// Time between the two samples, µs (the caller's clock).
    pub elapsed_us: u64,
    pub host: &'a HostMemory,
    /// The congestion control module (`INET_DIAG_CONG`), when known.
    pub congestion: Option<&'a str>,
}

impl Interval<'_> {
    fn finding(
        &self,
        id: FindingId,
        cost_us: u64,
        kernel: &'static str,
        evidence: Vec<(&'static str, u64)>,
        note: String,
    ) -> Finding {
        let cost_us = cost_us.min(self.elapsed_us);
        let share = if self.elapsed_us == 0 {
            0.0
        } else {
            cost_us as f64 / self.elapsed_us as f64
        };
        Finding {
            id,
            cost_us,
            share,
            kernel,
            evidence,
            note,
        }
    }
}

/// Every rule on one interval, costliest first. A counter that went backwards means the
/// samples are not of one connection; nothing is said then.
pub fn evaluate(iv: &Interval) -> Vec<Finding> {
    let (p, c) = (iv.prev, iv.cur);
    if c.busy_us < p.busy_us
        || c.total_retrans < p.total_retrans
        || c.bytes_sent < p.bytes_sent
        || c.bytes_received < p.bytes_received
    {
        return Vec::new();
    }
    let mut out = Vec::new();
    rwnd_limited(iv, &mut out);
    sndbuf_limited(iv, &mut out);
    retransmissions(iv, &mut out);
    reordering(iv, &mut out);
    restart_after_idle(iv, &mut out);
    rcv_window_clamped(iv, &mut out);
    app_limited(iv, &mut out);
    out.sort_by(|a, b| b.cost_us.cmp(&a.cost_us).then(a.id.cmp(&b.id)));
    out
}

fn ms(us: u64) -> String {
    format!("{:.1} ms", us as f64 / 1000.0)
}

/// rwnd.limited: the time the kernel's chrono says the sender could not send because the
/// peer's window was full. Cost = that time.
fn rwnd_limited(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let d = c.rwnd_limited_us.saturating_sub(p.rwnd_limited_us);
    if d == 0 {
        return;
    }
    let unacked_bytes = u64::from(c.unacked) * u64::from(c.snd_mss);
    let note = format!(
        "waited on the peer's receive window for {} of {}; peer window now {} B, {} B unacknowledged{}",
        ms(d.min(iv.elapsed_us)),
        ms(iv.elapsed_us),
        c.snd_wnd,
        unacked_bytes,
        if c.snd_wnd == 0 { " (zero window)" } else { "" }
    );
    out.push(iv.finding(
        FindingId::RwndLimited,
        d,
        "tcp_get_info_chrono_stats: tcpi_rwnd_limited (TCP_CHRONO_RWND_LIMITED, tcp_write_xmit when tcp_snd_wnd_test fails)",
        vec![
            ("rwnd_limited_us_delta", d),
            ("rwnd_limited_us", c.rwnd_limited_us),
            ("busy_us_delta", c.busy_us.saturating_sub(p.busy_us)),
            ("snd_wnd", u64::from(c.snd_wnd)),
            ("unacked_bytes", unacked_bytes),
        ],
        note,
    ));
}

/// sndbuf.limited: the chrono's send-buffer-limited time. Cost = that time.
fn sndbuf_limited(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let d = c.sndbuf_limited_us.saturating_sub(p.sndbuf_limited_us);
    if d == 0 {
        return;
    }
    let note = format!(
        "everything written was sent and the writer waited on the send buffer for {} of {}",
        ms(d.min(iv.elapsed_us)),
        ms(iv.elapsed_us)
    );
    out.push(iv.finding(
        FindingId::SndbufLimited,
        d,
        "tcp_get_info_chrono_stats: tcpi_sndbuf_limited (TCP_CHRONO_SNDBUF_LIMITED, tcp_cwnd_validate with SOCK_NOSPACE)",
        vec![
            ("sndbuf_limited_us_delta", d),
            ("sndbuf_limited_us", c.sndbuf_limited_us),
            ("busy_us_delta", c.busy_us.saturating_sub(p.busy_us)),
        ],
        note,
    ));
}

/// Retransmissions by kind. D-SACKed ones are retransmit.spurious; the rest are losses,
/// loss.rto when the socket was in RTO recovery (`TCP_CA_Loss`) or backing off at either
/// sample, loss.fast_retransmit otherwise. Cost: an RTO costs at least the timer
/// (`tcpi_rto`) the sender waited before retransmitting; a fast recovery or a spurious
/// retransmission about one smoothed RTT (the recovery round, mechanisms.md) — lower
/// bounds, as the counters do not say how many recovery episodes there were.
fn retransmissions(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let retrans = c.total_retrans - p.total_retrans;
    let dsack = c.dsack_dups.saturating_sub(p.dsack_dups);
    let srtt = u64::from(c.rtt_us);
    if dsack > 0 {
        let note = format!(
            "{dsack} retransmission(s) reported by the peer as duplicates (D-SACK): the originals had arrived"
        );
        out.push(iv.finding(
            FindingId::RetransmitSpurious,
            srtt,
            "tcp_get_info: tcpi_dsack_dups (tcp_dsack_seen, net/ipv4/tcp_input.c)",
            vec![
                ("dsack_dups_delta", u64::from(dsack)),
                ("dsack_dups", u64::from(c.dsack_dups)),
                ("total_retrans_delta", u64::from(retrans)),
                ("total_retrans", u64::from(c.total_retrans)),
            ],
            note,
        ));
    }
    let lost = retrans.saturating_sub(dsack);
    if lost == 0 {
        return;
    }
    let timeout = c.ca_state == CA_LOSS || p.ca_state == CA_LOSS || c.backoff > 0;
    let (id, cost, kernel, how) = if timeout {
        (
            FindingId::LossRto,
            u64::from(c.rto_us.max(p.rto_us)),
            "tcp_get_info: tcpi_total_retrans with tcpi_ca_state = TCP_CA_Loss or tcpi_backoff > 0 (tcp_retransmit_timer → tcp_enter_loss)",
            "after the retransmission timer fired",
        )
    } else {
        (
            FindingId::LossFastRetransmit,
            srtt,
            "tcp_get_info: tcpi_total_retrans, socket not in TCP_CA_Loss (tcp_fastretrans_alert → tcp_enter_recovery, RACK)",
            "by fast recovery (duplicate ACKs / SACK)",
        )
    };
    let note = format!(
        "{lost} segment(s) retransmitted {how}; {} retransmitted over the connection, cwnd {} ssthresh {}",
        c.total_retrans,
        c.snd_cwnd,
        ssthresh_text(c.snd_ssthresh)
    );
    out.push(iv.finding(
        id,
        cost,
        kernel,
        vec![
            ("retrans_delta", u64::from(lost)),
            ("total_retrans", u64::from(c.total_retrans)),
            ("ca_state", u64::from(c.ca_state)),
            ("backoff", u64::from(c.backoff)),
            ("rto_us", u64::from(c.rto_us)),
            ("rtt_us", u64::from(c.rtt_us)),
            ("snd_cwnd", u64::from(c.snd_cwnd)),
            ("snd_ssthresh", u64::from(c.snd_ssthresh)),
        ],
        note,
    ));
}

fn ssthresh_text(s: u32) -> String {
    if s >= INFINITE_SSTHRESH {
        "none".into()
    } else {
        s.to_string()
    }
}

/// reordering: the kernel detected reordering in the interval. Cost 0 here: what it
/// costs is the spurious retransmissions and window reductions it causes, which their
/// own rules price.
fn reordering(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let d = c.reord_seen.saturating_sub(p.reord_seen);
    if d == 0 {
        return;
    }
    let note = format!(
        "{d} reordering event(s) seen; reordering degree now {} segments (tcp_reordering's starting value is 3)",
        c.reordering
    );
    out.push(iv.finding(
        FindingId::Reordering,
        0,
        "tcp_get_info: tcpi_reord_seen, tcpi_reordering (tcp_check_sack_reordering, RACK in tcp_recovery.c)",
        vec![
            ("reord_seen_delta", u64::from(d)),
            ("reordering", u64::from(c.reordering)),
        ],
        note,
    ));
}

/// slow_start.restart_after_idle: at the first sample the socket had nothing in flight
/// and had sent nothing for at least one RTO; by the second it had sent again and its
/// cwnd was lower, with no retransmission in between to explain a reduction — what
/// `tcp_cwnd_restart` does (cwnd halved per RTO idle, down to min(IW, cwnd)). Skipped
/// when the namespace has `tcp_slow_start_after_idle=0` or the module is BBR (its own
/// `cong_control`, no restart).
/// Cost: the extra round trips the data sent in the interval needed from the restarted
/// window (doubling per round) compared with the window before the idle, × smoothed RTT.
fn restart_after_idle(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    if iv.host.slow_start_after_idle == Some(false) || iv.congestion == Some("bbr") {
        return;
    }
    let idle_us = u64::from(p.last_data_sent_ms) * 1000;
    let sent = c.bytes_sent - p.bytes_sent;
    if p.unacked != 0
        || idle_us < u64::from(p.rto_us)
        || p.rto_us == 0
        || sent == 0
        || c.snd_cwnd >= p.snd_cwnd
        || c.total_retrans != p.total_retrans
    {
        return;
    }
    let mss = u64::from(c.snd_mss.max(1));
    let segments = sent.div_ceil(mss);
    // The window the restart left: tcp_cwnd_restart's halvings for the idle seen so far
    // (a lower bound on the idle, so an upper bound on the window), and never above the
    // cwnd now (which may have grown again since).
    let restarted = restart_cwnd(p.snd_cwnd, idle_us, u64::from(p.rto_us)).min(c.snd_cwnd);
    let extra = rounds(segments, restarted).saturating_sub(rounds(segments, p.snd_cwnd));
    let cost = extra * u64::from(c.rtt_us);
    let note = format!(
        "idle {} (RTO {}) then sent {} B: cwnd {} → restart window {}, now {} (ssthresh {}), {} extra round(s) of {}",
        ms(idle_us),
        ms(u64::from(p.rto_us)),
        sent,
        p.snd_cwnd,
        restarted,
        c.snd_cwnd,
        ssthresh_text(c.snd_ssthresh),
        extra,
        ms(u64::from(c.rtt_us))
    );
    out.push(iv.finding(
        FindingId::SlowStartRestartAfterIdle,
        cost,
        "tcp_cwnd_restart (tcp_output.c) via tcp_slow_start_after_idle_check: tcpi_last_data_sent ≥ tcpi_rto, tcpi_snd_cwnd fell",
        vec![
            ("idle_ms", u64::from(p.last_data_sent_ms)),
            ("rto_us", u64::from(p.rto_us)),
            ("cwnd_before", u64::from(p.snd_cwnd)),
            ("restart_cwnd", u64::from(restarted)),
            ("snd_cwnd", u64::from(c.snd_cwnd)),
            ("snd_ssthresh", u64::from(c.snd_ssthresh)),
            ("bytes_sent_delta", sent),
            ("extra_rounds", extra),
        ],
        note,
    ));
}

/// `tcp_cwnd_restart`: cwnd halved once per RTO of idle time, down to
/// min(`INIT_CWND`, cwnd).
fn restart_cwnd(cwnd: u32, idle_us: u64, rto_us: u64) -> u32 {
    let floor = INIT_CWND.min(cwnd);
    let mut w = cwnd;
    let mut left = idle_us;
    while rto_us > 0 && left > rto_us && w > floor {
        left -= rto_us;
        w >>= 1;
    }
    w.max(floor)
}

/// Round trips to send `segments` starting from `cwnd` and doubling each round (slow
/// start; an upper bound on growth, so the extra rounds are a lower bound).
fn rounds(segments: u64, cwnd: u32) -> u64 {
    let mut w = u64::from(cwnd.max(1));
    let (mut sent, mut n) = (0u64, 0u64);
    while sent < segments {
        sent += w;
        w = w.saturating_mul(2);
        n += 1;
    }
    n
}

/// rwnd.not_growing: data arrived while this socket's window ceiling (`rcv_ssthresh`)
/// sat at or below 4 × advmss, the clamp `tcp_adjust_rcv_ssthresh` applies under memory
/// pressure, and either the host's TCP memory is above `tcp_mem[1]` or the ceiling fell
/// from above the clamp since the last sample. (A small fixed SO_RCVBUF alone keeps the
/// window small without pressure and without a fall: the sender's rwnd.limited covers it.)
/// Cost: the part of the interval in which data was arriving (up to the last data
/// received): the time the clamped window governed, an upper bound of the time lost.
fn rcv_window_clamped(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let received = c.bytes_received - p.bytes_received;
    let clamp = u64::from(PRESSURE_CLAMP_MSS) * u64::from(c.advmss);
    if received == 0 || c.advmss == 0 || u64::from(c.rcv_ssthresh) > clamp {
        return;
    }
    let pressure = iv.host.under_pressure() == Some(true);
    let fell = u64::from(p.rcv_ssthresh) > clamp;
    if !pressure && !fell {
        return;
    }
    let since_last_recv = (u64::from(c.last_data_recv_ms) * 1000).min(iv.elapsed_us);
    let cost = iv.elapsed_us - since_last_recv;
    let mem = match (iv.host.mem_pages, iv.host.tcp_mem) {
        (Some(m), Some(t)) => format!(
            "TCP memory {m} pages, tcp_mem pressure {} pages",
            t.pressure_pages
        ),
        _ => "TCP memory not readable".into(),
    };
    let note = format!(
        "receive window ceiling {} B ≤ 4 × advmss {} B (was {} B) while {} B arrived; {}",
        c.rcv_ssthresh, c.advmss, p.rcv_ssthresh, received, mem
    );
    let mut evidence = vec![
        ("rcv_ssthresh", u64::from(c.rcv_ssthresh)),
        ("rcv_ssthresh_before", u64::from(p.rcv_ssthresh)),
        ("advmss", u64::from(c.advmss)),
        ("bytes_received_delta", received),
        ("under_pressure", u64::from(pressure)),
    ];
    if let Some(m) = iv.host.mem_pages {
        evidence.push(("tcp_mem_pages", m));
    }
    if let Some(t) = iv.host.tcp_mem {
        evidence.push(("tcp_mem_pressure_pages", t.pressure_pages));
    }
    out.push(iv.finding(
        FindingId::RwndNotGrowing,
        cost,
        "tcp_get_info: tcpi_rcv_ssthresh ≤ 4 × tcpi_advmss (tcp_adjust_rcv_ssthresh under tcp_under_memory_pressure; sockstat mem vs tcp_mem)",
        evidence,
        note,
    ));
}

/// app.limited: data was acknowledged in the interval, the latest delivery-rate sample
/// was taken while the application had nothing to send, and the socket was not busy for
/// the whole interval. Cost: the not-busy part of the interval (time TCP did not
/// spend, for the application's account, not TCP's).
fn app_limited(iv: &Interval, out: &mut Vec<Finding>) {
    let (p, c) = (iv.prev, iv.cur);
    let acked = c.bytes_acked.saturating_sub(p.bytes_acked);
    let busy = c.busy_us - p.busy_us;
    if acked == 0 || !c.delivery_rate_app_limited || busy >= iv.elapsed_us {
        return;
    }
    let idle = iv.elapsed_us - busy;
    let note = format!(
        "not TCP: the application left the socket with nothing to send for {} of {}; delivery rate {} B/s (app-limited sample), pacing rate {} B/s",
        ms(idle),
        ms(iv.elapsed_us),
        c.delivery_rate,
        c.pacing_rate
    );
    out.push(iv.finding(
        FindingId::AppLimited,
        idle,
        "tcp_get_info: tcpi_delivery_rate_app_limited (tcp_rate_check_app_limited), tcpi_busy_time",
        vec![
            ("busy_us_delta", busy),
            ("bytes_acked_delta", acked),
            ("delivery_rate", c.delivery_rate),
            ("pacing_rate", c.pacing_rate),
        ],
        note,
    ));
}

#[cfg(test)]
mod tests {
    use super::*;

    fn base() -> TcpSample {
        TcpSample {
            state: 1,
            rto_us: 204_000,
            rtt_us: 20_000,
            snd_mss: 1448,
            advmss: 1448,
            rcv_ssthresh: 64_000,
            snd_ssthresh: INFINITE_SSTHRESH,
            snd_cwnd: 10,
            reordering: 3,
            snd_wnd: 65_535,
            ..TcpSample::default()
        }
    }

    fn run(prev: &TcpSample, cur: &TcpSample, host: &HostMemory) -> Vec<Finding> {
        evaluate(&Interval {
            prev,
            cur,
            elapsed_us: 1_000_000,
            host,
            congestion: Some("cubic"),
        })
    }

    fn ids(f: &[Finding]) -> Vec<&'static str> {
        f.iter().map(|f| f.id.as_str()).collect()
    }

    #[test]
    fn receive_window_chrono_prices_rwnd_limited_as_its_share_of_the_interval() {
        let prev = TcpSample {
            busy_us: 1_000_000,
            rwnd_limited_us: 200_000,
            bytes_sent: 1_000_000,
            ..base()
        };
        let cur = TcpSample {
            busy_us: 2_000_000,
            rwnd_limited_us: 950_000,
            bytes_sent: 1_300_000,
            unacked: 3,
            snd_wnd: 4344,
            ..prev.clone()
        };
        let f = run(&prev, &cur, &HostMemory::default());
        assert_eq!(ids(&f), ["rwnd.limited"]);
        assert_eq!(f[0].cost_us, 750_000);
        assert!((f[0].share - 0.75).abs() < 1e-9);
        assert!(f[0].evidence.contains(&("snd_wnd", 4344)));
        assert!(f[0].evidence.contains(&("unacked_bytes", 3 * 1448)));
    }

    #[test]
    fn chrono_time_beyond_the_interval_is_capped_at_the_whole_interval() {
        let prev = base();
        let cur = TcpSample {
            busy_us: 3_000_000,
            sndbuf_limited_us: 3_000_000,
            ..base()
        };
        let f = run(&prev, &cur, &HostMemory::default());
        assert_eq!(ids(&f), ["sndbuf.limited"]);
        assert_eq!(f[0].cost_us, 1_000_000);
        assert_eq!(f[0].share, 1.0);
    }

    #[test]
    fn retransmissions_split_into_spurious_and_lost_and_rto_by_ca_state() {
        let prev = base();
        let fast = TcpSample {
            total_retrans: 5,
            dsack_dups: 2,
            ca_state: 3,
            ..base()
        };
        let f = run(&prev, &fast, &HostMemory::default());
        // Equal costs: catalogue order.
        assert_eq!(ids(&f), ["loss.fast_retransmit", "retransmit.spurious"]);
        assert!(f[0].evidence.contains(&("retrans_delta", 3)));
        assert_eq!(f[0].cost_us, 20_000);

        let rto = TcpSample {
            total_retrans: 1,
            ca_state: CA_LOSS,
            backoff: 1,
            rto_us: 408_000,
            snd_cwnd: 1,
            ..base()
        };
        let f = run(&prev, &rto, &HostMemory::default());
        assert_eq!(ids(&f), ["loss.rto"]);
        assert_eq!(f[0].cost_us, 408_000);
    }

    #[test]
    fn reordering_is_named_without_a_cost_of_its_own() {
        let cur = TcpSample {
            reord_seen: 4,
            reordering: 9,
            ..base()
        };
        let f = run(&base(), &cur, &HostMemory::default());
        assert_eq!(ids(&f), ["reordering"]);
        assert_eq!(f[0].cost_us, 0);
    }

    fn idle_then_send() -> (TcpSample, TcpSample) {
        let prev = TcpSample {
            snd_cwnd: 80,
            last_data_sent_ms: 1500,
            bytes_sent: 5_000_000,
            ..base()
        };
        // 100 segments after the idle: from cwnd 10 that is 10+20+40+80 = 4 rounds,
        // from 80 it is 2: two extra rounds of 20 ms.
        let cur = TcpSample {
            snd_cwnd: 10,
            last_data_sent_ms: 100,
            bytes_sent: 5_000_000 + 100 * 1448,
            ..base()
        };
        (prev, cur)
    }

    #[test]
    fn cwnd_back_to_the_initial_window_after_an_rto_of_idle_is_a_restart() {
        let (prev, cur) = idle_then_send();
        let f = run(&prev, &cur, &HostMemory::default());
        assert_eq!(ids(&f), ["slow_start.restart_after_idle"]);
        assert_eq!(f[0].cost_us, 40_000);
        assert!(f[0].evidence.contains(&("cwnd_before", 80)));
        assert!(f[0].evidence.contains(&("restart_cwnd", 10)));
        // Seen after the window grew again (20 by now): the restart window is still the
        // one tcp_cwnd_restart left, 80 halved three times for 1.5 s at a 204 ms RTO.
        let regrown = TcpSample {
            snd_cwnd: 20,
            ..cur.clone()
        };
        let f = run(&prev, &regrown, &HostMemory::default());
        assert!(f[0].evidence.contains(&("restart_cwnd", 10)));
        assert_eq!(f[0].cost_us, 40_000);
        assert_eq!(restart_cwnd(80, 300_000, 204_000), 40);
        assert_eq!(restart_cwnd(8, 5_000_000, 204_000), 8);
    }

    #[test]
    fn no_restart_when_the_sysctl_is_off_bbr_runs_or_a_loss_explains_the_cwnd() {
        let (prev, cur) = idle_then_send();
        let off = HostMemory {
            slow_start_after_idle: Some(false),
            ..HostMemory::default()
        };
        assert!(run(&prev, &cur, &off).is_empty());
        let bbr = evaluate(&Interval {
            prev: &prev,
            cur: &cur,
            elapsed_us: 1_000_000,
            host: &HostMemory::default(),
            congestion: Some("bbr"),
        });
        assert!(bbr.is_empty());
        let lossy = TcpSample {
            total_retrans: 1,
            ..cur.clone()
        };
        assert!(!ids(&run(&prev, &lossy, &HostMemory::default()))
            .contains(&"slow_start.restart_after_idle"));
        // Idle shorter than the RTO: no restart.
        let short = TcpSample {
            last_data_sent_ms: 100,
            ..prev.clone()
        };
        assert!(run(&short, &cur, &HostMemory::default()).is_empty());
    }

    #[test]
    fn a_window_clamped_to_four_mss_under_pressure_is_not_growing_and_a_small_buffer_is_not() {
        let prev = TcpSample {
            rcv_ssthresh: 5792,
            bytes_received: 1_000_000,
            ..base()
        };
        let cur = TcpSample {
            bytes_received: 1_500_000,
            last_data_recv_ms: 250,
            ..prev.clone()
        };
        let pressure = HostMemory {
            tcp_mem: Some(tcpwhy_hoststate::TcpMem {
                low_pages: 10,
                pressure_pages: 20,
                high_pages: 30,
            }),
            mem_pages: Some(25),
            slow_start_after_idle: None,
        };
        let f = run(&prev, &cur, &pressure);
        assert_eq!(ids(&f), ["rwnd.not_growing"]);
        assert_eq!(f[0].cost_us, 750_000);
        // The same small window without pressure and without a fall: a fixed buffer.
        let calm = HostMemory {
            mem_pages: Some(5),
            ..pressure.clone()
        };
        assert!(run(&prev, &cur, &calm).is_empty());
        // A fall from a large window is named even when sockstat cannot be read.
        let was_large = TcpSample {
            rcv_ssthresh: 400_000,
            ..prev.clone()
        };
        assert_eq!(
            ids(&run(&was_large, &cur, &HostMemory::default())),
            ["rwnd.not_growing"]
        );
    }

    #[test]
    fn app_limited_is_the_idle_part_of_an_interval_that_delivered_data() {
        let prev = base();
        let cur = TcpSample {
            bytes_acked: 10_000,
            busy_us: 100_000,
            delivery_rate_app_limited: true,
            delivery_rate: 1_000_000,
            pacing_rate: 50_000_000,
            ..base()
        };
        let f = run(&prev, &cur, &HostMemory::default());
        assert_eq!(ids(&f), ["app.limited"]);
        assert_eq!(f[0].cost_us, 900_000);
    }

    #[test]
    fn counters_going_backwards_mean_another_connection_and_say_nothing() {
        let prev = TcpSample {
            total_retrans: 9,
            ..base()
        };
        assert!(run(&prev, &base(), &HostMemory::default()).is_empty());
    }
}
