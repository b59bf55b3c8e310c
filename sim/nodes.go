package sim

import (
	"context"
	"crypto/x509/pkix"
	"encoding/json"
	"errors"
	"fmt"
	"net/netip"
	"runtime"
	"sync"
	"time"

	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
	"github.com/nodezero/nodezero/kube/localapi"
	"github.com/nodezero/nodezero/wire"
)

// The cluster's Node objects, SIMULATED: no kubelet runs in the sandbox,
// so the Nodes a cluster would have are written here: each day-1 host's
// once it has joined (StatusWriter, on node zero: control-plane hosts
// labelled node-role.kubernetes.io/master and control-plane, Ready once
// the host is done), and each day-2 host's by its Kubelet. Adding nodes
// reads the cluster's architecture from a control-plane Node.

// simKubeletVersion is the Nodes' kubelet version: the sandbox API's
// Kubernetes.
const simKubeletVersion = localapi.APIServerVersion

// NewNode is the Node a host's kubelet registers: its labels (roles,
// hostname, arch, os), addresses (each InternalIP, then the Hostname),
// node info, and the kubelet's conditions, Ready or not. arch "" is
// runtime.GOARCH (Kubernetes spells architectures as Go does).
func NewNode(name string, controlPlane bool, arch string, addrs []netip.Addr, ready bool) *kube.Node {
	if arch == "" {
		arch = runtime.GOARCH
	}
	labels := map[string]string{
		kube.LabelHostname: name, kube.LabelArch: arch, kube.LabelOS: "linux",
		"beta.kubernetes.io/arch": arch, "beta.kubernetes.io/os": "linux",
		"node.openshift.io/os_id": "rhcos",
	}
	if controlPlane {
		labels[kube.LabelMasterRole], labels[kube.LabelControlPlaneRole] = "", ""
	} else {
		labels[kube.LabelWorkerRole] = ""
	}
	n := &kube.Node{Metadata: kube.ObjectMeta{Name: name, Labels: labels}}
	for _, a := range addrs {
		n.Status.Addresses = append(n.Status.Addresses, kube.NodeAddress{Type: kube.NodeInternalIP, Address: a.String()})
	}
	n.Status.Addresses = append(n.Status.Addresses, kube.NodeAddress{Type: kube.NodeHostName, Address: name})
	n.Status.NodeInfo = kube.NodeSystemInfo{
		Architecture: arch, OperatingSystem: "linux", KubeletVersion: simKubeletVersion,
		OSImage: "Red Hat Enterprise Linux CoreOS (SIMULATED by nodezero)",
	}
	n.Status.Conditions = nodeConditions(ready)
	return n
}

// nodeConditions are a kubelet's conditions: no pressure, and Ready or
// not yet.
func nodeConditions(ready bool) []kube.NodeCondition {
	now := kube.Now()
	c := func(t string, status kube.ConditionStatus, reason, msg string) kube.NodeCondition {
		return kube.NodeCondition{Type: t, Status: status, Reason: reason, Message: msg, LastHeartbeatTime: now, LastTransitionTime: now}
	}
	readyC := c(kube.NodeReadyCondition, kube.False, "KubeletNotReady", "container runtime network not ready (SIMULATED)")
	if ready {
		readyC = c(kube.NodeReadyCondition, kube.True, "KubeletReady", "kubelet is posting ready status (SIMULATED)")
	}
	return []kube.NodeCondition{
		c("MemoryPressure", kube.False, "KubeletHasSufficientMemory", "kubelet has sufficient memory available"),
		c("DiskPressure", kube.False, "KubeletHasNoDiskPressure", "kubelet has no disk pressure"),
		c("PIDPressure", kube.False, "KubeletHasSufficientPID", "kubelet has sufficient PID available"),
		readyC,
	}
}

var signer struct {
	once sync.Once
	ca   *pki.CA
	err  error
}

// simulatedSigner is the CA that signs approved kubelet CSRs in this
// process (SIMULATED: kube-controller-manager's kubelet signers).
func simulatedSigner() (*pki.CA, error) {
	signer.once.Do(func() {
		key, err := pki.NewKey()
		if err != nil {
			signer.err = err
			return
		}
		now := time.Now()
		signer.ca, signer.err = pki.SelfSign(nil, key, pki.Spec{Subject: pkixName("kubelet-signer (SIMULATED)", "openshift"),
			NotBefore: now.Add(-time.Hour), NotAfter: now.AddDate(1, 0, 0), MaxPathLenZero: true})
	})
	return signer.ca, signer.err
}

// pkixName is a certificate subject with a common name and organizations.
func pkixName(cn string, org ...string) pkix.Name {
	return pkix.Name{CommonName: cn, Organization: org}
}

// hostNodeFacts is what a day-1 host's Node is made of, from node zero's
// view of the host: its name (requested, else the inventory's), its
// addresses, whether it is control plane, joined, done.
func hostNodeFacts(h *wire.Host) (name string, addrs []netip.Addr, cp, joined, done bool) {
	var inv wire.Inventory
	if h.Inventory != "" {
		_ = json.Unmarshal([]byte(h.Inventory), &inv) // a host without one has no addresses yet
	}
	name = h.RequestedHostname
	if name == "" {
		name = inv.Hostname
	}
	for _, ifc := range inv.Interfaces {
		for _, s := range ifc.IPv4Addresses {
			if p, err := netip.ParsePrefix(s); err == nil {
				addrs = append(addrs, p.Addr())
			}
		}
	}
	var stage wire.HostStage
	if h.Progress != nil {
		stage = h.Progress.CurrentStage
	}
	done = h.Status == wire.HostStatusInstalled || stage == wire.HostStageDone
	joined = done || stage == wire.HostStageJoined
	return name, addrs, h.Role != wire.HostRoleWorker, joined, done
}

// syncNodes writes each joined day-1 host's Node: created once the host
// has joined, Ready once it is done (never back).
func (w *StatusWriter) syncNodes(ctx context.Context, hosts []*wire.Host) error {
	if w.nodesReady == nil {
		w.nodesReady = map[string]bool{}
	}
	for _, h := range hosts {
		name, addrs, cp, joined, done := hostNodeFacts(h)
		if !joined || name == "" || w.nodesReady[name] {
			continue
		}
		n, err := w.c.GetNode(ctx, name)
		if errors.Is(err, kube.ErrNotFound) {
			n, err = w.c.CreateNode(ctx, NewNode(name, cp, "", addrs, done))
			if err == nil {
				w.log.Info("SIMULATED: the host's Node is registered", "node", name, "control_plane", cp, "ready", done)
			}
		}
		if err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
		if kube.NodeReady(n) {
			w.nodesReady[name] = true
			continue
		}
		if !done {
			continue
		}
		n.Status.Conditions = nodeConditions(true)
		if _, err := w.c.UpdateNodeStatus(ctx, n); err != nil {
			return fmt.Errorf("node %s: %w", name, err)
		}
		w.nodesReady[name] = true
		w.log.Info("SIMULATED: the host's Node is Ready", "node", name)
	}
	return nil
}
