package format

import (
	"fmt"
	"strings"
)

// ForParallel returns the format that reads a .keys or .headers object
// (store.kafka.keys, store.kafka.headers) whose extension after the infix
// is ext: value, the value objects' format, when the extension is its and
// not JSON; else the format the extension names (keys.format.class and
// headers.format.class may differ from format.class; see Spec.Extension).
// JSON keys objects hold null keys as the line null (NewNullableJSON);
// JSON headers objects never hold a null line. Parquet readers take each
// column chunk's codec from the file, Avro readers the codec from the
// header, so the extension's codec part needs no setting.
func ForParallel(ext string, value Format, keys bool) (Format, error) {
	if value != nil && ext == value.Extension() && !strings.HasPrefix(ext, ".json") {
		return value, nil
	}
	for _, e := range Formats().Entries {
		s := e.Spec
		if s.parallel == nil {
			continue
		}
		base, comp := cutCompression(ext)
		if comp != CompressionNone && !s.Compress {
			continue
		}
		if base != s.Extension && !(s.CodecInExtension && strings.HasSuffix(base, s.Extension)) {
			continue
		}
		f, err := s.parallel(keys)
		if err != nil {
			return nil, err
		}
		return WithCompression(f, comp, -1)
	}
	return nil, fmt.Errorf("%w: extension %q", ErrUnknownFormat, ext)
}

// parallelJSON is the JSON reader of .keys (nullable) and .headers objects.
func parallelJSON(keys bool) (Format, error) {
	if keys {
		return NewNullableJSON(), nil
	}
	return NewJSON(), nil
}
