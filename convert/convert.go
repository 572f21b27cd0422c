package convert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"strings"

	"github.com/kafkas3/kafkas3/format"
)

// ErrBadData is wrapped by Convert errors caused by the record's bytes (bad
// magic byte, unknown schema id, a datum that does not match its schema,
// a malformed JSON envelope). Such a record can go to a dead letter queue;
// other errors (registry unreachable, ...) cannot.
var ErrBadData = errors.New("bad record data")

// ErrInvalidConfig is wrapped by constructor errors for bad settings.
var ErrInvalidConfig = errors.New("invalid converter config")

// ErrUnknownConverter is wrapped by Lookup for an unrecognised class name.
var ErrUnknownConverter = errors.New("unknown converter")

// ErrRegistry is wrapped by errors talking to the Schema Registry that are
// not about the record (network, authentication, server errors).
var ErrRegistry = errors.New("schema registry")

// ErrRegistryAuth is wrapped (with ErrRegistry) when the registry refuses
// the credentials (HTTP 401 or 403): retrying cannot help.
var ErrRegistryAuth = errors.New("schema registry refused the credentials (check basic.auth.user.info)")

// Converter decodes a Kafka key or value the way a Connect converter does.
type Converter interface {
	// Convert decodes data from topic (a key when isKey). It returns nil
	// and no error for null data, and for converters without schemas
	// (the raw bytes are then the value).
	Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error)
}

// Kind names a converter.
type Kind int

// The converters Connect users configure.
const (
	KindAvro Kind = iota + 1
	KindJSON
	KindString
	KindByteArray
)

var kindNames = [...]struct{ class, short string }{
	KindAvro:      {"io.confluent.connect.avro.AvroConverter", "avro"},
	KindJSON:      {"org.apache.kafka.connect.json.JsonConverter", "json"},
	KindString:    {"org.apache.kafka.connect.storage.StringConverter", "string"},
	KindByteArray: {"org.apache.kafka.connect.converters.ByteArrayConverter", "bytearray"},
}

func (k Kind) valid() bool { return k >= KindAvro && int(k) < len(kindNames) }

// String returns the short name: avro, json, string or bytearray.
func (k Kind) String() string {
	if !k.valid() {
		return fmt.Sprintf("Kind(%d)", int(k))
	}
	return kindNames[k].short
}

// ClassName returns Connect's class name for k.
func (k Kind) ClassName() string {
	if !k.valid() {
		return ""
	}
	return kindNames[k].class
}

// Lookup maps a key.converter / value.converter value to a Kind: Connect's
// class names or the short names avro, json, string, bytearray (or bytes),
// case-insensitively for short names.
func Lookup(className string) (Kind, error) {
	n := strings.TrimSpace(className)
	for k := KindAvro; k.valid(); k++ {
		if n == k.ClassName() || strings.EqualFold(n, kindNames[k].short) {
			return k, nil
		}
	}
	if strings.EqualFold(n, "bytes") {
		return KindByteArray, nil
	}
	return 0, fmt.Errorf("%w: %q; allowed: avro, json, string, bytearray or %s, %s, %s, %s",
		ErrUnknownConverter, className, KindAvro.ClassName(), KindJSON.ClassName(), KindString.ClassName(), KindByteArray.ClassName())
}

// Credential sources for the registry (basic.auth.credentials.source).
const (
	CredentialsURL      = "URL"       // user:pass in schema.registry.url (Confluent's default)
	CredentialsUserInfo = "USER_INFO" // basic.auth.user.info
)

// Config configures a converter. The config layer fills it from
// key.converter.* or value.converter.* settings.
type Config struct {
	// Kind selects the converter (key.converter / value.converter).
	Kind Kind
	// KeyPrefix is put before setting names in errors, e.g.
	// "value.converter.".
	KeyPrefix string
	// SchemaRegistryURL is schema.registry.url: one URL or a
	// comma-separated list. Required by the Avro converter.
	SchemaRegistryURL string
	// BasicAuthCredentialsSource is basic.auth.credentials.source: ""
	// or URL (credentials in the URL, if any), or USER_INFO.
	BasicAuthCredentialsSource string
	// BasicAuthUserInfo is basic.auth.user.info, "user:password", used
	// with USER_INFO.
	BasicAuthUserInfo string
	// SchemasEnable is the JsonConverter's schemas.enable. Connect's
	// default is true; the zero value here is false, so the config layer
	// must apply the default.
	SchemasEnable bool
	// HTTPClient, if set, is used for registry requests.
	HTTPClient *http.Client
	// Logger receives debug messages; nil discards.
	Logger *slog.Logger
}

func (c Config) key(name string) string { return c.KeyPrefix + name }

func (c Config) logger() *slog.Logger {
	if c.Logger == nil {
		return slog.New(slog.DiscardHandler)
	}
	return c.Logger
}

// New builds the converter cfg.Kind names.
func New(cfg Config) (Converter, error) {
	switch cfg.Kind {
	case KindAvro:
		return NewAvro(cfg)
	case KindJSON:
		return NewJSON(cfg), nil
	case KindString, KindByteArray:
		return Raw{}, nil
	}
	return nil, fmt.Errorf("%w: converter kind %v", ErrInvalidConfig, cfg.Kind)
}

// Raw is the StringConverter and ByteArrayConverter: the bytes are the
// value, with no schema. Convert always returns nil.
type Raw struct{}

// Convert returns nil, nil.
func (Raw) Convert(context.Context, string, bool, []byte) (*format.Typed, error) { return nil, nil }

// SubjectName is Confluent's TopicNameStrategy: "<topic>-key" or
// "<topic>-value".
func SubjectName(topic string, isKey bool) string {
	if isKey {
		return topic + "-key"
	}
	return topic + "-value"
}

func part(isKey bool) string {
	if isKey {
		return "key"
	}
	return "value"
}
