package installfiles

import (
	"fmt"
	"path"

	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/wire"
)

// Paths the built-in generator writes.
const (
	pathRole          = "/etc/nodezero/role"
	pathPullSecret    = "/var/lib/kubelet/config.json"
	pathTrustBundle   = "/etc/pki/ca-trust/source/anchors/ca.crt"
	pathBootstrapRoot = "/opt/openshift"
)

// simulatedNodeUnit is what every built-in role config enables: the
// node's in-cluster part, which OpenShift's kubelet and the
// assisted-installer controller play on a real cluster. The built-in
// generator has no release behind it, so the part is simulated, by the
// nodezero binary the installed OS of a sandbox VM carries (sim); on an
// OS without that binary the unit does nothing. It reads who the host is
// from the factory disk, still attached and mounted by the installed OS,
// where the installer left its boot record and node zero its store.
var simulatedNodeUnit = ignUnit{
	Name:    "nodezero-node.service",
	Enabled: true,
	Contents: `[Unit]
Description=the node's in-cluster part, SIMULATED by nodezero (stands for the kubelet and the assisted-installer controller)
ConditionPathExists=/usr/local/bin/nodezero
RequiresMountsFor=/run/nodezero/factory
Wants=network-online.target
After=network-online.target

[Service]
Type=notify
NotifyAccess=main
ExecStart=/usr/local/bin/nodezero run --root /run/nodezero/factory
Restart=on-failure
RestartSec=3

[Install]
WantedBy=multi-user.target
`,
}

// builtIn makes the install files without openshift-install: Ignition
// 3.4.0 role configs and the credentials from the source
// (clusterCredentials).
func builtIn(in Input, p *plan) (*Files, error) {
	f := p.facts
	creds, err := newClusterCredentials(in, f.name, f.baseDomain)
	if err != nil {
		return nil, fmt.Errorf("built-in generator: %w", err)
	}
	metadata, err := creds.metadata(f.name)
	if err != nil {
		return nil, fmt.Errorf("metadata.json: %w", err)
	}
	files := &Files{
		Generator: GeneratorBuiltIn,
		Cluster: map[string][]byte{
			FileInstallConfig:     p.icRaw,
			FileMetadata:          metadata,
			FileKubeconfig:        creds.kubeconfig,
			FileKubeadminPassword: []byte(creds.password), // "" with a hash-only source, as openshift-install writes it
		},
	}

	type roleConfig struct {
		file, role string
		extra      []ignFile
	}
	roles := []roleConfig{
		{FileBootstrap, "bootstrap", bootstrapFiles(in, p, creds)},
		{FileMaster, string(wire.HostRoleMaster), nil},
		{FileWorker, string(wire.HostRoleWorker), nil},
	}
	if _, _, arbiters := countRoles(p.hosts); arbiters > 0 {
		roles = append(roles, roleConfig{FileArbiter, string(wire.HostRoleArbiter), nil})
	}
	for _, r := range roles {
		list := append(commonFiles(f), file(pathRole, 0o644, []byte(r.role+"\n")))
		b, err := renderConfig(f.sshKeys, append(list, r.extra...), simulatedNodeUnit)
		if err != nil {
			return nil, fmt.Errorf("%s: %w", r.file, err)
		}
		files.Cluster[r.file] = b
	}
	return files, nil
}

// commonFiles are on every host: the pull secret where the kubelet and
// CRI-O read it, and the additional trust bundle in the system's anchors.
func commonFiles(f facts) []ignFile {
	list := []ignFile{file(pathPullSecret, 0o600, []byte(f.pullSecret))}
	if f.trustBundle != "" {
		list = append(list, file(pathTrustBundle, 0o644, []byte(f.trustBundle)))
	}
	return list
}

// adminCABundle is openshift-install's name for the CA bundle the API
// server trusts for the admin kubeconfig's client certificate.
const adminCABundle = "admin-kubeconfig-ca-bundle.crt"

// bootstrapFiles are the bootstrap host's: what openshift-install would
// render its manifests from, under /opt/openshift as bootkube expects. Of
// the source's signers, as openshift-install's bootstrap.ign carries them:
// the three kube-apiserver signers with their keys (the API's serving
// certificates are issued from them) and the admin-kubeconfig-signer's
// certificate alone as admin-kubeconfig-ca-bundle.crt (its key never goes
// to a host: only the user mints admin certificates).
func bootstrapFiles(in Input, p *plan, creds *clusterCredentials) []ignFile {
	at := func(elem ...string) string { return path.Join(append([]string{pathBootstrapRoot}, elem...)...) }
	list := []ignFile{
		file(at("install-config.yaml"), 0o600, p.icRaw),
		file(at("tls", adminCABundle), 0o644, creds.tls.Signers[credentials.AdminSigner].CertPEM),
	}
	for _, n := range credentials.Signers[1:] {
		s := creds.tls.Signers[n]
		list = append(list, file(at("tls", n+".crt"), 0o644, s.CertPEM), file(at("tls", n+".key"), 0o600, s.KeyPEM))
	}
	list = append(list,
		file(at("auth", "kubeconfig"), 0o600, creds.kubeconfig),
		file(at("openshift", "99_kubeadmin-password-secret.yaml"), 0o600, creds.kubeadminSecret()),
	)
	// User manifests come last, so one of the same name replaces ours.
	for _, m := range in.Manifests {
		list = append(list, file(at(m.Folder, m.FileName), 0o644, m.Content))
	}
	return list
}
