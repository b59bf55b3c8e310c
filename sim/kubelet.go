package sim

import (
	"context"
	"crypto"
	"crypto/rand"
	"crypto/sha512"
	"crypto/x509"
	"encoding/base64"
	"encoding/pem"
	"errors"
	"fmt"
	"log/slog"
	"net/netip"
	"os"
	"path/filepath"
	"slices"
	"time"

	"github.com/nodezero/nodezero/internal/atomicfile"
	"github.com/nodezero/nodezero/internal/backoff"
	"github.com/nodezero/nodezero/internal/pki"
	"github.com/nodezero/nodezero/kube"
)

// The kubelet of a day-2 host, SIMULATED: no kubelet runs, but its
// conversation with the cluster's API is the real one's as far as the
// cluster sees it. With the bootstrap kubeconfig the machine config server
// served, it asks for a client certificate (a CSR for the signer
// kubernetes.io/kube-apiserver-client-kubelet, subject
// system:node:<name> in system:nodes, from a fresh key), waits until
// someone approves it (`wait-for add-nodes --approve`, `oc adm certificate
// approve`), registers its Node, Ready, then asks for a serving
// certificate (signer kubernetes.io/kubelet-serving) and waits for that
// approval too.
//
// Two more things are simulated and say so: kube-controller-manager does
// not run in the sandbox's API, so the kubelet plays the signer once its
// CSR is approved (a CA of its own writes the certificate into the CSR's
// status), and it keeps talking with the bootstrap credential (the
// sandbox's is the admin's) rather than the certificate it got.
//
// Each step resumes: the keys are kept under PKIDir, and a CSR's name is
// a digest of its key, subject and usages (as the kubelet names its
// bootstrap CSR), so a restarted kubelet finds the CSR it made, and the
// Node it registered, instead of making another.

// Kubelet is one host's simulated kubelet.
type Kubelet struct {
	// Client speaks with the bootstrap kubeconfig's credential.
	Client *kube.Client
	// NodeName is the host's name (its hostname).
	NodeName string
	// Addresses are the Node's InternalIP addresses and the serving
	// certificate's IP names.
	Addresses []netip.Addr
	// Arch is the Node's architecture, as Kubernetes spells it
	// (runtime.GOARCH: amd64, arm64…).
	Arch string
	// ControlPlane registers a control-plane Node (a day-1 Cluster API
	// control-plane Machine's host); false, a worker's.
	ControlPlane bool
	// ProviderID is the Node's spec.providerID ("": none): a Cluster API
	// Machine's host registers with its Machine's (ProviderID).
	ProviderID string
	// PKIDir keeps the keys and certificates (a host's
	// /var/lib/kubelet/pki).
	PKIDir string
	// Poll is how the kubelet waits between looks at its CSR; the zero
	// value is 200 ms doubling to 5 s.
	Poll backoff.Backoff
	// Status is the host's status line; nil: none.
	Status func(string)
	Log    *slog.Logger
}

func (k *Kubelet) status(s string) {
	if k.Status != nil {
		k.Status(s)
	}
}

func (k *Kubelet) log() *slog.Logger {
	if k.Log == nil {
		return slog.New(slog.DiscardHandler)
	}
	return k.Log
}

// certKind is one of the kubelet's two certificates.
type certKind struct {
	name   string // client, server: its files' names
	what   string // for people
	signer string
	usages []string
	// prefix is the CSR name's: the kubelet's bootstrap CSR is node-csr-…,
	// its certificate manager's csr-….
	prefix string
}

var (
	clientCert  = certKind{"client", "client certificate", kube.SignerKubeletClient, []string{"digital signature", "client auth"}, "node-csr-"}
	servingCert = certKind{"server", "serving certificate", kube.SignerKubeletServing, []string{"digital signature", "server auth"}, "csr-"}
)

// Join is the kubelet's way into the cluster: the client certificate, the
// Node (registered, Ready), the serving certificate. It returns once the
// serving CSR is approved and signed; ctx's error when stopped; an error
// when a CSR is denied or the API refuses the kubelet for good.
func (k *Kubelet) Join(ctx context.Context) error {
	if _, err := k.certificate(ctx, clientCert); err != nil {
		return err
	}
	if err := k.register(ctx); err != nil {
		return err
	}
	if _, err := k.certificate(ctx, servingCert); err != nil {
		return err
	}
	k.log().Info("SIMULATED kubelet: joined the cluster: Node Ready, client and serving certificates issued", "node", k.NodeName)
	k.status("Joined the cluster: Node " + k.NodeName + " is Ready (SIMULATED kubelet)")
	return nil
}

func (k *Kubelet) poll() backoff.Backoff {
	if k.Poll.Initial > 0 {
		return k.Poll
	}
	return backoff.Backoff{Initial: 200 * time.Millisecond, Factor: 2, Jitter: 0.2, Max: 5 * time.Second}
}

// key reads the kind's key under PKIDir, or makes and keeps a fresh one;
// it returns the key and its PEM.
func (k *Kubelet) key(kind certKind) (crypto.Signer, []byte, error) {
	p := filepath.Join(k.PKIDir, "kubelet-"+kind.name+".key")
	if b, err := os.ReadFile(p); err == nil {
		key, err := pki.ParseKey(b)
		return key, b, err
	} else if !errors.Is(err, os.ErrNotExist) {
		return nil, nil, err
	}
	key, err := pki.NewKey()
	if err != nil {
		return nil, nil, err
	}
	b, err := pki.KeyPEM(key)
	if err != nil {
		return nil, nil, err
	}
	if err := os.MkdirAll(k.PKIDir, 0o700); err != nil {
		return nil, nil, err
	}
	if err := atomicfile.Write(p, b, 0o600); err != nil {
		return nil, nil, err
	}
	return key, b, nil
}

// certificate gets the kind's certificate: the one kept under PKIDir, or
// through a CSR (made or found again), approved and signed.
func (k *Kubelet) certificate(ctx context.Context, kind certKind) (*x509.Certificate, error) {
	log := k.log().With("node", k.NodeName, "certificate", kind.name)
	key, keyPEM, err := k.key(kind)
	if err != nil {
		return nil, fmt.Errorf("the kubelet's %s key: %w", kind.what, err)
	}
	current := filepath.Join(k.PKIDir, "kubelet-"+kind.name+"-current.pem")
	if b, err := os.ReadFile(current); err == nil {
		if c, err := pki.ParseCert(b); err == nil && samePublicKey(c.PublicKey, key.Public()) && time.Now().Before(c.NotAfter) {
			log.Info("SIMULATED kubelet: the " + kind.what + " is already issued")
			return c, nil
		}
	}
	csrPEM, err := k.request(key, kind)
	if err != nil {
		return nil, err
	}
	name := csrName(kind, key.Public(), k.NodeName)
	csr := &kube.CertificateSigningRequest{
		Metadata: kube.ObjectMeta{Name: name},
		Spec:     kube.CertificateSigningRequestSpec{Request: csrPEM, SignerName: kind.signer, Usages: kind.usages},
	}
	if _, err := k.Client.CreateCSR(ctx, csr); err != nil && !errors.Is(err, kube.ErrAlreadyExists) {
		return nil, fmt.Errorf("create the %s CSR %s: %w", kind.what, name, err)
	} else if err != nil {
		log.Info("SIMULATED kubelet: the CSR is there from before (a restart)", "csr", name)
	} else {
		log.Info("SIMULATED kubelet: CSR created, waiting for its approval", "csr", name, "signer", kind.signer)
	}
	k.status(fmt.Sprintf("Joining the cluster: waiting for CSR approval (%s, %s)", kind.what, name))

	b := k.poll()
	for {
		got, err := k.Client.GetCSR(ctx, name)
		switch {
		case err != nil && ctx.Err() != nil:
			return nil, ctx.Err()
		case errors.Is(err, kube.ErrNotFound):
			// Deleted under the kubelet (a cleanup, or a denial
			// undone): ask again.
			log.Warn("SIMULATED kubelet: the CSR is gone; asking again", "csr", name)
			if _, err := k.Client.CreateCSR(ctx, csr); err != nil && !errors.Is(err, kube.ErrAlreadyExists) {
				log.Debug("create CSR", "err", err)
			}
		case err != nil:
			log.Debug("read CSR", "csr", name, "err", err)
		case !kube.CSRApproved(got) && !kube.CSRPending(got): // denied or failed
			return nil, fmt.Errorf("the %s CSR %s was denied: %s", kind.what, name, csrConditionText(got))
		case kube.CSRApproved(got) && len(got.Status.Certificate) > 0:
			c, err := pki.ParseCert(got.Status.Certificate)
			if err != nil {
				return nil, fmt.Errorf("the %s CSR %s: its certificate: %w", kind.what, name, err)
			}
			if !samePublicKey(c.PublicKey, key.Public()) {
				return nil, fmt.Errorf("the %s CSR %s holds a certificate for another key", kind.what, name)
			}
			kept := append(pki.CertPEM(c), keyPEM...)
			if err := atomicfile.Write(current, kept, 0o600); err != nil {
				return nil, err
			}
			log.Info("SIMULATED kubelet: the "+kind.what+" is issued", "csr", name, "expires", c.NotAfter)
			return c, nil
		case kube.CSRApproved(got):
			if err := k.sign(ctx, got, kind); err != nil {
				log.Debug("sign CSR", "csr", name, "err", err)
				break // wait, then read it again
			}
			continue // read it back at once
		}
		if !backoff.Sleep(ctx, b.Next()) {
			return nil, ctx.Err()
		}
	}
}

// request is the kind's x509 CSR (PEM) for key.
func (k *Kubelet) request(key crypto.Signer, kind certKind) ([]byte, error) {
	tmpl := &x509.CertificateRequest{Subject: pkixName("system:node:"+k.NodeName, "system:nodes")}
	if kind.signer == kube.SignerKubeletServing {
		tmpl.DNSNames = []string{k.NodeName}
		for _, a := range k.Addresses {
			tmpl.IPAddresses = append(tmpl.IPAddresses, a.AsSlice())
		}
	}
	der, err := x509.CreateCertificateRequest(rand.Reader, tmpl, key)
	if err != nil {
		return nil, fmt.Errorf("the kubelet's %s request: %w", kind.what, err)
	}
	return pem.EncodeToMemory(&pem.Block{Type: "CERTIFICATE REQUEST", Bytes: der}), nil
}

// sign plays the signer of an approved CSR (SIMULATED: a real cluster's
// kube-controller-manager signs with the cluster's kubelet signers): a
// certificate for the request's key and names from a CA of the sandbox's,
// written into the CSR's status.
func (k *Kubelet) sign(ctx context.Context, csr *kube.CertificateSigningRequest, kind certKind) error {
	blk, _ := pem.Decode(csr.Spec.Request)
	if blk == nil {
		return errors.New("the CSR's request is not PEM")
	}
	req, err := x509.ParseCertificateRequest(blk.Bytes)
	if err != nil {
		return err
	}
	ca, err := simulatedSigner()
	if err != nil {
		return err
	}
	spec := pki.Spec{Subject: req.Subject, DNSNames: req.DNSNames, NotBefore: time.Now().Add(-5 * time.Minute), NotAfter: time.Now().Add(30 * 24 * time.Hour)}
	for _, ip := range req.IPAddresses {
		if a, ok := netip.AddrFromSlice(ip); ok {
			spec.IPs = append(spec.IPs, a.Unmap())
		}
	}
	spec.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth}
	if kind.signer == kube.SignerKubeletServing {
		spec.ExtKeyUsage = []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth}
	}
	c, err := ca.Issue(nil, req.PublicKey, spec)
	if err != nil {
		return err
	}
	csr.Status.Certificate = pki.CertPEM(c)
	if _, err := k.Client.UpdateCSRStatus(ctx, csr); err != nil {
		return err
	}
	k.log().Info("SIMULATED: signed the approved CSR as kube-controller-manager would (it does not run in the sandbox)", "csr", csr.Metadata.Name, "signer", kind.signer)
	return nil
}

// register makes sure the Node is there and Ready: created when missing
// (a restart finds the one it made), its status written when not Ready.
func (k *Kubelet) register(ctx context.Context) error {
	log := k.log().With("node", k.NodeName)
	k.status("Joining the cluster: registering Node " + k.NodeName)
	want := NewNode(k.NodeName, k.ControlPlane, k.Arch, k.Addresses, true)
	want.Spec.ProviderID = k.ProviderID
	b := k.poll()
	for {
		err := k.registerOnce(ctx, want, log)
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		if errors.Is(err, kube.ErrForbidden) || errors.Is(err, kube.ErrUnauthorized) {
			return fmt.Errorf("register Node %s: %w", k.NodeName, err)
		}
		log.Debug("register Node", "err", err)
		if !backoff.Sleep(ctx, b.Next()) {
			return ctx.Err()
		}
	}
}

func (k *Kubelet) registerOnce(ctx context.Context, want *kube.Node, log *slog.Logger) error {
	n, err := k.Client.GetNode(ctx, want.Metadata.Name)
	if errors.Is(err, kube.ErrNotFound) {
		if n, err = k.Client.CreateNode(ctx, want); err != nil && !errors.Is(err, kube.ErrAlreadyExists) {
			return err
		} else if err != nil {
			return errors.New("the Node appeared meanwhile") // read it again
		}
		log.Info("SIMULATED kubelet: Node registered", "labels", want.Metadata.Labels)
	} else if err != nil {
		return err
	} else {
		log.Info("SIMULATED kubelet: the Node is there from before (a restart)")
		if n.Spec.ProviderID != want.Spec.ProviderID {
			// A kubelet never changes it; whoever wrote the Node
			// otherwise did it wrong, and no Machine will find it.
			log.Warn("SIMULATED kubelet: the Node's providerID is not this host's", "has", n.Spec.ProviderID, "want", want.Spec.ProviderID)
		}
	}
	if kube.NodeReady(n) {
		return nil
	}
	n.Status.NodeInfo = want.Status.NodeInfo
	n.Status.Addresses = want.Status.Addresses
	n.Status.Conditions = want.Status.Conditions
	if _, err := k.Client.UpdateNodeStatus(ctx, n); err != nil {
		return err
	}
	log.Info("SIMULATED kubelet: Node Ready")
	return nil
}

// csrName is the CSR's name for key: kind's prefix and a digest of the
// key, the subject and the usages, so the same key asks under the same
// name again.
func csrName(kind certKind, pub crypto.PublicKey, node string) string {
	der, _ := x509.MarshalPKIXPublicKey(pub)
	h := sha512.New512_256()
	for _, part := range append([][]byte{der, []byte("system:node:" + node), []byte("system:nodes"), []byte(kind.signer)}, usageBytes(kind.usages)...) {
		fmt.Fprintf(h, "%d:", len(part))
		h.Write(part)
	}
	return kind.prefix + base64.RawURLEncoding.EncodeToString(h.Sum(nil))
}

func usageBytes(us []string) [][]byte {
	out := make([][]byte, len(us))
	for i, u := range slices.Sorted(slices.Values(us)) {
		out[i] = []byte(u)
	}
	return out
}

func samePublicKey(a, b crypto.PublicKey) bool {
	ka, err1 := x509.MarshalPKIXPublicKey(a)
	kb, err2 := x509.MarshalPKIXPublicKey(b)
	return err1 == nil && err2 == nil && string(ka) == string(kb)
}

// csrConditionText is a CSR's Denied or Failed condition, for errors.
func csrConditionText(c *kube.CertificateSigningRequest) string {
	for _, cond := range c.Status.Conditions {
		if cond.Type == kube.CSRConditionDenied || cond.Type == kube.CSRConditionFailed {
			return fmt.Sprintf("%s: %s %s", cond.Type, cond.Reason, cond.Message)
		}
	}
	return "no reason given"
}
