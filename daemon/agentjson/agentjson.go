// Package agentjson reads, fast, the two documents that dominate node
// zero's input at scale: a connectivity-check step reply and the report
// inside it. At a thousand hosts each report names 999 peers (300 KB of
// JSON, escaped again inside the reply), and encoding/json spends most of
// node zero's CPU on them: the reply's body is scanned twice and its output
// unquoted, then the report is decoded into ten thousand small structs and
// strings that are garbage a moment later.
//
// The readers here walk the text once and hand out substrings of it. They
// are strict on purpose: they accept only the plain form an agent writes
// (known keys spelled exactly, each once; no null; report strings in plain
// ASCII) and report !ok on anything else, valid or not. The caller then
// decodes with encoding/json, which gives the document its meaning and any
// error its message. So whatever a fast path accepts, encoding/json accepts
// and decodes to the same values (FuzzFastJSON holds the two side by side).
//
// Only the service reads these documents, so the package lives in the
// server, beside its two users: daemon/api decodes step reply bodies with
// DecodeStepReply, and daemon/validation compacts connectivity reports
// with ScanConnectivity. It is a leaf of daemon: it imports wire (the
// types it fills) and the standard library.
package agentjson

import (
	"slices"
	"strconv"
	"strings"
	"unicode/utf8"
	"unsafe"

	"github.com/nodezero/nodezero/wire"
)

// maxSkipDepth bounds the nesting of an unknown value the readers skip;
// deeper documents go to encoding/json.
const maxSkipDepth = 64

// jsonReader reads one JSON document from s. Every method returns false
// when the text is not in the form the fast paths accept.
type jsonReader struct {
	s string
	i int
	// borrowed: s is a view of a caller's buffer that will be reused;
	// text copies what it returns.
	borrowed bool
}

func (p *jsonReader) space() {
	for p.i < len(p.s) {
		switch p.s[p.i] {
		case ' ', '\t', '\n', '\r':
			p.i++
		default:
			return
		}
	}
}

// next skips white space and consumes c if it comes next.
func (p *jsonReader) next(c byte) bool {
	p.space()
	if p.i < len(p.s) && p.s[p.i] == c {
		p.i++
		return true
	}
	return false
}

// end: nothing but white space is left.
func (p *jsonReader) end() bool {
	p.space()
	return p.i == len(p.s)
}

// plain reads a string of printable ASCII with no escapes, and returns it
// as a substring of the text: the form of every key, and of every value in
// a connectivity report.
func (p *jsonReader) plain() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start := p.i
	for p.i < len(p.s) {
		c := p.s[p.i]
		switch {
		case c == '"':
			p.i++
			return p.s[start : p.i-1], true
		case c == '\\' || c < 0x20 || c >= utf8.RuneSelf:
			return "", false
		}
		p.i++
	}
	return "", false
}

// text reads a string that may hold the short escapes (\" \\ \/ \b \f \n
// \r \t) and valid UTF-8, as a step reply's output does: JSON escaped once
// more. \u escapes, which encoding/json turns into runes with its own rules
// for broken surrogates, are left to it.
func (p *jsonReader) text() (string, bool) {
	if !p.next('"') {
		return "", false
	}
	start, escapes, high := p.i, 0, false
	for ; p.i < len(p.s); p.i++ {
		c := p.s[p.i]
		switch {
		case c == '"':
			raw := p.s[start:p.i]
			p.i++
			if high && !utf8.ValidString(raw) {
				return "", false
			}
			if escapes == 0 {
				if p.borrowed {
					raw = strings.Clone(raw)
				}
				return raw, true
			}
			return unescape(raw, len(raw)-escapes)
		case c == '\\':
			p.i++
			if p.i == len(p.s) {
				return "", false
			}
			switch p.s[p.i] {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
				escapes++
			default:
				return "", false
			}
		case c < 0x20:
			return "", false
		case c >= utf8.RuneSelf:
			high = true
		}
	}
	return "", false
}

// unescape resolves the short escapes of raw, already checked by text,
// into a new string of n bytes.
func unescape(raw string, n int) (string, bool) {
	b := make([]byte, 0, n)
	for i := 0; i < len(raw); i++ {
		c := raw[i]
		if c != '\\' {
			b = append(b, c)
			continue
		}
		i++
		switch raw[i] {
		case 'b':
			c = '\b'
		case 'f':
			c = '\f'
		case 'n':
			c = '\n'
		case 'r':
			c = '\r'
		case 't':
			c = '\t'
		default: // " \ /
			c = raw[i]
		}
		b = append(b, c)
	}
	if len(b) == 0 {
		return "", true
	}
	// b is never written again: the string may share its memory
	// (strings.Builder does the same).
	return unsafe.String(&b[0], len(b)), true
}

// number reads a number literal in JSON's grammar and returns its text.
func (p *jsonReader) number() (string, bool) {
	p.space()
	start := p.i
	if p.i < len(p.s) && p.s[p.i] == '-' {
		p.i++
	}
	switch {
	case p.i < len(p.s) && p.s[p.i] == '0':
		p.i++
	case p.i < len(p.s) && p.s[p.i] >= '1' && p.s[p.i] <= '9':
		p.digits()
	default:
		return "", false
	}
	if p.i < len(p.s) && p.s[p.i] == '.' {
		p.i++
		if !p.digits() {
			return "", false
		}
	}
	if p.i < len(p.s) && (p.s[p.i] == 'e' || p.s[p.i] == 'E') {
		p.i++
		if p.i < len(p.s) && (p.s[p.i] == '+' || p.s[p.i] == '-') {
			p.i++
		}
		if !p.digits() {
			return "", false
		}
	}
	return p.s[start:p.i], true
}

func (p *jsonReader) digits() bool {
	start := p.i
	for p.i < len(p.s) && p.s[p.i] >= '0' && p.s[p.i] <= '9' {
		p.i++
	}
	return p.i > start
}

func (p *jsonReader) float() (float64, bool) {
	lit, ok := p.number()
	if !ok {
		return 0, false
	}
	f, err := strconv.ParseFloat(lit, 64)
	return f, err == nil
}

func (p *jsonReader) int64() (int64, bool) {
	lit, ok := p.number()
	if !ok {
		return 0, false
	}
	n, err := strconv.ParseInt(lit, 10, 64)
	return n, err == nil
}

func (p *jsonReader) bool() (bool, bool) {
	p.space()
	switch {
	case strings.HasPrefix(p.s[p.i:], "true"):
		p.i += 4
		return true, true
	case strings.HasPrefix(p.s[p.i:], "false"):
		p.i += 5
		return false, true
	}
	return false, false
}

// skip reads any one JSON value, checking its grammar: the value of a key
// the fast path does not know, which encoding/json ignores.
func (p *jsonReader) skip(depth int) bool {
	if depth > maxSkipDepth {
		return false
	}
	p.space()
	if p.i == len(p.s) {
		return false
	}
	switch c := p.s[p.i]; {
	case c == '"':
		return p.skipString()
	case c == '{':
		p.i++
		if p.next('}') {
			return true
		}
		for {
			if !p.skipString() || !p.next(':') || !p.skip(depth+1) {
				return false
			}
			if p.next('}') {
				return true
			}
			if !p.next(',') {
				return false
			}
			p.space()
		}
	case c == '[':
		p.i++
		if p.next(']') {
			return true
		}
		for {
			if !p.skip(depth + 1) {
				return false
			}
			if p.next(']') {
				return true
			}
			if !p.next(',') {
				return false
			}
		}
	case c == 't' || c == 'f':
		_, ok := p.bool()
		return ok
	case c == 'n':
		if strings.HasPrefix(p.s[p.i:], "null") {
			p.i += 4
			return true
		}
		return false
	default:
		_, ok := p.number()
		return ok
	}
}

// skipString reads a string with any valid escapes; bytes from 0x80 up are
// taken as they are, as encoding/json's scanner takes them.
func (p *jsonReader) skipString() bool {
	if !p.next('"') {
		return false
	}
	for p.i < len(p.s) {
		c := p.s[p.i]
		p.i++
		switch {
		case c == '"':
			return true
		case c < 0x20:
			return false
		case c == '\\':
			if p.i == len(p.s) {
				return false
			}
			e := p.s[p.i]
			p.i++
			switch e {
			case '"', '\\', '/', 'b', 'f', 'n', 'r', 't':
			case 'u':
				if p.i+4 > len(p.s) {
					return false
				}
				for _, h := range []byte(p.s[p.i : p.i+4]) {
					if !strings.ContainsRune("0123456789abcdefABCDEF", rune(h)) {
						return false
					}
				}
				p.i += 4
			default:
				return false
			}
		}
	}
	return false
}

// object reads an object whose keys are plain strings, calling field for
// each; field reads the value and returns false to give up. A key that
// comes twice is given up on (encoding/json keeps the last value), as is an
// unknown key that matches a known one but for case (encoding/json matches
// keys without regard to case): field gets the key, and known lists the
// keys it reads, to check the others against.
func (p *jsonReader) object(known []string, field func(key string) bool) bool {
	if !p.next('{') {
		return false
	}
	if p.next('}') {
		return true
	}
	var seen uint32 // bit i: known[i] was read
	for {
		key, ok := p.plain()
		if !ok || !p.next(':') {
			return false
		}
		k := slices.Index(known, key)
		if k < 0 && slices.ContainsFunc(known, func(name string) bool { return strings.EqualFold(key, name) }) {
			return false
		}
		if k >= 0 {
			if seen&(1<<k) != 0 || !field(key) {
				return false
			}
			seen |= 1 << k
		} else if !p.skip(1) {
			return false
		}
		if p.next('}') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

// array reads an array, calling elem for each element; elem reads it.
func (p *jsonReader) array(elem func() bool) bool {
	if !p.next('[') {
		return false
	}
	if p.next(']') {
		return true
	}
	for {
		if !elem() {
			return false
		}
		if p.next(']') {
			return true
		}
		if !p.next(',') {
			return false
		}
	}
}

var stepReplyKeys = []string{"step_type", "step_id", "exit_code", "output", "error"}

// DecodeStepReply decodes a step reply body in the form agents write it
// (see the fast paths above). ok is false when it did not: decode b with
// encoding/json then, for the reply's meaning or its error.
func DecodeStepReply(b []byte, r *wire.StepReply) (ok bool) {
	*r = wire.StepReply{}
	if len(b) == 0 {
		return false
	}
	// b is read in place; every string kept is a copy (borrowed).
	p := jsonReader{s: unsafe.String(&b[0], len(b)), borrowed: true}
	ok = p.object(stepReplyKeys, func(key string) bool {
		var ok bool
		switch key {
		case "step_type":
			var s string
			s, ok = p.text()
			r.StepType = wire.StepType(s)
		case "step_id":
			r.StepID, ok = p.text()
		case "exit_code":
			r.ExitCode, ok = p.int64()
		case "output":
			r.Output, ok = p.text()
		case "error":
			r.Error, ok = p.text()
		}
		return ok
	})
	if !ok || !p.end() {
		*r = wire.StepReply{}
		return false
	}
	return true
}
