"""tcpwhy for Python: the flows and findings of a pcap/pcapng capture as pyarrow Tables,
and fleet runs of many captures on Dask (`tcpwhy.fleet`).

    import tcpwhy
    flows = tcpwhy.flows("server.pcap")                  # one row per TCP connection
    findings = tcpwhy.analyze("server.pcap", min_cost="10ms")
    findings.to_pandas().groupby("id").cost_ms.sum()

The pass is tcpwhy's own (the Rust pipeline the CLI runs), with the GIL released; the
rows are those of `tcpwhy flows|analyze --format json` for the same file (docs/python.md).
"""

from __future__ import annotations

import os
import warnings
from collections.abc import Iterable
from typing import Union

import pyarrow as pa

from . import _native
from ._native import TcpwhyError
from ._tables import FINDINGS_SCHEMA, FLOWS_SCHEMA, file_info, findings_table, flows_table

__version__: str = _native.__version__
__all__ = [
    "flows",
    "analyze",
    "file_info",
    "TcpwhyError",
    "TcpwhyWarning",
    "FLOWS_SCHEMA",
    "FINDINGS_SCHEMA",
    "__version__",
]

PathLike = Union[str, "os.PathLike[str]"]


class TcpwhyWarning(UserWarning):
    """What the CLI prints on standard error as `warning:` or `note:` for a file it did
    analyse (frames skipped and why, a file cut short, clock steps)."""


def _threads(threads: int | None) -> int:
    # 0: the CLI's default (one thread per core for files of 64 MiB or more, else 1).
    if threads is None:
        return 0
    if not 1 <= threads <= 256:
        raise ValueError(f"threads must be 1 to 256, not {threads}")
    return threads


def _warn(notes: list[str]) -> None:
    for note in notes:
        warnings.warn(note, TcpwhyWarning, stacklevel=3)


def flows(path: PathLike, *, threads: int | None = None) -> pa.Table:
    """One row per TCP connection of the capture at `path` (pcap, pcapng, gzip; `-` is
    not accepted), with the fields of `tcpwhy flows --format json`, sorted by stream.

    Raises TcpwhyError (the CLI's message) where the CLI exits 2; what the CLI says on
    standard error for a file it read is issued as TcpwhyWarning and kept in
    `tcpwhy.file_info(table)["notes"]`."""
    document, notes = _native.flows_json(_path(path), _threads(threads))
    _warn(notes)
    return flows_table(document, notes)


def analyze(
    path: PathLike,
    min_cost: str = "1ms",
    host: PathLike | Iterable[PathLike] | None = None,
    *,
    vantage: str = "auto",
    threads: int | None = None,
) -> pa.Table:
    """One row per finding of the capture at `path`, costliest first, with the fields of
    `tcpwhy analyze --format json --min-cost MIN_COST` (plus `evidence_frames` and
    `fix_hosts` as list columns). `host`: a bundle directory written by `tcpwhy collect`,
    or several (`--host DIR` each). `vantage`: "auto", "client" or "server".

    Findings below `min_cost` are counted in `file_info(table)["below_min_cost"]`.
    Raises ValueError for a bad `min_cost` or `vantage`, TcpwhyError where the CLI
    exits 2."""
    if host is None:
        hosts: list[str] = []
    elif isinstance(host, (str, os.PathLike)):
        hosts = [os.fspath(host)]
    else:
        hosts = [os.fspath(h) for h in host]
    document, notes = _native.analyze_json(
        _path(path), min_cost, hosts, vantage, _threads(threads)
    )
    _warn(notes)
    return findings_table(document, notes)


def _path(path: PathLike) -> str:
    p = os.fspath(path)
    if p == "-":
        # Standard input belongs to the CLI (`tcpdump -w - | tcpwhy analyze -`).
        raise ValueError("tcpwhy.flows/analyze read files; for standard input use the CLI")
    return p
