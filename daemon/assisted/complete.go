package assisted

import (
	"context"
	"fmt"

	"github.com/nodezero/nodezero/daemon/machine"
	"github.com/nodezero/nodezero/store"
	"github.com/nodezero/nodezero/wire"
)

// CompleteInstallation takes the in-cluster controller's final report
// (V2CompleteInstallation). Success makes the final kubeconfig (assisted
// adds the ingress CA to kubeconfig-noingress; ours is the same file, there
// being no ingress CA to add) and marks the monitored operators available;
// the cluster rules then move a finalizing cluster to installed. Failure
// puts the cluster in error with the controller's error_info.
func (s *Service) CompleteInstallation(ctx context.Context, id string, p *wire.CompletionParams) (*wire.Cluster, error) {
	if p == nil || p.IsSuccess == nil {
		return nil, badRequest("is_success: required")
	}
	var kubeconfig []byte
	if *p.IsSuccess {
		b, err := s.ClusterFile(ctx, id, wire.FileKubeconfigNoIngress)
		if err != nil {
			return nil, err
		}
		kubeconfig = b
	}
	return s.clusterAction(ctx, id, func(t *txn, c *clusterRec) error {
		if c.c.Status != wire.ClusterStatusFinalizing {
			return conflict("cluster %s is %s: the installation can be completed only while finalizing", id, c.c.Status)
		}
		if !*p.IsSuccess {
			info := p.ErrorInfo
			if info == "" {
				info = "the installation failed"
			}
			tr := machine.Transition[wire.ClusterStatus]{Rule: "Installation completed with a failure", From: c.c.Status, To: wire.ClusterStatusError, StatusInfo: info, Changed: true}
			t.applyCluster(c, tr)
			t.putCluster(c)
			t.clusterEvent(c, "cluster_installation_failed", sevError, fmt.Sprintf("Failed installing cluster %s. Reason: %s", c.c.Name, info))
			return nil
		}
		for _, o := range c.c.MonitoredOperators {
			if o != nil {
				o.Status, o.StatusInfo = wire.OperatorStatusAvailable, "reported available by the installation's completion"
			}
		}
		c.kubeconfig = true
		t.manifestOp(func(tx *store.Tx) error { return tx.PutClusterFile(id, wire.FileKubeconfig, kubeconfig) })
		t.putCluster(c)
		t.touchCluster(c)
		return nil
	})
}

// Credentials returns the cluster admin's credentials (V2GetCredentials):
// kubeadmin and its password once the preparation made them, and the
// console's URL. The password is the one of the cluster TLS directory
// (Config.ClusterTLSDir), so the user's auth/kubeadmin-password: the
// install files were made from that directory's hash and password. It is
// empty when the directory carries only the hash, as assisted-service's is
// with openshift-install's own config image.
func (s *Service) Credentials(ctx context.Context, id string) (*wire.Credentials, error) {
	pw, err := s.ClusterFile(ctx, id, wire.FileKubeadminPassword)
	if err != nil {
		return nil, err
	}
	c, err := s.GetCluster(id)
	if err != nil {
		return nil, err
	}
	return &wire.Credentials{
		Username:   "kubeadmin",
		Password:   string(pw),
		ConsoleURL: fmt.Sprintf("https://console-openshift-console.apps.%s.%s", c.Name, c.BaseDNSDomain),
	}, nil
}

// CredentialsFile returns a credentials file (V2DownloadClusterCredentials):
// kubeadmin-password and kubeconfig-noingress once the preparation made
// them, kubeconfig once the installation completed.
func (s *Service) CredentialsFile(ctx context.Context, id, name string) ([]byte, error) {
	switch name {
	case wire.FileKubeadminPassword, wire.FileKubeconfigNoIngress, wire.FileKubeconfig:
	default:
		return nil, badRequest("file_name: %q is not one of kubeadmin-password, kubeconfig, kubeconfig-noingress", name)
	}
	return s.ClusterFile(ctx, id, name)
}
