package localapi

import (
	"errors"
	"fmt"
	"os"
	"path/filepath"
	"strings"
)

// The kube-apiserver the sandbox runs: the k8s.io/kubernetes version pinned
// in tools/kube/go.mod and the first 12 hex digits of the SHA-256 of
// tools/kube/go.sum, which name its folder in the tools cache (a test
// holds them to those files).
const (
	APIServerVersion = "v1.36.3"
	APIServerSum     = "5d65ddddf534"
)

// The environment variables that name each binary, ahead of the cache, and
// the cache's own folder.
const (
	EnvAPIServer  = "NODEZERO_KUBE_APISERVER"
	EnvEtcd       = "NODEZERO_ETCD"
	EnvKubectl    = "NODEZERO_KUBECTL"
	EnvToolsCache = "NODEZERO_TOOLS_CACHE"
)

// ErrNoTools: a binary the local API needs is not there.
var ErrNoTools = errors.New("kube api tools missing")

// Tools are the binaries' paths.
type Tools struct {
	APIServer, Etcd string
	// Kubectl is a client for people and tests; the local API itself does
	// not need it. Empty when none was found.
	Kubectl string
}

// CacheDir is the tools cache: $NODEZERO_TOOLS_CACHE, else nodezero-tools in
// the user's cache folder (beside Go's build cache, ~/.cache/go-build).
func CacheDir() (string, error) {
	if d := os.Getenv(EnvToolsCache); d != "" {
		return d, nil
	}
	d, err := os.UserCacheDir()
	if err != nil {
		return "", fmt.Errorf("%w: no cache folder (%v); set %s", ErrNoTools, err, EnvToolsCache)
	}
	return filepath.Join(d, "nodezero-tools"), nil
}

// FindTools finds kube-apiserver and etcd (required) and kubectl (when
// there): each binary's environment override, else the tools cache. The
// error, ErrNoTools, says what is missing and how to get it.
func FindTools() (Tools, error) {
	cache, err := CacheDir()
	if err != nil {
		return Tools{}, err
	}
	var t Tools
	var missing []string
	find := func(env, cached string) string {
		p := os.Getenv(env)
		if p == "" {
			p = filepath.Join(cache, cached)
		}
		if !executable(p) {
			missing = append(missing, fmt.Sprintf("%s (%s, or set %s)", filepath.Base(cached), p, env))
			return ""
		}
		return p
	}
	t.APIServer = find(EnvAPIServer, filepath.Join("kube-apiserver-"+APIServerVersion+"-"+APIServerSum, "kube-apiserver"))
	t.Etcd = find(EnvEtcd, "etcd")
	required := missing
	missing = nil
	t.Kubectl = find(EnvKubectl, "kubectl")
	if len(required) > 0 {
		return t, fmt.Errorf("%w: %s; tools/kube/build.sh (make deps) builds and fetches them", ErrNoTools, strings.Join(required, ", "))
	}
	return t, nil
}

// executable reports whether p is a regular file (through links) someone
// may run.
func executable(p string) bool {
	st, err := os.Stat(p)
	return err == nil && st.Mode().IsRegular() && st.Mode().Perm()&0o111 != 0
}

// LookKubectl is FindTools' kubectl, or an error saying how to get one.
func LookKubectl() (string, error) {
	t, _ := FindTools()
	if t.Kubectl == "" {
		return "", fmt.Errorf("%w: kubectl: set %s or run tools/kube/build.sh (make deps)", ErrNoTools, EnvKubectl)
	}
	return t.Kubectl, nil
}
