"""Arrow tables from the CLI's JSON documents (docs/json.md): the column names and types.

The Rust half (`tcpwhy._native`) returns, for one capture, the document that
`tcpwhy flows|analyze --format json FILE` prints. Here each connection or finding becomes
a row under an explicit schema, so that a column has the same type in every capture (a
column that is null in one file is still int64, and Parquet files of many captures
concatenate). Nested objects are flattened with "." (`client_to_server.rtt_ack_ms.median`),
as `pyarrow.Table.flatten` names them; lists stay list columns. Two fields are not one
JSON type and are split (docs/python.md): a direction's `window_scale` (an int, or
"not_negotiated" / "unknown") becomes `window_scale` (int or null) and `window_scaling`
("negotiated", "not_negotiated", "unknown"); a SYN's `cut`, present only when true, is
false when the SYN was captured. `start_time` (a timestamp) is added next to `start`.
"""

from __future__ import annotations

import json
from typing import Any

import pyarrow as pa

INT = pa.int64()
FLOAT = pa.float64()
STR = pa.string()
BOOL = pa.bool_()

RTT = pa.struct(
    [
        ("samples", INT),
        ("min", FLOAT),
        ("median", FLOAT),
        ("p95", FLOAT),
        ("max", FLOAT),
    ]
)

SYN = pa.struct(
    [
        ("mss", INT),
        ("wscale", INT),
        ("sack_permitted", BOOL),
        ("timestamps", BOOL),
        ("cut", BOOL),
    ]
)

LIMITED = pa.struct(
    [("rwnd", FLOAT), ("zero_window", FLOAT), ("sender", FLOAT), ("app", FLOAT)]
)

_COUNTS = [
    "retransmissions",
    "fast_retransmissions",
    "spurious_retransmissions",
    "out_of_order",
    "dup_acks",
    "zero_windows",
    "zero_window_probes",
    "window_full",
    "window_updates",
    "keep_alives",
    "dsacks",
    "previous_segment_not_captured",
    "acked_unseen",
    "capture_duplicates",
]

DIRECTION = pa.struct(
    [
        ("packets", INT),
        ("data_packets", INT),
        ("bytes", INT),
        ("unique_bytes", INT),
        ("isn", INT),
        ("syn", SYN),
        ("window_scale", INT),
        ("window_scaling", STR),
        ("max_window_bytes", INT),
        ("max_in_flight_bytes", INT),
        ("rtt_ack_ms", RTT),
        ("rtt_ts_ms", RTT),
        *[(name, INT) for name in _COUNTS],
        ("limited_ms", LIMITED),
        ("fin", BOOL),
        ("rst", BOOL),
    ]
)

ICMP_ERRORS = pa.struct(
    [
        ("count", INT),
        ("first_frame", INT),
        ("first", STR),
        ("too_big_frame", INT),
        ("next_hop_mtu", INT),
    ]
)

CONNECTION = pa.struct(
    [
        ("stream", INT),
        ("client", STR),
        ("server", STR),
        ("client_by", STR),
        ("first_frame", INT),
        ("last_frame", INT),
        ("start", STR),
        ("start_time", pa.timestamp("ns", tz="UTC")),
        ("duration_ms", FLOAT),
        ("vantage", STR),
        ("handshake_rtt_ms", FLOAT),
        ("syn_to_synack_ms", FLOAT),
        ("synack_to_ack_ms", FLOAT),
        ("rtt_ms", RTT),
        ("reused_port", BOOL),
        ("icmp_errors", ICMP_ERRORS),
        ("client_to_server", DIRECTION),
        ("server_to_client", DIRECTION),
    ]
)

EVIDENCE = pa.struct([("frame", INT), ("time", STR), ("note", STR)])
FIX = pa.struct([("host", STR), ("action", STR)])

FINDING = pa.struct(
    [
        ("id", STR),
        ("stream", INT),
        ("client", STR),
        ("server", STR),
        ("cost_ms", FLOAT),
        ("connections", INT),
        ("share", FLOAT),
        ("confidence", STR),
        ("vantage", STR),
        ("evidence_frames", pa.list_(INT)),
        ("fix_hosts", pa.list_(STR)),
        ("evidence", pa.list_(EVIDENCE)),
        ("fix", pa.list_(FIX)),
        ("explanation", STR),
    ]
)


def _flat_schema(struct: pa.StructType) -> pa.Schema:
    """The schema `Table.flatten` gives a table of rows of `struct` (lists kept)."""
    fields: list[pa.Field] = []

    def walk(prefix: str, t: pa.DataType) -> None:
        for f in t:
            name = prefix + f.name
            if pa.types.is_struct(f.type):
                walk(name + ".", f.type)
            else:
                fields.append(pa.field(name, f.type))

    walk("", struct)
    return pa.schema(fields)


FLOWS_SCHEMA = _flat_schema(CONNECTION)
FINDINGS_SCHEMA = _flat_schema(FINDING)

METADATA_KEY = b"tcpwhy"


def _epoch_ns(text: str) -> int:
    """`seconds.nanoseconds` since the epoch (the JSON's times) as integer nanoseconds."""
    sec, _, frac = text.partition(".")
    return int(sec) * 1_000_000_000 + int(frac.ljust(9, "0")[:9])


def _direction(d: dict[str, Any]) -> None:
    ws = d.get("window_scale")
    if isinstance(ws, int) and not isinstance(ws, bool):
        d["window_scaling"] = "negotiated"
    else:
        d["window_scaling"] = ws
        d["window_scale"] = None
    syn = d.get("syn")
    if syn is not None:
        syn.setdefault("cut", False)


def _connection(c: dict[str, Any]) -> dict[str, Any]:
    c["start_time"] = _epoch_ns(c["start"])
    _direction(c["client_to_server"])
    _direction(c["server_to_client"])
    return c


def _finding(f: dict[str, Any]) -> dict[str, Any]:
    f["evidence_frames"] = [e["frame"] for e in f["evidence"]]
    f["fix_hosts"] = [x["host"] for x in f["fix"]]
    return f


def _table(rows: list[dict[str, Any]], struct: pa.StructType, schema: pa.Schema) -> pa.Table:
    # pyarrow converts the nested dicts in C++ (fields the schema lacks are ignored, as
    # docs/json.md asks of readers); flatten() then names the columns "a.b".
    array = pa.array(rows, type=struct)
    table = pa.Table.from_struct_array(array)
    while any(pa.types.is_struct(f.type) for f in table.schema):
        table = table.flatten()
    return table.select(schema.names).cast(schema)


def _file_info(document: dict[str, Any], rows_key: str, notes: list[str]) -> bytes:
    (file,) = document["files"]
    info = {k: v for k, v in file.items() if k != rows_key}
    info["schema_version"] = document["schema_version"]
    info["command"] = document["command"]
    info["notes"] = notes
    return json.dumps(info, ensure_ascii=False).encode()


def flows_table(document_text: str, notes: list[str]) -> pa.Table:
    """The connections of a one-file `flows --format json` document, one row each."""
    document = json.loads(document_text)
    rows = [_connection(c) for c in document["files"][0]["connections"]]
    table = _table(rows, CONNECTION, FLOWS_SCHEMA)
    return table.replace_schema_metadata({METADATA_KEY: _file_info(document, "connections", notes)})


def findings_table(document_text: str, notes: list[str]) -> pa.Table:
    """The findings of a one-file `analyze --format json` document, costliest first."""
    document = json.loads(document_text)
    rows = [_finding(f) for f in document["files"][0]["findings"]]
    table = _table(rows, FINDING, FINDINGS_SCHEMA)
    return table.replace_schema_metadata({METADATA_KEY: _file_info(document, "findings", notes)})


def file_info(table: pa.Table) -> dict[str, Any]:
    """What the document said of the file itself (path, format, frames, skipped, error …,
    and `notes`: the lines the CLI prints on standard error), kept in the schema metadata."""
    meta = table.schema.metadata or {}
    raw = meta.get(METADATA_KEY)
    if raw is None:
        raise ValueError("not a table made by tcpwhy.flows or tcpwhy.analyze (no tcpwhy metadata)")
    return json.loads(raw)
