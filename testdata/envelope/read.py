#!/usr/bin/env python3
"""Read kafkas3 envelope objects (store.envelope=true) with readers kafkas3
did not write: fastavro for .avro files, pyarrow (and DuckDB, when it is
installed) for .parquet files. Print every row as JSON, normalised so a Go
test can compare it with what it produced.

Usage: read.py FILE...  ->  {"FILE": {"reader": ..., "schema_name": ...,
    "columns": {name: type}, "rows": [...], "duckdb": {...}}, ...}

A row is {"partition", "offset", "timestamp" (ms since the epoch),
"timestamp_type", "key", "value", "headers": [{"key", "value"}]}; bytes are
"hex:<hex>", null is null. A typed value (a record) is an object of its
fields, as the reader gives it (nested field access, not bytes).
"""
import datetime
import json
import sys

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def ms(v):
    if isinstance(v, int):
        return v
    if v.tzinfo is None:
        v = v.replace(tzinfo=datetime.timezone.utc)
    d = v - EPOCH
    return (d.days * 86400 + d.seconds) * 1000 + d.microseconds // 1000


def norm(v):
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, (bytes, bytearray)):
        return "hex:" + bytes(v).hex()
    if isinstance(v, dict):
        return {k: norm(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm(x) for x in v]
    if isinstance(v, datetime.datetime):
        return ms(v)
    return str(v)


def row(r):
    return {
        "partition": r["partition"],
        "offset": r["offset"],
        "timestamp": ms(r["timestamp"]),
        "timestamp_type": r["timestamp_type"],
        "key": norm(r["key"]),
        "value": norm(r["value"]),
        "headers": [{"key": h["key"], "value": norm(h["value"])} for h in r["headers"]],
    }


def read_avro(path):
    import fastavro
    with open(path, "rb") as f:
        rd = fastavro.reader(f)
        schema = rd.writer_schema
        rows = [row(r) for r in rd]
    return {"reader": "fastavro", "schema_name": schema.get("name"), "rows": rows,
            "columns": {f["name"]: json.dumps(f["type"]) for f in schema["fields"]}}


def read_parquet(path):
    import pyarrow.parquet as pq
    t = pq.read_table(path)
    out = {"reader": "pyarrow", "columns": {f.name: str(f.type) for f in t.schema},
           "rows": [row(r) for r in t.to_pylist()]}
    try:
        import duckdb
    except ImportError:
        return out
    con = duckdb.connect()
    q = con.execute(
        "SELECT count(*), min(\"offset\"), max(\"offset\"), count(*) FILTER (WHERE value IS NULL), "
        "count(*) FILTER (WHERE key IS NULL), sum(len(headers)), min(epoch_ms(timestamp)) FROM read_parquet(?)", [path]).fetchone()
    out["duckdb"] = {"rows": q[0], "min_offset": q[1], "max_offset": q[2], "null_values": q[3],
                     "null_keys": q[4], "headers": int(q[5] or 0), "min_ts": q[6]}
    if out["columns"]["value"].startswith("struct"):
        # A typed value: query a nested field.
        out["duckdb"]["value_ids"] = [r[0] for r in con.execute(
            "SELECT value.id FROM read_parquet(?) WHERE value IS NOT NULL ORDER BY \"offset\"", [path]).fetchall()]
    return out


def main():
    res = {}
    for p in sys.argv[1:]:
        res[p] = read_avro(p) if p.endswith(".avro") else read_parquet(p)
    json.dump(res, sys.stdout)


if __name__ == "__main__":
    main()
