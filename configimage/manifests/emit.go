package manifests

import (
	"bytes"
	"errors"
	"fmt"
	"sort"
	"strings"
	"unicode"
	"unicode/utf8"

	"gopkg.in/yaml.v3"
)

// The installer writes its manifests with sigs.k8s.io/yaml: Go value → JSON
// → YAML through go-yaml v2. What comes out has every mapping's keys sorted
// byte-wise, two-space indentation, sequences not indented under their key
// ("key:\n- a"), empty maps as {} and multi-line strings as literal blocks
// (see the expected files in openshift/installer
// cmd/openshift-install/testdata/agent/*/manifests/default_manifests.txt).
// yaml.v3 indents sequences under their key and keeps field order, so this
// file renders a yaml.Node tree in that layout itself and asks yaml.v3 only
// how to quote a single-line scalar.

// Aliases are expanded (JSON has none), so a document of nested or
// self-referring aliases could grow without limit; these bound it. Real
// manifests and nmstate documents are far smaller and shallower.
const (
	maxEmitNodes = 20_000
	maxEmitDepth = 64
)

var errTooLarge = errors.New("document expands to too many nodes or levels")

// marshal renders v (a struct with yaml tags, or a *yaml.Node) as one YAML
// document in the installer's layout.
func marshal(v any) ([]byte, error) {
	n, ok := v.(*yaml.Node)
	if !ok {
		n = new(yaml.Node)
		if err := n.Encode(v); err != nil {
			return nil, err
		}
	}
	e := &emitter{}
	if err := e.document(n); err != nil {
		return nil, err
	}
	return e.buf.Bytes(), nil
}

type emitter struct {
	buf   bytes.Buffer
	nodes int
}

// depth is a node's nesting level, from its indentation.
func depth(indent int) int { return indent / 2 }

func (e *emitter) document(n *yaml.Node) error {
	n = resolve(n)
	if n.Kind == yaml.DocumentNode {
		if len(n.Content) == 0 {
			return nil
		}
		n = resolve(n.Content[0])
	}
	switch {
	case n.Kind == yaml.MappingNode && len(n.Content) > 0:
		return e.mapping(n, 0, false)
	case n.Kind == yaml.SequenceNode && len(n.Content) > 0:
		return e.sequence(n, 0, false)
	}
	return e.inline(n, 0, "")
}

// resolve follows aliases to the node they name.
func resolve(n *yaml.Node) *yaml.Node {
	for i := 0; n.Kind == yaml.AliasNode && n.Alias != nil && i < 100; i++ {
		n = n.Alias
	}
	return n
}

func (e *emitter) count() error {
	e.nodes++
	if e.nodes > maxEmitNodes {
		return errTooLarge
	}
	return nil
}

// mapping writes a non-empty mapping whose keys sit at column indent. When
// inline is set the first key continues the current line (after "- ").
func (e *emitter) mapping(n *yaml.Node, indent int, inline bool) error {
	if depth(indent) > maxEmitDepth {
		return errTooLarge
	}
	if len(n.Content)%2 != 0 {
		return errors.New("mapping with an odd number of nodes")
	}
	type pair struct{ k, v *yaml.Node }
	pairs := make([]pair, 0, len(n.Content)/2)
	for i := 0; i < len(n.Content); i += 2 {
		k := resolve(n.Content[i])
		if k.Kind != yaml.ScalarNode {
			return fmt.Errorf("line %d: mapping key is not a scalar", k.Line)
		}
		pairs = append(pairs, pair{k, n.Content[i+1]})
	}
	sort.SliceStable(pairs, func(i, j int) bool { return pairs[i].k.Value < pairs[j].k.Value })
	for i, p := range pairs {
		if err := e.count(); err != nil {
			return err
		}
		if i > 0 || !inline {
			e.pad(indent)
		}
		key, err := scalarText(p.k)
		if err != nil {
			return err
		}
		e.buf.WriteString(key)
		e.buf.WriteByte(':')
		v := resolve(p.v)
		switch {
		case v.Kind == yaml.MappingNode && len(v.Content) > 0:
			e.buf.WriteByte('\n')
			err = e.mapping(v, indent+2, false)
		case v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			e.buf.WriteByte('\n')
			err = e.sequence(v, indent, false)
		default:
			err = e.inline(v, indent+2, " ")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// sequence writes a non-empty sequence whose dashes sit at column indent.
func (e *emitter) sequence(n *yaml.Node, indent int, inline bool) error {
	if depth(indent) > maxEmitDepth {
		return errTooLarge
	}
	for i, item := range n.Content {
		if err := e.count(); err != nil {
			return err
		}
		if i > 0 || !inline {
			e.pad(indent)
		}
		e.buf.WriteByte('-')
		v := resolve(item)
		var err error
		switch {
		case v.Kind == yaml.MappingNode && len(v.Content) > 0:
			e.buf.WriteByte(' ')
			err = e.mapping(v, indent+2, true)
		case v.Kind == yaml.SequenceNode && len(v.Content) > 0:
			e.buf.WriteByte(' ')
			err = e.sequence(v, indent+2, true)
		default:
			err = e.inline(v, indent+2, " ")
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// inline writes an empty collection or a scalar after sep and ends the
// line; a literal block's lines sit at column indent.
func (e *emitter) inline(n *yaml.Node, indent int, sep string) error {
	e.buf.WriteString(sep)
	switch n.Kind {
	case yaml.MappingNode:
		e.buf.WriteString("{}\n")
		return nil
	case yaml.SequenceNode:
		e.buf.WriteString("[]\n")
		return nil
	case yaml.ScalarNode:
	default:
		e.buf.WriteString("null\n")
		return nil
	}
	if n.ShortTag() == "!!str" && literalOK(n.Value) {
		e.literal(n.Value, indent)
		return nil
	}
	s, err := scalarText(n)
	if err != nil {
		return err
	}
	e.buf.WriteString(s)
	e.buf.WriteByte('\n')
	return nil
}

func (e *emitter) pad(n int) {
	for range n {
		e.buf.WriteByte(' ')
	}
}

// literal writes s as a literal block: "|-" when it has no final newline,
// "|" when it has one.
func (e *emitter) literal(s string, indent int) {
	header, body := "|-", s
	if strings.HasSuffix(s, "\n") {
		header, body = "|", s[:len(s)-1]
	}
	e.buf.WriteString(header)
	e.buf.WriteByte('\n')
	for line := range strings.SplitSeq(body, "\n") {
		if line != "" {
			e.pad(indent)
			e.buf.WriteString(line)
		}
		e.buf.WriteByte('\n')
	}
}

// literalOK reports whether s, a multi-line string, reads back unchanged
// from a literal block with clip or strip chomping and no indentation
// indicator. Anything else is written double-quoted.
func literalOK(s string) bool {
	if !strings.Contains(s, "\n") || strings.HasSuffix(s, "\n\n") || !utf8.ValidString(s) {
		return false
	}
	first, _, _ := strings.Cut(s, "\n")
	if first == "" || first[0] == ' ' {
		return false
	}
	for line := range strings.SplitSeq(strings.TrimSuffix(s, "\n"), "\n") {
		if strings.HasSuffix(line, " ") || strings.HasSuffix(line, "\t") {
			return false
		}
		for _, r := range line {
			if r == '\t' {
				continue
			}
			if !unicode.IsPrint(r) || r == '\ufeff' {
				return false
			}
		}
	}
	return true
}

// yaml11Words are plain words go-yaml v2 (what the installer and
// assisted-service read manifests with) takes for booleans; yaml.v3 leaves
// them unquoted.
var yaml11Words = map[string]bool{
	"y": true, "Y": true, "yes": true, "Yes": true, "YES": true,
	"n": true, "N": true, "no": true, "No": true, "NO": true,
	"on": true, "On": true, "ON": true, "off": true, "Off": true, "OFF": true,
}

// scalarText renders a scalar on one line, quoted as yaml.v3 would quote
// it, double-quoted where a YAML 1.1 reader would see another type or
// where yaml.v3's choice spans lines.
func scalarText(n *yaml.Node) (string, error) {
	tag := n.ShortTag()
	if tag == "!!null" && n.Value == "" {
		return "null", nil
	}
	out := &yaml.Node{Kind: yaml.ScalarNode, Tag: tag, Value: n.Value}
	if tag == "!!str" && (yaml11Words[n.Value] || n.Value == "<<") {
		out.Style = yaml.DoubleQuotedStyle
	}
	b, err := yaml.Marshal(out)
	if err != nil {
		return "", err
	}
	s := strings.TrimSuffix(string(b), "\n")
	if strings.Contains(s, "\n") {
		out.Style = yaml.DoubleQuotedStyle
		if b, err = yaml.Marshal(out); err != nil {
			return "", err
		}
		s = strings.TrimSuffix(string(b), "\n")
		if strings.Contains(s, "\n") {
			return "", fmt.Errorf("scalar %.40q does not fit on one line", n.Value)
		}
	}
	return s, nil
}
