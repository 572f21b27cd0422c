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
	CodeOperationDenied  = 42205
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
	refs  []Reference
	usage []subjectVersion
}

// Reference is a schema reference: the name the schema uses for a type,
// and the subject and version that define it.
type Reference struct {
	Name    string `json:"name"`
	Subject string `json:"subject"`
	Version int    `json:"version"`
}

// Modes a subject (or the registry) can be in.
const (
	ModeReadWrite = "READWRITE"
	ModeImport    = "IMPORT"
	ModeReadOnly  = "READONLY"
)

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
	schemas  map[int]*schemaEntry // id -> schema
	nextID   int                  // the id the next new schema gets
	byKey    map[string]int       // schema key -> id
	subjects map[string][]int     // subject -> ids by version-1
	mode     string               // the global mode; "" is READWRITE
	modes    map[string]string    // subject -> its mode
	requests map[string]int       // "METHOD path" -> count
	down     bool                 // SetDown: every request answers 503
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
		schemas:  map[int]*schemaEntry{},
		nextID:   1,
		byKey:    map[string]int{},
		subjects: map[string][]int{},
		modes:    map[string]string{},
		requests: map[string]int{},
	}
}

// schemaKey identifies a schema for deduplication: schema type plus compact
// JSON text (Confluent compares a normalized form; compact JSON is close
// enough for clients that send the same text).
func schemaKey(typ, text string, refs []Reference) string {
	var b bytes.Buffer
	if err := json.Compact(&b, []byte(text)); err != nil {
		b.Reset()
		b.WriteString(text)
	}
	for _, r := range refs {
		fmt.Fprintf(&b, "\x00%s\x00%s\x00%d", r.Name, r.Subject, r.Version)
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
// version. refs are its references, which must exist.
func (r *Registry) Register(subject, typ, schema string, refs ...Reference) (id, version int, err error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.register(subject, typ, schema, refs, 0, 0)
}

// register is Register with r.mu held; id and version, when not 0, are an
// import's (IMPORT mode).
func (r *Registry) register(subject, typ, schema string, refs []Reference, wantID, wantVersion int) (id, version int, err error) {
	if subject == "" {
		return 0, 0, errors.New("srfake: empty subject")
	}
	typ = normType(typ)
	for _, ref := range refs {
		if _, err := r.subjectVersionLocked(ref.Subject, strconv.Itoa(ref.Version)); err != nil {
			return 0, 0, fmt.Errorf("srfake: reference %q: subject %q version %d: %w", ref.Name, ref.Subject, ref.Version, err)
		}
	}
	switch typ {
	case "":
		// A schema with references uses types defined elsewhere: it
		// parses only with them, which the fake does not resolve.
		if _, err := avro.Parse(schema); err != nil && len(refs) == 0 {
			return 0, 0, fmt.Errorf("srfake: invalid Avro schema for subject %q: %w", subject, err)
		}
	case "JSON", "PROTOBUF":
	default:
		return 0, 0, fmt.Errorf("srfake: unknown schemaType %q", typ)
	}
	key := schemaKey(typ, schema, refs)
	id, ok := r.byKey[key]
	switch {
	case wantID != 0 && ok && id != wantID:
		return 0, 0, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Overwrite new schema with id %d is not permitted: the schema has id %d", wantID, id)
	case wantID != 0 && !ok && r.schemas[wantID] != nil:
		return 0, 0, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Overwrite new schema with id %d is not permitted: the id holds another schema", wantID)
	case !ok:
		id = wantID
		if id == 0 {
			id = r.nextID
		}
		r.schemas[id] = &schemaEntry{text: schema, typ: typ, refs: refs}
		r.nextID = max(r.nextID, id+1)
		r.byKey[key] = id
	}
	for i, sid := range r.subjects[subject] {
		if sid == id {
			return id, i + 1, nil
		}
	}
	version = len(r.subjects[subject]) + 1
	if wantVersion > 0 {
		if wantVersion != version {
			return 0, 0, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "the fake imports versions in order: want version %d, next is %d", wantVersion, version)
		}
	}
	r.subjects[subject] = append(r.subjects[subject], id)
	e := r.schemas[id]
	e.usage = append(e.usage, subjectVersion{subject, version})
	return id, version, nil
}

// Mode returns subject's mode ("" for the global mode).
func (r *Registry) Mode(subject string) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	return r.modeLocked(subject)
}

func (r *Registry) modeLocked(subject string) string {
	m := r.modes[subject]
	if subject == "" || m == "" {
		m = r.mode
	}
	if m == "" {
		m = ModeReadWrite
	}
	return m
}

// SetMode sets subject's mode ("" for the global mode), as PUT /mode does:
// IMPORT only on a subject without versions (the whole registry empty for
// the global mode), unless forced (PUT /mode?force=true).
func (r *Registry) SetMode(subject, mode string) error {
	return r.setMode(subject, mode, false)
}

// setMode is SetMode; force allows IMPORT on a subject with versions (as
// Confluent's force=true).
func (r *Registry) setMode(subject, mode string, force bool) error {
	r.mu.Lock()
	defer r.mu.Unlock()
	mode = strings.ToUpper(mode)
	switch mode {
	case ModeReadWrite, ModeImport, ModeReadOnly:
	default:
		return errf(http.StatusUnprocessableEntity, 42204, "Invalid mode %q", mode)
	}
	if mode == ModeImport && !force {
		if subject == "" && len(r.subjects) > 0 || subject != "" && len(r.subjects[subject]) > 0 {
			return errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Cannot import since found existing subjects")
		}
	}
	if subject == "" {
		r.mode = mode
	} else {
		r.modes[subject] = mode
	}
	return nil
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
	case segs[0] == "mode" && len(segs) <= 2:
		return r.modeRoute(req, segs)
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
			return r.registerRoute(segs[1], body)
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
	Schema     string      `json:"schema"`
	SchemaType string      `json:"schemaType,omitempty"`
	References []Reference `json:"references,omitempty"`
	// ID and Version are an import's (IMPORT mode).
	ID      int `json:"id,omitempty"`
	Version int `json:"version,omitempty"`
}

// registerRoute is POST /subjects/{subject}/versions: a registration, or
// in IMPORT mode an import with the body's id (and version).
func (r *Registry) registerRoute(subject string, b schemaBody) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	mode := r.modeLocked(subject)
	switch {
	case mode == ModeReadOnly:
		return nil, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Subject %s is in read-only mode", subject)
	case mode == ModeImport && b.ID <= 0:
		return nil, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Subject %s is in import mode: a schema id is required", subject)
	case mode != ModeImport && b.ID > 0:
		return nil, errf(http.StatusUnprocessableEntity, CodeOperationDenied, "Overwrite new schema with id %d is not permitted outside IMPORT mode", b.ID)
	}
	version := 0
	if mode == ModeImport {
		version = b.Version
	}
	id, _, err := r.register(subject, b.SchemaType, b.Schema, b.References, b.ID, version)
	if err != nil {
		var ae *apiError
		if errors.As(err, &ae) {
			return nil, ae
		}
		return nil, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "%v", err)
	}
	return map[string]int{"id": id}, nil
}

// modeRoute is GET and PUT /mode and /mode/{subject}.
func (r *Registry) modeRoute(req *http.Request, segs []string) (any, error) {
	subject := ""
	if len(segs) == 2 {
		subject = segs[1]
	}
	switch req.Method {
	case http.MethodGet:
		return map[string]string{"mode": r.Mode(subject)}, nil
	case http.MethodPut:
		var body struct {
			Mode string `json:"mode"`
		}
		if err := json.NewDecoder(io.LimitReader(req.Body, maxBody)).Decode(&body); err != nil {
			return nil, errf(http.StatusBadRequest, CodeBadRequest, "bad JSON body: %v", err)
		}
		if err := r.setMode(subject, body.Mode, req.URL.Query().Get("force") == "true"); err != nil {
			return nil, err
		}
		return map[string]string{"mode": strings.ToUpper(body.Mode)}, nil
	}
	return nil, errf(http.StatusMethodNotAllowed, CodeMethodNotAllowed, "HTTP %s not allowed on /mode", req.Method)
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
	if strings.TrimSpace(b.Schema) == "" {
		return b, errf(http.StatusUnprocessableEntity, CodeInvalidSchema, "empty schema")
	}
	return b, nil
}

// subjectSchema is the JSON of one subject version.
type subjectSchema struct {
	Subject    string      `json:"subject"`
	Version    int         `json:"version"`
	ID         int         `json:"id"`
	SchemaType string      `json:"schemaType,omitempty"`
	Schema     string      `json:"schema"`
	References []Reference `json:"references,omitempty"`
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
	e := r.schemas[id]
	if e == nil {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
	}
	if textOnly {
		return rawText(e.text), nil
	}
	return struct {
		Schema     string      `json:"schema"`
		SchemaType string      `json:"schemaType,omitempty"`
		References []Reference `json:"references,omitempty"`
	}{e.text, e.typ, e.refs}, nil
}

func (r *Registry) versionsByID(id int) (any, error) {
	r.mu.Lock()
	defer r.mu.Unlock()
	e := r.schemas[id]
	if e == nil {
		return nil, errf(http.StatusNotFound, CodeSchemaNotFound, "Schema %d not found", id)
	}
	return append([]subjectVersion{}, e.usage...), nil
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
	return r.subjectVersionLocked(subject, v)
}

func (r *Registry) subjectVersionLocked(subject, v string) (subjectSchema, error) {
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
	e := r.schemas[id]
	return subjectSchema{Subject: subject, Version: n, ID: id, SchemaType: e.typ, Schema: e.text, References: e.refs}, nil
}

func (r *Registry) lookup(subject string, b schemaBody) (any, error) {
	key := schemaKey(b.SchemaType, b.Schema, b.References)
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
				e := r.schemas[id]
				return subjectSchema{Subject: subject, Version: i + 1, ID: id, SchemaType: e.typ, Schema: e.text, References: e.refs}, nil
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
