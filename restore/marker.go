package restore

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"

	"github.com/twmb/franz-go/pkg/kadm"
	"github.com/twmb/franz-go/pkg/kerr"
)

// MarkerGroupPrefix starts the name of the consumer group that holds a
// target topic's resume markers: "kafkas3-restore-<target topic>". The
// group never has members; its committed offset for a target partition is
// the partition's end offset E0 just before the restore first produced to
// it, and its commit metadata names the archive and the source topic.
//
// Deleting the group makes the next run treat the target as fresh: it then
// appends the whole archive after whatever the target holds.
const MarkerGroupPrefix = "kafkas3-restore-"

// MarkerGroup returns the marker group of a target topic.
func MarkerGroup(target string) string { return MarkerGroupPrefix + target }

// marker is one target partition's resume marker.
type marker struct {
	Start   int64  // E0: the target's end offset before the first restored record
	Archive string // Config.Identity of the archive being restored
	Source  string // archived topic
	// Placement and Partitions are set on the marker of a repartitioning
	// restore (partition 0's, offset 0): its Config.Repartition and the
	// target's partition count.
	Placement  Repartition
	Partitions int32
	// ExpiredBefore is the --skip-expired cutoff (Unix ms) the restore
	// into the partition began with; 0 without one (expired.go).
	ExpiredBefore int64
	// Stream names the record stream the restore counts (streamID; ""
	// from an older kafkas3: not checked).
	Stream string
}

// markerMeta is the JSON kept in the commit metadata (offset metadata is
// limited to 4 KiB by default on brokers; identity strings are short).
type markerMeta struct {
	Tool    string `json:"tool"`
	Archive string `json:"archive"`
	Source  string `json:"source"`
	// Placement and Partitions: see marker.
	Placement  string `json:"placement,omitempty"`
	Partitions int32  `json:"partitions,omitempty"`
	// ExpiredBefore is marker.ExpiredBefore (absent: 0).
	ExpiredBefore int64 `json:"expired_before,omitempty"`
	// Stream is marker.Stream (absent: "").
	Stream string `json:"stream,omitempty"`
}

const markerTool = "kafkas3 restore v1"

func encodeMarkerMeta(m marker) string {
	b, _ := json.Marshal(markerMeta{Tool: markerTool, Archive: m.Archive, Source: m.Source, ExpiredBefore: m.ExpiredBefore,
		Placement: string(m.Placement), Partitions: m.Partitions, Stream: m.Stream}) // cannot fail: strings and numbers
	return string(b)
}

// readMarkers fetches the markers of target's partitions. Partitions
// without a marker are absent from the map.
// Transient coordinator states are retried (Restorer.retry).
func (r *Restorer) readMarkers(ctx context.Context, adm *kadm.Client, target string) (map[int32]marker, error) {
	group := MarkerGroup(target)
	var resps kadm.OffsetResponses
	err := r.retry(ctx, fmt.Sprintf("read restore markers from group %q", group), nil, func(ctx context.Context) error {
		var err error
		resps, err = adm.FetchOffsets(ctx, group)
		if err != nil {
			return err
		}
		for p, o := range resps[target] {
			if o.Err != nil {
				return fmt.Errorf("partition %d: %w", p, o.Err)
			}
		}
		return nil
	})
	if errors.Is(err, kerr.GroupIDNotFound) {
		return map[int32]marker{}, nil // no restore yet (some brokers say so instead of returning nothing)
	}
	if err != nil {
		return nil, fmt.Errorf("read restore markers of %q from group %q: %w", target, group, err)
	}
	out := map[int32]marker{}
	for p, r := range resps[target] {
		if r.Err != nil {
			return nil, fmt.Errorf("read restore marker of %s/%d from group %q: %w", target, p, group, r.Err)
		}
		if r.At < 0 {
			continue
		}
		var meta markerMeta
		if err := json.Unmarshal([]byte(r.Metadata), &meta); err != nil || meta.Tool != markerTool {
			return nil, fmt.Errorf("%w: group %q has offset %d for %s/%d with metadata %q that kafkas3 did not write; "+
				"restore into another topic, or delete the group if it is stale",
				ErrMarkerMismatch, group, r.At, target, p, r.Metadata)
		}
		out[p] = marker{Start: r.At, Archive: meta.Archive, Source: meta.Source, ExpiredBefore: meta.ExpiredBefore,
			Placement: Repartition(meta.Placement), Partitions: meta.Partitions, Stream: meta.Stream}
	}
	return out, nil
}

// writeMarkers commits markers for target's partitions (partition -> its
// marker: E0, the archive, the source topic and the --skip-expired
// cutoff). Transient coordinator states are retried; committing the same
// offsets again is harmless.
func (r *Restorer) writeMarkers(ctx context.Context, adm *kadm.Client, target string, markers map[int32]marker) error {
	if len(markers) == 0 {
		return nil
	}
	group := MarkerGroup(target)
	var os kadm.Offsets
	for p, m := range markers {
		os.Add(kadm.Offset{Topic: target, Partition: p, At: m.Start, LeaderEpoch: -1, Metadata: encodeMarkerMeta(m)})
	}
	err := r.retry(ctx, fmt.Sprintf("write restore markers to group %q", group), nil, func(ctx context.Context) error {
		return adm.CommitAllOffsets(ctx, group, os)
	})
	if err != nil {
		return fmt.Errorf("write restore markers of %q to group %q: %w", target, group, err)
	}
	return nil
}
