package index

import (
	"path"
	"strconv"
	"strings"
)

// A topic deleted and created again under the same name has a new Kafka
// topic id and starts again at offset 0, so Confluent's object names
// (<topic>+<partition>+<first offset>) would collide with the old topic's.
// With kafkas3.topic.recreated=new-generation the sink archives the new
// topic as generation n (n >= 2) beside the old one, each generation an
// archive of its own with Confluent's layout:
//
//	generation 1: <topics.dir>/<topic>/...          index under <prefix>
//	generation n: <topics.dir>/generation=n/<topic>/...  index under <prefix>generation=n/
//
// "=" cannot appear in a Kafka topic name, so a generation folder is never
// taken for a topic. The topic descriptions under <prefix>topics/ record
// each generation's topic id and number; a generation's own descriptions
// are under its prefix too.

// GenerationDir is the folder name of generation n: "generation=n".
func GenerationDir(n int) string { return "generation=" + strconv.Itoa(n) }

// IsGenerationDir reports whether a folder name under topics.dir is a
// generation's ("generation=n"), not a topic's.
func IsGenerationDir(name string) bool { return strings.HasPrefix(name, "generation=") }

// GenerationPrefix returns the index prefix of generation n of an archive
// whose index prefix is prefix: prefix itself for n <= 1, else
// "<prefix>generation=n/".
func GenerationPrefix(prefix string, n int) string {
	if n <= 1 {
		return prefix
	}
	return prefix + GenerationDir(n) + "/"
}

// GenerationTopicsDir returns the topics.dir of generation n: topicsDir
// itself for n <= 1, else "<topicsDir>/generation=n" ("generation=n" for
// an empty topicsDir).
func GenerationTopicsDir(topicsDir string, n int) string {
	if n <= 1 {
		return topicsDir
	}
	if topicsDir == "" {
		return GenerationDir(n)
	}
	return path.Join(topicsDir, GenerationDir(n))
}
