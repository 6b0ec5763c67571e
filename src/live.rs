//! `tcpwhy analyze -i IFACE`: the same analysis on a live capture. tcpdump captures
//! (`tcpwhy_live::capture`), the pass reads its pipe as it would a file on standard
//! input, each finding is printed as its connection ends, and the whole report when the
//! capture stops (`--duration`, Ctrl-C, or tcpdump ending).

use crate::cli::{AnalyzeArgs, Format};
use clap::Args;
use std::io::Write;
use std::path::PathBuf;
use std::process::ExitCode;
use std::sync::mpsc;
use std::time::Duration;
use tcpwhy_detect::Finding;
use tcpwhy_live::capture::{LiveCapture, LiveOptions};

pub const HELP: &str = "Live capture (-i): tcpdump captures on the interface (root or \
CAP_NET_RAW; the filter is compiled into the kernel, timestamps are the kernel's) and \
writes to a pipe that tcpwhy reads as it would a file. The words after the options are \
the capture filter, in tcpdump's syntax. In text, each finding is printed as its \
connection ends (RST, FIN both ways, or idle); findings about patterns across \
connections, and those of connections still open, come in the report printed when the \
capture stops: after --duration, on Ctrl-C, or when tcpdump ends. Packets the kernel \
dropped are counted and reported (the analysis did not see them).\n\nExamples:\n  \
sudo tcpwhy analyze -i eth0 port 443\n  sudo tcpwhy analyze -i eth0 --duration 30s -w \
web.pcap host 10.0.0.2 and port 8080\n  sudo ip netns exec web tcpwhy analyze -i veth0 \
--format json --duration 1m";

/// The options of a live capture (analyze only).
#[derive(Args, Default)]
pub struct LiveArgs {
    /// Capture live on this interface instead of reading files; the words after the
    /// options are then a capture filter in tcpdump's syntax (e.g. `port 443`).
    #[arg(short = 'i', long = "interface", value_name = "IFACE")]
    pub interface: Option<String>,
    /// With -i: stop after this long (e.g. 30s, 5m) [default: until Ctrl-C].
    #[arg(long, value_name = "DURATION", requires = "interface", value_parser = crate::cli::parse_duration_ns)]
    pub duration: Option<u64>,
    /// With -i: also save the capture to this pcap file (for Wireshark, or to analyse
    /// again).
    #[arg(
        short = 'w',
        long = "write",
        value_name = "FILE",
        requires = "interface"
    )]
    pub write: Option<PathBuf>,
    /// With -i: bytes kept of each packet (the analysis needs only the headers: 128 is
    /// enough for TCP over IPv4 or IPv6 with options) [default: the whole packet].
    #[arg(long, value_name = "BYTES", requires = "interface", value_parser = clap::value_parser!(u32).range(64..=262144))]
    pub snaplen: Option<u32>,
}

pub fn run(mut a: AnalyzeArgs, l: LiveArgs) -> Result<ExitCode, String> {
    let Some(interface) = l.interface else {
        return Err("no interface".into());
    };
    // The positional words are the capture filter, not files.
    let filter = std::mem::take(&mut a.files);
    let cap = LiveCapture::start(&LiveOptions {
        interface: interface.clone(),
        filter: filter.clone(),
        snaplen: l.snaplen,
        save: l.write.clone(),
        tcpdump: None,
    })?;
    let stopper = cap.stopper();
    {
        let s = stopper.clone();
        ctrlc::set_handler(move || s.stop())
            .map_err(|e| format!("installing the Ctrl-C handler: {e}"))?;
    }
    let until = l.duration.map(Duration::from_nanos);
    let (done_tx, done_rx) = mpsc::channel::<()>();
    let timer = until.map(|d| {
        let s = stopper.clone();
        std::thread::spawn(move || {
            if let Err(mpsc::RecvTimeoutError::Timeout) = done_rx.recv_timeout(d) {
                s.stop();
            }
        })
    });
    let what = if filter.is_empty() {
        String::new()
    } else {
        format!(" ({})", filter.join(" "))
    };
    let stop = match until {
        Some(d) => format!("for {}", humantime::format_duration(d)),
        None => "until Ctrl-C".into(),
    };
    eprintln!("tcpwhy: capturing on {interface}{what} {stop}; findings as connections end");
    eprintln!("tcpwhy: {}", cap.listening.trim());
    let name = match &l.write {
        Some(p) => format!("{} (live on {interface})", p.display()),
        None => format!("live on {interface}"),
    };
    let path = cap.path();
    a.files = vec![path];
    let min_cost = a.min_cost;
    let text = matches!(a.format, Format::Text);
    let print = move |f: &Finding| {
        if text && f.cost_ns >= min_cost {
            let line = line(f);
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "{line}");
            let _ = out.flush();
        }
    };
    let hooks = crate::cli::PassHooks {
        on_finding: Some(&print),
        name: Some(name),
        serial: true,
    };
    let result = crate::cli::analyze_with(a, None, &hooks);
    drop(done_tx);
    if let Some(t) = timer {
        let _ = t.join();
    }
    let counts = cap.finish()?;
    if let Some(n) = counts.dropped_by_kernel.filter(|&n| n > 0) {
        eprintln!(
            "tcpwhy: warning: the kernel dropped {n} packet(s) before tcpdump read them: the \
             analysis did not see them (their connections may show losses that did not \
             happen); try a capture filter or --snaplen 128"
        );
    }
    if let Some(n) = counts.captured {
        eprintln!("tcpwhy: {n} packet(s) captured on {interface}");
    }
    result
}

/// One line for a finding as its connection ends.
fn line(f: &Finding) -> String {
    let share = f.share.map_or(String::new(), |s| {
        format!(" ({:.0} % of its time)", s * 100.0)
    });
    format!(
        "{}  stream {}  {} → {}  {}: {} ms lost{share}",
        f.id.as_str(),
        f.stream,
        f.endpoints[0],
        f.endpoints[1],
        f.id.entry().title,
        tcpwhy_report::units::ms(f.cost_ns),
    )
}
