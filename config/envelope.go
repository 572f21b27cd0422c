package config

// envelope reads store.envelope and refuses the settings it cannot be
// combined with, naming them: the bytes format (it holds values only),
// store.kafka.keys and store.kafka.headers (the envelope holds keys and
// headers: parallel objects would only repeat them), and
// behavior.on.null.values other than fail (tombstones are ordinary records
// of the envelope, with a null value). o's format, keys, headers and null
// settings must be parsed.
func (p *valueParser) envelope(o *SinkOptions) bool {
	on := p.bool(p.k.StoreEnvelope)
	if !on {
		return false
	}
	v := p.text(p.k.StoreEnvelope)
	if o.Format == FormatBytes && p.ok(p.k.FormatClass) {
		p.fail(p.k.StoreEnvelope, v, "needs format.class json, avro or parquet; the bytes format holds values only")
	}
	if o.StoreKeys {
		p.fail(p.k.StoreKafkaKeys, p.text(p.k.StoreKafkaKeys), "cannot be combined with store.envelope=true: the envelope holds each record's key")
	}
	if o.StoreHeaders {
		p.fail(p.k.StoreKafkaHeaders, p.text(p.k.StoreKafkaHeaders), "cannot be combined with store.envelope=true: the envelope holds each record's headers")
	}
	if o.NullValues != "" && o.NullValues != NullValuesFail && p.ok(p.k.BehaviorOnNullValues) {
		p.fail(p.k.BehaviorOnNullValues, p.text(p.k.BehaviorOnNullValues),
			"is not used with store.envelope=true: tombstones are archived as ordinary records with a null value; remove the key (or set fail)")
	}
	return true
}
