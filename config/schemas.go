package config

import (
	"fmt"
	"log/slog"

	"github.com/twmb/franz-go/pkg/sr"

	"github.com/kafkas3/kafkas3/convert"
)

// schemaRegistry returns the client of the registry the archive's schemas
// come from (the sink's: the source registry) or go to (the source's: the
// target registry): value.converter.schema.registry.url with its
// credentials, else key.converter's; nil when neither is set or after a
// problem. These keys may be set for this alone, with any converter and
// format.
func (p *valueParser) schemaRegistry(log *slog.Logger) *sr.Client {
	for _, k := range []ConverterKeys{p.k.Converter(false), p.k.Converter(true)} {
		if p.str(k.RegistryURL) == "" {
			continue
		}
		_, cfg := p.converterConfig(k, log)
		cl, err := convert.NewRegistryClient(cfg)
		if err != nil {
			p.add(fmt.Errorf("%w: %w", ErrConfig, err))
			return nil
		}
		return cl
	}
	return nil
}
