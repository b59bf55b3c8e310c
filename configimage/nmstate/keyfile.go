package nmstate

import (
	"bytes"
	"crypto/sha1"
	"fmt"
	"sort"
	"strings"
)

// section is one [name] of a keyfile.
type section struct {
	name string
	keys map[string]string
}

// writeKeyfile serializes sections as nmstate's keyfile writer does: keys
// sorted byte-wise, empty values left out, a bare header for an empty
// section, one blank line between sections and exactly one final newline.
func writeKeyfile(sections []section) ([]byte, error) {
	var b bytes.Buffer
	for _, s := range sections {
		fmt.Fprintf(&b, "[%s]\n", s.name)
		keys := make([]string, 0, len(s.keys))
		for k := range s.keys {
			keys = append(keys, k)
		}
		sort.Strings(keys)
		for _, k := range keys {
			v := s.keys[k]
			if v == "" {
				continue
			}
			// Parse keeps these out; this guards the file's structure.
			if strings.ContainsAny(k+v, "\n\r\x00") || strings.ContainsAny(k, "=[") {
				return nil, fmt.Errorf("key %q: value %q cannot be written to a keyfile", k, v)
			}
			fmt.Fprintf(&b, "%s=%s\n", k, v)
		}
		b.WriteString("\n")
	}
	out := b.Bytes()
	if bytes.HasSuffix(out, []byte("\n\n")) {
		out = out[:len(out)-1]
	}
	return out, nil
}

// nsURL is RFC 4122's URL namespace, which nmstate's stable UUIDs use.
var nsURL = [16]byte{0x6b, 0xa7, 0xb8, 0x11, 0x9d, 0xad, 0x11, 0xd1, 0x80, 0xb4, 0x00, 0xc0, 0x4f, 0xd4, 0x30, 0xc8}

// uuid5 is the name-based (SHA-1) UUID of name in the URL namespace, as
// nmstate's gc mode computes connection UUIDs from "<type>://<name>".
func uuid5(name string) string {
	h := sha1.New()
	h.Write(nsURL[:])
	h.Write([]byte(name))
	u := h.Sum(nil)[:16]
	u[6] = u[6]&0x0f | 0x50
	u[8] = u[8]&0x3f | 0x80
	return fmt.Sprintf("%x-%x-%x-%x-%x", u[0:4], u[4:6], u[6:8], u[8:10], u[10:16])
}

// iniFile is a keyfile as gopkg.in/ini.v1 holds it: sections in order, keys
// in order, values unquoted.
type iniFile struct {
	sections []*iniSection
}

type iniSection struct {
	name  string
	lines []iniLine
}

type iniLine struct {
	key, value string
	raw        bool // a comment or a line without a delimiter, kept as is
}

func (f *iniFile) section(name string) *iniSection {
	for _, s := range f.sections {
		if s.name == name {
			return s
		}
	}
	s := &iniSection{name: name}
	f.sections = append(f.sections, s)
	return s
}

// set replaces a key's value in place, or appends the key.
func (s *iniSection) set(key, value string) {
	for k := range s.lines {
		if !s.lines[k].raw && s.lines[k].key == key {
			s.lines[k].value = value
			return
		}
	}
	s.lines = append(s.lines, iniLine{key: key, value: value})
}

func parseINI(data []byte) *iniFile {
	f := &iniFile{}
	cur := f.section("") // ini.v1's DEFAULT section, written only when not empty
	for _, line := range strings.Split(string(data), "\n") {
		line = strings.TrimSpace(line)
		switch {
		case line == "":
		case strings.HasPrefix(line, "[") && strings.HasSuffix(line, "]"):
			cur = f.section(line[1 : len(line)-1])
		case strings.HasPrefix(line, "#") || strings.HasPrefix(line, ";"):
			cur.lines = append(cur.lines, iniLine{key: line, raw: true})
		default:
			i := strings.IndexAny(line, "=:") // ini.v1's default delimiters
			if i < 0 {
				cur.lines = append(cur.lines, iniLine{key: line, raw: true})
				continue
			}
			cur.set(strings.TrimSpace(line[:i]), strings.TrimSpace(line[i+1:]))
		}
	}
	return f
}

// InstallerFormat applies openshift-install's ini pass to a keyfile
// (gopkg.in/ini.v1 with PrettyFormat off and inline comments ignored):
// autoconnect=true in place, autoconnect-priority=1 appended to
// [connection], key=value lines and a blank line after every section.
func InstallerFormat(k Keyfile) Keyfile {
	f := parseINI(k.Data)
	conn := f.section("connection")
	conn.set("autoconnect", "true")
	conn.set("autoconnect-priority", "1")
	var b bytes.Buffer
	for _, s := range f.sections {
		if s.name == "" {
			if len(s.lines) == 0 {
				continue
			}
		} else {
			fmt.Fprintf(&b, "[%s]\n", s.name)
		}
		for _, l := range s.lines {
			if l.raw {
				b.WriteString(l.key + "\n")
				continue
			}
			b.WriteString(l.key + "=" + l.value + "\n")
		}
		b.WriteString("\n")
	}
	return Keyfile{Name: k.Name, Data: b.Bytes()}
}
