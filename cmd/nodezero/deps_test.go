package main

import (
	"bytes"
	"debug/elf"
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"testing"
)

const module = "github.com/nodezero/nodezero"

// importRules is docs/architecture.md: which project packages each folder may
// import (besides its own sub-packages). cmd/ may import anything.
var importRules = []struct {
	folder  string
	allowed []string
}{
	{"store", nil},
	{"configimage", nil},
	{"units", nil},
	{"testbed", nil},
	{"wire", nil},
	{"internal", nil}, // the leaf helpers every layer may import
	{"kube", nil},     // kube/localapi imports kube only
	{"hostagent", []string{"wire"}},
	{"tui", []string{"wire"}},
	{"daemon", []string{"store", "configimage", "units", "kube", "wire"}},
}

type listedPkg struct {
	ImportPath string
	Imports    []string
	Deps       []string
	CgoFiles   []string
	Standard   bool
	Module     *struct{ Path string }
}

func goList(t *testing.T, env []string, args ...string) []listedPkg {
	t.Helper()
	cmd := exec.Command("go", append([]string{"list", "-json=ImportPath,Imports,Deps,CgoFiles,Standard,Module"}, args...)...)
	cmd.Dir = repoRoot(t)
	cmd.Env = append(os.Environ(), env...)
	out, err := cmd.Output()
	if err != nil {
		t.Fatalf("go list %v: %v\n%s", args, err, exitStderr(err))
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

func exitStderr(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}

func repoRoot(t *testing.T) string {
	t.Helper()
	wd, err := os.Getwd()
	if err != nil {
		t.Fatal(err)
	}
	return filepath.Join(wd, "..", "..")
}

// rel returns a project package's path inside the module, or "" for others.
func rel(path string) string {
	if path == module {
		return "."
	}
	if strings.HasPrefix(path, module+"/") {
		return strings.TrimPrefix(path, module+"/")
	}
	return ""
}

func under(path, folder string) bool { return path == folder || strings.HasPrefix(path, folder+"/") }

// ruleFor returns the most specific rule covering a package.
func ruleFor(path string) (folder string, allowed []string, ok bool) {
	best := -1
	for i, r := range importRules {
		if under(path, r.folder) && (best < 0 || len(r.folder) > len(importRules[best].folder)) {
			best = i
		}
	}
	if best < 0 {
		return "", nil, false
	}
	return importRules[best].folder, importRules[best].allowed, true
}

func TestImportRules(t *testing.T) {
	for _, p := range goList(t, nil, "./...") {
		from := rel(p.ImportPath)
		folder, allowed, ok := ruleFor(from)
		if !ok {
			continue // cmd/ and anything not in the table
		}
		for _, imp := range p.Imports {
			to := rel(imp)
			if to == "" || under(to, folder) {
				continue
			}
			okImport := false
			for _, a := range allowed {
				if under(to, a) {
					okImport = true
				}
			}
			// internal/ holds the leaf helpers every layer may import.
			if under(to, "internal") {
				okImport = true
			}
			// daemon may use its own sub-packages.
			if folder == "daemon" && under(to, "daemon") {
				okImport = true
			}
			if !okImport {
				t.Errorf("%s imports %s: %s/ may import only %v (DESIGN.md §10)", from, to, folder, allowed)
			}
		}
	}
}

func TestNoCgoInBinary(t *testing.T) {
	pkgs := goList(t, []string{"CGO_ENABLED=1"}, "-deps", "./cmd/nodezero")
	for _, p := range pkgs {
		if !p.Standard && len(p.CgoFiles) > 0 {
			t.Errorf("%s has cgo files %v: the binary must build with CGO_ENABLED=0", p.ImportPath, p.CgoFiles)
		}
	}
}

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
