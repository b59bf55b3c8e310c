package sim

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"net/url"
	"strings"
	"time"

	"github.com/coreos/ignition/v2/config/v3_5"
	"github.com/vincent-petithory/dataurl"

	"github.com/nodezero/nodezero/internal/backoff"
)

// What Ignition does with a pointer config on a day-2 host's first boot,
// played in Go (SIMULATED: no initramfs runs): read the merge source and
// the certificate authority from the disk's config, fetch the source over
// TLS verified against that CA, with names resolved through the host's DNS
// server, and parse what came back.

// Pointer is a pointer Ignition's remote config: the URL it merges and the
// certificate authorities (PEM) that URL's server must chain to; and the
// files it writes itself (assisted's day-2 pointer config writes
// /etc/hostname), by path.
type Pointer struct {
	Source string
	CAs    [][]byte
	Files  map[string]string
}

// ParsePointer reads an Ignition config: a pointer config (one
// ignition.config.merge source over https) gives its Pointer; any other
// config gives nil. Inline certificate authorities and files (data URLs)
// are decoded; a config that does not parse is an error.
func ParsePointer(ign []byte) (*Pointer, error) {
	cfg, rpt, err := v3_5.ParseCompatibleVersion(ign)
	if err != nil {
		return nil, fmt.Errorf("%w: %s", err, rpt.String())
	}
	merge := cfg.Ignition.Config.Merge
	if len(merge) != 1 || merge[0].Source == nil {
		return nil, nil
	}
	u, err := url.Parse(*merge[0].Source)
	if err != nil || u.Scheme != "https" {
		return nil, nil
	}
	p := &Pointer{Source: *merge[0].Source, Files: map[string]string{}}
	for i, ca := range cfg.Ignition.Security.TLS.CertificateAuthorities {
		if ca.Source == nil {
			continue
		}
		d, err := dataurl.DecodeString(*ca.Source)
		if err != nil {
			return nil, fmt.Errorf("ignition.security.tls.certificateAuthorities[%d].source: only data URLs are read here: %w", i, err)
		}
		p.CAs = append(p.CAs, d.Data)
	}
	for i, f := range cfg.Storage.Files {
		if f.Contents.Source == nil {
			continue
		}
		d, err := dataurl.DecodeString(*f.Contents.Source)
		if err != nil {
			return nil, fmt.Errorf("storage.files[%d] (%s): only data URLs are read here: %w", i, f.Path, err)
		}
		p.Files[f.Path] = string(d.Data)
	}
	return p, nil
}

// IgnitionAccept is the Accept header Ignition v2.24 sends: the highest
// spec it reads, then anything.
const IgnitionAccept = IgnitionMediaType + ";version=3.5.0, */*;q=0.1"

// IgnitionUserAgent is the User-Agent Ignition v2.24 sends.
const IgnitionUserAgent = "Ignition/2.24.0"

// FetchOnce GETs p's source once as Ignition does (its Accept header,
// TLS verified against p's CAs and the URL's host name, the name resolved
// by r) and returns the body once it parses as Ignition: a map of its
// inline files' contents by path.
func (p *Pointer) FetchOnce(ctx context.Context, r *net.Resolver) (map[string]string, error) {
	pool := x509.NewCertPool()
	for _, ca := range p.CAs {
		if !pool.AppendCertsFromPEM(ca) {
			return nil, errors.New("the pointer Ignition's certificate authority is not PEM")
		}
	}
	if len(p.CAs) == 0 {
		pool = nil // the system's roots, as Ignition without a CA
	}
	dialer := &net.Dialer{Resolver: r, Timeout: 10 * time.Second}
	tr := &http.Transport{
		DialContext:     dialer.DialContext,
		TLSClientConfig: &tls.Config{RootCAs: pool, MinVersion: tls.VersionTLS12},
		Proxy:           nil, // the host's own network, never a proxy
	}
	defer tr.CloseIdleConnections()
	hc := &http.Client{Transport: tr, Timeout: 30 * time.Second}
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, p.Source, nil)
	if err != nil {
		return nil, err
	}
	req.Header.Set("Accept", IgnitionAccept)
	req.Header.Set("User-Agent", IgnitionUserAgent)
	resp, err := hc.Do(req)
	if err != nil {
		return nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(io.LimitReader(resp.Body, 16<<20))
	if err != nil {
		return nil, fmt.Errorf("GET %s: %w", p.Source, err)
	}
	if resp.StatusCode != http.StatusOK {
		return nil, fmt.Errorf("GET %s: %s: %s", p.Source, resp.Status, strings.TrimSpace(string(body)))
	}
	files, err := IgnitionFiles(body)
	if err != nil {
		return nil, fmt.Errorf("GET %s: the config: %w", p.Source, err)
	}
	return files, nil
}

// Fetch is FetchOnce until it succeeds or ctx ends, as Ignition retries a
// remote config it cannot get yet; each failure goes to failed.
func (p *Pointer) Fetch(ctx context.Context, r *net.Resolver, failed func(error)) (map[string]string, error) {
	b := backoff.Backoff{Initial: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Max: 5 * time.Second}
	for {
		files, err := p.FetchOnce(ctx, r)
		if err == nil {
			return files, nil
		}
		if ctx.Err() != nil {
			return nil, ctx.Err()
		}
		if failed != nil {
			failed(err)
		}
		if !backoff.Sleep(ctx, b.Next()) {
			return nil, ctx.Err()
		}
	}
}
