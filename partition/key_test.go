package partition

import (
	"errors"
	"strconv"
	"strings"
	"testing"
)

func TestDefaultKeyConfig(t *testing.T) {
	c := DefaultKeyConfig()
	want := KeyConfig{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+", OffsetPadWidth: 10}
	if c != want {
		t.Fatalf("DefaultKeyConfig() = %+v, want %+v", c, want)
	}
	if err := c.Validate(); err != nil {
		t.Fatalf("default config invalid: %v", err)
	}
}

func TestValidate(t *testing.T) {
	tests := []struct {
		name    string
		mutate  func(*KeyConfig)
		wantKey string // "" means valid
	}{
		{"default", func(*KeyConfig) {}, ""},
		{"empty topics.dir", func(c *KeyConfig) { c.TopicsDir = "" }, ""},
		{"file.delim underscore", func(c *KeyConfig) { c.FileDelim = "_" }, ""},
		{"file.delim dash", func(c *KeyConfig) { c.FileDelim = "-" }, ""},
		{"file.delim dot", func(c *KeyConfig) { c.FileDelim = "." }, ""},
		{"multi-char delims", func(c *KeyConfig) { c.DirectoryDelim = "//"; c.FileDelim = "++" }, ""},
		{"pad 1", func(c *KeyConfig) { c.OffsetPadWidth = 1 }, ""},
		{"pad 19", func(c *KeyConfig) { c.OffsetPadWidth = 19 }, ""},
		{"pad 0", func(c *KeyConfig) { c.OffsetPadWidth = 0 }, KeyOffsetPadWidth},
		{"pad 20", func(c *KeyConfig) { c.OffsetPadWidth = 20 }, KeyOffsetPadWidth},
		{"pad negative", func(c *KeyConfig) { c.OffsetPadWidth = -1 }, KeyOffsetPadWidth},
		{"empty directory.delim", func(c *KeyConfig) { c.DirectoryDelim = "" }, KeyDirectoryDelim},
		{"directory.delim topic char", func(c *KeyConfig) { c.DirectoryDelim = "_" }, KeyDirectoryDelim},
		{"directory.delim with letter", func(c *KeyConfig) { c.DirectoryDelim = "/a" }, KeyDirectoryDelim},
		{"empty file.delim", func(c *KeyConfig) { c.FileDelim = "" }, KeyFileDelim},
		{"file.delim digit", func(c *KeyConfig) { c.FileDelim = "1" }, KeyFileDelim},
		{"file.delim contains directory.delim", func(c *KeyConfig) { c.FileDelim = "+/" }, KeyFileDelim},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			c := DefaultKeyConfig()
			tt.mutate(&c)
			err := c.Validate()
			if tt.wantKey == "" {
				if err != nil {
					t.Fatalf("Validate(%+v) = %v, want nil", c, err)
				}
				return
			}
			if err == nil {
				t.Fatalf("Validate(%+v) = nil, want error naming %s", c, tt.wantKey)
			}
			if !errors.Is(err, ErrInvalidConfig) {
				t.Errorf("error %v does not wrap ErrInvalidConfig", err)
			}
			if !strings.Contains(err.Error(), tt.wantKey) {
				t.Errorf("error %q does not name %s", err, tt.wantKey)
			}
		})
	}
}

func TestObjectKeyAndParse(t *testing.T) {
	def := DefaultKeyConfig()
	noDir := def
	noDir.TopicsDir = ""
	blankDir := def
	blankDir.TopicsDir = "  "
	under := def
	under.FileDelim = "_"
	dash := def
	dash.FileDelim = "-"
	dot := def
	dot.FileDelim = "."
	wide := def
	wide.OffsetPadWidth = 19
	narrow := def
	narrow.OffsetPadWidth = 1
	nested := def
	nested.TopicsDir = "archive/kafka"
	multi := KeyConfig{TopicsDir: "t", DirectoryDelim: "::", FileDelim: "##", OffsetPadWidth: 5}

	tests := []struct {
		name string
		cfg  KeyConfig
		key  string
		want ObjectName
	}{
		{"confluent json", def, "topics/s3_topic/partition=0/s3_topic+0+0000000000.json",
			ObjectName{"s3_topic", "partition=0", 0, 0, ".json"}},
		{"confluent avro 3", def, "topics/s3_topic/partition=0/s3_topic+0+0000000003.avro",
			ObjectName{"s3_topic", "partition=0", 0, 3, ".avro"}},
		{"confluent avro 6", def, "topics/s3_topic/partition=0/s3_topic+0+0000000006.avro",
			ObjectName{"s3_topic", "partition=0", 0, 6, ".avro"}},
		{"bin gz", def, "topics/raw/partition=12/raw+12+0000001234.bin.gz",
			ObjectName{"raw", "partition=12", 12, 1234, ".bin.gz"}},
		{"keys avro", def, "topics/t/partition=1/t+1+0000000000.keys.avro",
			ObjectName{"t", "partition=1", 1, 0, ".keys.avro"}},
		{"parquet", def, "topics/t/partition=1/t+1+0000000000.snappy.parquet",
			ObjectName{"t", "partition=1", 1, 0, ".snappy.parquet"}},
		{"daily", def, "topics/orders/year=2024/month=01/day=02/orders+3+0000000042.json",
			ObjectName{"orders", "year=2024/month=01/day=02", 3, 42, ".json"}},
		{"field with odd chars", def, "topics/o/region=eu-west+1/name=a b=c/o+0+0000000000.json",
			ObjectName{"o", "region=eu-west+1/name=a b=c", 0, 0, ".json"}},
		{"no ext", def, "topics/t/partition=0/t+0+0000000007",
			ObjectName{"t", "partition=0", 0, 7, ""}},
		{"offset wider than pad", def, "topics/t/partition=0/t+0+12345678901.json",
			ObjectName{"t", "partition=0", 0, 12345678901, ".json"}},
		{"max values", wide, "topics/t/partition=2147483647/t+2147483647+9223372036854775807.json",
			ObjectName{"t", "partition=2147483647", 2147483647, 9223372036854775807, ".json"}},
		{"no topics dir", noDir, "s3_topic/partition=0/s3_topic+0+0000000000.json",
			ObjectName{"s3_topic", "partition=0", 0, 0, ".json"}},
		{"blank topics dir", blankDir, "s3_topic/partition=0/s3_topic+0+0000000000.json",
			ObjectName{"s3_topic", "partition=0", 0, 0, ".json"}},
		{"nested topics dir", nested, "archive/kafka/t/partition=0/t+0+0000000000.json",
			ObjectName{"t", "partition=0", 0, 0, ".json"}},
		{"underscore delim, underscore topic", under, "topics/my_topic_1/partition=3/my_topic_1_3_0000000010.json",
			ObjectName{"my_topic_1", "partition=3", 3, 10, ".json"}},
		{"dash delim, dash topic", dash, "topics/a-1-2/partition=1/a-1-2-1-0000000002.json",
			ObjectName{"a-1-2", "partition=1", 1, 2, ".json"}},
		{"dot delim, dot topic", dot, "topics/a.1.b/partition=0/a.1.b.0.0000000000.json.gz",
			ObjectName{"a.1.b", "partition=0", 0, 0, ".json.gz"}},
		{"narrow pad", narrow, "topics/t/partition=0/t+0+5.json",
			ObjectName{"t", "partition=0", 0, 5, ".json"}},
		{"multi-char delims", multi, "t::x::a::b::x##4##00099.bin",
			ObjectName{"x", "a::b", 4, 99, ".bin"}},
		{"empty encoded", def, "topics/t//t+0+0000000000.json",
			ObjectName{"t", "", 0, 0, ".json"}},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if err := tt.cfg.Validate(); err != nil {
				t.Fatalf("config invalid: %v", err)
			}
			if err := tt.cfg.ValidateName(tt.want); err != nil {
				t.Fatalf("name invalid: %v", err)
			}
			if got := tt.cfg.ObjectKey(tt.want); got != tt.key {
				t.Errorf("ObjectKey(%+v) = %q, want %q", tt.want, got, tt.key)
			}
			got, err := tt.cfg.ParseObjectKey(tt.key)
			if err != nil {
				t.Fatalf("ParseObjectKey(%q): %v", tt.key, err)
			}
			if got != tt.want {
				t.Errorf("ParseObjectKey(%q) = %+v, want %+v", tt.key, got, tt.want)
			}
			if p := tt.cfg.TopicPrefix(tt.want.Topic); !strings.HasPrefix(tt.key, p) {
				t.Errorf("key %q does not start with TopicPrefix %q", tt.key, p)
			}
		})
	}
}

func TestTopicPrefix(t *testing.T) {
	c := DefaultKeyConfig()
	if got := c.TopicPrefix("s3_topic"); got != "topics/s3_topic/" {
		t.Errorf("TopicPrefix = %q", got)
	}
	c.TopicsDir = ""
	if got := c.TopicPrefix("s3_topic"); got != "s3_topic/" {
		t.Errorf("TopicPrefix without topics.dir = %q", got)
	}
	c = KeyConfig{TopicsDir: "a", DirectoryDelim: "::", FileDelim: "+", OffsetPadWidth: 3}
	if got := c.TopicPrefix("t"); got != "a::t::" {
		t.Errorf("TopicPrefix with :: = %q", got)
	}
}

func TestParseObjectKeyNonCanonical(t *testing.T) {
	c := DefaultKeyConfig()
	// Another pad width, and a zero-padded partition: accepted, same name.
	for _, key := range []string{
		"topics/t/partition=7/t+7+00000000000000000042.json",
		"topics/t/partition=7/t+007+42.json",
	} {
		n, err := c.ParseObjectKey(key)
		if err != nil {
			t.Fatalf("ParseObjectKey(%q): %v", key, err)
		}
		if n.Partition != 7 || n.StartOffset != 42 || n.Ext != ".json" {
			t.Errorf("ParseObjectKey(%q) = %+v", key, n)
		}
	}
}

func TestParseObjectKeyErrors(t *testing.T) {
	c := DefaultKeyConfig()
	tests := []struct{ key, want string }{
		{"", "does not start with topics.dir"},
		{"other/t/partition=0/t+0+0000000000.json", "does not start with topics.dir"},
		{"topics/t", "no directory.delim"},
		{"topics/t/t+0+0000000000.json", "no encoded partition"},
		{"topics//partition=0/+0+0000000000.json", "topic name is empty"},
		{"topics/bad topic/partition=0/bad topic+0+0000000000.json", "contains ' '"},
		{"topics/../partition=0/..+0+0000000000.json", "not allowed"},
		{"topics/" + strings.Repeat("a", 250) + "/partition=0/x+0+0.json", "longer than 249"},
		{"topics/t/partition=0/u+0+0000000000.json", "does not start with topic \"t\""},
		{"topics/t/partition=0/tt+0+0000000000.json", "does not start with topic \"t\""},
		{"topics/t/partition=0/t+x+0000000000.json", "no partition number"},
		{"topics/t/partition=0/t++0000000000.json", "no partition number"},
		{"topics/t/partition=0/t+0-0000000000.json", "no file.delim"},
		{"topics/t/partition=0/t+0+.json", "no start offset"},
		{"topics/t/partition=0/t+0+", "no start offset"},
		{"topics/t/partition=0/t+2147483648+0000000000.json", "partition \"2147483648\" out of range"},
		{"topics/t/partition=0/t+0+9223372036854775808.json", "out of range"},
		{"topics/t/partition=0/t+0+0000000000json", "does not start with '.'"},
		{"topics/t/partition=0/t+0+0000000000_1.json", "does not start with '.'"},
	}
	for _, tt := range tests {
		_, err := c.ParseObjectKey(tt.key)
		if err == nil {
			t.Errorf("ParseObjectKey(%q) = nil error, want %q", tt.key, tt.want)
			continue
		}
		if !errors.Is(err, ErrMalformedKey) {
			t.Errorf("ParseObjectKey(%q) error %v does not wrap ErrMalformedKey", tt.key, err)
		}
		if !strings.Contains(err.Error(), tt.want) {
			t.Errorf("ParseObjectKey(%q) error %q, want it to contain %q", tt.key, err, tt.want)
		}
		if !strings.Contains(err.Error(), strconv.Quote(tt.key)) {
			t.Errorf("ParseObjectKey(%q) error %q does not quote the key", tt.key, err)
		}
	}
}

func TestValidateName(t *testing.T) {
	c := DefaultKeyConfig()
	ok := ObjectName{"t", "partition=0", 0, 0, ".json"}
	if err := c.ValidateName(ok); err != nil {
		t.Fatalf("ValidateName(%+v): %v", ok, err)
	}
	bad := []ObjectName{
		{"", "partition=0", 0, 0, ".json"},
		{"a/b", "partition=0", 0, 0, ".json"},
		{"t", "partition=0", -1, 0, ".json"},
		{"t", "partition=0", 0, -1, ".json"},
		{"t", "partition=0", 0, 0, "json"},
		{"t", "partition=0", 0, 0, ".a/b"},
	}
	for _, n := range bad {
		if err := c.ValidateName(n); !errors.Is(err, ErrInvalidName) {
			t.Errorf("ValidateName(%+v) = %v, want ErrInvalidName", n, err)
		}
	}
}

// fuzzConfigs are the configurations the fuzz targets pick from: the
// default, a blank topics.dir, and file delimiters that are legal topic
// characters.
var fuzzConfigs = []KeyConfig{
	{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+", OffsetPadWidth: 10},
	{TopicsDir: "", DirectoryDelim: "/", FileDelim: "_", OffsetPadWidth: 3},
	{TopicsDir: "a/b", DirectoryDelim: "/", FileDelim: "-", OffsetPadWidth: 1},
	{TopicsDir: "x", DirectoryDelim: "::", FileDelim: ".", OffsetPadWidth: 19},
	{TopicsDir: "topics", DirectoryDelim: "/", FileDelim: "+=", OffsetPadWidth: 5},
}

func fuzzConfig(sel uint8) KeyConfig { return fuzzConfigs[int(sel)%len(fuzzConfigs)] }

func FuzzParseObjectKey(f *testing.F) {
	for _, k := range []string{
		"topics/s3_topic/partition=0/s3_topic+0+0000000000.json",
		"topics/orders/year=2024/month=01/day=02/orders+3+0000000042.json.gz",
		"topics/t/partition=0/t+007+42.json",
		"my_t/partition=0/my_t_1_001.bin",
		"a/b/t-1/p/t-1-1-1.x",
		"x::a.b::e::a.b.0.0000000000000000000.avro",
		"topics/t/partition=0/t+=0+=00000.json",
	} {
		for sel := range len(fuzzConfigs) {
			f.Add(uint8(sel), k)
		}
	}
	f.Fuzz(func(t *testing.T, sel uint8, key string) {
		c := fuzzConfig(sel)
		n, err := c.ParseObjectKey(key)
		if err != nil {
			if !errors.Is(err, ErrMalformedKey) {
				t.Fatalf("error %v does not wrap ErrMalformedKey", err)
			}
			return
		}
		if err := c.ValidateName(n); err != nil {
			t.Fatalf("ParseObjectKey(%q) = %+v, which is not a valid name: %v", key, n, err)
		}
		rebuilt := c.ObjectKey(n)
		// The rebuilt key always parses back to the same name.
		n2, err := c.ParseObjectKey(rebuilt)
		if err != nil || n2 != n {
			t.Fatalf("ParseObjectKey(ObjectKey(%+v)) = %+v, %v", n, n2, err)
		}
		// Find the digits as written in key, independently of the parser:
		// key ends with Ext; before it the offset digits, then file.delim,
		// then the partition digits.
		head, ok := strings.CutSuffix(key, n.Ext)
		if !ok {
			t.Fatalf("key %q does not end with parsed Ext %q", key, n.Ext)
		}
		head, offDigits := trailingDigits(head)
		head, ok = strings.CutSuffix(head, c.FileDelim)
		if !ok {
			t.Fatalf("key %q: no file.delim before offset digits %q", key, offDigits)
		}
		_, partDigits := trailingDigits(head)
		canonical := partDigits == strconv.Itoa(int(n.Partition)) &&
			offDigits == padOffset(n.StartOffset, c.OffsetPadWidth)
		if canonical != (rebuilt == key) {
			t.Fatalf("key %q (canonical=%v) rebuilt as %q from %+v", key, canonical, rebuilt, n)
		}
	})
}

func trailingDigits(s string) (rest, digits string) {
	i := len(s)
	for i > 0 && s[i-1] >= '0' && s[i-1] <= '9' {
		i--
	}
	return s[:i], s[i:]
}

func FuzzObjectKeyRoundTrip(f *testing.F) {
	f.Add(uint8(0), "s3_topic", "partition=0", int32(0), int64(0), ".json")
	f.Add(uint8(1), "a_1", "year=2024/month=01", int32(12), int64(123456), ".bin.gz")
	f.Add(uint8(2), "a-1", "", int32(1), int64(9223372036854775807), "")
	f.Add(uint8(3), "a.b", "x::y", int32(2147483647), int64(5), ".keys.avro")
	f.Add(uint8(4), "t", "k=+=/", int32(3), int64(77), ".x+=1")
	f.Fuzz(func(t *testing.T, sel uint8, topic, encoded string, partition int32, offset int64, ext string) {
		c := fuzzConfig(sel)
		n := ObjectName{Topic: topic, Encoded: encoded, Partition: partition, StartOffset: offset, Ext: ext}
		if c.ValidateName(n) != nil {
			return
		}
		key := c.ObjectKey(n)
		got, err := c.ParseObjectKey(key)
		if err != nil {
			t.Fatalf("ParseObjectKey(ObjectKey(%+v)) = %q: %v", n, key, err)
		}
		if got != n {
			t.Fatalf("round trip of %+v via %q gave %+v", n, key, got)
		}
		if !strings.HasPrefix(key, c.TopicPrefix(topic)) {
			t.Fatalf("key %q does not start with TopicPrefix %q", key, c.TopicPrefix(topic))
		}
	})
}
