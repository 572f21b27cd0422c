package format

import (
	"fmt"
	"strings"
)

// ForParallel returns the format that reads a .keys or .headers object
// (store.kafka.keys, store.kafka.headers) whose extension after the infix
// is ext: value, the value objects' format, when the extension is its and
// not JSON; else the format the extension names (keys.format.class and
// headers.format.class may differ from format.class). JSON keys objects
// hold null keys as the line null (NewNullableJSON); JSON headers objects
// never hold a null line. Parquet readers take each column chunk's codec
// from the file, Avro readers the codec from the header, so the
// extension's codec part needs no setting.
func ForParallel(ext string, value Format, keys bool) (Format, error) {
	if value != nil && ext == value.Extension() && !strings.HasPrefix(ext, ".json") {
		return value, nil
	}
	jsonf := NewJSON()
	if keys {
		jsonf = NewNullableJSON()
	}
	switch {
	case ext == ".avro":
		return NewAvro(AvroConfig{})
	case ext == ".json":
		return jsonf, nil
	case ext == ".json.gz":
		return WithGzip(jsonf, -1)
	case strings.HasSuffix(ext, ".parquet"):
		return NewParquet(ParquetConfig{Codec: "none"})
	}
	return nil, fmt.Errorf("%w: extension %q", ErrUnknownFormat, ext)
}
