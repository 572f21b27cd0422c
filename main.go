// Command kafkas3 archives Kafka topics into S3-compatible object storage and
// restores them. See README.md and docs/.
package main

import (
	"os"

	"github.com/kafkas3/kafkas3/cmd"
)

func main() { os.Exit(cmd.Main()) }
