package convert

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net/http"

	"github.com/kafkas3/kafkas3/format"
	"github.com/kafkas3/kafkas3/internal/registry"
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

// Kind names a converter. The converters and their names are declared
// once, in Converters.
type Kind int

// The converters Connect users configure.
const (
	KindAvro Kind = iota + 1
	KindJSON
	KindString
	KindByteArray
)

// Spec is what the converter registry declares about a converter beyond
// its names.
type Spec struct {
	// Schemas tells that the converter can give values a schema (Avro;
	// JSON with schemas.enable), which the avro and parquet formats need.
	Schemas bool
	build   func(Config) (Converter, error)
}

// Entry is one converter of the registry.
type Entry = registry.Entry[Kind, Spec]

// Registry is the table of converters.
type Registry = registry.Registry[Kind, Spec]

// Converters returns the converter registry (key.converter,
// value.converter), in the order docs list them. It is built on each call
// (no package state).
func Converters() Registry {
	raw := func(Config) (Converter, error) { return Raw{}, nil }
	return Registry{
		What: "converter", Unknown: ErrUnknownConverter, NotSupported: ErrInvalidConfig,
		Entries: []Entry{
			{Kind: KindAvro, Name: "avro", Class: "io.confluent.connect.avro.AvroConverter", Spec: Spec{Schemas: true,
				build: func(cfg Config) (Converter, error) { return NewAvro(cfg) }}},
			{Kind: KindJSON, Name: "json", Class: "org.apache.kafka.connect.json.JsonConverter", Spec: Spec{Schemas: true,
				build: func(cfg Config) (Converter, error) { return NewJSON(cfg), nil }}},
			{Kind: KindString, Name: "string", Class: "org.apache.kafka.connect.storage.StringConverter", Spec: Spec{build: raw}},
			{Kind: KindByteArray, Name: "bytearray", Short: []string{"bytes"}, Class: "org.apache.kafka.connect.converters.ByteArrayConverter", Spec: Spec{build: raw}},
		},
	}
}

// String returns the short name: avro, json, string or bytearray.
func (k Kind) String() string {
	if e, ok := Converters().Get(k); ok {
		return e.Name
	}
	return fmt.Sprintf("Kind(%d)", int(k))
}

// ClassName returns Connect's class name for k.
func (k Kind) ClassName() string {
	e, _ := Converters().Get(k)
	return e.Class
}

// Lookup maps a key.converter / value.converter value to a Kind (see
// Converters): Connect's class names, their last segment, or the short
// names avro, json, string, bytearray (or bytes), case-insensitively.
func Lookup(className string) (Kind, error) {
	e, err := Converters().Lookup(className)
	return e.Kind, err
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
	e, ok := Converters().Get(cfg.Kind)
	if !ok {
		return nil, fmt.Errorf("%w: converter kind %v", ErrInvalidConfig, cfg.Kind)
	}
	return e.Spec.build(cfg)
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
