#!/usr/bin/env python3
"""Read Avro container files with fastavro and Parquet files with pyarrow;
print their records as JSON, normalised the same way for both readers.

Usage: read.py FILE...  ->  {"FILE": {"reader": ..., "codec": ..., "schema": ..., "rows": [...]}, ...}

A file ending in .avro is read with fastavro, one ending in .parquet with
pyarrow. Values are normalised so a Go test can compare them with what it
produced: date -> "YYYY-MM-DD", timestamp -> microseconds since the epoch,
decimal -> str(Decimal), bytes -> "hex:<hex>" (except that pyarrow's
binary, which is how Arrow reads a Parquet ENUM, becomes its UTF-8 text
when it decodes), map -> object, array -> array, record -> object.
"""
import datetime
import decimal
import json
import sys

EPOCH = datetime.datetime(1970, 1, 1, tzinfo=datetime.timezone.utc)


def micros(v):
    if v.tzinfo is None:
        v = v.replace(tzinfo=datetime.timezone.utc)
    d = v - EPOCH
    return (d.days * 86400 + d.seconds) * 1000000 + d.microseconds


def norm_avro(v):
    """fastavro's Python values."""
    if v is None or isinstance(v, (bool, int, float, str)):
        return v
    if isinstance(v, dict):
        return {k: norm_avro(x) for k, x in v.items()}
    if isinstance(v, (list, tuple)):
        return [norm_avro(x) for x in v]
    if isinstance(v, datetime.datetime):
        return micros(v)
    if isinstance(v, datetime.date):
        return v.isoformat()
    if isinstance(v, decimal.Decimal):
        return str(v)
    if isinstance(v, (bytes, bytearray)):
        return "hex:" + bytes(v).hex()
    raise TypeError("unexpected fastavro value %r" % (v,))


def norm_arrow(v, t):
    import pyarrow as pa
    if v is None:
        return None
    if pa.types.is_struct(t):
        return {t.field(i).name: norm_arrow(v[t.field(i).name], t.field(i).type) for i in range(t.num_fields)}
    if pa.types.is_map(t):
        return {k: norm_arrow(x, t.item_type) for k, x in v}
    if pa.types.is_list(t) or pa.types.is_large_list(t):
        return [norm_arrow(x, t.value_type) for x in v]
    if pa.types.is_binary(t) or pa.types.is_large_binary(t):
        try:
            return v.decode("utf-8")
        except UnicodeDecodeError:
            return "hex:" + v.hex()
    if pa.types.is_fixed_size_binary(t):
        return "hex:" + v.hex()
    if pa.types.is_date(t):
        return v.isoformat()
    if pa.types.is_timestamp(t):
        return micros(v)
    if pa.types.is_decimal(t):
        return str(v)
    return v


def read_avro(path):
    import fastavro
    with open(path, "rb") as f:
        r = fastavro.reader(f)
        rows = [norm_avro(rec) for rec in r]
        meta = r.metadata
    return {"reader": "fastavro " + fastavro.__version__, "codec": meta.get("avro.codec", "null"),
            "schema": meta.get("avro.schema", ""), "rows": rows}


def read_parquet(path):
    import pyarrow as pa
    import pyarrow.parquet as pq
    f = pq.ParquetFile(path)
    md = f.metadata
    table = f.read()
    kv = md.metadata or {}
    codecs = sorted({md.row_group(g).column(c).compression
                     for g in range(md.num_row_groups) for c in range(md.num_columns)})
    return {"reader": "pyarrow " + pa.__version__, "codec": ",".join(codecs),
            "schema": kv.get(b"parquet.avro.schema", b"").decode(),
            "rows": [{n: norm_arrow(row[n], table.schema.field(n).type) for n in table.column_names}
                     for row in table.to_pylist()]}


def main(paths):
    out = {}
    for p in paths:
        if p.endswith(".avro"):
            out[p] = read_avro(p)
        elif p.endswith(".parquet"):
            out[p] = read_parquet(p)
        else:
            raise SystemExit("read.py: %s is neither .avro nor .parquet" % p)
    json.dump(out, sys.stdout, sort_keys=True)


if __name__ == "__main__":
    main(sys.argv[1:])
