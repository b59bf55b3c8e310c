package archtest

import (
	"bufio"
	"bytes"
	"debug/elf"
	"encoding/json"
	"flag"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
)

const module = "github.com/nodezero/nodezero"

var update = flag.Bool("update", false, "rewrite docs/deps/nodezero.txt from the build")

// denied are module paths no package of this module may import, code or
// test: the Cluster API providers are a nested module of their own
// (docs/architecture.md, "Never").
var denied = []string{"k8s.io/", "sigs.k8s.io/"}

// rule is one row of the import table of docs/architecture.md.
type rule struct {
	folder     string
	project    []string // project folders the code may import
	testAlso   []string // project folders or module paths its tests may import besides
	thirdParty []string // module path prefixes the code may import; "*" any
	line       int
}

// readRules parses the table under "## Import rules" of docs/architecture.md.
func readRules(t *testing.T) []rule {
	t.Helper()
	path := filepath.Join(repoRoot(t), "docs", "architecture.md")
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatal(err)
	}
	var rules []rule
	in := false
	sc := bufio.NewScanner(bytes.NewReader(b))
	for n := 1; sc.Scan(); n++ {
		line := sc.Text()
		if strings.HasPrefix(line, "## ") {
			in = strings.HasPrefix(line, "## Import rules")
			continue
		}
		if !in || !strings.HasPrefix(line, "| `") {
			continue
		}
		cells := strings.Split(strings.Trim(line, "|"), "|")
		if len(cells) != 5 {
			t.Fatalf("%s:%d: want 5 cells (folder, owns, may import, tests may also import, third-party), got %d", path, n, len(cells))
		}
		folders := spans(cells[0])
		if len(folders) != 1 {
			t.Fatalf("%s:%d: want one folder in the first cell, got %q", path, n, cells[0])
		}
		rules = append(rules, rule{folder: folders[0], project: spans(cells[2]), testAlso: spans(cells[3]), thirdParty: spans(cells[4]), line: n})
	}
	if len(rules) == 0 {
		t.Fatalf("%s: no import table under \"## Import rules\"", path)
	}
	return rules
}

// spans returns the `code spans` of a table cell.
func spans(cell string) []string {
	var out []string
	for {
		i := strings.IndexByte(cell, '`')
		if i < 0 {
			return out
		}
		j := strings.IndexByte(cell[i+1:], '`')
		if j < 0 {
			return out
		}
		out = append(out, strings.TrimSuffix(cell[i+1:i+1+j], "/"))
		cell = cell[i+2+j:]
	}
}

type listedPkg struct {
	ImportPath   string
	Dir          string
	Imports      []string
	TestImports  []string
	XTestImports []string
	Deps         []string
	CgoFiles     []string
	Standard     bool
}

func goList(t *testing.T, env []string, args ...string) []listedPkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Dir,Imports,TestImports,XTestImports,Deps,CgoFiles,Standard"}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		var stderr []byte
		if ee, ok := err.(*exec.ExitError); ok {
			stderr = ee.Stderr
		}
		t.Fatalf("go list %v: %v\n%s", args, err, stderr)
	}
	var pkgs []listedPkg
	dec := json.NewDecoder(bytes.NewReader(out))
	for dec.More() {
		var p listedPkg
		if err := dec.Decode(&p); err != nil {
			t.Fatal(err)
		}
		pkgs = append(pkgs, p)
	}
	return pkgs
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

// rel is a project package's path inside the module ("" for others).
func rel(path string) string {
	if path == module {
		return "."
	}
	if s, ok := strings.CutPrefix(path, module+"/"); ok {
		return s
	}
	return ""
}

func under(path, folder string) bool { return path == folder || strings.HasPrefix(path, folder+"/") }

func underAny(path string, folders []string) bool {
	return slices.ContainsFunc(folders, func(f string) bool { return f == "*" || under(path, f) })
}

// ruleFor is the most specific rule covering a project package.
func ruleFor(rules []rule, path string) (rule, bool) {
	best := -1
	for i, r := range rules {
		if under(path, r.folder) && (best < 0 || len(r.folder) > len(rules[best].folder)) {
			best = i
		}
	}
	if best < 0 {
		return rule{}, false
	}
	return rules[best], true
}

func standard(path string) bool {
	first, _, _ := strings.Cut(path, "/")
	return !strings.Contains(first, ".")
}

// TestImportRules: every package of the module, its tests included,
// imports only what its row of docs/architecture.md allows; every package
// has a row; nothing imports a denied module.
func TestImportRules(t *testing.T) {
	rules := readRules(t)
	for _, r := range rules {
		if fi, err := os.Stat(filepath.Join(repoRoot(t), r.folder)); err != nil || !fi.IsDir() {
			t.Errorf("docs/architecture.md:%d: folder %s/ does not exist", r.line, r.folder)
		}
	}
	for _, p := range goList(t, nil, "./...") {
		from := rel(p.ImportPath)
		r, ok := ruleFor(rules, from)
		if !ok {
			t.Errorf("%s: no row of docs/architecture.md's import table covers it", from)
			continue
		}
		check := func(imports []string, test bool) {
			for _, imp := range imports {
				if slices.ContainsFunc(denied, func(d string) bool { return strings.HasPrefix(imp, d) }) {
					t.Errorf("%s imports %s: no package of this module may (docs/architecture.md, Never)", from, imp)
					continue
				}
				to := rel(imp)
				switch {
				case to == "" && standard(imp):
				case to == "":
					if !underAny(imp, r.thirdParty) && !(test && underAny(imp, r.testAlso)) {
						what := "its code"
						if test {
							what = "its tests"
						}
						t.Errorf("%s: %s import %s, a module docs/architecture.md:%d does not allow for %s/", from, what, imp, r.line, r.folder)
					}
				case under(to, r.folder), underAny(to, r.project), test && underAny(to, r.testAlso):
				case test:
					t.Errorf("%s: its tests import %s: docs/architecture.md:%d allows %s/ %v, its tests also %v", from, to, r.line, r.folder, r.project, r.testAlso)
				default:
					t.Errorf("%s imports %s: docs/architecture.md:%d allows %s/ only %v", from, to, r.line, r.folder, r.project)
				}
			}
		}
		check(p.Imports, false)
		check(append(slices.Clone(p.TestImports), p.XTestImports...), true)
	}
}

// TestNoCgoInBinary: the binary builds with CGO_ENABLED=0 (docs/architecture.md).
func TestNoCgoInBinary(t *testing.T) {
	for _, p := range goList(t, []string{"CGO_ENABLED=1"}, "-deps", "./cmd/nodezero") {
		if !p.Standard && len(p.CgoFiles) > 0 {
			t.Errorf("%s has cgo files %v: the binary must build with CGO_ENABLED=0", p.ImportPath, p.CgoFiles)
		}
	}
}

// TestDependencyListing: docs/deps/nodezero.txt lists every package
// outside the standard library that the binary links, so that a new one
// is seen in review (tailscale's depaware idea). -update rewrites it.
func TestDependencyListing(t *testing.T) {
	var got []string
	for _, p := range goList(t, []string{"CGO_ENABLED=0"}, "-deps", "./cmd/nodezero") {
		if !p.Standard && rel(p.ImportPath) == "" {
			got = append(got, p.ImportPath)
		}
	}
	slices.Sort(got)
	path := filepath.Join(repoRoot(t), "docs", "deps", "nodezero.txt")
	text := "# The packages outside this module and the standard library that the nodezero\n" +
		"# binary links. Regenerate: go test ./internal/archtest -run TestDependencyListing -update\n" +
		strings.Join(got, "\n") + "\n"
	if *update {
		if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(path, []byte(text), 0o644); err != nil {
			t.Fatal(err)
		}
		return
	}
	b, err := os.ReadFile(path)
	if err != nil {
		t.Fatalf("%v (create it with -update)", err)
	}
	if d := cmp.Diff(string(b), text); d != "" {
		t.Errorf("the binary's dependencies changed (-listed +built); review them, then run go test ./internal/archtest -run TestDependencyListing -update:\n%s", d)
	}
}

// TestBinaryIsStatic: the built binary has no interpreter and needs no
// shared library.
func TestBinaryIsStatic(t *testing.T) {
	if testing.Short() {
		t.Skip("builds the binary")
	}
	bin := filepath.Join(t.TempDir(), "nodezero")
	cmd := exec.Command("go", "build", "-o", bin, "./cmd/nodezero")
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), "CGO_ENABLED=0")
	if out, err := cmd.CombinedOutput(); err != nil {
		t.Fatalf("CGO_ENABLED=0 go build: %v\n%s", err, out)
	}
	f, err := elf.Open(bin)
	if err != nil {
		t.Fatal(err)
	}
	defer f.Close()
	for _, p := range f.Progs {
		if p.Type == elf.PT_INTERP {
			t.Error("binary has a program interpreter: it is dynamically linked")
		}
	}
	if libs, _ := f.ImportedLibraries(); len(libs) > 0 {
		t.Errorf("binary needs shared libraries %v", libs)
	}
}
