// Package imagecheck runs the container-image-availability step
// (docs/reference/agent-and-installer.md §2.8) over the registry v2 API instead of
// podman: for each image it fetches the manifest and every blob, with the
// pull secret's credentials (basic, or a bearer token from the registry's
// realm), and reports whether that worked, the bytes, the seconds and the
// rate. Blobs are read and discarded: nothing is stored on the host.
//
// imagecheck imports only the wire package.
package imagecheck

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
	"slices"
	"sync/atomic"
	"time"

	"github.com/nodezero/nodezero/hostagent/step"
	"github.com/nodezero/nodezero/wire"
)

// exitSomeFailed is the agent's exit code when an image could not be pulled.
const exitSomeFailed = 2

// Options configure the step.
type Options struct {
	// PullSecret is the cluster's pull secret JSON
	// ({"auths":{"<registry>":{"auth":"<base64 user:pass>"}}}); empty means
	// anonymous pulls.
	PullSecret []byte
	// Insecure lists registries (host[:port], as image references name
	// them) whose TLS certificate is not checked and which may be reached
	// over plain HTTP when HTTPS fails, as registries.conf's insecure = true.
	// Every other registry is HTTPS only.
	Insecure []string
	// TrustBundle is PEM CA certificates trusted for registries' TLS in
	// addition to the system's roots: the infra-env's
	// additional_trust_bundle, which assisted's discovery image adds to the
	// host's anchors. Empty means the system's roots alone. A bundle with no
	// certificate in it, or a certificate that does not parse, fails the
	// check with ErrTrustBundle.
	TrustBundle []byte
	// Client makes the requests; nil means a client on a clone of
	// http.DefaultTransport. With a TrustBundle, a Client whose transport
	// is an *http.Transport is used through a clone with the bundle added
	// to its roots; any other transport is used as given.
	Client *http.Client
}

// ErrTrustBundle is returned (wrapped, with the reason) by Check, Pull and
// the step when Options.TrustBundle holds no usable certificate.
var ErrTrustBundle = errors.New("invalid trust bundle")

// running is the process-wide semaphore: one check at a time, as the agent
// keeps one container_image_availability container.
var running atomic.Bool

// Step returns the container-image-availability step function, shaped as
// step.Func. Invalid args answer -1; a run while another is under
// way answers an empty success at once; an image that failed makes the exit
// code 2, as in the agent.
func Step(opts Options) func(ctx context.Context, args []string) (output, stderr string, exitCode int) {
	return func(ctx context.Context, args []string) (string, string, int) {
		req, err := DecodeArgs(args)
		if err != nil {
			return step.NotRun(err)
		}
		if !running.CompareAndSwap(false, true) {
			return "{}", "", 0
		}
		defer running.Store(false)
		resp, err := Check(ctx, opts, req)
		if err != nil {
			return "", err.Error(), 1
		}
		out, err := wire.EncodeEmbedded(resp)
		if err != nil {
			return "", err.Error(), 1
		}
		for _, im := range resp.Images {
			if im.Result != wire.ContainerImageAvailabilityResultSuccess {
				return out, "", exitSomeFailed
			}
		}
		return out, "", 0
	}
}

// DecodeArgs decodes the step's single arg.
func DecodeArgs(args []string) (*wire.ContainerImageAvailabilityRequest, error) {
	if len(args) != 1 {
		return nil, fmt.Errorf("image availability cmd accepts 1 params in args, given args %v", args)
	}
	var req wire.ContainerImageAvailabilityRequest
	if err := wire.DecodeEmbedded(args[0], &req); err != nil {
		return nil, fmt.Errorf("image availability args: %w", err)
	}
	if req.Timeout < 0 {
		return nil, fmt.Errorf("image availability args: timeout %d is negative", req.Timeout)
	}
	return &req, nil
}

// Check pulls every image of req within req.Timeout seconds in all (none
// when 0) and reports each one. A bad pull secret fails the whole check.
func Check(ctx context.Context, opts Options, req *wire.ContainerImageAvailabilityRequest) (*wire.ContainerImageAvailabilityResponse, error) {
	p, err := newPuller(opts)
	if err != nil {
		return nil, err
	}
	if req.Timeout > 0 {
		var cancel context.CancelFunc
		ctx, cancel = context.WithTimeout(ctx, time.Duration(req.Timeout)*time.Second)
		defer cancel()
	}
	resp := &wire.ContainerImageAvailabilityResponse{}
	for _, name := range req.Images {
		im := &wire.ContainerImageAvailability{Name: name, Result: wire.ContainerImageAvailabilityResultFailure}
		resp.Images = append(resp.Images, im)
		start := time.Now()
		size, err := p.pull(ctx, name)
		if err != nil {
			continue
		}
		secs := time.Since(start).Seconds()
		im.Result = wire.ContainerImageAvailabilityResultSuccess
		im.SizeBytes = float64(size)
		im.Time = secs
		if secs > 0 {
			im.DownloadRate = float64(size) / 1e6 / secs
		}
	}
	return resp, nil
}

// Pull fetches the manifest and blobs of one image and returns the bytes
// of its blobs (config and layers): Check for one image, with its error.
func Pull(ctx context.Context, opts Options, image string) (int64, error) {
	p, err := newPuller(opts)
	if err != nil {
		return 0, err
	}
	return p.pull(ctx, image)
}

// Inspect fetches the manifest of one image with the pull secret's
// credentials, following an index to this platform's manifest, and fetches
// no blob: what the console's release image check repeats every few
// seconds. (agent-tui runs `podman pull`, whose layer cache makes every
// pull after the first a manifest fetch; Inspect is that repeated cost
// without the first download.)
func Inspect(ctx context.Context, opts Options, image string) error {
	p, err := newPuller(opts)
	if err != nil {
		return err
	}
	ref, err := ParseReference(image)
	if err != nil {
		return err
	}
	s := p.session(ref)
	if _, err := s.imageManifest(ctx, ref.Repository, ref.ref()); err != nil {
		return err
	}
	return nil
}

// puller holds what every image of one check shares.
type puller struct {
	opts           Options
	creds          map[string]credentials
	client         *http.Client
	insecureClient *http.Client
}

func newPuller(opts Options) (*puller, error) {
	creds, err := parsePullSecret(opts.PullSecret)
	if err != nil {
		return nil, err
	}
	p := &puller{opts: opts, creds: creds, client: opts.Client}
	if p.client == nil {
		p.client = &http.Client{}
	}
	if len(opts.TrustBundle) > 0 {
		bundle, err := parseTrustBundle(opts.TrustBundle)
		if err != nil {
			return nil, err
		}
		p.client = withRoots(p.client, bundle)
	}
	if len(opts.Insecure) > 0 {
		p.insecureClient = withoutTLSVerify(p.client)
	}
	return p, nil
}

// pull fetches one image by name.
func (p *puller) pull(ctx context.Context, image string) (int64, error) {
	ref, err := ParseReference(image)
	if err != nil {
		return 0, err
	}
	return pull(ctx, p.session(ref), ref)
}

// session talks to ref's registry with its credentials.
func (p *puller) session(ref Reference) *session {
	c, insecure := p.client, slices.Contains(p.opts.Insecure, ref.Registry)
	if insecure {
		c = p.insecureClient
	}
	var cr *credentials
	if v, ok := p.creds[ref.Registry]; ok {
		cr = &v
	}
	return newSession(c, ref.Registry, cr, insecure)
}

func pull(ctx context.Context, s *session, ref Reference) (int64, error) {
	m, err := s.imageManifest(ctx, ref.Repository, ref.ref())
	if err != nil {
		return 0, err
	}
	blobs := slices.Clone(m.Layers)
	if m.Config != nil && m.Config.Digest != "" {
		blobs = append(blobs, *m.Config)
	}
	if len(blobs) == 0 {
		return 0, fmt.Errorf("pull %s/%s: manifest lists no blobs", ref.Registry, ref.Repository)
	}
	var total int64
	for _, d := range blobs {
		n, err := s.fetchBlob(ctx, ref.Repository, d)
		total += n
		if err != nil {
			return total, fmt.Errorf("pull %s/%s: %w", ref.Registry, ref.Repository, err)
		}
	}
	return total, nil
}

// parseTrustBundle returns the certificates of a PEM bundle. Blocks of
// other types are skipped, as x509.CertPool.AppendCertsFromPEM does; a
// certificate that does not parse, or no certificate at all, is an error.
func parseTrustBundle(b []byte) ([]*x509.Certificate, error) {
	var certs []*x509.Certificate
	for rest := b; ; {
		var blk *pem.Block
		blk, rest = pem.Decode(rest)
		if blk == nil {
			break
		}
		if blk.Type != "CERTIFICATE" {
			continue
		}
		c, err := x509.ParseCertificate(blk.Bytes)
		if err != nil {
			return nil, fmt.Errorf("%w: certificate %d: %v", ErrTrustBundle, len(certs)+1, err)
		}
		certs = append(certs, c)
	}
	if len(certs) == 0 {
		return nil, fmt.Errorf("%w: no PEM certificate (-----BEGIN CERTIFICATE-----) in its %d bytes", ErrTrustBundle, len(b))
	}
	return certs, nil
}

// withRoots returns a client like c whose transport also trusts certs: the
// roots it had (the system's when none were set) plus certs.
func withRoots(c *http.Client, certs []*x509.Certificate) *http.Client {
	return withTLS(c, func(tc *tls.Config) {
		var pool *x509.CertPool
		if tc.RootCAs != nil {
			pool = tc.RootCAs.Clone()
		} else if sys, err := x509.SystemCertPool(); err == nil {
			pool = sys
		} else {
			pool = x509.NewCertPool() // no system roots here: the bundle alone
		}
		for _, cert := range certs {
			pool.AddCert(cert)
		}
		tc.RootCAs = pool
	})
}

// withoutTLSVerify returns a client like c whose transport does not check
// certificates, for registries the operator marked insecure.
func withoutTLSVerify(c *http.Client) *http.Client {
	return withTLS(c, func(tc *tls.Config) {
		tc.InsecureSkipVerify = true // only registries the operator listed as insecure
	})
}

// withTLS returns a client like c on a clone of its transport (the
// default one when it has none) whose TLS config edit changed. A transport
// that is not an *http.Transport is used as given.
func withTLS(c *http.Client, edit func(*tls.Config)) *http.Client {
	base, ok := c.Transport.(*http.Transport)
	if c.Transport == nil {
		base, ok = http.DefaultTransport.(*http.Transport)
	}
	nc := *c
	if !ok {
		return &nc
	}
	t := base.Clone()
	if t.TLSClientConfig == nil {
		t.TLSClientConfig = &tls.Config{}
	}
	edit(t.TLSClientConfig)
	nc.Transport = t
	return &nc
}
