package cmd

import (
	"strings"
	"testing"
	"time"

	"github.com/kafkas3/kafkas3/format"
)

// TestREADMEEnvelope keeps the docs' envelope schema and JSON example
// (docs/archive-format.md) equal to what the format writes.
func TestREADMEEnvelope(t *testing.T) {
	s := docsText(t)
	r1 := &format.Record{Offset: 42, Timestamp: time.UnixMilli(1700000000123), Key: []byte("order-7"), Value: []byte(`{"id":7}`),
		Headers: []format.Header{{Key: "trace", Value: []byte("abc")}, {Key: "trace"}, {Key: "empty", Value: []byte{}}}}
	r2 := &format.Record{Offset: 43, Timestamp: time.UnixMilli(1700000000456), TimestampType: format.TimestampLogAppendTime, Key: []byte("order-7")}
	for what, want := range map[string]string{
		"Avro schema":  "```json\n" + format.EnvelopeSchemaText("") + "\n```",
		"JSON example": "```json\n" + string(format.AppendEnvelopeLine(nil, r1)) + "\n" + string(format.AppendEnvelopeLine(nil, r2)) + "\n```",
	} {
		if !strings.Contains(s, want) {
			t.Errorf("the docs do not show the envelope's %s as the code writes it:\n%s", what, want)
		}
	}
}
