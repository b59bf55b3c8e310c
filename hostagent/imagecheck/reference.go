package imagecheck

import (
	"fmt"
	"strings"
)

// Reference is a parsed image reference: registry/repository plus a tag or
// a digest (the digest wins when both are given).
type Reference struct {
	Registry   string // host[:port] as written, "docker.io" when none is
	Repository string
	Tag        string
	Digest     string
}

// ref returns the manifest reference to ask for: the digest or the tag.
func (r Reference) ref() string {
	if r.Digest != "" {
		return r.Digest
	}
	return r.Tag
}

// ParseReference parses an image reference the way container tools do:
// the first path component is a registry when it holds a '.' or ':' or is
// "localhost"; otherwise the image is on Docker Hub (docker.io, "library/"
// for single-component names). The tag defaults to "latest".
func ParseReference(s string) (Reference, error) {
	var r Reference
	rest := s
	if i := strings.IndexByte(rest, '@'); i >= 0 {
		r.Digest = rest[i+1:]
		rest = rest[:i]
		if !validDigest(r.Digest) {
			return Reference{}, fmt.Errorf("parse image reference %q: invalid digest %q", s, r.Digest)
		}
	}
	// A tag follows the last ':' that comes after the last '/'.
	if i := strings.LastIndexByte(rest, ':'); i > strings.LastIndexByte(rest, '/') {
		r.Tag = rest[i+1:]
		rest = rest[:i]
		if !validTag(r.Tag) {
			return Reference{}, fmt.Errorf("parse image reference %q: invalid tag %q", s, r.Tag)
		}
	}
	if r.Tag == "" && r.Digest == "" {
		r.Tag = "latest"
	}
	if i := strings.IndexByte(rest, '/'); i >= 0 && (strings.ContainsAny(rest[:i], ".:") || rest[:i] == "localhost") {
		r.Registry, r.Repository = rest[:i], rest[i+1:]
		if !validHost(r.Registry) {
			return Reference{}, fmt.Errorf("parse image reference %q: invalid registry %q", s, r.Registry)
		}
	} else {
		r.Registry, r.Repository = "docker.io", rest
		if !strings.Contains(rest, "/") {
			r.Repository = "library/" + rest
		}
	}
	if !validRepository(r.Repository) {
		return Reference{}, fmt.Errorf("parse image reference %q: invalid repository %q", s, r.Repository)
	}
	return r, nil
}

// validRepository: slash-separated components of lowercase letters and
// digits joined by '.', '_', '__' or runs of '-'.
func validRepository(s string) bool {
	if s == "" || len(s) > 255 {
		return false
	}
	for _, c := range strings.Split(s, "/") {
		if c == "" || !isAlnum(c[0]) || !isAlnum(c[len(c)-1]) {
			return false
		}
		for i := 0; i < len(c); i++ {
			if !isAlnum(c[i]) && c[i] != '.' && c[i] != '_' && c[i] != '-' {
				return false
			}
		}
	}
	return true
}

func isAlnum(c byte) bool { return 'a' <= c && c <= 'z' || '0' <= c && c <= '9' }

// validTag: [A-Za-z0-9_][A-Za-z0-9_.-]{0,127}.
func validTag(s string) bool {
	if s == "" || len(s) > 128 || s[0] == '.' || s[0] == '-' {
		return false
	}
	for i := 0; i < len(s); i++ {
		c := s[i]
		if !(isAlnum(c) || 'A' <= c && c <= 'Z' || c == '_' || c == '.' || c == '-') {
			return false
		}
	}
	return true
}

// validDigest: algorithm:hex, with sha256 checked for its length.
func validDigest(s string) bool {
	algo, hex, ok := strings.Cut(s, ":")
	if !ok || algo == "" || len(hex) < 32 {
		return false
	}
	for i := 0; i < len(algo); i++ {
		if !isAlnum(algo[i]) && algo[i] != '+' && algo[i] != '.' && algo[i] != '_' && algo[i] != '-' {
			return false
		}
	}
	if algo == "sha256" && len(hex) != 64 {
		return false
	}
	for i := 0; i < len(hex); i++ {
		if !('0' <= hex[i] && hex[i] <= '9' || 'a' <= hex[i] && hex[i] <= 'f') {
			return false
		}
	}
	return true
}

// validHost: a DNS name or [IPv6] with an optional :port.
func validHost(s string) bool {
	host := s
	if strings.HasPrefix(s, "[") {
		end := strings.IndexByte(s, ']')
		if end < 0 {
			return false
		}
		host = s[1:end]
		rest := s[end+1:]
		if rest != "" && !validPort(strings.TrimPrefix(rest, ":")) || rest != "" && rest[0] != ':' {
			return false
		}
		return strings.Count(host, ":") >= 2
	}
	if h, p, ok := strings.Cut(s, ":"); ok {
		if !validPort(p) {
			return false
		}
		host = h
	}
	if host == "" {
		return false
	}
	for _, l := range strings.Split(host, ".") {
		if l == "" || l[0] == '-' || l[len(l)-1] == '-' {
			return false
		}
		for i := 0; i < len(l); i++ {
			c := l[i]
			if !(isAlnum(c) || 'A' <= c && c <= 'Z' || c == '-') {
				return false
			}
		}
	}
	return true
}

func validPort(p string) bool {
	if p == "" || len(p) > 5 {
		return false
	}
	for i := 0; i < len(p); i++ {
		if p[i] < '0' || p[i] > '9' {
			return false
		}
	}
	return true
}
