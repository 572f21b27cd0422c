package index

import (
	"encoding/base64"
	"fmt"
)

// FormatTopicID returns a Kafka topic id (KIP-516) as Kafka's tools print
// it: URL-safe base64 without padding, 22 characters. The zero id (a
// broker without topic ids) gives "".
func FormatTopicID(id [16]byte) string {
	if id == ([16]byte{}) {
		return ""
	}
	return base64.RawURLEncoding.EncodeToString(id[:])
}

// ParseTopicID reads a topic id written by FormatTopicID.
func ParseTopicID(s string) ([16]byte, error) {
	var id [16]byte
	b, err := base64.RawURLEncoding.DecodeString(s)
	if err != nil || len(b) != 16 {
		return id, fmt.Errorf("%q is not a topic id (22 characters of URL-safe base64)", s)
	}
	copy(id[:], b)
	if id == ([16]byte{}) {
		return id, fmt.Errorf("%q is the zero topic id", s)
	}
	return id, nil
}
