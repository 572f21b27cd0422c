package partition

import (
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/kafkas3/kafkas3/format"
)

// ErrMalformedKey is wrapped by every ParseObjectKey error: the key does not
// follow the object key layout of the configured KeyConfig.
var ErrMalformedKey = errors.New("malformed object key")

// ErrInvalidConfig is wrapped by every KeyConfig.Validate error.
var ErrInvalidConfig = errors.New("invalid key config")

// ErrInvalidName is wrapped by every KeyConfig.ValidateName error.
var ErrInvalidName = errors.New("invalid object name")

// Confluent config keys that KeyConfig holds; errors name them.
const (
	KeyTopicsDir      = "topics.dir"
	KeyDirectoryDelim = "directory.delim"
	KeyFileDelim      = "file.delim"
	KeyOffsetPadWidth = "filename.offset.zero.pad.width"
)

// MaxOffsetPadWidth is the largest filename.offset.zero.pad.width: the
// number of decimal digits of the largest int64.
const MaxOffsetPadWidth = 19

// MaxTopicLength is the longest legal Kafka topic name.
const MaxTopicLength = 249

// KeyConfig holds the settings that shape object keys.
type KeyConfig struct {
	TopicsDir      string // topics.dir, default "topics"; empty means no prefix
	DirectoryDelim string // directory.delim, default "/"
	FileDelim      string // file.delim, default "+"
	OffsetPadWidth int    // filename.offset.zero.pad.width, default 10
}

// DefaultKeyConfig returns Confluent's defaults: topics.dir "topics",
// directory.delim "/", file.delim "+" and an offset pad width of 10.
func DefaultKeyConfig() KeyConfig {
	return KeyConfig{
		TopicsDir:      "topics",
		DirectoryDelim: "/",
		FileDelim:      "+",
		OffsetPadWidth: 10,
	}
}

// Validate checks that keys built with c can be parsed back without
// ambiguity. Beyond Confluent's own rules it requires that
// directory.delim holds no character that may appear in a topic name
// ([a-zA-Z0-9._-]), that file.delim does not start with a digit and does
// not contain directory.delim. The error names the offending key.
func (c KeyConfig) Validate() error {
	if c.DirectoryDelim == "" {
		return fmt.Errorf("%w: %s must not be empty", ErrInvalidConfig, KeyDirectoryDelim)
	}
	if i := strings.IndexFunc(c.DirectoryDelim, isTopicRune); i >= 0 {
		return fmt.Errorf("%w: %s %q must not contain %q: topic names may contain it, so keys could not be parsed",
			ErrInvalidConfig, KeyDirectoryDelim, c.DirectoryDelim, c.DirectoryDelim[i])
	}
	if c.FileDelim == "" {
		return fmt.Errorf("%w: %s must not be empty", ErrInvalidConfig, KeyFileDelim)
	}
	if c.FileDelim[0] >= '0' && c.FileDelim[0] <= '9' {
		return fmt.Errorf("%w: %s %q must not start with a digit: it follows the partition number",
			ErrInvalidConfig, KeyFileDelim, c.FileDelim)
	}
	if strings.Contains(c.FileDelim, c.DirectoryDelim) {
		return fmt.Errorf("%w: %s %q must not contain %s %q",
			ErrInvalidConfig, KeyFileDelim, c.FileDelim, KeyDirectoryDelim, c.DirectoryDelim)
	}
	if c.OffsetPadWidth < 1 || c.OffsetPadWidth > MaxOffsetPadWidth {
		return fmt.Errorf("%w: %s is %d, want 1..%d",
			ErrInvalidConfig, KeyOffsetPadWidth, c.OffsetPadWidth, MaxOffsetPadWidth)
	}
	return nil
}

// prefix is the key prefix for topics.dir: topics.dir plus directory.delim,
// or nothing when topics.dir is blank (Confluent treats a blank topics.dir
// as no prefix).
func (c KeyConfig) prefix() string {
	if strings.TrimSpace(c.TopicsDir) == "" {
		return ""
	}
	return c.TopicsDir + c.DirectoryDelim
}

// TopicPrefix returns the listing prefix of all objects of topic:
// <topics.dir><directory.delim><topic><directory.delim>.
func (c KeyConfig) TopicPrefix(topic string) string {
	return c.prefix() + topic + c.DirectoryDelim
}

// ObjectKey builds the object key of n:
//
//	<topics.dir><dd><topic><dd><encoded><dd><topic><fd><partition><fd><offset><ext>
//
// where dd is directory.delim, fd is file.delim and the offset is zero
// padded to filename.offset.zero.pad.width digits (offsets with more digits
// are written in full). A blank topics.dir gives no prefix. ObjectKey does
// not validate; ParseObjectKey(ObjectKey(n)) == n for every n that passes
// ValidateName, with a config that passes Validate.
func (c KeyConfig) ObjectKey(n ObjectName) string {
	var b strings.Builder
	b.Grow(len(c.TopicsDir) + 2*len(n.Topic) + len(n.Encoded) + 3*len(c.DirectoryDelim) + 40 + len(n.Ext))
	b.WriteString(c.prefix())
	b.WriteString(n.Topic)
	b.WriteString(c.DirectoryDelim)
	b.WriteString(n.Encoded)
	b.WriteString(c.DirectoryDelim)
	b.WriteString(n.Topic)
	b.WriteString(c.FileDelim)
	b.WriteString(strconv.FormatInt(int64(n.Partition), 10))
	b.WriteString(c.FileDelim)
	b.WriteString(padOffset(n.StartOffset, c.OffsetPadWidth))
	b.WriteString(n.Ext)
	return b.String()
}

// padOffset formats off in decimal with at least width digits.
func padOffset(off int64, width int) string {
	s := strconv.FormatInt(off, 10)
	if len(s) >= width || off < 0 {
		return s
	}
	return strings.Repeat("0", width-len(s)) + s
}

// ValidateName checks that n can be turned into a key that parses back to
// n: a legal Kafka topic, a partition and offset >= 0, an Ext that is empty
// or starts with '.', and no directory.delim in Ext.
func (c KeyConfig) ValidateName(n ObjectName) error {
	if err := ValidateTopic(n.Topic); err != nil {
		return fmt.Errorf("%w: %w", ErrInvalidName, err)
	}
	if n.Partition < 0 {
		return fmt.Errorf("%w: partition %d of topic %q is negative", ErrInvalidName, n.Partition, n.Topic)
	}
	if n.StartOffset < 0 {
		return fmt.Errorf("%w: start offset %d of topic %q is negative", ErrInvalidName, n.StartOffset, n.Topic)
	}
	if n.Ext != "" && n.Ext[0] != '.' {
		return fmt.Errorf("%w: extension %q must start with '.'", ErrInvalidName, n.Ext)
	}
	if c.DirectoryDelim != "" && strings.Contains(n.Ext, c.DirectoryDelim) {
		return fmt.Errorf("%w: extension %q contains %s %q", ErrInvalidName, n.Ext, KeyDirectoryDelim, c.DirectoryDelim)
	}
	return nil
}

// ValidateTopic reports whether name is a legal Kafka topic name: 1 to 249
// characters from [a-zA-Z0-9._-], and not "." or "..".
func ValidateTopic(name string) error {
	switch {
	case name == "":
		return errors.New("topic name is empty")
	case len(name) > MaxTopicLength:
		return fmt.Errorf("topic name %.40q... is %d characters, longer than %d", name, len(name), MaxTopicLength)
	case name == "." || name == "..":
		return fmt.Errorf("topic name %q is not allowed", name)
	}
	for i := 0; i < len(name); i++ {
		if !isTopicByte(name[i]) {
			return fmt.Errorf("topic name %q contains %q; allowed are [a-zA-Z0-9._-]", name, name[i])
		}
	}
	return nil
}

func isTopicByte(b byte) bool {
	return b >= 'a' && b <= 'z' || b >= 'A' && b <= 'Z' || b >= '0' && b <= '9' || b == '.' || b == '_' || b == '-'
}

func isTopicRune(r rune) bool { return r < 0x80 && isTopicByte(byte(r)) }

// ParseObjectKey is the inverse of ObjectKey. It takes the topic from the
// path segment after topics.dir, the encoded partition from everything
// between that segment and the last directory.delim (so it may hold several
// segments), and requires the file name to be
// <topic><fd><digits><fd><digits><ext> with the same topic and an ext that
// is empty or starts with '.'. Offsets padded to any width are accepted.
// Errors wrap ErrMalformedKey and quote the key.
//
// c should pass Validate; ParseObjectKey does not check it again.
func (c KeyConfig) ParseObjectKey(key string) (ObjectName, error) {
	bad := func(format string, args ...any) (ObjectName, error) {
		return ObjectName{}, fmt.Errorf("%w %q: "+format, append([]any{ErrMalformedKey, key}, args...)...)
	}
	dd, fd := c.DirectoryDelim, c.FileDelim
	if dd == "" || fd == "" {
		return bad("%s and %s must not be empty", KeyDirectoryDelim, KeyFileDelim)
	}
	rest, ok := strings.CutPrefix(key, c.prefix())
	if !ok {
		return bad("does not start with %s %q", KeyTopicsDir, c.prefix())
	}
	topic, rest, ok := strings.Cut(rest, dd)
	if !ok {
		return bad("no %s %q after the topic", KeyDirectoryDelim, dd)
	}
	if err := ValidateTopic(topic); err != nil {
		return bad("%w", err)
	}
	i := strings.LastIndex(rest, dd)
	if i < 0 {
		return bad("no encoded partition between topic %q and the file name", topic)
	}
	encoded, file := rest[:i], rest[i+len(dd):]

	tail, ok := strings.CutPrefix(file, topic+fd)
	if !ok {
		return bad("file name %q does not start with topic %q and %s %q", file, topic, KeyFileDelim, fd)
	}
	pDigits, tail := leadingDigits(tail)
	if pDigits == "" {
		return bad("no partition number after %q in file name %q", topic+fd, file)
	}
	partition, err := strconv.ParseInt(pDigits, 10, 32)
	if err != nil {
		return bad("partition %q out of range", pDigits)
	}
	tail, ok = strings.CutPrefix(tail, fd)
	if !ok {
		return bad("no %s %q after partition %s in file name %q", KeyFileDelim, fd, pDigits, file)
	}
	oDigits, ext := leadingDigits(tail)
	if oDigits == "" {
		return bad("no start offset after partition %s in file name %q", pDigits, file)
	}
	offset, err := strconv.ParseInt(oDigits, 10, 64)
	if err != nil {
		return bad("start offset %q out of range", oDigits)
	}
	if ext != "" && ext[0] != '.' {
		return bad("extension %q after the start offset does not start with '.'", ext)
	}
	return ObjectName{
		Topic:       topic,
		Encoded:     encoded,
		Partition:   int32(partition),
		StartOffset: offset,
		Ext:         ext,
	}, nil
}

// leadingDigits splits s after its leading ASCII digits.
func leadingDigits(s string) (digits, rest string) {
	i := 0
	for i < len(s) && s[i] >= '0' && s[i] <= '9' {
		i++
	}
	return s[:i], s[i:]
}

// ObjectName is the parsed form of an object key:
// <TopicsDir><dd><Topic><dd><Encoded><dd><Topic><fd><Partition><fd><StartOffset><Ext>
type ObjectName struct {
	Topic       string
	Encoded     string // encoded partition path, e.g. "partition=0" or "year=2024/month=01"
	Partition   int32
	StartOffset int64
	Ext         string // everything after the offset digits, e.g. ".json.gz", ".keys.avro"
}

// Partitioner encodes the partition path of a record, the part of the key
// between the topic and the file name ("partition=0" for the default).
type Partitioner interface {
	Encode(r *format.Record) (string, error)
}
