package restore

import (
	"strings"
	"testing"

	"github.com/kafkas3/kafkas3/partition"
)

func TestTopicsRoot(t *testing.T) {
	keys := partition.DefaultKeyConfig()
	if got := TopicsRoot(keys); got != "topics/" {
		t.Errorf("TopicsRoot = %q, want topics/", got)
	}
	keys.TopicsDir = ""
	if got := TopicsRoot(keys); got != "" {
		t.Errorf("TopicsRoot without topics.dir = %q, want empty", got)
	}
	keys.TopicsDir = " "
	if got := TopicsRoot(keys); got != "" {
		t.Errorf("TopicsRoot with a blank topics.dir = %q, want empty", got)
	}
	keys = partition.KeyConfig{TopicsDir: "a/b", DirectoryDelim: "::", FileDelim: "+", OffsetPadWidth: 3}
	if got := TopicsRoot(keys); got != "a/b::" {
		t.Errorf("TopicsRoot with :: = %q, want a/b::", got)
	}
}

func TestTopicFolder(t *testing.T) {
	def := partition.DefaultKeyConfig()
	noDir := def
	noDir.TopicsDir = ""
	colons := partition.KeyConfig{TopicsDir: "arch", DirectoryDelim: "::", FileDelim: "+", OffsetPadWidth: 3}
	for _, c := range []struct {
		keys        partition.KeyConfig
		key         string
		topic, skip string
	}{
		{def, "topics/orders/partition=0/orders+0+0000000000.json", "orders", ""},
		{def, "topics/orders/anything", "orders", ""},
		{def, "topics/orders/", "orders", ""},
		{def, "topics/a.b-c_D/x", "a.b-c_D", ""},
		{def, "topics-old/orders/partition=0/orders+0+0000000000.json", "", SkipOutsideTopicsDir},
		{def, "topics", "", SkipOutsideTopicsDir},
		{def, "other/orders/x", "", SkipOutsideTopicsDir},
		{def, "_kafkas3/index/orders/x", "", SkipOutsideTopicsDir},
		{def, "topics/orders.json", "", SkipNoTopicFolder},
		{def, "topics/", "", SkipNoTopicFolder},
		{def, "topics//x", "", SkipNoTopicFolder},
		{noDir, "orders/partition=0/orders+0+0000000000.json", "orders", ""},
		{noDir, "_kafkas3/index/orders/x", "_kafkas3", ""}, // Plan skips the index before asking
		{noDir, "README", "", SkipNoTopicFolder},
		{noDir, "/x", "", SkipNoTopicFolder},
		{colons, "arch::orders::partition=0::orders+0+000.json", "orders", ""},
		{colons, "arch::orders:x", "", SkipNoTopicFolder},
		{colons, "arch:orders::x", "", SkipOutsideTopicsDir},
	} {
		topic, skip := TopicFolder(c.keys, c.key)
		if topic != c.topic || skip != c.skip {
			t.Errorf("TopicFolder(%q, %q) = %q, %q; want %q, %q", c.keys.TopicsDir, c.key, topic, skip, c.topic, c.skip)
		}
	}
}

// FuzzTopicFolder: a topic is returned exactly when the key is
// TopicsRoot + a non-empty name without the delimiter + the delimiter +
// anything, and the reasons are the only two.
func FuzzTopicFolder(f *testing.F) {
	f.Add("topics", "/", "topics/orders/x")
	f.Add("", "/", "orders/x")
	f.Add("a", "::", "a::b::c")
	f.Add("topics", "/", "topics-old/x/y")
	f.Fuzz(func(t *testing.T, dir, dd, key string) {
		if dd == "" {
			return
		}
		keys := partition.KeyConfig{TopicsDir: dir, DirectoryDelim: dd}
		root := TopicsRoot(keys)
		topic, skip := TopicFolder(keys, key)
		switch skip {
		case "":
			if topic == "" || strings.Contains(topic, dd) || !strings.HasPrefix(key, root+topic+dd) {
				t.Fatalf("TopicFolder(%q) = %q under root %q", key, topic, root)
			}
		case SkipOutsideTopicsDir:
			if topic != "" || strings.HasPrefix(key, root) {
				t.Fatalf("TopicFolder(%q) = outside, but the key starts with root %q", key, root)
			}
		case SkipNoTopicFolder:
			rest, ok := strings.CutPrefix(key, root)
			if topic != "" || !ok || (strings.Contains(rest, dd) && !strings.HasPrefix(rest, dd)) {
				t.Fatalf("TopicFolder(%q) = no topic folder under root %q", key, root)
			}
		default:
			t.Fatalf("TopicFolder(%q): unknown reason %q", key, skip)
		}
	})
}
