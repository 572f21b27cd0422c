//go:build integration

package restore

import (
	"encoding/hex"
	"fmt"
	"math/rand/v2"
	"os"
	"strconv"
	"testing"

	"github.com/kafkas3/kafkas3/internal/testbed"
)

func TestMain(m *testing.M) { os.Exit(testbed.Main(m)) }

// TestMurmur2OracleIntegration computes murmur2 and the default
// partitioner's choice with Kafka's own classes (Utils.murmur2 and
// BuiltInPartitioner.partitionForKey of the broker's kafka-clients jar, on
// the test bed's JVM; testbed.Murmur2Oracle) for the golden table of
// TestMurmur2Golden and 3,000 random keys of 0..64 bytes (every byte
// value, signed in Java) on 1..100 partitions, and requires Murmur2 and
// RepartitionMurmur2.Place to give the same for every one.
func TestMurmur2OracleIntegration(t *testing.T) {
	rng := rand.New(rand.NewPCG(21, 1))
	var keys [][]byte
	var counts []int32
	for _, c := range murmur2Golden {
		keys = append(keys, []byte(c.key))
		counts = append(counts, 7)
	}
	for i := range 3000 {
		k := make([]byte, i%65)
		for j := range k {
			k[j] = byte(rng.IntN(256))
		}
		keys = append(keys, k)
		counts = append(counts, int32(1+rng.IntN(100)))
	}
	in := make([]string, len(keys))
	for i, k := range keys {
		in[i] = hex.EncodeToString(k) + "\t" + strconv.Itoa(int(counts[i]))
	}
	lines := testbed.Murmur2Oracle(t, in)
	bad := 0
	for i, k := range keys {
		got := fmt.Sprintf("%d\t%d", int32(Murmur2(k)), RepartitionMurmur2.Place(k, 0, 0, counts[i]))
		if got != lines[i] {
			bad++
			if bad <= 20 {
				t.Errorf("key %x on %d partitions: kafkas3 %q, Kafka's Utils.murmur2 and partitionForKey %q", k, counts[i], got, lines[i])
			}
		}
	}
	for i, c := range murmur2Golden {
		if want := fmt.Sprintf("%d\t", c.hash); lines[i][:len(want)] != want {
			t.Errorf("golden %q: the table says %d, Kafka's Utils.murmur2 says %s", c.key, c.hash, lines[i])
		}
	}
	if bad > 0 {
		t.Fatalf("%d of %d keys differ from Kafka's own murmur2", bad, len(keys))
	}
	t.Logf("%d keys: murmur2 and the partition on 1..100 partitions equal Kafka's Utils.murmur2 and BuiltInPartitioner.partitionForKey", len(keys))
}
