package index

import (
	"crypto/sha256"
	"encoding/hex"
	"fmt"
	"strconv"
	"strings"
)

// DefaultPrefix is the default of kafkas3.index.prefix.
const DefaultPrefix = "_kafkas3/"

// dir is the folder under the prefix that holds the index objects.
const dir = "index/"

// ext ends every index object key.
const ext = ".jsonl"

// commitWidth is the zero-padded width of the commit offset in a key: 20
// digits hold every int64 and sort lexically in numeric order.
const commitWidth = 20

// Dir returns the folder holding every index object under prefix:
// "<prefix>index/".
func Dir(prefix string) string { return prefix + dir }

// TopicDir returns "<prefix>index/<topic>/".
func TopicDir(prefix, topic string) string { return prefix + dir + topic + "/" }

// PartitionDir returns "<prefix>index/<topic>/<partition>/".
func PartitionDir(prefix, topic string, p int32) string {
	return TopicDir(prefix, topic) + strconv.FormatInt(int64(p), 10) + "/"
}

// writerWidth is the length of a writer token (WriterOf).
const writerWidth = 12

// WriterOf returns the writer token of the sink whose consumer group is
// group: the first 12 hex digits of the SHA-256 of the group id. Two sinks
// (two groups) writing into one bucket then never overwrite each other's
// index objects, even when their commits coincide, while a replay of one
// group rewrites its own keys.
func WriterOf(group string) string {
	sum := sha256.Sum256([]byte(group))
	return hex.EncodeToString(sum[:])[:writerWidth]
}

// Key returns the key of the index object written by writer (WriterOf of
// the sink's group) when the partition's commit reached commit:
// "<prefix>index/<topic>/<partition>/<commit, 20 digits>-<writer>.jsonl".
// An empty writer gives "<commit, 20 digits>.jsonl", which readers accept
// too (the sink always names its writer).
func Key(prefix, topic string, p int32, commit int64, writer string) string {
	return PartitionDir(prefix, topic, p) + stamp(commit, writer) + ext
}

// stamp is the file name, without extension, of index objects, offset
// snapshots and topic descriptions: n with 20 digits (zero padded, so
// names sort in numeric order), then "-<writer>" when writer is set.
func stamp(n int64, writer string) string {
	s := strconv.FormatInt(n, 10)
	s = strings.Repeat("0", max(0, commitWidth-len(s))) + s
	if writer != "" {
		s += "-" + writer
	}
	return s
}

// parseStamp is the inverse of stamp; what names the number in the error
// ("commit", "time"), which says why s is not a stamp.
func parseStamp(s, what string) (int64, string, error) {
	ns, writer, hasWriter := strings.Cut(s, "-")
	if hasWriter && !isWriter(writer) {
		return 0, "", fmt.Errorf("writer %q is not %d lower-case hex digits", writer, writerWidth)
	}
	if len(ns) != commitWidth || strings.Trim(ns, "0123456789") != "" {
		return 0, "", fmt.Errorf("%s %q is not %d digits", what, ns, commitWidth)
	}
	n, err := strconv.ParseInt(ns, 10, 64)
	if err != nil {
		return 0, "", fmt.Errorf("%s %q is out of range", what, ns)
	}
	return n, writer, nil
}

// KeyName is what an index object key names.
type KeyName struct {
	Prefix    string
	Topic     string
	Partition int32
	Commit    int64
	Writer    string // "" when the key names none
}

// ParseKey takes an index object key apart; the prefix is everything
// before the last "index/<topic>/<partition>/" folder. It is the inverse
// of Key. Its error wraps ErrMalformed and quotes the key.
func ParseKey(key string) (KeyName, error) {
	bad := func(why string) (KeyName, error) {
		return KeyName{}, fmt.Errorf("%w: %q is not an index object key (<prefix>index/<topic>/<partition>/<commit, 20 digits>-<writer>.jsonl): %s",
			ErrMalformed, key, why)
	}
	rest, ok := strings.CutSuffix(key, ext)
	if !ok {
		return bad("no " + ext + " extension")
	}
	parts := strings.Split(rest, "/")
	if len(parts) < 4 || parts[len(parts)-4]+"/" != dir {
		return bad("not in an index/<topic>/<partition>/ folder")
	}
	n := len(parts)
	topic, ps := parts[n-3], parts[n-2]
	c, writer, err := parseStamp(parts[n-1], "commit")
	if err != nil {
		return bad(err.Error())
	}
	if err := validTopic(topic); err != nil {
		return bad(err.Error())
	}
	p, err := strconv.ParseInt(ps, 10, 32)
	if err != nil || p < 0 || strconv.FormatInt(p, 10) != ps {
		return bad(fmt.Sprintf("partition %q is not a canonical number", ps))
	}
	prefix := strings.Join(parts[:n-4], "/")
	if n > 4 {
		prefix += "/"
	}
	return KeyName{Prefix: prefix, Topic: topic, Partition: int32(p), Commit: c, Writer: writer}, nil
}

// isWriter tells a writer token: writerWidth lower-case hex digits.
func isWriter(s string) bool {
	if len(s) != writerWidth {
		return false
	}
	for i := 0; i < len(s); i++ {
		if (s[i] < '0' || s[i] > '9') && (s[i] < 'a' || s[i] > 'f') {
			return false
		}
	}
	return true
}

// ValidatePrefix checks a kafkas3.index.prefix: one or more folder names,
// each followed by "/" ("_kafkas3/", "backups/index-of-orders/"), so that
// ParseKey can find the index folder after it.
func ValidatePrefix(prefix string) error {
	if prefix == "" {
		return fmt.Errorf("%w: the index prefix is empty", ErrMalformed)
	}
	if !strings.HasSuffix(prefix, "/") {
		return fmt.Errorf("%w: the index prefix %q does not end in \"/\"", ErrMalformed, prefix)
	}
	for _, seg := range strings.Split(strings.TrimSuffix(prefix, "/"), "/") {
		if seg == "" || seg == "." || seg == ".." {
			return fmt.Errorf("%w: the index prefix %q has an empty, \".\" or \"..\" folder", ErrMalformed, prefix)
		}
	}
	return nil
}

// parseTopicStamp takes apart "<prefix><dir><topic>/<stamp><ext>", the
// keys of offset snapshots and topic descriptions: the prefix is
// everything before the last "<dir><topic>/" folder. why says what is
// wrong, "" when nothing is.
func parseTopicStamp(key, dir, ext string) (prefix, topic string, n int64, writer, why string) {
	rest, ok := strings.CutSuffix(key, ext)
	if !ok {
		return "", "", 0, "", "no " + ext + " extension"
	}
	parts := strings.Split(rest, "/")
	k := len(parts)
	if k < 3 || parts[k-3]+"/" != dir {
		return "", "", 0, "", "not in a " + dir + "<topic>/ folder"
	}
	topic = parts[k-2]
	n, writer, err := parseStamp(parts[k-1], "time")
	if err != nil {
		return "", "", 0, "", err.Error()
	}
	if err := validTopic(topic); err != nil {
		return "", "", 0, "", err.Error()
	}
	prefix = strings.Join(parts[:k-3], "/")
	if k > 3 {
		prefix += "/"
	}
	return prefix, topic, n, writer, ""
}
