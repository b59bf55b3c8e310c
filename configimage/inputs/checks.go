package inputs

import (
	"bytes"
	"crypto/x509"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"encoding/pem"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"regexp"
	"sort"
	"strings"
)

// Single-value checks with the installer's messages (pkg/validate).

func checkIP(s string) error {
	if net.ParseIP(s) == nil {
		return fmt.Errorf("%q is not a valid IP", s)
	}
	return nil
}

// checkMAC accepts what net.ParseMAC accepts, as validate.MAC does; its
// error reads "address zz: invalid MAC address".
func checkMAC(s string) error {
	_, err := net.ParseMAC(s)
	return err
}

// normalMAC is the lower-case colon form used to compare MACs.
func normalMAC(s string) string {
	if hw, err := net.ParseMAC(s); err == nil {
		return hw.String()
	}
	return strings.ToLower(s)
}

const dns1123SubdomainMsg = "a lowercase RFC 1123 subdomain must consist of lower case alphanumeric characters, '-' or '.', " +
	"and must start and end with an alphanumeric character (e.g. 'example.com', regex used for validation is " +
	`'[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*')`

var dns1123Subdomain = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?(\.[a-z0-9]([-a-z0-9]*[a-z0-9])?)*$`)

// checkSubdomain is k8s IsDNS1123Subdomain aggregated as the installer does.
func checkSubdomain(v string) error {
	var msgs []string
	if len(v) > 253 {
		msgs = append(msgs, "must be no more than 253 characters")
	}
	if !dns1123Subdomain.MatchString(v) {
		msgs = append(msgs, dns1123SubdomainMsg)
	}
	switch len(msgs) {
	case 0:
		return nil
	case 1:
		return errors.New(msgs[0])
	}
	return errors.New("[" + strings.Join(msgs, ", ") + "]")
}

func trimDot(s string) string { return strings.TrimSuffix(s, ".") }

// checkDomainName is validate.DomainName(v, acceptTrailingDot=true).
func checkDomainName(v string) error { return checkSubdomain(trimDot(v)) }

// checkClusterName is validate.ClusterName, or OnPremClusterName on the
// platforms that run their own DNS and load balancers.
func checkClusterName(v string, onPrem bool) error {
	if onPrem && strings.Contains(v, ".") {
		return errors.New("cluster name must not contain '.'")
	}
	return checkSubdomain(v)
}

var forbiddenHostnames = map[string]bool{
	"localhost": true, "localhost.localdomain": true,
	"localhost4": true, "localhost4.localdomain4": true,
	"localhost6": true, "localhost6.localdomain6": true,
}

// checkHostname applies assisted-service's hostname-valid rule
// (docs/reference/assisted-service.md §5.1) at config time, so a bad name fails here rather
// than on a host's validation list.
func checkHostname(v string) error {
	if forbiddenHostnames[v] {
		return fmt.Errorf("hostname %q is forbidden; use a name of the host's own", v)
	}
	if len(v) > 63 || !dns1123Subdomain.MatchString(v) {
		return errors.New("must be a lowercase RFC 1123 name: letters a-z, digits, '-' and '.', " +
			"starting and ending with a letter or digit, at most 63 characters")
	}
	return nil
}

// checkURI is validate.URI: an absolute URI.
func checkURI(v string) error {
	u, err := url.Parse(v)
	if err != nil {
		return err
	}
	if !u.IsAbs() {
		return fmt.Errorf("invalid URI %q (no scheme)", v)
	}
	return nil
}

// checkNTPSource: an IP or a domain name (ValidateNTPServers).
func checkNTPSource(v string) bool {
	return checkIP(v) == nil || checkDomainName(v) == nil
}

// checkPullSecret is validate.ImagePullSecret: JSON with a non-empty
// "auths" object whose entries each carry "auth" or "credsStore".
func checkPullSecret(secret string) error {
	var s struct {
		Auths map[string]map[string]any `json:"auths"`
	}
	if err := json.Unmarshal([]byte(secret), &s); err != nil {
		return err
	}
	if len(s.Auths) == 0 {
		return errors.New("auths required")
	}
	var errs []string
	for _, d := range sortedKeys(s.Auths) {
		a := s.Auths[d]
		_, auth := a["auth"]
		_, store := a["credsStore"]
		if !auth && !store {
			errs = append(errs, fmt.Sprintf("%q requires either auth or credsStore", d))
		}
	}
	switch len(errs) {
	case 0:
		return nil
	case 1:
		return errors.New(errs[0])
	}
	return errors.New("[" + strings.Join(errs, ", ") + "]")
}

// errNoSSHKey is the text golang.org/x/crypto/ssh.ParseAuthorizedKey
// returns, which the installer prints.
var errNoSSHKey = errors.New("ssh: no key found")

var sshKeyTypes = map[string]bool{
	"ssh-rsa": true, "ssh-dss": true, "ssh-ed25519": true,
	"ecdsa-sha2-nistp256": true, "ecdsa-sha2-nistp384": true, "ecdsa-sha2-nistp521": true,
	"sk-ecdsa-sha2-nistp256@openssh.com": true, "sk-ssh-ed25519@openssh.com": true,
}

// parseSSHKey checks that text holds an authorized_keys line (options
// allowed) and returns the key type. Without x/crypto it checks the format,
// not the math: the base64 blob must decode to SSH wire strings, the first
// one naming the same key type as the line.
func parseSSHKey(text string) (string, error) {
	for _, line := range strings.Split(text, "\n") {
		f := strings.Fields(line)
		if len(f) == 0 || strings.HasPrefix(f[0], "#") {
			continue
		}
		for i := 0; i+1 < len(f) && i < 2; i++ { // i == 1 skips an options field
			if sshKeyTypes[f[i]] && sshBlobOK(f[i], f[i+1]) {
				return f[i], nil
			}
		}
	}
	return "", errNoSSHKey
}

func sshBlobOK(keyType, b64 string) bool {
	blob, err := base64.StdEncoding.DecodeString(b64)
	if err != nil {
		return false
	}
	var parts [][]byte
	for len(blob) > 0 {
		if len(blob) < 4 {
			return false
		}
		n := binary.BigEndian.Uint32(blob)
		if uint64(n) > uint64(len(blob)-4) {
			return false
		}
		parts = append(parts, blob[4:4+n])
		blob = blob[4+n:]
	}
	if len(parts) < 2 || string(parts[0]) != keyType {
		return false
	}
	switch keyType {
	case "ssh-ed25519":
		return len(parts) == 2 && len(parts[1]) == 32
	case "ssh-rsa":
		return len(parts) == 3
	}
	return true
}

// checkCABundle: one or more PEM CERTIFICATE blocks that parse as X.509.
func checkCABundle(v string) error {
	rest := []byte(v)
	n := 0
	for len(bytes.TrimSpace(rest)) > 0 {
		var b *pem.Block
		b, rest = pem.Decode(rest)
		if b == nil {
			return errors.New("invalid block; expected PEM-encoded X.509 certificates")
		}
		if b.Type != "CERTIFICATE" {
			return fmt.Errorf("invalid block type %q; expected CERTIFICATE", b.Type)
		}
		if _, err := x509.ParseCertificate(b.Bytes); err != nil {
			return err
		}
		n++
	}
	if n == 0 {
		return errors.New("invalid block; expected PEM-encoded X.509 certificates")
	}
	return nil
}

// Image repository names (a subset of distribution/reference's grammar).
var (
	repoDomain = `(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9])(?:\.(?:[a-zA-Z0-9]|[a-zA-Z0-9][a-zA-Z0-9-]*[a-zA-Z0-9]))*(?::[0-9]+)?`
	repoPath   = `[a-z0-9]+(?:(?:[._]|__|[-]*)[a-z0-9]+)*`
	repoName   = regexp.MustCompile(`^(?:` + repoDomain + `/)?` + repoPath + `(?:/` + repoPath + `)*$`)
	repoHost   = regexp.MustCompile(`^` + repoDomain + `$`)
)

// checkRepository is validateNamedRepository: a repository, or a bare
// registry host[:port], but not a reference with a tag or digest.
func checkRepository(r string) error {
	if strings.Contains(r, "@") {
		return errors.New("must be repository--not reference")
	}
	last := r[strings.LastIndex(r, "/")+1:]
	if strings.Contains(r, "/") && strings.Contains(last, ":") {
		return errors.New("must be repository--not reference")
	}
	if repoName.MatchString(r) || repoHost.MatchString(r) {
		return nil
	}
	return errors.New("failed to parse: invalid reference format")
}

// cidr is a parsed network; ok is false when the text did not parse.
type cidr struct {
	text   string
	prefix netip.Prefix
	ok     bool
	err    error
}

func parseCIDR(s string) cidr {
	_, _, err := net.ParseCIDR(s) // its error text is the installer's (ipnet)
	if err != nil {
		return cidr{text: s, err: err}
	}
	p, err := netip.ParsePrefix(s)
	if err != nil {
		return cidr{text: s, err: err}
	}
	if p.Addr().Is4In6() {
		p = netip.PrefixFrom(p.Addr().Unmap(), p.Bits()-96)
	}
	return cidr{text: s, prefix: p, ok: true}
}

func (c cidr) is6() bool { return c.prefix.Addr().Is6() }

// String is the canonical form the installer prints (ipnet.IPNet.String).
func (c cidr) String() string {
	if !c.ok {
		return c.text
	}
	return c.prefix.String()
}

func (c cidr) contains(ip netip.Addr) bool { return c.ok && c.prefix.Contains(ip.Unmap()) }

// overlaps is validate.DoCIDRsOverlap: one contains the other's address.
func overlaps(a, b cidr) bool {
	return a.ok && b.ok && (a.prefix.Contains(b.prefix.Addr()) || b.prefix.Contains(a.prefix.Addr()))
}

// checkSubnetCIDR is validate.SubnetCIDR.
func checkSubnetCIDR(c cidr) error {
	if c.prefix.Addr().IsUnspecified() {
		return errors.New("address must be specified")
	}
	if m := c.prefix.Masked(); m.Addr() != c.prefix.Addr() {
		return fmt.Errorf("invalid network address. got %s, expecting %s", c.String(), m.String())
	}
	return nil
}

func parseAddr(s string) (netip.Addr, bool) {
	a, err := netip.ParseAddr(s)
	if err != nil {
		if ip := net.ParseIP(s); ip != nil { // e.g. IPv4 with leading zeros
			a, _ = netip.AddrFromSlice(ip)
			return a.Unmap(), true
		}
		return netip.Addr{}, false
	}
	return a.Unmap(), true
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if x == s {
			return true
		}
	}
	return false
}

func sortStrings(s []string) { sort.Strings(s) }

func sortedKeys[V any](m map[string]V) []string {
	out := make([]string, 0, len(m))
	for k := range m {
		out = append(out, k)
	}
	sort.Strings(out)
	return out
}
