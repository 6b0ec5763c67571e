//! `tcpwhy report`'s page as a browser draws it (issue 14): the lab captures' pages opened in
//! the system Chromium, read back through the page's test hook (docs/report.md, "Page
//! structure for tests") rather than from pixels. The page's data itself is tests/report.rs.
//!
//! Per page: no console error, log error or uncaught exception; one plot per finding that
//! has one; every evidence frame drawn at the time and relative sequence (or ACK) number
//! tshark shows for that frame; zoom, wheel zoom and pan move the x range; the flows table
//! sorts on a header click. A screenshot of each page goes to
//! target/report-screenshots/NAME.png.
//!
//! Without /usr/bin/chromium the test passes with a note (CI installs it); without tshark
//! the evidence positions are not compared.

#[path = "common/cdp.rs"]
mod cdp;

use cdp::Browser;
use serde_json::{json, Value};
use std::collections::HashMap;
use std::path::{Path, PathBuf};
use std::process::Command;

const CHROMIUM: &str = "/usr/bin/chromium";

/// The lab captures (client side) whose pages are opened, with `tcpwhy report`'s extra
/// arguments, by what they show: Nagle with delayed ACKs, a window without scaling,
/// reordering with SACK and D-SACK, slow start restarting after idle, a zero window, and
/// three connections (for sorting) with five findings of which two get a plot (for the
/// cards without one).
const CASES: &[(&str, &[&str])] = &[
    ("nagle-delayed-ack", &[]),
    ("no-window-scaling", &[]),
    ("reordering", &[]),
    ("idle-restart-cubic", &[]),
    ("slow-reader", &[]),
    ("idle-close", &["--max-plots", "2"]),
];

/// The page is readable at this width (the issue's requirement); screenshots are this wide.
const WIDTH: u32 = 1280;

/// Times in the page's data are seconds with microsecond precision; tshark prints
/// nanoseconds. Half a microsecond of rounding, and a little for the float.
const TIME_TOLERANCE_S: f64 = 0.6e-6;

#[test]
fn report_pages_draw_in_chromium() {
    if !Path::new(CHROMIUM).exists() {
        println!("note: skipped: chromium not installed");
        return;
    }
    let tshark = Command::new("tshark").arg("--version").output().is_ok();
    if !tshark {
        println!("note: tshark not installed: evidence positions are not compared with it");
    }
    let scratch = tempfile::tempdir().expect("temp dir");
    let shots = screenshot_dir();
    let mut tab = Browser::launch(Path::new(CHROMIUM), WIDTH, 1000)
        .unwrap_or_else(|e| panic!("launching chromium: {e}"));

    // Every case runs, so one failure does not hide another's.
    let mut failures = Vec::new();
    for &(name, args) in CASES {
        tab.take_problems();
        if let Err(e) = check_page(&mut tab, name, args, scratch.path(), &shots, tshark) {
            failures.push(format!("{name}: {e}"));
        }
    }
    assert!(failures.is_empty(), "{}", failures.join("\n"));
}

fn screenshot_dir() -> PathBuf {
    // CARGO_TARGET_TMPDIR is TARGET/tmp: the screenshots go beside it, where CI collects them.
    let tmp = Path::new(env!("CARGO_TARGET_TMPDIR"));
    let d = tmp.parent().unwrap_or(tmp).join("report-screenshots");
    std::fs::create_dir_all(&d).expect("screenshot dir");
    d
}

fn lab(name: &str) -> PathBuf {
    Path::new(env!("CARGO_MANIFEST_DIR"))
        .join("examples/lab")
        .join(name)
        .join("client.pcap")
}

/// `tcpwhy report ARGS CAPTURE -o DIR/NAME.html`: analyze's exit status, 0 or 1 (findings).
fn write_report(args: &[&str], capture: &Path, out: &Path) -> Result<(), String> {
    let o = Command::new(env!("CARGO_BIN_EXE_tcpwhy"))
        .arg("report")
        .args(args)
        .arg(capture)
        .arg("-o")
        .arg(out)
        .output()
        .map_err(|e| format!("running tcpwhy: {e}"))?;
    match o.status.code() {
        Some(0 | 1) if out.exists() => Ok(()),
        _ => Err(format!(
            "tcpwhy report exited {:?}: {}",
            o.status.code(),
            String::from_utf8_lossy(&o.stderr)
        )),
    }
}

fn load(tab: &mut Browser, page: &Path) -> Result<(), String> {
    tab.navigate(&format!("file://{}", page.display()))?;
    // The page sets the flag once it is built, even when part of it failed.
    js(
        tab,
        "new Promise((ready) => { const check = () => document.body && document.body.dataset.ready === '1' \
         ? ready(true) : requestAnimationFrame(check); check(); })",
    )
    .map(|_| ())
    .map_err(|e| format!("the page never became ready: {e}"))
}

/// Evaluates `expr` in the page, awaiting it if it is a promise, and reads back its
/// value as JSON (undefined: null). Each call is a round trip to the browser, so a check
/// is one call where it can be.
fn js(tab: &mut Browser, expr: &str) -> Result<Value, String> {
    let r = tab
        .evaluate(&format!(
            "(async () => JSON.stringify(await ({expr})) ?? 'null')()"
        ))
        .map_err(|e| format!("evaluating {expr}: {e}"))?;
    match r {
        Value::String(s) => serde_json::from_str(&s).map_err(|e| format!("{expr}: {e}")),
        other => Err(format!("{expr} gave {other:?}")),
    }
}

fn check_page(
    tab: &mut Browser,
    name: &str,
    args: &[&str],
    scratch: &Path,
    shots: &Path,
    tshark: bool,
) -> Result<(), String> {
    let capture = lab(name);
    let page = scratch.join(format!("{name}.html"));
    write_report(args, &capture, &page)?;
    load(tab, &page)?;

    // Every plot drawn, then the page's state and each plotted evidence frame's point.
    let state = js(
        tab,
        r#"(() => {
            const render = tcpwhyReport.renderAll();
            const plotted = tcpwhyReport.data.plots.findings;
            return {
                render,
                findings: tcpwhyReport.data.file.findings.length,
                plotted,
                hooked: Object.keys(tcpwhyReport.plots).map(Number),
                cards: Array.from(document.querySelectorAll("[data-finding]"), (c) => ({
                    i: Number(c.dataset.finding),
                    canvases: c.querySelectorAll("canvas").length,
                    noplot: c.querySelector(".noplot")?.textContent ?? null,
                })),
                conns: Array.from(document.querySelectorAll(".conn[data-stream]"), (c) => Number(c.dataset.stream)),
                connPlots: Object.keys(tcpwhyReport.connPlots).map(Number),
                errors: tcpwhyReport.errors,
                warnings: tcpwhyReport.warnings,
                evidence: plotted.map((i) => {
                    const info = tcpwhyReport.plotInfo(i);
                    return {
                        i,
                        initial: info && info.initial,
                        points: info ? info.evidence.map((e) => ({ frame: e.frame, ...tcpwhyReport.point(i, e.frame) })) : [],
                    };
                }),
            };
        })()"#,
    )?;
    let mut errs = Vec::new();
    if state["errors"] != Value::Array(vec![]) || state["render"]["errors"] != 0 {
        errs.push(format!("the page reported errors: {}", state["errors"]));
    }
    // A data note is the page finding the data off its contract (docs/report.md).
    if state["warnings"] != Value::Array(vec![]) {
        errs.push(format!("data notes: {}", state["warnings"]));
    }

    // One plot per card that has one, none on the others.
    let plotted: Vec<u64> = ints(&state["plotted"]);
    if plotted.is_empty() {
        errs.push("no finding has a plot: the case tests nothing".into());
    }
    let mut hooked = ints(&state["hooked"]);
    hooked.sort_unstable();
    let mut want = plotted.clone();
    want.sort_unstable();
    if hooked != want {
        errs.push(format!(
            "plots in the hook {hooked:?}, plots.findings {want:?}"
        ));
    }
    let cards = state["cards"].as_array().cloned().unwrap_or_default();
    if Some(cards.len() as u64) != state["findings"].as_u64() {
        errs.push(format!(
            "{} cards for {} findings",
            cards.len(),
            state["findings"]
        ));
    }
    for c in &cards {
        let i = c["i"].as_u64().unwrap_or(u64::MAX);
        let canvases = c["canvases"].as_u64().unwrap_or(0);
        let expected = u64::from(plotted.contains(&i));
        if canvases != expected {
            errs.push(format!(
                "card {i}: {canvases} canvas(es), expected {expected}"
            ));
        }
        // Here the only reason a finding has no plot is --max-plots.
        let why = c["noplot"].as_str().unwrap_or("");
        if expected == 0 && !why.contains("beyond --max-plots") {
            errs.push(format!("card {i} has no plot and says {why:?}"));
        }
    }
    let mut conns = ints(&state["conns"]);
    let mut conn_plots = ints(&state["connPlots"]);
    conns.sort_unstable();
    conn_plots.sort_unstable();
    if conns.is_empty() || conns != conn_plots {
        errs.push(format!(
            "connection sections {conns:?}, their plots {conn_plots:?}"
        ));
    }

    // Evidence frames inside the initial view, where the capture has them.
    let mut points = Vec::new();
    for ev in state["evidence"].as_array().into_iter().flatten() {
        let i = ev["i"].as_u64().unwrap_or(u64::MAX);
        let (lo, hi) = (
            ev["initial"][0].as_f64().unwrap_or(f64::NAN),
            ev["initial"][1].as_f64().unwrap_or(f64::NAN),
        );
        let ps = ev["points"].as_array().cloned().unwrap_or_default();
        if ps.is_empty() {
            errs.push(format!("finding {i}: no evidence frame in its plot"));
        }
        for p in ps {
            let x = p["x"].as_f64().unwrap_or(f64::NAN);
            let f = p["frame"].as_u64().unwrap_or(0);
            if !(lo..=hi).contains(&x) {
                errs.push(format!(
                    "finding {i}: frame {f} at {x} s is outside the initial range {lo}–{hi}"
                ));
            }
            points.push((i, f, p));
        }
    }
    if tshark {
        let frames: Vec<u64> = points.iter().map(|(_, f, _)| *f).collect();
        let truth = tshark_frames(&capture, &frames)?;
        for (i, f, p) in &points {
            let Some(t) = truth.get(f) else {
                errs.push(format!("finding {i}: tshark has no frame {f}"));
                continue;
            };
            let x = p["x"].as_f64().unwrap_or(f64::NAN);
            if (x - t.time).abs() > TIME_TOLERANCE_S {
                errs.push(format!(
                    "finding {i}: frame {f} drawn at {x} s, tshark says {} s",
                    t.time
                ));
            }
            let (what, want) = match p["src"].as_str() {
                Some("segment") => ("seq", t.seq),
                Some("ack") => ("ack", t.ack),
                other => {
                    errs.push(format!("finding {i}: frame {f} is a {other:?} point"));
                    continue;
                }
            };
            if p["y"].as_u64() != want {
                errs.push(format!(
                    "finding {i}: frame {f} drawn at {what} {}, tshark says {want:?}",
                    p["y"]
                ));
            }
        }
    }

    if let Some(&i) = plotted.first() {
        errs.extend(check_zoom(tab, i)?);
    }
    errs.extend(check_sort(tab)?);

    // The screenshot shows the page as a reader first sees it, every plot drawn.
    screenshot(tab, &shots.join(format!("{name}.png")))?;

    errs.extend(tab.take_problems());
    if errs.is_empty() {
        Ok(())
    } else {
        Err(errs.join("\n  "))
    }
}

fn ints(v: &Value) -> Vec<u64> {
    v.as_array()
        .map(|a| a.iter().filter_map(Value::as_u64).collect())
        .unwrap_or_default()
}

/// A frame as tshark shows it: time since the first frame, relative seq and ack.
struct Shown {
    time: f64,
    seq: Option<u64>,
    ack: Option<u64>,
}

fn tshark_frames(capture: &Path, frames: &[u64]) -> Result<HashMap<u64, Shown>, String> {
    let list: Vec<String> = frames.iter().map(u64::to_string).collect();
    let o = Command::new("tshark")
        .arg("-r")
        .arg(capture)
        .args(["-Y", &format!("frame.number in {{{}}}", list.join(", "))])
        .args([
            "-T",
            "fields",
            "-e",
            "frame.number",
            "-e",
            "frame.time_relative",
        ])
        .args(["-e", "tcp.seq", "-e", "tcp.ack"])
        .output()
        .map_err(|e| format!("tshark: {e}"))?;
    if !o.status.success() {
        return Err(format!("tshark: {}", String::from_utf8_lossy(&o.stderr)));
    }
    let mut out = HashMap::new();
    for line in String::from_utf8_lossy(&o.stdout).lines() {
        let f: Vec<&str> = line.split('\t').collect();
        let (Some(n), Some(t)) = (
            f.first().and_then(|s| s.parse().ok()),
            f.get(1).and_then(|s| s.parse().ok()),
        ) else {
            continue;
        };
        out.insert(
            n,
            Shown {
                time: t,
                seq: f.get(2).and_then(|s| s.parse().ok()),
                ack: f.get(3).and_then(|s| s.parse().ok()),
            },
        );
    }
    Ok(out)
}

/// setScale, ctrl+wheel and shift+drag each move finding `i`'s x range, and a plain wheel
/// (scrolling the page past the plot) does not. uPlot
/// applies a scale change in a microtask: each step is read after a turn of the event loop.
fn check_zoom(tab: &mut Browser, i: u64) -> Result<Vec<String>, String> {
    let r = js(
        tab,
        &format!(
            r#"(async () => {{
                const u = tcpwhyReport.plots[{i}];
                const turn = () => new Promise((done) => setTimeout(done, 0));
                const x = () => [u.scales.x.min, u.scales.x.max];
                const box = u.over.getBoundingClientRect();
                const at = {{ clientX: box.left + box.width / 2, clientY: box.top + box.height / 2, bubbles: true, cancelable: true }};
                const before = x();
                const mid = (before[0] + before[1]) / 2, q = (before[1] - before[0]) / 4;
                const want = [mid - q, mid + q];
                u.setScale("x", {{ min: want[0], max: want[1] }});
                await turn();
                const set = x();
                // A plain wheel scrolls the page; ctrl+wheel (a pinch) zooms.
                u.over.dispatchEvent(new WheelEvent("wheel", {{ ...at, deltaY: -100 }}));
                await turn();
                const scrolled = x();
                u.over.dispatchEvent(new WheelEvent("wheel", {{ ...at, deltaY: -100, ctrlKey: true }}));
                await turn();
                const wheeled = x();
                u.over.dispatchEvent(new MouseEvent("mousedown", {{ ...at, button: 0, shiftKey: true }}));
                window.dispatchEvent(new MouseEvent("mousemove", {{ ...at, clientX: at.clientX + 100, shiftKey: true }}));
                window.dispatchEvent(new MouseEvent("mouseup", {{ ...at, clientX: at.clientX + 100 }}));
                await turn();
                const panned = x();
                tcpwhyReport.resetPlot({i});
                await turn();
                return {{ want, set, scrolled, wheeled, panned, reset: x(), initial: tcpwhyReport.plotInfo({i}).initial }};
            }})()"#
        ),
    )?;
    let pair = |k: &str| -> (f64, f64) {
        (
            r[k][0].as_f64().unwrap_or(f64::NAN),
            r[k][1].as_f64().unwrap_or(f64::NAN),
        )
    };
    let (want, set, wheeled, panned) = (pair("want"), pair("set"), pair("wheeled"), pair("panned"));
    let scrolled = pair("scrolled");
    let (reset, initial) = (pair("reset"), pair("initial"));
    let close = |a: f64, b: f64| (a - b).abs() <= 1e-9 * a.abs().max(1.0);
    let mut errs = Vec::new();
    if !(close(set.0, want.0) && close(set.1, want.1)) {
        errs.push(format!(
            "setScale asked for {want:?}, the plot shows {set:?}"
        ));
    }
    if !(close(scrolled.0, set.0) && close(scrolled.1, set.1)) {
        errs.push(format!(
            "a plain wheel (page scroll) zoomed {set:?} to {scrolled:?}"
        ));
    }
    // Ctrl+wheel zooms in about the pointer: a narrower range that still holds the middle.
    let mid = (set.0 + set.1) / 2.0;
    if !(wheeled.1 - wheeled.0 < set.1 - set.0 && wheeled.0 < mid && mid < wheeled.1) {
        errs.push(format!("ctrl+wheel over {set:?} gave {wheeled:?}"));
    }
    // Dragging 100 px to the right shows earlier times: both ends move back as much.
    let shift = (wheeled.0 - panned.0, wheeled.1 - panned.1);
    if !(shift.0 > 0.0 && close(shift.0, shift.1)) {
        errs.push(format!("shift+drag moved {wheeled:?} to {panned:?}"));
    }
    if !(close(reset.0, initial.0) && close(reset.1, initial.1)) {
        errs.push(format!(
            "reset gave {reset:?}, the initial range is {initial:?}"
        ));
    }
    Ok(errs)
}

/// A click on the duration header sorts the rows ascending, a second click descending.
fn check_sort(tab: &mut Browser) -> Result<Vec<String>, String> {
    let r = js(
        tab,
        r#"[1, 2].map(() => {
            document.querySelector("th[data-key='duration'] button").click();
            const rows = tcpwhyReport.data.flows.connections;
            return {
                sort: document.querySelector("th[data-key='duration']").getAttribute("aria-sort"),
                durations: tcpwhyReport.flowsOrder().map((s) => rows.find((r) => r.stream === s).duration_ms),
            };
        })"#,
    )?;
    let mut errs = Vec::new();
    for (k, order) in ["ascending", "descending"].iter().enumerate() {
        let sort = &r[k]["sort"];
        if sort != order {
            errs.push(format!(
                "after click {} the duration column says {sort}",
                k + 1
            ));
        }
        let d: Vec<f64> = r[k]["durations"]
            .as_array()
            .map(|a| a.iter().filter_map(Value::as_f64).collect())
            .unwrap_or_default();
        let sorted = d
            .windows(2)
            .all(|w| if k == 0 { w[0] <= w[1] } else { w[0] >= w[1] });
        if d.is_empty() || !sorted {
            errs.push(format!("after click {} the durations are {d:?}", k + 1));
        }
    }
    Ok(errs)
}

/// The whole page, at the test's width.
fn screenshot(tab: &mut Browser, out: &Path) -> Result<(), String> {
    let height = js(tab, "document.documentElement.scrollHeight")?
        .as_f64()
        .unwrap_or(1000.0);
    let png = tab
        .call(
            "Page.captureScreenshot",
            json!({
                "format": "png",
                "clip": { "x": 0.0, "y": 0.0, "width": f64::from(WIDTH), "height": height, "scale": 1.0 },
                "fromSurface": true,
                "captureBeyondViewport": true,
            }),
        )
        .map_err(|e| format!("screenshot: {e}"))?;
    let data = png["data"].as_str().ok_or("screenshot: no data")?;
    let bytes = base64_decode(data)?;
    std::fs::write(out, bytes).map_err(|e| format!("writing {}: {e}", out.display()))
}

/// CDP sends screenshots as base64; a decoder of a few lines spares the test a
/// dependency.
fn base64_decode(s: &str) -> Result<Vec<u8>, String> {
    let mut out = Vec::with_capacity(s.len() * 3 / 4);
    let (mut acc, mut bits) = (0u32, 0u32);
    for c in s.bytes() {
        let v = match c {
            b'A'..=b'Z' => c - b'A',
            b'a'..=b'z' => c - b'a' + 26,
            b'0'..=b'9' => c - b'0' + 52,
            b'+' => 62,
            b'/' => 63,
            b'=' | b'\n' | b'\r' => continue,
            _ => return Err(format!("screenshot data: not base64 ({c})")),
        };
        acc = (acc << 6) | u32::from(v);
        bits += 6;
        if bits >= 8 {
            bits -= 8;
            out.push((acc >> bits) as u8);
        }
    }
    Ok(out)
}
