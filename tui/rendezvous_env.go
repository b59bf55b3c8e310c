package tui

import (
	"context"
	"errors"
	"fmt"
	"io/fs"
	"net"
	"net/http"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// saveRendezvousIP writes root/etc/assisted/rendezvous-host.env for addr
// as agent-tui does: its .template rendered with .RendezvousIP, or else
// the env file itself as the template (the ISO ships it with
// {{.RendezvousIP}} in it), or else a file of its own. The file is
// replaced atomically.
func saveRendezvousIP(root string, addr netip.Addr) error {
	path := filepath.Join(root, filepath.FromSlash(onhost.RendezvousEnvPath))
	tmpl, err := os.ReadFile(path + ".template")
	if errors.Is(err, fs.ErrNotExist) {
		tmpl, err = os.ReadFile(path)
	}
	if errors.Is(err, fs.ErrNotExist) {
		tmpl, err = nil, nil
	}
	if err != nil {
		return err
	}
	data, err := renderRendezvousEnv(tmpl, addr)
	if err != nil {
		return err
	}
	if err := os.MkdirAll(filepath.Dir(path), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(path, data, 0o644)
}

// rendezvousProbeTimeout bounds agent-tui's probe (curl -m 1).
const rendezvousProbeTimeout = time.Second

// rendezvousAPIURL is node zero's API at addr and port.
func rendezvousAPIURL(addr netip.Addr, port uint16) string {
	// url.URL escapes an IPv6 zone's "%".
	u := url.URL{Scheme: "http", Host: netip.AddrPortFrom(addr, port).String(), Path: wire.APIBasePath}
	return u.String()
}

// probeRendezvous is the default Probe: node zero's API answers on port
// 8090 within a second. Any HTTP answer counts, as with agent-tui's curl.
func probeRendezvous(ctx context.Context, addr netip.Addr) error {
	return probeURL(ctx, rendezvousAPIURL(addr, 8090))
}

// rendezvousClient goes to node zero directly: the question is whether
// this host reaches it, not whether a proxy does.
var rendezvousClient = &http.Client{Transport: &http.Transport{Proxy: nil}}

func probeURL(ctx context.Context, u string) error {
	ctx, cancel := context.WithTimeout(ctx, rendezvousProbeTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return err
	}
	resp, err := rendezvousClient.Do(req)
	if err != nil {
		return fmt.Errorf("probe rendezvous node: %w", err)
	}
	resp.Body.Close()
	return nil
}

// hostAddrs is the default LocalAddrs: the addresses of this host's
// interfaces.
func hostAddrs() ([]netip.Addr, error) {
	addrs, err := net.InterfaceAddrs()
	if err != nil {
		return nil, err
	}
	var out []netip.Addr
	for _, a := range addrs {
		if n, ok := a.(*net.IPNet); ok {
			if ip, ok := netip.AddrFromSlice(n.IP); ok {
				out = append(out, ip.Unmap())
			}
		}
	}
	return out, nil
}
