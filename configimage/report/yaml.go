package report

import (
	"bytes"
	"errors"
	"fmt"
	"io"
	"regexp"
	"strconv"
	"strings"

	"gopkg.in/yaml.v3"
)

// Documents parses data as a stream of YAML documents and returns each
// document node, empty ones included (a lone "---"; IsEmptyDocument).
// A syntax error stops it: the documents before the one that failed are
// returned with the error. yaml.v3 has panicked on hostile input before; a
// panic is returned as an error, never let through.
func Documents(data []byte) (docs []*yaml.Node, err error) {
	defer func() {
		if r := recover(); r != nil {
			err = fmt.Errorf("yaml: %v", r)
		}
	}()
	dec := yaml.NewDecoder(bytes.NewReader(data))
	for {
		var n yaml.Node
		switch err := dec.Decode(&n); {
		case errors.Is(err, io.EOF):
			return docs, nil
		case err != nil:
			return docs, err
		}
		docs = append(docs, &n)
	}
}

// IsEmptyDocument reports whether a document node holds nothing or null.
func IsEmptyDocument(n *yaml.Node) bool {
	return n.Kind == yaml.DocumentNode && (len(n.Content) == 0 || IsNull(n.Content[0]))
}

// IsNull reports whether n is a null scalar (null, ~ or nothing).
func IsNull(n *yaml.Node) bool { return n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" }

// YAMLError is one message of a yaml.v3 error, apart from the line it
// names.
type YAMLError struct {
	Line    int // 0 when yaml.v3 names none
	Message string
}

var yamlLineRE = regexp.MustCompile(`^(?:yaml: )?line (\d+): (.*)$`)

// YAMLErrors splits a yaml.v3 error: a syntax error ("yaml: line 3: did not
// find expected key") is one message, a *yaml.TypeError one per value that
// did not decode.
func YAMLErrors(err error) []YAMLError {
	var msgs []string
	var te *yaml.TypeError
	if errors.As(err, &te) {
		msgs = te.Errors
	} else {
		msgs = []string{err.Error()}
	}
	out := make([]YAMLError, len(msgs))
	for i, m := range msgs {
		out[i] = YAMLError{Message: strings.TrimPrefix(m, "yaml: ")}
		if sm := yamlLineRE.FindStringSubmatch(m); sm != nil {
			out[i].Line, _ = strconv.Atoi(sm[1])
			out[i].Message = sm[2]
		}
	}
	return out
}

// maxAliasHops bounds a chain of aliases Resolve follows.
const maxAliasHops = 64

// Resolve follows aliases to the node they name; nil for a chain longer
// than any document needs.
func Resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops == maxAliasHops {
			return nil
		}
		n = n.Alias
	}
	return n
}

// KindName names a node's kind in a message: "a mapping", "a list".
func KindName(n *yaml.Node) string {
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

// Pairs calls fn for the key/value pairs of a mapping that Walk records:
// string keys, the first of duplicates, merge keys left out (Walk reports
// the others). Keys are resolved; values are as written.
func Pairs(n *yaml.Node, fn func(key string, k, v *yaml.Node)) {
	var first seen
	for i := 0; i+1 < len(n.Content); i += 2 {
		k := Resolve(n.Content[i])
		if k == nil || k.Kind != yaml.ScalarNode || k.ShortTag() == "!!merge" || first.add(k) != nil {
			continue
		}
		fn(k.Value, k, n.Content[i+1])
	}
}

// seen is the keys of one mapping met so far: a list while short (most
// mappings have a handful of keys), a map once long.
type seen struct {
	buf  [8]*yaml.Node
	list []*yaml.Node
	m    map[string]*yaml.Node
}

// add records k and returns nil, or returns the key of that name met
// before.
func (s *seen) add(k *yaml.Node) *yaml.Node {
	if s.m != nil {
		if f, ok := s.m[k.Value]; ok {
			return f
		}
		s.m[k.Value] = k
		return nil
	}
	for _, f := range s.list {
		if f.Value == k.Value {
			return f
		}
	}
	if len(s.list) < len(s.buf) {
		s.buf[len(s.list)] = k
		s.list = s.buf[:len(s.list)+1]
		return nil
	}
	if s.list = append(s.list, k); len(s.list) > len(s.buf) {
		s.m = make(map[string]*yaml.Node, 2*len(s.list))
		for _, f := range s.list {
			s.m[f.Value] = f
		}
	}
	return nil
}

// maxSyntaxScan bounds how many lines past the one yaml.v3 names
// SyntaxError looks at.
const maxSyntaxScan = 5000

// SyntaxError is the syntax error err of data with the line a person
// must fix. yaml.v3 names the line where the enclosing block starts
// ("line 46: did not find expected key") when the bad line is further
// down; the bad line is the first at which the document cut after it no
// longer parses. The message then names the block's line too.
func SyntaxError(data []byte, err error) YAMLError {
	e := YAMLErrors(err)[0]
	if e.Line <= 0 {
		return e
	}
	lines := bytes.SplitAfter(data, []byte("\n"))
	var prefix []byte
	for k := 1; k <= len(lines) && k < e.Line+maxSyntaxScan; k++ {
		prefix = append(prefix, lines[k-1]...)
		if k < e.Line {
			continue
		}
		if _, perr := Documents(prefix); perr != nil {
			if k != e.Line {
				e.Message = fmt.Sprintf("%s (in the block that starts at line %d)", e.Message, e.Line)
				e.Line = k
			}
			break
		}
	}
	return e
}
