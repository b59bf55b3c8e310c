package nmstate

import (
	"sort"
	"strconv"
	"strings"
)

// Problem is one thing wrong with an nmstate document. Line/Column are
// 1-based positions in the YAML text given to Parse (0 when unknown); Path is
// relative to the document root, e.g. "interfaces[1].ipv4.address[0].prefix-length"
// or "routes.config[2].next-hop-interface". Warnings never make Parse fail.
type Problem struct {
	Line, Column int
	Path         string
	Message      string
	Warning      bool
}

// String formats the problem as "line:col: path: message"; warnings read
// "line:col: warning: path: message". Unknown parts are left out.
func (p Problem) String() string {
	var b strings.Builder
	if p.Line > 0 {
		b.WriteString(strconv.Itoa(p.Line))
		if p.Column > 0 {
			b.WriteString(":" + strconv.Itoa(p.Column))
		}
		b.WriteString(": ")
	}
	if p.Warning {
		b.WriteString("warning: ")
	}
	if p.Path != "" {
		b.WriteString(p.Path + ": ")
	}
	b.WriteString(p.Message)
	return b.String()
}

// Problems is every problem found in a document. It implements error; Error
// lists only the errors, one per line.
type Problems []Problem

// Error joins the non-warning problems, one per line.
func (ps Problems) Error() string {
	var lines []string
	for _, p := range ps.Errors() {
		lines = append(lines, p.String())
	}
	return strings.Join(lines, "\n")
}

// Errors returns only the non-warnings.
func (ps Problems) Errors() Problems {
	var out Problems
	for _, p := range ps {
		if !p.Warning {
			out = append(out, p)
		}
	}
	return out
}

// sorted orders problems by position; problems without one keep their
// relative order and come last.
func (ps Problems) sorted() Problems {
	out := append(Problems(nil), ps...)
	sort.SliceStable(out, func(i, j int) bool {
		a, b := out[i], out[j]
		if (a.Line == 0) != (b.Line == 0) {
			return b.Line == 0
		}
		if a.Line != b.Line {
			return a.Line < b.Line
		}
		return a.Column < b.Column
	})
	return out
}
