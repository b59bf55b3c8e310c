package api_test

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"sync"
	"testing"

	"github.com/go-openapi/loads"
	"github.com/go-openapi/spec"
	"github.com/go-openapi/strfmt"
	"github.com/go-openapi/validate"

	"github.com/nodezero/nodezero/daemon/api"
)

// The assisted-service swagger, loaded with go-openapi (the library the
// upstream agent's generated client validates with), as the judge of what
// the API answers. The file is not in this repository: NODEZERO_SWAGGER
// names it, else it is looked for as shared/reference/assisted-service-swagger.yaml
// in the module root's directory or any above it.

// swaggerRelPath is where the swagger lies relative to a directory above
// the module root.
const swaggerRelPath = "shared/reference/assisted-service-swagger.yaml"

// swaggerDoc is the loaded, expanded swagger.
type swaggerDoc struct {
	path string
	sw   *spec.Swagger
}

var (
	swaggerOnce   sync.Once
	swaggerLoaded *swaggerDoc
	swaggerErr    error
	swaggerMiss   string // why no swagger was found; "" when found
)

// loadSwagger returns the swagger, loaded once. Without the file the test
// is skipped, or fails when CI=true.
func loadSwagger(t *testing.T) *swaggerDoc {
	t.Helper()
	swaggerOnce.Do(func() {
		path, why := findSwagger()
		if path == "" {
			swaggerMiss = why
			return
		}
		swaggerLoaded, swaggerErr = readSwagger(path)
	})
	if swaggerMiss != "" {
		if os.Getenv("CI") == "true" {
			t.Fatalf("the assisted-service swagger is needed: %s", swaggerMiss)
		}
		t.Skipf("the assisted-service swagger is needed: %s", swaggerMiss)
	}
	if swaggerErr != nil {
		t.Fatal(swaggerErr)
	}
	return swaggerLoaded
}

// findSwagger returns the swagger's path, or why there is none.
func findSwagger() (path, why string) {
	if p := os.Getenv("NODEZERO_SWAGGER"); p != "" {
		if _, err := os.Stat(p); err != nil {
			return "", fmt.Sprintf("NODEZERO_SWAGGER: %v", err)
		}
		return p, ""
	}
	wd, err := os.Getwd()
	if err != nil {
		return "", err.Error()
	}
	root := ""
	for d := wd; ; d = filepath.Dir(d) {
		if _, err := os.Stat(filepath.Join(d, "go.mod")); err == nil {
			root = d
			break
		}
		if filepath.Dir(d) == d {
			return "", fmt.Sprintf("no go.mod above %s", wd)
		}
	}
	var tried []string
	for d := root; ; d = filepath.Dir(d) {
		p := filepath.Join(d, swaggerRelPath)
		if _, err := os.Stat(p); err == nil {
			return p, ""
		}
		tried = append(tried, p)
		if filepath.Dir(d) == d {
			break
		}
	}
	return "", fmt.Sprintf("set NODEZERO_SWAGGER, or put it at one of %s", strings.Join(tried, ", "))
}

// readSwagger loads and expands the swagger, and turns go-swagger's
// x-nullable into the validator's nullable: the generated Go models take
// null for those fields, and so do the clients built from them.
func readSwagger(path string) (*swaggerDoc, error) {
	doc, err := loads.Spec(path)
	if err != nil {
		return nil, fmt.Errorf("load swagger %s: %w", path, err)
	}
	if doc, err = doc.Expanded(); err != nil {
		return nil, fmt.Errorf("expand swagger %s: %w", path, err)
	}
	sw := doc.Spec()
	seen := map[*spec.Schema]bool{}
	for name, d := range sw.Definitions {
		applyNullable(&d, seen)
		sw.Definitions[name] = d
	}
	for _, item := range sw.Paths.Paths {
		for _, op := range []*spec.Operation{item.Get, item.Put, item.Post, item.Delete, item.Patch} {
			if op == nil || op.Responses == nil {
				continue
			}
			for code, r := range op.Responses.StatusCodeResponses {
				applyNullable(r.Schema, seen)
				op.Responses.StatusCodeResponses[code] = r
			}
		}
	}
	return &swaggerDoc{path: path, sw: sw}, nil
}

func applyNullable(s *spec.Schema, seen map[*spec.Schema]bool) {
	if s == nil || seen[s] {
		return
	}
	seen[s] = true
	if v, ok := s.Extensions.GetBool("x-nullable"); ok && v {
		s.Nullable = true
	}
	for k, p := range s.Properties {
		applyNullable(&p, seen)
		s.Properties[k] = p
	}
	if s.Items != nil {
		applyNullable(s.Items.Schema, seen)
		for i := range s.Items.Schemas {
			applyNullable(&s.Items.Schemas[i], seen)
		}
	}
	for _, list := range [][]spec.Schema{s.AllOf, s.AnyOf, s.OneOf} {
		for i := range list {
			applyNullable(&list[i], seen)
		}
	}
	if s.AdditionalProperties != nil {
		applyNullable(s.AdditionalProperties.Schema, seen)
	}
}

// definition returns the named definition; a name the swagger lacks is an
// error of the test's table.
func (d *swaggerDoc) definition(name string) (*spec.Schema, error) {
	s, ok := d.sw.Definitions[name]
	if !ok {
		return nil, fmt.Errorf("the swagger has no definition %q", name)
	}
	return &s, nil
}

// check validates the JSON text doc against the named definition.
func (d *swaggerDoc) check(name string, doc []byte) error {
	s, err := d.definition(name)
	if err != nil {
		return err
	}
	return validateJSON(s, doc)
}

func validateJSON(s *spec.Schema, doc []byte) error {
	var v any
	dec := json.NewDecoder(bytes.NewReader(doc))
	dec.UseNumber()
	if err := dec.Decode(&v); err != nil {
		return fmt.Errorf("not JSON: %v", err)
	}
	v = plainNumbers(v)
	if err := validate.AgainstSchema(s, v, strfmt.Default); err != nil {
		return errors.New(strings.ReplaceAll(err.Error(), "\n", "; "))
	}
	return nil
}

// plainNumbers turns json.Number into int64 where it is one, float64
// otherwise: the validator tells integers from numbers by Go type.
func plainNumbers(v any) any {
	switch x := v.(type) {
	case json.Number:
		if i, err := x.Int64(); err == nil {
			return i
		}
		f, _ := x.Float64()
		return f
	case map[string]any:
		for k, e := range x {
			x[k] = plainNumbers(e)
		}
	case []any:
		for i, e := range x {
			x[i] = plainNumbers(e)
		}
	}
	return v
}

// operation finds the swagger operation serving method and path (the path
// under the API base), with its path template.
func (d *swaggerDoc) operation(method, path string) (*spec.Operation, string) {
	segs := strings.Split(strings.Trim(path, "/"), "/")
	for tmpl, item := range d.sw.Paths.Paths {
		t := strings.Split(strings.Trim(tmpl, "/"), "/")
		if len(t) != len(segs) {
			continue
		}
		match := true
		for i := range t {
			if !strings.HasPrefix(t[i], "{") && t[i] != segs[i] {
				match = false
				break
			}
		}
		if !match {
			continue
		}
		var op *spec.Operation
		switch method {
		case http.MethodGet:
			op = item.Get
		case http.MethodPost:
			op = item.Post
		case http.MethodPut:
			op = item.Put
		case http.MethodPatch:
			op = item.Patch
		case http.MethodDelete:
			op = item.Delete
		}
		if op != nil {
			return op, tmpl
		}
	}
	return nil, ""
}

// exchange is one request the service answered.
type exchange struct {
	method, path, query string
	status              int
	contentType         string
	body                []byte
}

func (e exchange) String() string {
	return fmt.Sprintf("%s %s %d", e.method, e.path, e.status)
}

// recorder keeps every exchange under the API base that the handler it
// wraps answers.
type recorder struct {
	mu        sync.Mutex
	exchanges []exchange
}

func (rec *recorder) wrap(next http.Handler) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		if !strings.HasPrefix(r.URL.Path, api.Base+"/") {
			next.ServeHTTP(w, r)
			return
		}
		cw := &capture{ResponseWriter: w, status: http.StatusOK}
		next.ServeHTTP(cw, r)
		rec.mu.Lock()
		defer rec.mu.Unlock()
		rec.exchanges = append(rec.exchanges, exchange{
			method: r.Method, path: strings.TrimPrefix(r.URL.Path, swaggerBasePath), query: r.URL.RawQuery,
			status: cw.status, contentType: cw.Header().Get("Content-Type"), body: cw.body.Bytes(),
		})
	})
}

func (rec *recorder) all() []exchange {
	rec.mu.Lock()
	defer rec.mu.Unlock()
	return append([]exchange(nil), rec.exchanges...)
}

// capture is a ResponseWriter that keeps the status and a copy of the body.
type capture struct {
	http.ResponseWriter
	status int
	wrote  bool
	body   bytes.Buffer
}

func (c *capture) WriteHeader(code int) {
	if !c.wrote {
		c.status, c.wrote = code, true
	}
	c.ResponseWriter.WriteHeader(code)
}

func (c *capture) Write(b []byte) (int, error) {
	c.wrote = true
	c.body.Write(b)
	return c.ResponseWriter.Write(b)
}

// ReadFrom keeps io.Copy on the captured path.
func (c *capture) ReadFrom(r io.Reader) (int64, error) {
	return io.Copy(struct{ io.Writer }{c}, r)
}

// Flush passes flushes on (downloads stream).
func (c *capture) Flush() {
	if f, ok := c.ResponseWriter.(http.Flusher); ok {
		f.Flush()
	}
}

// checkResponse validates an exchange's body against the swagger's response
// for its operation and status. It returns the operation's id and the
// problems; a response the swagger declares no body for (or a file) has
// only its status checked.
func (d *swaggerDoc) checkResponse(e exchange) (string, []string) {
	op, tmpl := d.operation(e.method, e.path)
	if op == nil {
		return "", []string{fmt.Sprintf("%s: no swagger operation serves it", e)}
	}
	var probs []string
	resp, ok := op.Responses.StatusCodeResponses[e.status]
	if !ok {
		codes := make([]int, 0, len(op.Responses.StatusCodeResponses))
		for c := range op.Responses.StatusCodeResponses {
			codes = append(codes, c)
		}
		sort.Ints(codes)
		return op.ID, []string{fmt.Sprintf("%s (%s %s): status %d is not one the swagger lists (%v)", e, op.ID, tmpl, e.status, codes)}
	}
	s := resp.Schema
	if s == nil {
		if len(bytes.TrimSpace(e.body)) > 0 && e.status == http.StatusNoContent {
			probs = append(probs, fmt.Sprintf("%s (%s): 204 with a body %q", e, op.ID, e.body))
		}
		return op.ID, probs
	}
	if s.Type.Contains("file") {
		return op.ID, nil
	}
	if ct := e.contentType; !strings.HasPrefix(ct, "application/json") {
		probs = append(probs, fmt.Sprintf("%s (%s): Content-Type %q, want application/json", e, op.ID, ct))
	}
	if err := validateJSON(s, e.body); err != nil {
		probs = append(probs, fmt.Sprintf("%s (%s): %v", e, op.ID, err))
	}
	return op.ID, probs
}

// swaggerBasePath is the swagger's basePath: its paths start after it.
const swaggerBasePath = "/api/assisted-install"
