"""tcpwhy.fleet on a local two-worker Dask cluster: every lab and public capture, plus a
garbage file and a capture cut short; its Parquet equals the CLI's JSON capture by
capture, failures are listed with the CLI's message, and the verdict adds up."""

from __future__ import annotations

import json
import os
import subprocess
import sys
from collections import defaultdict
from pathlib import Path

import pyarrow.parquet as pq
import pytest

import tcpwhy
from tcpwhy import fleet
from conftest import LAB, PUBLIC, lab_captures, run_cli, table_connections, table_findings


def _cli_error(stderr: list[str]) -> str:
    (line,) = [l for l in stderr if l.startswith("tcpwhy: ") and not l.startswith(("tcpwhy: warning:", "tcpwhy: note:"))]
    return line.removeprefix("tcpwhy: ")


def _partition(out: Path, table: str, name: str):
    return pq.read_table(Path(fleet._partition_dir(str(out), table, name)) / "part-0.parquet")


@pytest.fixture(scope="module")
def bad_and_cut(tmp_path_factory) -> list[Path]:
    d = tmp_path_factory.mktemp("odd")
    garbage = d / "garbage.pcap"
    garbage.write_bytes(os.urandom(4096))
    cut = d / "cut-short.pcap"
    cut.write_bytes((LAB / "clean-bulk" / "server.pcap").read_bytes()[:150_000])
    return [garbage, cut]


def test_two_workers_equal_cli(tcpwhy_bin, tmp_path, bad_and_cut):
    paths = [LAB, *([PUBLIC] if PUBLIC.is_dir() else []), *bad_and_cut]
    out = tmp_path / "out"
    result = fleet.run(paths, out, workers=2)

    names = dict(fleet.find_captures(paths))
    assert len(names) >= len(lab_captures()) + 2
    assert names[str(LAB / "idle-close" / "server.pcap")] == "lab__idle-close__server.pcap"
    assert names[str(bad_and_cut[0])] == "garbage.pcap"
    captures = {c["capture"]: c for c in result.captures.to_pylist()}
    assert sorted(captures) == sorted(names.values())

    expected_errors = {}
    cost_by_id: dict[str, float] = defaultdict(float)
    findings_total = connections_total = 0
    for path, name in names.items():
        rc, flows_doc, stderr = run_cli(tcpwhy_bin, "flows", path)
        _, analyze_doc, _ = run_cli(tcpwhy_bin, "analyze", path)
        if rc == 2:
            expected_errors[name] = _cli_error(stderr)
            assert not Path(fleet._partition_dir(str(out), "flows", name)).exists()
            continue
        connections = flows_doc["files"][0]["connections"]
        findings = analyze_doc["files"][0]["findings"]
        assert table_connections(_partition(out, "flows", name)) == connections, name
        assert table_findings(_partition(out, "findings", name)) == findings, name
        assert captures[name]["ok"] and captures[name]["connections"] == len(connections)
        assert captures[name]["findings"] == len(findings)
        for f in findings:
            cost_by_id[f["id"]] += f["cost_ms"]
        findings_total += len(findings)
        connections_total += len(connections)

    # The garbage file failed with the CLI's message; the file cut short was written,
    # with where it was cut.
    garbage, cut = (names[str(p)] for p in bad_and_cut)
    assert garbage in expected_errors
    assert captures[cut]["ok"] and "file ends in the middle of frame" in captures[cut]["read_error"]
    assert {e["capture"]: e["error"] for e in result.errors} == expected_errors
    assert json.loads((out / "errors.json").read_text()) == result.errors
    assert result.exit_status == 2

    # The whole dataset, with its capture column, holds every row once.
    flows = fleet.read(out, "flows")
    findings = fleet.read(out, "findings")
    assert flows.num_rows == connections_total
    assert findings.num_rows == findings_total == sum(result.verdict.column("findings").to_pylist())
    assert set(flows.column("capture").to_pylist()) <= set(names.values())

    # The verdict: mechanisms by total cost across captures, as the CLI's findings add up.
    text = result.text()
    top_id = max(cost_by_id, key=lambda k: cost_by_id[k])
    verdict_by_id: dict[str, float] = defaultdict(float)
    for r in result.verdict.to_pylist():
        verdict_by_id[r["id"]] += r["cost_ms"]
    assert verdict_by_id.keys() == cost_by_id.keys()
    for k, v in cost_by_id.items():
        assert verdict_by_id[k] == pytest.approx(v)
    assert text.splitlines()[3].split()[1] == top_id
    assert f"Failed captures ({len(expected_errors)}" in text
    assert f"{garbage}: {expected_errors[garbage]}" in text


def test_existing_scheduler(tmp_path):
    from dask.distributed import LocalCluster

    caps = [LAB / "nagle-delayed-ack" / "client.pcap", LAB / "idle-close" / "server.pcap"]
    with LocalCluster(n_workers=2, threads_per_worker=1, processes=True, dashboard_address=None) as cluster:
        result = fleet.run(caps, tmp_path / "out", address=cluster.scheduler_address)
    assert result.errors == []
    assert sorted(result.captures.column("capture").to_pylist()) == ["client.pcap", "server.pcap"]
    direct = tcpwhy.analyze(caps[0])
    written = _partition(tmp_path / "out", "findings", "client.pcap")
    assert written.replace_schema_metadata(None).equals(direct.replace_schema_metadata(None))


def test_console_script_and_module(tmp_path, bad_and_cut):
    bindir = Path(sys.executable).parent
    caps = [str(LAB / "nagle-delayed-ack" / "client.pcap"), str(bad_and_cut[0])]
    p = subprocess.run(
        [str(bindir / "tcpwhy-fleet"), *caps, "-o", str(tmp_path / "out"), "--workers", "2"],
        capture_output=True, text=True, check=False, timeout=120,
    )
    assert p.returncode == 2, p.stderr
    assert "delayed_ack.nagle" in p.stdout
    assert "Failed captures (1;" in p.stdout
    assert "failed: " in p.stderr  # the line per capture
    h = subprocess.run(
        [sys.executable, "-m", "tcpwhy.fleet", "--help"], capture_output=True, text=True, check=False
    )
    assert h.returncode == 0 and "--address" in h.stdout and "Exit status" in h.stdout


def test_cli_subcommand_runs_the_driver(tcpwhy_bin, tmp_path, bad_and_cut):
    probe = subprocess.run([str(tcpwhy_bin), "help", "fleet"], capture_output=True, text=True, check=False)
    if probe.returncode != 0:
        pytest.skip(f"{tcpwhy_bin} has no fleet subcommand (built before it; rebuild)")
    assert "pip install ./python" in probe.stdout
    env = dict(os.environ, PATH=f"{Path(sys.executable).parent}{os.pathsep}{os.environ.get('PATH', '')}")
    caps = [str(LAB / "nagle-delayed-ack" / "client.pcap"), str(bad_and_cut[0])]
    p = subprocess.run(
        [str(tcpwhy_bin), "fleet", *caps, "-o", str(tmp_path / "out"), "--workers", "2", "-q"],
        capture_output=True, text=True, check=False, timeout=120, env=env,
    )
    assert p.returncode == 2, p.stderr
    assert "delayed_ack.nagle" in p.stdout and "Failed captures (1;" in p.stdout
    h = subprocess.run([str(tcpwhy_bin), "fleet", "--help"], capture_output=True, text=True, check=False, env=env)
    assert h.returncode == 0 and "--address" in h.stdout, h.stderr
    # An interpreter without the package: the CLI says what to install.
    base = getattr(sys, "_base_executable", None)
    has = base and subprocess.run([base, "-c", "import tcpwhy"], capture_output=True, check=False).returncode == 0
    if base and not has:
        m = subprocess.run(
            [str(tcpwhy_bin), "fleet", caps[0], "-o", str(tmp_path / "none")],
            capture_output=True, text=True, check=False, env=dict(env, TCPWHY_PYTHON=base),
        )
        assert m.returncode == 2
        assert "tcpwhy: fleet needs the Python package: pip install ./python" in m.stderr


def test_nothing_to_analyse(tmp_path):
    (tmp_path / "notes.txt").write_text("no capture here\n")
    with pytest.raises(ValueError, match="no capture file in"):
        fleet.run([tmp_path], tmp_path / "out")
    p = subprocess.run(
        [sys.executable, "-m", "tcpwhy.fleet", str(tmp_path / "missing.pcap"), "-o", str(tmp_path / "out")],
        capture_output=True, text=True, check=False,
    )
    assert p.returncode == 2 and "missing.pcap: no such file or directory" in p.stderr


def test_capture_names(tmp_path):
    for host in ("hostA", "hostB"):
        (tmp_path / host / "day1").mkdir(parents=True)
        (tmp_path / host / "day1" / "cap.pcap").write_bytes(b"")
        (tmp_path / host / "notes.txt").write_text("")
    one = fleet.find_captures([tmp_path / "hostA"])
    assert [n for _, n in one] == ["day1__cap.pcap"]
    both = fleet.find_captures([tmp_path / "hostA", tmp_path / "hostB", tmp_path / "hostA" / "day1" / "cap.pcap"])
    assert [n for _, n in both] == ["hostA__day1__cap.pcap", "hostB__day1__cap.pcap"]
    files = fleet.find_captures([tmp_path / "hostA" / "day1" / "cap.pcap", tmp_path / "hostB" / "day1" / "cap.pcap"])
    assert [n for _, n in files] == ["cap.pcap", "cap.pcap~2"]
