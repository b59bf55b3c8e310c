package imagecheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"net/http"
	"testing"

	"github.com/nodezero/nodezero/wire"
)

// TestTrustBundleInvalid: a bundle with no certificate, or with one that
// does not parse, fails the whole check before any pull.
func TestTrustBundleInvalid(t *testing.T) {
	for _, tc := range []struct {
		name   string
		bundle string
	}{
		{"text", "not a certificate\n"},
		{"whitespace", " \n"},
		{"key only", "-----BEGIN PRIVATE KEY-----\nMC4CAQAwBQYDK2VwBCIEIA==\n-----END PRIVATE KEY-----\n"},
		{"broken certificate", "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"},
		{"broken after good", string(newTestPKI(t).ca) + "-----BEGIN CERTIFICATE-----\naGVsbG8=\n-----END CERTIFICATE-----\n"},
	} {
		t.Run(tc.name, func(t *testing.T) {
			opts := Options{TrustBundle: []byte(tc.bundle)}
			req := &wire.ContainerImageAvailabilityRequest{Images: []string{"registry.c.test:5000/ocp/release:4.18"}}
			if resp, err := Check(context.Background(), opts, req); !errors.Is(err, ErrTrustBundle) {
				t.Errorf("Check = %+v, %v; want ErrTrustBundle", resp, err)
			}
			arg, err := wire.EncodeEmbedded(req)
			if err != nil {
				t.Fatal(err)
			}
			if out, stderr, code := Step(opts)(context.Background(), []string{arg}); code != 1 || stderr == "" {
				t.Errorf("Step = %q, %q, %d; want exit 1 with the reason", out, stderr, code)
			}
		})
	}
}

// TestTrustBundleClient: the bundle is trusted with no Client, with a
// Client on the default transport, and added to the roots a Client's own
// transport has, which is left as it was.
func TestTrustBundleClient(t *testing.T) {
	reg := newFakeRegistry("")
	host := reg.start(t, true)
	im := makeImage(t, "layer")
	reg.add("ocp/release", "4.18", im)
	name := host + "/ocp/release:4.18"
	// httptest's certificate is its own CA.
	bundle := pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE", Bytes: reg.srv.Certificate().Raw})

	own := &http.Transport{TLSClientConfig: &tls.Config{RootCAs: x509.NewCertPool()}}
	for _, tc := range []struct {
		name   string
		client *http.Client
	}{
		{"no client", nil},
		{"default transport", &http.Client{}},
		{"own transport", &http.Client{Transport: own}},
	} {
		t.Run(tc.name, func(t *testing.T) {
			if _, err := Pull(context.Background(), Options{Client: tc.client}, name); err == nil {
				t.Error("Pull without the bundle succeeded")
			}
			n, err := Pull(context.Background(), Options{Client: tc.client, TrustBundle: bundle}, name)
			if err != nil || n != im.size {
				t.Errorf("Pull with the bundle = %d, %v; want %d bytes", n, err, im.size)
			}
		})
	}
	if !own.TLSClientConfig.RootCAs.Equal(x509.NewCertPool()) {
		t.Error("the caller's transport roots were changed")
	}
}
