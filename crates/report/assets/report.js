// tcpwhy report: reads the JSON in #tcpwhy-data and draws the page (issue 14, docs/report.md).
"use strict";

(function () {
  // ---------------------------------------------------------------------------------------
  // Defensive readers. The data is a contract, but a page that throws shows nothing: every
  // field goes through one of these, and `null`/missing is shown as "not known".

  const NOT_KNOWN = "not known";
  const isNum = (v) => typeof v === "number" && Number.isFinite(v);
  const arr = (v) => (Array.isArray(v) ? v : []);
  const obj = (v) => (v !== null && typeof v === "object" && !Array.isArray(v) ? v : {});
  const text = (v) => (typeof v === "string" ? v : v == null ? null : String(v));

  // Problems with the data itself (not bugs of the page): shown at the bottom and kept in
  // the test hook, so a contract mismatch is visible instead of silently worked around.
  const warnings = [];
  const warn = (msg) => {
    if (!warnings.includes(msg)) warnings.push(msg);
  };

  // Columns of one record set (docs/report.md: arrays are columns of equal length). `n` is
  // the shortest required column, so a short column drops rows instead of reading past it.
  function columns(o, required, optional, where) {
    const src = obj(o);
    const out = { n: Infinity };
    for (const k of required) {
      out[k] = arr(src[k]);
      out.n = Math.min(out.n, out[k].length);
    }
    if (out.n === Infinity) out.n = 0;
    for (const k of optional || []) out[k] = arr(src[k]);
    const all = required.concat(optional || []);
    for (const k of all) {
      if (src[k] !== undefined && out[k].length !== out.n && out[k].length !== 0) {
        warn(`${where}: column ${k} has ${out[k].length} entries, others ${out.n}`);
      }
    }
    return out;
  }
  const at = (col, i) => {
    const v = col[i];
    return v === undefined ? null : v;
  };

  // ---------------------------------------------------------------------------------------
  // Formatting: numbers the way the text report writes them (en-US grouping, ms, SI units).

  const intFmt = new Intl.NumberFormat("en-US", { maximumFractionDigits: 0 });
  const fmtInt = (v) => (isNum(v) ? intFmt.format(v) : NOT_KNOWN);
  function fmtMs(v) {
    if (!isNum(v)) return NOT_KNOWN;
    const a = Math.abs(v);
    // Grouped when whole (a busy capture's verdict sums to millions of ms).
    if (a >= 100) return `${intFmt.format(Math.round(v))} ms`;
    const digits = a >= 10 ? 1 : a >= 1 ? 2 : 3;
    return `${v.toFixed(digits)} ms`;
  }
  const fmtPct = (v) => (isNum(v) ? `${Math.round(v * 100)} %` : NOT_KNOWN);
  function fmtSi(v, unit) {
    if (!isNum(v)) return NOT_KNOWN;
    const a = Math.abs(v);
    const [div, p] = a >= 1e9 ? [1e9, "G"] : a >= 1e6 ? [1e6, "M"] : a >= 1e3 ? [1e3, "k"] : [1, ""];
    const x = v / div;
    const digits = div === 1 ? 0 : Math.abs(x) >= 100 ? 0 : Math.abs(x) >= 10 ? 1 : 2;
    return `${x.toFixed(digits)} ${p}${unit}`;
  }
  const fmtBytes = (v) => (isNum(v) && Math.abs(v) < 1000 ? `${fmtInt(v)} B` : fmtSi(v, "B"));
  // Seconds since the first frame, to µs like Wireshark's frame.time_relative.
  const fmtSec = (v) => (isNum(v) ? `${v.toFixed(6)} s` : NOT_KNOWN);

  // Axis ticks: as many decimals as the tick spacing needs, no more.
  function decimals(incr) {
    if (!isNum(incr) || incr <= 0) return 3;
    let d = 0;
    while (d < 9 && Math.abs(Math.round(incr * 10 ** d) - incr * 10 ** d) > 1e-6 * incr * 10 ** d) d++;
    return d;
  }
  function secTicks(splits, incr) {
    const d = decimals(incr);
    return splits.map((v) => (isNum(v) ? v.toFixed(d) : ""));
  }
  function compactTicks(splits, incr) {
    const d = decimals(incr);
    return splits.map((v) => {
      if (!isNum(v)) return "";
      const a = Math.abs(v);
      if (a >= 1e9) return `${+(v / 1e9).toPrecision(4)}G`;
      if (a >= 1e6) return `${+(v / 1e6).toPrecision(4)}M`;
      if (a >= 1e4) return `${+(v / 1e3).toPrecision(4)}k`;
      return v.toFixed(d);
    });
  }

  // "s.ns since the epoch" strings (evidence times, `start`) differ by more than a double's
  // precision can hold at ns, so subtract them as integers.
  function epochNs(s) {
    const m = /^(-?)(\d+)(?:\.(\d{1,9}))?$/.exec(text(s) || "");
    if (!m) return null;
    const ns = BigInt(m[2]) * 1000000000n + BigInt((m[3] || "").padEnd(9, "0"));
    return m[1] ? -ns : ns;
  }
  function sinceStart(epoch, start) {
    const a = epochNs(epoch);
    const b = epochNs(start);
    return a === null || b === null ? null : Number(a - b) / 1e9;
  }

  // ---------------------------------------------------------------------------------------
  // DOM building: text always goes in as text nodes or attributes, never parsed as HTML
  // (paths, notes and addresses in the data are untrusted).

  function h(tag, props, ...kids) {
    const e = document.createElement(tag);
    for (const [k, v] of Object.entries(props || {})) {
      if (v == null || v === false) continue;
      if (k === "class") e.className = v;
      else if (k === "dataset") Object.assign(e.dataset, v);
      else if (k.startsWith("on")) e.addEventListener(k.slice(2), v);
      else e.setAttribute(k, v === true ? "" : String(v));
    }
    for (const kid of kids.flat(Infinity)) {
      if (kid == null || kid === false) continue;
      e.append(kid instanceof Node ? kid : String(kid));
    }
    return e;
  }
  const notKnown = () => h("span", { class: "nk" }, NOT_KNOWN);

  // Copies a Wireshark filter; the text stays selectable for when the clipboard is refused
  // (file:// pages in some browsers).
  function copyButton(getText, label) {
    const b = h("button", { type: "button", class: "copy", title: "Copy the Wireshark display filter" }, label || "copy");
    b.addEventListener("click", () => {
      const t = getText();
      const done = (ok) => {
        b.textContent = ok ? "copied" : "select it";
        setTimeout(() => (b.textContent = label || "copy"), 1200);
      };
      if (navigator.clipboard && navigator.clipboard.writeText) {
        navigator.clipboard.writeText(t).then(() => done(true), () => done(fallbackCopy(t)));
      } else {
        done(fallbackCopy(t));
      }
    });
    return b;
  }
  function fallbackCopy(t) {
    const ta = h("textarea", { class: "offscreen", readonly: true });
    ta.value = t;
    document.body.append(ta);
    ta.select();
    let ok = false;
    try {
      ok = document.execCommand("copy");
    } catch (_) {
      ok = false;
    }
    ta.remove();
    return ok;
  }

  // ---------------------------------------------------------------------------------------
  // Colours: one meaning per colour on every plot, defined once in report.css (so the
  // dark theme changes them in one place) and read here for the canvases.

  const COLOR_NAMES = [
    "fg", "muted", "grid", "orig", "retx", "spur", "ooo", "probe", "ack", "edge", "sack",
    "evidence", "evidence-bg", "summary", "rtt", "flight", "window", "throughput",
    "lim-rwnd", "lim-zero_window", "lim-sender", "lim-app",
  ];
  let C = {};
  function readColors() {
    const cs = getComputedStyle(document.documentElement);
    C = {};
    for (const n of COLOR_NAMES) C[n] = cs.getPropertyValue(`--c-${n}`).trim() || "#888";
  }

  // Segment classes, in drawing order (later ones on top), from the `kind` bits.
  const KIND = { retx: 1, spurious: 2, ooo: 4, fast: 8, zwp: 16, keepalive: 32, syn: 64, fin: 128, rst: 256, winfull: 512, evidence: 1024 };
  const SEG_CLASSES = [
    { key: "orig", label: "data" },
    { key: "probe", label: "probe / keep-alive" },
    { key: "ooo", label: "out of order" },
    { key: "retx", label: "retransmission" },
    { key: "spur", label: "spurious retransmission" },
  ];
  function segClass(kind) {
    const k = isNum(kind) ? kind : 0;
    if (k & KIND.spurious) return 4;
    if (k & KIND.retx) return 3;
    if (k & KIND.ooo) return 2;
    if (k & (KIND.zwp | KIND.keepalive)) return 1;
    return 0;
  }
  function kindNames(kind) {
    if (!isNum(kind)) return [];
    const names = [];
    if (kind & KIND.spurious) names.push("spurious retransmission");
    else if (kind & KIND.fast) names.push("fast retransmission");
    else if (kind & KIND.retx) names.push("retransmission");
    if (kind & KIND.ooo) names.push("out of order");
    if (kind & KIND.zwp) names.push("zero-window probe");
    if (kind & KIND.keepalive) names.push("keep-alive");
    if (kind & KIND.syn) names.push("SYN");
    if (kind & KIND.fin) names.push("FIN");
    if (kind & KIND.rst) names.push("RST");
    if (kind & KIND.winfull) names.push("window full");
    if (kind & KIND.evidence) names.push("evidence");
    return names;
  }

  const LIMITS = [
    { key: "rwnd", label: "receive window" },
    { key: "zero_window", label: "zero window" },
    { key: "sender", label: "sender (cwnd / send buffer)" },
    { key: "app", label: "application" },
  ];

  function swatch(color, shape, label) {
    return h("span", { class: "key" }, h("i", { class: `sw sw-${shape}`, style: `--sw:${color}` }), label);
  }
  function seqLegend() {
    return h(
      "div",
      { class: "legend" },
      SEG_CLASSES.map((c) => swatch(C[c.key], "bar", c.label)),
      swatch(C.ack, "line", "ACK"),
      swatch(C.edge, "dash", "receive-window edge (ACK + window)"),
      swatch(C.sack, "bar", "SACK block"),
      swatch(C.summary, "box", "summary (per column, outside the detail)"),
      swatch(C.evidence, "ring", "evidence frame")
    );
  }

  // ---------------------------------------------------------------------------------------
  // The data.

  const report = {
    data: null,
    errors: [],
    warnings,
    plots: {},
    connPlots: {},
    ready: false,
  };
  window.tcpwhyReport = report;

  function readData() {
    const node = document.getElementById("tcpwhy-data");
    try {
      return obj(JSON.parse(node ? node.textContent : "null"));
    } catch (e) {
      warn(`the page's data is not valid JSON: ${e.message}`);
      return {};
    }
  }

  // ---------------------------------------------------------------------------------------
  // The time-sequence model of one connection direction: every record (this side's
  // segments, the peer's ACKs, summary columns) as one row sorted by time, in uPlot's
  // column layout. Shared by every card that plots the same direction.

  const SRC = { segment: 0, ack: 1, summary: 2 };

  function seqModel(conn, dirKey) {
    const where = `stream ${conn.stream} ${dirKey}`;
    const d = obj(conn[dirKey]);
    const seg = columns(d.segments, ["t", "seq"], ["frame", "len", "kind"], `${where} segments`);
    const ack = columns(d.acks, ["t", "ack"], ["frame", "win", "sack"], `${where} acks`);
    const sum = columns(d.summary, ["t0", "t1"], ["seq_min", "seq_max", "ack_max", "edge_max", "packets"], `${where} summary`);

    const recs = [];
    for (let i = 0; i < seg.n; i++) if (isNum(seg.t[i]) && isNum(seg.seq[i])) recs.push([seg.t[i], SRC.segment, i]);
    for (let i = 0; i < ack.n; i++) if (isNum(ack.t[i]) && isNum(ack.ack[i])) recs.push([ack.t[i], SRC.ack, i]);
    for (let i = 0; i < sum.n; i++) {
      const t0 = sum.t0[i];
      const t1 = sum.t1[i];
      if (isNum(t0) && isNum(t1)) recs.push([(t0 + t1) / 2, SRC.summary, i]);
    }
    recs.sort((a, b) => a[0] - b[0] || a[1] - b[1] || a[2] - b[2]);

    const n = recs.length;
    const m = {
      conn,
      dirKey,
      n,
      x: new Array(n),
      lo: new Array(n), // segment seq / summary seq_min
      hi: new Array(n), // segment seq+len / summary seq_max
      ack: new Array(n), // ACK / summary ack_max
      edge: new Array(n), // ACK + window / summary edge_max
      src: new Uint8Array(n),
      idx: new Uint32Array(n),
      seg,
      acks: ack,
      sum,
      frameRow: new Map(), // frame -> row, for evidence and the test hook
      dataFrames: new Set(), // frames of this side's segments that carry data
      ackFrames: new Set(), // frames of the peer's ACKs
      dataBytes: 0,
    };
    for (let r = 0; r < n; r++) {
      const [x, s, i] = recs[r];
      m.x[r] = x;
      m.src[r] = s;
      m.idx[r] = i;
      m.lo[r] = m.hi[r] = m.ack[r] = m.edge[r] = null;
      if (s === SRC.segment) {
        const len = isNum(seg.len[i]) ? seg.len[i] : 0;
        m.lo[r] = seg.seq[i];
        m.hi[r] = seg.seq[i] + len;
        m.dataBytes += len;
        const f = at(seg.frame, i);
        if (isNum(f)) {
          m.frameRow.set(f, r);
          if (len > 0) m.dataFrames.add(f);
        }
      } else if (s === SRC.ack) {
        m.ack[r] = ack.ack[i];
        const w = at(ack.win, i);
        m.edge[r] = isNum(w) ? ack.ack[i] + w : null;
        const f = at(ack.frame, i);
        if (isNum(f)) {
          m.ackFrames.add(f);
          if (!m.frameRow.has(f)) m.frameRow.set(f, r);
        }
      } else {
        const lo = at(sum.seq_min, i);
        const hi = at(sum.seq_max, i);
        m.lo[r] = isNum(lo) ? lo : null;
        m.hi[r] = isNum(hi) ? hi : null;
        if (isNum(lo) && isNum(hi)) m.dataBytes += Math.max(0, hi - lo);
        const a = at(sum.ack_max, i);
        const e = at(sum.edge_max, i);
        m.ack[r] = isNum(a) ? a : null;
        m.edge[r] = isNum(e) ? e : null;
      }
    }
    m.data = [m.x, m.lo, m.hi, m.ack, m.edge];
    return m;
  }

  // The first row at or after time t (rows are sorted by x).
  function lowerBound(xs, t) {
    let lo = 0;
    let hi = xs.length;
    while (lo < hi) {
      const mid = (lo + hi) >> 1;
      if (xs[mid] < t) lo = mid + 1;
      else hi = mid;
    }
    return lo;
  }

  // What one row is, for the tooltip and the test hook.
  function rowInfo(m, r) {
    if (r == null || r < 0 || r >= m.n) return null;
    const i = m.idx[r];
    if (m.src[r] === SRC.segment) {
      return {
        src: "segment",
        frame: at(m.seg.frame, i),
        t: m.x[r],
        seq: m.lo[r],
        len: at(m.seg.len, i),
        kind: at(m.seg.kind, i),
      };
    }
    if (m.src[r] === SRC.ack) {
      return {
        src: "ack",
        frame: at(m.acks.frame, i),
        t: m.x[r],
        ack: m.ack[r],
        win: at(m.acks.win, i),
        edge: m.edge[r],
        sack: at(m.acks.sack, i),
      };
    }
    return {
      src: "summary",
      t0: at(m.sum.t0, i),
      t1: at(m.sum.t1, i),
      seq_min: m.lo[r],
      seq_max: m.hi[r],
      ack_max: m.ack[r],
      edge_max: m.edge[r],
      packets: at(m.sum.packets, i),
    };
  }

  // ---------------------------------------------------------------------------------------
  // Which connection and direction a finding's plot shows (docs/report.md): the direction
  // whose data the evidence frames belong to — a data segment votes for its sender, an ACK
  // for the direction it acknowledges; a tie goes to the direction with more data. Every
  // segment of the peer is also in `acks` (it acknowledges this side's data), so a frame
  // that carries data votes only as data; a SYN or FIN without data as its sender's.

  const modelCache = new WeakMap(); // ConnPlot -> direction -> model
  function modelFor(conn, dirKey) {
    if (!modelCache.has(conn)) modelCache.set(conn, {});
    const models = modelCache.get(conn);
    if (!models[dirKey]) models[dirKey] = seqModel(conn, dirKey);
    return models[dirKey];
  }

  const DIRS = ["client_to_server", "server_to_client"];
  const dirLabel = (conn, dirKey) =>
    dirKey === "client_to_server" ? `client → server (${conn.client || "?"} → ${conn.server || "?"})` : `server → client (${conn.server || "?"} → ${conn.client || "?"})`;

  function chooseDirection(conn, finding) {
    const models = DIRS.map((k) => modelFor(conn, k));
    const votes = [0, 0];
    for (const e of arr(finding.evidence)) {
      const f = obj(e).frame;
      let k = models.findIndex((m) => m.dataFrames.has(f));
      if (k < 0) k = models.findIndex((m) => m.ackFrames.has(f));
      if (k < 0) k = models.findIndex((m) => m.frameRow.has(f));
      if (k >= 0) votes[k]++;
    }
    let k;
    if (votes[0] !== votes[1]) k = votes[0] > votes[1] ? 0 : 1;
    else k = models[1].dataBytes > models[0].dataBytes ? 1 : 0;
    return models[k];
  }

  // ---------------------------------------------------------------------------------------
  // Zoom and pan, shared by every plot: uPlot's drag selects an x range; ctrl+wheel (or a
  // trackpad pinch, which the browser sends as one) zooms about the pointer, while the
  // plain wheel scrolls the page as anywhere else (a reader scrolling past a plot must not
  // be caught by it); shift+drag pans; double-click shows the whole connection.

  const WHEEL_STEP = 1.25;
  function attachZoomPan(u, bounds) {
    const over = u.over;
    const clamp = (min, max) => {
      const [b0, b1] = bounds();
      const span = Math.min(max - min, b1 - b0);
      if (min < b0) [min, max] = [b0, b0 + span];
      if (max > b1) [min, max] = [b1 - span, b1];
      return [min, max];
    };
    over.addEventListener(
      "wheel",
      (e) => {
        if (!e.ctrlKey && !e.metaKey) return;
        const { min, max } = u.scales.x;
        if (!isNum(min) || !isNum(max)) return;
        e.preventDefault();
        const rect = over.getBoundingClientRect();
        const at = u.posToVal(e.clientX - rect.left, "x");
        const f = e.deltaY < 0 ? 1 / WHEEL_STEP : WHEEL_STEP;
        const [a, b] = clamp(at - (at - min) * f, at + (max - at) * f);
        if (b > a) u.setScale("x", { min: a, max: b });
      },
      { passive: false }
    );
    // Capture phase on the root, so uPlot's own drag-to-zoom never sees a shift+drag.
    u.root.addEventListener(
      "mousedown",
      (e) => {
        if (!e.shiftKey || e.button !== 0 || !over.contains(e.target)) return;
        e.stopPropagation();
        e.preventDefault();
        const x0 = e.clientX;
        const { min, max } = u.scales.x;
        const perPx = (max - min) / Math.max(1, over.clientWidth);
        over.classList.add("panning");
        const move = (ev) => {
          const d = (ev.clientX - x0) * perPx;
          const [a, b] = clamp(min - d, max - d);
          u.setScale("x", { min: a, max: b });
        };
        const up = () => {
          over.classList.remove("panning");
          window.removeEventListener("mousemove", move);
          window.removeEventListener("mouseup", up);
        };
        window.addEventListener("mousemove", move);
        window.addEventListener("mouseup", up);
      },
      true
    );
  }

  const xAxis = (label) => ({
    label,
    labelSize: 18,
    stroke: () => C.muted,
    grid: { stroke: () => C.grid, width: 1 },
    ticks: { stroke: () => C.grid, width: 1 },
    values: (u, splits, ai, space, incr) => secTicks(splits, incr),
  });
  const yAxis = (label, values, size) => ({
    label,
    labelSize: 18,
    size: size || 60,
    stroke: () => C.muted,
    grid: { stroke: () => C.grid, width: 1 },
    ticks: { stroke: () => C.grid, width: 1 },
    values: values || ((u, splits, ai, space, incr) => compactTicks(splits, incr)),
  });

  // ---------------------------------------------------------------------------------------
  // The time-sequence (Stevens / tcptrace) plot of one finding.

  const SEQ_HEIGHT = 380;
  const PICK_PX = 8; // how near the pointer a point must be to be "hovered"
  const MIN_PAD_S = 0.005; // the initial range shows at least 5 ms either side of the evidence
  const PAD_SHARE = 0.2; // ... or 20 % of the evidence span, whichever is more

  function evidenceRows(m, finding) {
    const out = [];
    for (const e of arr(finding.evidence)) {
      const f = obj(e).frame;
      const r = m.frameRow.get(f);
      if (r !== undefined) out.push({ frame: f, row: r });
    }
    return out;
  }

  // The initial x range: the evidence span padded, clamped to the detail windows it lies in.
  function initialRange(m, finding, evRows, start) {
    const conn = m.conn;
    let ts = evRows.map((e) => m.x[e.row]);
    if (ts.length === 0) ts = arr(finding.evidence).map((e) => sinceStart(obj(e).time, start)).filter(isNum);
    const full = fullRange(m);
    if (ts.length === 0) return full;
    const a = Math.min(...ts);
    const b = Math.max(...ts);
    const pad = Math.max((b - a) * PAD_SHARE, MIN_PAD_S);
    let lo = a - pad;
    let hi = b + pad;
    const wins = arr(conn.detail).filter((w) => Array.isArray(w) && isNum(w[0]) && isNum(w[1]) && w[1] >= a && w[0] <= b);
    if (wins.length) {
      const w0 = Math.min(...wins.map((w) => w[0]));
      const w1 = Math.max(...wins.map((w) => w[1]));
      lo = Math.max(lo, Math.min(w0, a));
      hi = Math.min(hi, Math.max(w1, b));
    }
    if (!(hi > lo)) [lo, hi] = [a - MIN_PAD_S, b + MIN_PAD_S];
    return [lo, hi];
  }

  function fullRange(m) {
    const c = m.conn;
    let lo = isNum(c.t_first) ? c.t_first : m.n ? m.x[0] : 0;
    let hi = isNum(c.t_last) ? c.t_last : m.n ? m.x[m.n - 1] : 1;
    if (m.n) {
      lo = Math.min(lo, m.x[0]);
      hi = Math.max(hi, m.x[m.n - 1]);
    }
    if (!(hi > lo)) hi = lo + 0.001;
    return [lo, hi];
  }

  // The y range of what is visible: data, ACKs and SACK blocks; the window edge only when it
  // does not squash the data (a 3 MB window over a 10 kB exchange would flatten it).
  const EDGE_SQUASH = 1.5;
  function fitY(u, m, edgeNote) {
    const { min, max } = u.scales.x;
    if (!isNum(min) || !isNum(max)) return;
    const r0 = lowerBound(m.x, min);
    const r1 = lowerBound(m.x, max);
    let lo = Infinity;
    let hi = -Infinity;
    let edgeHi = -Infinity;
    const see = (v) => {
      if (isNum(v)) {
        if (v < lo) lo = v;
        if (v > hi) hi = v;
      }
    };
    for (let r = r0; r < r1; r++) {
      see(m.lo[r]);
      see(m.hi[r]);
      see(m.ack[r]);
      if (m.src[r] === SRC.ack) {
        for (const b of arr(at(m.acks.sack, m.idx[r]))) if (Array.isArray(b)) see(b[1]);
      }
      if (isNum(m.edge[r]) && m.edge[r] > edgeHi) edgeHi = m.edge[r];
    }
    // Nothing inside (a gap between detail windows): keep the last ACK level in view.
    if (lo === Infinity) {
      for (let r = r0 - 1; r >= 0 && lo === Infinity; r--) {
        see(m.hi[r]);
        see(m.ack[r]);
      }
    }
    if (lo === Infinity) [lo, hi] = [0, 1];
    const span = Math.max(hi - lo, 1);
    const off = edgeHi > hi && edgeHi - lo > EDGE_SQUASH * span;
    if (edgeHi > hi && !off) hi = edgeHi;
    // The window edge is above the plot: say so rather than squash the data.
    if (edgeNote) edgeNote.textContent = off ? `receive-window edge above the plot (up to ${fmtInt(edgeHi)})` : "";
    const pad = Math.max((hi - lo) * 0.04, 1);
    u.setScale("y", { min: lo - pad, max: hi + pad });
  }

  function drawSeq(u, m, ev, hover) {
    const ctx = u.ctx;
    const pr = uPlot.pxRatio || 1;
    const { left, top, width, height } = u.bbox;
    const { min, max } = u.scales.x;
    if (!isNum(min) || !isNum(max)) return;
    const X = (v) => u.valToPos(v, "x", true);
    const Y = (v) => u.valToPos(v, "y", true);
    const r0 = Math.max(0, lowerBound(m.x, min) - 1);
    const r1 = Math.min(m.n, lowerBound(m.x, max) + 1);

    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();

    // Summary columns: a box from the lowest to the highest byte the column sent.
    ctx.fillStyle = C.summary;
    for (let r = r0; r < r1; r++) {
      if (m.src[r] !== SRC.summary || m.lo[r] == null || m.hi[r] == null) continue;
      const i = m.idx[r];
      const x0 = X(m.sum.t0[i]);
      const x1 = X(m.sum.t1[i]);
      const y0 = Y(m.hi[r]);
      const y1 = Y(m.lo[r]);
      ctx.fillRect(x0, y0, Math.max(x1 - x0, pr), Math.max(y1 - y0, pr));
    }

    // The ACK and the window edge: step lines (a value holds until the next ACK), starting
    // from the last value before the visible range so the line enters from the left.
    const step = (ys, color, dash) => {
      let r = r0;
      while (r > 0 && ys[r] == null) r--;
      ctx.beginPath();
      let started = false;
      let prevY = 0;
      for (; r < r1; r++) {
        if (ys[r] == null) continue;
        const x = X(m.x[r]);
        const y = Y(ys[r]);
        if (!started) {
          ctx.moveTo(x, y);
          started = true;
        } else {
          ctx.lineTo(x, prevY);
          ctx.lineTo(x, y);
        }
        prevY = y;
      }
      if (started && r1 === m.n) ctx.lineTo(left + width, prevY);
      ctx.strokeStyle = color;
      ctx.lineWidth = 1.25 * pr;
      ctx.setLineDash(dash ? [5 * pr, 3 * pr] : []);
      ctx.stroke();
      ctx.setLineDash([]);
    };
    step(m.edge, C.edge, true);
    step(m.ack, C.ack, false);

    // SACK blocks: a bar beside the ACK that carried them.
    ctx.beginPath();
    for (let r = r0; r < r1; r++) {
      if (m.src[r] !== SRC.ack) continue;
      const blocks = at(m.acks.sack, m.idx[r]);
      if (!Array.isArray(blocks)) continue;
      const x = X(m.x[r]) + 2 * pr;
      for (const b of blocks) {
        if (!Array.isArray(b) || !isNum(b[0]) || !isNum(b[1])) continue;
        ctx.moveTo(x, Y(b[0]));
        ctx.lineTo(x, Math.min(Y(b[1]), Y(b[0]) - 2 * pr));
      }
    }
    ctx.strokeStyle = C.sack;
    ctx.lineWidth = 2 * pr;
    ctx.stroke();

    // Segments: tcptrace's I-bars from seq to seq+len, one path per class so a class is
    // drawn in one stroke; retransmissions last, on top.
    const paths = SEG_CLASSES.map(() => new Path2D());
    const cap = 2 * pr;
    for (let r = r0; r < r1; r++) {
      if (m.src[r] !== SRC.segment) continue;
      const p = paths[segClass(at(m.seg.kind, m.idx[r]))];
      const x = X(m.x[r]);
      const y0 = Y(m.lo[r]);
      const y1 = Math.min(Y(m.hi[r]), y0 - 2 * pr);
      p.moveTo(x, y0);
      p.lineTo(x, y1);
      p.moveTo(x - cap, y1);
      p.lineTo(x + cap, y1);
    }
    ctx.lineWidth = 1.25 * pr;
    SEG_CLASSES.forEach((c, k) => {
      ctx.strokeStyle = C[c.key];
      ctx.stroke(paths[k]);
    });

    // Evidence of other findings on this connection: a small hollow mark.
    ctx.beginPath();
    for (let r = r0; r < r1; r++) {
      if (m.src[r] !== SRC.segment) continue;
      const k = at(m.seg.kind, m.idx[r]);
      if (!isNum(k) || !(k & KIND.evidence) || ev.rows.has(r)) continue;
      const x = X(m.x[r]);
      const y = Y(m.hi[r]);
      ctx.moveTo(x + 3 * pr, y);
      ctx.arc(x, y, 3 * pr, 0, 2 * Math.PI);
    }
    ctx.strokeStyle = C.muted;
    ctx.lineWidth = pr;
    ctx.stroke();

    // This finding's evidence: a guide line, a ring and the frame number. Labels stagger
    // over three heights so neighbours stay readable.
    ctx.font = `${11 * pr}px system-ui, sans-serif`;
    ctx.textAlign = "left"; // uPlot leaves its axes' alignment on the context
    ctx.textBaseline = "bottom";
    let slot = 0;
    let lastLabelX = -Infinity;
    for (const e of ev.list) {
      const x = X(m.x[e.row]);
      if (x < left - 20 * pr || x > left + width + 20 * pr) continue;
      const y = Y(pointY(m, e.row));
      ctx.beginPath();
      ctx.moveTo(x, top);
      ctx.lineTo(x, top + height);
      ctx.strokeStyle = C.evidence;
      ctx.globalAlpha = 0.25;
      ctx.setLineDash([2 * pr, 3 * pr]);
      ctx.lineWidth = pr;
      ctx.stroke();
      ctx.setLineDash([]);
      ctx.globalAlpha = 1;
      ctx.beginPath();
      ctx.arc(x, y, 5 * pr, 0, 2 * Math.PI);
      ctx.lineWidth = 2 * pr;
      ctx.stroke();
      const label = `#${e.frame}`;
      const w = ctx.measureText(label).width + 6 * pr;
      slot = x - lastLabelX < w + 4 * pr ? (slot + 1) % 3 : 0;
      lastLabelX = x;
      const ly = Math.max(top + 16 * pr, y - 8 * pr - slot * 15 * pr);
      const lx = Math.min(Math.max(x - w / 2, left), left + width - w);
      ctx.fillStyle = C["evidence-bg"];
      ctx.fillRect(lx, ly - 14 * pr, w, 14 * pr);
      ctx.fillStyle = C.evidence;
      ctx.fillText(label, lx + 3 * pr, ly - pr);
    }

    if (hover != null) {
      ctx.beginPath();
      ctx.arc(X(m.x[hover]), Y(pointY(m, hover)), 6 * pr, 0, 2 * Math.PI);
      ctx.strokeStyle = C.fg;
      ctx.lineWidth = 1.5 * pr;
      ctx.stroke();
    }
    ctx.restore();
  }

  // Where a row's point is: the top of a segment (seq + len, as tcptrace), the ACK level.
  function pointY(m, r) {
    if (m.src[r] === SRC.ack) return m.ack[r];
    if (m.hi[r] != null) return m.hi[r];
    return m.ack[r] != null ? m.ack[r] : 0;
  }

  // The row nearest the pointer within PICK_PX, or null.
  function pick(u, m, left, top) {
    const { min, max } = u.scales.x;
    if (left < 0 || !isNum(min)) return null;
    const pxPerS = u.bbox.width / (uPlot.pxRatio || 1) / (max - min);
    const t = u.posToVal(left, "x");
    const dt = PICK_PX / pxPerS;
    const r0 = lowerBound(m.x, t - dt);
    const r1 = Math.min(lowerBound(m.x, t + dt), r0 + 5000);
    let best = null;
    let bestD = PICK_PX;
    for (let r = r0; r < r1; r++) {
      const dx = Math.abs(u.valToPos(m.x[r], "x") - left);
      let dy;
      if (m.src[r] === SRC.ack) {
        dy = Math.abs(u.valToPos(m.ack[r], "y") - top);
      } else if (m.lo[r] != null && m.hi[r] != null) {
        const ya = u.valToPos(m.hi[r], "y");
        const yb = u.valToPos(m.lo[r], "y");
        dy = top < ya ? ya - top : top > yb ? top - yb : 0;
        if (m.src[r] === SRC.summary) {
          const i = m.idx[r];
          const inside = t >= m.sum.t0[i] && t <= m.sum.t1[i];
          if (inside && dy === 0) return r;
        }
      } else {
        continue;
      }
      const d = Math.hypot(dx, dy);
      if (d <= bestD) {
        best = r;
        bestD = d;
      }
    }
    return best;
  }

  function tooltipText(m, r) {
    const p = rowInfo(m, r);
    if (!p) return [];
    if (p.src === "segment") {
      const kinds = kindNames(p.kind);
      return [
        `frame ${orText(p.frame)} · ${fmtSec(p.t)}`,
        `seq ${fmtInt(p.seq)} · len ${fmtInt(p.len)}`,
        kinds.length ? kinds.join(", ") : "data",
      ];
    }
    if (p.src === "ack") {
      const lines = [`frame ${orText(p.frame)} · ${fmtSec(p.t)}`, `ack ${fmtInt(p.ack)} · window ${fmtInt(p.win)} · edge ${fmtInt(p.edge)}`];
      const sack = arr(p.sack).filter(Array.isArray);
      if (sack.length) lines.push(`SACK ${sack.map((b) => `${fmtInt(b[0])}–${fmtInt(b[1])}`).join(", ")}`);
      return lines;
    }
    return [
      `summary ${fmtSec(p.t0)} – ${fmtSec(p.t1)}`,
      `${fmtInt(p.packets)} segments · seq ${fmtInt(p.seq_min)} – ${fmtInt(p.seq_max)}`,
      `highest ack ${fmtInt(p.ack_max)} · edge ${fmtInt(p.edge_max)}`,
    ];
  }
  const orText = (v) => (v == null ? NOT_KNOWN : String(v));

  function plotWidth(container) {
    const w = container.clientWidth || (document.getElementById("app") || document.body).clientWidth - 48;
    return Math.max(320, Math.floor(w));
  }

  function makeSeqPlot(fi, state) {
    const { m, ev, container } = state;
    let hover = null;
    const tip = h("div", { class: "tip", hidden: true });
    const opts = {
      width: plotWidth(container),
      height: SEQ_HEIGHT,
      legend: { show: false },
      scales: { x: { time: false }, y: { auto: false, range: (u, lo, hi) => [lo, hi] } },
      cursor: {
        drag: { x: true, y: false, setScale: true },
        points: { show: false },
      },
      series: [
        {},
        { label: "seq", paths: () => null, points: { show: false } },
        { label: "seq + len", paths: () => null, points: { show: false } },
        { label: "ack", paths: () => null, points: { show: false } },
        { label: "edge", paths: () => null, points: { show: false } },
      ],
      axes: [xAxis("seconds since the first frame"), yAxis("relative sequence number", null, 70)],
      hooks: {
        // uPlot clears pending scale changes right after this hook, so a y range set here
        // would be lost: fit y once this commit is done (still before the next paint).
        setScale: [
          (u, key) => {
            if (key === "x") queueMicrotask(() => fitY(u, m, state.edgeNote));
          },
        ],
        draw: [(u) => drawSeq(u, m, ev, hover)],
        setCursor: [
          (u) => {
            const { left, top } = u.cursor;
            const r = left == null || left < 0 ? null : pick(u, m, left, top);
            if (r !== hover) {
              hover = r;
              u.redraw(false, false);
            }
            if (r == null) {
              tip.hidden = true;
              return;
            }
            tip.replaceChildren(...tooltipText(m, r).map((l) => h("div", null, l)));
            tip.hidden = false;
            const w = u.over.clientWidth;
            tip.style.left = `${Math.min(left + 12, w - 230)}px`;
            tip.style.top = `${Math.max(0, top - 60)}px`;
          },
        ],
      },
    };
    const u = new uPlot(opts, m.data, container);
    u.over.append(tip);
    u.over.addEventListener("mouseleave", () => {
      tip.hidden = true;
    });
    attachZoomPan(u, () => fullRange(m));
    u.setScale("x", { min: state.initial[0], max: state.initial[1] });
    return u;
  }

  // ---------------------------------------------------------------------------------------
  // A connection's own plots: RTT, bytes in flight with the window, throughput, per
  // direction that sent data; their x axes move together.

  const CONN_HEIGHT = 210;

  function rowsOf(sets) {
    // sets: [{t: [...], cols: {name: [...]}}] -> one row per record, sorted by time.
    const recs = [];
    sets.forEach((s, k) => {
      for (let i = 0; i < s.t.length; i++) if (isNum(s.t[i])) recs.push([s.t[i], k, i]);
    });
    recs.sort((a, b) => a[0] - b[0] || a[1] - b[1]);
    const x = recs.map((r) => r[0]);
    const ys = sets.map((s, k) => recs.map((r) => (r[1] === k && isNum(s.y[r[2]]) ? s.y[r[2]] : null)));
    return [x, ...ys];
  }

  function connSeries(conn, dirKey) {
    const d = obj(conn[dirKey]);
    const where = `stream ${conn.stream} ${dirKey}`;
    const rtt = columns(d.rtt, ["t", "ms"], ["frame"], `${where} rtt`);
    const fl = columns(d.in_flight, ["t", "bytes"], [], `${where} in_flight`);
    const th = columns(d.throughput, ["t", "bytes_per_s"], [], `${where} throughput`);
    const lim = columns(d.limit, ["t0", "t1", "what"], [], `${where} limit`);
    const acks = columns(d.acks, ["t", "ack"], ["win"], `${where} acks`);
    const sum = columns(d.summary, ["t0", "t1"], ["ack_max", "edge_max"], `${where} summary`);
    // The receive window as the sender saw it: edge − ack, from the ACKs and the summary.
    const winT = [];
    const winY = [];
    for (let i = 0; i < acks.n; i++) {
      winT.push(acks.t[i]);
      winY.push(at(acks.win, i));
    }
    for (let i = 0; i < sum.n; i++) {
      const a = at(sum.ack_max, i);
      const e = at(sum.edge_max, i);
      winT.push(isNum(sum.t0[i]) && isNum(sum.t1[i]) ? (sum.t0[i] + sum.t1[i]) / 2 : null);
      winY.push(isNum(a) && isNum(e) ? e - a : null);
    }
    const cut = (c, keys) => {
      const o = {};
      for (const k of keys) o[k] = c[k].slice(0, c.n);
      return o;
    };
    return {
      rtt: cut(rtt, ["t", "ms"]),
      flight: rowsOf([
        { t: fl.t.slice(0, fl.n), y: fl.bytes },
        { t: winT, y: winY },
      ]),
      throughput: cut(th, ["t", "bytes_per_s"]),
      limit: cut(lim, ["t0", "t1", "what"]),
      hasData:
        fl.n > 0 ||
        th.bytes_per_s.some((v) => isNum(v) && v > 0) ||
        arr(obj(d.segments).len).some((v) => isNum(v) && v > 0),
    };
  }

  // Limit spans as bands under the grid: what held the sender back, when.
  function drawLimits(u, lim) {
    const ctx = u.ctx;
    const { left, top, width, height } = u.bbox;
    ctx.save();
    ctx.beginPath();
    ctx.rect(left, top, width, height);
    ctx.clip();
    for (let i = 0; i < lim.t0.length; i++) {
      const c = C[`lim-${lim.what[i]}`];
      if (!c || !isNum(lim.t0[i]) || !isNum(lim.t1[i])) continue;
      const x0 = u.valToPos(lim.t0[i], "x", true);
      const x1 = u.valToPos(lim.t1[i], "x", true);
      ctx.fillStyle = c;
      ctx.fillRect(x0, top, Math.max(x1 - x0, 1), height);
    }
    ctx.restore();
  }

  function makeConnPlots(conn, section) {
    const group = [];
    let syncing = false;
    // One x range for all of a connection's plots: zooming one zooms the others.
    const syncX = (u, key) => {
      if (key !== "x" || syncing) return;
      syncing = true;
      for (const o of group) if (o !== u) o.setScale("x", { min: u.scales.x.min, max: u.scales.x.max });
      syncing = false;
    };
    const t0 = isNum(conn.t_first) ? conn.t_first : null;
    const t1 = isNum(conn.t_last) ? conn.t_last : null;
    const bounds = () => [t0 ?? 0, t1 != null && t0 != null && t1 > t0 ? t1 : (t0 ?? 0) + 1];
    const out = {};
    for (const dirKey of DIRS) {
      const host = section.querySelector(`[data-dir="${dirKey}"]`);
      if (!host) continue;
      const s = connSeries(conn, dirKey);
      const cells = host.querySelectorAll(".cplot");
      const width = Math.max(260, Math.floor(((document.getElementById("app") || document.body).clientWidth - 80) / 3));
      const base = (title, yLabel, yValues) => ({
        width,
        height: CONN_HEIGHT,
        title,
        scales: { x: { time: false, range: (u, lo, hi) => (t0 != null && t1 != null && lo === hi ? [t0, t1] : [lo, hi]) } },
        cursor: { drag: { x: true, y: false, setScale: true }, sync: { key: `conn-${conn.stream}` } },
        legend: { live: true },
        axes: [xAxis("s"), yAxis(yLabel, yValues, 58)],
        hooks: { setScale: [syncX] },
      });
      const fmtOr = (f) => (u, v) => (v == null ? "–" : f(v));
      const secLegend = { label: "time", value: fmtOr(fmtSec) };
      const plots = {};
      plots.rtt = new uPlot(
        {
          ...base("RTT samples", "ms"),
          series: [
            secLegend,
            { label: "RTT", stroke: C.rtt, fill: null, paths: () => null, points: { show: true, size: 4, fill: C.rtt, stroke: C.rtt }, value: fmtOr(fmtMs) },
          ],
        },
        [s.rtt.t, s.rtt.ms],
        cells[0]
      );
      plots.flight = new uPlot(
        {
          ...base("Bytes in flight and receive window", "bytes"),
          series: [
            secLegend,
            { label: "in flight", stroke: C.flight, width: 1.25, spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }), value: fmtOr(fmtBytes) },
            { label: "window", stroke: C.window, width: 1.25, dash: [5, 3], spanGaps: true, paths: uPlot.paths.stepped({ align: 1 }), value: fmtOr(fmtBytes) },
          ],
          hooks: { setScale: [syncX], drawClear: [(u) => drawLimits(u, s.limit)] },
        },
        s.flight,
        cells[1]
      );
      plots.throughput = new uPlot(
        {
          ...base("Throughput (new data per column)", "bytes/s"),
          series: [
            secLegend,
            { label: "throughput", stroke: C.throughput, fill: C.throughput + "33", width: 1.25, paths: uPlot.paths.stepped({ align: 0 }), value: fmtOr((v) => fmtSi(v, "B/s")) },
          ],
        },
        [s.throughput.t, s.throughput.bytes_per_s],
        cells[2]
      );
      for (const u of Object.values(plots)) {
        group.push(u);
        attachZoomPan(u, bounds);
      }
      out[dirKey] = plots;
    }
    // Start on the whole connection, even where a series is empty.
    if (t0 != null && t1 != null && t1 > t0 && group[0]) group[0].setScale("x", { min: t0, max: t1 });
    return out;
  }

  // ---------------------------------------------------------------------------------------
  // Lazy creation: a big page may have 50 plots; each is created when it comes near the
  // viewport (or when renderAll() asks, for tests and printing).

  const pending = new Map(); // element -> create()
  let observer = null;
  function lazily(el, create) {
    pending.set(el, create);
    if (observer) observer.observe(el);
  }
  function realise(el) {
    const create = pending.get(el);
    if (!create) return;
    pending.delete(el);
    if (observer) observer.unobserve(el);
    try {
      create();
    } catch (e) {
      fail(el, e);
    }
  }
  function fail(el, e) {
    report.errors.push(String((e && e.stack) || e));
    console.error("tcpwhy report:", e);
    el.append(h("p", { class: "plot-error" }, `This plot could not be drawn: ${(e && e.message) || e}`));
  }

  // ---------------------------------------------------------------------------------------
  // The page.

  function header(data, file) {
    const start = epochNs(data.start);
    let when = null;
    if (start !== null) {
      const d = new Date(Number(start / 1000000n));
      if (!Number.isNaN(d.getTime())) when = `${d.toISOString().replace("T", " ").replace(/\.\d+Z$/, "")} UTC`;
    }
    return h(
      "header",
      { class: "top" },
      h("h1", null, h("span", { class: "brand" }, "tcpwhy"), " ", h("span", { class: "path" }, text(file.path) || NOT_KNOWN)),
      h(
        "p",
        { class: "facts" },
        `${fmtInt(file.frames)} frames · ${fmtInt(file.tcp_frames)} TCP · ${fmtInt(file.connections)} connections · first frame `,
        when ? when : notKnown()
      ),
      file.error ? h("p", { class: "file-error" }, `Reading stopped early: ${text(file.error)}`) : null
    );
  }

  function hostBadge(host) {
    const t = text(host) || NOT_KNOWN;
    return h("span", { class: `host host-${t.replace(/[^a-z]/g, "")}` }, t);
  }

  function fixList(fix) {
    const items = arr(fix).map((f) => h("li", null, hostBadge(obj(f).host), " ", text(obj(f).action) || NOT_KNOWN));
    return items.length ? h("ul", { class: "fix" }, items) : h("p", null, notKnown());
  }

  // The verdict: one line per mechanism (the `verdict` entries: title, cost over all
  // connections, and whether that time is part of another's), then the costliest findings
  // with their fix and the host it goes to.
  const VERDICT_ROWS = 20;
  function verdict(data, findings) {
    const file = obj(data.file);
    const below = Object.entries(obj(file.below_min_cost)).filter(([, n]) => isNum(n) && n > 0);
    const mechs = arr(data.verdict).map(obj);
    const titles = new Map(mechs.map((v) => [v.id, text(v.title)]));
    const lines = mechs.map((v) =>
      h(
        "li",
        null,
        h("span", { class: "vcost" }, fmtMs(v.cost_ms)),
        h(
          "div",
          null,
          h("strong", null, text(v.title) || text(v.id) || NOT_KNOWN),
          " ",
          h("code", { class: "fid" }, text(v.id) || NOT_KNOWN),
          isNum(v.connections) ? ` on ${fmtInt(v.connections)} connection${v.connections === 1 ? "" : "s"}` : "",
          v.part_of ? h("span", { class: "sub" }, ` · part of ${text(v.part_of)}'s time, not in addition`) : null,
          h("div", { class: "sub" }, text(v.meaning) || "", v.fix_goes_to ? ` · fix goes to ${text(v.fix_goes_to)}` : "")
        )
      )
    );
    const rows = findings.slice(0, VERDICT_ROWS).map((f, i) =>
      h(
        "tr",
        null,
        h("td", { class: "num" }, h("a", { href: `#finding-${i}` }, String(i + 1))),
        h("td", null, h("a", { href: `#finding-${i}`, class: "fid" }, text(f.id) || NOT_KNOWN), titles.get(f.id) ? h("div", { class: "sub" }, titles.get(f.id)) : null),
        h("td", { class: "num cost" }, fmtMs(f.cost_ms), f.share != null ? h("div", { class: "sub" }, `${fmtPct(f.share)} of its connection`) : null),
        h(
          "td",
          null,
          `stream ${orText(f.stream)}`,
          isNum(f.connections) && f.connections > 1 ? h("div", { class: "sub" }, `${f.connections} connections paid`) : null
        ),
        h(
          "td",
          null,
          arr(f.fix).slice(0, 1).map((x) => h("div", { class: "fix1" }, hostBadge(obj(x).host), " ", h("span", { class: "clamp", title: text(obj(x).action) || "" }, text(obj(x).action) || NOT_KNOWN))),
          arr(f.fix).length > 1 ? h("div", { class: "sub" }, `+ ${arr(f.fix).length - 1} more in the card`) : null,
          arr(f.fix).length === 0 ? notKnown() : null
        )
      )
    );
    const total = isNum(data.findings_total) ? data.findings_total : findings.length;
    const notes = [];
    if (findings.length > VERDICT_ROWS) notes.push(`The ${VERDICT_ROWS} costliest of ${fmtInt(findings.length)} findings; the others are under Findings.`);
    if (total > findings.length) notes.push(`This page lists the ${fmtInt(findings.length)} costliest of ${fmtInt(total)} findings (tcpwhy analyze lists them all).`);
    return h(
      "section",
      { class: "verdict", id: "verdict" },
      h("h2", null, "Verdict"),
      lines.length ? h("ul", { class: "vlist" }, lines) : null,
      findings.length
        ? h(
            "table",
            { class: "vtable" },
            h("thead", null, h("tr", null, h("th", { class: "num" }, "#"), h("th", null, "finding"), h("th", { class: "num" }, "cost"), h("th", null, "where"), h("th", null, "fix"))),
            h("tbody", null, rows)
          )
        : h("p", { class: "none" }, "No finding at or above --min-cost: nothing in this capture cost measurable time."),
      notes.map((n) => h("p", { class: "note" }, n)),
      h(
        "p",
        { class: "below" },
        "Below --min-cost (named, not listed): ",
        below.length ? below.map(([id, n]) => `${id} × ${fmtInt(n)}`).join(", ") : "none"
      ),
      h("details", { class: "textreport" }, h("summary", null, "Text report (tcpwhy analyze)"), h("pre", null, text(data.text) || NOT_KNOWN))
    );
  }

  // Wireshark filters for evidence frames. A finding about a pattern across connections
  // (connection.idle_close, connection.short_lived) cites frames of other streams, for
  // which `tcp.stream eq N` of the finding's stream would select nothing: the stream is
  // named only where the frame is known to be in it (in its plot data, or, without plot
  // data, inside the stream's frame range from the flows table); a frame number alone
  // selects the same packet anyway.
  function frameInStream(frame, conn, row) {
    if (!isNum(frame)) return false;
    if (conn) return DIRS.some((k) => modelFor(conn, k).frameRow.has(frame));
    const r = obj(row);
    return isNum(r.first_frame) && isNum(r.last_frame) && frame >= r.first_frame && frame <= r.last_frame;
  }
  function evidenceFilter(stream, frame, inStream) {
    return inStream && stream != null ? `tcp.stream eq ${stream} && frame.number == ${frame}` : `frame.number == ${frame}`;
  }
  function evidenceFilterAll(stream, frames, inStream) {
    const set = `frame.number in {${frames.join(", ")}}`;
    return inStream && stream != null ? `tcp.stream eq ${stream} && ${set}` : set;
  }

  function findingCard(data, f, i, plotted, connByStream) {
    const stream = f.stream;
    const conn = connByStream.get(stream);
    const start = data.start;
    const card = h("article", { class: "card", id: `finding-${i}`, dataset: { finding: String(i) } });
    const plots = obj(data.plots);

    let state = null;
    let reason = null;
    if (!plotted.has(i)) {
      reason = `No plot: beyond --max-plots: the ${orText(plots.cap)} costliest findings have plots.`;
    } else if (!conn) {
      reason = `No plot: stream ${orText(stream)} has no plot data in this page.`;
      warn(`finding ${i} is in plots.findings but stream ${stream} is not in plots.connections`);
    } else {
      const m = chooseDirection(conn, f);
      const list = evidenceRows(m, f);
      state = { m, ev: { list, rows: new Set(list.map((e) => e.row)) } };
      state.initial = initialRange(m, f, list, start);
    }

    const flowRow = arr(obj(data.flows).connections).find((r) => obj(r).stream === stream);
    const inStream = (frame) => frameInStream(frame, conn, flowRow);
    const evRows = arr(f.evidence).map((e) => {
      const ev = obj(e);
      const inPlot = state && state.m.frameRow.has(ev.frame);
      const t = inPlot ? state.m.x[state.m.frameRow.get(ev.frame)] : sinceStart(ev.time, start);
      const filt = isNum(ev.frame) ? evidenceFilter(stream, ev.frame, inStream(ev.frame)) : null;
      const why = !state || inPlot ? null : inStream(ev.frame) ? " (the other direction: not in this plot)" : " (not in this connection's plot data)";
      return h(
        "tr",
        { class: inPlot ? "" : "notplotted" },
        h(
          "td",
          { class: "num" },
          state && inPlot
            ? h("button", { type: "button", class: "frame", title: "Show this frame in the plot", onclick: () => focusFrame(i, ev.frame) }, orText(ev.frame))
            : orText(ev.frame)
        ),
        h("td", { class: "num" }, fmtSec(t)),
        h("td", null, text(ev.note) || NOT_KNOWN, why ? h("span", { class: "sub" }, why) : null),
        h("td", { class: "filter" }, filt ? [h("code", null, filt), " ", copyButton(() => filt)] : notKnown())
      );
    });
    const frames = arr(f.evidence).map((e) => obj(e).frame).filter(isNum);
    const allFilter = frames.length ? evidenceFilterAll(stream, frames, frames.every(inStream)) : null;

    card.append(
      h(
        "header",
        null,
        h("h3", null, h("span", { class: "rank" }, `${i + 1}.`), " ", h("span", { class: "fid" }, text(f.id) || NOT_KNOWN)),
        h(
          "div",
          { class: "meta" },
          h("span", { class: "cost" }, fmtMs(f.cost_ms)),
          f.share != null ? ` · ${fmtPct(f.share)} of the connection's time` : "",
          isNum(f.connections) && f.connections > 1 ? ` · ${f.connections} connections` : "",
          " · stream ",
          conn ? h("a", { href: `#conn-${Number(stream)}` }, orText(stream)) : orText(stream),
          ` · ${text(f.client) || NOT_KNOWN} → ${text(f.server) || NOT_KNOWN}`
        )
      ),
      h("p", { class: "explanation" }, text(f.explanation) || NOT_KNOWN),
      h(
        "div",
        { class: "cols" },
        h("div", null, h("h4", null, "Fix"), fixList(f.fix)),
        h(
          "dl",
          { class: "kv" },
          h("dt", null, "confidence"),
          h("dd", null, h("span", { class: `conf conf-${(text(f.confidence) || "").replace(/[^a-z]/g, "")}` }, text(f.confidence) || NOT_KNOWN)),
          h("dt", null, "vantage assumed"),
          h("dd", null, text(f.vantage) || NOT_KNOWN)
        )
      )
    );
    const evidenceBox = h(
        "details",
        { class: "evidence", open: true },
        h("summary", null, `Evidence: ${arr(f.evidence).length} frame(s)`, allFilter ? [" · ", h("code", null, allFilter), " ", copyButton(() => allFilter, "copy all")] : null),
        h(
          "table",
          { class: "etable" },
          h("thead", null, h("tr", null, h("th", { class: "num" }, "frame"), h("th", { class: "num" }, "time"), h("th", null, "what it shows"), h("th", null, "Wireshark filter"))),
          h("tbody", null, evRows)
        )
      );

    if (state) {
      const container = h("div", { class: "seqplot" });
      const toolbar = h(
        "div",
        { class: "toolbar" },
        h("span", { class: "ptitle" }, `Time-sequence: ${dirLabel(state.m.conn, state.m.dirKey)}`),
        h("span", { class: "hint", title: "drag: zoom to a range · ctrl+wheel or pinch: zoom · shift+drag: pan · double-click: whole connection" }, "drag or ctrl+wheel: zoom · shift+drag: pan"),
        h("button", { type: "button", onclick: () => resetPlot(i) }, "evidence span"),
        h("button", { type: "button", onclick: () => wholePlot(i) }, "whole connection")
      );
      const notes = [];
      if (conn.truncated) notes.push("The detail budget cut this connection's detail window short: some packets are only in the summary.");
      if (state.ev.list.length === 0) notes.push("None of the evidence frames is in this connection's plot data.");
      card.append(
        h(
          "div",
          { class: "plotbox" },
          toolbar,
          seqLegend(),
          (state.edgeNote = h("div", { class: "edgenote" })),
          container,
          notes.map((n) => h("p", { class: "note" }, n))
        )
      );
      state.container = container;
      lazily(container, () => {
        report.plots[i] = makeSeqPlot(i, state);
      });
      seqStates.set(i, state);
    } else {
      card.append(h("p", { class: "noplot" }, reason));
    }
    // The evidence table under the plot: its frame buttons move the plot above.
    card.append(evidenceBox);
    return card;
  }
  const seqStates = new Map();

  function resetPlot(i) {
    const u = report.plots[i];
    const s = seqStates.get(i);
    if (u && s) u.setScale("x", { min: s.initial[0], max: s.initial[1] });
  }
  function wholePlot(i) {
    const u = report.plots[i];
    const s = seqStates.get(i);
    if (u && s) {
      const [a, b] = fullRange(s.m);
      u.setScale("x", { min: a, max: b });
    }
  }
  // Centres the plot on one evidence frame, keeping the current zoom width (or the initial
  // one, if that is narrower).
  function focusFrame(i, frame) {
    const s = seqStates.get(i);
    if (!s) return;
    const el = s.container;
    realise(el);
    const u = report.plots[i];
    const r = s.m.frameRow.get(frame);
    if (!u || r === undefined) return;
    const t = s.m.x[r];
    const w = Math.min(u.scales.x.max - u.scales.x.min, s.initial[1] - s.initial[0]);
    u.setScale("x", { min: t - w / 2, max: t + w / 2 });
    el.scrollIntoView({ block: "nearest", behavior: "smooth" });
  }

  const CARDS_FIRST = 100;
  const CARDS_BATCH = 100;
  function findingsSection(data, findings, connByStream) {
    const plots = obj(data.plots);
    const plotted = new Set(arr(plots.findings).filter(isNum));
    const sec = h("section", { class: "findings", id: "findings" }, h("h2", null, "Findings"));
    if (findings.length === 0) {
      sec.append(h("p", { class: "none" }, "No findings."));
      return sec;
    }
    const card = (i) => {
      try {
        return findingCard(data, findings[i], i, plotted, connByStream);
      } catch (e) {
        const c = h("article", { class: "card", id: `finding-${i}`, dataset: { finding: String(i) } });
        fail(c, e);
        return c;
      }
    };
    // Thousands of cards would make a slow page: every plotted one and the first
    // CARDS_FIRST at once, the rest a batch at a time on request.
    const first = Math.max(CARDS_FIRST, ...Array.from(plotted, (i) => i + 1));
    let shown = Math.min(findings.length, first);
    for (let i = 0; i < shown; i++) sec.append(card(i));
    if (shown < findings.length) {
      const more = h("button", { type: "button", class: "more" });
      const label = () => {
        more.textContent = `show ${fmtInt(Math.min(CARDS_BATCH, findings.length - shown))} more findings (${fmtInt(findings.length - shown)} not shown)`;
      };
      more.addEventListener("click", () => {
        const end = Math.min(findings.length, shown + CARDS_BATCH);
        for (; shown < end; shown++) more.before(card(shown));
        if (shown >= findings.length) more.remove();
        else label();
      });
      label();
      sec.append(more);
    }
    return sec;
  }

  function connSection(data, conn, findings) {
    const stream = Number(conn.stream);
    const ids = findings
      .map((f, i) => [obj(f), i])
      .filter(([f]) => f.stream === conn.stream)
      .map(([f, i]) => h("a", { href: `#finding-${i}`, class: "fid" }, text(f.id) || NOT_KNOWN));
    const dur = isNum(conn.t_first) && isNum(conn.t_last) ? (conn.t_last - conn.t_first) * 1000 : null;
    const sec = h(
      "details",
      { class: "conn", id: `conn-${stream}`, dataset: { stream: String(stream) } },
      h(
        "summary",
        null,
        h("strong", null, `stream ${orText(conn.stream)}`),
        ` ${text(conn.client) || NOT_KNOWN} → ${text(conn.server) || NOT_KNOWN} · ${fmtMs(dur)} · `,
        ids.length ? ids.map((a, k) => [k ? ", " : "", a]) : "no finding"
      )
    );
    const body = h("div", { class: "connbody" });
    if (conn.truncated) body.append(h("p", { class: "note" }, "The detail budget cut a detail window short: some packets are only in the summary."));
    body.append(
      h(
        "div",
        { class: "legend" },
        swatch(C.rtt, "dot", "RTT sample"),
        swatch(C.flight, "line", "bytes in flight"),
        swatch(C.window, "dash", "receive window (edge − ACK)"),
        LIMITS.map((l) => swatch(C[`lim-${l.key}`], "box", `limited by ${l.label}`)),
        swatch(C.throughput, "box", "throughput")
      )
    );
    let any = false;
    for (const dirKey of DIRS) {
      const s = connSeries(conn, dirKey);
      if (!s.hasData) {
        body.append(h("p", { class: "note" }, `${dirLabel(conn, dirKey)}: no data sent in the plotted windows.`));
        continue;
      }
      any = true;
      body.append(
        h("h4", null, dirLabel(conn, dirKey)),
        h("div", { class: "cgrid", dataset: { dir: dirKey } }, h("div", { class: "cplot" }), h("div", { class: "cplot" }), h("div", { class: "cplot" }))
      );
    }
    sec.append(body);
    if (any) {
      const create = () => {
        report.connPlots[stream] = makeConnPlots(conn, body);
      };
      // Lazily, and only once the section is open: closed details have no layout to watch.
      sec.addEventListener("toggle", () => {
        if (sec.open && pending.has(body) && observer) observer.observe(body);
      });
      pending.set(body, create);
    }
    return sec;
  }

  // ---------------------------------------------------------------------------------------
  // The flows table: sortable, filterable, rendered a page at a time so 5,000 rows stay fast.

  const FLOW_PAGE = 300;

  const LIMIT_TITLE = "flows' LIMIT: share of the transfer time of the direction with more data limited by ";
  function flowColumns(plottedStreams, findingsByStream) {
    const dir = (c, k) => obj(obj(c)[k]);
    // flows' LIMIT: shares of the counted transfer time, for the direction with more data.
    const limitShare = (c, what) => {
      const a = dir(c, "client_to_server");
      const b = dir(c, "server_to_client");
      const d = (isNum(b.unique_bytes) ? b.unique_bytes : 0) > (isNum(a.unique_bytes) ? a.unique_bytes : 0) ? b : a;
      const l = obj(d.limited_ms);
      const vals = [l.rwnd, l.sender, l.app];
      if (!vals.every(isNum)) return null;
      const total = vals[0] + vals[1] + vals[2];
      return total > 0 ? obj(l)[what] / total : null;
    };
    const retx = (c) => {
      const a = dir(c, "client_to_server").retransmissions;
      const b = dir(c, "server_to_client").retransmissions;
      return isNum(a) || isNum(b) ? (isNum(a) ? a : 0) + (isNum(b) ? b : 0) : null;
    };
    const rtt = (c) => {
      const r = obj(obj(c).rtt_ms);
      return isNum(r.median) ? r.median : null;
    };
    return [
      {
        key: "stream",
        label: "stream",
        num: true,
        value: (c) => c.stream,
        cell: (c) => (plottedStreams.has(c.stream) ? h("a", { href: `#conn-${Number(c.stream)}`, title: "this connection's plots" }, orText(c.stream)) : orText(c.stream)),
      },
      { key: "client", label: "client", value: (c) => text(c.client), cell: (c) => text(c.client) || notKnown() },
      { key: "server", label: "server", value: (c) => text(c.server), cell: (c) => text(c.server) || notKnown() },
      { key: "duration", label: "duration", num: true, value: (c) => c.duration_ms, cell: (c) => fmtMs(c.duration_ms) },
      { key: "bytes_cs", label: "bytes c→s", num: true, value: (c) => dir(c, "client_to_server").bytes, cell: (c) => fmtBytes(dir(c, "client_to_server").bytes) },
      { key: "bytes_sc", label: "bytes s→c", num: true, value: (c) => dir(c, "server_to_client").bytes, cell: (c) => fmtBytes(dir(c, "server_to_client").bytes) },
      { key: "rtt", label: "RTT median", num: true, value: rtt, cell: (c) => fmtMs(rtt(c)) },
      {
        key: "retx",
        label: "retx c→s / s→c",
        num: true,
        value: retx,
        cell: (c) => `${orText(dir(c, "client_to_server").retransmissions)} / ${orText(dir(c, "server_to_client").retransmissions)}`,
      },
      { key: "rwnd", label: "rwnd", title: LIMIT_TITLE + "the receiver's window", num: true, value: (c) => limitShare(c, "rwnd"), cell: (c) => shareCell(limitShare(c, "rwnd")) },
      { key: "cwnd", label: "cwnd", title: LIMIT_TITLE + "the sender's own window (congestion window or send buffer)", num: true, value: (c) => limitShare(c, "sender"), cell: (c) => shareCell(limitShare(c, "sender")) },
      { key: "app", label: "app", title: LIMIT_TITLE + "the application (nothing outstanding)", num: true, value: (c) => limitShare(c, "app"), cell: (c) => shareCell(limitShare(c, "app")) },
      {
        key: "findings",
        label: "findings",
        value: (c) => (findingsByStream.get(c.stream) || []).map(([f]) => f.id).join(" "),
        cell: (c) => (findingsByStream.get(c.stream) || []).map(([f, i], k) => [k ? ", " : "", h("a", { href: `#finding-${i}`, class: "fid" }, text(f.id) || NOT_KNOWN)]),
      },
    ];
  }
  function shareCell(v) {
    if (v == null) return "–";
    const pct = Math.round(v * 100);
    // Half the transfer time or more: what limited this connection, in bold.
    return h("span", { class: pct >= 50 ? "share high" : "share" }, `${pct} %`);
  }

  function flowsSection(data, findings, plottedStreams) {
    const flows = obj(data.flows);
    const rows = arr(flows.connections).map(obj);
    const findingsByStream = new Map();
    findings.forEach((f, i) => {
      const s = obj(f).stream;
      if (!findingsByStream.has(s)) findingsByStream.set(s, []);
      findingsByStream.get(s).push([obj(f), i]);
    });
    const cols = flowColumns(plottedStreams, findingsByStream);
    const sec = h("section", { class: "flows", id: "flows" }, h("h2", null, "Connections"));
    if (isNum(flows.total) && isNum(flows.cap) && flows.total > flows.cap) {
      sec.append(h("p", { class: "note" }, `Showing ${fmtInt(rows.length)} of ${fmtInt(flows.total)} connections: every connection with a finding, then the longest.`));
    }
    const filter = h("input", { type: "search", placeholder: "filter: stream, address, port, finding", "aria-label": "filter connections" });
    const count = h("span", { class: "count" });
    const tbody = h("tbody");
    const more = h("button", { type: "button", class: "more", hidden: true });
    const sort = { key: "stream", dir: 1 };
    let shown = FLOW_PAGE;
    const ths = cols.map((c) =>
      h(
        "th",
        { class: c.num ? "num" : null, dataset: { key: c.key }, "aria-sort": "none", title: c.title },
        h("button", { type: "button", onclick: () => setSort(c.key) }, c.label, h("span", { class: "arrow" }))
      )
    );
    const keyed = rows.map((r) => ({ r, v: Object.fromEntries(cols.map((c) => [c.key, c.value(r)])) }));
    let view = keyed;

    function compare(a, b) {
      const x = a.v[sort.key];
      const y = b.v[sort.key];
      // Not known sorts last in either direction.
      if (x == null || y == null) return x == null ? (y == null ? 0 : 1) : -1;
      const c = typeof x === "number" && typeof y === "number" ? x - y : String(x).localeCompare(String(y), "en", { numeric: true });
      return c * sort.dir || (a.v.stream ?? 0) - (b.v.stream ?? 0);
    }
    function render() {
      const q = filter.value.trim().toLowerCase();
      view = keyed.filter((k) => !q || [k.v.stream, k.v.client, k.v.server, k.v.findings].some((v) => v != null && String(v).toLowerCase().includes(q)));
      view.sort(compare);
      tbody.replaceChildren(
        ...view.slice(0, shown).map((k) => h("tr", { dataset: { stream: String(k.r.stream) } }, cols.map((c) => h("td", { class: c.num ? "num" : null }, c.cell(k.r)))))
      );
      count.textContent = `${fmtInt(Math.min(shown, view.length))} of ${fmtInt(view.length)} rows shown${q ? ` (filtered from ${fmtInt(keyed.length)})` : ""}`;
      more.hidden = view.length <= shown;
      more.textContent = `show ${fmtInt(Math.min(FLOW_PAGE, view.length - shown))} more`;
      ths.forEach((th) => {
        const on = th.dataset.key === sort.key;
        th.setAttribute("aria-sort", on ? (sort.dir > 0 ? "ascending" : "descending") : "none");
        th.querySelector(".arrow").textContent = on ? (sort.dir > 0 ? " ▲" : " ▼") : "";
      });
    }
    function setSort(key) {
      sort.dir = sort.key === key ? -sort.dir : 1;
      sort.key = key;
      render();
    }
    filter.addEventListener("input", () => {
      shown = FLOW_PAGE;
      render();
    });
    more.addEventListener("click", () => {
      shown += FLOW_PAGE;
      render();
    });
    report.flowsOrder = () => Array.from(tbody.rows, (tr) => Number(tr.dataset.stream));
    report.sortFlows = setSort;
    sec.append(
      h("div", { class: "tablebar" }, filter, count),
      rows.length ? h("div", { class: "tablewrap" }, h("table", { class: "ftable" }, h("thead", null, h("tr", null, ths)), tbody)) : h("p", { class: "none" }, "No connections."),
      more
    );
    render();
    return sec;
  }

  function footer(data) {
    return h(
      "footer",
      null,
      h("p", null, `Generated by ${text(data.generator) || "tcpwhy"}. Plots drawn with uPlot 1.6.32 by Leon Sorokin (MIT licence), included in this page.`),
      warnings.length ? h("details", { class: "datanotes" }, h("summary", null, `Data notes (${warnings.length})`), h("ul", null, warnings.map((w) => h("li", null, w)))) : null
    );
  }

  // ---------------------------------------------------------------------------------------

  function build() {
    readColors();
    const data = readData();
    report.data = data;
    if (data.schema !== 1) warn(`schema ${orText(data.schema)}: this page reads schema 1`);
    const file = obj(data.file);
    const findings = arr(file.findings).map(obj);
    const connList = arr(obj(data.plots).connections).map(obj);
    const connByStream = new Map(connList.map((c) => [c.stream, c]));
    const app = document.getElementById("app") || document.body.appendChild(h("main", { id: "app" }));
    document.title = document.title || `tcpwhy: ${text(file.path) || ""}`;

    const parts = [];
    const guard = (f) => {
      try {
        parts.push(f());
      } catch (e) {
        const box = h("div");
        fail(box, e);
        parts.push(box);
      }
    };
    guard(() => header(data, file));
    guard(() => verdict(data, findings));
    guard(() => findingsSection(data, findings, connByStream));
    guard(() => {
      const sec = h("section", { class: "conns", id: "connections" }, h("h2", null, "Connection plots"));
      if (connList.length === 0) sec.append(h("p", { class: "none" }, "No connection has plots."));
      for (const c of connList) sec.append(connSection(data, c, findings));
      return sec;
    });
    guard(() => flowsSection(data, findings, new Set(connList.map((c) => c.stream))));
    app.replaceChildren(...parts.filter(Boolean));
    app.append(footer(data));

    // A few connections: open them, the reader came for them.
    const OPEN_CONNS = 3;
    if (connList.length <= OPEN_CONNS) for (const d of app.querySelectorAll("details.conn")) d.open = true;

    if ("IntersectionObserver" in window) {
      observer = new IntersectionObserver(
        (entries) => {
          for (const e of entries) if (e.isIntersecting) realise(e.target);
        },
        { rootMargin: "400px 0px" }
      );
      for (const el of pending.keys()) {
        // Closed connection sections are observed once opened (their toggle handler).
        const closed = el.closest("details:not([open])");
        if (!closed) observer.observe(el);
      }
    } else {
      for (const el of Array.from(pending.keys())) realise(el);
    }

    // Plots take the width of the page: follow it when the window changes.
    let resizeTimer = null;
    window.addEventListener("resize", () => {
      clearTimeout(resizeTimer);
      resizeTimer = setTimeout(() => {
        for (const [i, u] of Object.entries(report.plots)) {
          const s = seqStates.get(Number(i));
          if (s) u.setSize({ width: plotWidth(s.container), height: SEQ_HEIGHT });
        }
      }, 150);
    });
  }

  // The test hook (docs/report.md, "Page structure for tests").
  report.renderAll = () => {
    for (const el of Array.from(pending.keys())) realise(el);
    return { plots: Object.keys(report.plots).length, connPlots: Object.keys(report.connPlots).length, errors: report.errors.length };
  };
  report.resetPlot = resetPlot;
  report.wholePlot = wholePlot;
  report.plotInfo = (i) => {
    const s = seqStates.get(Number(i));
    if (!s) return null;
    return {
      stream: s.m.conn.stream,
      direction: s.m.dirKey,
      initial: s.initial.slice(),
      evidence: s.ev.list.map((e) => ({ frame: e.frame, row: e.row })),
    };
  };
  report.point = (i, frame) => {
    const s = seqStates.get(Number(i));
    if (!s) return null;
    const r = s.m.frameRow.get(frame);
    if (r === undefined) return null;
    // Read back from the uPlot instance when it exists: what is drawn, not what was meant.
    const u = report.plots[i];
    const d = u ? u.data : s.m.data;
    const info = rowInfo(s.m, r);
    info.row = r;
    info.x = d[0][r];
    info.y = info.src === "ack" ? d[3][r] : d[1][r];
    return info;
  };

  try {
    build();
  } catch (e) {
    report.errors.push(String((e && e.stack) || e));
    console.error("tcpwhy report:", e);
    const app = document.getElementById("app") || document.body;
    app.append(h("p", { class: "plot-error" }, `The page could not be built: ${(e && e.message) || e}`));
  } finally {
    report.ready = true;
    document.body.dataset.ready = "1";
  }
})();
