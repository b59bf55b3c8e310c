package watch

// The cluster's side of wait-for add-nodes: each added host's CSRs
// (approved with Approve) and its Node, in the installed cluster's
// Kubernetes API.

import (
	"context"
	"errors"
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/kube"
)

// The kubelet's CSRs, by signer.
func csrKind(signer string) string {
	switch signer {
	case kube.SignerKubeletClient:
		return "client"
	case kube.SignerKubeletServing:
		return "serving"
	}
	return signer
}

// kubeRefused is the error for the cluster's API refusing the
// credentials, nil for other errors.
func (m *AddNodesMonitor) kubeRefused(err error) error {
	if errors.Is(err, kube.ErrUnauthorized) || errors.Is(err, kube.ErrForbidden) {
		return fmt.Errorf("wait-for add-nodes: the cluster's API at %s refused the kubeconfig's credentials: %w (%w)", m.o.Kube.Server(), ErrAddNodesRefused, err)
	}
	return nil
}

// pollCluster follows the host in the cluster: its CSRs (subject CN
// system:node:<name>), its Node.
func (m *AddNodesMonitor) pollCluster(ctx context.Context, h *addedHost, csrs []kube.CertificateSigningRequest) error {
	refused := m.kubeRefused
	for i := range csrs {
		csr := &csrs[i]
		r, err := csr.ParseRequest()
		if err != nil || r.Subject.CommonName != "system:node:"+h.Name {
			continue
		}
		if err := m.reportCSR(ctx, h, csr); err != nil {
			if r := refused(err); r != nil {
				return r
			}
			m.say(h, "CSR %s: %v", csr.Metadata.Name, err)
		}
	}
	node, err := m.o.Kube.GetNode(ctx, h.Name)
	switch {
	case errors.Is(err, kube.ErrNotFound):
		return nil
	case err != nil:
		if r := refused(err); r != nil {
			return r
		}
		return nil
	}
	if !h.joined {
		h.joined = true
		h.reached = "joined the cluster, not Ready"
		m.say(h, "joined the cluster")
	}
	if kube.NodeReady(node) {
		h.ready = true
		h.reached = "Ready"
		m.say(h, "Ready")
	}
	return nil
}

// reportCSR prints a CSR's state when it changes, approving it with
// Approve.
func (m *AddNodesMonitor) reportCSR(ctx context.Context, h *addedHost, csr *kube.CertificateSigningRequest) error {
	name, kind := csr.Metadata.Name, csrKind(csr.Spec.SignerName)
	state := "pending"
	switch {
	case kube.CSRDenied(csr):
		state = "denied"
	case kube.CSRApproved(csr):
		state = "approved"
	case !kube.CSRPending(csr):
		state = "failed"
	}
	if state == "pending" && m.o.Approve {
		if h.csrs[name] == "" {
			m.say(h, "CSR %s is pending approval (%s)", name, kind)
			h.csrs[name] = "pending"
		}
		if _, err := m.o.Kube.ApproveCSR(ctx, name, ApproveReason, ApproveMessage); err != nil {
			return fmt.Errorf("approve: %w", err)
		}
		h.csrs[name] = "approved"
		h.reached = "CSR " + name + " approved (" + kind + ")"
		m.say(h, "CSR %s approved (%s)", name, kind)
		return nil
	}
	if h.csrs[name] == state {
		return nil
	}
	h.csrs[name] = state
	switch state {
	case "pending":
		h.reached = "CSR " + name + " pending approval (" + kind + ")"
		m.say(h, "CSR %s is pending approval (%s): approve it with `oc adm certificate approve %s`, or run with --approve", name, kind, name)
	case "approved":
		h.reached = "CSR " + name + " approved (" + kind + ")"
		m.say(h, "CSR %s approved (%s)", name, kind)
	default:
		reason := ""
		for _, c := range csr.Status.Conditions {
			if c.Status == kube.True && (c.Type == kube.CSRConditionDenied || c.Type == kube.CSRConditionFailed) {
				reason = strings.TrimSpace(c.Reason + " " + c.Message)
			}
		}
		m.say(h, "CSR %s was %s (%s): %s", name, state, kind, reason)
		if !h.joined {
			h.failed = fmt.Errorf("%s: its %s CSR %s was %s: %s", h.Name, kind, name, state, reason)
		}
	}
	return nil
}
