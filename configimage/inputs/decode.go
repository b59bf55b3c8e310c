package inputs

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"reflect"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

const (
	// MaxFileSize bounds an input file; the real ones are a few kilobytes.
	MaxFileSize = 4 << 20
	// maxNodes bounds the nodes visited while decoding, aliases expanded, so
	// an alias bomb ends with an error instead of eating memory and time.
	maxNodes = 200_000
	// maxDepth bounds nesting (a recursive alias is infinitely deep); real
	// nmstate configs nest fewer than ten levels.
	maxDepth = 64
)

// pos is a 1-based line and column.
type pos struct{ line, col int }

// source remembers, for one loaded file, where each field path came from, so
// that rules run after loading can point at the offending node.
type source struct {
	file string
	pos  map[string]pos
}

func newSource(file string) *source { return &source{file: file, pos: map[string]pos{}} }

// at returns the position of path, or of its nearest ancestor that was in
// the file (a missing field is reported where its parent is).
func (s *source) at(path string) pos {
	if s == nil {
		return pos{}
	}
	for {
		if p, ok := s.pos[path]; ok {
			return p
		}
		if path == "" {
			return pos{}
		}
		path = parentPath(path)
	}
}

func parentPath(p string) string {
	if strings.HasSuffix(p, "]") {
		return p[:strings.LastIndex(p, "[")]
	}
	if i := strings.LastIndex(p, "."); i >= 0 {
		return p[:i]
	}
	return ""
}

func child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

func index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

var yamlLineErr = regexp.MustCompile(`^yaml: line (\d+): (.*)$`)

// parseDocument parses data as exactly one YAML document whose root is a
// mapping, and returns that mapping; problems go to rep and yield nil.
func parseDocument(src *source, data []byte, rep *Report) (root *yaml.Node) {
	fail := func(line int, msg string) {
		rep.Entries = append(rep.Entries, Entry{File: src.file, Line: line, Severity: SeverityError, Message: msg})
		root = nil
	}
	if len(data) > MaxFileSize {
		fail(0, fmt.Sprintf("file is %d bytes; at most %d are accepted", len(data), MaxFileSize))
		return nil
	}
	defer func() {
		// yaml.v3 has panicked on hostile input before; a config file must
		// never take the process down.
		if r := recover(); r != nil {
			fail(0, fmt.Sprintf("cannot parse YAML: %v", r))
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	var doc yaml.Node
	if err := dec.Decode(&doc); err != nil {
		if errors.Is(err, io.EOF) {
			fail(0, msgRequired("the file is empty; expected a YAML mapping"))
			return nil
		}
		line, msg := splitYAMLError(err)
		fail(line, "cannot parse YAML: "+msg)
		return nil
	}
	var extra yaml.Node
	switch err := dec.Decode(&extra); {
	case errors.Is(err, io.EOF):
	case err != nil:
		line, msg := splitYAMLError(err)
		fail(line, "cannot parse YAML: "+msg)
		return nil
	case !isEmptyDocument(&extra):
		rep.Entries = append(rep.Entries, Entry{File: src.file, Line: extra.Line, Column: extra.Column,
			Severity: SeverityError, Message: "multiple YAML documents in one file; expected exactly one"})
		return nil
	}
	if len(doc.Content) == 0 || isNull(doc.Content[0]) {
		fail(0, msgRequired("the file is empty; expected a YAML mapping"))
		return nil
	}
	top := doc.Content[0]
	if top.Kind != yaml.MappingNode {
		rep.Entries = append(rep.Entries, Entry{File: src.file, Line: top.Line, Column: top.Column,
			Severity: SeverityError, Message: "the document must be a YAML mapping of field: value pairs, found " + kindName(top)})
		return nil
	}
	src.pos[""] = pos{top.Line, top.Column}
	return top
}

func splitYAMLError(err error) (int, string) {
	if m := yamlLineErr.FindStringSubmatch(err.Error()); m != nil {
		n, _ := strconv.Atoi(m[1])
		return n, m[2]
	}
	return 0, strings.TrimPrefix(err.Error(), "yaml: ")
}

func isEmptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.DocumentNode && (len(n.Content) == 0 || isNull(n.Content[0]))
}

func isNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

func kindName(n *yaml.Node) string {
	switch n.Kind {
	case yaml.MappingNode:
		return "a mapping"
	case yaml.SequenceNode:
		return "a list"
	case yaml.ScalarNode:
		return "a scalar"
	case yaml.AliasNode:
		return "an alias"
	}
	return "a document"
}

// decoder fills Go values from a yaml.Node tree, recording positions and
// reporting type errors, unknown keys and duplicate keys.
type decoder struct {
	src     *source
	rep     *Report
	strict  bool // unknown keys are errors, not warnings
	visits  int
	depth   int
	aborted bool
}

// enter counts one level of nesting; false means stop (leave is still due).
func (d *decoder) enter(n *yaml.Node) bool {
	d.depth++
	if d.depth > maxDepth && !d.aborted {
		d.aborted = true
		d.add(n, "", SeverityError, fmt.Sprintf("document nested more than %d levels deep (a recursive alias?)", maxDepth))
	}
	return !d.aborted
}

func (d *decoder) leave() { d.depth-- }

func (d *decoder) add(n *yaml.Node, path string, sev Severity, msg string) {
	e := Entry{File: d.src.file, Path: path, Severity: sev, Message: msg}
	if n != nil {
		e.Line, e.Column = n.Line, n.Column
	}
	d.rep.Entries = append(d.rep.Entries, e)
}

// visit counts a node against the budget; false means stop.
func (d *decoder) visit(n *yaml.Node) bool {
	if d.aborted {
		return false
	}
	d.visits++
	if d.visits > maxNodes {
		d.aborted = true
		d.add(n, "", SeverityError, fmt.Sprintf("document too large: more than %d nodes (aliases expanded)", maxNodes))
		return false
	}
	return true
}

// resolve follows aliases to the node they name.
func (d *decoder) resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > 64 || !d.visit(n) {
			if !d.aborted {
				d.aborted = true
				d.add(n, "", SeverityError, "alias chain too long")
			}
			return nil
		}
		n = n.Alias
	}
	return n
}

var (
	nodeType    = reflect.TypeOf(yaml.Node{})
	nodePtrType = reflect.TypeOf(&yaml.Node{})
)

// value decodes n into v; path is the field path of v.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	defer d.leave()
	if !d.enter(n) || !d.visit(n) {
		return
	}
	d.src.pos[path] = pos{n.Line, n.Column}
	if n = d.resolve(n); n == nil {
		return
	}
	switch v.Type() {
	case nodeType, nodePtrType:
		if isNull(n) {
			return
		}
		d.raw(n, path)
		c := *n
		if v.Type() == nodeType {
			v.Set(reflect.ValueOf(c))
		} else {
			v.Set(reflect.ValueOf(&c))
		}
		return
	}
	if isNull(n) {
		v.Set(reflect.Zero(v.Type()))
		return
	}
	switch v.Kind() {
	case reflect.Ptr:
		// A value that failed to decode stays nil, so defaults apply and
		// later rules do not pile up on a zero the user never wrote.
		before := len(d.rep.Entries)
		e := reflect.New(v.Type().Elem())
		d.value(n, e.Elem(), path)
		if !hasError(d.rep.Entries[before:]) {
			v.Set(e)
		}
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	case reflect.Map:
		d.dict(n, v, path)
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, SeverityError, fmt.Sprintf("must be a string, found %s", kindName(n)))
			return
		}
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool":
			d.add(n, path, SeverityError, msgInvalid(bare(n.Value), "must be a string; put the value in quotes"))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.add(n, path, SeverityError, msgInvalid(scalarOrKind(n), "must be a boolean (true or false)"))
			return
		}
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			d.add(n, path, SeverityError, msgInvalid(scalarOrKind(n), "must be a boolean (true or false)"))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.add(n, path, SeverityError, msgInvalid(scalarOrKind(n), "must be an integer"))
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
		if err != nil {
			d.add(n, path, SeverityError, msgInvalid(bare(n.Value), fmt.Sprintf("must be an integer that fits in %d bits", bits)))
			return
		}
		v.SetInt(i)
	default:
		panic("inputs: unsupported field type " + v.Type().String())
	}
}

// bare is a value printed without quotes in a message (a number as written).
type bare string

func (b bare) String() string { return string(b) }

func scalarOrKind(n *yaml.Node) any {
	if n.Kind != yaml.ScalarNode {
		return bare(strings.TrimPrefix(kindName(n), "a "))
	}
	if n.ShortTag() == "!!str" {
		return n.Value
	}
	return bare(n.Value)
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(n, path, SeverityError, kindMismatch(n, "a list"))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), index(path, i))
	}
	v.Set(s)
}

func hasError(entries []Entry) bool {
	for _, e := range entries {
		if e.Severity == SeverityError {
			return true
		}
	}
	return false
}

func kindMismatch(n *yaml.Node, want string) string {
	if n.Kind == yaml.ScalarNode {
		return msgInvalid(scalarOrKind(n), "must be "+want)
	}
	return fmt.Sprintf("must be %s, found %s", want, kindName(n))
}

// dict decodes map[string]string and map[string]*yaml.Node.
func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, SeverityError, kindMismatch(n, "a mapping"))
		return
	}
	m := reflect.MakeMap(v.Type())
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, path+"["+key+"]")
		m.SetMapIndex(reflect.ValueOf(key), e)
	})
	v.Set(m)
}

// pairs walks a mapping's key/value pairs, reporting non-string and
// duplicate keys, and calls fn for the others.
func (d *decoder) pairs(n *yaml.Node, path string, fn func(key string, k, v *yaml.Node)) {
	seen := map[string]*yaml.Node{}
	for i := 0; i+1 < len(n.Content) && !d.aborted; i += 2 {
		k := d.resolve(n.Content[i])
		if k == nil {
			return
		}
		if k.Kind != yaml.ScalarNode {
			d.add(k, path, SeverityError, "mapping keys must be strings, found "+kindName(k))
			continue
		}
		if k.ShortTag() == "!!merge" {
			d.add(k, path, SeverityError, "YAML merge keys (<<) are not supported; write the fields out")
			continue
		}
		if first, dup := seen[k.Value]; dup {
			d.add(k, child(path, k.Value), SeverityError,
				fmt.Sprintf("duplicate key %q; it is already defined at line %d", k.Value, first.Line))
			continue
		}
		seen[k.Value] = k
		fn(k.Value, k, n.Content[i+1])
	}
}

// raw checks a node kept verbatim (networkConfig, ignored fields) for
// duplicate keys and records the positions inside it.
func (d *decoder) raw(n *yaml.Node, path string) {
	defer d.leave()
	if !d.enter(n) {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		d.pairs(n, path, func(key string, _, v *yaml.Node) {
			p := child(path, key)
			if d.visit(v) {
				d.src.pos[p] = pos{v.Line, v.Column}
				if v = d.resolve(v); v != nil {
					d.raw(v, p)
				}
			}
		})
	case yaml.SequenceNode:
		for i, item := range n.Content {
			p := index(path, i)
			if !d.visit(item) {
				return
			}
			d.src.pos[p] = pos{item.Line, item.Column}
			if item = d.resolve(item); item != nil {
				d.raw(item, p)
			}
		}
	}
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, SeverityError, kindMismatch(n, "a mapping"))
		return
	}
	info := fieldsOf(v.Type())
	d.pairs(n, path, func(key string, k, val *yaml.Node) {
		fpath := child(path, key)
		f, ok := info.byName[key]
		if !ok {
			f, ok = info.byFold[strings.ToLower(key)] // encoding/json matches case-insensitively; so does the installer
		}
		if !ok {
			if info.remain >= 0 {
				m := v.Field(info.remain)
				if m.IsNil() {
					m.Set(reflect.MakeMap(m.Type()))
				}
				e := reflect.New(m.Type().Elem()).Elem()
				d.value(val, e, fpath)
				m.SetMapIndex(reflect.ValueOf(key), e)
				return
			}
			if d.strict {
				d.add(k, fpath, SeverityError, unknownFieldError(key, info.names))
			} else {
				d.add(k, fpath, SeverityWarning, unknownFieldMessage(key, info.names))
			}
			return
		}
		if f.ignored {
			d.add(k, fpath, SeverityWarning, "is ignored by agent-based installs")
		}
		d.value(val, v.Field(f.index), fpath)
	})
}

// Strictness of the loaders, as openshift-install reads each file.
const (
	lenient = false // unknown keys are warnings and are ignored
	strict  = true  // unknown keys are errors
)

// load parses data and decodes it into out (a pointer to a struct); strict
// makes unknown keys errors.
func load(src *source, data []byte, out any, strict bool) (Report, bool) {
	var rep Report
	root := parseDocument(src, data, &rep)
	if root == nil {
		return rep, false
	}
	d := &decoder{src: src, rep: &rep, strict: strict}
	d.value(root, reflect.ValueOf(out).Elem(), "")
	return rep, !d.aborted
}
