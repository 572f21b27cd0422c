package restore

import (
	"strings"

	"github.com/kafkas3/kafkas3/index"
	"github.com/kafkas3/kafkas3/partition"
)

// TopicsRoot returns the prefix every topic folder of an archive laid out
// by keys shares: "<topics.dir><directory.delim>", or "" without
// topics.dir. Listing under it lists every topic folder.
func TopicsRoot(keys partition.KeyConfig) string {
	p := keys.TopicPrefix("")
	return p[:len(p)-len(keys.DirectoryDelim)]
}

// TopicFolder returns the archived topic whose folder holds the object
// key: the part of key after TopicsRoot(keys), up to the next
// directory.delim. A key in no topic folder gives "" and the reason it is
// not restored: SkipOutsideTopicsDir (key does not start with
// TopicsRoot(keys)) or SkipNoTopicFolder (no delimiter after the root, or
// an empty folder name), or SkipGeneration (the folder of another
// generation of a recreated topic, index.IsGenerationDir). TopicFolder checks neither the topic name nor
// whether key is the archive index's (Config.IndexPrefix).
func TopicFolder(keys partition.KeyConfig, key string) (topic, skip string) {
	rest, ok := strings.CutPrefix(key, TopicsRoot(keys))
	if !ok {
		return "", SkipOutsideTopicsDir
	}
	topic, _, ok = strings.Cut(rest, keys.DirectoryDelim)
	if !ok || topic == "" {
		return "", SkipNoTopicFolder
	}
	if index.IsGenerationDir(topic) {
		return "", SkipGeneration
	}
	return topic, ""
}
