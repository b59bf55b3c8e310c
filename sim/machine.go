package sim

import (
	"context"
	"errors"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"time"

	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/wire"
)

// A host in a Cluster API Machine's place, SIMULATED: its config image
// carried a machine binding (onhost.MachineBinding at
// onhost.MachineBindingPath), and its Node carries the Machine's
// providerID, nodezero://<namespace>/<machine>, as a cloud's kubelet sets
// one, so that CAPI's Machine controller links the Machine to its Node. A
// day-1 host of a hub service registers its own Node once it reported
// Done (no node zero writes the Nodes: StatusWriter leaves them alone),
// a day-2 host's Kubelet registers it with the providerID.

// ProviderIDPrefix starts the providerID of a Machine's host.
const ProviderIDPrefix = "nodezero://"

// MachineProviderID is the providerID of the Machine bound to the host
// under root: nodezero://<namespace>/<name>; "" when the host has no
// binding.
func MachineProviderID(root string) (string, error) {
	m, err := readMachineBinding(root)
	if err != nil || m == nil {
		return "", err
	}
	return ProviderIDPrefix + m.Namespace + "/" + m.Name, nil
}

// readMachineBinding reads the host's machine binding under root; nil
// when there is none.
func readMachineBinding(root string) (*onhost.MachineBinding, error) {
	b, err := os.ReadFile(filepath.Join(root, onhost.MachineBindingPath))
	if errors.Is(err, os.ErrNotExist) {
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	m, err := onhost.ParseMachineBinding(onhost.MachineBindingPath, b)
	if err != nil {
		return nil, err
	}
	return &m, nil
}

// NodeRegistration is how a day-1 Machine's host booted from its disk d
// registers its Node, named as its Machine (the hostname the bootstrap
// provider gives the host), through the installed cluster's kubeconfig
// under root (KubeconfigPath); nil when the host has no binding or there
// is no kubeconfig (no workload API to write to).
func NodeRegistration(root string, d *onhost.BootDisk, addrs []netip.Prefix, log *slog.Logger) (func(context.Context) error, error) {
	m, err := readMachineBinding(root)
	if err != nil || m == nil {
		return nil, err
	}
	cfg, err := hostKubeconfig(root)
	if cfg == nil || err != nil {
		return nil, err
	}
	var ips []netip.Addr
	for _, a := range addrs {
		ips = append(ips, a.Addr())
	}
	return func(ctx context.Context) error {
		c, err := kube.NewClient(cfg, kube.WithTimeout(15*time.Second))
		if err != nil {
			return err
		}
		defer c.Close()
		k := &Kubelet{Client: c, NodeName: m.Name, Addresses: ips, ProviderID: ProviderIDPrefix + m.Namespace + "/" + m.Name,
			ControlPlane: wire.HostRole(d.Role) != wire.HostRoleWorker, Log: log}
		return k.register(ctx)
	}, nil
}
