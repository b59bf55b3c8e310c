package report

import (
	"errors"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"gopkg.in/yaml.v3"
)

func parse(t *testing.T, text string) *yaml.Node {
	t.Helper()
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(text), &doc); err != nil {
		t.Fatal(err)
	}
	return &doc
}

const doc = `apiVersion: v1
metadata:
  name: ocp
  labels:
    infraenvs.agent-install.openshift.io: ostest
hosts:
- hostname: master-0
  interfaces:
  - name: enp1s0
    macAddress: 52:54:00:00:00:01
- hostname: master-1
spec: &s
  a: 1
copy: *s
`

// TestWalkPlaces: every path's value and key, a mapping's keys, a list's
// length, the path on a line.
func TestWalkPlaces(t *testing.T) {
	tree, rep, ok := Walk("f.yaml", parse(t, doc), DefaultLimits)
	if !ok || len(rep.Entries) != 0 {
		t.Fatalf("Walk = %v, %v; want ok and no entries", ok, rep)
	}
	for _, tc := range []struct {
		path         string
		value, field Pos
	}{
		{"", Pos{1, 1}, Pos{1, 1}},
		{"apiVersion", Pos{1, 13}, Pos{1, 13}},
		{"metadata", Pos{3, 3}, Pos{2, 1}}, // a mapping: its key as a field
		{"metadata.labels.infraenvs.agent-install.openshift.io", Pos{5, 43}, Pos{5, 43}},
		{"hosts", Pos{7, 1}, Pos{6, 1}},
		{"hosts[0]", Pos{7, 3}, Pos{7, 3}}, // a list item has no key
		{"hosts[0].interfaces[0].macAddress", Pos{10, 17}, Pos{10, 17}},
		{"copy", Pos{14, 7}, Pos{14, 1}}, // the alias as written
		{"copy.a", Pos{13, 6}, Pos{13, 6}},
		// Missing fields: the nearest parent's value, or its key.
		{"hosts[1].interfaces", Pos{11, 3}, Pos{11, 3}},
		{"metadata.namespace", Pos{3, 3}, Pos{2, 1}},
		{"metadata.annotations.x", Pos{3, 3}, Pos{2, 1}},
		{"nothing", Pos{1, 1}, Pos{1, 1}},
	} {
		t.Run(tc.path, func(t *testing.T) {
			if got := tree.Value(tc.path); got != tc.value {
				t.Errorf("Value(%q) = %v, want %v", tc.path, got, tc.value)
			}
			if got := tree.Field(tc.path); got != tc.field {
				t.Errorf("Field(%q) = %v, want %v", tc.path, got, tc.field)
			}
		})
	}
	want := []Key{
		{"apiVersion", "apiVersion", Pos{1, 1}}, {"metadata", "metadata", Pos{2, 1}}, {"hosts", "hosts", Pos{6, 1}},
		{"spec", "spec", Pos{12, 1}}, {"copy", "copy", Pos{14, 1}},
	}
	if d := cmp.Diff(want, tree.Keys("")); d != "" {
		t.Errorf("Keys(\"\") (-want +got):\n%s", d)
	}
	if got := tree.Len("hosts"); got != 2 {
		t.Errorf("Len(hosts) = %d, want 2", got)
	}
	if tree.Keys("hosts") != nil || tree.Len("metadata") != 0 || tree.Keys("nothing") != nil {
		t.Errorf("Keys of a list, Len of a mapping, Keys of nothing: want none")
	}
	if got := tree.PathOn(10); got != "hosts[0].interfaces[0].macAddress" {
		t.Errorf("PathOn(10) = %q, want the MAC's path", got)
	}
	tree.Set("hosts[1].interfaces[0]", Pos{99, 1})
	if got := tree.Value("hosts[1].interfaces[0].name"); got != (Pos{99, 1}) {
		t.Errorf("Value under a Set path = %v, want 99:1", got)
	}
	var none *Tree
	if none.Value("x") != (Pos{}) || none.Field("x") != (Pos{}) || none.Keys("") != nil || none.Len("") != 0 || none.PathOn(1) != "" {
		t.Errorf("a nil tree knows a position")
	}
}

// TestWalkProblems: what no input may hold, each at its node, every one
// reported; the first of duplicate keys stands.
func TestWalkProblems(t *testing.T) {
	for _, tc := range []struct {
		name string
		text string
		lim  Limits
		want []string
	}{
		{"duplicate keys", "a: 1\nb:\n  c: 2\n  c: 3\na: 4\n", DefaultLimits, []string{
			`f.yaml:4:3: b.c: duplicate key "c"; it is already defined at line 3`,
			`f.yaml:5:1: a: duplicate key "a"; it is already defined at line 1`,
		}},
		{"key not a string", "a:\n  [x]: 1\n  {y: z}: 2\n", DefaultLimits, []string{
			"f.yaml:2:3: a: mapping keys must be strings, found a list",
			"f.yaml:3:3: a: mapping keys must be strings, found a mapping",
		}},
		{"merge key", "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n", DefaultLimits, []string{
			"f.yaml:3:3: use: YAML merge keys (<<) are not supported; write the fields out",
		}},
		{"merge key let through", "base: &b {x: 1}\nuse:\n  <<: *b\n  y: 2\n", Limits{MaxNodes: 100, MaxDepth: 10, MergeKeys: true}, nil},
	} {
		t.Run(tc.name, func(t *testing.T) {
			tree, rep, ok := Walk("f.yaml", parse(t, tc.text), tc.lim)
			if !ok {
				t.Fatalf("Walk stopped: %v", rep)
			}
			if d := cmp.Diff(tc.want, rep.Lines()); d != "" {
				t.Errorf("entries (-want +got):\n%s", d)
			}
			// Check finds the same, recording nothing (no file: its
			// caller places the entries).
			checked, ok := Check(parse(t, tc.text), tc.lim)
			for i := range checked.Entries {
				checked.Entries[i].File = "f.yaml"
			}
			if d := cmp.Diff(rep, checked); !ok || d != "" {
				t.Errorf("Check = %v (-Walk +Check):\n%s", ok, d)
			}
			if tc.name == "duplicate keys" && tree.Value("b.c") != (Pos{3, 6}) {
				t.Errorf("Value(b.c) = %v, want the first c at 3:6", tree.Value("b.c"))
			}
		})
	}
}

// TestWalkLimits: an alias bomb and a deep document stop the walk with one
// entry, quickly.
func TestWalkLimits(t *testing.T) {
	var bomb strings.Builder
	bomb.WriteString("a0: &a0 [x, x, x, x, x, x, x, x, x, x]\n")
	for i := 1; i < 10; i++ {
		c, p := string(rune('0'+i)), string(rune('0'+i-1))
		bomb.WriteString("a" + c + ": &a" + c + " [*a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + ", *a" + p + "]\n")
	}
	deep := strings.Repeat("[", 70) + strings.Repeat("]", 70)
	for _, tc := range []struct {
		name, text, want string
	}{
		{"alias bomb", bomb.String(), "document too large: more than 200000 nodes (aliases expanded)"},
		{"deep", deep, "document nested more than 64 levels deep (a recursive alias?)"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			_, rep, ok := Walk("f.yaml", parse(t, tc.text), DefaultLimits)
			if ok || len(rep.Entries) != 1 || rep.Entries[0].Message != tc.want || rep.Entries[0].Line == 0 {
				t.Errorf("Walk = ok %v, %q; want stopped with the one placed entry %q", ok, rep.Lines(), tc.want)
			}
		})
	}
}

func TestWalkEmpty(t *testing.T) {
	for _, n := range []*yaml.Node{nil, {Kind: yaml.DocumentNode}, parse(t, "")} {
		tree, rep, ok := Walk("f.yaml", n, DefaultLimits)
		if !ok || len(rep.Entries) != 0 || tree.Value("x") != (Pos{}) {
			t.Errorf("Walk(%v) = %v, %v; want an empty tree", n, ok, rep)
		}
	}
}

// TestPairs: the pairs a decoder reads are the ones Walk recorded.
func TestPairs(t *testing.T) {
	n := parse(t, "a: 1\n[k]: 2\n<<: {m: 1}\nb: 3\na: 4\n").Content[0]
	var got []string
	Pairs(n, func(key string, k, v *yaml.Node) { got = append(got, key+"="+v.Value) })
	if d := cmp.Diff([]string{"a=1", "b=3"}, got); d != "" {
		t.Errorf("Pairs (-want +got):\n%s", d)
	}
}

func TestDocuments(t *testing.T) {
	docs, err := Documents([]byte("a: 1\n---\n---\nb: 2\n---\nc: [\n"))
	if len(docs) != 3 || err == nil {
		t.Fatalf("Documents = %d docs, %v; want 3 and the third's syntax error", len(docs), err)
	}
	if !IsEmptyDocument(docs[1]) || IsEmptyDocument(docs[2]) || docs[2].Line != 3 {
		t.Errorf("documents: empty %v %v, second at line %d; want the middle one empty, the last at its --- on line 3",
			IsEmptyDocument(docs[1]), IsEmptyDocument(docs[2]), docs[2].Line)
	}
	got := YAMLErrors(err)
	if want := []YAMLError{{6, "did not find expected node content"}}; !cmp.Equal(want, got) {
		t.Errorf("YAMLErrors(%v) = %v, want %v", err, got, want)
	}
	if docs, err := Documents(nil); len(docs) != 0 || err != nil {
		t.Errorf("Documents(nil) = %v, %v; want none", docs, err)
	}
}

func TestYAMLErrors(t *testing.T) {
	var v struct{ A int }
	terr := yaml.Unmarshal([]byte("a: x\nb: 1\n"), &v)
	for _, tc := range []struct {
		err  error
		want []YAMLError
	}{
		{terr, []YAMLError{{1, "cannot unmarshal !!str `x` into int"}}},
		{errors.New("yaml: line 3: mapping values are not allowed in this context"), []YAMLError{{3, "mapping values are not allowed in this context"}}},
		{errors.New("yaml: control characters are not allowed"), []YAMLError{{0, "control characters are not allowed"}}},
	} {
		if got := YAMLErrors(tc.err); !cmp.Equal(tc.want, got) {
			t.Errorf("YAMLErrors(%q) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
