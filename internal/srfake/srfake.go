package srfake

import (
	"bytes"
	"crypto/subtle"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net"
	"net/http"
	"net/url"
	"sort"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/twmb/avro"
)

// ContentType is the media type the registry answers with.
const ContentType = "application/vnd.schemaregistry.v1+json"

// Confluent's error codes that the fake returns.
const (
	CodeUnauthorized     = 40101
	CodeSubjectNotFound  = 40401
	CodeVersionNotFound  = 40402
	CodeSchemaNotFound   = 40403
	CodeInvalidSchema    = 42201
	CodeInvalidVersion   = 42202
	CodeNotFound         = 404
	CodeMethodNotAllowed = 405
	CodeBadRequest       = 400
)

// maxBody bounds a request body.
const maxBody = 8 << 20

// Config configures a Registry.
type Config struct {
	// User and Password, when User is set, are required as HTTP basic auth
	// on every request.
	User     string
	Password string
	// Logger receives one debug line per request; nil discards.
	Logger *slog.Logger
}

type schemaEntry struct {
	text  string // as registered
	typ   string // "" for Avro
	usage []subjectVersion
}

type subjectVersion struct {
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Registry is the in-memory registry; it is an http.Handler. The zero value
// is not usable; call New.
type Registry struct {
	cfg Config
	log *slog.Logger

	mu       sync.Mutex
	schemas  []schemaEntry    // index id-1
	byKey    map[string]int   // schema key -> id
	subjects map[string][]int // subject -> ids by version-1
	requests map[string]int   // "METHOD path" -> count
	down     bool             // SetDown: every request answers 503
}

// SetDown switches the registry down (every request answers 503
// Service Unavailable, error code 50301, as a registry that is
// restarting) or up again.
func (r *Registry) SetDown(down bool) {
	r.mu.Lock()
	r.down = down
	r.mu.Unlock()
}

// New returns an empty registry. Ids start at 1.
func New(cfg Config) *Registry {
	log := cfg.Logger
	if log == nil {
		log = slog.New(slog.DiscardHandler)
	}
	return &Registry{
		cfg:      cfg,
		log:      log,
		byKey:    map[string]int{},
		subjects: map[string][]int{},
		requests: map[string]int{},
	}
}

// schemaKey identifies a schema for deduplication: schema type plus compact
// JSON text (Confluent compares a normalized form; compact JSON is close
// enough for clients that send the same text).
func schemaKey(typ, text string) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		b.Reset()
		b.WriteString(text)
	}
	return normType(typ) + "\x00" + b.String()
}

func normType(typ string) string {
	t := strings.ToUpper(strings.TrimSpace(typ))
	if t == "AVRO" {
		return ""
	}
	return t
}

// Register adds schema (Avro when typ is "" or "AVRO") under subject, as a
// client's POST /subjects/{subject}/versions would, and returns its id and
// version. Registering the same schema again returns the same id and
// version.
func (r *Registry) Register(subject, typ, schema string) (id, version int, err error) {
	if subject == "" {
		return 0, 0, errors.New("srfake: empty subject")
	}
	typ = normType(typ)
	switch typ {
	case "":
		if _, err := avro.Parse(schema); err != nil {
			return 0, 0, fmt.Errorf("srfake: invalid Avro schema for subject %q: %w", subject, err)
		}
	case "JSON", "PROTOBUF":
	default:
		return 0, 0, fmt.Errorf("srfake: unknown schemaType %q", typ)
	}
	r.mu.Lock()
	defer r.mu.Unlock()
	key := schemaKey(typ, schema)
	id, ok := r.byKey[key]
	if !ok {
		r.schemas = append(r.schemas, schemaEntry{text: schema, typ: typ})
		id = len(r.schemas)
		r.byKey[key] = id
	}
	for i, sid := range r.subjects[subject] {
		if sid == id {
			return id, i + 1, nil
		}
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	version = len(r.subjects[subject])
	e := &r.schemas[id-1]
	e.usage = append(e.usage, subjectVersion{subject, version})
	return id, version, nil
}

// Requests returns how many requests were served for method and path
// (the escaped path, e.g. "/schemas/ids/1"), counting rejected ones too.
func (r *Registry) Requests(method, path string) int {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.requests[method+" "+path]
}

// TotalRequests returns the number of requests served so far.
func (r *Registry) TotalRequests() int {
	r.mu.Lock()
	defer r.mu.Unlock()
	n := 0
	for _, c := range r.requests {
		n += c
	}
	return n
}

type apiError struct {
	status int
	code   int
	msg    string
}

func (e *apiError) Error() string { return fmt.Sprintf("%d %s", e.code, e.msg) }

func errf(status, code int, format string, args ...any) *apiError {
	return &apiError{status: status, code: code, msg: fmt.Sprintf(format, args...)}
}

// ServeHTTP implements http.Handler.
func (r *Registry) ServeHTTP(w http.ResponseWriter, req *http.Request) {
	path := req.URL.EscapedPath()
	r.mu.Lock()
	r.requests[req.Method+" "+path]++
	down := r.down
	r.mu.Unlock()
	r.log.Debug("srfake request", "method", req.Method, "path", path)

	w.Header().Set("Content-Type", ContentType)
	if down {
		writeErr(w, errf(http.StatusServiceUnavailable, 50301, "registry restarting"))
		return
	}
	if r.cfg.User != "" {
		u, p, ok := req.BasicAuth()
		if !ok || subtle.ConstantTimeCompare([]byte(u), []byte(r.cfg.User)) != 1 ||
			subtle.ConstantTimeCompare([]byte(p), []byte(r.cfg.Password)) != 1 {
			w.Header().Set("WWW-Authenticate", `Basic realm="srfake"`)
			writeErr(w, errf(http.StatusUnauthorized, CodeUnauthorized, "Unauthorized"))
			return
		}
	}
	v, err := r.route(req, path)
	if err != nil {
		var ae *apiError
		if !errors.As(err, &ae) {
			ae = errf(http.StatusInternalServerError, 50001, "%v", err)
		}
		writeErr(w, ae)
		return
	}
	if s, ok := v.(rawText); ok {
		_, _ = io.WriteString(w, string(s))
		return
	}
	_ = json.NewEncoder(w).Encode(v)
}

type rawText string

func writeErr(w http.ResponseWriter, e *apiError) {
	w.WriteHeader(e.status)
	_ = json.NewEncoder(w).Encode(map[string]any{"error_code": e.code, "message": e.msg})
}

func (r *Registry) route(req *http.Request, path string) (any, error) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for i, s := range segs {
		u, err := url.PathUnescape(s)
		if err != nil {
			return nil, errf(http.StatusBadRequest, CodeBadRequest, "bad path segment %q", s)
		}
		segs[i] = u
	}
	get, post := req.Method == http.MethodGet, req.Method == http.MethodPost
	notAllowed := errf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "HTTP %s not allowed on %s", req.Method, path)
	switch {
	case len(segs) == 1 && segs[0] == "subjects":
		if !get {
			return nil, notAllowed
		}
		return r.listSubjects(), nil
	case len(segs) >= 3 && segs[0] == "schemas" && segs[1] == "ids":
		if !get {
			return nil, notAllowed
		}
		id, err := strconv.Atoi(segs[2])
		if err != nil {
			return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %s not found", segs[2])
		}
		switch {
		case len(segs) == 3:
			return r.schemaByID(id, false)
		case len(segs) == 4 && segs[3] == "schema":
			return r.schemaByID(id, true)
		case len(segs) == 4 && segs[3] == "versions":
			return r.versionsByID(id)
		}
	case len(segs) == 2 && segs[0] == "subjects":
		if !post {
			return nil, notAllowed
		}
		body, err := readSchemaBody(req)
		if err != nil {
			return nil, err
		}
		return r.lookup(segs[1], body)
	case len(segs) == 3 && segs[0] == "subjects" && segs[2] == "versions":
		switch {
		case get:
			return r.subjectVersions(segs[1])
		case post:
			body, err := readSchemaBody(req)
			if err != nil {
				return nil, err
			}
			id, _, err := r.Register(segs[1], body.SchemaType, body.Schema)
			if err != nil {
				return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "%v", err)
			}
			return map[string]int{"id": id}, nil
		}
		return nil, notAllowed
	case (len(segs) == 4 || len(segs) == 5 && segs[4] == "schema") && segs[0] == "subjects" && segs[2] == "versions":
		if !get {
			return nil, notAllowed
		}
		ss, err := r.subjectVersion(segs[1], segs[3])
		if err != nil {
			return nil, err
		}
		if len(segs) == 5 {
			return rawText(ss.Schema), nil
		}
		return ss, nil
	}
	return nil, errf(http.StatusNotFound, CodeNotFound, "HTTP 404 Not Found: %s", path)
}

type schemaBody struct {
	Schema     string            `json:"schema"`
	SchemaType string            `json:"schemaType,omitempty"`
	References []json.RawMessage `json:"references,omitempty"`
}

func readSchemaBody(req *http.Request) (schemaBody, error) {
	var b schemaBody
	data, err := io.ReadAll(io.LimitReader(req.Body, maxBody+1))
	if err != nil {
		return b, errf(http.StatusBadRequest, CodeBadRequest, "reading body: %v", err)
	}
	if len(data) > maxBody {
		return b, errf(http.StatusRequestEntityTooLarge, CodeBadRequest, "body over %d bytes", maxBody)
	}
	if err := json.Unmarshal(data, &b); err != nil {
		return b, errf(http.StatusBadRequest, CodeBadRequest, "bad JSON body: %v", err)
	}
	if len(b.References) > 0 {
		return b, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "schema references are not supported")
	}
	if strings.TrimSpace(b.Schema) == "" {
		return b, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "empty schema")
	}
	return b, nil
}

// subjectSchema is the JSON of one subject version.
type subjectSchema struct {
	Subject    string `json:"subject"`
	Version    int    `json:"version"`
	ID         int    `json:"id"`
	SchemaType string `json:"schemaType,omitempty"`
	Schema     string `json:"schema"`
}

func (r *Registry) listSubjects() []string {
	r.mu.Lock()
	defer r.mu.Unlock()
	out := make([]string, 0, len(r.subjects))
	for s := range r.subjects {
		out = append(out, s)
	}
	sort.Strings(out)
	return out
}

func (r *Registry) schemaByID(id int, textOnly bool) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < 1 || id > len(r.schemas) {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
	}
	e := r.schemas[id-1]
	if textOnly {
		return rawText(e.text), nil
	}
	return struct {
		Schema     string `json:"schema"`
		SchemaType string `json:"schemaType,omitempty"`
	}{e.text, e.typ}, nil
}

func (r *Registry) versionsByID(id int) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	if id < 1 || id > len(r.schemas) {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
	}
	return append([]subjectVersion{}, r.schemas[id-1].usage...), nil
}

func (r *Registry) subjectVersions(subject string) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, ok := r.subjects[subject]
	if !ok {
		return nil, errf(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", subject)
	}
	out := make([]int, len(ids))
	for i := range ids {
		out[i] = i + 1
	}
	return out, nil
}

func (r *Registry) subjectVersion(subject, v string) (subjectSchema, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, ok := r.subjects[subject]
	if !ok {
		return subjectSchema{}, errf(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", subject)
	}
	var n int
	if v == "latest" || v == "-1" {
		n = len(ids)
	} else {
		var err error
		n, err = strconv.Atoi(v)
		if err != nil || n < 1 {
			return subjectSchema{}, errf(http.StatusUnprocessableEntity, CodeInvalidVersion,
				"The specified version '%s' is not a valid version id. Allowed values are between [1, 2^31-1] and the string \"latest\"", v)
		}
	}
	if n > len(ids) {
		return subjectSchema{}, errf(http.StatusNotFound, CodeVersionNotFound, "Version %d not found.", n)
	}
	id := ids[n-1]
	e := r.schemas[id-1]
	return subjectSchema{Subject: subject, Version: n, ID: id, SchemaType: e.typ, Schema: e.text}, nil
}

func (r *Registry) lookup(subject string, b schemaBody) (any, error) {
	key := schemaKey(b.SchemaType, b.Schema)
	r.mu.Lock()
	defer r.mu.Unlock()
	ids, ok := r.subjects[subject]
	if !ok {
		return nil, errf(http.StatusNotFound, CodeSubjectNotFound, "Subject '%s' not found.", subject)
	}
	id, ok := r.byKey[key]
	if ok {
		for i, sid := range ids {
			if sid == id {
				e := r.schemas[id-1]
				return subjectSchema{Subject: subject, Version: i + 1, ID: id, SchemaType: e.typ, Schema: e.text}, nil
			}
		}
	}
	return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema not found")
}

// Server is a Registry served over loopback HTTP.
type Server struct {
	*Registry
	url  string
	srv  *http.Server
	done chan error

	closeOnce sync.Once
	closeErr  error
}

// Start serves a new Registry on 127.0.0.1 at a free port until Close.
func Start(cfg Config) (*Server, error) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("srfake: listen: %w", err)
	}
	reg := New(cfg)
	s := &Server{
		Registry: reg,
		url:      "http://" + ln.Addr().String(),
		srv:      &http.Server{Handler: reg, ReadHeaderTimeout: 10 * time.Second},
		done:     make(chan error, 1),
	}
	go func() { s.done <- s.srv.Serve(ln) }()
	return s, nil
}

// URL returns the base URL, e.g. "http://127.0.0.1:40123".
func (s *Server) URL() string { return s.url }

// Close stops the server and waits for it to finish. Later calls return
// the first call's result.
func (s *Server) Close() error {
	s.closeOnce.Do(func() {
		// Close, not Shutdown: a client's connection that never sent a
		// request stays "new" for 5 s and would hold Shutdown that long.
		err := s.srv.Close()
		if serr := <-s.done; serr != nil && !errors.Is(serr, http.ErrServerClosed) && err == nil {
			err = serr
		}
		s.closeErr = err
	})
	return s.closeErr
}
