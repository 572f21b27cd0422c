package config

import (
	"errors"
	"strings"
	"testing"
)

func TestEffective(t *testing.T) {
	st, err := Load(Input{Command: Sink, ConfigFile: writeFile(t, "c.yaml", minimalYAML+"sasl.password: Hunter2Secret\nconnector.class: S3SinkConnector\n"),
		LookupEnv: envMap(map[string]string{"KAFKAS3_S3_REGION": "eu-west-1"}),
		Params:    []string{"value.converter.schema.registry.url=http://u:Pw123456@r:8081,http://r2:8081"},
		Flags:     map[string]string{"s3.bucket.name": "flagged"}})
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Setting{}
	var order []string
	for _, s := range st.Effective() {
		got[s.Key] = s
		order = append(order, s.Key)
	}
	for key, want := range map[string]Setting{
		"name":                                {Key: "name", Value: "n", Set: true, Origin: Origin{Kind: OriginFile, Name: st.origins["name"].Name}},
		"sasl.password":                       {Key: "sasl.password", Value: Masked, Set: true, Secret: true, Origin: st.origins["sasl.password"]},
		"s3.region":                           {Key: "s3.region", Value: "eu-west-1", Set: true, Origin: Origin{Kind: OriginEnv, Name: "KAFKAS3_S3_REGION"}},
		"s3.bucket.name":                      {Key: "s3.bucket.name", Value: "flagged", Set: true, Origin: Origin{Kind: OriginFlag}},
		"value.converter.schema.registry.url": {Key: "value.converter.schema.registry.url", Value: "http://u:xxxxx@r:8081,http://r2:8081", Set: true, Origin: Origin{Kind: OriginParam, Name: "value.converter.schema.registry.url"}},
		"topics.dir":                          {Key: "topics.dir", Value: "topics", Set: true},
		"group.id":                            {Key: "group.id"},
		"connector.class":                     {Key: "connector.class", Value: "S3SinkConnector", Set: true, Ignored: true, Origin: st.ignoredValues["connector.class"].origin},
	} {
		if got[key] != want {
			t.Errorf("%s = %+v, want %+v", key, got[key], want)
		}
	}
	if _, ok := got["s3.poll.interval.ms"]; ok {
		t.Error("a source-only key is listed for the sink")
	}
	if order[0] != "name" || order[len(order)-1] != "connector.class" {
		t.Errorf("order %q: want declaration order, then the ignored keys", order)
	}
}

func TestMaskingInErrors(t *testing.T) {
	k := NewKeys()
	if got := Display(k.SASLPassword.Spec, "x"); got != Masked {
		t.Errorf("Display(secret) = %q", got)
	}
	if got := Display(k.SASLPassword.Spec, ""); got != "" {
		t.Errorf("Display(unset secret) = %q", got)
	}
	for p, want := range map[string]string{
		"flush.size":                  `"flush.size"`,
		"sasl.password Hunter2Secret": `"sasl.password" followed by a value (not shown)`,
		"sasl.password:Hunter2Secret": `"sasl.password" followed by a value (not shown)`,
		"Hunter2Secret":               "(an argument of 13 characters, not shown: not a known key)",
	} {
		if got := malformedParam(k, p); got != want {
			t.Errorf("malformedParam(%q) = %q, want %q", p, got, want)
		}
	}
	// A foreign error (from a package config calls) holding a secret is
	// masked, and still unwraps.
	st, _ := Load(Input{Command: Sink, Params: []string{"aws.secret.access.key=TopSecretValue", "store.url=http://u:UrlSecret1@h"}})
	base := errors.New("boom")
	err := scrub(errors.Join(base, errors.New("key TopSecretValue at http://u:UrlSecret1@h")), st.secrets())
	if msg := err.Error(); strings.Contains(msg, "TopSecretValue") || strings.Contains(msg, "UrlSecret1") || !errors.Is(err, base) {
		t.Errorf("scrub: %q (is base: %v)", msg, errors.Is(err, base))
	}
}
