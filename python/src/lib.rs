//! `tcpwhy._native`: the Python binding's Rust half. Each function runs one pass of
//! `tcpwhy_pipeline` over a capture with the GIL released and returns the JSON document
//! the CLI prints for that file (`tcpwhy flows|analyze --format json FILE`), written by
//! the same `tcpwhy_report` writers, with the lines the CLI would print on standard
//! error. The Arrow tables are built from that document in Python (tcpwhy/_tables.py),
//! so the package and the CLI cannot disagree: there is one pass and one writer.

use pyo3::create_exception;
use pyo3::exceptions::{PyException, PyValueError};
use pyo3::prelude::*;
use std::path::Path;
use tcpwhy_pipeline::{FileReport, Options};
use tcpwhy_report::flows;

create_exception!(
    _native,
    TcpwhyError,
    PyException,
    "A capture tcpwhy could not analyse; the message is the line `tcpwhy` prints after \
     \"tcpwhy: \" for the same file (exit status 2)."
);

/// The JSON document of one file and the lines the CLI prints on standard error for it
/// (`warning: …`, `note: …`), in the CLI's order.
type Document = (String, Vec<String>);

/// `tcpwhy flows --format json PATH`: `(document, notes)`. Raises `TcpwhyError` where the
/// CLI exits 2 (unreadable, not a capture, no frame readable as TCP).
#[pyfunction]
#[pyo3(signature = (path, threads = 0))]
fn flows_json(py: Python<'_>, path: String, threads: usize) -> PyResult<Document> {
    py.detach(|| flows_document(&path, threads))
        .map_err(TcpwhyError::new_err)
}

/// `tcpwhy analyze --format json --min-cost MIN_COST [--vantage V] [--host DIR]… PATH`:
/// `(document, notes)`. Raises `ValueError` for a bad `min_cost` or `vantage` (the CLI's
/// usage errors) and `TcpwhyError` where the CLI exits 2.
#[pyfunction]
#[pyo3(signature = (path, min_cost = "1ms", hosts = Vec::new(), vantage = "auto", threads = 0))]
fn analyze_json(
    py: Python<'_>,
    path: String,
    min_cost: &str,
    hosts: Vec<String>,
    vantage: &str,
    threads: usize,
) -> PyResult<Document> {
    let min_cost_ns =
        tcpwhy_report::units::parse_duration_ns(min_cost).map_err(PyValueError::new_err)?;
    let vantage = match vantage {
        "auto" => None,
        "client" => Some(tcpwhy_track::Vantage::Client),
        "server" => Some(tcpwhy_track::Vantage::Server),
        v => {
            return Err(PyValueError::new_err(format!(
                "vantage must be \"auto\", \"client\" or \"server\", not {v:?}"
            )))
        }
    };
    py.detach(|| analyze_document(&path, min_cost_ns, &hosts, vantage, threads))
        .map_err(TcpwhyError::new_err)
}

/// The minimum cost as nanoseconds, parsed as `--min-cost` is (exposed for tests and for
/// the fleet driver's argument checks).
#[pyfunction]
fn duration_ns(s: &str) -> PyResult<u64> {
    tcpwhy_report::units::parse_duration_ns(s).map_err(PyValueError::new_err)
}

/// No progress bar (libraries never touch the terminal), the default spill budget.
fn options(threads: usize) -> Options<'static> {
    Options {
        threads,
        ..Options::default()
    }
}

/// What the CLI says on standard error about a file after its pass (`report_skips` in
/// src/cli.rs): `Err` with its error line when no frame could be analysed (exit 2).
fn skip_notes(file: &FileReport, notes: &mut Vec<String>) -> Result<(), String> {
    for h in flows::cut_lines(file) {
        notes.push(format!("warning: {h}"));
    }
    if let Some(t) = flows::time_line(file) {
        notes.push(format!("warning: {t}"));
    }
    if let Some(why) = flows::nothing_analysed(file) {
        return Err(why);
    }
    if let Some(line) = flows::skip_line(file) {
        notes.push(format!("note: {line}"));
    }
    Ok(())
}

fn flows_document(path: &str, threads: usize) -> Result<Document, String> {
    let file = tcpwhy_pipeline::flows(path, &options(threads))?;
    let mut notes = Vec::new();
    skip_notes(&file, &mut notes)?;
    if let Some(e) = &file.error {
        notes.push(format!(
            "warning: {path}: {} (read {} frames before it)",
            e.message, file.frames
        ));
    }
    let json_threads = match threads {
        0 => std::thread::available_parallelism().map_or(1, |n| n.get()),
        n => n,
    };
    let mut out = Vec::new();
    flows::write_json_threads(std::slice::from_ref(&file), &mut out, json_threads)
        .map_err(|e| format!("{path}: writing the connections: {e}"))?;
    Ok((utf8(out)?, notes))
}

fn analyze_document(
    path: &str,
    min_cost_ns: u64,
    hosts: &[String],
    vantage: Option<tcpwhy_track::Vantage>,
    threads: usize,
) -> Result<Document, String> {
    use tcpwhy_report::analyze::{write_json, AnalyzeReport, JsonRender};
    let mut views = Vec::new();
    for dir in hosts {
        let (hs, _) = tcpwhy_hoststate::HostState::read_bundle_checked(Path::new(dir))?;
        views.push((dir.clone(), tcpwhy_detect::host::HostView::from_state(&hs)));
    }
    let config = tcpwhy_detect::Config {
        vantage,
        keep_exchanges: false,
        ..Default::default()
    };
    let opts = options(threads);
    // As the CLI does: without host bundles the findings are rendered to JSON during the
    // pass, on its threads; with them, when written (the join changes them).
    let (file, findings, _) = if views.is_empty() {
        tcpwhy_pipeline::analyze_rendered(path, &opts, &config, &JsonRender)?
    } else {
        tcpwhy_pipeline::analyze(path, &opts, &config)?
    };
    let mut notes = Vec::new();
    skip_notes(&file, &mut notes)?;
    let keep = |_: u64, _: &[tcpwhy_track::Endpoint; 2]| true;
    let report = AnalyzeReport {
        file,
        findings,
        keep: &keep,
        min_cost_ns,
        exchanges: None,
        hosts: &views,
    };
    let mut out = Vec::new();
    write_json(std::slice::from_ref(&report), &mut out)
        .map_err(|e| format!("{path}: writing the findings: {e}"))?;
    Ok((utf8(out)?, notes))
}

fn utf8(bytes: Vec<u8>) -> Result<String, String> {
    String::from_utf8(bytes).map_err(|e| format!("the JSON document is not UTF-8: {e}"))
}

#[pymodule]
fn _native(m: &Bound<'_, PyModule>) -> PyResult<()> {
    m.add_function(wrap_pyfunction!(flows_json, m)?)?;
    m.add_function(wrap_pyfunction!(analyze_json, m)?)?;
    m.add_function(wrap_pyfunction!(duration_ns, m)?)?;
    m.add("TcpwhyError", m.py().get_type::<TcpwhyError>())?;
    m.add("__version__", env!("CARGO_PKG_VERSION"))?;
    Ok(())
}
