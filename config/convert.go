package config

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"strings"

	"github.com/kafkas3/kafkas3/archive"
	"github.com/kafkas3/kafkas3/convert"
	"github.com/kafkas3/kafkas3/format"
)

// ConverterAvro is the short name of Confluent's AvroConverter in the
// converter registry: the converter whose registry the rules check.
const ConverterAvro = "avro"

// converterConfig reads one converter's keys (Keys.Converter) as
// convert.New takes them; the class name is "" when none is set.
func (p *valueParser) converterConfig(k ConverterKeys, log *slog.Logger) (string, convert.Config) {
	class := p.choice(k.Class)
	cfg := convert.Config{
		KeyPrefix:                  k.Class.Name + ".",
		SchemaRegistryURL:          p.str(k.RegistryURL),
		BasicAuthCredentialsSource: p.choice(k.CredentialsSource),
		BasicAuthUserInfo:          p.str(k.UserInfo),
		SchemasEnable:              p.bool(k.SchemasEnable),
		Logger:                     log,
	}
	for _, u := range strings.Split(cfg.SchemaRegistryURL, ",") {
		if u = strings.TrimSpace(u); u != "" && !strings.HasPrefix(u, "http://") && !strings.HasPrefix(u, "https://") {
			p.fail(k.RegistryURL, cfg.SchemaRegistryURL, "is not an http(s) URL; want http(s)://host:port, comma-separated for several")
			break
		}
	}
	if ui := cfg.BasicAuthUserInfo; ui != "" && !strings.Contains(ui, ":") {
		p.fail(k.UserInfo, ui, "is not user:password")
	}
	return class, cfg
}

// schemaful reports whether the converter named class attaches schemas
// to the data, as the converter registry declares; JsonConverter does only
// with schemas.enable.
func schemaful(class string, schemasEnable bool) bool {
	e, err := convert.Converters().Lookup(class)
	if err != nil || !e.Spec.Schemas {
		return false
	}
	return e.Kind != convert.KindJSON || schemasEnable
}

// sinkConverter reads and builds one converter for the sink; nil when none
// is set or after a problem. It returns the Connect class name too.
func (p *valueParser) sinkConverter(k ConverterKeys, log *slog.Logger) (archive.Converter, string) {
	class, cfg := p.converterConfig(k, log)
	if class == "" {
		return nil, ""
	}
	kind, err := convert.Lookup(class)
	if err != nil {
		p.add(fmt.Errorf("%w: %s: %w", ErrConfig, k.Class.Name, err))
		return nil, ""
	}
	cfg.Kind = kind
	c, err := convert.New(cfg)
	if err != nil {
		p.add(fmt.Errorf("%w: %w", ErrConfig, err))
		return nil, ""
	}
	return archiveConverter{c}, kind.ClassName()
}

// sourceEncoder builds the target-side Avro encoder of one converter's
// registry settings; nil after a problem. It makes no request until the
// first record.
func (p *valueParser) sourceEncoder(k ConverterKeys, log *slog.Logger) *convert.AvroConverter {
	_, cfg := p.converterConfig(k, log)
	cfg.Kind, cfg.SchemasEnable = convert.KindAvro, false
	enc, err := convert.NewAvro(cfg)
	if err != nil {
		p.add(fmt.Errorf("%w: %w", ErrConfig, err))
		return nil
	}
	return enc
}

// archiveConverter adapts a convert.Converter to archive.Converter: bad
// data (convert.ErrBadData) becomes archive.ErrBadData; refused registry
// credentials are permanent; other registry failures stay transient.
type archiveConverter struct{ c convert.Converter }

func (s archiveConverter) Convert(ctx context.Context, topic string, isKey bool, data []byte) (*format.Typed, error) {
	t, err := s.c.Convert(ctx, topic, isKey, data)
	switch {
	case err == nil:
		return t, nil
	case errors.Is(err, convert.ErrBadData):
		return nil, archive.BadData(err)
	case errors.Is(err, convert.ErrRegistryAuth):
		return nil, archive.Permanent(err)
	}
	return t, err
}
