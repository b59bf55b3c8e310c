package units

import (
	"bytes"
	"fmt"
	"path"
	"strings"

	"github.com/coreos/go-systemd/v22/unit"
)

// Link is one enablement symlink, as `systemctl enable` makes it.
type Link struct {
	Path   string // relative to the host root, e.g. "etc/systemd/system/multi-user.target.wants/nodezero.service"
	Target string // absolute path on the host, e.g. "/etc/systemd/system/nodezero.service"
}

// installDirs maps an [Install] dependency to the directory suffix systemd
// reads it from (systemd.unit(5), "[Install] Section Options").
var installDirs = map[string]string{
	"WantedBy":   ".wants",
	"RequiredBy": ".requires",
	"UpheldBy":   ".upholds",
}

// Links derives the enablement symlinks from the [Install] sections of the
// unit files among files, the way `systemctl enable` does: WantedBy=,
// RequiredBy= and UpheldBy= give a link in the named unit's .wants,
// .requires or .upholds directory, Alias= a link of that name. A template
// linked from a template keeps no instance (the instance is inherited); a
// template linked from a plain unit needs DefaultInstance=.
func Links(files []File) ([]Link, error) {
	var out []Link
	for _, f := range files {
		if path.Dir(f.Path) != UnitDir {
			continue
		}
		opts, err := unit.DeserializeOptions(bytes.NewReader(f.Data))
		if err != nil {
			return nil, fmt.Errorf("units: parse %s: %w", f.Path, err)
		}
		name := path.Base(f.Path)
		target := "/" + f.Path
		defaultInstance := ""
		for _, o := range opts {
			if o.Section == "Install" && o.Name == "DefaultInstance" {
				defaultInstance = o.Value
			}
		}
		for _, o := range opts {
			if o.Section != "Install" {
				continue
			}
			for _, dep := range strings.Fields(o.Value) {
				switch suffix, ok := installDirs[o.Name]; {
				case ok:
					link, err := linkName(name, dep, defaultInstance)
					if err != nil {
						return nil, fmt.Errorf("units: %s: %s=%s: %w", f.Path, o.Name, dep, err)
					}
					out = append(out, Link{Path: path.Join(UnitDir, dep+suffix, link), Target: target})
				case o.Name == "Alias":
					out = append(out, Link{Path: path.Join(UnitDir, dep), Target: target})
				}
			}
		}
	}
	return out, nil
}

// linkName is the name of the link to unit name in dep's dependency
// directory.
func linkName(name, dep, defaultInstance string) (string, error) {
	if !isTemplate(name) {
		return name, nil
	}
	if isTemplate(dep) {
		return name, nil
	}
	if defaultInstance == "" {
		return "", fmt.Errorf("template %s wanted by a plain unit needs DefaultInstance=", name)
	}
	return strings.Replace(name, "@.", "@"+defaultInstance+".", 1), nil
}

// isTemplate reports whether name is a template unit name ("foo@.service").
func isTemplate(name string) bool {
	return strings.Contains(name, "@.")
}

// ours reports whether a unit name (plain, template or instance) names one
// of the units Files renders.
func ours(name string) bool {
	for _, u := range []string{NetworkUnit, DaemonUnit, ConfigImageUnit, ConsoleUnit, SerialConsoleUnit} {
		if name == u {
			return true
		}
		if prefix, suffix, ok := strings.Cut(u, "@."); ok && strings.HasPrefix(name, prefix+"@") && strings.HasSuffix(name, "."+suffix) {
			return true
		}
	}
	return false
}
