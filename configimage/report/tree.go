package report

import (
	"fmt"

	"gopkg.in/yaml.v3"
)

// Limits bound a walk, so that a hostile document (an alias bomb, a
// recursive alias) ends with an entry instead of eating memory and time.
type Limits struct {
	MaxNodes int // nodes visited, aliases expanded
	MaxDepth int // levels of nesting
	// MergeKeys lets "<<" merge keys through, for documents yaml.v3 then
	// decodes (it merges them); their fields are placed at the mapping.
	// Otherwise each merge key is an error.
	MergeKeys bool
}

// DefaultLimits fit every input nodezero reads: the real files have a few
// hundred nodes and nest fewer than ten levels.
var DefaultLimits = Limits{MaxNodes: 200_000, MaxDepth: 64}

// Pos is a 1-based line and column; the zero Pos is unknown.
type Pos struct{ Line, Column int }

func at(n *yaml.Node) Pos { return Pos{n.Line, n.Column} }

// Key is one key of a mapping: its name as written, its field path and
// its position.
type Key struct {
	Name string
	Path string
	Pos  Pos
}

// place is where one field path sits.
type place struct {
	value      Pos // the value as written (the alias, where one stands)
	key        Pos // its key; unknown for list items and the root
	collection bool
	keys       []Key // a mapping's keys, in order
	items      int   // a list's length
}

// Tree is where every field path of one YAML document sits, as Walk
// found it. A nil *Tree knows no position.
type Tree struct {
	File   string
	index  map[string]int32 // path → places[i]
	places []place
	lines  map[int]string
}

func (t *Tree) place(path string) (place, bool) {
	if t == nil {
		return place{}, false
	}
	i, ok := t.index[path]
	if !ok {
		return place{}, false
	}
	return t.places[i], true
}

// Walk visits every node of the document rooted at root (a document node
// or its content) in order, following aliases, and records each field
// path's place. It reports, as errors at the node in file: mapping keys
// that are not strings, duplicate keys (the first stands), merge keys
// (unless lim.MergeKeys), and a walk stopped by lim. ok is false when it
// was stopped: the tree is then incomplete and the document should not be
// decoded.
func Walk(file string, root *yaml.Node, lim Limits) (t *Tree, rep Report, ok bool) {
	t = &Tree{File: file, index: map[string]int32{}, lines: map[int]string{}}
	w := &walker{t: t, file: file, rep: &rep, lim: lim}
	w.walk(root)
	return t, rep, !w.stopped
}

// Check reports what Walk reports, without recording where each field
// sits: for a decoder that reads positions from the nodes themselves.
func Check(root *yaml.Node, lim Limits) (rep Report, ok bool) {
	w := &walker{rep: &rep, lim: lim}
	w.walk(root)
	return rep, !w.stopped
}

type walker struct {
	t       *Tree // nil: nothing recorded
	file    string
	rep     *Report
	lim     Limits
	visits  int
	depth   int
	stopped bool
}

func (w *walker) walk(root *yaml.Node) {
	if root != nil && root.Kind == yaml.DocumentNode {
		if len(root.Content) == 0 {
			return
		}
		root = root.Content[0]
	}
	if root != nil {
		w.value(root, "", nil)
	}
}

func (w *walker) errorAt(n *yaml.Node, path, msg string) {
	w.rep.Add(Entry{File: w.file, Line: n.Line, Column: n.Column, Path: path, Message: msg})
}

func (w *walker) stop(n *yaml.Node, msg string) {
	if !w.stopped {
		w.stopped = true
		w.errorAt(n, "", msg)
	}
}

// visit counts a node against the budget; false means stop.
func (w *walker) visit(n *yaml.Node) bool {
	if w.stopped {
		return false
	}
	if w.visits++; w.visits > w.lim.MaxNodes {
		w.stop(n, fmt.Sprintf("document too large: more than %d nodes (aliases expanded)", w.lim.MaxNodes))
		return false
	}
	return true
}

// resolve follows aliases, each hop a visit.
func (w *walker) resolve(n *yaml.Node) *yaml.Node {
	for hops := 0; n != nil && n.Kind == yaml.AliasNode; hops++ {
		if hops > maxAliasHops || !w.visit(n) {
			w.stop(n, "alias chain too long")
			return nil
		}
		n = n.Alias
	}
	return n
}

func (w *walker) value(n *yaml.Node, path string, key *yaml.Node) {
	w.depth++
	defer func() { w.depth-- }()
	if w.depth > w.lim.MaxDepth {
		w.stop(n, fmt.Sprintf("document nested more than %d levels deep (a recursive alias?)", w.lim.MaxDepth))
		return
	}
	if !w.visit(n) {
		return
	}
	i := -1
	if w.t != nil {
		i = len(w.t.places)
		p := place{value: at(n)}
		if key != nil {
			p.key = at(key)
			if n.Kind == yaml.ScalarNode && n.Tag == "!!null" && n.Value == "" && n.Line > key.Line {
				// An empty value is written nowhere: yaml.v3 places it
				// at the next token, past the file's end after a last
				// key. It stands where its key does.
				p.value = p.key
			}
		}
		w.t.places = append(w.t.places, p)
		w.t.index[path] = int32(i)
	}
	if n = w.resolve(n); n == nil {
		return
	}
	switch n.Kind {
	case yaml.MappingNode:
		keys := w.mapping(n, path)
		if i >= 0 {
			w.t.places[i].collection, w.t.places[i].keys = true, keys
		}
	case yaml.SequenceNode:
		if i >= 0 {
			w.t.places[i].collection, w.t.places[i].items = true, len(n.Content)
		}
		for j, item := range n.Content {
			if w.stopped {
				return
			}
			w.value(item, Index(path, j), nil)
		}
	case yaml.ScalarNode:
		if w.t == nil {
			return
		}
		if _, ok := w.t.lines[n.Line]; !ok {
			w.t.lines[n.Line] = path
		}
	}
}

// mapping walks a mapping's values and returns its keys.
func (w *walker) mapping(n *yaml.Node, path string) (keys []Key) {
	var first seen
	for i := 0; i+1 < len(n.Content) && !w.stopped; i += 2 {
		k := w.resolve(n.Content[i])
		if k == nil {
			return keys
		}
		switch {
		case k.Kind != yaml.ScalarNode:
			w.errorAt(k, path, "mapping keys must be strings, found "+KindName(k))
			continue
		case k.ShortTag() == "!!merge":
			if !w.lim.MergeKeys {
				w.errorAt(k, path, "YAML merge keys (<<) are not supported; write the fields out")
			}
			continue
		}
		kp := Child(path, k.Value)
		if f := first.add(k); f != nil {
			w.errorAt(k, kp, fmt.Sprintf("duplicate key %q; it is already defined at line %d", k.Value, f.Line))
			continue
		}
		keys = append(keys, Key{Name: k.Value, Path: kp, Pos: at(k)})
		w.value(n.Content[i+1], kp, k)
	}
	return keys
}

// Value is where path's value is written; for a path not in the document
// (a missing or defaulted field), where its nearest parent's value is.
func (t *Tree) Value(path string) Pos {
	for {
		if p, ok := t.place(path); ok {
			return p.value
		}
		if path == "" {
			return Pos{}
		}
		path = Parent(path)
	}
}

// Field is where path is written as a field: a scalar's value, a mapping's
// or list's key (it reads better than its first entry); for a path not in
// the document, its nearest parent's key, or value where it has none.
func (t *Tree) Field(path string) Pos {
	if p, ok := t.place(path); ok {
		if p.collection && p.key.Line > 0 {
			return p.key
		}
		return p.value
	}
	for path != "" {
		path = Parent(path)
		if p, ok := t.place(path); ok {
			if p.key.Line > 0 {
				return p.key
			}
			return p.value
		}
	}
	return Pos{}
}

// Keys returns the keys of the mapping at path, in document order (nil
// when path is not a mapping).
func (t *Tree) Keys(path string) []Key {
	p, _ := t.place(path)
	return p.keys
}

// Len returns the length of the list at path (0 when path is not a list).
func (t *Tree) Len(path string) int {
	p, _ := t.place(path)
	return p.items
}

// PathOn returns the path of the first scalar on line, "" when none; for
// messages that name only a line (yaml.v3's decoding errors).
func (t *Tree) PathOn(line int) string {
	if t == nil {
		return ""
	}
	return t.lines[line]
}

// Set places path at p, for a value a loader moved (a deprecated field
// folded into its successor): rules about the new path point at the old.
func (t *Tree) Set(path string, p Pos) {
	if t != nil {
		t.index[path] = int32(len(t.places))
		t.places = append(t.places, place{value: p})
	}
}
