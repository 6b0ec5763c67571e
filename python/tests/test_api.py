"""tcpwhy.flows / tcpwhy.analyze against the CLI's JSON for the same file, on every lab
and public capture: same rows, same values, same types; errors with the CLI's message."""

from __future__ import annotations

import struct
import threading
import time
import warnings
from pathlib import Path

import pandas as pd
import pyarrow as pa
import pytest

import tcpwhy
from tcpwhy import _native
from conftest import (
    all_captures,
    lab_captures,
    run_cli,
    table_connections,
    table_findings,
)

CAPTURES = all_captures()
IDS = [f"{p.parent.name}/{p.name}" for p in CAPTURES]


def _expect_error(rc: int, stderr: list[str]) -> str:
    """The CLI's error line for a file it could not analyse (exit 2), less "tcpwhy: "."""
    assert rc == 2, stderr
    errors = [l for l in stderr if l.startswith("tcpwhy: ") and not l.startswith(("tcpwhy: warning:", "tcpwhy: note:"))]
    assert len(errors) == 1, stderr
    return errors[0].removeprefix("tcpwhy: ")


def _notes(stderr: list[str]) -> list[str]:
    return [l.removeprefix("tcpwhy: ") for l in stderr if l.startswith(("tcpwhy: warning:", "tcpwhy: note:"))]


def test_there_are_captures():
    assert len(lab_captures()) >= 40


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_flows_equal_cli(tcpwhy_bin, path: Path):
    rc, doc, stderr = run_cli(tcpwhy_bin, "flows", str(path))
    if rc == 2:
        with pytest.raises(tcpwhy.TcpwhyError) as e:
            tcpwhy.flows(path)
        assert str(e.value) == _expect_error(rc, stderr)
        return
    assert rc == 0, stderr
    with warnings.catch_warnings(record=True) as caught:
        warnings.simplefilter("always")
        table = tcpwhy.flows(path)
    assert [str(w.message) for w in caught] == _notes(stderr)
    assert table.schema.remove_metadata() == tcpwhy.FLOWS_SCHEMA
    (file,) = doc["files"]
    assert table_connections(table) == file["connections"]
    info = tcpwhy.file_info(table)
    assert info.pop("notes") == _notes(stderr)
    assert info.pop("schema_version") == doc["schema_version"]
    assert info.pop("command") == "flows"
    assert info == {k: v for k, v in file.items() if k != "connections"}


@pytest.mark.parametrize("path", CAPTURES, ids=IDS)
def test_analyze_equal_cli(tcpwhy_bin, path: Path):
    rc, doc, stderr = run_cli(tcpwhy_bin, "analyze", str(path))
    if rc == 2:
        with pytest.raises(tcpwhy.TcpwhyError) as e:
            tcpwhy.analyze(path)
        assert str(e.value) == _expect_error(rc, stderr)
        return
    assert rc in (0, 1), stderr
    with warnings.catch_warnings(record=True):
        warnings.simplefilter("always")
        table = tcpwhy.analyze(path)
    assert table.schema.remove_metadata() == tcpwhy.FINDINGS_SCHEMA
    (file,) = doc["files"]
    assert table_findings(table) == file["findings"]
    assert (rc == 1) == (table.num_rows > 0)
    info = tcpwhy.file_info(table)
    for k in ("notes", "schema_version", "command"):
        info.pop(k)
    assert info == {k: v for k, v in file.items() if k != "findings"}


@pytest.mark.parametrize("min_cost", ["0", "500us", "50ms", "2s"])
def test_min_cost_equal_cli(tcpwhy_bin, min_cost):
    path = next(p for p in lab_captures() if p.parent.name == "nagle-delayed-ack")
    _, doc, _ = run_cli(tcpwhy_bin, "analyze", "--min-cost", min_cost, str(path))
    table = tcpwhy.analyze(str(path), min_cost=min_cost)
    (file,) = doc["files"]
    assert table_findings(table) == file["findings"]
    assert tcpwhy.file_info(table)["below_min_cost"] == file["below_min_cost"]


def test_vantage_equal_cli(tcpwhy_bin):
    path = next(p for p in lab_captures() if p.parent.name == "idle-restart-cubic")
    for v in ("client", "server"):
        _, doc, _ = run_cli(tcpwhy_bin, "analyze", "--vantage", v, str(path))
        assert table_findings(tcpwhy.analyze(path, vantage=v)) == doc["files"][0]["findings"]


def test_garbage_file_raises_cli_message(tcpwhy_bin, tmp_path):
    bad = tmp_path / "garbage.pcap"
    bad.write_bytes(b"this is not a capture\n" * 50)
    for cmd, fn in (("flows", tcpwhy.flows), ("analyze", tcpwhy.analyze)):
        rc, _, stderr = run_cli(tcpwhy_bin, cmd, str(bad))
        with pytest.raises(tcpwhy.TcpwhyError) as e:
            fn(str(bad))
        assert str(e.value) == _expect_error(rc, stderr)


def test_missing_file_raises_cli_message(tcpwhy_bin, tmp_path):
    missing = tmp_path / "nope.pcap"
    rc, _, stderr = run_cli(tcpwhy_bin, "flows", str(missing))
    with pytest.raises(tcpwhy.TcpwhyError) as e:
        tcpwhy.flows(missing)
    assert str(e.value) == _expect_error(rc, stderr)


def test_truncated_file_is_read_to_the_cut(tcpwhy_bin, tmp_path):
    src = next(p for p in lab_captures() if p.parent.name == "clean-bulk")
    cut = tmp_path / "cut.pcap"
    cut.write_bytes(src.read_bytes()[:100_000])
    rc, doc, stderr = run_cli(tcpwhy_bin, "flows", str(cut))
    with pytest.warns(tcpwhy.TcpwhyWarning, match="file ends in the middle of frame"):
        table = tcpwhy.flows(cut)
    assert table_connections(table) == doc["files"][0]["connections"]
    assert tcpwhy.file_info(table)["error"] == doc["files"][0]["error"] is not None


def test_bad_arguments():
    path = lab_captures()[0]
    with pytest.raises(ValueError, match="unknown unit"):
        tcpwhy.analyze(path, min_cost="10 parsecs")
    with pytest.raises(ValueError, match="vantage"):
        tcpwhy.analyze(path, vantage="middle")
    with pytest.raises(ValueError, match="standard input"):
        tcpwhy.flows("-")
    with pytest.raises(tcpwhy.TcpwhyError, match="not a directory"):
        tcpwhy.analyze(path, host=str(path))


def test_durations_as_the_cli():
    assert _native.duration_ns("10ms") == 10_000_000
    assert _native.duration_ns("1.5s") == 1_500_000_000
    assert _native.duration_ns("500us") == 500_000
    assert _native.duration_ns("2m") == 120_000_000_000
    assert _native.duration_ns("7") == 7_000_000


def test_pandas_types():
    path = next(p for p in lab_captures() if p.parent.name == "nagle-delayed-ack")
    findings = tcpwhy.analyze(path).to_pandas()
    assert len(findings) >= 1
    assert findings["stream"].dtype == "int64"
    assert findings["cost_ms"].dtype == "float64"
    assert list(findings["evidence_frames"][0]) == [14, 15, 16, 21, 22, 23, 28, 29, 30, 35, 36, 37][: len(findings["evidence_frames"][0])]
    flows = tcpwhy.flows(path).to_pandas()
    assert flows["client_to_server.packets"].dtype == "int64"
    assert str(flows["start_time"].dtype).startswith("datetime64[ns")
    # Ints that may be null stay ints with pandas' Arrow-backed types.
    arrow = tcpwhy.flows(path).to_pandas(types_mapper=pd.ArrowDtype)
    assert str(arrow["server_to_client.max_in_flight_bytes"].dtype) == "int64[pyarrow]"


def _bulk_pcap(path: Path, frames: int) -> None:
    """A pcap of one connection's data segments (headers only, snaplen 54): enough
    frames for a pass of a few hundred ms."""
    eth = b"\x02\x00\x00\x00\x00\x02" + b"\x02\x00\x00\x00\x00\x01" + b"\x08\x00"
    out = bytearray(struct.pack("<IHHiIII", 0xA1B2C3D4, 2, 4, 0, 0, 54, 1))
    for i in range(frames):
        ip = struct.pack("!BBHHHBBH4s4s", 0x45, 0, 1500, i & 0xFFFF, 0, 64, 6, 0, bytes([127, 0, 0, 1]), bytes([127, 0, 0, 2]))
        tcp = struct.pack("!HHIIBBHHH", 40000, 8080, 1000 + 1460 * i, 1, 0x50, 0x10, 65535, 0, 0)
        us = i * 10
        out += struct.pack("<IIII", 1_700_000_000 + us // 1_000_000, us % 1_000_000, 54, 1514)
        out += eth + ip + tcp
    path.write_bytes(bytes(out))


def test_gil_released_during_the_pass(tmp_path):
    cap = tmp_path / "bulk.pcap"
    _bulk_pcap(cap, 400_000)
    done = threading.Event()
    took: list[float] = []

    def pass_in_thread() -> None:
        for _ in range(8):
            t = time.perf_counter()
            _native.analyze_json(str(cap), "1ms", [], "auto", 1)
            took.append(time.perf_counter() - t)
        done.set()

    worker = threading.Thread(target=pass_in_thread)
    last = time.perf_counter()
    longest = 0.0
    worker.start()
    # This thread keeps running Python while the pass runs: had the pass held the GIL,
    # one gap here would last as long as the pass.
    while not done.is_set():
        now = time.perf_counter()
        longest = max(longest, now - last)
        last = now
    worker.join()
    shortest = min(took)
    assert shortest > 0.02, f"passes too short to tell ({shortest:.3f} s)"
    assert longest < shortest / 2, f"longest gap {longest:.3f} s, shortest pass {shortest:.3f} s"


@pytest.mark.parametrize("case", ["idle-restart-cubic", "cached-ssthresh", "tail-loss"])
def test_host_bundles_equal_cli(tcpwhy_bin, case):
    """`host=`: the findings joined with the lab's bundles of both ends, as `--host`."""
    d = lab_captures()[0].parents[1] / case
    bundles = [str(d / "truth" / "bundle-client"), str(d / "truth" / "bundle-server")]
    path = str(d / "server.pcap")
    _, doc, _ = run_cli(tcpwhy_bin, "analyze", path, "--host", bundles[0], "--host", bundles[1])
    table = tcpwhy.analyze(path, host=bundles)
    (file,) = doc["files"]
    assert table_findings(table) == file["findings"]
    info = tcpwhy.file_info(table)
    assert info["hosts"] == file["hosts"] and len(info["hosts"]) == 2
    one = tcpwhy.analyze(Path(path), host=Path(bundles[1]))
    _, doc1, _ = run_cli(tcpwhy_bin, "analyze", path, "--host", bundles[1])
    assert table_findings(one) == doc1["files"][0]["findings"]
