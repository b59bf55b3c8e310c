// Package api serves the assisted-service v2 REST API of node zero's
// embedded service under /api/assisted-install/v2: the routes agents, ABI's
// scripts and `wait-for` use, with the JSON shapes of wire, the
// per-route token schemes of assisted-service, and error bodies that say what
// is wrong. A client error is never a 500; unknown paths get a JSON 404, a
// served path asked with another method a 405 with Allow; an empty list is
// [], never null.
// Its HTTP server is here too (Serve): per-connection limits, a per-client
// connection cap and optional TLS (server.go, listener.go).
//
// api imports daemon/assisted, daemon/auth, daemon/agentjson (the fast
// step reply reader) and wire.
package api

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"net/http"
	"reflect"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/daemon/agentjson"
	"github.com/nodezero/nodezero/daemon/assisted"
	"github.com/nodezero/nodezero/daemon/auth"
	"github.com/nodezero/nodezero/wire"
)

// Base is the path prefix of every v2 route.
const Base = wire.APIBasePath

// DefaultMaxBody bounds a request body (inventories are tens of KiB).
const DefaultMaxBody = 4 << 20

// Config wires a Handler.
type Config struct {
	Service  *assisted.Service
	Verifier *auth.Verifier // nil: no authentication (development only)
	Logger   *slog.Logger
	// MaxBody bounds the largest JSON bodies: step replies, manifests,
	// infra-envs (0: DefaultMaxBody). The other operations take less
	// (limits.go), never more than this.
	MaxBody int64
	// LogsDir holds the log bundles agents upload, a directory per
	// cluster (the service's data dir/logs). "": the log routes answer 503.
	LogsDir string
	// MaxLogsSize bounds one uploaded bundle (0: DefaultMaxLogsSize).
	MaxLogsSize int64
}

// Route is one operation of the API: what the auth matrix test walks.
type Route struct {
	Method, Pattern, Operation string
	Schemes                    []auth.Scheme // nil: no authentication
	Success                    int
	handle                     func(*request) (any, error)
}

type server struct {
	cfg    Config
	log    *slog.Logger
	routes []Route
	logs   *logStore // nil without Config.LogsDir
	// bigReplies bounds the large step replies handled at once (see
	// postStepReply).
	bigReplies chan struct{}
}

// New returns the API handler.
func New(cfg Config) http.Handler {
	if cfg.Logger == nil {
		cfg.Logger = slog.New(slog.DiscardHandler)
	}
	if cfg.MaxBody == 0 {
		cfg.MaxBody = DefaultMaxBody
	}
	s := &server{cfg: cfg, log: cfg.Logger, bigReplies: make(chan struct{}, 2*runtime.GOMAXPROCS(0))}
	if cfg.LogsDir != "" {
		s.logs = newLogStore(cfg.LogsDir, cfg.MaxLogsSize, cfg.Logger)
	}
	s.routes = s.table()
	mux := http.NewServeMux()
	// paths matches a request's path alone: a path some route serves
	// with another method is a 405 naming the methods it takes.
	paths, allow := http.NewServeMux(), map[string][]string{}
	for _, r := range s.routes {
		mux.Handle(r.Method+" "+r.Pattern, s.wrap(r))
		if allow[r.Pattern] == nil {
			paths.Handle(r.Pattern, http.NotFoundHandler())
		}
		allow[r.Pattern] = append(allow[r.Pattern], r.Method)
	}
	mux.HandleFunc("/", func(w http.ResponseWriter, r *http.Request) {
		if _, pat := paths.Handler(r); allow[pat] != nil {
			methods := strings.Join(allow[pat], ", ")
			w.Header().Set("Allow", methods)
			writeError(w, http.StatusMethodNotAllowed, fmt.Sprintf("%s %s: method not allowed; this path takes %s", r.Method, r.URL.Path, methods))
			return
		}
		writeError(w, http.StatusNotFound, fmt.Sprintf("no route for %s %s", r.Method, r.URL.Path))
	})
	return s.recover(mux)
}

// Routes lists the API's operations.
func Routes() []Route { return (&server{}).table() }

// request is what a handler sees.
type request struct {
	*http.Request
	w   http.ResponseWriter
	srv *server
}

func (r *request) param(name string) string { return r.PathValue(name) }

// decode reads the JSON body into v: a body over the route's limit (wrap
// bounds it), malformed JSON, a wrong type or trailing data are the
// client's errors.
func (r *request) decode(v any) error {
	// Padding after the document still counts against the limit: DecodeOne
	// returns that read error as it is.
	err := wire.DecodeOne(r.Body, v)
	switch {
	case errors.Is(err, wire.ErrTrailingData):
		return &httpError{http.StatusBadRequest, "request body: unexpected data after the JSON document"}
	case err != nil:
		return bodyError(err)
	}
	return nil
}

// bodies are the buffers step replies are read into and JSON answers
// encoded into: at a thousand hosts a connectivity report is 300 KB and
// every instructions answer carries a 100 KB check. A buffer grown past
// maxPooledBody (a 4 MiB reply, a large host list) is let go rather than
// kept.
var bodies = sync.Pool{New: func() any { return new(bytes.Buffer) }}

const maxPooledBody = 1 << 20

func getBody() *bytes.Buffer {
	b := bodies.Get().(*bytes.Buffer)
	b.Reset()
	return b
}

func putBody(b *bytes.Buffer) {
	if b.Cap() <= maxPooledBody {
		bodies.Put(b)
	}
}

// decodeStepReply reads a step reply: whole, then by the fast reader when
// it is in the plain form agents write (agentjson.DecodeStepReply, which
// keeps nothing of the buffer), else by decode, for its meaning or its
// error.
func (r *request) decodeStepReply(p *wire.StepReply) error {
	buf := getBody()
	defer putBody(buf)
	if r.ContentLength > 0 {
		buf.Grow(int(r.ContentLength))
	}
	if _, err := buf.ReadFrom(r.Body); err != nil {
		return bodyError(err)
	}
	if agentjson.DecodeStepReply(buf.Bytes(), p) {
		return nil
	}
	r.Body = io.NopCloser(bytes.NewReader(buf.Bytes()))
	return r.decode(p)
}

func bodyError(err error) error {
	var tooBig *http.MaxBytesError
	var syn *json.SyntaxError
	var typ *json.UnmarshalTypeError
	switch {
	case errors.As(err, &tooBig):
		return &httpError{http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is larger than %d bytes", tooBig.Limit)}
	case errors.Is(err, io.EOF):
		return &httpError{http.StatusBadRequest, "request body: empty, a JSON document was expected"}
	case errors.As(err, &syn):
		return &httpError{http.StatusBadRequest, fmt.Sprintf("request body: malformed JSON at byte %d: %v", syn.Offset, syn)}
	case errors.As(err, &typ):
		field := typ.Field
		if field == "" {
			field = "(document)"
		}
		return &httpError{http.StatusBadRequest, fmt.Sprintf("request body: %s: expected %s, got JSON %s", field, typ.Type, typ.Value)}
	case errors.Is(err, io.ErrUnexpectedEOF):
		return &httpError{http.StatusBadRequest, "request body: truncated JSON"}
	}
	return &httpError{http.StatusBadRequest, "request body: " + err.Error()}
}

// httpError is an error with its status, made by this package.
type httpError struct {
	status int
	msg    string
}

func (e *httpError) Error() string { return e.msg }

// statusOf maps an error to its HTTP status and the message a client sees.
func statusOf(err error) (int, string) {
	var he *httpError
	if errors.As(err, &he) {
		return he.status, he.msg
	}
	switch assisted.KindOf(err) {
	case assisted.KindBadRequest:
		return http.StatusBadRequest, assisted.Message(err)
	case assisted.KindNotFound:
		return http.StatusNotFound, assisted.Message(err)
	case assisted.KindConflict:
		return http.StatusConflict, assisted.Message(err)
	}
	return http.StatusInternalServerError, assisted.Message(err)
}

func (s *server) wrap(rt Route) http.Handler {
	limit := s.bodyLimitOf(rt.Operation)
	return http.HandlerFunc(func(w http.ResponseWriter, hr *http.Request) {
		start := time.Now()
		if rt.Schemes != nil && s.cfg.Verifier != nil {
			if _, err := s.cfg.Verifier.Authorize(hr.Header, rt.Schemes); err != nil {
				status := http.StatusUnauthorized
				if errors.Is(err, auth.ErrForbidden) {
					status = http.StatusForbidden
				}
				writeInfraError(w, status, err.Error())
				s.log.Info("request refused", "op", rt.Operation, "status", status, "err", err)
				return
			}
		}
		if hr.ContentLength > limit {
			// Refused before a byte of it is read; the connection ends
			// with the answer rather than waiting for the rest.
			w.Header().Set("Connection", "close")
			writeError(w, http.StatusRequestEntityTooLarge, fmt.Sprintf("request body is %d bytes, larger than the %d bytes %s takes", hr.ContentLength, limit, rt.Operation))
			s.log.Info("request refused", "op", rt.Operation, "status", http.StatusRequestEntityTooLarge, "content_length", hr.ContentLength)
			return
		}
		hr.Body = http.MaxBytesReader(w, hr.Body, limit)
		req := &request{Request: hr, w: w, srv: s}
		out, err := rt.handle(req)
		status := rt.Success
		if err != nil {
			var msg string
			status, msg = statusOf(err)
			if status >= 500 {
				s.log.Error("request failed", "op", rt.Operation, "err", err)
			}
			writeError(w, status, msg)
		} else if f, ok := out.(*file); ok {
			writeFile(w, status, f)
		} else if d, ok := out.(*download); ok {
			s.writeDownload(w, status, d, rt.Operation)
		} else {
			writeJSON(w, status, out)
		}
		s.log.Debug("request", "op", rt.Operation, "method", hr.Method, "path", hr.URL.Path,
			"status", status, "duration", time.Since(start), "request_id", hr.Header.Get("X-Request-Id"))
	})
}

// recover turns a panic in a handler into a logged 500: the daemon keeps
// serving the other hosts.
func (s *server) recover(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		defer func() {
			if v := recover(); v != nil {
				if v == http.ErrAbortHandler {
					panic(v)
				}
				s.log.Error("panic in handler", "path", r.URL.Path, "panic", v)
				writeError(w, http.StatusInternalServerError, "internal error")
			}
		}()
		next.ServeHTTP(w, r)
	})
}

func writeJSON(w http.ResponseWriter, status int, v any) {
	if status == http.StatusNoContent || v == nil {
		w.WriteHeader(status)
		return
	}
	if rv := reflect.ValueOf(v); rv.Kind() == reflect.Slice && rv.IsNil() {
		v = []struct{}{} // an empty list is [], never null
	}
	buf := getBody()
	defer putBody(buf)
	// Encode ends the document with a newline; it writes nothing when
	// encoding fails.
	if err := json.NewEncoder(buf).Encode(v); err != nil {
		writeError(w, http.StatusInternalServerError, "encode response: "+err.Error())
		return
	}
	w.Header().Set("Content-Type", "application/json")
	w.WriteHeader(status)
	_, _ = w.Write(buf.Bytes())
}

// file is a handler's answer that is a file, not JSON: a download.
type file struct {
	name string
	data []byte
}

// writeFile sends f as assisted-service's file responder does: the bytes,
// application/octet-stream, and the name in Content-Disposition.
func writeFile(w http.ResponseWriter, status int, f *file) {
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", f.name))
	h.Set("Content-Length", strconv.Itoa(len(f.data)))
	w.WriteHeader(status)
	_, _ = w.Write(f.data)
}

// download is a handler's answer streamed from open files: a log bundle,
// or a tar of several, too large to hold in memory.
type download struct {
	name  string
	size  int64 // -1: unknown, no Content-Length
	write func(io.Writer) error
	close func() error
}

// writeDownload streams d as writeFile sends a file. A failure once the
// headers are out cannot become an error status: the connection is cut,
// so the client sees a broken transfer rather than a short file.
func (s *server) writeDownload(w http.ResponseWriter, status int, d *download, op string) {
	defer d.close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("Content-Disposition", fmt.Sprintf("attachment; filename=%q", d.name))
	if d.size >= 0 {
		h.Set("Content-Length", strconv.FormatInt(d.size, 10))
	}
	// Not every ResponseWriter can (a recorder in tests).
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(transferTimeout))
	w.WriteHeader(status)
	if err := d.write(w); err != nil {
		s.log.Warn("download broken off", "op", op, "file", d.name, "err", err)
		panic(http.ErrAbortHandler)
	}
}

// writeError writes assisted-service's error body.
func writeError(w http.ResponseWriter, status int, reason string) {
	writeJSON(w, status, &wire.Error{Kind: wire.ErrorKindError, ID: int32(status), Code: strconv.Itoa(status), Href: "", Reason: reason})
}

// writeInfraError writes the infra_error body assisted-service uses for 401
// and 403.
func writeInfraError(w http.ResponseWriter, status int, msg string) {
	writeJSON(w, status, &wire.InfraError{Code: int32(status), Message: msg})
}

// maxQueryList bounds the values of one array parameter: each becomes an
// SQL variable, and SQLite refuses a statement with more than 32766.
const maxQueryList = 1000

// queryList reads a swagger csv array parameter, given once or repeated.
func queryList(r *request, name string) ([]string, error) {
	var out []string
	for _, v := range r.URL.Query()[name] {
		for _, p := range strings.Split(v, ",") {
			if p = strings.TrimSpace(p); p != "" {
				out = append(out, p)
			}
		}
	}
	if len(out) > maxQueryList {
		return nil, &httpError{http.StatusBadRequest, fmt.Sprintf("query %s: %d values, at most %d are allowed", name, len(out), maxQueryList)}
	}
	return out, nil
}

func queryInt(r *request, name string) (int, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return 0, nil
	}
	n, err := strconv.Atoi(v)
	if err != nil {
		return 0, &httpError{http.StatusBadRequest, fmt.Sprintf("query %s: %q is not an integer", name, v)}
	}
	return n, nil
}

func queryBool(r *request, name string) (bool, error) {
	v := r.URL.Query().Get(name)
	if v == "" {
		return false, nil
	}
	b, err := strconv.ParseBool(v)
	if err != nil {
		return false, &httpError{http.StatusBadRequest, fmt.Sprintf("query %s: %q is not a boolean", name, v)}
	}
	return b, nil
}
