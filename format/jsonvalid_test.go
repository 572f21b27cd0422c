package format

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"strings"
	"testing"
)

// jsonValidCases are texts on both sides of every rule of JSON's grammar.
var jsonValidCases = []string{
	``, ` `, `1`, ` 1 `, "\t\r\n1\n", `-`, `-0`, `-01`, `01`, `0.`, `0.5`, `.5`, `1e`, `1e+`, `1E-7`, `1e5.0`,
	`123456789012345678901234567890`, `-1.5e+300`, `+1`, `1 2`, `true`, `tru`, `truex`, `false`, `null`, `nul`, `None`,
	`""`, `"`, `"a`, `"\"`, `"\\"`, `"\/"`, `"\b\f\n\r\t"`, `"\a"`, `"\u00e9"`, `"\u00G9"`, `"\u00e"`, `"\ud800"`,
	"\"\x00\"", "\"\x1f\"", "\"\x7f\"", "\"\xff\xfe\"", "\"\t\"", `"日本"`,
	`[]`, `[ ]`, `[`, `]`, `[1,]`, `[,1]`, `[1,2]`, `[1 2]`, `[[]]`, `[[],[]]`, `[{}]`, `[1]]`, `[[1]`,
	`{}`, `{ }`, `{`, `}`, `{"a":1}`, `{"a" : 1 , "b":[true,null]}`, `{"a"}`, `{"a":}`, `{"a":1,}`, `{,}`,
	`{1:1}`, `{"a":1 "b":2}`, `{"a":1}}`, `{"a":{"b":{}}}`, `[}`, `{]`, `{"a":1]`, `[1}`,
	`{"f1":"value1"}`, ` {"k": [1, 2.5, -3e2, "x", {"y": null}]} `,
}

func TestValidJSONMatchesStdlib(t *testing.T) {
	for _, c := range jsonValidCases {
		if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
			t.Errorf("validJSON(%q) = %v, json.Valid says %v", c, got, want)
		}
	}
}

// TestValidJSONDepth: encoding/json refuses values nested deeper than
// 10,000, empty containers included; so does validJSON.
func TestValidJSONDepth(t *testing.T) {
	for _, n := range []int{63, 64, 65, 9999, 10000, 10001} {
		for _, open := range []string{"[", `{"a":`} {
			closing := "]"
			if open != "[" {
				closing = "}"
			}
			for _, inner := range []string{"1", "[]", "{}"} {
				c := strings.Repeat(open, n-1) + "[" + inner + "]" + strings.Repeat(closing, n-1)
				if got, want := validJSON([]byte(c)), json.Valid([]byte(c)); got != want {
					t.Errorf("depth %d of %q around %s: validJSON %v, json.Valid %v", n, open, inner, got, want)
				}
			}
		}
	}
}

func FuzzValidJSON(f *testing.F) {
	for _, c := range jsonValidCases {
		f.Add([]byte(c))
	}
	f.Fuzz(func(t *testing.T, b []byte) {
		if got, want := validJSON(b), json.Valid(b); got != want {
			t.Fatalf("validJSON(%q) = %v, json.Valid says %v", b, got, want)
		}
	})
}

// benchJSONLines are 1 KiB JSON events, like the bench's data set.
func benchJSONLines(n int) []byte {
	var b bytes.Buffer
	words := []string{"order", "shipped", "customer", "warehouse", "invoice", "delivery", "payment", "refund"}
	for i := range n {
		start := b.Len()
		fmt.Fprintf(&b, `{"id":%d,"type":"event","ts":1764600000%03d,"user":{"name":"u%d","tags":["a","b"]},"amount":%d.25,"text":"`, i, i%1000, i%977, i%10000)
		for b.Len()-start < 1000 {
			b.WriteString(words[(i+b.Len())%len(words)])
			b.WriteByte(' ')
		}
		b.WriteString("\"}\n")
	}
	return b.Bytes()
}

func BenchmarkValidJSON(b *testing.B) {
	lines := bytes.Split(bytes.TrimSuffix(benchJSONLines(1000), []byte("\n")), []byte("\n"))
	for _, bc := range []struct {
		name  string
		valid func([]byte) bool
	}{{"validJSON", validJSON}, {"json.Valid", json.Valid}} {
		b.Run(bc.name, func(b *testing.B) {
			b.SetBytes(int64(len(lines[0])))
			for i := range b.N {
				if !bc.valid(lines[i%len(lines)]) {
					b.Fatal("invalid")
				}
			}
		})
	}
}

func BenchmarkJSONReader(b *testing.B) {
	data := benchJSONLines(4000)
	b.SetBytes(int64(len(data)))
	for range b.N {
		rd, err := NewJSON().NewReader(bytes.NewReader(data))
		if err != nil {
			b.Fatal(err)
		}
		for {
			if _, err := rd.Read(); err != nil {
				if errors.Is(err, io.EOF) {
					break
				}
				b.Fatal(err)
			}
		}
	}
}
