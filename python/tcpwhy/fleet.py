"""Fleet runs: many captures analysed on Dask, one task per capture, written as Parquet.

    tcpwhy-fleet captures/ -o out/                  # a local cluster, one worker per core
    tcpwhy-fleet captures/ -o out/ --address tcp://scheduler:8786
    python -m tcpwhy.fleet captures/ -o out/

Each task runs tcpwhy's pass on one capture (`tcpwhy.flows` and `tcpwhy.analyze`) and
writes that capture's partition itself: OUT/flows/capture=NAME/part-0.parquet and
OUT/findings/capture=NAME/part-0.parquet (hive style). Only a small summary (per finding
id and server: cost, count) travels back to the client, which prints the fleet verdict and
writes OUT/captures.parquet (one row per capture, failed ones with their error) and
OUT/errors.json. docs/fleet.md says why Dask, and what each file holds.
"""

from __future__ import annotations

import argparse
import json
import os
import shutil
import sys
import time
import urllib.parse
from collections.abc import Iterable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, TextIO

import pyarrow as pa
import pyarrow.dataset as ds
import pyarrow.parquet as pq

from . import _native
from ._tables import findings_table, flows_table

# What a directory given in PATHS is searched for (recursively); files named on the
# command line are taken whatever their name.
CAPTURE_SUFFIXES = (".pcap", ".pcapng", ".cap", ".pcap.gz", ".pcapng.gz", ".cap.gz")

# The partition column of OUT/flows/ and OUT/findings/.
PARTITION = "capture"

# Mechanisms and, under each, servers the verdict lists unless told otherwise.
TOP_MECHANISMS = 10
TOP_SERVERS = 3

CAPTURES_SCHEMA = pa.schema(
    [
        ("capture", pa.string()),
        ("path", pa.string()),
        ("ok", pa.bool_()),
        ("error", pa.string()),
        ("read_error", pa.string()),
        ("format", pa.string()),
        ("frames", pa.int64()),
        ("tcp_frames", pa.int64()),
        ("connections", pa.int64()),
        ("findings", pa.int64()),
        ("cost_ms", pa.float64()),
        ("notes", pa.list_(pa.string())),
        ("seconds", pa.float64()),
    ]
)

VERDICT_SCHEMA = pa.schema(
    [
        ("id", pa.string()),
        ("server", pa.string()),
        ("cost_ms", pa.float64()),
        ("findings", pa.int64()),
        ("connections", pa.int64()),
        ("captures", pa.int64()),
    ]
)


def find_captures(paths: Iterable[str | os.PathLike[str]]) -> list[tuple[str, str]]:
    """The captures PATHS name, as (path, NAME) pairs in PATHS' order (a directory's in
    sorted order): files as given, directories searched recursively for CAPTURE_SUFFIXES.
    A path that does not exist is an error; a file named twice is one capture.

    NAME, the capture's partition: its path relative to the directory given, or its file
    name; "/" is written "__" (`tcpwhy-fleet examples/lab` names
    examples/lab/idle-close/server.pcap `idle-close__server.pcap`). With several PATHs,
    each directory's captures start with its name (`lab__idle-close__server.pcap`), so
    that hostA/cap.pcap and hostB/cap.pcap stay apart. Names made equal anyway get "~2",
    "~3" …"""
    paths = [os.fspath(p) for p in paths]
    several = len(paths) > 1
    found: list[tuple[str, str]] = []
    for p in paths:
        if os.path.isdir(p):
            top = os.path.basename(os.path.normpath(os.path.abspath(p)))
            for root, dirs, files in os.walk(p):
                dirs.sort()
                for name in sorted(files):
                    if name.lower().endswith(CAPTURE_SUFFIXES):
                        f = os.path.join(root, name)
                        rel = os.path.relpath(f, p)
                        found.append((f, os.path.join(top, rel) if several else rel))
        elif os.path.exists(p):
            found.append((p, os.path.basename(p)))
        else:
            raise FileNotFoundError(f"{p}: no such file or directory")
    seen: set[str] = set()
    used: set[str] = set()
    named: list[tuple[str, str]] = []
    for f, rel in found:
        key = os.path.realpath(f)
        if key in seen:
            continue
        seen.add(key)
        base = rel.replace(os.sep, "__")
        name, n = base, 1
        while name in used:
            n += 1
            name = f"{base}~{n}"
        used.add(name)
        named.append((f, name))
    return named


def _partition_dir(out: str, table: str, name: str) -> str:
    # Hive partition values are URI-encoded (pyarrow decodes them when reading).
    value = urllib.parse.quote(name, safe="-_.~")
    return os.path.join(out, table, f"{PARTITION}={value}")


def _write(table: pa.Table, directory: str) -> None:
    """Replaces the partition at `directory` with `table` (a rerun overwrites it)."""
    if os.path.isdir(directory):
        shutil.rmtree(directory)
    os.makedirs(directory, exist_ok=True)
    final = os.path.join(directory, "part-0.parquet")
    pq.write_table(table, final + ".tmp")
    os.replace(final + ".tmp", final)


def analyze_capture(
    path: str, name: str, out: str, min_cost: str = "1ms", threads: int = 1
) -> dict[str, Any]:
    """One task: flows and findings of the capture at `path`, written under `out` as
    partition `name`; returns its row of captures.parquet and its verdict summary. Never
    raises for a bad capture: its error is in the result (and nothing is written)."""
    started = time.perf_counter()
    row: dict[str, Any] = {"capture": name, "path": path, "ok": False, "error": None}
    try:
        flows_doc, flows_notes = _native.flows_json(path, threads)
        findings_doc, findings_notes = _native.analyze_json(path, min_cost, [], "auto", threads)
        flows = flows_table(flows_doc, flows_notes)
        findings = findings_table(findings_doc, findings_notes)
        _write(flows, _partition_dir(out, "flows", name))
        _write(findings, _partition_dir(out, "findings", name))
    except _native.TcpwhyError as e:
        row["error"] = str(e)
    except Exception as e:  # noqa: BLE001 — a task reports, the run goes on
        row["error"] = f"{type(e).__name__}: {e}"
    if row["error"] is not None:
        # A partition left by an earlier run would pass for this run's.
        for table in ("flows", "findings"):
            shutil.rmtree(_partition_dir(out, table, name), ignore_errors=True)
        row["seconds"] = time.perf_counter() - started
        return {"capture": row, "summary": []}
    info = json.loads(flows.schema.metadata[b"tcpwhy"])
    row.update(
        ok=True,
        read_error=(info.get("error") or {}).get("message"),
        format=info.get("format"),
        frames=info.get("frames"),
        tcp_frames=info.get("tcp_frames"),
        connections=flows.num_rows,
        findings=findings.num_rows,
        cost_ms=sum(findings.column("cost_ms").to_pylist()),
        notes=flows_notes,
        seconds=time.perf_counter() - started,
    )
    # Per (finding id, server): what the verdict adds up across captures.
    summary: dict[tuple[str, str], list[float]] = {}
    for fid, server, cost, conns in zip(
        findings.column("id").to_pylist(),
        findings.column("server").to_pylist(),
        findings.column("cost_ms").to_pylist(),
        findings.column("connections").to_pylist(),
    ):
        s = summary.setdefault((fid, server), [0.0, 0, 0])
        s[0] += cost
        s[1] += 1
        s[2] += conns
    return {
        "capture": row,
        "summary": [(fid, server, c, n, k) for (fid, server), (c, n, k) in summary.items()],
    }


@dataclass
class Fleet:
    """The outcome of a fleet run: `captures` (captures.parquet), `verdict` (per finding
    id and server across all captures, costliest first), where they were written."""

    out: str
    captures: pa.Table
    verdict: pa.Table
    min_cost: str = "1ms"
    errors: list[dict[str, str]] = field(default_factory=list)
    # Finding id → captures with at least one such finding.
    mechanism_captures: dict[str, int] = field(default_factory=dict)

    @property
    def exit_status(self) -> int:
        """As `tcpwhy analyze`: 2 a capture failed, 1 findings, 0 none."""
        if self.errors:
            return 2
        return 1 if self.verdict.num_rows else 0

    def text(self, top: int = TOP_MECHANISMS, servers: int = TOP_SERVERS) -> str:
        return verdict_text(self, top, servers)


def _n(n: int, what: str) -> str:
    return f"{n:,} {what}" + ("" if n == 1 else "s")


def _ms(v: float) -> str:
    return f"{v:,.1f} ms"


def verdict_text(fleet: Fleet, top: int = TOP_MECHANISMS, servers: int = TOP_SERVERS) -> str:
    """The fleet verdict: the mechanisms that cost the most across all captures, each
    with the servers (address:port) where it cost the most; then the failed captures."""
    caps = fleet.captures.to_pylist()
    ok = [c for c in caps if c["ok"]]
    rows = fleet.verdict.to_pylist()
    total = sum(r["cost_ms"] for r in rows)
    lines = [
        f"tcpwhy fleet: {len(caps)} captures ({len(caps) - len(ok)} failed), "
        f"{sum(c['connections'] for c in ok):,} connections, "
        f"{sum(r['findings'] for r in rows):,} findings of at least {fleet.min_cost} "
        f"costing {_ms(total)} in all"
    ]
    by_id: dict[str, list[dict[str, Any]]] = {}
    for r in rows:
        by_id.setdefault(r["id"], []).append(r)
    mechanisms = sorted(
        by_id.items(), key=lambda kv: (-sum(r["cost_ms"] for r in kv[1]), kv[0])
    )
    if mechanisms:
        lines.append("")
        lines.append("Costliest mechanisms across all captures (server address:port where each cost most):")
    shown = [(fid, sorted(rs, key=lambda r: (-r["cost_ms"], r["server"]))) for fid, rs in mechanisms[:top]]
    width = max(
        [len(fid) for fid, _ in shown] + [len(r["server"]) for _, rs in shown for r in rs[:servers]],
        default=0,
    )
    for i, (fid, rs) in enumerate(shown, 1):
        cost = sum(r["cost_ms"] for r in rs)
        share = f"{100 * cost / total:.0f} %" if total > 0 else "-"
        n = sum(r["findings"] for r in rs)
        ncap = fleet.mechanism_captures.get(fid, 0)
        lines.append(
            f"{i:>3}. {fid:<{width}}  {_ms(cost):>14}  {share:>5}  "
            f"{_n(n, 'finding')} in {_n(ncap, 'capture')}"
        )
        for r in rs[:servers]:
            lines.append(
                f"     {r['server']:<{width}}  {_ms(r['cost_ms']):>14}         "
                f"{_n(r['findings'], 'finding')}, {_n(r['connections'], 'connection')}, "
                f"{_n(r['captures'], 'capture')}"
            )
        if len(rs) > servers:
            lines.append(f"       … and {len(rs) - servers} more server(s)")
    if len(mechanisms) > top:
        lines.append(f"     … and {len(mechanisms) - top} more mechanism(s) (OUT/findings/)")
    if fleet.errors:
        lines.append("")
        lines.append(
            f"Failed captures ({len(fleet.errors)}; also in {os.path.join(fleet.out, 'errors.json')}):"
        )
        for e in fleet.errors:
            lines.append(f"  {e['capture']}: {e['error']}")
    lines.append("")
    lines.append(
        f"Wrote {os.path.join(fleet.out, 'flows')}/ and {os.path.join(fleet.out, 'findings')}/ "
        f"({len(ok)} capture partitions each, capture=NAME), "
        f"{os.path.join(fleet.out, 'captures.parquet')}, {os.path.join(fleet.out, 'verdict.parquet')}"
    )
    return "\n".join(lines) + "\n"


def run(
    paths: Iterable[str | os.PathLike[str]],
    out: str | os.PathLike[str],
    address: str | None = None,
    workers: int | None = None,
    *,
    min_cost: str = "1ms",
    threads: int = 1,
    progress: TextIO | None = None,
) -> Fleet:
    """Analyses every capture PATHS name (files, or directories searched for captures)
    on Dask, one task per capture, and writes OUT (docs/fleet.md). `address`: an existing
    scheduler (`tcp://host:8786`), whose workers must see the captures and OUT at the same
    paths and have this package installed; without it a LocalCluster of `workers`
    processes (default: one per core) is started and closed. `threads`: threads of each
    capture's pass. Failed captures are in the result's `errors`; the others are written."""
    from dask.distributed import Client, LocalCluster, as_completed

    _native.duration_ns(min_cost)  # a bad --min-cost fails here, not in every task
    paths = list(paths)
    found = find_captures(paths)
    if not found:
        raise ValueError(f"no capture file in {', '.join(map(os.fspath, paths))} (*.pcap, *.pcapng, *.cap, also .gz)")
    files = [f for f, _ in found]
    names = [n for _, n in found]
    out = os.path.abspath(os.fspath(out))
    os.makedirs(out, exist_ok=True)
    cluster = None
    if address is None:
        cluster = LocalCluster(
            n_workers=workers or os.cpu_count() or 1,
            threads_per_worker=1,
            processes=True,
            dashboard_address=None,
        )
        client = Client(cluster)
    else:
        client = Client(address)
    results: list[dict[str, Any]] = []
    try:
        futures = client.map(
            analyze_capture,
            [os.path.abspath(f) for f in files],
            names,
            out=out,
            min_cost=min_cost,
            threads=threads,
            pure=False,
        )
        by_key = {f.key: (path, name) for f, path, name in zip(futures, files, names)}
        for done, fut in enumerate(as_completed(futures), 1):
            path, name = by_key[fut.key]
            try:
                res = fut.result()
            except Exception as e:  # noqa: BLE001 — a worker that died with its task
                res = {
                    "capture": {"capture": name, "path": path, "ok": False, "error": f"{type(e).__name__}: {e}"},
                    "summary": [],
                }
            res["capture"]["path"] = path
            results.append(res)
            if progress is not None:
                c = res["capture"]
                what = (
                    f"{c['connections']} connections, {c['findings']} findings"
                    if c["ok"]
                    else f"failed: {c['error']}"
                )
                print(f"[{done}/{len(files)}] {name}: {what}", file=progress, flush=True)
    finally:
        client.close()
        if cluster is not None:
            cluster.close()
    return _collect(results, out, min_cost)


def _collect(results: list[dict[str, Any]], out: str, min_cost: str) -> Fleet:
    """The client's share: captures.parquet, errors.json, the verdict (verdict.parquet),
    in an order that does not depend on which task finished first."""
    results.sort(key=lambda r: r["capture"]["capture"])
    captures = pa.Table.from_pylist([r["capture"] for r in results], schema=CAPTURES_SCHEMA)
    pq.write_table(captures, os.path.join(out, "captures.parquet"))
    errors = [
        {"capture": c["capture"], "path": c["path"], "error": c["error"]}
        for c in (r["capture"] for r in results)
        if not c["ok"]
    ]
    with open(os.path.join(out, "errors.json"), "w", encoding="utf-8") as f:
        json.dump(errors, f, indent=2, ensure_ascii=False)
        f.write("\n")
    agg: dict[tuple[str, str], dict[str, Any]] = {}
    for r in results:
        for fid, server, cost, n, conns in r["summary"]:
            a = agg.setdefault(
                (fid, server),
                {"id": fid, "server": server, "cost_ms": 0.0, "findings": 0, "connections": 0, "_captures": set()},
            )
            a["cost_ms"] += cost
            a["findings"] += n
            a["connections"] += conns
            a["_captures"].add(r["capture"]["capture"])
    rows = sorted(agg.values(), key=lambda a: (-a["cost_ms"], a["id"], a["server"]))
    for a in rows:
        a["captures"] = len(a["_captures"])
    verdict = pa.Table.from_pylist(
        [{k: v for k, v in a.items() if k != "_captures"} for a in rows], schema=VERDICT_SCHEMA
    )
    pq.write_table(verdict, os.path.join(out, "verdict.parquet"))
    per_id: dict[str, set[str]] = {}
    for a in rows:
        per_id.setdefault(a["id"], set()).update(a["_captures"])
    return Fleet(
        out=out,
        captures=captures,
        verdict=verdict,
        min_cost=min_cost,
        errors=errors,
        mechanism_captures={k: len(v) for k, v in per_id.items()},
    )


def read(out: str | os.PathLike[str], table: str = "findings") -> pa.Table:
    """OUT/flows or OUT/findings as one table with its `capture` column (a string, even
    for a capture named like a number)."""
    if table not in ("flows", "findings"):
        raise ValueError(f"table must be 'flows' or 'findings', not {table!r}")
    partitioning = ds.partitioning(pa.schema([(PARTITION, pa.string())]), flavor="hive")
    return ds.dataset(
        os.path.join(os.fspath(out), table), format="parquet", partitioning=partitioning
    ).to_table()


def _parser() -> argparse.ArgumentParser:
    p = argparse.ArgumentParser(
        prog="tcpwhy-fleet",
        description="Analyse many captures on Dask, one task per capture: each capture's "
        "connections and findings go to Parquet (OUT/flows/, OUT/findings/, partitioned by "
        "capture), and the fleet verdict says which mechanisms cost the most across all of "
        "them, on which servers and ports. Failed captures are listed with their error "
        "(OUT/errors.json); the others are written.",
        epilog="Examples:\n"
        "  tcpwhy-fleet captures/ -o out/\n"
        "  tcpwhy-fleet host1.pcap host2.pcapng -o out/ --workers 2\n"
        "  tcpwhy-fleet /shared/captures -o /shared/out --address tcp://scheduler:8786\n"
        "  python -m tcpwhy.fleet captures/ -o out/      (the same)\n\n"
        "Read the result: tcpwhy.fleet.read('out', 'findings').to_pandas()\n"
        "Exit status: 0 no finding, 1 findings, 2 a capture failed (the others are written).\n"
        "Details: docs/fleet.md.",
        formatter_class=argparse.RawDescriptionHelpFormatter,
    )
    p.add_argument("paths", nargs="+", metavar="PATH", help="capture files, or directories searched for *.pcap, *.pcapng, *.cap (also .gz)")
    p.add_argument("-o", "--output", required=True, metavar="OUT", help="output directory (partitions of the captures analysed are replaced)")
    p.add_argument("--address", metavar="ADDR", help="an existing Dask scheduler (tcp://host:8786); its workers need this package and the same paths. Default: a local cluster")
    p.add_argument("--workers", type=int, metavar="N", help="worker processes of the local cluster [default: one per core]")
    p.add_argument("--min-cost", default="1ms", metavar="DURATION", help="findings that cost at least this much (as tcpwhy analyze) [default: 1ms]")
    p.add_argument("-j", "--threads", type=int, default=1, metavar="N", help="threads of each capture's pass [default: 1; tasks already run in parallel]")
    p.add_argument("--top", type=int, default=TOP_MECHANISMS, metavar="N", help=f"mechanisms in the verdict [default: {TOP_MECHANISMS}]")
    p.add_argument("--servers", type=int, default=TOP_SERVERS, metavar="N", help=f"servers under each mechanism [default: {TOP_SERVERS}]")
    p.add_argument("-q", "--quiet", action="store_true", help="no line per capture on standard error")
    return p


def main(argv: Sequence[str] | None = None) -> int:
    args = _parser().parse_args(argv)
    if args.workers is not None and args.address is not None:
        print("tcpwhy-fleet: --workers is for the local cluster; with --address the scheduler has its own", file=sys.stderr)
        return 2
    try:
        _native.duration_ns(args.min_cost)
        fleet = run(
            args.paths,
            args.output,
            address=args.address,
            workers=args.workers,
            min_cost=args.min_cost,
            threads=args.threads,
            progress=None if args.quiet else sys.stderr,
        )
    except (ValueError, FileNotFoundError, OSError) as e:
        print(f"tcpwhy-fleet: {e}", file=sys.stderr)
        return 2
    sys.stdout.write(fleet.text(args.top, args.servers))
    sys.stdout.flush()
    return fleet.exit_status


if __name__ == "__main__":
    # Through the package's own module, so that Dask's workers find the task function as
    # tcpwhy.fleet.analyze_capture rather than in __main__.
    from tcpwhy.fleet import main as _main

    sys.exit(_main())
