package nmstate

import (
	"fmt"
	"math"
	"strconv"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// pos is where a value sits: its line and column in the document and its
// path from the document root.
type pos struct {
	line, col int
	path      string
}

func at(n *yaml.Node, path string) pos {
	if n == nil {
		return pos{path: path}
	}
	return pos{line: n.Line, col: n.Column, path: path}
}

func (p pos) String() string { return fmt.Sprintf("line %d column %d", p.line, p.col) }

// decoder reads yaml.v3 nodes report.Walk has checked and collects every
// problem it meets.
type decoder struct{ rep report.Report }

func (d *decoder) add(p pos, sev report.Severity, msg string) {
	d.rep.Add(report.Entry{Line: p.line, Column: p.col, Path: p.path, Severity: sev, Message: msg})
}

func (d *decoder) errorf(p pos, format string, args ...any) {
	d.add(p, report.Error, fmt.Sprintf(format, args...))
}

func (d *decoder) warnf(p pos, format string, args ...any) {
	d.add(p, report.Warning, fmt.Sprintf(format, args...))
}

func (d *decoder) hasErrors() bool { return d.rep.HasErrors() }

// kind is the type a scalar has once the installer has turned the YAML into
// JSON with sigs.k8s.io/yaml (yaml.v2 resolution), which is what nmstate sees.
type kind int

const (
	kNull kind = iota
	kBool
	kInt
	kFloat
	kString
	kMap
	kSeq
)

// yaml11Bools are the plain scalars yaml.v2 (YAML 1.1) reads as booleans on
// top of YAML 1.2's true/false.
var yaml11Bools = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true, "on": true, "On": true, "ON": true,
	"n": false, "N": false, "no": false, "No": false, "NO": false, "off": false, "Off": false, "OFF": false,
}

// resolve unwraps a document node and follows aliases.
func resolve(n *yaml.Node) *yaml.Node {
	if n != nil && n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = n.Content[0]
	}
	return report.Resolve(n)
}

func kindOf(n *yaml.Node) kind {
	n = resolve(n)
	if n == nil {
		return kNull
	}
	switch n.Kind {
	case yaml.MappingNode:
		return kMap
	case yaml.SequenceNode:
		return kSeq
	}
	switch n.ShortTag() {
	case "!!null":
		return kNull
	case "!!bool":
		return kBool
	case "!!int":
		return kInt
	case "!!float":
		return kFloat
	case "!!str":
		if n.Style == 0 {
			if _, ok := yaml11Bools[n.Value]; ok {
				return kBool
			}
		}
	}
	return kString
}

// describe names a value the way serde does in "invalid type" messages.
func describe(n *yaml.Node) string {
	n = resolve(n)
	switch kindOf(n) {
	case kNull:
		return "null"
	case kBool:
		b, _ := boolOf(n)
		return fmt.Sprintf("boolean `%t`", b)
	case kInt:
		return fmt.Sprintf("integer `%s`", n.Value)
	case kFloat:
		return fmt.Sprintf("floating point `%s`", n.Value)
	case kMap:
		return "map"
	case kSeq:
		return "sequence"
	}
	return fmt.Sprintf("string %q", n.Value)
}

func boolOf(n *yaml.Node) (bool, bool) {
	if v, ok := yaml11Bools[n.Value]; ok && n.Style == 0 {
		return v, true
	}
	var b bool
	if err := n.Decode(&b); err != nil {
		return false, false
	}
	return b, true
}

// field is one key of a mapping.
type field struct {
	key  string
	k, v *yaml.Node
	path string
}

func (f *field) pos() pos    { return at(f.v, f.path) }
func (f *field) keyPos() pos { return at(f.k, f.path) }

// object is a decoded mapping: its known fields by name.
type object struct {
	n      *yaml.Node
	path   string
	fields map[string]*field
	order  []*field
}

// get returns the named field, or nil when it is missing or null (serde
// reads a null Option as None).
func (o *object) get(name string) *field {
	if o == nil {
		return nil
	}
	f := o.fields[name]
	if f == nil || kindOf(f.v) == kNull {
		return nil
	}
	return f
}

func (o *object) pos() pos { return at(o.n, o.path) }

// spec says which keys a mapping may hold, in serde declaration order (the
// order nmstate lists them in "expected one of").
type spec struct {
	known   []string
	aliases map[string]string
	// lenient: unknown keys are ignored by nmstate, so only warned about.
	lenient bool
}

// expected renders serde's list of field names.
func expected(names []string) string {
	q := make([]string, len(names))
	for i, n := range names {
		q[i] = "`" + n + "`"
	}
	switch len(q) {
	case 0:
		return "there are no fields"
	case 1:
		return "expected " + q[0]
	case 2:
		return "expected " + q[0] + " or " + q[1]
	}
	return "expected one of " + strings.Join(q, ", ")
}

// object decodes a mapping node. It reports a non-mapping, unknown keys (an
// error, or a warning when the spec is lenient) and two spellings of one
// field (report.Walk has reported keys written twice; report.Pairs leaves
// them out).
func (d *decoder) object(n *yaml.Node, path string, s spec) (*object, bool) {
	n = resolve(n)
	if kindOf(n) != kMap {
		d.errorf(at(n, path), "invalid type: %s, expected a map", describe(n))
		return nil, false
	}
	o := &object{n: n, path: path, fields: map[string]*field{}}
	known := map[string]bool{}
	for _, k := range s.known {
		known[k] = true
	}
	report.Pairs(n, func(key string, k, v *yaml.Node) {
		name := key
		if a, ok := s.aliases[key]; ok {
			name = a
		}
		f := &field{key: key, k: k, v: v, path: report.Child(path, key)}
		if !known[name] {
			if s.lenient {
				d.warnf(f.keyPos(), "unknown field `%s` is ignored by nmstate", key)
			} else {
				d.errorf(f.keyPos(), "unknown field `%s`, %s", key, expected(s.known))
			}
			return
		}
		if prev, dup := o.fields[name]; dup {
			d.errorf(f.keyPos(), "duplicate field `%s` (first at %s)", name, at(prev.k, "").String())
			return
		}
		o.fields[name] = f
		o.order = append(o.order, f)
	})
	return o, true
}

// str reads a string value.
func (d *decoder) str(f *field) (string, bool) {
	if kindOf(f.v) != kString {
		d.errorf(f.pos(), "invalid type: %s, expected a string", describe(f.v))
		return "", false
	}
	return resolve(f.v).Value, true
}

// flexBool reads nmstate's bool_or_string: a boolean, 0/1, or one of
// 1|0|true|false|yes|no|on|off|y|n in any case.
func (d *decoder) flexBool(f *field) (bool, bool) {
	n := resolve(f.v)
	const msg = "Need to be boolean: 1|0|true|false|yes|no|on|off|y|n"
	switch kindOf(n) {
	case kBool:
		return boolOf(n)
	case kInt:
		switch n.Value {
		case "0":
			return false, true
		case "1":
			return true, true
		}
	case kString:
		switch strings.ToLower(n.Value) {
		case "1", "true", "yes", "on", "y":
			return true, true
		case "0", "false", "no", "off", "n":
			return false, true
		}
	}
	d.errorf(f.pos(), "%s, got %s", msg, describe(n))
	return false, false
}

// strictBool reads a plain serde bool.
func (d *decoder) strictBool(f *field) (bool, bool) {
	if kindOf(f.v) != kBool {
		d.errorf(f.pos(), "invalid type: %s, expected a boolean", describe(f.v))
		return false, false
	}
	return boolOf(resolve(f.v))
}

// uint reads an unsigned integer of the given bit size; orString also
// accepts its decimal text in a string (nmstate's *_or_string readers).
func (d *decoder) uint(f *field, bits int, orString bool) (uint64, bool) {
	n := resolve(f.v)
	max := uint64(math.MaxUint64) >> (64 - bits)
	var text string
	switch kindOf(n) {
	case kInt:
		var u uint64
		if err := n.Decode(&u); err != nil {
			d.errorf(f.pos(), "invalid value: %s, expected u%d (0 to %d)", describe(n), bits, max)
			return 0, false
		}
		text = strconv.FormatUint(u, 10)
	case kString:
		if !orString {
			d.errorf(f.pos(), "invalid type: %s, expected u%d", describe(n), bits)
			return 0, false
		}
		text = strings.TrimPrefix(n.Value, "+")
	default:
		d.errorf(f.pos(), "invalid type: %s, expected u%d", describe(n), bits)
		return 0, false
	}
	u, err := strconv.ParseUint(text, 10, 64)
	if err != nil || u > max {
		d.errorf(f.pos(), "invalid value: %s, expected u%d (0 to %d)", describe(n), bits, max)
		return 0, false
	}
	return u, true
}

// sint reads a signed integer of the given bit size, or its text in a string.
func (d *decoder) sint(f *field, bits int) (int64, bool) {
	n := resolve(f.v)
	var text string
	switch kindOf(n) {
	case kInt:
		var v int64
		if err := n.Decode(&v); err != nil {
			d.errorf(f.pos(), "invalid value: %s, expected i%d", describe(n), bits)
			return 0, false
		}
		text = strconv.FormatInt(v, 10)
	case kString:
		text = strings.TrimPrefix(n.Value, "+")
	default:
		d.errorf(f.pos(), "invalid type: %s, expected i%d", describe(n), bits)
		return 0, false
	}
	v, err := strconv.ParseInt(text, 10, bits)
	if err != nil {
		d.errorf(f.pos(), "invalid value: %s, expected i%d", describe(n), bits)
		return 0, false
	}
	return v, true
}

// numberAsString reads an integer or a string as text (nmstate's
// NumberAsString, used by the bond enums that also take 0..6).
func (d *decoder) numberAsString(f *field) (string, bool) {
	n := resolve(f.v)
	switch kindOf(n) {
	case kInt, kString:
		return n.Value, true
	}
	d.errorf(f.pos(), "Invalid data type: %s, should be integer or string", describe(n))
	return "", false
}

// item is one element of a sequence.
type item struct {
	n    *yaml.Node
	path string
}

func (it item) pos() pos { return at(it.n, it.path) }

// seq reads a sequence.
func (d *decoder) seq(f *field) ([]item, bool) {
	n := resolve(f.v)
	if kindOf(n) != kSeq {
		d.errorf(f.pos(), "invalid type: %s, expected a sequence", describe(n))
		return nil, false
	}
	out := make([]item, len(n.Content))
	for i, c := range n.Content {
		out[i] = item{n: resolve(c), path: report.Index(f.path, i)}
	}
	return out, true
}

// strItem reads a sequence element that must be a string.
func (d *decoder) strItem(it item) (string, bool) {
	return d.str(&field{v: it.n, path: it.path})
}

// strList reads a sequence of strings; bad elements are reported and skipped.
func (d *decoder) strList(f *field) ([]string, []pos, bool) {
	items, ok := d.seq(f)
	if !ok {
		return nil, nil, false
	}
	var vals []string
	var poss []pos
	good := true
	for _, it := range items {
		s, ok := d.strItem(it)
		if !ok {
			good = false
			continue
		}
		vals = append(vals, s)
		poss = append(poss, it.pos())
	}
	return vals, poss, good
}

// keyfileText reports free text that would not survive a keyfile: control
// characters or backslashes (GKeyFile escapes), blanks at either end (they
// are trimmed) and the quoting the installer's ini pass would strip.
func (d *decoder) keyfileText(p pos, s string) bool {
	var bad string
	switch {
	case strings.IndexFunc(s, func(r rune) bool { return r < 0x20 || r == 0x7f }) >= 0:
		bad = "control characters"
	case strings.Contains(s, `\`):
		bad = "a backslash"
	case strings.TrimSpace(s) != s:
		bad = "blanks at either end"
	case strings.HasPrefix(s, "`") || (len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0]):
		bad = "quotes the installer's ini pass would strip"
	default:
		return true
	}
	d.errorf(p, "%q cannot go into a keyfile: it has %s", s, bad)
	return false
}
