"""Shared by the tests: the CLI to compare with, the captures to compare on, and the
table → JSON mapping that undoes the package's flattening (written independently of
tcpwhy/_tables.py, so that a column the package drops or mistypes shows up here)."""

from __future__ import annotations

import json
import os
import subprocess
from pathlib import Path
from typing import Any

import pyarrow as pa
import pytest

REPO = Path(__file__).resolve().parents[2]
LAB = REPO / "examples" / "lab"
PUBLIC = REPO.parent / "shared" / "captures" / "public"


def cli_path() -> Path:
    return Path(os.environ.get("TCPWHY_BIN", REPO / "target" / "release" / "tcpwhy"))


def lab_captures() -> list[Path]:
    return sorted(LAB.glob("*/*.pcap"))


def public_captures() -> list[Path]:
    if not PUBLIC.is_dir():
        return []
    return sorted(
        p for p in PUBLIC.iterdir() if p.name.endswith((".pcap", ".pcapng", ".pcap.gz"))
    )


def all_captures() -> list[Path]:
    return lab_captures() + public_captures()


@pytest.fixture(scope="session")
def tcpwhy_bin() -> Path:
    b = cli_path()
    if not b.exists():
        pytest.fail(f"{b}: no CLI to compare with (cargo build --release, or set TCPWHY_BIN)")
    return b


def run_cli(bin: Path, *args: str) -> tuple[int, Any, list[str]]:
    """`tcpwhy ARGS --format json`: exit status, the parsed document, stderr lines."""
    p = subprocess.run(
        [str(bin), *args, "--format", "json"], capture_output=True, text=True, check=False
    )
    doc = json.loads(p.stdout) if p.stdout.strip() else None
    return p.returncode, doc, p.stderr.splitlines()


def unflatten_row(row: dict[str, Any]) -> dict[str, Any]:
    """A table row back to the JSON object it came from (docs/python.md, "Columns")."""
    out: dict[str, Any] = {}
    for name, value in row.items():
        parts = name.split(".")
        node = out
        for p in parts[:-1]:
            node = node.setdefault(p, {})
        node[parts[-1]] = value
    return _undo(out)


def _all_null(d: Any) -> bool:
    return isinstance(d, dict) and all(_all_null(v) if isinstance(v, dict) else v is None for v in d.values())


def _undo(obj: dict[str, Any]) -> dict[str, Any]:
    for key, value in list(obj.items()):
        if isinstance(value, dict):
            # A null object is a group of null columns (the JSON's fields are never all
            # null inside a present object: each has a count or a flag).
            obj[key] = None if _all_null(value) else _undo(value)
    if "window_scaling" in obj:
        state = obj.pop("window_scaling")
        if state != "negotiated":
            obj["window_scale"] = state
    syn = obj.get("syn")
    if isinstance(syn, dict) and syn.get("cut") is False:
        del syn["cut"]
    return obj


def table_connections(table: pa.Table) -> list[dict[str, Any]]:
    rows = []
    for r in table.to_pylist():
        start_time = r.pop("start_time")
        c = unflatten_row(r)
        assert start_time is not None
        rows.append(c)
    return rows


def table_findings(table: pa.Table) -> list[dict[str, Any]]:
    rows = []
    for r in table.to_pylist():
        frames = r.pop("evidence_frames")
        hosts = r.pop("fix_hosts")
        assert frames == [e["frame"] for e in r["evidence"]]
        assert hosts == [x["host"] for x in r["fix"]]
        rows.append(r)
    return rows
