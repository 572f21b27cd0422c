#!/usr/bin/env python3
"""Read Parquet files with pyarrow and print their rows as JSON.

Usage: check.py FILE...  ->  {"FILE": {"codecs": [...], "created_by": ..., "avro_schema": ..., "rows": [...]}, ...}

Values are normalised by Arrow type so a Go test can compare them:
binary and fixed-size binary -> "hex:<hex>", date -> "YYYY-MM-DD",
timestamp -> microseconds since the epoch, decimal -> str(Decimal),
map -> object, list -> array, struct -> object.
"""
import datetime
import json
import sys

import pyarrow as pa
import pyarrow.parquet as pq

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def norm(v, t):
    if v is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: norm(v[t.field(i).name], t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        return {k: norm(x, t.item_type) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [norm(x, t.value_type) for x in v]
    if pa.types.is_binary(t) or pa.types.is_fixed_size_binary(t) or pa.types.is_large_binary(t):
        return "hex:" + v.hex()
    if pa.types.is_date(t):
        return v.isoformat()
    if pa.types.is_timestamp(t):
        d = v - EPOCH
        return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds
    if pa.types.is_decimal(t):
        return str(v)
    return v


def main(paths):
    out = {}
    for path in paths:
        f = pq.ParquetFile(path)
        md = f.metadata
        codecs = sorted({md.row_group(g).column(c).compression
                         for g in range(md.num_row_groups) for c in range(md.num_columns)})
        table = f.read()
        kv = md.metadata or {}
        out[path] = {
            "codecs": codecs,
            "created_by": md.created_by,
            "row_groups": md.num_row_groups,
            "avro_schema": kv.get(b"parquet.avro.schema", b"").decode(),
            "rows": [{name: norm(row[name], table.schema.field(name).type) for name in table.column_names}
                     for row in table.to_pylist()],
        }
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
