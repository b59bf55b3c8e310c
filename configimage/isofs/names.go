package isofs

import (
	"strconv"
	"strings"
)

// ISO 9660 level-1 identifiers (ECMA-119 7.5, 7.6): d-characters only
// (A-Z, 0-9, _), files "NAME.EXT;1" with at most 8+3 characters,
// directories at most 8. The writer derives them from the real names, which
// Rock Ridge NM carries; a plain reader sees the level-1 form.

// isoIdent is a level-1 identifier split for ordering (ECMA-119 9.3).
type isoIdent struct {
	name, ext string
	dir       bool
}

// bytes is the identifier as recorded in a directory record.
func (id isoIdent) bytes() []byte {
	if id.dir {
		return []byte(id.name)
	}
	return []byte(id.name + "." + id.ext + ";1")
}

// key identifies id within its directory: a directory "A" and a file "A."
// would collide.
func (id isoIdent) key() string { return id.name + "." + id.ext }

// less orders identifiers as ECMA-119 9.3 asks: by name, then extension,
// each compared as if padded with spaces. d-characters all sort after a
// space, so padding amounts to "a prefix sorts first", which is Go's
// string order.
func (id isoIdent) less(o isoIdent) bool {
	if id.name != o.name {
		return id.name < o.name
	}
	return id.ext < o.ext
}

// dChars maps s to d-characters: letters upper-cased, anything else that
// is not a digit or "_" becomes "_".
func dChars(s string) string {
	var b strings.Builder
	for i := 0; i < len(s); i++ {
		c := s[i]
		switch {
		case c >= 'a' && c <= 'z':
			b.WriteByte(c - 'a' + 'A')
		case c >= 'A' && c <= 'Z', c >= '0' && c <= '9', c == '_':
			b.WriteByte(c)
		default:
			b.WriteByte('_')
		}
	}
	return b.String()
}

// levelOneIdent derives a level-1 identifier for name that is not in used
// (keys of the directory's identifiers so far), replacing the end of the
// name part by a counter when the plain form is taken.
func levelOneIdent(name string, dir bool, used map[string]bool) isoIdent {
	var id isoIdent
	if dir {
		id = isoIdent{name: truncate(dChars(name), 8), dir: true}
	} else {
		base, ext := name, ""
		if i := strings.LastIndexByte(name, '.'); i >= 0 {
			base, ext = name[:i], name[i+1:]
		}
		id = isoIdent{name: truncate(dChars(base), 8), ext: truncate(dChars(ext), 3)}
	}
	if id.name == "" {
		id.name = "_"
	}
	if used[id.key()] {
		// Distinct counters give distinct names and at most len(used) of
		// them are taken, so the loop ends.
		orig := id.name
		for n := 1; ; n++ {
			suffix := strconv.Itoa(n)
			stem := orig[:min(len(orig), 8-len(suffix))]
			id.name = stem + suffix
			if !used[id.key()] {
				break
			}
		}
	}
	used[id.key()] = true
	return id
}

func truncate(s string, n int) string { return s[:min(len(s), n)] }

// plainName turns an identifier read without Rock Ridge into a file name:
// the ";version" suffix and a trailing "." are removed, and a name of
// d-characters only is lowercased, as the Linux isofs driver shows them.
func plainName(ident []byte) string {
	s := string(ident)
	if i := strings.LastIndexByte(s, ';'); i >= 0 {
		s = s[:i]
	}
	s = strings.TrimSuffix(s, ".")
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(c >= 'A' && c <= 'Z' || c >= '0' && c <= '9' || c == '_' || c == '.') {
			return s
		}
	}
	return strings.ToLower(s)
}
