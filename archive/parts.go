package archive

import "github.com/kafkas3/kafkas3/format"

// The records of the parallel .keys and .headers objects
// (store.kafka.keys, store.kafka.headers) are built by format.KeyPart and
// format.HeadersPart, per keys.format.class and headers.format.class.

// ErrNullKeyBytes is wrapped by the bad-record error of a record with a
// null key when keys are stored in the bytes format, which has no null.
var ErrNullKeyBytes = format.ErrNullKeyBytes

// Part names, as FileStats.Part reports them.
const (
	PartKeys    = "keys"
	PartHeaders = "headers"
)

// stringKeyConverter is the Connect class whose keys are strings.
const stringKeyConverter = "org.apache.kafka.connect.storage.StringConverter"
