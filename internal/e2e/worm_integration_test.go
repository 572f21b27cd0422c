//go:build integration

package e2e

import (
	"context"
	"encoding/json"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/s3"
	"github.com/aws/aws-sdk-go-v2/service/s3/types"
)

// TestIntegrationWORMSinkCrashRestore (issue 22 item 2): a bucket with S3
// Object Lock on versitygw (its posix backend with a versioning
// directory), with a default retention in GOVERNANCE and in COMPLIANCE
// mode. A continuous sink, with s3.object.lock.mode/retain.days and
// s3.storage.class set, is SIGKILLed at random moments while records
// arrive and restarted, then finished with --once, and its group's
// offsets are moved back to 0 for a replay of everything, whose every
// write finds the same bytes already stored. Its data objects equal
// a clean run's into a plain bucket byte for byte; every object of the
// archive has exactly one version (a replay finds the same bytes and
// writes nothing: no version piles up under retention) and the
// per-object retention (GetObjectRetention, through the aws CLI); verify
// and verify --deep find the archive clean, and the source restores every
// record exactly once, in order.
func TestIntegrationWORMSinkCrashRestore(t *testing.T) {
	b := newBed(t)
	for _, mode := range []types.ObjectLockRetentionMode{types.ObjectLockRetentionModeGovernance, types.ObjectLockRetentionModeCompliance} {
		t.Run(string(mode), func(t *testing.T) { wormCrash(t, b, mode) })
	}
}

func wormCrash(t *testing.T, b *bed, mode types.ObjectLockRetentionMode) {
	const parts, perPart, flush, kills = 2, 20_000, 1000, 4
	_, rng := crashSeed(t)
	topic := srcUnique("e2e-worm-" + strings.ToLower(string(mode)))
	b.k.CreateTopic(t, topic, parts)
	bucketClean, bucketLocked := b.s.CreateBucket(t), b.s.CreateLockedBucket(t, mode, 1)
	base := b.sinkConf("", topic, "").with("flush.size", strconv.Itoa(flush))
	cfgClean := base.with("name", topic+"-clean", "s3.bucket.name", bucketClean).write(t)
	group := "connect-" + topic
	cfgLocked := base.with("name", topic, "s3.bucket.name", bucketLocked,
		"s3.object.lock.mode", string(mode), "s3.object.lock.retain.days", "3", "s3.storage.class", "STANDARD_IA").write(t)

	var prodWG sync.WaitGroup
	prodWG.Add(1)
	go func() {
		defer prodWG.Done()
		for from := 0; from < perPart; from += 250 {
			if err := b.produceErr(topic, parts, from, 250, value); err != nil {
				t.Error(err)
				return
			}
			time.Sleep(40 * time.Millisecond)
		}
	}()
	b.crashRuns(t, rng, cfgLocked, group, topic, kills, parts*perPart)
	prodWG.Wait()
	if t.Failed() {
		t.FailNow()
	}
	b.evictMembers(t, group)
	final, _ := runOnce(t, "final --once", cfgLocked)
	// A replay of everything: the group's offsets back to 0, so every
	// object is written again; each write finds the same bytes.
	b.commitGroup(t, group, topic, perPartition(parts, 0))
	replay, rp := runOnce(t, "replay from offset 0", cfgLocked)
	same := strings.Count(rp.stderr(), "already stored with the same bytes")
	if !strings.Contains(rp.stderr(), "the bucket has Object Lock") || replay.records != parts*perPart || same < parts*perPart/flush {
		t.Fatalf("replay: %d records, %d objects found stored with the same bytes; want %d records and at least %d\n%s",
			replay.records, same, parts*perPart, parts*perPart/flush, rp.logs())
	}
	runOnce(t, "clean --once", cfgClean)

	ends := b.endOffsets(t, topic)
	got, want := b.snapshot(t, bucketLocked), b.snapshot(t, bucketClean)
	if n := checkJSONArchive(t, got, topic, perPartition(parts, 0), ends, flush); n != parts*perPart {
		t.Fatalf("locked archive holds %d records, want %d", n, parts*perPart)
	}
	gotData, _ := splitIndex(got)
	wantData, _ := splitIndex(want)
	sameObjects(t, "locked archive's data objects", gotData, wantData)
	b.checkVersionsAndRetention(t, bucketLocked, got, mode)
	verifyClean(t, "locked archive", cfgLocked, parts*perPart)
	deep := startKafkas3(t, "verify --deep", "verify", cfgLocked, "--deep")
	if code := deep.wait(3 * time.Minute); code != 0 {
		t.Fatalf("verify --deep exit %d\n%s", code, deep.logs())
	}

	args := []string{"--topic-rename", "copy_of_$0", "--create-topics"}
	sum, _ := srcRunOK(t, "restore", cfgLocked, args...)
	if sum.records != parts*perPart {
		t.Fatalf("restored %d records, want %d", sum.records, parts*perPart)
	}
	for p := range int32(parts) {
		srcSameValues(t, "restored partition "+strconv.Itoa(int(p)), b.srcKcat(t, "copy_of_"+topic, p), srcValues(p, 0, perPart))
	}
	t.Logf("%s: %d objects, one version each, retention %s; final sink run %s; replay %s (%d objects found stored); restore %s",
		mode, len(got), mode, final.line, replay.line, same, sum.line)
}

// checkVersionsAndRetention fails unless every object of bucket (objs:
// the data objects and the index) has exactly one version, and a data
// object and an index object carry mode's retention about 3 days from
// now (s3.object.lock.retain.days), as the aws CLI reads them.
func (b *bed) checkVersionsAndRetention(t *testing.T, bucket string, objs map[string]object, mode types.ObjectLockRetentionMode) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cl := b.s.Client()
	versions := map[string]int{}
	pager := s3.NewListObjectVersionsPaginator(cl, &s3.ListObjectVersionsInput{Bucket: aws.String(bucket)})
	for pager.HasMorePages() {
		page, err := pager.NextPage(ctx)
		if err != nil {
			t.Fatalf("list versions of %s: %v", bucket, err)
		}
		for _, v := range page.Versions {
			versions[aws.ToString(v.Key)]++
		}
	}
	var more []string
	for k, n := range versions {
		// Checkpoints may be written again as new versions (derived
		// data: s3store.Replacing); the rest never.
		if n != 1 && !isCheckpointKey(k) {
			more = append(more, k+"="+strconv.Itoa(n))
		}
	}
	if len(more) > 0 {
		t.Errorf("objects with more than one version: %v", head(more))
	}
	for k := range objs {
		if versions[k] == 0 {
			t.Errorf("%s: no version listed", k)
		}
	}
	var dataKey, indexKey string
	for k := range objs {
		switch {
		case strings.HasPrefix(k, "topics/") && dataKey == "":
			dataKey = k
		case isIndexKey(k) && !isCheckpointKey(k) && !isDescriptionKey(k) && !isSnapshotKey(k) && indexKey == "":
			indexKey = k
		}
	}
	for _, k := range []string{dataKey, indexKey} {
		out := b.awsCLI(t, "s3api", "get-object-retention", "--bucket", bucket, "--key", k)
		var r struct {
			Retention struct {
				Mode            string
				RetainUntilDate time.Time
			}
		}
		if err := json.Unmarshal([]byte(out), &r); err != nil {
			t.Fatalf("aws s3api get-object-retention %s: %v\n%s", k, err, out)
		}
		left := time.Until(r.Retention.RetainUntilDate)
		if r.Retention.Mode != string(mode) || left < 71*time.Hour || left > 73*time.Hour {
			t.Errorf("%s: retention %s until %v, want %s about 3 days from now", k, r.Retention.Mode, r.Retention.RetainUntilDate, mode)
		}
	}
	t.Logf("%d keys, one version each (checkpoints aside); retention of %s and %s checked", len(versions), dataKey, indexKey)
}
