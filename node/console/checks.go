package console

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"fmt"
	"net"
	"net/http"
	"net/netip"
	"os"
	"path"
	"path/filepath"
	"strings"
	"time"

	probing "github.com/prometheus-community/pro-bing"
	"gopkg.in/yaml.v3"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/manifests"
	"github.com/nodezero/nodezero/hostagent/diskwrite"
	"github.com/nodezero/nodezero/hostagent/dnscheck"
	"github.com/nodezero/nodezero/hostagent/imagecheck"
	"github.com/nodezero/nodezero/tui"
)

// registryEnvPath marks a host whose release image comes from a local
// registry: agent-tui then skips its checks, and so does the console.
const registryEnvPath = "/etc/assisted/registry.env"

// CheckOptions are what the connectivity checks need.
type CheckOptions struct {
	Image      string // the release image
	PullSecret []byte
	CAs        *x509.CertPool // nil: the system's roots
	DNSServer  string         // "host:port" asked instead of the host's resolver
}

// Checks are agent-tui's four checks (docs/reference/abi-on-host.md §12.2), run
// in-process: the release image's manifest fetched with the pull secret
// (imagecheck.Inspect, where agent-tui runs `podman pull`), a lookup of the
// registry's host, ICMP echoes to it, and an HTTP GET of the registry —
// any HTTP answer passes.
func Checks(o CheckOptions) ([]tui.Check, error) {
	ref, err := imagecheck.ParseReference(o.Image)
	if err != nil {
		return nil, fmt.Errorf("release image %q: %w", o.Image, err)
	}
	host, port := ref.Registry, ""
	if h, p, err := net.SplitHostPort(ref.Registry); err == nil {
		host, port = h, p
	}
	base := "https://" + host
	if port != "" {
		base = "https://" + net.JoinHostPort(host, port)
	}
	resolver := dnscheck.Resolver(o.DNSServer)
	// Every name the checks reach is resolved by the same resolver, so a
	// --dns-server host never asks the machine's.
	dialer := &net.Dialer{Resolver: resolver, Timeout: 5 * time.Second}
	client := &http.Client{Timeout: 10 * time.Second, Transport: &http.Transport{
		DialContext: dialer.DialContext, TLSClientConfig: &tls.Config{RootCAs: o.CAs}, TLSHandshakeTimeout: 5 * time.Second,
	}}
	lookup := func(ctx context.Context) ([]netip.Addr, error) {
		if a, err := netip.ParseAddr(host); err == nil {
			return []netip.Addr{a}, nil
		}
		return resolver.LookupNetIP(ctx, "ip", host)
	}
	return []tui.Check{
		{ID: tui.CheckReleaseImagePull, Title: o.Image, Run: func(ctx context.Context) (string, error) {
			err := imagecheck.Inspect(ctx, imagecheck.Options{PullSecret: o.PullSecret, Client: client}, o.Image)
			if err != nil {
				return err.Error(), err
			}
			return "", nil
		}},
		{ID: tui.CheckDNS, Title: "nslookup " + host, Run: func(ctx context.Context) (string, error) {
			addrs, err := lookup(ctx)
			if err != nil {
				return err.Error(), err
			}
			return fmt.Sprintf("%s has address %s", host, joinAddrs(addrs)), nil
		}},
		{ID: tui.CheckPing, Title: "ping " + host, Run: func(ctx context.Context) (string, error) {
			addrs, err := lookup(ctx)
			if err != nil {
				return err.Error(), err
			}
			return ping(ctx, addrs[0])
		}},
		{ID: tui.CheckHTTP, Title: base + " responds to http GET", Run: func(ctx context.Context) (string, error) {
			req, err := http.NewRequestWithContext(ctx, http.MethodGet, base, nil)
			if err != nil {
				return err.Error(), err
			}
			resp, err := client.Do(req)
			if err != nil {
				return err.Error(), err
			}
			resp.Body.Close()
			return "HTTP " + resp.Status, nil
		}},
	}, nil
}

// ping sends three ICMP echoes as root (raw socket), else through the
// unprivileged ping socket, and fails when none comes back.
func ping(ctx context.Context, to netip.Addr) (string, error) {
	p := probing.New(to.String())
	p.SetIPAddr(&net.IPAddr{IP: to.AsSlice()})
	p.SetPrivileged(os.Geteuid() == 0)
	p.SetLogger(probing.NoopLogger{})
	p.Count, p.Interval, p.Timeout = 3, 200*time.Millisecond, 3*time.Second
	if err := p.RunWithContext(ctx); err != nil {
		return err.Error(), err
	}
	st := p.Statistics()
	out := fmt.Sprintf("%d packets transmitted, %d received, %.0f%% packet loss", st.PacketsSent, st.PacketsRecv, st.PacketLoss)
	if st.PacketsRecv == 0 {
		return out, errors.New("no echo reply from " + to.String())
	}
	return out + fmt.Sprintf(", rtt avg %s", st.AvgRtt.Round(time.Microsecond)), nil
}

func joinAddrs(as []netip.Addr) string {
	s := make([]string, len(as))
	for i, a := range as {
		s[i] = a.String()
	}
	return strings.Join(s, ", ")
}

// hostReleaseImage is the release image the host was made for: the
// factory image's ClusterImageSet (what the config image must match),
// else the payload's.
func hostReleaseImage(root, payload string) (string, error) {
	path := filepath.Join(root, configimage.ClusterImageSetPath)
	b, err := os.ReadFile(path)
	if err == nil {
		var cis struct {
			Spec struct {
				ReleaseImage string `yaml:"releaseImage"`
			} `yaml:"spec"`
		}
		if err := yaml.Unmarshal(b, &cis); err != nil {
			return "", fmt.Errorf("%s: %w", path, err)
		}
		if cis.Spec.ReleaseImage == "" {
			return "", fmt.Errorf("%s: spec.releaseImage: missing", path)
		}
		return cis.Spec.ReleaseImage, nil
	}
	if !errors.Is(err, os.ErrNotExist) {
		return "", err
	}
	p, perr := diskwrite.LoadPayload(payload)
	if perr != nil {
		return "", fmt.Errorf("no %s, and the payload: %w", path, perr)
	}
	return p.ReleaseImage, nil
}

// infraEnvManifest is where a config image lays the InfraEnv manifest,
// whose spec.additionalTrustBundle is install-config.yaml's.
var infraEnvManifest = path.Join(configimage.ManifestsDir, manifests.InfraEnvFile)

// hostTrustBundle is the cluster's additional trust bundle from the
// InfraEnv manifest under root (nil when there is none): the registry of
// a disconnected or sandbox install is signed by it, and the discovery
// image trusts it as the agents' checks do.
func hostTrustBundle(root string) []byte {
	b, err := os.ReadFile(filepath.Join(root, infraEnvManifest))
	if err != nil {
		return nil
	}
	var ie struct {
		Spec struct {
			AdditionalTrustBundle string `yaml:"additionalTrustBundle"`
		} `yaml:"spec"`
	}
	if yaml.Unmarshal(b, &ie) != nil || strings.TrimSpace(ie.Spec.AdditionalTrustBundle) == "" {
		return nil
	}
	return []byte(ie.Spec.AdditionalTrustBundle)
}
