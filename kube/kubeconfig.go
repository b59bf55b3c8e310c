package kube

import (
	"bytes"
	"encoding/base64"
	"errors"
	"fmt"
	"net/url"
	"os"
	"path/filepath"
	"strings"

	"gopkg.in/yaml.v3"
)

// Config is what a client needs from a kubeconfig: the API's address, the
// CA bundle that signs its serving certificate, and the user's credentials
// (a client certificate and key, or a bearer token).
type Config struct {
	// Server is the API's URL, https://host:port.
	Server string
	// TLSServerName, when set, is the name the serving certificate must
	// carry instead of Server's host (kubeconfig's tls-server-name).
	TLSServerName string
	// CAData is the PEM bundle trusted for the serving certificate.
	CAData []byte
	// CertData and KeyData are the client certificate and its key (PEM).
	CertData, KeyData []byte
	// Token is a bearer token, the alternative to a client certificate.
	Token string

	// Context, Cluster and User name the kubeconfig entries used.
	Context, Cluster, User string
}

// ErrKubeconfig: a kubeconfig that cannot be used. The error's text names
// the file, the line and the field.
var ErrKubeconfig = errors.New("kubeconfig")

// LoadKubeconfig reads a kubeconfig file and returns its current context's
// Config. Files it names (certificate-authority, client-certificate,
// client-key) are read relative to the kubeconfig's folder.
func LoadKubeconfig(path string) (*Config, error) {
	b, err := os.ReadFile(path)
	if err != nil {
		return nil, fmt.Errorf("read kubeconfig: %w", err)
	}
	return ParseKubeconfig(b, path)
}

// scalar is a YAML scalar with the place it was read from.
type scalar struct {
	Value     string
	Line, Col int
	Set       bool
}

func (s *scalar) UnmarshalYAML(n *yaml.Node) error {
	s.Line, s.Col, s.Set = n.Line, n.Column, true
	if n.Kind != yaml.ScalarNode {
		return fmt.Errorf("line %d: want a single value, not a list or map", n.Line)
	}
	s.Value = n.Value
	return nil
}

type kubeconfigFile struct {
	CurrentContext scalar `yaml:"current-context"`
	Clusters       []struct {
		Name    scalar `yaml:"name"`
		Cluster struct {
			Server        scalar `yaml:"server"`
			TLSServerName scalar `yaml:"tls-server-name"`
			CA            scalar `yaml:"certificate-authority"`
			CAData        scalar `yaml:"certificate-authority-data"`
			Insecure      scalar `yaml:"insecure-skip-tls-verify"`
			ProxyURL      scalar `yaml:"proxy-url"`
		} `yaml:"cluster"`
	} `yaml:"clusters"`
	Contexts []struct {
		Name    scalar `yaml:"name"`
		Context struct {
			Cluster scalar `yaml:"cluster"`
			User    scalar `yaml:"user"`
		} `yaml:"context"`
	} `yaml:"contexts"`
	Users []struct {
		Name scalar `yaml:"name"`
		User struct {
			Cert      scalar `yaml:"client-certificate"`
			CertData  scalar `yaml:"client-certificate-data"`
			Key       scalar `yaml:"client-key"`
			KeyData   scalar `yaml:"client-key-data"`
			Token     scalar `yaml:"token"`
			TokenFile scalar `yaml:"tokenFile"`
		} `yaml:"user"`
	} `yaml:"users"`
}

// ParseKubeconfig reads a kubeconfig's bytes; name is the file's path, for
// errors and for the files it names.
func ParseKubeconfig(b []byte, name string) (*Config, error) {
	var f kubeconfigFile
	if err := yaml.Unmarshal(b, &f); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrKubeconfig, name, err)
	}
	bad := func(s scalar, field, format string, a ...any) error {
		at := ""
		if s.Set {
			at = fmt.Sprintf(":%d:%d", s.Line, s.Col)
		}
		return fmt.Errorf("%w %s%s: %s: %s", ErrKubeconfig, name, at, field, fmt.Sprintf(format, a...))
	}
	if f.CurrentContext.Value == "" {
		return nil, bad(f.CurrentContext, "current-context", "not set; want the name of one of contexts[]")
	}
	cfg := &Config{Context: f.CurrentContext.Value}
	ci := -1
	for i, c := range f.Contexts {
		if c.Name.Value == cfg.Context {
			ci = i
		}
	}
	if ci < 0 {
		return nil, bad(f.CurrentContext, "current-context", "%q names no entry of contexts[]", cfg.Context)
	}
	ctx := f.Contexts[ci].Context
	field := func(i int, list, rest string) string { return fmt.Sprintf("%s[%d].%s", list, i, rest) }
	cfg.Cluster, cfg.User = ctx.Cluster.Value, ctx.User.Value

	cl := -1
	for i, c := range f.Clusters {
		if c.Name.Value == cfg.Cluster {
			cl = i
		}
	}
	if cl < 0 {
		return nil, bad(ctx.Cluster, field(ci, "contexts", "context.cluster"), "%q names no entry of clusters[]", cfg.Cluster)
	}
	c := f.Clusters[cl].Cluster
	u, err := url.Parse(c.Server.Value)
	if err != nil || u.Scheme != "https" || u.Host == "" {
		return nil, bad(c.Server, field(cl, "clusters", "cluster.server"), "%q: want https://host:port", c.Server.Value)
	}
	cfg.Server = strings.TrimSuffix(c.Server.Value, "/")
	cfg.TLSServerName = c.TLSServerName.Value
	if c.Insecure.Value == "true" {
		return nil, bad(c.Insecure, field(cl, "clusters", "cluster.insecure-skip-tls-verify"), "not supported: the serving certificate is always verified")
	}
	if c.ProxyURL.Value != "" {
		return nil, bad(c.ProxyURL, field(cl, "clusters", "cluster.proxy-url"), "not supported: nodezero talks to the API directly")
	}
	dir := filepath.Dir(name)
	var at scalar
	var key string
	if cfg.CAData, at, key, err = dataOrFile(c.CAData, c.CA, "certificate-authority", dir); err != nil {
		return nil, bad(at, field(cl, "clusters", "cluster."+key), "%v", err)
	}
	if len(cfg.CAData) == 0 {
		return nil, bad(c.Server, field(cl, "clusters", "cluster"), "no certificate-authority-data or certificate-authority: the serving certificate cannot be verified")
	}

	us := -1
	for i, x := range f.Users {
		if x.Name.Value == cfg.User {
			us = i
		}
	}
	if us < 0 {
		return nil, bad(ctx.User, field(ci, "contexts", "context.user"), "%q names no entry of users[]", cfg.User)
	}
	user := f.Users[us].User
	if cfg.CertData, at, key, err = dataOrFile(user.CertData, user.Cert, "client-certificate", dir); err != nil {
		return nil, bad(at, field(us, "users", "user."+key), "%v", err)
	}
	if cfg.KeyData, at, key, err = dataOrFile(user.KeyData, user.Key, "client-key", dir); err != nil {
		return nil, bad(at, field(us, "users", "user."+key), "%v", err)
	}
	cfg.Token = user.Token.Value
	if cfg.Token == "" && user.TokenFile.Value != "" {
		p := user.TokenFile.Value
		if !filepath.IsAbs(p) {
			p = filepath.Join(dir, p)
		}
		t, err := os.ReadFile(p)
		if err != nil {
			return nil, bad(user.TokenFile, field(us, "users", "user.tokenFile"), "%v", err)
		}
		cfg.Token = strings.TrimSpace(string(t))
	}
	switch {
	case len(cfg.CertData) > 0 && len(cfg.KeyData) == 0:
		return nil, bad(user.CertData, field(us, "users", "user"), "a client certificate without client-key-data or client-key")
	case len(cfg.KeyData) > 0 && len(cfg.CertData) == 0:
		return nil, bad(user.KeyData, field(us, "users", "user"), "a client key without client-certificate-data or client-certificate")
	case len(cfg.CertData) == 0 && cfg.Token == "":
		return nil, bad(f.Users[us].Name, field(us, "users", "user"), "no credentials: want client-certificate-data and client-key-data, or a token")
	}
	return cfg, nil
}

// dataOrFile returns a base64 <key>-data field's bytes, else those of the
// file <key> names (relative to dir). On error it returns the scalar and the
// field name at fault.
func dataOrFile(data, file scalar, key, dir string) ([]byte, scalar, string, error) {
	if data.Value != "" {
		b, err := base64.StdEncoding.DecodeString(strings.TrimSpace(data.Value))
		if err != nil {
			return nil, data, key + "-data", fmt.Errorf("not base64: %v", err)
		}
		if !bytes.Contains(b, []byte("-----BEGIN ")) {
			return nil, data, key + "-data", errors.New("not PEM once decoded")
		}
		return b, data, "", nil
	}
	if file.Value == "" {
		return nil, file, "", nil
	}
	p := file.Value
	if !filepath.IsAbs(p) {
		p = filepath.Join(dir, p)
	}
	b, err := os.ReadFile(p)
	if err != nil {
		return nil, file, key, err
	}
	return b, file, "", nil
}

// SetServer returns the kubeconfig with its current context's cluster
// pointed at server and, when tlsServerName is set, told to verify the
// serving certificate for that name (tls-server-name) rather than for the
// server's host. Everything else (the CA data, the user's credentials) is
// kept as it was; the YAML is written again with two-space indentation.
func SetServer(b []byte, name, server, tlsServerName string) ([]byte, error) {
	cfg, err := ParseKubeconfig(b, name)
	if err != nil {
		return nil, err
	}
	var doc yaml.Node
	if err := yaml.Unmarshal(b, &doc); err != nil {
		return nil, fmt.Errorf("%w %s: %v", ErrKubeconfig, name, err)
	}
	root := doc.Content[0]
	clusters := mapValue(root, "clusters")
	for _, item := range clusters.Content {
		if n := mapValue(item, "name"); n == nil || n.Value != cfg.Cluster {
			continue
		}
		c := mapValue(item, "cluster")
		setMapValue(c, "server", server)
		if tlsServerName != "" {
			setMapValue(c, "tls-server-name", tlsServerName)
		}
	}
	var out bytes.Buffer
	enc := yaml.NewEncoder(&out)
	enc.SetIndent(2)
	if err := enc.Encode(&doc); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return out.Bytes(), nil
}

// mapValue is a mapping node's value for key, or nil.
func mapValue(m *yaml.Node, key string) *yaml.Node {
	if m == nil || m.Kind != yaml.MappingNode {
		return nil
	}
	for i := 0; i+1 < len(m.Content); i += 2 {
		if m.Content[i].Value == key {
			return m.Content[i+1]
		}
	}
	return nil
}

// setMapValue sets key to a string value in a mapping node, adding it when
// missing.
func setMapValue(m *yaml.Node, key, value string) {
	if v := mapValue(m, key); v != nil {
		v.Kind, v.Tag, v.Value, v.Style = yaml.ScalarNode, "!!str", value, 0
		return
	}
	m.Content = append(m.Content,
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: key},
		&yaml.Node{Kind: yaml.ScalarNode, Tag: "!!str", Value: value})
}
