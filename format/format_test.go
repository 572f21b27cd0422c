package format

import (
	"bytes"
	"errors"
	"io"
	"testing"
)

// writeAllRecords writes values with f and returns the object bytes.
func writeAllRecords(t testing.TB, f Format, values ...[]byte) []byte {
	t.Helper()
	var buf bytes.Buffer
	w, err := f.NewWriter(&buf)
	if err != nil {
		t.Fatalf("NewWriter: %v", err)
	}
	for i, v := range values {
		if err := w.Write(&Record{Topic: "t", Offset: int64(i), Value: v}); err != nil {
			t.Fatalf("Write(%q): %v", v, err)
		}
	}
	if err := w.Close(); err != nil {
		t.Fatalf("Close: %v", err)
	}
	return buf.Bytes()
}

// readAllValues reads every record of data with f. It stops at the first
// error and returns it. A reader must keep returning its error.
func readAllValues(f Format, data []byte) ([][]byte, error) {
	r, err := f.NewReader(bytes.NewReader(data))
	if err != nil {
		return nil, err
	}
	var out [][]byte
	for {
		rec, err := r.Read()
		if errors.Is(err, io.EOF) {
			if _, again := r.Read(); !errors.Is(again, io.EOF) {
				return out, errors.New("Read after io.EOF did not return io.EOF")
			}
			return out, nil
		}
		if err != nil {
			if _, again := r.Read(); again == nil {
				return out, errors.New("Read after an error succeeded")
			}
			return out, err
		}
		if rec == nil || rec.Value == nil {
			return out, errors.New("reader returned a nil record or a nil value")
		}
		out = append(out, rec.Value)
		if len(out) > 1<<20 {
			return out, errors.New("too many records")
		}
	}
}

func equalValues(a, b [][]byte) bool {
	if len(a) != len(b) {
		return false
	}
	for i := range a {
		if !bytes.Equal(a[i], b[i]) {
			return false
		}
	}
	return true
}

func bs(ss ...string) [][]byte {
	out := make([][]byte, len(ss))
	for i, s := range ss {
		out[i] = []byte(s)
	}
	return out
}

// closeTracker is an io.Writer that records whether Close was called.
type closeTracker struct {
	bytes.Buffer
	closed bool
}

func (c *closeTracker) Close() error { c.closed = true; return nil }

// failWriter fails every write.
type failWriter struct{}

func (failWriter) Write([]byte) (int, error) { return 0, errors.New("disk on fire") }

func TestWriterErrors(t *testing.T) {
	bytesF, err := NewBytes(DefaultBytesConfig())
	if err != nil {
		t.Fatal(err)
	}
	gz, err := WithGzip(NewJSON(), -1)
	if err != nil {
		t.Fatal(err)
	}
	for _, f := range []Format{NewJSON(), bytesF, gz} {
		t.Run(f.Extension(), func(t *testing.T) {
			ct := &closeTracker{}
			w, err := f.NewWriter(ct)
			if err != nil {
				t.Fatal(err)
			}
			err = w.Write(&Record{Topic: "orders", Partition: 3, Offset: 42})
			if !errors.Is(err, ErrNullValue) {
				t.Fatalf("Write(null value) = %v, want ErrNullValue", err)
			}
			if f.Extension() != ".json.gz" && !bytes.Contains([]byte(err.Error()), []byte(`"orders" partition 3 offset 42`)) {
				t.Errorf("null value error %q does not name the record", err)
			}
			if err := w.Write(nil); !errors.Is(err, ErrNullValue) {
				t.Errorf("Write(nil) = %v, want ErrNullValue", err)
			}
			// A null value is not written and does not spoil the writer.
			if err := w.Write(&Record{Value: []byte("x")}); err != nil {
				t.Fatalf("Write after null: %v", err)
			}
			if err := w.Close(); err != nil {
				t.Fatal(err)
			}
			if ct.closed {
				t.Error("Close closed the underlying writer")
			}
			if err := w.Close(); err != nil {
				t.Errorf("second Close = %v", err)
			}
			if err := w.Write(&Record{Value: []byte("y")}); !errors.Is(err, ErrClosed) {
				t.Errorf("Write after Close = %v, want ErrClosed", err)
			}
			got, err := readAllValues(f, ct.Bytes())
			if err != nil || !equalValues(got, bs("x")) {
				t.Errorf("read back %q, %v; want [x]", got, err)
			}
		})
	}
	for _, f := range []Format{NewJSON(), bytesF} {
		w, _ := f.NewWriter(failWriter{})
		err1 := w.Write(&Record{Value: []byte("a")})
		err2 := w.Write(&Record{Value: []byte("b")})
		if err1 == nil || err2 == nil || w.Close() == nil {
			t.Errorf("%s: write errors not reported: %v, %v", f.Extension(), err1, err2)
		}
	}
}
