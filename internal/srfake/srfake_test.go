package srfake

import (
	"context"
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/http/httptest"
	"reflect"
	"strings"
	"testing"

	"github.com/twmb/franz-go/pkg/sr"
)

const (
	schemaA = `{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"}]}`
	schemaB = `{"type":"record","name":"myrecord","fields":[{"name":"f1","type":"string"},{"name":"f2","type":["null","int"],"default":null}]}`
)

func startT(t *testing.T, cfg Config) *Server {
	t.Helper()
	s, err := Start(cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() {
		if err := s.Close(); err != nil {
			t.Errorf("close: %v", err)
		}
	})
	return s
}

func client(t *testing.T, url string, opts ...sr.ClientOpt) *sr.Client {
	t.Helper()
	cl, err := sr.NewClient(append([]sr.ClientOpt{sr.URLs(url)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	return cl
}

func errCode(err error) int {
	var re *sr.ResponseError
	if errors.As(err, &re) {
		return re.ErrorCode
	}
	return 0
}

// TestRegistryWithFranzClient drives the fake with franz-go's sr client over
// real HTTP: register, dedupe, lookup, by id, versions, errors.
func TestRegistryWithFranzClient(t *testing.T) {
	s := startT(t, Config{})
	cl := client(t, s.URL())
	ctx := context.Background()

	id1, err := cl.RegisterSchema(ctx, "s3_topic-value", sr.Schema{Schema: schemaA}, -1, -1)
	if err != nil {
		t.Fatal(err)
	}
	again, err := cl.RegisterSchema(ctx, "s3_topic-value", sr.Schema{Schema: schemaA}, -1, -1)
	if err != nil || again != id1 {
		t.Fatalf("re-register: id %d err %v, want %d", again, err, id1)
	}
	// Whitespace differences are the same schema.
	spaced := strings.ReplaceAll(schemaA, ",", ", ")
	other, err := cl.RegisterSchema(ctx, "other-value", sr.Schema{Schema: spaced}, -1, -1)
	if err != nil || other != id1 {
		t.Fatalf("same schema under another subject: id %d err %v, want %d", other, err, id1)
	}
	id2, err := cl.RegisterSchema(ctx, "s3_topic-value", sr.Schema{Schema: schemaB}, -1, -1)
	if err != nil || id2 == id1 {
		t.Fatalf("second schema: id %d err %v (first %d)", id2, err, id1)
	}

	got, err := cl.SchemaByID(ctx, id2)
	if err != nil || got.Schema != schemaB || got.Type != sr.TypeAvro {
		t.Fatalf("SchemaByID = %+v, %v", got, err)
	}
	text, err := cl.SchemaTextByID(ctx, id1)
	if err != nil || text != schemaA {
		t.Fatalf("SchemaTextByID = %q, %v", text, err)
	}
	vers, err := cl.SubjectVersions(ctx, "s3_topic-value")
	if err != nil || !reflect.DeepEqual(vers, []int{1, 2}) {
		t.Fatalf("SubjectVersions = %v, %v", vers, err)
	}
	subs, err := cl.Subjects(ctx)
	if err != nil || !reflect.DeepEqual(subs, []string{"other-value", "s3_topic-value"}) {
		t.Fatalf("Subjects = %v, %v", subs, err)
	}
	latest, err := cl.SchemaByVersion(ctx, "s3_topic-value", -1)
	if err != nil || latest.Version != 2 || latest.ID != id2 || latest.Schema.Schema != schemaB {
		t.Fatalf("latest = %+v, %v", latest, err)
	}
	v1, err := cl.SchemaByVersion(ctx, "s3_topic-value", 1)
	if err != nil || v1.Version != 1 || v1.ID != id1 {
		t.Fatalf("version 1 = %+v, %v", v1, err)
	}
	ss, err := cl.LookupSchema(ctx, "s3_topic-value", sr.Schema{Schema: schemaB})
	if err != nil || ss.ID != id2 || ss.Version != 2 || ss.Subject != "s3_topic-value" {
		t.Fatalf("LookupSchema = %+v, %v", ss, err)
	}
	usages, err := cl.SchemaVersionsByID(ctx, id1)
	want := []sr.SubjectVersion{{Subject: "s3_topic-value", Version: 1}, {Subject: "other-value", Version: 1}}
	if err != nil || !reflect.DeepEqual(usages, want) {
		t.Fatalf("SchemaVersionsByID = %+v, %v", usages, err)
	}
	created, err := cl.CreateSchema(ctx, "third-value", sr.Schema{Schema: schemaB})
	if err != nil || created.ID != id2 || created.Version != 1 || created.Subject != "third-value" {
		t.Fatalf("CreateSchema = %+v, %v", created, err)
	}

	// Errors carry Confluent's codes.
	if _, err := cl.SchemaByID(ctx, 999); errCode(err) != CodeSchemaNotFound {
		t.Errorf("unknown id: %v, want code %d", err, CodeSchemaNotFound)
	}
	if _, err := cl.SchemaByVersion(ctx, "nope", 1); errCode(err) != CodeSubjectNotFound {
		t.Errorf("unknown subject: %v", err)
	}
	if _, err := cl.SchemaByVersion(ctx, "s3_topic-value", 7); errCode(err) != CodeVersionNotFound {
		t.Errorf("unknown version: %v", err)
	}
	if _, err := cl.LookupSchema(ctx, "s3_topic-value", sr.Schema{Schema: `"string"`}); errCode(err) != CodeSchemaNotFound {
		t.Errorf("lookup of unregistered schema: %v", err)
	}
	if _, err := cl.RegisterSchema(ctx, "x-value", sr.Schema{Schema: `{"type":"nope"}`}, -1, -1); errCode(err) != CodeInvalidSchema {
		t.Errorf("invalid schema: %v", err)
	}
	if n := s.Requests("GET", "/schemas/ids/999"); n != 1 {
		t.Errorf("Requests(GET /schemas/ids/999) = %d, want 1", n)
	}
}

func TestBasicAuth(t *testing.T) {
	s := startT(t, Config{User: "alice", Password: "s3cret"})
	ctx := context.Background()
	if _, err := client(t, s.URL()).Subjects(ctx); errCode(err) != CodeUnauthorized {
		t.Fatalf("no credentials: %v, want %d", err, CodeUnauthorized)
	}
	if _, err := client(t, s.URL(), sr.BasicAuth("alice", "wrong")).Subjects(ctx); errCode(err) != CodeUnauthorized {
		t.Fatalf("wrong password: %v", err)
	}
	if _, err := client(t, s.URL(), sr.BasicAuth("alice", "s3cret")).Subjects(ctx); err != nil {
		t.Fatalf("right credentials: %v", err)
	}
}

// TestRawHTTP checks the wire details a non-franz client sees: content
// type, error bodies, escaped subjects, methods.
func TestRawHTTP(t *testing.T) {
	reg := New(Config{})
	hs := httptest.NewServer(reg)
	defer hs.Close()
	if _, _, err := reg.Register("a/b-value", "", schemaA); err != nil {
		t.Fatal(err)
	}
	do := func(method, path, body string) (int, string, string) {
		t.Helper()
		req, err := http.NewRequest(method, hs.URL+path, strings.NewReader(body))
		if err != nil {
			t.Fatal(err)
		}
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, _ := io.ReadAll(resp.Body)
		return resp.StatusCode, resp.Header.Get("Content-Type"), string(b)
	}
	code, ct, body := do("GET", "/subjects/a%2Fb-value/versions/latest/schema", "")
	if code != 200 || ct != ContentType || body != schemaA {
		t.Errorf("escaped subject: %d %q %q", code, ct, body)
	}
	code, _, body = do("GET", "/schemas/ids/42", "")
	var e struct {
		ErrorCode int    `json:"error_code"`
		Message   string `json:"message"`
	}
	if err := json.Unmarshal([]byte(body), &e); err != nil || code != 404 || e.ErrorCode != 40403 || !strings.Contains(e.Message, "42") {
		t.Errorf("unknown id: %d %q (%v)", code, body, err)
	}
	if code, _, _ = do("DELETE", "/subjects", ""); code != 405 {
		t.Errorf("DELETE /subjects: %d, want 405", code)
	}
	if code, _, _ = do("GET", "/nope", ""); code != 404 {
		t.Errorf("GET /nope: %d", code)
	}
	if code, _, _ = do("POST", "/subjects/x-value/versions", "{not json"); code != 400 {
		t.Errorf("bad body: %d", code)
	}
	if code, _, _ = do("GET", "/subjects/a%2Fb-value/versions/zero", ""); code != 422 {
		t.Errorf("bad version: %d", code)
	}
	if code, _, body = do("POST", "/subjects/a%2Fb-value/versions", `{"schema":"\"string\"","schemaType":"AVRO"}`); code != 200 || !strings.Contains(body, `"id":2`) {
		t.Errorf("register: %d %s", code, body)
	}
	if reg.TotalRequests() != 7 {
		t.Errorf("TotalRequests = %d, want 7", reg.TotalRequests())
	}
}
