package format

import "errors"

// ErrSchemaChanged is returned by a typed writer (Avro, Parquet) when a
// record's schema differs from the schema of the open file. The caller
// rotates: it closes the file and starts a new one with the new schema.
var ErrSchemaChanged = errors.New("record schema differs from the open file's schema")
