package gather

import (
	"bytes"
	"encoding/base64"
	"regexp"
	"sort"
	"strings"
)

// Redacted replaces the value of a secret. The key, variable or field name
// around it stays, so a redacted file still says how the host is set up.
const Redacted = "<redacted>"

// redactedKey replaces a whole private key block. It must not contain the
// words "PRIVATE KEY" in capitals: support tools (and our tests) grep for
// them.
const redactedKey = "<redacted private key>"

// minKnown is the shortest secret value replaced wherever it appears: a
// shorter one ("admin", a PIN) would blank out ordinary words.
const minKnown = 8

// secretWords name a secret anywhere in a key ("USER_AUTH_TOKEN",
// "kubeadmin-password", "pull_secret", "psk"), after normalize.
var secretWords = []string{
	"password", "passwd", "passphrase", "secret", "token", "psk",
	"privatekey", "presharedkey", "wepkey", "mkacak", "apikey", "authorization",
}

// secretSuffixes name a secret at the end of a key ("DB_PASS",
// "agentAuth", "bmc_pwd"); secretExact only as the whole key.
var (
	secretSuffixes = []string{"pass", "pwd", "auth"}
	secretExact    = []string{"pin"}
)

// notSecretSuffixes mark keys that only refer to a secret or describe it:
// "pullSecretRef", "secretName", "pull_secret_set", "psk-flags",
// "tokenFile", "AUTH_TOKEN_EXPIRY", a file name like "pull-secret.yaml".
var notSecretSuffixes = []string{"ref", "name", "names", "set", "flags", "file", "path", "dir", "type", "id", "ids", "yaml", "yml", "json"}

// normalize lowercases a key and drops everything but letters and digits:
// USER_AUTH_TOKEN, user-auth-token and userAuthToken compare equal.
func normalize(key string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(key) {
		if (r >= 'a' && r <= 'z') || (r >= '0' && r <= '9') {
			b.WriteRune(r)
		}
	}
	return b.String()
}

// SecretName reports whether a key of a config file (an env variable, a
// JSON or YAML field, a keyfile setting, a file name) names a secret whose
// value must not leave the host.
func SecretName(key string) bool {
	n := normalize(key)
	if n == "" || strings.Contains(n, "expir") {
		return false
	}
	for _, s := range notSecretSuffixes {
		if strings.HasSuffix(n, s) && n != s {
			return false
		}
	}
	for _, w := range secretWords {
		if strings.Contains(n, w) {
			return true
		}
	}
	for _, s := range secretSuffixes {
		if strings.HasSuffix(n, s) && !strings.HasSuffix(n, "bypass") {
			return true
		}
	}
	for _, s := range secretExact {
		if n == s {
			return true
		}
	}
	return false
}

// Redactor removes secrets from the files of a bundle. The format passes
// (Env, Keyfile, YAML, JSON) redact values by the name of their key and
// remember each value they remove; Text then removes what has a secret's
// shape in any text (private key blocks, JWTs, passwords in URLs, secret
// key=value pairs) and every remembered value wherever it appears, so a
// token redacted in an env file is redacted from the journal too.
//
// A Redactor is not safe for concurrent use.
type Redactor struct {
	known    map[string]bool
	replacer *strings.Replacer // nil when known changed since it was built
}

// NewRedactor returns a Redactor that knows the given secret values.
func NewRedactor(known ...string) *Redactor {
	r := &Redactor{known: map[string]bool{}}
	r.Learn(known...)
	return r
}

// Learn adds secret values that Text replaces wherever they appear. Values
// shorter than 8 bytes are ignored: they would match ordinary text.
func (r *Redactor) Learn(values ...string) {
	for _, v := range values {
		v = strings.TrimSpace(v)
		if len(v) < minKnown || v == Redacted || r.known[v] {
			continue
		}
		r.known[v] = true
		r.replacer = nil
		// A pull secret's auth is base64 of user:password; the password
		// alone may turn up too.
		if dec, err := base64.StdEncoding.DecodeString(v); err == nil && isPrintable(dec) {
			if _, pass, ok := strings.Cut(string(dec), ":"); ok {
				r.Learn(string(dec), pass)
			}
		}
	}
}

// Known returns how many secret values the Redactor knows.
func (r *Redactor) Known() int { return len(r.known) }

func isPrintable(b []byte) bool {
	for _, c := range b {
		if c < 0x20 || c > 0x7e {
			return false
		}
	}
	return len(b) > 0
}

// Shapes of secrets in any text.
var (
	// A PEM private key block of any kind (PKCS#8, EC, RSA, OPENSSH,
	// ENCRYPTED), also with its newlines escaped inside a JSON string.
	pemKeyRE   = regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----[\s\S]*?-----END ([A-Z0-9]+ )*PRIVATE KEY-----`)
	pemBeginRE = regexp.MustCompile(`-----BEGIN ([A-Z0-9]+ )*PRIVATE KEY-----`)
	// base64 of "-----BEGIN": a PEM block carried on one line, as
	// EC_PRIVATE_KEY_PEM is.
	b64PEMRE = regexp.MustCompile(`LS0tLS1CRUdJTi[A-Za-z0-9+/=]*`)
	// A JWT: base64url header and payload, both JSON objects ("eyJ" is
	// base64 of `{"`), and a signature that alg none leaves empty.
	jwtRE = regexp.MustCompile(`eyJ[A-Za-z0-9_-]+\.eyJ[A-Za-z0-9_-]*\.[A-Za-z0-9_-]*`)
	// user:password@ in a URL (a proxy, a registry mirror).
	urlPassRE = regexp.MustCompile(`([A-Za-z][A-Za-z0-9+.-]*://[^/\s:@"']*):([^@\s/"']+)@`)
	// "key": "value" in JSON, also inside a JSON string (\"key\":\"value\"):
	// a pull secret in a YAML manifest, install-config overrides.
	// The quotes' backslashes are captured so that only quotes of one
	// nesting level pair up.
	jsonPairRE = regexp.MustCompile(`(\\*)"([A-Za-z0-9_.\-]+)(\\*)"([ \t]*:[ \t]*)(\\*)"([^"\\]*)(\\*)"`)
	// key=value or key: value on a line of a log or a config file whose key
	// has a secret's word in it; SecretName decides.
	pairRE = regexp.MustCompile(`(?i)([A-Za-z0-9_.\-]*(?:pass|pwd|secret|token|psk|auth|key|pin)[A-Za-z0-9_.\-]*)([ \t]*[=:][ \t]*)("?)((?:(?:bearer|basic)[ \t]+)?[^\s"',;}\]]+)`)
)

// Text removes secrets from any text: private key blocks (also base64
// encoded), JWTs, passwords in URLs, values of secret JSON fields and
// key=value pairs, and every value the Redactor knows. It returns the text
// and how many secrets it removed.
func (r *Redactor) Text(b []byte) ([]byte, int) {
	n := 0
	count := func(re *regexp.Regexp, repl func([]byte) []byte) {
		b = re.ReplaceAllFunc(b, func(m []byte) []byte {
			out := repl(m)
			if !bytes.Equal(out, m) {
				n++
			}
			return out
		})
	}
	// The rules below without a literal to look for are slow on a large
	// journal (a few MB/s); they run only on the lines that may match.
	perLine := func(want func(line []byte) bool, re *regexp.Regexp, repl func([]byte) []byte) {
		var out []byte
		rest := b
		for len(rest) > 0 {
			line := rest
			if i := bytes.IndexByte(rest, '\n'); i >= 0 {
				line = rest[:i+1]
			}
			rest = rest[len(line):]
			if want(line) {
				line = re.ReplaceAllFunc(line, func(m []byte) []byte {
					o := repl(m)
					if !bytes.Equal(o, m) {
						n++
					}
					return o
				})
			}
			out = append(out, line...)
		}
		b = out
	}
	count(pemKeyRE, func([]byte) []byte { return []byte(redactedKey) })
	// A block cut off before its END line (a log's tail): up to the next
	// blank line, or the end.
	for {
		loc := pemBeginRE.FindIndex(b)
		if loc == nil {
			break
		}
		end := len(b)
		if i := bytes.Index(b[loc[1]:], []byte("\n\n")); i >= 0 {
			end = loc[1] + i
		}
		b = append(append(append([]byte{}, b[:loc[0]]...), redactedKey...), b[end:]...)
		n++
	}
	count(b64PEMRE, func(m []byte) []byte {
		if decodesToKey(m) {
			return []byte(Redacted)
		}
		return m
	})
	count(jwtRE, func([]byte) []byte { return []byte(Redacted) })
	perLine(func(l []byte) bool { return bytes.Contains(l, []byte("://")) && bytes.IndexByte(l, '@') >= 0 }, urlPassRE, func(m []byte) []byte {
		sub := urlPassRE.FindSubmatch(m)
		if string(sub[2]) == Redacted {
			return m
		}
		return []byte(string(sub[1]) + ":" + Redacted + "@")
	})
	perLine(func(l []byte) bool { return bytes.Contains(l, []byte(`":`)) || bytes.Contains(l, []byte(`" :`)) }, jsonPairRE, func(m []byte) []byte {
		sub := jsonPairRE.FindSubmatch(m)
		esc := len(sub[1])
		v := string(sub[6])
		if len(sub[3]) != esc || len(sub[5]) != esc || len(sub[7]) != esc ||
			!SecretName(string(sub[2])) || v == "" || v == Redacted {
			return m
		}
		r.Learn(v)
		q := string(sub[1]) + `"`
		return []byte(q + string(sub[2]) + q + string(sub[4]) + q + Redacted + q)
	})
	perLine(mayHoldPair, pairRE, func(m []byte) []byte {
		sub := pairRE.FindSubmatch(m)
		v := string(sub[4])
		if !SecretName(string(sub[1])) || v == Redacted || strings.HasPrefix(v, "<redacted") || blockRE.MatchString(v) {
			return m
		}
		r.Learn(v)
		return []byte(string(sub[1]) + string(sub[2]) + string(sub[3]) + Redacted)
	})
	if rep := r.knownReplacer(); rep != nil {
		out := rep.Replace(string(b))
		if out != string(b) {
			n += strings.Count(out, Redacted) - strings.Count(string(b), Redacted)
			b = []byte(out)
		}
	}
	return b, n
}

// pairWords are the words pairRE's keys contain, lower case.
var pairWords = [][]byte{[]byte("pass"), []byte("pwd"), []byte("secret"), []byte("token"), []byte("psk"), []byte("auth"), []byte("key"), []byte("pin")}

// mayHoldPair reports whether a line has a separator and one of
// pairWords, whatever their case.
func mayHoldPair(line []byte) bool {
	if bytes.IndexByte(line, '=') < 0 && bytes.IndexByte(line, ':') < 0 {
		return false
	}
	lower := bytes.ToLower(line)
	for _, w := range pairWords {
		if bytes.Contains(lower, w) {
			return true
		}
	}
	return false
}

// knownReplacer replaces every known value, longest first so that a value
// containing another is replaced whole.
func (r *Redactor) knownReplacer() *strings.Replacer {
	if len(r.known) == 0 {
		return nil
	}
	if r.replacer == nil {
		vs := make([]string, 0, len(r.known))
		for v := range r.known {
			vs = append(vs, v)
		}
		sort.Slice(vs, func(i, j int) bool {
			if len(vs[i]) != len(vs[j]) {
				return len(vs[i]) > len(vs[j])
			}
			return vs[i] < vs[j]
		})
		pairs := make([]string, 0, 2*len(vs))
		for _, v := range vs {
			pairs = append(pairs, v, Redacted)
		}
		r.replacer = strings.NewReplacer(pairs...)
	}
	return r.replacer
}

// decodesToKey reports whether a base64 run decodes to a PEM private key.
func decodesToKey(b []byte) bool {
	s := strings.TrimRight(string(b), "=")
	dec, err := base64.RawStdEncoding.DecodeString(s[:len(s)/4*4])
	if err != nil {
		return false
	}
	return bytes.Contains(dec, []byte("PRIVATE KEY"))
}

// envLineRE is NAME=VALUE in an env file (systemd EnvironmentFile, a shell
// fragment with export).
var envLineRE = regexp.MustCompile(`^(\s*(?:export\s+)?)([A-Za-z_][A-Za-z0-9_.\-]*)(\s*=\s*)(.*?)(\s*)$`)

// Env redacts the values of secret variables in an env file, keeping their
// names: USER_AUTH_TOKEN=<redacted>.
func (r *Redactor) Env(b []byte) ([]byte, int) {
	return r.assignments(b, envLineRE, func(_, name string) bool { return SecretName(name) })
}

// assignments redacts the values of the lines re matches (groups: indent,
// name, separator, value, trailing space) whose name secret says is one,
// in the INI section it is in ("" before any).
func (r *Redactor) assignments(b []byte, re *regexp.Regexp, secret func(section, name string) bool) ([]byte, int) {
	n := 0
	lines := strings.Split(string(b), "\n")
	section := ""
	for i, line := range lines {
		if t := strings.TrimSpace(line); strings.HasPrefix(t, "[") && strings.HasSuffix(t, "]") {
			section = strings.ToLower(strings.Trim(t, "[] "))
			continue
		}
		m := re.FindStringSubmatch(line)
		if m == nil || !secret(section, m[2]) {
			continue
		}
		v := unquote(m[4])
		if v == "" || v == Redacted {
			continue
		}
		r.Learn(v)
		lines[i] = m[1] + m[2] + m[3] + Redacted + m[5]
		n++
	}
	return []byte(strings.Join(lines, "\n")), n
}

// keyfileLineRE is key=value in an INI file (NetworkManager keyfiles,
// mac_interface.ini) or key = value in TOML (registries.conf).
var keyfileLineRE = regexp.MustCompile(`^(\s*)([^=#;\[\s][^=]*?)(\s*=\s*)(.*?)(\s*)$`)

// Keyfile redacts secret settings of an INI file: in a NetworkManager
// keyfile psk, password, wep-key0, private-key-password, pin, every
// setting of [vpn-secrets]; the setting names stay.
func (r *Redactor) Keyfile(b []byte) ([]byte, int) {
	return r.assignments(b, keyfileLineRE, func(section, name string) bool {
		return SecretName(name) || section == "vpn-secrets"
	})
}

// unquote strips one pair of matching quotes.
func unquote(s string) string {
	if len(s) >= 2 && (s[0] == '"' || s[0] == '\'') && s[len(s)-1] == s[0] {
		return s[1 : len(s)-1]
	}
	return s
}

// yamlKeyRE is a mapping key on a YAML line, optionally as a sequence
// item: `  key: value`, `- "key": value`.
var yamlKeyRE = regexp.MustCompile(`^(\s*(?:-\s+)*)("[^"]*"|'[^']*'|[^\s"'#:\-][^#:]*?|-[^\s#:][^#:]*?)(\s*:)(?:(\s+)(.*?))?(\s*)$`)

// blockRE is a block scalar's indicator: | or > with chomping and
// indentation modifiers, and a comment.
var blockRE = regexp.MustCompile(`^[|>][-+0-9]*(\s+#.*)?$`)

// YAML redacts the values of secret keys in a YAML document, line by line
// so that the file keeps its layout and comments: a scalar becomes
// <redacted>, a block scalar (|, >) becomes one <redacted> line, and a
// scalar holding JSON (a pull secret) is redacted field by field. Keys
// whose value is a mapping or a sequence are left to their own lines.
func (r *Redactor) YAML(b []byte) ([]byte, int) {
	n := 0
	lines := strings.Split(string(b), "\n")
	out := make([]string, 0, len(lines))
	for i := 0; i < len(lines); i++ {
		line := lines[i]
		m := yamlKeyRE.FindStringSubmatch(line)
		if m == nil || m[5] == "" {
			out = append(out, line)
			continue
		}
		indent, v, secret := len(m[1]), m[5], SecretName(unquote(m[2]))
		if blockRE.MatchString(v) {
			// The block is every following line indented deeper than the
			// key, blank lines included. Its text is not YAML (a JSON pull
			// secret, a script): only Text looks into another key's block.
			var body []string
			for i+1 < len(lines) && (strings.TrimSpace(lines[i+1]) == "" || leading(lines[i+1]) > indent) {
				i++
				body = append(body, lines[i])
			}
			for len(body) > 0 && strings.TrimSpace(body[len(body)-1]) == "" {
				body = body[:len(body)-1]
				i--
			}
			if !secret || len(body) == 0 {
				out = append(append(out, line), body...)
				continue
			}
			r.Learn(strings.TrimSpace(strings.Join(body, "\n")))
			out = append(out, line, strings.Repeat(" ", leading(body[0]))+Redacted)
			n++
			continue
		}
		if !secret {
			out = append(out, line)
			continue
		}
		s, quote, rest := yamlScalar(v)
		if s == "" || s == Redacted || s == "~" || s == "null" {
			out = append(out, line)
			continue
		}
		repl := quote + Redacted + quote + rest
		if red, k, ok := r.jsonString(s); ok {
			repl, n = "'"+strings.ReplaceAll(red, "'", "''")+"'"+rest, n+k
		} else {
			r.Learn(s)
			n++
		}
		out = append(out, m[1]+m[2]+m[3]+m[4]+repl+m[6])
	}
	return []byte(strings.Join(out, "\n")), n
}

// yamlScalar splits a one-line scalar: its value without quotes, the
// quote, and what follows the closing quote (a comma of JSON written as
// YAML). A plain scalar's trailing comment is dropped.
func yamlScalar(v string) (value, quote, rest string) {
	if q := v[:1]; q == "'" || q == `"` {
		for i := 1; i < len(v); i++ {
			switch {
			case q == `"` && v[i] == '\\':
				i++
			case q == "'" && v[i] == '\'' && i+1 < len(v) && v[i+1] == '\'':
				i++
			case v[i:i+1] == q:
				val := v[1:i]
				if q == "'" {
					val = strings.ReplaceAll(val, "''", "'")
				}
				return val, q, v[i+1:]
			}
		}
	}
	if i := strings.Index(v, " #"); i >= 0 {
		v = v[:i]
	}
	return strings.TrimSpace(v), "", ""
}

func leading(s string) int { return len(s) - len(strings.TrimLeft(s, " \t")) }
