package inputs

import (
	"fmt"
	"reflect"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// MaxFileSize bounds an input file; the real ones are a few kilobytes.
const MaxFileSize = 4 << 20

// Strictness of the loaders, as openshift-install reads each file.
const (
	lenient = false // unknown keys are warnings and are ignored
	strict  = true  // unknown keys are errors
)

// load parses data, walks it (report.Walk: positions, duplicate keys, the
// size and depth bounds) and decodes it into out (a pointer to a struct);
// strict makes unknown keys errors. ok is false when the file cannot be
// decoded at all.
func load(file string, data []byte, out any, strict bool) (tree *report.Tree, rep report.Report, ok bool) {
	root := parseDocument(file, data, &rep)
	if root == nil {
		return nil, rep, false
	}
	tree, walked, ok := report.Walk(file, root, report.DefaultLimits)
	rep.Add(walked.Entries...)
	if !ok {
		return nil, rep, false
	}
	d := &decoder{file: file, rep: &rep, strict: strict}
	d.value(root, reflect.ValueOf(out).Elem(), "")
	return tree, rep, true
}

// parseDocument parses data as exactly one YAML document whose root is a
// mapping, and returns that mapping; problems go to rep and yield nil.
func parseDocument(file string, data []byte, rep *report.Report) *yaml.Node {
	fail := func(line, col int, msg string) *yaml.Node {
		rep.Add(report.Entry{File: file, Line: line, Column: col, Message: msg})
		return nil
	}
	if len(data) > MaxFileSize {
		return fail(0, 0, fmt.Sprintf("file is %d bytes; at most %d are accepted", len(data), MaxFileSize))
	}
	docs, err := report.Documents(data)
	// Only the first two documents count: a second one is an error
	// whatever follows it.
	if err != nil && len(docs) < 2 {
		e := report.SyntaxError(data, err)
		return fail(e.Line, 0, "cannot parse YAML: "+e.Message)
	}
	if len(docs) > 1 && !report.IsEmptyDocument(docs[1]) {
		return fail(docs[1].Line, docs[1].Column, "multiple YAML documents in one file; expected exactly one")
	}
	if len(docs) == 0 || report.IsEmptyDocument(docs[0]) {
		return fail(0, 0, msgRequired("the file is empty; expected a YAML mapping"))
	}
	top := docs[0].Content[0]
	if top.Kind != yaml.MappingNode {
		return fail(top.Line, top.Column, "the document must be a YAML mapping of field: value pairs, found "+report.KindName(top))
	}
	return top
}

// decoder fills Go values from a yaml.Node tree Walk has checked,
// reporting type errors and unknown keys.
type decoder struct {
	file   string
	rep    *report.Report
	strict bool // unknown keys are errors, not warnings
}

func (d *decoder) add(n *yaml.Node, path string, sev report.Severity, msg string) {
	d.rep.Add(report.Entry{File: d.file, Line: n.Line, Column: n.Column, Path: path, Severity: sev, Message: msg})
}

var (
	nodeType    = reflect.TypeOf(yaml.Node{})
	nodePtrType = reflect.TypeOf(&yaml.Node{})
)

// value decodes n into v; path is the field path of v.
func (d *decoder) value(n *yaml.Node, v reflect.Value, path string) {
	if n = report.Resolve(n); n == nil {
		return
	}
	switch v.Type() {
	case nodeType, nodePtrType:
		if report.IsNull(n) {
			return
		}
		c := *n
		if v.Type() == nodeType {
			v.Set(reflect.ValueOf(c))
		} else {
			v.Set(reflect.ValueOf(&c))
		}
		return
	}
	if report.IsNull(n) {
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
		if !(report.Report{Entries: d.rep.Entries[before:]}).HasErrors() {
			v.Set(e)
		}
	case reflect.Struct:
		d.structure(n, v, path)
	case reflect.Slice:
		d.sequence(n, v, path)
	case reflect.Map:
		d.dict(n, v, path)
	default:
		d.scalar(n, v, path)
	}
}

func (d *decoder) scalar(n *yaml.Node, v reflect.Value, path string) {
	switch v.Kind() {
	case reflect.String:
		if n.Kind != yaml.ScalarNode {
			d.add(n, path, report.Error, fmt.Sprintf("must be a string, found %s", report.KindName(n)))
			return
		}
		switch n.ShortTag() {
		case "!!int", "!!float", "!!bool":
			d.add(n, path, report.Error, msgInvalid(bare(n.Value), "must be a string; put the value in quotes"))
			return
		}
		v.SetString(n.Value)
	case reflect.Bool:
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!bool" {
			d.add(n, path, report.Error, msgInvalid(scalarOrKind(n), "must be a boolean (true or false)"))
			return
		}
		b, err := strconv.ParseBool(strings.ToLower(n.Value))
		if err != nil {
			d.add(n, path, report.Error, msgInvalid(scalarOrKind(n), "must be a boolean (true or false)"))
			return
		}
		v.SetBool(b)
	case reflect.Int, reflect.Int32, reflect.Int64:
		bits := v.Type().Bits()
		if n.Kind != yaml.ScalarNode || n.ShortTag() != "!!int" {
			d.add(n, path, report.Error, msgInvalid(scalarOrKind(n), "must be an integer"))
			return
		}
		i, err := strconv.ParseInt(strings.ReplaceAll(n.Value, "_", ""), 0, bits)
		if err != nil {
			d.add(n, path, report.Error, msgInvalid(bare(n.Value), fmt.Sprintf("must be an integer that fits in %d bits", bits)))
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
		return bare(strings.TrimPrefix(report.KindName(n), "a "))
	}
	if n.ShortTag() == "!!str" {
		return n.Value
	}
	return bare(n.Value)
}

func (d *decoder) sequence(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.SequenceNode {
		d.add(n, path, report.Error, kindMismatch(n, "a list"))
		return
	}
	s := reflect.MakeSlice(v.Type(), len(n.Content), len(n.Content))
	for i, item := range n.Content {
		d.value(item, s.Index(i), report.Index(path, i))
	}
	v.Set(s)
}

func kindMismatch(n *yaml.Node, want string) string {
	if n.Kind == yaml.ScalarNode {
		return msgInvalid(scalarOrKind(n), "must be "+want)
	}
	return fmt.Sprintf("must be %s, found %s", want, report.KindName(n))
}

// dict decodes map[string]string and map[string]*yaml.Node.
func (d *decoder) dict(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, report.Error, kindMismatch(n, "a mapping"))
		return
	}
	m := reflect.MakeMap(v.Type())
	report.Pairs(n, func(key string, _, val *yaml.Node) {
		e := reflect.New(v.Type().Elem()).Elem()
		d.value(val, e, path+"["+key+"]")
		m.SetMapIndex(reflect.ValueOf(key), e)
	})
	v.Set(m)
}

func (d *decoder) structure(n *yaml.Node, v reflect.Value, path string) {
	if n.Kind != yaml.MappingNode {
		d.add(n, path, report.Error, kindMismatch(n, "a mapping"))
		return
	}
	info := fieldsOf(v.Type())
	report.Pairs(n, func(key string, k, val *yaml.Node) {
		fpath := report.Child(path, key)
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
				d.add(k, fpath, report.Error, unknownFieldError(key, info.names))
			} else {
				d.add(k, fpath, report.Warning, unknownFieldMessage(key, info.names))
			}
			return
		}
		if f.ignored {
			d.add(k, fpath, report.Warning, "is ignored by agent-based installs")
		}
		d.value(val, v.Field(f.index), fpath)
	})
}
