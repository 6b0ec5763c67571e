//! Command-line interface: every subcommand and flag is defined here, once, in the
//! order `--help` shows them.

use crate::scan::Bar;
use clap::{Args, Parser, Subcommand, ValueEnum};
use std::io::Write;
use std::process::ExitCode;
use tcpwhy_capture::Packet;
use tcpwhy_report::flows;
use tcpwhy_track::{SegmentEvent, SegmentKinds};

#[derive(Parser)]
#[command(
    name = "tcpwhy",
    version = env!("TCPWHY_VERSION"),
    about = "Why is this TCP traffic slow? Reads a packet capture, names the mechanism, proves it, prices it.",
    long_about = "tcpwhy reads pcap and pcapng captures (tcpdump -w, Wireshark, gzip-compressed \
too) and explains TCP performance: `analyze` names the mechanism that cost time (slow start \
on new or idle connections, Nagle and delayed ACKs, receive windows and send buffers, losses, \
spurious retransmissions, reordering, queues), proves it with frame numbers, prices it in \
milliseconds and gives the fix; `flows` shows each connection's statistics and what limited it; \
`report` writes one HTML page with the time-sequence plot of every finding, its evidence \
frames marked; `annotate` writes the capture again with each finding as packet comments on \
its evidence frames, for Wireshark (`frame.comment contains \"tcpwhy\"`).\n\n\
Stream numbers are Wireshark's tcp.stream indexes and frame numbers are Wireshark's, \
so anything tcpwhy reports can be checked with `tcp.stream eq N` in Wireshark.\n\n\
`tcpwhy host` audits a machine's TCP settings, socket memory, counters and live sockets; \
`tcpwhy collect` saves them to a directory, and `tcpwhy analyze --host DIR` checks a \
capture's findings against the host they name.",
    after_help = "Examples:\n  tcpwhy analyze capture.pcap\n  tcpwhy analyze --host server-bundle/ capture.pcap\n  tcpwhy flows capture.pcap\n  tcpwhy report capture.pcap -o report.html\n  tcpwhy annotate capture.pcap -o annotated.pcapng\n  sudo tcpwhy host --interval 10s\n  tcpdump -i eth0 -w - port 443 | tcpwhy flows -\n  tcpwhy flows --format json capture.pcapng | jq '.files[0].connections[0]'\n\nExit status: 0 success, 2 error (unreadable file, not a capture, no frame of a file \
readable as TCP); analyze, report, annotate and host: 1 when they found something."
)]
pub struct Cli {
    #[command(subcommand)]
    pub command: Command,
}

#[derive(Subcommand)]
pub enum Command {
    /// Diagnose: which TCP mechanism cost time on which connection, proven with frame
    /// numbers, priced in milliseconds, with the fix. Exit status 0 = no finding above
    /// --min-cost, 1 = findings, 2 = error or no frame readable as TCP (so it can gate a
    /// CI job). With -i IFACE, on a live capture.
    #[command(after_help = crate::live::HELP)]
    Analyze(AnalyzeCmd),
    /// The capture again as pcapng, every frame unchanged and numbered as before, each
    /// evidence frame carrying its finding as a packet comment (Wireshark: frame.comment);
    /// prints the same report and exits with the same status as `analyze`.
    #[command(after_help = crate::annotate::HELP)]
    Annotate(crate::annotate::AnnotateArgs),
    /// One self-contained HTML page per capture: the verdict, a time-sequence plot of each
    /// finding's connection with its evidence frames marked (zoom, pan, hover for frame
    /// numbers), RTT, flight and throughput per connection, and the connections table;
    /// prints the same report and exits with the same status as `analyze`.
    #[command(after_help = crate::report::HELP)]
    Report(crate::report::ReportArgs),
    /// One row per TCP connection: endpoints, duration, packets and bytes each way, RTT,
    /// flight, windows, handshake options, vantage point, retransmissions; in JSON also the
    /// ICMP errors quoting it (fragmentation needed / packet too big, next-hop MTU).
    Flows(FlowsArgs),
    /// One line per TCP frame with its stream and classification (retransmission,
    /// duplicate ACK, zero window …), for checking tcpwhy against Wireshark.
    Segments(SegmentsArgs),
    /// Many captures on Dask, one task per capture: their connections and findings as
    /// Parquet partitioned by capture, and the fleet verdict (the mechanisms that cost the
    /// most across all of them, on which servers and ports). Runs the Python package's
    /// driver (pip install ./python; docs/fleet.md).
    #[command(after_help = crate::fleet::HELP, disable_help_flag = true)]
    Fleet(crate::fleet::FleetArgs),
    /// Audit this host's TCP state: sysctls, socket memory, kernel counters, live sockets
    /// (ss), cached path metrics; each finding with the values read and the exact fix.
    /// Exit status 0 = nothing found, 1 = findings, 2 = error.
    #[command(after_help = HOST_HELP)]
    Host(HostArgs),
    /// Save this host's TCP state to a directory (a "bundle") for `tcpwhy host --bundle`
    /// or `tcpwhy analyze --host` on another machine.
    #[command(after_help = COLLECT_HELP)]
    Collect(CollectArgs),
    /// Watch the live sockets (sock_diag tcp_info, no capture): every interval, which
    /// mechanism cost each socket time — receive window, send buffer, losses and their
    /// kind, restart after idle, memory pressure — and its share of the interval.
    #[command(after_help = crate::watch::HELP)]
    Watch(crate::watch::WatchArgs),
    /// Write the man pages and shell completions to a directory (for packaging).
    #[command(hide = true)]
    Assets(crate::assets::AssetsArgs),
}

const HOST_HELP: &str = "What it reads: sysctl -a (or /proc/sys/net), /proc/net/sockstat{,6}, \
/proc/net/netstat and snmp (or nstat), ss -tinmO, ip tcp_metrics show, ip -d link show and \
each interface's rps_cpus. Anything it cannot read (command missing, not root) is listed \
with the reason; run as root to see every socket.\n\n\
Counters such as ListenOverflows or TCPMemoryPressures count since boot; with --interval \
tcpwhy reads them twice and reports what changed and how fast, which is what says a \
problem is happening now.\n\n\
Examples:\n  sudo tcpwhy host\n  sudo tcpwhy host --interval 10s\n  \
tcpwhy host --bundle server-bundle/ --format json\n  \
tcpwhy analyze server.pcap --host server-bundle/   (confirm a capture finding)";

const COLLECT_HELP: &str = "Layout: manifest.json (time, hostname, kernel, and for each \
input what was read or why not), sysctl.txt, sockstat.txt, sockstat6.txt, netstat.txt, \
snmp.txt, nstat.txt, ss.txt, tcp_metrics.txt, ip-link.txt, rps/IFACE/rx-N; with a second \
snapshot, the counter files again under after/.\n\n\
Examples:\n  sudo tcpwhy collect -o bundle/ --interval 10s\n  \
sudo tcpwhy collect -o bundle/; ./reproduce-the-problem; sudo tcpwhy collect -o bundle/ --after\n  \
ip netns exec ns1 tcpwhy collect -o ns1-bundle/   (a network namespace: its own sysctls and counters)";

#[derive(Copy, Clone, ValueEnum)]
pub enum Format {
    /// Aligned table for people.
    Text,
    /// Versioned JSON document (see docs/json.md).
    Json,
}

#[derive(Args)]
pub struct FlowsArgs {
    /// Capture files (pcap, pcapng, optionally gzip); `-` reads standard input.
    #[arg(required = true, value_name = "FILE")]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Only this connection (Wireshark's tcp.stream index).
    #[arg(long, value_name = "N")]
    pub stream: Option<u64>,
    /// Threads per file [default: one per core for files of 64 MiB or more and for
    /// standard input, else 1].
    /// Connections are split between threads by 4-tuple; the output does not depend on it,
    /// except past the memory bounds on connections at once (floods, scans), where which ones
    /// are cut early follows the split (docs/tracking.md).
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
}

#[derive(Copy, Clone, ValueEnum)]
pub enum VantageArg {
    /// Infer it per connection from the handshake and the data→ACK gaps.
    Auto,
    /// The capture was taken on the client.
    Client,
    /// The capture was taken on the server.
    Server,
}

/// `analyze`: its options, shared with annotate and report, and the live capture's.
#[derive(Args)]
pub struct AnalyzeCmd {
    #[command(flatten)]
    pub analyze: AnalyzeArgs,
    #[command(flatten)]
    pub live: crate::live::LiveArgs,
}

#[derive(Args)]
pub struct AnalyzeArgs {
    /// Capture files (pcap, pcapng, optionally gzip); `-` reads standard input. (For
    /// analyze -i: the capture filter.)
    #[arg(value_name = "FILE")]
    pub files: Vec<String>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
    /// Only this connection (Wireshark's tcp.stream index).
    #[arg(long, value_name = "N")]
    pub stream: Option<u64>,
    /// Only connections matching: `host ADDR`, `port N`, `net ADDR/BITS`, joined with
    /// `and` (e.g. "host 10.0.0.2 and port 8080"). Stream numbers stay Wireshark's.
    #[arg(long, value_name = "EXPR")]
    pub filter: Option<String>,
    /// Report findings that cost at least this much (e.g. 10ms, 1.5s, 500us).
    #[arg(long, value_name = "DURATION", default_value = "1ms", value_parser = parse_duration_ns)]
    pub min_cost: u64,
    /// Where the capture was taken.
    #[arg(long, value_enum, default_value = "auto")]
    pub vantage: VantageArg,
    /// Also list every request/response exchange: request, server time, response rounds.
    #[arg(long)]
    pub exchanges: bool,
    /// Threads per file [default: one per core for files of 64 MiB or more and for
    /// standard input, else 1].
    /// Connections are split between threads by 4-tuple; the findings do not depend on it,
    /// except past the memory bounds on connections at once (floods, scans), where which ones
    /// are cut early follows the split (docs/tracking.md).
    #[arg(short = 'j', long, value_name = "N", value_parser = clap::value_parser!(u16).range(1..=256))]
    pub threads: Option<u16>,
    /// A host bundle (`tcpwhy collect -o DIR` on the client or the server) to confirm or
    /// contradict the findings with that host's sysctls, counters and sockets; give it
    /// twice for both ends. Each finding is judged by the bundle of the end that decides
    /// it (the sender's for slow start, the receiver's for windows).
    #[arg(long = "host", value_name = "DIR")]
    pub hosts: Vec<std::path::PathBuf>,
}

#[derive(Args)]
pub struct HostArgs {
    /// Analyse a bundle written by `tcpwhy collect` instead of this host.
    #[arg(long, value_name = "DIR")]
    pub bundle: Option<std::path::PathBuf>,
    /// Read the counters twice, this far apart (e.g. 10s), and report deltas and rates.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_ns, conflicts_with = "bundle")]
    pub interval: Option<u64>,
    /// Output format.
    #[arg(long, value_enum, default_value = "text")]
    pub format: Format,
}

#[derive(Args)]
pub struct CollectArgs {
    /// The bundle directory (created if missing; files in it are overwritten).
    #[arg(short = 'o', long = "output", value_name = "DIR")]
    pub output: std::path::PathBuf,
    /// Read the counters a second time after this long (e.g. 10s), into DIR/after/.
    #[arg(long, value_name = "DURATION", value_parser = parse_duration_ns)]
    pub interval: Option<u64>,
    /// Only add the second snapshot of the counters to an existing bundle (DIR/after/),
    /// e.g. after reproducing the problem.
    #[arg(long, conflicts_with = "interval")]
    pub after: bool,
}

pub(crate) use tcpwhy_report::units::parse_duration_ns;

#[derive(Args)]
pub struct SegmentsArgs {
    /// Capture file (pcap, pcapng, optionally gzip); `-` reads standard input.
    #[arg(value_name = "FILE")]
    pub file: String,
    /// Only this connection (Wireshark's tcp.stream index).
    #[arg(long, value_name = "N")]
    pub stream: Option<u64>,
    /// Only frames with at least one classification flag.
    #[arg(long)]
    pub flagged: bool,
}

pub fn analyze(a: AnalyzeCmd) -> Result<ExitCode, String> {
    if a.live.interface.is_some() {
        return crate::live::run(a.analyze, a.live);
    }
    analyze_each(a.analyze, None)
}

/// What a caller other than `analyze FILE…` changes about the passes.
#[derive(Default)]
pub struct PassHooks<'h> {
    /// Told each finding of a connection kept by --stream / --filter as soon as the
    /// connection is judged (`analyze -i`).
    pub on_finding: Option<&'h (dyn Fn(&tcpwhy_detect::Finding) + Sync)>,
    /// The name the report gives the input instead of its path.
    pub name: Option<String>,
    /// One thread and no progress bar (a live capture: a pipe of unknown length whose
    /// stream numbers must be final as findings are printed).
    pub serial: bool,
}

/// What `annotate` does with each file's report after its pass, before any is printed.
pub type EachReport<'h> =
    &'h mut dyn FnMut(&mut tcpwhy_report::analyze::AnalyzeReport<'_>) -> Result<(), String>;

/// `analyze`, with `each` called on every file's report (its findings whole, never
/// rendered during the pass, so that `each` can read them).
pub fn analyze_each(a: AnalyzeArgs, each: Option<EachReport<'_>>) -> Result<ExitCode, String> {
    analyze_with(a, each, &PassHooks::default())
}

/// [`analyze_each`] with the [`PassHooks`] of a caller such as `analyze -i`.
pub fn analyze_with(
    a: AnalyzeArgs,
    mut each: Option<EachReport<'_>>,
    hooks: &PassHooks<'_>,
) -> Result<ExitCode, String> {
    use tcpwhy_detect::Config;
    use tcpwhy_report::analyze::{write_json, write_text, AnalyzeReport, JsonRender};
    if a.files.is_empty() {
        return Err(
            "no capture file given (`-` reads standard input; analyze -i IFACE \
                    captures live)"
                .into(),
        );
    }
    check_stdin_once(&a.files)?;
    let mut views = Vec::new();
    for dir in &a.hosts {
        let (hs, _) = tcpwhy_hoststate::HostState::read_bundle_checked(dir)?;
        views.push((
            dir.display().to_string(),
            tcpwhy_detect::host::HostView::from_state(&hs),
        ));
    }
    let filter = a
        .filter
        .as_deref()
        .map(crate::filter::Filter::parse)
        .transpose()?;
    let vantage = match a.vantage {
        VantageArg::Auto => None,
        VantageArg::Client => Some(tcpwhy_track::Vantage::Client),
        VantageArg::Server => Some(tcpwhy_track::Vantage::Server),
    };
    let mut reports = Vec::new();
    let mut failed = false;
    let config = Config {
        vantage,
        keep_exchanges: a.exchanges,
        ..Config::default()
    };
    let keep = |stream: u64, ends: &[tcpwhy_track::Endpoint; 2]| {
        a.stream.is_none_or(|s| s == stream) && filter.as_ref().is_none_or(|x| x.matches(ends))
    };
    let tell = |f: &tcpwhy_detect::Finding| {
        if let Some(on) = hooks.on_finding {
            if keep(f.stream, &f.endpoints) {
                on(f);
            }
        }
    };
    for f in &a.files {
        // A bar per file: a finished indicatif bar is not drawn again.
        let bar = Bar::new();
        let opts = tcpwhy_pipeline::Options {
            threads: if hooks.serial {
                1
            } else {
                a.threads.map_or(0, usize::from)
            },
            progress: (!hooks.serial).then_some(&bar as &dyn tcpwhy_pipeline::Progress),
            spill_budget: None,
            on_finding: hooks.on_finding.is_some().then_some(&tell as _),
        };
        // JSON without host bundles is rendered during the pass, on its threads (a
        // finding joined with a bundle changes as it is written).
        let pass = if matches!(a.format, Format::Json) && views.is_empty() && each.is_none() {
            tcpwhy_pipeline::analyze_rendered(f, &opts, &config, &JsonRender)
        } else {
            tcpwhy_pipeline::analyze(f, &opts, &config)
        };
        let (mut file, findings, exchanges) = match pass {
            Ok(r) => r,
            Err(e) => {
                eprintln!("tcpwhy: {e}");
                failed = true;
                continue;
            }
        };
        if let Some(name) = &hooks.name {
            file.path = name.clone();
        }
        failed |= report_skips(&file);
        let exchanges = a.exchanges.then(|| {
            exchanges
                .into_iter()
                .filter(|(s, ends, _)| keep(*s, ends))
                .map(|(s, _, x)| (s, x))
                .collect()
        });
        let mut report = AnalyzeReport {
            file,
            findings,
            keep: &keep,
            min_cost_ns: a.min_cost,
            exchanges,
            hosts: &views,
        };
        if let Some(each) = each.as_mut() {
            each(&mut report)?;
        }
        reports.push(report);
    }
    let mut out = std::io::BufWriter::new(std::io::stdout().lock());
    let written = match a.format {
        Format::Text => write_text(&reports, &mut out),
        Format::Json => write_json(&reports, &mut out),
    };
    let any = match written.and_then(|any| out.flush().map(|_| any)) {
        Ok(any) => any,
        // A closed pipe (`| head`) is not an error worth reporting; the findings were
        // there all the same.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => {
            reports.iter().any(|r| !r.findings.is_empty())
        }
        Err(e) => return Err(format!("writing output: {e}")),
    };
    Ok(if failed {
        ExitCode::from(2)
    } else if any {
        ExitCode::from(1)
    } else {
        ExitCode::SUCCESS
    })
}

/// Says on standard error, in one line, how many frames of a file were skipped and why
/// (and in another when frames' times ran backwards or were out of range);
/// returns whether no frame of it could be analysed (then the line says that, and the
/// exit status is 2: a capture of a link type tcpwhy does not read, or without TCP, must
/// not pass as a healthy one).
fn report_skips(file: &tcpwhy_pipeline::FileReport) -> bool {
    for h in flows::cut_lines(file) {
        eprintln!("tcpwhy: warning: {h}");
    }
    if let Some(t) = flows::time_line(file) {
        eprintln!("tcpwhy: warning: {t}");
    }
    if let Some(why) = flows::nothing_analysed(file) {
        eprintln!("tcpwhy: {why}");
        true
    } else {
        if let Some(line) = flows::skip_line(file) {
            eprintln!("tcpwhy: note: {line}");
        }
        false
    }
}

fn check_stdin_once(files: &[String]) -> Result<(), String> {
    if files.iter().filter(|f| *f == "-").count() > 1 {
        return Err("standard input (-) can be read only once".into());
    }
    Ok(())
}

fn write_out(s: &str) -> Result<(), String> {
    let mut out = std::io::stdout().lock();
    broken_pipe_ok(out.write_all(s.as_bytes()).and_then(|_| out.flush()))
}

fn broken_pipe_ok(r: std::io::Result<()>) -> Result<(), String> {
    match r {
        // A closed pipe (`| head`) is not an error worth reporting.
        Err(e) if e.kind() == std::io::ErrorKind::BrokenPipe => Ok(()),
        r => r.map_err(|e| format!("writing output: {e}")),
    }
}

pub fn flows(a: FlowsArgs) -> Result<ExitCode, String> {
    check_stdin_once(&a.files)?;
    let mut reports = Vec::new();
    let mut failed = false;
    for f in &a.files {
        // One unreadable file does not hide the others: report it and go on.
        let bar = Bar::new();
        let opts = tcpwhy_pipeline::Options {
            threads: a.threads.map_or(0, usize::from),
            progress: Some(&bar),
            spill_budget: None,
            on_finding: None,
        };
        let mut r = match tcpwhy_pipeline::flows(f, &opts) {
            Ok(r) => r,
            Err(e) => {
                eprintln!("tcpwhy: {e}");
                failed = true;
                continue;
            }
        };
        failed |= report_skips(&r);
        if let Some(s) = a.stream {
            r.retain_stream(s)
                .map_err(|e| format!("{f}: reading the connections back: {e}"))?;
        }
        // The text report says it in its footer; JSON readers may not look at `error`.
        if let (Some(e), Format::Json) = (&r.error, a.format) {
            eprintln!(
                "tcpwhy: warning: {f}: {} (read {} frames before it)",
                e.message, r.frames
            );
        }
        reports.push(r);
    }
    if !reports.is_empty() {
        match a.format {
            Format::Text => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                let r = flows::write_text(&reports, &mut out).and_then(|_| out.flush());
                broken_pipe_ok(r)?;
            }
            Format::Json => {
                let mut out = std::io::BufWriter::new(std::io::stdout().lock());
                // The rows are turned into JSON on as many threads as the pass used.
                let threads = a.threads.map_or_else(
                    || std::thread::available_parallelism().map_or(1, |n| n.get()),
                    usize::from,
                );
                let r = flows::write_json_threads(&reports, &mut out, threads)
                    .and_then(|_| out.flush());
                broken_pipe_ok(r)?;
            }
        }
    }
    Ok(if failed {
        ExitCode::from(2)
    } else {
        ExitCode::SUCCESS
    })
}

const KIND_NAMES: [(u32, &str); 18] = [
    (SegmentKinds::CAPTURE_DUPLICATE, "capture_duplicate"),
    (SegmentKinds::RETRANSMISSION, "retransmission"),
    (SegmentKinds::FAST_RETRANSMISSION, "fast_retransmission"),
    (
        SegmentKinds::SPURIOUS_RETRANSMISSION,
        "spurious_retransmission",
    ),
    (SegmentKinds::OUT_OF_ORDER, "out_of_order"),
    (SegmentKinds::DUP_ACK, "duplicate_ack"),
    (SegmentKinds::ZERO_WINDOW, "zero_window"),
    (SegmentKinds::ZERO_WINDOW_PROBE, "zero_window_probe"),
    (SegmentKinds::ZERO_WINDOW_PROBE_ACK, "zero_window_probe_ack"),
    (SegmentKinds::WINDOW_UPDATE, "window_update"),
    (SegmentKinds::WINDOW_FULL, "window_full"),
    (SegmentKinds::KEEP_ALIVE, "keep_alive"),
    (SegmentKinds::KEEP_ALIVE_ACK, "keep_alive_ack"),
    (SegmentKinds::DSACK, "dsack"),
    (
        SegmentKinds::PREVIOUS_SEGMENT_NOT_CAPTURED,
        "previous_segment_not_captured",
    ),
    (SegmentKinds::ACKED_UNSEEN, "acked_unseen"),
    (SegmentKinds::REUSED_PORTS, "reused_ports"),
    (SegmentKinds::NEW_DATA, "new_data"),
];

pub fn segments(a: SegmentsArgs) -> Result<ExitCode, String> {
    let mut out = String::from("FRAME\tTIME\tSTREAM\tDIR\tSEQ\tLEN\tACK\tWIN\tFLAGS\n");
    let mut line =
        |frame: u64, ts: tcpwhy_capture::Timestamp, p: &Packet<'_>, ev: &SegmentEvent| {
            let flagged = ev.kinds.0 & !SegmentKinds::NEW_DATA != 0;
            if a.stream.is_some_and(|s| s != ev.stream) || (a.flagged && !flagged) {
                return;
            }
            let names: Vec<&str> = KIND_NAMES
                .iter()
                .filter(|(b, _)| ev.kinds.has(*b))
                .map(|(_, n)| *n)
                .collect();
            let ack = ev.rel_ack.map_or("-".to_string(), |v| v.to_string());
            let dir = if ev.from_client { "c>s" } else { "s>c" };
            out.push_str(&format!(
                "{frame}\t{ts}\t{}\t{dir}\t{}\t{}\t{ack}\t{}\t{}\n",
                ev.stream,
                ev.rel_seq,
                p.payload_len,
                ev.window_bytes,
                names.join(",")
            ));
        };
    let r = tcpwhy_pipeline::segments(&a.file, &mut line)?;
    write_out(&out)?;
    if let Some(e) = &r.error {
        eprintln!("tcpwhy: warning: {}: {}", a.file, e.message);
    }
    Ok(ExitCode::SUCCESS)
}

pub fn collect(a: CollectArgs) -> Result<ExitCode, String> {
    use crate::host;
    let done = if a.after {
        host::collect_after(&a.output)?
    } else {
        let interval = a.interval.map(std::time::Duration::from_nanos);
        if let Some(d) = interval {
            eprintln!(
                "tcpwhy: first snapshot taken; the second in {:.1} s",
                d.as_secs_f64()
            );
        }
        host::collect_twice(&a.output, interval)?
    };
    let mut out = format!("Wrote {}:\n", a.output.display());
    out += &host::summary(&done);
    // The bundle is the output; the listing is for the person who ran it.
    eprint!("{out}");
    Ok(ExitCode::SUCCESS)
}

pub fn host(a: HostArgs) -> Result<ExitCode, String> {
    use tcpwhy_detect::host::{audit, HostView};
    use tcpwhy_report::host::{render_text, write_json, HostReport};
    // Live: the same bundle `collect` writes, in a scratch directory, so the live audit
    // and the offline one are one code path.
    let scratch;
    let (dir, source) = match &a.bundle {
        Some(d) => (d.clone(), d.display().to_string()),
        None => {
            scratch = crate::host::Scratch::new()?;
            let interval = a.interval.map(std::time::Duration::from_nanos);
            if let Some(d) = interval {
                eprintln!(
                    "tcpwhy: reading the counters twice, {:.1} s apart",
                    d.as_secs_f64()
                );
            }
            crate::host::collect_twice(&scratch.0, interval)?;
            (scratch.0.clone(), "live".to_string())
        }
    };
    let (hs, diagnostics) = tcpwhy_hoststate::HostState::read_bundle_checked(&dir)?;
    let view = HostView::from_state(&hs);
    // A file the manifest already lists as not collected needs no second line.
    let diagnostics = diagnostics
        .into_iter()
        .filter(|d| {
            let file = d.split(':').next().unwrap_or(d);
            let listed = view
                .unread
                .iter()
                .any(|u| u.starts_with(&format!("{file} (")));
            !(listed && d.contains("missing"))
        })
        .collect();
    let result = audit(&view);
    let report = HostReport {
        source,
        view: &view,
        audit: &result,
        diagnostics,
        time: hs.manifest.as_ref().and_then(|m| m.time.clone()),
    };
    match a.format {
        Format::Text => write_out(&render_text(&report))?,
        Format::Json => {
            let mut out = std::io::BufWriter::new(std::io::stdout().lock());
            broken_pipe_ok(write_json(&report, &mut out).and_then(|_| out.flush()))?;
        }
    }
    Ok(if result.findings.is_empty() {
        ExitCode::SUCCESS
    } else {
        ExitCode::from(1)
    })
}
