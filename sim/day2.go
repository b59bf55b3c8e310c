package sim

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"net"
	"net/netip"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"time"

	"github.com/nodezero/nodezero/hostagent/dnscheck"
	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
)

// A day-2 host booted from its installed disk (sandbox): its disk's
// Ignition is a pointer config to the cluster's machine config server, as
// assisted writes it for a host added to an existing cluster. Nothing
// posts to the service after a day-2 host's reboot (assisted counts it
// added-to-existing-cluster once it reported Rebooting), so no service
// and no controller run: the host plays Ignition's fetch of the worker
// pool's config and then the kubelet's way into the cluster (Kubelet),
// which someone follows and approves from outside (`wait-for add-nodes`).

// KubeletPKIDir is where, under a host's root, the simulated kubelet keeps
// its keys and certificates (the kubelet's /var/lib/kubelet/pki).
const KubeletPKIDir = "/var/lib/kubelet/pki"

// runDay2 is the day-2 host booted from d, whose Ignition is the pointer
// p: fetch, write what the fetched config holds under the root, join as
// the kubelet, then stay up until ctx ends.
func runDay2(ctx context.Context, d *onhost.BootDisk, p *Pointer, o Installed) error {
	log := o.Log.With("stage", "installed", "day2", true)
	log.Info("SIMULATED: this day-2 host booted its installed disk; no OpenShift runs here. Its pointer Ignition is fetched from the cluster's machine config server, then a simulated kubelet asks to join (CSRs, its Node)",
		"source", p.Source, "host_id", d.HostID)
	o.Status("Installed disk booted: fetching the worker Ignition from " + p.Source + " (sandbox: the cluster's OpenShift is simulated)")

	resolver := dnscheck.Resolver(o.DNSServer)
	files, err := p.Fetch(ctx, resolver, func(err error) {
		log.Info("Ignition: the remote config is not there yet; retrying", "source", p.Source, "err", err)
		o.Status("Installed disk booted: the worker Ignition cannot be fetched yet: " + err.Error())
	})
	if err != nil {
		return nilIfDone(ctx, err)
	}
	kc, ok := files[BootstrapKubeconfigPath]
	if !ok {
		err := fmt.Errorf("the worker Ignition from %s has no %s: the kubelet cannot join", p.Source, BootstrapKubeconfigPath)
		logDay2Held(log, o.Status, err)
		return hold(ctx)
	}
	// What Ignition would write on the real root: the pointer config's own
	// files (the hostname) and the fetched ones.
	for path, content := range p.Files {
		if _, ok := files[path]; !ok {
			files[path] = content
		}
	}
	for path, content := range files {
		if err := writeUnder(o.Root, path, []byte(content)); err != nil {
			return err
		}
	}
	log.Info("Ignition: the worker config applied (SIMULATED: its files written under the host's root)", "files", len(files))

	// Its name: the hostname Ignition wrote (assisted's pointer config
	// carries it), else the one the host had.
	hostname, _ := os.ReadFile(filepath.Join(o.Root, "etc/hostname"))
	name := strings.TrimSpace(string(hostname))
	if name == "" {
		logDay2Held(log, o.Status, errors.New("the host has no hostname (neither its Ignition nor etc/hostname under its root gives one): its Node would have no name"))
		return hold(ctx)
	}
	cfg, err := kube.ParseKubeconfig([]byte(kc), BootstrapKubeconfigPath)
	if err != nil {
		logDay2Held(log, o.Status, err)
		return hold(ctx)
	}
	b := backoff.Backoff{Initial: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Max: 5 * time.Second}
	for said := false; ; said = true {
		err := resolveServer(ctx, resolver, cfg)
		if err == nil {
			break
		}
		if !said {
			log.Info("the bootstrap kubeconfig's API name does not resolve yet; retrying", "server", cfg.Server, "dns", o.DNSServer, "err", err)
		}
		if !backoff.Sleep(ctx, b.Next()) {
			return nil
		}
	}
	c, err := kube.NewClient(cfg, kube.WithTimeout(15*time.Second))
	if err != nil {
		logDay2Held(log, o.Status, err)
		return hold(ctx)
	}
	defer c.Close()
	var addrs []netip.Addr
	for _, a := range o.Addresses {
		addrs = append(addrs, a.Addr())
	}
	// A Cluster API Machine's host: its Node names its Machine.
	providerID, err := MachineProviderID(o.Root)
	if err != nil {
		logDay2Held(log, o.Status, err)
		return hold(ctx)
	}
	k := &Kubelet{Client: c, NodeName: name, Addresses: addrs, ProviderID: providerID, PKIDir: filepath.Join(o.Root, KubeletPKIDir), Status: o.Status, Log: log}
	if err := k.Join(ctx); err != nil {
		if ctx.Err() != nil {
			return nil
		}
		log.Error("the simulated kubelet cannot join the cluster", "err", err)
		o.Status("Joining the cluster failed: " + err.Error())
		return hold(ctx)
	}
	<-ctx.Done()
	return nil
}

// hold keeps a host that cannot go on up until ctx ends: its log and
// console have said why, and nothing would change by ending it.
func hold(ctx context.Context) error {
	<-ctx.Done()
	return nil
}

func nilIfDone(ctx context.Context, err error) error {
	if ctx.Err() != nil {
		return nil
	}
	return err
}

// resolveServer points cfg at the address its server's name resolves to
// through r, keeping the name for TLS (the host's resolver, not this
// machine's).
func resolveServer(ctx context.Context, r *net.Resolver, cfg *kube.Config) error {
	u, err := url.Parse(cfg.Server)
	if err != nil {
		return err
	}
	host := u.Hostname()
	if _, err := netip.ParseAddr(host); err == nil {
		return nil
	}
	qctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(qctx, "ip", host)
	if err != nil {
		return err
	}
	if len(addrs) == 0 {
		return fmt.Errorf("%s has no address", host)
	}
	if cfg.TLSServerName == "" {
		cfg.TLSServerName = host
	}
	port := u.Port()
	if port == "" {
		port = "443"
	}
	u.Host = net.JoinHostPort(addrs[0].Unmap().String(), port)
	cfg.Server = u.String()
	return nil
}

// writeUnder writes an absolute path's content under root, owner-only.
func writeUnder(root, path string, b []byte) error {
	full := filepath.Join(root, filepath.Clean("/"+path))
	if err := os.MkdirAll(filepath.Dir(full), 0o755); err != nil {
		return err
	}
	return atomicfile.Write(full, b, 0o600)
}

// isDay2Root says whether the host's root holds add-nodes.env: a host
// added to an installed cluster.
func isDay2Root(root string) bool {
	_, err := os.Stat(filepath.Join(root, onhost.AddNodesEnvPath))
	return err == nil
}

// logDay2Held says why a day-2 host stays where it is: it reports to no
// service (there is none after a day-2 reboot), so its log and console
// are where it shows.
func logDay2Held(log *slog.Logger, status func(string), err error) {
	log.Error("the installed disk does not boot as written; this day-2 host stays where it is", "err", err)
	status("Installed disk booted, but it does not boot as written: " + err.Error())
}
