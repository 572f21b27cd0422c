package format

// Transient is implemented by the readers that can hand out records
// without copying their values: after SetTransient(true) the byte slices
// of a record Read returns point into the reader's buffers and are valid
// only until the next Read. It is for a caller that checks every record
// and keeps none (the restore's proof of an object it does not keep), and
// saves one copy of every value; SetTransient(false) copies again from
// the next record on. The JSON and bytes readers implement it, gzip and
// zstd included, and so does EnvelopeReader when the reader it wraps does.
type Transient interface{ SetTransient(on bool) }

// SetTransient makes the values of the next records point into the
// reader's buffers (on) or be copies (off).
func (jr *jsonReader) SetTransient(on bool) { jr.slab.transient = on }

// SetTransient makes the values of the next records point into the
// reader's buffers (on) or be copies (off).
func (br *bytesReader) SetTransient(on bool) { br.slab.transient = on }

// SetTransient passes on to the reader e wraps, when it is Transient.
func (e *EnvelopeReader) SetTransient(on bool) {
	if t, ok := e.rd.(Transient); ok {
		t.SetTransient(on)
	}
}
