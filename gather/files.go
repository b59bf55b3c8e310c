package gather

import (
	"errors"
	"fmt"
	"io/fs"
	"os"
	"path"
	"path/filepath"
	"sort"
	"strings"

	"github.com/nodezero/nodezero/hostagent/logsgather"
)

// maxTreeFiles bounds the files collected from one directory tree.
const maxTreeFiles = 2000

// resolve returns where rel (a path on the host, like /etc/resolv.conf)
// is under root, following symbolic links as the host would see them: an
// absolute target is taken under root, so a link can never lead out of
// it. On the live host (root /) the kernel's resolution is the same.
func resolve(root, rel string) (string, error) {
	clean := filepath.Clean("/" + rel)
	if root == "/" {
		return clean, nil
	}
	parts := strings.Split(strings.TrimPrefix(clean, "/"), "/")
	cur := "/"
	for hops := 0; len(parts) > 0; {
		p := parts[0]
		parts = parts[1:]
		switch p {
		case "", ".":
			continue
		case "..":
			cur = filepath.Dir(cur)
			continue
		}
		next := filepath.Join(cur, p)
		fi, err := os.Lstat(filepath.Join(root, next))
		if err != nil {
			// Let the caller's open say what is wrong with the rest.
			return filepath.Join(append([]string{root, next}, parts...)...), nil
		}
		if fi.Mode()&fs.ModeSymlink == 0 {
			cur = next
			continue
		}
		if hops++; hops > 40 {
			return "", fmt.Errorf("%s: too many levels of symbolic links", rel)
		}
		target, err := os.Readlink(filepath.Join(root, next))
		if err != nil {
			return "", err
		}
		if filepath.IsAbs(target) {
			cur = "/"
		}
		parts = append(strings.Split(filepath.Clean(target), "/"), parts...)
	}
	return filepath.Join(root, cur), nil
}

// format is how a file's secrets are found, from its name.
type format int

const (
	formatText    format = iota // the Text pass only
	formatEnv                   // NAME=VALUE lines
	formatKeyfile               // INI: NetworkManager keyfiles, TOML
	formatYAML
	formatJSON
	formatSecret // the whole file is a secret: a token, a password hash
)

func formatOf(name string) format {
	base := path.Base(name)
	switch strings.ToLower(path.Ext(base)) {
	case ".json":
		return formatJSON
	case ".yaml", ".yml":
		return formatYAML
	case ".nmconnection", ".ini", ".conf", ".toml":
		return formatKeyfile
	case ".env":
		return formatEnv
	case ".pem", ".crt", ".cert", ".key":
		return formatText // private keys go by their PEM block, certificates stay
	}
	if SecretName(strings.TrimSuffix(base, path.Ext(base))) || SecretName(base) {
		return formatSecret
	}
	// Files without a known extension (/etc/assisted/node0, hostnames,
	// host config roles) are env-like at most.
	return formatEnv
}

// redactFile applies the pass for the file's format. detail says when a
// file could not be parsed as its name promised.
func (r *Redactor) redactFile(name string, data []byte) (out []byte, n int, detail string) {
	switch formatOf(name) {
	case formatJSON:
		out, n, err := r.JSON(data)
		if err != nil {
			return data, 0, "not valid JSON, redacted as text"
		}
		return out, n, ""
	case formatYAML:
		out, n = r.YAML(data)
	case formatKeyfile:
		out, n = r.Keyfile(data)
	case formatEnv:
		out, n = r.Env(data)
	case formatSecret:
		if len(strings.TrimSpace(string(data))) == 0 {
			return data, 0, ""
		}
		r.Learn(string(data))
		return []byte(Redacted + "\n"), 1, "the whole file is a secret"
	default:
		return data, 0, ""
	}
	return out, n, ""
}

// file collects one host file (rel, a path on the host) as section/rel.
// Absent is "missing"; anything else that stops it is "failed".
func (g *gatherer) file(section, rel string) {
	name := path.Join(section, strings.TrimPrefix(path.Clean("/"+rel), "/"))
	p, err := resolve(g.o.Root, rel)
	if err != nil {
		g.b.note(name, StatusFailed, "%v", err)
		return
	}
	g.collect(name, p)
}

// collect reads p and adds it as name, redacted by its format.
func (g *gatherer) collect(name, p string) {
	data, from, err := logsgather.ReadTail(p, g.o.MaxFile)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		g.b.note(name, StatusMissing, "")
		return
	case err != nil:
		g.b.note(name, StatusFailed, "%v", err)
		return
	}
	out, n, detail := g.red.redactFile(name, data)
	if from > 0 {
		detail = strings.TrimPrefix(detail+fmt.Sprintf(", the last %d of %d bytes", len(data), from+int64(len(data))), ", ")
	}
	g.b.add(name, out, n, detail)
}

// tree collects every regular file under the host directory rel as
// section/rel/..., in name order. Symbolic links inside are listed in the
// manifest, not followed.
func (g *gatherer) tree(section, rel string) {
	name := path.Join(section, strings.TrimPrefix(path.Clean("/"+rel), "/"))
	dir, err := resolve(g.o.Root, rel)
	if err != nil {
		g.b.note(name, StatusFailed, "%v", err)
		return
	}
	fi, err := os.Stat(dir)
	switch {
	case errors.Is(err, fs.ErrNotExist):
		g.b.note(name+"/", StatusMissing, "")
		return
	case err != nil:
		g.b.note(name+"/", StatusFailed, "%v", err)
		return
	case !fi.IsDir():
		g.collect(name, dir)
		return
	}
	var files []string
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil {
			rp, _ := filepath.Rel(dir, p)
			g.b.note(path.Join(name, filepath.ToSlash(rp)), StatusFailed, "%v", err)
			if d != nil && d.IsDir() {
				return fs.SkipDir
			}
			return nil
		}
		if d.Type()&fs.ModeSymlink != 0 {
			rp, _ := filepath.Rel(dir, p)
			target, _ := os.Readlink(p)
			g.b.note(path.Join(name, filepath.ToSlash(rp)), StatusSkipped, "symbolic link to %s, not followed", target)
			return nil
		}
		if d.Type().IsRegular() {
			files = append(files, p)
		}
		return nil
	})
	if err != nil {
		g.b.note(name+"/", StatusFailed, "%v", err)
	}
	sort.Strings(files)
	if len(files) == 0 {
		g.b.note(name+"/", StatusOK, "empty directory")
	}
	for i, p := range files {
		if i == maxTreeFiles {
			g.b.note(name+"/", StatusSkipped, "%d more files, not collected", len(files)-maxTreeFiles)
			break
		}
		rp, _ := filepath.Rel(dir, p)
		g.collect(path.Join(name, filepath.ToSlash(rp)), p)
	}
}
