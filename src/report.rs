//! `tcpwhy report`: the pass of `analyze` (same options, same report on standard output,
//! same exit status), then one self-contained HTML page per input
//! (`tcpwhy_report::html`): the verdict, a time-sequence plot of every finding's
//! connection with its evidence frames marked, each connection's RTT, flight and
//! throughput, and the connections table. Standard input is spooled to a temporary
//! file, since the page needs two more passes over the capture.

use crate::cli::AnalyzeArgs;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcpwhy_report::analyze::AnalyzeReport;
use tcpwhy_report::html::{self, PageOptions};

pub const HELP: &str = "The page works offline (every script and style inline: uPlot 1.6.32, \
MIT licence, named in its footer) and opens in any current browser. In a plot: drag to zoom \
into a time range, ctrl+wheel (or a pinch) zooms, shift-drag pans, double-click shows the whole \
connection; hovering a point shows its frame number, time, sequence number and length; each \
evidence frame has the Wireshark display filter that selects it. Inside a finding's time \
window every packet of the connection is drawn; elsewhere each pixel column shows the lowest and highest values.\n\n\
The page's size follows the plots, not the capture: at most --max-plots plots with 60,000 \
packets drawn one by one between them, 2,000 findings listed and 1,000 connections in the \
table (every connection with a finding, then the longest).\n\n\
Examples:\n  tcpwhy report capture.pcap -o report.html\n  \
tcpwhy report --min-cost 10ms --filter \"port 443\" capture.pcapng.gz -o report.html\n  \
tcpwhy report a.pcap b.pcap -o reports/   (several inputs: a directory, NAME.html each)\n  \
tcpdump -i eth0 -w - -c 100000 port 443 | tcpwhy report - -o report.html";

#[derive(Args)]
pub struct ReportArgs {
    #[command(flatten)]
    pub analyze: AnalyzeArgs,
    /// The HTML file to write (replaced if it exists); with several inputs, a directory
    /// (created if missing) that receives NAME.html for each input NAME.pcap[.gz].
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// How many findings get a plot, costliest first (the others are listed without one).
    #[arg(long, value_name = "N", default_value_t = html::DEFAULT_MAX_PLOTS)]
    pub max_plots: usize,
}

pub fn run(a: ReportArgs) -> Result<ExitCode, String> {
    let opts = PageOptions {
        max_plots: a.max_plots,
        generator: format!("tcpwhy {}", env!("TCPWHY_VERSION")),
        threads: a.analyze.threads.map_or(0, usize::from),
    };
    crate::outputs::analyze_then_write(a.analyze, &a.output, "report", "html", |r, input, out| {
        write_one(r, input, out, &opts)
    })
}

/// Writes the page of `input` (whose analysis is `r`) to `out`, through a temporary file
/// beside it so that a failed run leaves no half-written page; says what it holds.
fn write_one(
    r: &AnalyzeReport<'_>,
    input: &str,
    out: &Path,
    opts: &PageOptions,
) -> Result<String, String> {
    let tmp = crate::outputs::temp_beside(out, ".tcpwhy-report-")?;
    let writing = |e: std::io::Error| format!("{}: writing: {e}", out.display());
    let mut w = std::io::BufWriter::new(tmp.as_file());
    let done = html::write_page(r, input, opts, &mut w)?;
    w.flush().map_err(writing)?;
    drop(w);
    tmp.persist(out)
        .map_err(|e| format!("{}: {}", out.display(), e.error))?;
    let mut said = format!("{} finding(s)", done.findings);
    if done.findings_total > done.findings {
        said += &format!(" of {}", done.findings_total);
    }
    said += &format!(
        ", {} with a plot, {} of {} connection(s) in the table, {} kB",
        done.plots,
        done.rows,
        done.rows_total,
        done.bytes.div_ceil(1000)
    );
    Ok(said)
}
