package kube

import (
	"context"
	"crypto/x509"
	"encoding/pem"
	"errors"
	"fmt"
	"net/http"
)

// certificates.k8s.io/v1 CertificateSigningRequest: what a joining node's
// kubelet asks for (a client certificate, then a serving one) and what
// `oc adm certificate approve` and a signer write back.

// CertificatesAPIVersion is the CSR's apiVersion.
const CertificatesAPIVersion = "certificates.k8s.io/v1"

// The signers a kubelet asks.
const (
	SignerKubeletClient  = "kubernetes.io/kube-apiserver-client-kubelet"
	SignerKubeletServing = "kubernetes.io/kubelet-serving"
)

// CSRConditionType is Approved, Denied or Failed.
type CSRConditionType string

// The CSR condition types.
const (
	CSRConditionApproved CSRConditionType = "Approved"
	CSRConditionDenied   CSRConditionType = "Denied"
	CSRConditionFailed   CSRConditionType = "Failed"
)

// CSRCondition is one of a CSR's status conditions.
type CSRCondition struct {
	Type               CSRConditionType `json:"type"`
	Status             ConditionStatus  `json:"status"`
	Reason             string           `json:"reason,omitempty"`
	Message            string           `json:"message,omitempty"`
	LastUpdateTime     Time             `json:"lastUpdateTime,omitzero"`
	LastTransitionTime Time             `json:"lastTransitionTime,omitzero"`
}

// CertificateSigningRequestSpec is the request. Username and Groups are set by the API from the
// requester's credentials (what a client sends is ignored).
type CertificateSigningRequestSpec struct {
	// Request is the PEM "CERTIFICATE REQUEST".
	Request           []byte   `json:"request"`
	SignerName        string   `json:"signerName"`
	ExpirationSeconds *int32   `json:"expirationSeconds,omitempty"`
	Usages            []string `json:"usages,omitempty"`
	Username          string   `json:"username,omitempty"`
	UID               string   `json:"uid,omitempty"`
	Groups            []string `json:"groups,omitempty"`
}

// CertificateSigningRequestStatus is the approval and the signed certificate (PEM).
type CertificateSigningRequestStatus struct {
	Conditions  []CSRCondition `json:"conditions,omitempty"`
	Certificate []byte         `json:"certificate,omitempty"`
}

// CertificateSigningRequest is certificates.k8s.io/v1
// CertificateSigningRequest (cluster-scoped).
type CertificateSigningRequest struct {
	APIVersion string                          `json:"apiVersion"`
	Kind       string                          `json:"kind"`
	Metadata   ObjectMeta                      `json:"metadata"`
	Spec       CertificateSigningRequestSpec   `json:"spec"`
	Status     CertificateSigningRequestStatus `json:"status"`
}

func csrHas(csr *CertificateSigningRequest, t CSRConditionType) bool {
	for _, c := range csr.Status.Conditions {
		if c.Type == t && c.Status == True {
			return true
		}
	}
	return false
}

// CSRApproved reports whether csr is approved.
func CSRApproved(csr *CertificateSigningRequest) bool { return csrHas(csr, CSRConditionApproved) }

// CSRDenied reports whether csr is denied.
func CSRDenied(csr *CertificateSigningRequest) bool { return csrHas(csr, CSRConditionDenied) }

// CSRPending reports whether csr waits for a decision: neither approved,
// denied nor failed (`oc get csr` shows Pending).
func CSRPending(csr *CertificateSigningRequest) bool {
	return !CSRApproved(csr) && !CSRDenied(csr) && !csrHas(csr, CSRConditionFailed)
}

// CSRIssued reports whether the signer wrote the certificate.
func CSRIssued(csr *CertificateSigningRequest) bool { return len(csr.Status.Certificate) > 0 }

// ParseRequest parses the PEM certificate request in csr's spec (its
// subject's CN is system:node:<name> for a kubelet's).
func (csr *CertificateSigningRequest) ParseRequest() (*x509.CertificateRequest, error) {
	b, _ := pem.Decode(csr.Spec.Request)
	if b == nil || b.Type != "CERTIFICATE REQUEST" {
		return nil, fmt.Errorf("csr %s: spec.request holds no PEM CERTIFICATE REQUEST", csr.Metadata.Name)
	}
	r, err := x509.ParseCertificateRequest(b.Bytes)
	if err != nil {
		return nil, fmt.Errorf("csr %s: spec.request: %w", csr.Metadata.Name, err)
	}
	return r, nil
}

const csrs = "/apis/" + CertificatesAPIVersion + "/certificatesigningrequests"

// CreateCSR creates csr (its status is dropped by the API).
func (c *Client) CreateCSR(ctx context.Context, csr *CertificateSigningRequest) (*CertificateSigningRequest, error) {
	csr.APIVersion, csr.Kind = CertificatesAPIVersion, "CertificateSigningRequest"
	return call[CertificateSigningRequest](ctx, c, http.MethodPost, csrs, csr)
}

// GetCSR reads one CSR.
func (c *Client) GetCSR(ctx context.Context, name string) (*CertificateSigningRequest, error) {
	return call[CertificateSigningRequest](ctx, c, http.MethodGet, objectPath(csrs, name), nil)
}

// ListCSRs lists every CSR.
func (c *Client) ListCSRs(ctx context.Context) ([]CertificateSigningRequest, error) {
	return list[CertificateSigningRequest](ctx, c, csrs)
}

// ErrCSRDenied: a denied CSR cannot be approved.
var ErrCSRDenied = errors.New("the csr is denied")

// ApproveCSR approves CSR name through the /approval subresource, as
// `oc adm certificate approve` does: it adds an Approved condition with
// reason and message (one already approved is left as it is) and returns
// the CSR as the API has it. A denied CSR is ErrCSRDenied; a write that
// lost a race is retried on the fresh object.
func (c *Client) ApproveCSR(ctx context.Context, name, reason, message string) (*CertificateSigningRequest, error) {
	for attempt := 0; ; attempt++ {
		csr, err := c.GetCSR(ctx, name)
		if err != nil {
			return nil, err
		}
		if CSRApproved(csr) {
			return csr, nil
		}
		if CSRDenied(csr) {
			return nil, fmt.Errorf("approve csr %s: %w", name, ErrCSRDenied)
		}
		now := Now()
		csr.Status.Conditions = append(csr.Status.Conditions, CSRCondition{
			Type: CSRConditionApproved, Status: True, Reason: reason, Message: message,
			LastUpdateTime: now, LastTransitionTime: now,
		})
		var out CertificateSigningRequest
		err = c.Do(ctx, http.MethodPut, objectPath(csrs, name)+"/approval", csr, &out)
		if errors.Is(err, ErrConflict) && attempt < 5 {
			continue
		}
		if err != nil {
			return nil, err
		}
		return &out, nil
	}
}

// UpdateCSRStatus writes csr's status through the /status subresource, as
// a signer writes the certificate once the CSR is approved.
func (c *Client) UpdateCSRStatus(ctx context.Context, csr *CertificateSigningRequest) (*CertificateSigningRequest, error) {
	csr.APIVersion, csr.Kind = CertificatesAPIVersion, "CertificateSigningRequest"
	return call[CertificateSigningRequest](ctx, c, http.MethodPut, objectPath(csrs, csr.Metadata.Name)+"/status", csr)
}
