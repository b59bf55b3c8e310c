package assisted

import (
	"context"
	"crypto/x509"
	"encoding/base64"
	"fmt"
	"net/netip"
	"net/url"
	"regexp"
	"strings"

	"github.com/google/uuid"

	"github.com/nodezero/nodezero/wire"
)

// Day 2: an installed OpenShift cluster imported to add hosts to it
// (v2ImportCluster), as assisted's V2ImportClusterInternal makes it. The
// cluster is kind AddHostsCluster, status adding-hosts, imported; it has no
// installation of its own: its hosts are installed one by one (day2.go).

// statusInfoAddingHosts is assisted's status_info of an imported cluster.
const statusInfoAddingHosts = "cluster is adding hosts to existing OCP cluster"

// importedNameRE is assisted's cluster name format for an imported cluster
// on a platform other than none (ValidateClusterNameFormat): lower-case
// letters, digits and hyphens, starting and ending with a letter or digit.
var importedNameRE = regexp.MustCompile(`^[a-z0-9]([-a-z0-9]*[a-z0-9])?$`)

// ImportCluster makes a day-2 cluster for an installed OpenShift cluster
// (v2ImportCluster, 201). As in assisted, the cluster gets a new id; its
// name and base domain come from api_vip_dnsname when that is
// api.<name>.<domain> (the name given is then ignored); its platform is
// baremetal. Each import makes a new cluster, as assisted's does: ABI's
// agent-import-cluster imports once and keeps the id.
func (s *Service) ImportCluster(ctx context.Context, p *wire.ImportClusterParams) (*wire.Cluster, error) {
	c, err := s.newImportedCluster(p)
	if err != nil {
		return nil, err
	}
	return s.addCluster(ctx, c)
}

func (s *Service) newImportedCluster(p *wire.ImportClusterParams) (*clusterRec, error) {
	if p == nil {
		return nil, badRequest("missing request body")
	}
	var probs []string
	name, apiName, ocpID := deref(p.Name), deref(p.APIVipDnsname), deref(p.OpenshiftClusterID)
	if p.Name == nil {
		probs = append(probs, "name: required")
	}
	if apiName == "" {
		probs = append(probs, "api_vip_dnsname: required")
	} else if _, err := netip.ParseAddr(apiName); err != nil {
		probs = append(probs, checkDomain("api_vip_dnsname", apiName)...)
	}
	if ocpID == "" {
		probs = append(probs, "openshift_cluster_id: required")
	} else if err := checkUUID("openshift_cluster_id", ocpID); err != nil {
		probs = append(probs, Message(err))
	}
	baseDomain := ""
	if domain, cname := importedBaseDomain(apiName); domain != "" {
		baseDomain, name = domain, cname
	}
	if p.Name != nil && !importedNameRE.MatchString(name) {
		probs = append(probs, fmt.Sprintf("name: cluster name format is not valid: %q: it must start and end with a letter or a digit and consist of lower-case letters, digits and hyphens", name))
	}
	if len(probs) > 0 {
		return nil, badRequest("invalid import cluster params: %s", strings.Join(probs, "; "))
	}
	now := s.cfg.Now().UTC()
	id := uuid.NewString()
	api := apiName
	umn := false
	c := wire.Cluster{
		Kind: wire.ClusterKindAddHostsCluster, ID: id, Href: apiBase + "/clusters/" + id,
		Name: name, OpenshiftClusterID: ocpID, OpenshiftVersion: p.OpenshiftVersion,
		APIVIPDNSName: &api, BaseDNSDomain: baseDomain,
		Platform: &wire.Platform{Type: wire.PlatformTypeBaremetal}, Imported: true,
		ImageInfo: &wire.ImageInfo{CreatedAt: now}, Status: wire.ClusterStatusAddingHosts,
		StatusInfo: statusInfoAddingHosts, StatusUpdatedAt: wire.DateTime(now),
		CreatedAt: now, UpdatedAt: now, UserManagedNetworking: &umn,
		Progress: &wire.ClusterProgressInfo{},
	}
	return &clusterRec{c: c, hosts: map[hostKey]*hostRec{}}, nil
}

// importedBaseDomain splits api.<name>.<domain> into the domain and the
// name, as assisted's importedClusterBaseDomain does; anything else (an
// address, another form) gives "".
func importedBaseDomain(host string) (domain, name string) {
	if _, err := netip.ParseAddr(host); err == nil {
		return "", ""
	}
	parts := strings.SplitN(host, ".", 3)
	if len(parts) != 3 || parts[0] != "api" {
		return "", ""
	}
	return parts[2], parts[1]
}

// checkIgnitionEndpoint checks a cluster's ignition_endpoint as assisted's
// validateIgnitionEndpoint does: the URL an absolute http(s) URL, the CA
// certificate base64 of PEM holding a certificate.
func checkIgnitionEndpoint(ep *wire.IgnitionEndpoint) []string {
	if ep == nil {
		return nil
	}
	var probs []string
	if ep.URL != nil {
		u, err := url.Parse(*ep.URL)
		switch {
		case err != nil:
			probs = append(probs, fmt.Sprintf("ignition_endpoint.url: %q is not a URL: %v", *ep.URL, err))
		case u.Scheme != "http" && u.Scheme != "https":
			probs = append(probs, fmt.Sprintf("ignition_endpoint.url: %q: the URL scheme must be http or https and given in the URL", *ep.URL))
		case u.Host == "":
			probs = append(probs, fmt.Sprintf("ignition_endpoint.url: %q names no host", *ep.URL))
		}
	}
	if ep.CACertificate != nil && *ep.CACertificate != "" {
		pem, err := base64.StdEncoding.DecodeString(*ep.CACertificate)
		if err != nil {
			probs = append(probs, fmt.Sprintf("ignition_endpoint.ca_certificate: not base64: %v", err))
		} else if !x509.NewCertPool().AppendCertsFromPEM(pem) {
			probs = append(probs, "ignition_endpoint.ca_certificate: the decoded text holds no PEM certificate")
		}
	}
	return probs
}

// mergeIgnitionEndpoint applies an ignition_endpoint patch field by field,
// as assisted stores its two columns apart: a patch giving only the URL
// keeps the CA certificate.
func mergeIgnitionEndpoint(cur, p *wire.IgnitionEndpoint) *wire.IgnitionEndpoint {
	out := &wire.IgnitionEndpoint{}
	if cur != nil {
		out.URL, out.CACertificate = cur.URL, cur.CACertificate
	}
	if p.URL != nil {
		v := *p.URL
		out.URL = &v
	}
	if p.CACertificate != nil {
		v := *p.CACertificate
		out.CACertificate = &v
	}
	return out
}
