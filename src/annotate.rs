//! `tcpwhy annotate`: the pass of `analyze` (same options, same report on standard
//! output, same exit status), then a second pass over each input that writes it back as
//! pcapng with a packet comment on every evidence frame (`tcpwhy_capture::annotate`) and
//! the verdict in the section header. The second pass streams: memory holds the
//! comments (a few per finding shown), not the frames.
//!
//! Standard input cannot be read twice, so `-` is first copied to a temporary file
//! (removed at exit), which takes as much disk space as the capture.

use crate::cli::AnalyzeArgs;
use clap::Args;
use std::io::Write;
use std::path::{Path, PathBuf};
use std::process::ExitCode;
use tcpwhy_report::analyze::AnalyzeReport;

pub const HELP: &str = "Wireshark shows the comments under Expert Information (Comments) and \
in the packet details; the display filter frame.comment contains \"tcpwhy \" selects the \
evidence frames. Frame numbers, times, interfaces and tcp.stream numbers are those of the \
input, so the frame numbers analyze prints point at the same packets in the output (not so \
with --evidence-only: there each frame's first comment names its original number).\n\n\
Examples:\n  tcpwhy annotate capture.pcap -o capture-annotated.pcapng\n  \
tcpwhy annotate --stream 3 --evidence-only --context 5 capture.pcap.gz -o ticket.pcapng\n  \
tcpwhy annotate a.pcap b.pcapng -o annotated/   (several inputs: a directory)\n  \
tcpdump -i eth0 -w - -c 100000 port 443 | tcpwhy annotate - -o out.pcapng";

#[derive(Args)]
pub struct AnnotateArgs {
    #[command(flatten)]
    pub analyze: AnalyzeArgs,
    /// The pcapng file to write (replaced if it exists); with several inputs, a directory
    /// (created if missing) that receives NAME.pcapng for each input NAME.pcap[.gz].
    #[arg(short = 'o', long = "output", value_name = "OUT")]
    pub output: PathBuf,
    /// Write only the evidence frames (and --context frames around each): the excerpt
    /// to attach to a ticket. Each frame's first comment names its number in the input.
    #[arg(long)]
    pub evidence_only: bool,
    /// With --evidence-only: also this many frames before and after each evidence frame.
    #[arg(
        long,
        value_name = "N",
        default_value_t = 0,
        requires = "evidence_only"
    )]
    pub context: u64,
}

pub fn run(a: AnnotateArgs) -> Result<ExitCode, String> {
    let mode = Mode {
        evidence_only: a.evidence_only,
        context: a.context,
    };
    crate::outputs::analyze_then_write(
        a.analyze,
        &a.output,
        "annotate",
        "pcapng",
        |r, input, out| write_one(r, input, out, mode),
    )
}

#[derive(Copy, Clone)]
struct Mode {
    evidence_only: bool,
    context: u64,
}

/// Writes the annotated copy of `input` (whose analysis is `r`) to `out`, through a
/// temporary file beside it so that a failed run leaves no half-written capture.
fn write_one(r: &AnalyzeReport<'_>, input: &str, out: &Path, mode: Mode) -> Result<String, String> {
    use tcpwhy_report::annotate::{evidence_comments, verdict_comment};
    let shown = &r.file.path;
    let reading = |e: std::io::Error| format!("{shown}: reading the findings back: {e}");
    let comments = evidence_comments(r).map_err(reading)?;
    let mut section = vec![verdict_comment(r).map_err(reading)?];
    // Evidence frames, sorted and unique, for --evidence-only.
    let mut evidence: Vec<u64> = comments.iter().map(|(f, _)| *f).collect();
    evidence.dedup();
    if mode.evidence_only {
        section.push(format!(
            "Only the evidence frames of {shown} (and {} frame(s) before and after each): \
             frame numbers differ from the original capture's; each frame's first comment \
             names its original number.",
            mode.context
        ));
    }

    let tmp = crate::outputs::temp_beside(out, ".tcpwhy-annotate-")?;
    let mut cap = tcpwhy_pipeline::open(input)?;
    let mut w = std::io::BufWriter::new(tmp.as_file());
    let mut next_comment = 0;
    let mut next_evidence = 0;
    let mut frame = |f: &tcpwhy_capture::Frame<'_>, add: &mut Vec<String>| {
        let n = f.number;
        if mode.evidence_only {
            while evidence
                .get(next_evidence)
                .is_some_and(|&e| e.saturating_add(mode.context) < n)
            {
                next_evidence += 1;
            }
            let near = evidence
                .get(next_evidence)
                .is_some_and(|&e| e <= n.saturating_add(mode.context));
            if !near {
                return false;
            }
            add.push(format!("original frame {n} of {shown}"));
        }
        while comments.get(next_comment).is_some_and(|(e, _)| *e < n) {
            next_comment += 1;
        }
        while let Some((_, c)) = comments.get(next_comment).filter(|(e, _)| *e == n) {
            add.push(c.clone());
            next_comment += 1;
        }
        true
    };
    let writing = |e: std::io::Error| format!("{}: writing: {e}", out.display());
    let done = tcpwhy_capture::annotate::write_pcapng(&mut cap, &mut w, &section, &mut frame)
        .map_err(writing)?;
    w.flush().map_err(writing)?;
    drop(w);
    tmp.persist(out)
        .map_err(|e| format!("{}: {}", out.display(), e.error))?;
    if let Some(e) = &done.error {
        eprintln!(
            "tcpwhy: warning: {shown}: {e}; {} holds the {} frames before it",
            out.display(),
            done.frames_read
        );
    }
    let mut summary = format!(
        "{} of {} frames, {} comment(s) on {} evidence frame(s)",
        done.frames_written,
        done.frames_read,
        done.comments,
        evidence.len()
    );
    if done.comments_not_placed > 0 {
        summary += &format!(
            " ({} comment(s) not placed: Simple Packet Blocks have no room for them)",
            done.comments_not_placed
        );
    }
    Ok(summary)
}
