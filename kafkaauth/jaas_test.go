package kafkaauth

import (
	"reflect"
	"strings"
	"testing"
)

func TestParseJAAS(t *testing.T) {
	j, err := ParseJAAS(`org.apache.kafka.common.security.plain.PlainLoginModule required
		username="alice" /* a comment */ password="p\"w;d=x" // another
		extension_logicalCluster=lkc-123 ;  `)
	if err != nil {
		t.Fatal(err)
	}
	want := JAAS{Module: "org.apache.kafka.common.security.plain.PlainLoginModule", Flag: "required",
		Options: map[string]string{"username": "alice", "password": `p"w;d=x`, "extension_logicalCluster": "lkc-123"}}
	if !reflect.DeepEqual(j, want) {
		t.Errorf("got %+v\nwant %+v", j, want)
	}
	if got := j.Unknown("username", "password"); !reflect.DeepEqual(got, []string{"extension_logicalCluster"}) {
		t.Errorf("Unknown = %v", got)
	}
	if j, err := ParseJAAS("software.amazon.msk.auth.iam.IAMLoginModule required;"); err != nil || len(j.Options) != 0 {
		t.Errorf("no options: %+v, %v", j, err)
	}
}

// TestParseJAASErrors: each malformed line is one error naming what is
// wrong, and no error shows an option's value (they are secrets).
func TestParseJAASErrors(t *testing.T) {
	const secret = "Hunter2Secret"
	for line, want := range map[string]string{
		``:                                       "the login module class is missing",
		`mod`:                                    "the control flag is missing",
		`mod maybe password="` + secret + `";`:   "the control flag after mod is not one of required",
		`mod required password="` + secret + `"`: "it does not end with ';'",
		`mod required password="` + secret:       "the value of option password has no closing '\"'",
		`mod required password ` + secret + `;`:  "option password has no '=' and value",
		`mod required password=;`:                "the value of option password is missing",
		`mod required password=` + secret + ` password=x;`:      "option password is set twice",
		`mod required password=` + secret + `; other required;`: "more than one login module",
	} {
		_, err := ParseJAAS(line)
		if err == nil || !strings.Contains(err.Error(), want) || !strings.Contains(err.Error(), "is not a JAAS login line") {
			t.Errorf("%q: error %v, want %q", line, err, want)
			continue
		}
		if strings.Contains(err.Error(), secret) {
			t.Errorf("%q: the error shows the value: %v", line, err)
		}
	}
}
