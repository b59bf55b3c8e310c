package localapi

import (
	"context"
	"crypto/sha256"
	"encoding/base64"
	"encoding/hex"
	"encoding/json"
	"errors"
	"fmt"
	"strings"

	"github.com/nodezero/nodezero/kube"
)

// clusterNames are the cluster's name and base domain: Cluster's, else the
// first api.<name>.<domain> of the serving names.
func clusterNames(cl Cluster, names []string) (name, domain string, err error) {
	if cl.Name != "" && cl.BaseDomain != "" {
		return cl.Name, cl.BaseDomain, nil
	}
	for _, n := range names {
		if rest, ok := strings.CutPrefix(n, "api."); ok {
			if name, domain, ok := strings.Cut(rest, "."); ok && name != "" && domain != "" {
				return name, domain, nil
			}
		}
	}
	return "", "", fmt.Errorf("cluster name and base domain: none given (Cluster.Name, Cluster.BaseDomain) and no api.<cluster>.<domain> among the serving names %v", names)
}

// WorkerPointerIgnition is the worker pool's user data as the machine
// config operator writes it into worker-user-data-managed: an Ignition
// spec 3.2 config that merges the machine config server's worker config
// and trusts its CA (PEM, carried as a base64 data URL).
func WorkerPointerIgnition(url string, caPEM []byte) ([]byte, error) {
	var ign kube.PointerIgnition
	ign.Ignition.Version = "3.2.0"
	ign.Ignition.Config.Merge = []kube.IgnitionSource{{Source: url}}
	if len(caPEM) > 0 {
		ign.Ignition.Security.TLS.CertificateAuthorities = []kube.IgnitionSource{{Source: "data:text/plain;charset=utf-8;base64," + base64.StdEncoding.EncodeToString(caPEM)}}
	}
	return json.Marshal(&ign)
}

// seed creates what an installed cluster has beside its ClusterVersion and
// adding nodes reads: the openshift-config and openshift-machine-api
// namespaces, Infrastructure "cluster", the pull secret and the worker
// pool's pointer Ignition (each when Cluster gives it). Objects that exist
// are left alone.
func seed(ctx context.Context, c *kube.Client, cl Cluster, names []string) error {
	name, domain, err := clusterNames(cl, names)
	if err != nil {
		return err
	}
	for _, ns := range []string{kube.PullSecretNamespace, kube.WorkerUserDataNS} {
		if err := c.CreateNamespace(ctx, ns); err != nil {
			return fmt.Errorf("create namespace %s: %w", ns, err)
		}
	}
	platform := cl.Platform
	if platform == "" {
		platform = kube.PlatformNone
	}
	inf, err := createOrGet(ctx, "Infrastructure "+kube.InfrastructureName, func() (*kube.Infrastructure, error) {
		return c.CreateInfrastructure(ctx, &kube.Infrastructure{
			Metadata: kube.ObjectMeta{Name: kube.InfrastructureName},
			Spec:     kube.InfrastructureSpec{PlatformSpec: kube.PlatformSpec{Type: platform}},
		})
	})
	if err != nil {
		return err
	}
	if inf != nil {
		sum := sha256.Sum256([]byte(cl.ID + "/" + name))
		inf.Status = kube.InfrastructureStatus{
			InfrastructureName:     name + "-" + hex.EncodeToString(sum[:])[:5],
			Platform:               platform,
			PlatformStatus:         &kube.PlatformStatus{Type: platform},
			APIServerURL:           "https://api." + name + "." + domain + ":6443",
			APIServerInternalURL:   "https://api-int." + name + "." + domain + ":6443",
			ControlPlaneTopology:   "HighlyAvailable",
			InfrastructureTopology: "HighlyAvailable",
		}
		if _, err := c.UpdateInfrastructureStatus(ctx, inf); err != nil {
			return fmt.Errorf("status of Infrastructure %s: %w", kube.InfrastructureName, err)
		}
	}
	var secrets []*kube.Secret
	if len(cl.PullSecret) > 0 {
		secrets = append(secrets, &kube.Secret{
			Metadata: kube.ObjectMeta{Namespace: kube.PullSecretNamespace, Name: kube.PullSecretName},
			Type:     kube.SecretTypeDockerConfigJSON,
			Data:     map[string][]byte{kube.DockerConfigJSONKey: cl.PullSecret},
		})
	}
	if cl.WorkerIgnitionURL != "" {
		ud, err := WorkerPointerIgnition(cl.WorkerIgnitionURL, cl.WorkerIgnitionCA)
		if err != nil {
			return err
		}
		secrets = append(secrets, &kube.Secret{
			Metadata: kube.ObjectMeta{Namespace: kube.WorkerUserDataNS, Name: kube.WorkerUserDataName},
			Type:     kube.SecretTypeOpaque,
			Data:     map[string][]byte{kube.WorkerUserDataKey: ud, "disableTemplating": []byte("true")},
		})
	}
	for _, s := range secrets {
		if _, err := c.CreateSecret(ctx, s); err != nil && !errors.Is(err, kube.ErrAlreadyExists) {
			return fmt.Errorf("create secret %s/%s: %w", s.Metadata.Namespace, s.Metadata.Name, err)
		}
	}
	return nil
}
