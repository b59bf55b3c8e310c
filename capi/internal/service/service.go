// Package service opens the nodezero service a NodezeroControlPlane names
// (spec.serviceRef): a v2 REST client with the user token, and the agent
// token and CA that go into the hosts' config images. The providers reach
// the service only this way, never its store.
//
// It imports the main module's wire package and controller-runtime's
// client; nothing of the controllers.
package service

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"net/http"
	"strings"
	"time"

	corev1 "k8s.io/api/core/v1"
	"sigs.k8s.io/controller-runtime/pkg/client"

	cpv1 "github.com/nodezero/nodezero/capi/api/controlplane/v1alpha1"
	"github.com/nodezero/nodezero/wire"
)

// Keys of the token and CA secrets: the file names `nodezero service`
// writes to its auth folder, so that
// `kubectl create secret generic T --from-file=D/auth/user.token --from-file=D/auth/agent.token`
// makes the token secret.
const (
	UserTokenKey  = "user.token"
	AgentTokenKey = "agent.token"
	CAKey         = "ca.crt"
)

// requestTimeout bounds one call: a reconcile must not hang on a service
// that stopped answering.
const requestTimeout = 30 * time.Second

// Service is one opened nodezero service.
type Service struct {
	URL        string       // the base URL, as spec.serviceRef.url gives it
	User       *wire.Client // the user token's client
	AgentToken string       // for the hosts' rendezvous-host.env
	CAPEM      []byte       // the service's CA (https), nil for http
}

// Open reads ref's secrets in namespace and returns the service. A missing
// secret or key is an error naming it.
func Open(ctx context.Context, c client.Reader, namespace string, ref cpv1.ServiceRef) (*Service, error) {
	tokens, err := secretData(ctx, c, namespace, ref.TokenSecretRef.Name)
	if err != nil {
		return nil, err
	}
	s := &Service{URL: strings.TrimSuffix(ref.URL, "/")}
	user := strings.TrimSpace(string(tokens[UserTokenKey]))
	s.AgentToken = strings.TrimSpace(string(tokens[AgentTokenKey]))
	if user == "" || s.AgentToken == "" {
		return nil, fmt.Errorf("secret %s/%s: want keys %s and %s (the service's auth folder's files)", namespace, ref.TokenSecretRef.Name, UserTokenKey, AgentTokenKey)
	}
	tr := http.DefaultTransport.(*http.Transport).Clone()
	tr.Proxy = nil // the service is reached directly
	if ref.CASecretRef != nil {
		ca, err := secretData(ctx, c, namespace, ref.CASecretRef.Name)
		if err != nil {
			return nil, err
		}
		s.CAPEM = ca[CAKey]
		pool := x509.NewCertPool()
		if !pool.AppendCertsFromPEM(s.CAPEM) {
			return nil, fmt.Errorf("secret %s/%s: %s holds no PEM certificate", namespace, ref.CASecretRef.Name, CAKey)
		}
		tr.TLSClientConfig = &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12}
	}
	s.User, err = wire.NewClient(s.URL, wire.WithUserToken(user), wire.WithRequestTimeout(requestTimeout),
		wire.WithHTTPClient(&http.Client{Transport: tr}))
	if err != nil {
		return nil, fmt.Errorf("serviceRef.url %q: %w", ref.URL, err)
	}
	return s, nil
}

// SecretValue returns key of secret namespace/name; a missing secret, or a
// missing or empty key, is an error naming it. The providers read every
// secret they are given (tokens, the pull secret, the kubeconfig) this way.
func SecretValue(ctx context.Context, c client.Reader, namespace, name, key string) ([]byte, error) {
	data, err := secretData(ctx, c, namespace, name)
	if err != nil {
		return nil, err
	}
	if v := data[key]; len(v) > 0 {
		return v, nil
	}
	return nil, fmt.Errorf("secret %s/%s: key %s is missing", namespace, name, key)
}

func secretData(ctx context.Context, c client.Reader, namespace, name string) (map[string][]byte, error) {
	var sec corev1.Secret
	if err := c.Get(ctx, client.ObjectKey{Namespace: namespace, Name: name}, &sec); err != nil {
		return nil, fmt.Errorf("secret %s/%s: %w", namespace, name, err)
	}
	return sec.Data, nil
}
