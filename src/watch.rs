//! `tcpwhy watch`: samples every TCP socket's tcp_info through sock_diag (crates/live)
//! at an interval and shows which mechanism cost each socket time in each interval — a
//! live top-like view on a terminal (ratatui), plain lines or JSON lines otherwise — and
//! a summary per finding id when it ends (Ctrl-C, `q`, or `--count`).

use crate::filter::Filter;
use clap::Args;
use serde_json::{json, Map, Value};
use std::io::{IsTerminal, Write};
use std::process::ExitCode;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::{Duration, Instant};
use tcpwhy_detect::FindingId;
use tcpwhy_live::hostmem::HostMemReader;
use tcpwhy_live::sample::{Snapshot, SocketKey, INFINITE_SSTHRESH};
use tcpwhy_live::sockdiag::SockDiag;
use tcpwhy_live::watch::{Step, Summary, Watcher};
use tcpwhy_track::Endpoint;

/// The JSON lines' `schema_version` (docs/watch.md).
pub const SCHEMA_VERSION: u32 = 1;
/// The shortest interval accepted: tcp_info's chrono times tick in jiffies (1–10 ms), so
/// shorter intervals only measure the tick.
const MIN_INTERVAL: Duration = Duration::from_millis(50);

pub const HELP: &str = "How to read it: each line is one socket and one mechanism in one \
interval, with the share of that interval it cost. The numbers are the kernel's own: \
rwnd.limited and sndbuf.limited are the time tcp_info's chrono counters \
(tcpi_rwnd_limited, tcpi_sndbuf_limited) grew; loss.* and retransmit.spurious are the \
growth of tcpi_total_retrans and tcpi_dsack_dups; slow_start.restart_after_idle is a \
congestion window that fell after the socket sent nothing for an RTO; rwnd.not_growing \
is a receive window clamped to 4 × MSS while TCP memory (sockstat) is above tcp_mem's \
pressure threshold. docs/watch.md lists every rule with the kernel code it reads.\n\n\
A socket must be seen in two samples to be reported: connections that open and close \
between two samples are missed; use a shorter --interval, or capture and \
`tcpwhy analyze`.\n\n\
On a terminal (and --format text) the view refreshes in place; q or Ctrl-C ends it. \
Otherwise one line per socket and finding per interval. Either way the end prints a \
summary: per finding id, the sockets and the total time it cost. Exit status 0 = no \
finding, 1 = findings, 2 = error. Reading other users' sockets and --netns need root.\n\n\
Examples:\n  sudo tcpwhy watch\n  sudo tcpwhy watch --filter \"port 443\" --interval 500ms\n  \
sudo tcpwhy watch --netns blue --format json --count 10 | jq -c 'select(.type==\"finding\")'\n  \
tcpwhy watch --count 5 > watch.txt";

/// `watch --format`: not analyze's JSON document, a stream of lines.
#[derive(Copy, Clone, clap::ValueEnum)]
pub enum WatchFormat {
    /// A live view on a terminal, one line per socket and finding otherwise.
    Text,
    /// JSON lines: one object per socket and finding per interval, then a summary
    /// object (docs/watch.md).
    Json,
}

#[derive(Args)]
pub struct WatchArgs {
    /// Time between samples (e.g. 1s, 250ms); each line's share is of this interval.
    #[arg(long, value_name = "DURATION", default_value = "1s", value_parser = parse_interval)]
    pub interval: Duration,
    /// Only sockets matching: `host ADDR`, `port N`, `net ADDR/BITS`, joined with `and`
    /// (either end may match, as in `analyze --filter`).
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Watch the sockets of this network namespace (`ip netns add NAME`,
    /// /run/netns/NAME) instead of the current one.
    #[arg(long, value_name = "NAME")]
    pub netns: Option<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: WatchFormat,
    /// Report this many intervals, then print the summary and exit (N + 1 samples).
    #[arg(long, value_name = "N", value_parser = clap::value_parser!(u64).range(1..))]
    pub count: Option<u64>,
}

fn parse_interval(s: &str) -> Result<Duration, String> {
    let d = humantime::parse_duration(s.trim()).map_err(|e| format!("{s:?}: {e}"))?;
    if d < MIN_INTERVAL {
        return Err(format!(
            "{s:?}: shorter than {} ms (tcp_info's timers tick in jiffies)",
            MIN_INTERVAL.as_millis()
        ));
    }
    Ok(d)
}

pub fn run(a: WatchArgs) -> Result<ExitCode, String> {
    let filter = a.filter.as_deref().map(Filter::parse).transpose()?;
    // tcp_mem is only visible from the initial namespace: open it before leaving.
    let mut hostmem = HostMemReader::open();
    if let Some(ns) = &a.netns {
        // Before any thread starts (the Ctrl-C handler's): setns moves this thread only.
        tcpwhy_live::netns::enter(ns).map_err(|e| e.to_string())?;
    }
    let mut diag = SockDiag::open().map_err(|e| e.to_string())?;
    let stop = Arc::new(AtomicBool::new(false));
    {
        let stop = stop.clone();
        ctrlc::set_handler(move || stop.store(true, Ordering::SeqCst))
            .map_err(|e| format!("installing the Ctrl-C handler: {e}"))?;
    }
    let keep = |k: &SocketKey| {
        filter.as_ref().is_none_or(|f| {
            f.matches(&[
                Endpoint {
                    addr: k.local.ip(),
                    port: k.local.port(),
                },
                Endpoint {
                    addr: k.remote.ip(),
                    port: k.remote.port(),
                },
            ])
        })
    };
    let start = Instant::now();
    let mut sample = || -> Result<Snapshot, String> {
        let dump = diag.dump().map_err(|e| e.to_string())?;
        Ok(Snapshot {
            time_us: u64::try_from(start.elapsed().as_micros()).unwrap_or(u64::MAX),
            sockets: dump.sockets,
            host: hostmem.read(),
            skipped: dump.skipped,
        })
    };
    let mut watcher = Watcher::new();
    let ctx = Context {
        netns: a.netns.clone(),
        interval: a.interval,
    };
    let tui = matches!(a.format, WatchFormat::Text) && std::io::stdout().is_terminal();
    if tui {
        tui::run(&ctx, &mut watcher, &mut sample, &keep, a.count, &stop)?;
    } else {
        let mut out = std::io::stdout().lock();
        let json = matches!(a.format, WatchFormat::Json);
        watcher.step(&sample()?, keep);
        let mut done = 0u64;
        while !stop.load(Ordering::SeqCst) && a.count.is_none_or(|n| done < n) {
            if !sleep_unless_stopped(a.interval, &stop) {
                break;
            }
            let step = watcher.step(&sample()?, keep);
            done += 1;
            let written = if json {
                write_json_step(&mut out, &ctx, &step)
            } else {
                write_text_step(&mut out, &step)
            };
            if written.is_err() {
                break; // the reader went away (`| head`): end with the summary on stderr
            }
        }
        let summary = watcher.summary();
        let _ = if json {
            write_json_summary(&mut out, summary)
        } else {
            write_text_summary(&mut out, summary)
        };
    }
    let found = !watcher.summary().rows.is_empty();
    Ok(ExitCode::from(u8::from(found)))
}

/// What every output names besides the step.
struct Context {
    netns: Option<String>,
    interval: Duration,
}

/// Sleeps `d` in short slices; false when Ctrl-C came first.
fn sleep_unless_stopped(d: Duration, stop: &AtomicBool) -> bool {
    let end = Instant::now() + d;
    while !stop.load(Ordering::SeqCst) {
        let now = Instant::now();
        if now >= end {
            return true;
        }
        std::thread::sleep((end - now).min(Duration::from_millis(50)));
    }
    false
}

fn ms(us: u64) -> f64 {
    us as f64 / 1000.0
}

fn ssthresh(s: u32) -> Value {
    if s >= INFINITE_SSTHRESH {
        Value::Null
    } else {
        json!(s)
    }
}

/// ssthresh as ss prints it: absent until the first reduction.
fn ssthresh_text(s: u32) -> String {
    if s >= INFINITE_SSTHRESH {
        "none".into()
    } else {
        s.to_string()
    }
}

fn write_text_step(out: &mut impl Write, step: &Step) -> std::io::Result<()> {
    let with = step
        .reports
        .iter()
        .filter(|r| !r.findings.is_empty())
        .count();
    writeln!(
        out,
        "t={:.2}s  interval {:.0} ms  {} sockets ({} new, {} gone), {} losing time{}",
        step.time_us as f64 / 1e6,
        ms(step.elapsed_us),
        step.reports.len() + step.opened,
        step.opened,
        step.closed,
        with,
        host_text(step)
    )?;
    for r in &step.reports {
        for f in &r.findings {
            writeln!(
                out,
                "  {} → {}  {:<29} {:>5.1}%  {:>8.1} ms  cwnd {} ssthresh {} rtt {:.1} ms  {}",
                r.key.local,
                r.key.remote,
                f.id.as_str(),
                f.share * 100.0,
                ms(f.cost_us),
                r.tcp.snd_cwnd,
                ssthresh_text(r.tcp.snd_ssthresh),
                ms(u64::from(r.tcp.rtt_us)),
                f.note
            )?;
        }
    }
    for s in &step.skipped {
        writeln!(out, "  skipped: {s}")?;
    }
    out.flush()
}

fn host_text(step: &Step) -> String {
    match (step.host.mem_pages, step.host.tcp_mem) {
        (Some(m), Some(t)) => format!(
            "; TCP memory {m} pages (tcp_mem pressure {}{})",
            t.pressure_pages,
            if m > t.pressure_pages {
                ": UNDER PRESSURE"
            } else {
                ""
            }
        ),
        _ => String::new(),
    }
}

fn finding_json(
    ctx: &Context,
    step: &Step,
    r: &tcpwhy_live::watch::SocketReport,
    f: &tcpwhy_live::rules::Finding,
) -> Value {
    let evidence: Map<String, Value> = f
        .evidence
        .iter()
        .map(|(k, v)| ((*k).to_string(), json!(v)))
        .collect();
    let t = &r.tcp;
    let tcp_info = json!({
        "state": t.state,
        "ca_state": t.ca_state,
        "congestion": r.congestion,
        "snd_cwnd": t.snd_cwnd,
        "snd_ssthresh": ssthresh(t.snd_ssthresh),
        "rtt_us": t.rtt_us,
        "rto_us": t.rto_us,
        "snd_mss": t.snd_mss,
        "advmss": t.advmss,
        "unacked": t.unacked,
        "snd_wnd": t.snd_wnd,
        "rcv_ssthresh": t.rcv_ssthresh,
        "total_retrans": t.total_retrans,
        "dsack_dups": t.dsack_dups,
        "reord_seen": t.reord_seen,
        "reordering": t.reordering,
        "busy_us": t.busy_us,
        "rwnd_limited_us": t.rwnd_limited_us,
        "sndbuf_limited_us": t.sndbuf_limited_us,
        "last_data_sent_ms": t.last_data_sent_ms,
        "bytes_sent": t.bytes_sent,
        "bytes_retrans": t.bytes_retrans,
        "bytes_received": t.bytes_received,
        "delivery_rate": t.delivery_rate,
        "pacing_rate": t.pacing_rate,
    });
    json!({
        "type": "finding",
        "schema_version": SCHEMA_VERSION,
        "t_ms": ms(step.time_us),
        "interval_ms": ms(r.elapsed_us),
        "netns": ctx.netns,
        "local": r.key.local.to_string(),
        "remote": r.key.remote.to_string(),
        "cookie": r.key.cookie,
        "inode": r.inode,
        "id": f.id.as_str(),
        "cost_ms": ms(f.cost_us),
        "share": f.share,
        "note": f.note,
        "kernel": f.kernel,
        "fix_goes_to": f.id.entry().fix_goes_to,
        "evidence": evidence,
        "tcp_info": tcp_info,
        "interval": {
            "busy_ms": ms(r.busy_us),
            "sent_bytes": r.sent_bytes,
            "received_bytes": r.received_bytes,
        },
        "host": {
            "tcp_mem_pages": step.host.mem_pages,
            "tcp_mem_pressure_pages": step.host.tcp_mem.map(|t| t.pressure_pages),
            "tcp_slow_start_after_idle": step.host.slow_start_after_idle,
        },
    })
}

fn write_json_step(out: &mut impl Write, ctx: &Context, step: &Step) -> std::io::Result<()> {
    for r in &step.reports {
        for f in &r.findings {
            writeln!(out, "{}", finding_json(ctx, step, r, f))?;
        }
    }
    out.flush()
}

fn summary_rows(summary: &Summary) -> Vec<(&'static str, usize, u64, u64)> {
    let mut rows: Vec<_> = summary
        .rows
        .iter()
        .map(|(id, r)| (*id, r.sockets.len(), r.cost_us, r.intervals))
        .collect();
    rows.sort_by(|a, b| b.2.cmp(&a.2).then(a.0.cmp(b.0)));
    rows
}

fn write_json_summary(out: &mut impl Write, summary: &Summary) -> std::io::Result<()> {
    let findings: Vec<Value> = summary_rows(summary)
        .into_iter()
        .map(|(id, sockets, cost, intervals)| {
            json!({"id": id, "sockets": sockets, "cost_ms": ms(cost), "intervals": intervals,
                   "fix_goes_to": FindingId::parse(id).map(|i| i.entry().fix_goes_to)})
        })
        .collect();
    let v = json!({
        "type": "summary",
        "schema_version": SCHEMA_VERSION,
        "samples": summary.samples,
        "sockets_seen": summary.sockets_seen,
        "findings": findings,
    });
    writeln!(out, "{v}")?;
    out.flush()
}

fn write_text_summary(out: &mut impl Write, summary: &Summary) -> std::io::Result<()> {
    writeln!(
        out,
        "summary: {} samples, {} sockets seen",
        summary.samples, summary.sockets_seen
    )?;
    let rows = summary_rows(summary);
    if rows.is_empty() {
        writeln!(out, "  no socket lost time to a mechanism tcpwhy watches")?;
    }
    for (id, sockets, cost, intervals) in rows {
        writeln!(
            out,
            "  {id:<29} {sockets:>5} socket(s) {:>10.1} ms in {intervals} interval(s)",
            ms(cost)
        )?;
    }
    out.flush()
}

/// The live view on a terminal: the current interval's sockets and findings, costliest
/// first, over the summary so far. Raw mode and the alternate screen are undone by a
/// guard's Drop, so the terminal is restored on every exit, an error or a panic included.
mod tui {
    use super::*;
    use crossterm::event::{self, Event, KeyCode, KeyEventKind, KeyModifiers};
    use crossterm::terminal::{
        disable_raw_mode, enable_raw_mode, EnterAlternateScreen, LeaveAlternateScreen,
    };
    use ratatui::backend::CrosstermBackend;
    use ratatui::layout::{Constraint, Layout};
    use ratatui::style::{Modifier, Style};
    use ratatui::text::Line;
    use ratatui::widgets::{Block, Borders, Paragraph, Row, Table};
    use ratatui::Terminal;

    struct Restore;

    impl Drop for Restore {
        fn drop(&mut self) {
            let _ = disable_raw_mode();
            let _ = crossterm::execute!(
                std::io::stdout(),
                LeaveAlternateScreen,
                crossterm::cursor::Show
            );
        }
    }

    pub fn run(
        ctx: &Context,
        watcher: &mut Watcher,
        sample: &mut dyn FnMut() -> Result<Snapshot, String>,
        keep: &dyn Fn(&SocketKey) -> bool,
        count: Option<u64>,
        stop: &AtomicBool,
    ) -> Result<(), String> {
        let first = sample()?;
        watcher.step(&first, keep);
        let io = |e: std::io::Error| format!("terminal: {e}");
        enable_raw_mode().map_err(io)?;
        let guard = Restore;
        crossterm::execute!(std::io::stdout(), EnterAlternateScreen).map_err(io)?;
        let mut term = Terminal::new(CrosstermBackend::new(std::io::stdout())).map_err(io)?;
        let mut last = Step::default();
        let mut done = 0u64;
        let mut next = Instant::now() + ctx.interval;
        loop {
            term.draw(|f| draw(f, ctx, &last, watcher.summary()))
                .map_err(io)?;
            if stop.load(Ordering::SeqCst) || count.is_some_and(|n| done >= n) {
                break;
            }
            // Keys until the next sample is due: q, Esc or Ctrl-C (raw mode delivers it
            // as a key, not a signal) end the watch.
            let wait = next.saturating_duration_since(Instant::now());
            if event::poll(wait).map_err(io)? {
                if let Event::Key(k) = event::read().map_err(io)? {
                    let ctrl_c =
                        k.code == KeyCode::Char('c') && k.modifiers.contains(KeyModifiers::CONTROL);
                    if k.kind == KeyEventKind::Press
                        && (ctrl_c || matches!(k.code, KeyCode::Char('q') | KeyCode::Esc))
                    {
                        break;
                    }
                }
                continue;
            }
            next += ctx.interval;
            last = watcher.step(&sample()?, keep);
            done += 1;
        }
        drop(term);
        drop(guard);
        write_text_summary(&mut std::io::stdout().lock(), watcher.summary()).map_err(io)
    }

    fn draw(f: &mut ratatui::Frame, ctx: &Context, step: &Step, summary: &Summary) {
        let [head, body, foot] = Layout::vertical([
            Constraint::Length(3),
            Constraint::Min(5),
            Constraint::Length(summary.rows.len().clamp(1, 10) as u16 + 3),
        ])
        .areas(f.area());
        let title = format!(
            "tcpwhy watch{} — every {} ms — q / Ctrl-C: quit with summary",
            ctx.netns
                .as_deref()
                .map(|n| format!(" (netns {n})"))
                .unwrap_or_default(),
            ctx.interval.as_millis()
        );
        let with = step
            .reports
            .iter()
            .filter(|r| !r.findings.is_empty())
            .count();
        let status = format!(
            "t={:.1}s  {} sockets ({} new, {} gone), {} losing time{}",
            step.time_us as f64 / 1e6,
            step.reports.len() + step.opened,
            step.opened,
            step.closed,
            with,
            host_text(step)
        );
        f.render_widget(
            Paragraph::new(vec![Line::from(status)])
                .block(Block::default().borders(Borders::ALL).title(title)),
            head,
        );
        let bold = Style::default().add_modifier(Modifier::BOLD);
        let header = Row::new([
            "local",
            "remote",
            "finding",
            "share",
            "cost ms",
            "cwnd",
            "ssthresh",
            "rtt ms",
            "what happened",
        ])
        .style(bold);
        let rows = step.reports.iter().flat_map(|r| {
            r.findings.iter().map(move |x| {
                Row::new([
                    r.key.local.to_string(),
                    r.key.remote.to_string(),
                    x.id.as_str().to_string(),
                    format!("{:.1}%", x.share * 100.0),
                    format!("{:.1}", ms(x.cost_us)),
                    r.tcp.snd_cwnd.to_string(),
                    ssthresh_text(r.tcp.snd_ssthresh),
                    format!("{:.1}", ms(u64::from(r.tcp.rtt_us))),
                    x.note.clone(),
                ])
            })
        });
        let widths = [
            Constraint::Length(21),
            Constraint::Length(21),
            Constraint::Length(29),
            Constraint::Length(6),
            Constraint::Length(8),
            Constraint::Length(5),
            Constraint::Length(8),
            Constraint::Length(7),
            Constraint::Min(20),
        ];
        f.render_widget(
            Table::new(rows, widths).header(header).block(
                Block::default()
                    .borders(Borders::ALL)
                    .title("this interval, costliest first"),
            ),
            body,
        );
        let srows = summary_rows(summary).into_iter().map(|(id, s, c, n)| {
            Row::new([
                id.to_string(),
                s.to_string(),
                format!("{:.1}", ms(c)),
                n.to_string(),
            ])
        });
        f.render_widget(
            Table::new(
                srows,
                [
                    Constraint::Length(29),
                    Constraint::Length(8),
                    Constraint::Length(12),
                    Constraint::Length(10),
                ],
            )
            .header(Row::new(["finding", "sockets", "total ms", "intervals"]).style(bold))
            .block(Block::default().borders(Borders::ALL).title(format!(
                "since start: {} samples, {} sockets",
                summary.samples, summary.sockets_seen
            ))),
            foot,
        );
    }
}
