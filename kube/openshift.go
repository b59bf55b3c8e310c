package kube

import (
	"context"
	"net/http"
	"net/url"
	"strings"
	"time"
)

// The config.openshift.io/v1 objects the installer follows, shaped as
// OpenShift's API (github.com/openshift/api config/v1) writes them; fields
// the installer has no use for are left out and kept by the API server.

// Group and version of ClusterVersion and ClusterOperator.
const (
	Group      = "config.openshift.io"
	Version    = "v1"
	APIVersion = Group + "/" + Version
)

// ClusterVersionName is the one ClusterVersion a cluster has.
const ClusterVersionName = "version"

// ConditionType names a status condition.
type ConditionType string

// The condition types of ClusterVersion and ClusterOperator status.
const (
	Available        ConditionType = "Available"
	Progressing      ConditionType = "Progressing"
	Degraded         ConditionType = "Degraded"
	Failing          ConditionType = "Failing" // ClusterVersion's Degraded
	Upgradeable      ConditionType = "Upgradeable"
	RetrievedUpdates ConditionType = "RetrievedUpdates"
)

// ConditionStatus is True, False or Unknown.
type ConditionStatus string

// The condition statuses.
const (
	True    ConditionStatus = "True"
	False   ConditionStatus = "False"
	Unknown ConditionStatus = "Unknown"
)

// Time is a timestamp as Kubernetes writes one: RFC 3339, UTC, seconds.
type Time struct{ time.Time }

// Now is the current time at the API's precision.
func Now() Time { return Time{time.Now().UTC().Truncate(time.Second)} }

// MarshalJSON writes RFC 3339 in UTC, or null for the zero time.
func (t Time) MarshalJSON() ([]byte, error) {
	if t.IsZero() {
		return []byte("null"), nil
	}
	return []byte(`"` + t.UTC().Format(time.RFC3339) + `"`), nil
}

// UnmarshalJSON reads RFC 3339 (fractions allowed) or null.
func (t *Time) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" {
		t.Time = time.Time{}
		return nil
	}
	v, err := time.Parse(`"`+time.RFC3339+`"`, s)
	if err != nil {
		return err
	}
	t.Time = v.UTC()
	return nil
}

// Condition is OpenShift's ClusterOperatorStatusCondition, which
// ClusterVersion's status uses too.
type Condition struct {
	Type               ConditionType   `json:"type"`
	Status             ConditionStatus `json:"status"`
	LastTransitionTime Time            `json:"lastTransitionTime"`
	Reason             string          `json:"reason,omitempty"`
	Message            string          `json:"message,omitempty"`
}

// FindCondition returns the condition of type t, or nil.
func FindCondition(cs []Condition, t ConditionType) *Condition {
	for i := range cs {
		if cs[i].Type == t {
			return &cs[i]
		}
	}
	return nil
}

// IsTrue reports whether the condition of type t is True.
func IsTrue(cs []Condition, t ConditionType) bool {
	c := FindCondition(cs, t)
	return c != nil && c.Status == True
}

// IsFalse reports whether the condition of type t is False.
func IsFalse(cs []Condition, t ConditionType) bool {
	c := FindCondition(cs, t)
	return c != nil && c.Status == False
}

// SetCondition sets c in cs, as OpenShift's operators do: the transition
// time moves (to c's, else now) only when the status changes. It reports
// whether anything changed.
func SetCondition(cs *[]Condition, c Condition) bool {
	if c.LastTransitionTime.IsZero() {
		c.LastTransitionTime = Now()
	}
	old := FindCondition(*cs, c.Type)
	if old == nil {
		*cs = append(*cs, c)
		return true
	}
	if old.Status == c.Status && old.Reason == c.Reason && old.Message == c.Message {
		return false
	}
	if old.Status == c.Status {
		c.LastTransitionTime = old.LastTransitionTime
	}
	*old = c
	return true
}

// ObjectMeta is the part of Kubernetes' object metadata the installer reads
// and writes.
type ObjectMeta struct {
	Name string `json:"name"`
	// Namespace is empty for cluster-scoped objects.
	Namespace         string            `json:"namespace,omitempty"`
	UID               string            `json:"uid,omitempty"`
	ResourceVersion   string            `json:"resourceVersion,omitempty"`
	Generation        int64             `json:"generation,omitempty"`
	CreationTimestamp Time              `json:"creationTimestamp,omitzero"`
	Labels            map[string]string `json:"labels,omitempty"`
	Annotations       map[string]string `json:"annotations,omitempty"`
}

// Release names an OpenShift release.
type Release struct {
	Version  string   `json:"version"`
	Image    string   `json:"image"`
	URL      string   `json:"url,omitempty"`
	Channels []string `json:"channels,omitempty"`
}

// UpdateState is an UpdateHistory entry's state.
type UpdateState string

// The update states.
const (
	UpdateCompleted UpdateState = "Completed"
	UpdatePartial   UpdateState = "Partial"
)

// UpdateHistory is one release the cluster was at or moved to; the first
// entry is the newest.
type UpdateHistory struct {
	State          UpdateState `json:"state"`
	StartedTime    Time        `json:"startedTime"`
	CompletionTime *Time       `json:"completionTime"`
	Version        string      `json:"version"`
	Image          string      `json:"image"`
	Verified       bool        `json:"verified"`
}

// ClusterVersionSpec is what the cluster is told to run.
type ClusterVersionSpec struct {
	ClusterID     string   `json:"clusterID"`
	Channel       string   `json:"channel,omitempty"`
	DesiredUpdate *Release `json:"desiredUpdate,omitempty"`
}

// ClusterVersionStatus is what the cluster version operator reports.
type ClusterVersionStatus struct {
	Desired            Release         `json:"desired"`
	History            []UpdateHistory `json:"history"`
	ObservedGeneration int64           `json:"observedGeneration"`
	VersionHash        string          `json:"versionHash"`
	Conditions         []Condition     `json:"conditions,omitempty"`
	// AvailableUpdates is null when none are known, as the operator
	// writes it.
	AvailableUpdates []Release `json:"availableUpdates"`
}

// ClusterVersion is config.openshift.io/v1 ClusterVersion; a cluster has
// one, named "version".
type ClusterVersion struct {
	APIVersion string               `json:"apiVersion"`
	Kind       string               `json:"kind"`
	Metadata   ObjectMeta           `json:"metadata"`
	Spec       ClusterVersionSpec   `json:"spec"`
	Status     ClusterVersionStatus `json:"status"`
}

// OperandVersion is a version an operator reports ("operator" is its own).
type OperandVersion struct {
	Name    string `json:"name"`
	Version string `json:"version"`
}

// ObjectReference points at an object related to an operator.
type ObjectReference struct {
	Group     string `json:"group"`
	Resource  string `json:"resource"`
	Namespace string `json:"namespace,omitempty"`
	Name      string `json:"name"`
}

// ClusterOperatorStatus is what an operator reports about itself.
type ClusterOperatorStatus struct {
	Conditions     []Condition       `json:"conditions,omitempty"`
	Versions       []OperandVersion  `json:"versions,omitempty"`
	RelatedObjects []ObjectReference `json:"relatedObjects,omitempty"`
}

// ClusterOperator is config.openshift.io/v1 ClusterOperator.
type ClusterOperator struct {
	APIVersion string                `json:"apiVersion"`
	Kind       string                `json:"kind"`
	Metadata   ObjectMeta            `json:"metadata"`
	Spec       struct{}              `json:"spec"`
	Status     ClusterOperatorStatus `json:"status"`
}

// Version returns the operator's "operator" version, or "".
func (co *ClusterOperator) Version() string {
	for _, v := range co.Status.Versions {
		if v.Name == "operator" {
			return v.Version
		}
	}
	return ""
}

const (
	clusterVersions  = "/apis/" + APIVersion + "/clusterversions"
	clusterOperators = "/apis/" + APIVersion + "/clusteroperators"
)

func objectPath(collection, name string) string {
	return collection + "/" + url.PathEscape(name)
}

// GetClusterVersion reads a ClusterVersion ("version").
func (c *Client) GetClusterVersion(ctx context.Context, name string) (*ClusterVersion, error) {
	return call[ClusterVersion](ctx, c, http.MethodGet, objectPath(clusterVersions, name), nil)
}

// CreateClusterVersion creates cv (its status is dropped by the API: set
// it with UpdateClusterVersionStatus).
func (c *Client) CreateClusterVersion(ctx context.Context, cv *ClusterVersion) (*ClusterVersion, error) {
	cv.APIVersion, cv.Kind = APIVersion, "ClusterVersion"
	return call[ClusterVersion](ctx, c, http.MethodPost, clusterVersions, cv)
}

// UpdateClusterVersionStatus writes cv's status. cv's resourceVersion makes
// it a compare-and-swap: a stale one is ErrConflict.
func (c *Client) UpdateClusterVersionStatus(ctx context.Context, cv *ClusterVersion) (*ClusterVersion, error) {
	cv.APIVersion, cv.Kind = APIVersion, "ClusterVersion"
	return call[ClusterVersion](ctx, c, http.MethodPut, objectPath(clusterVersions, cv.Metadata.Name)+"/status", cv)
}

// ListClusterOperators lists every ClusterOperator, by name.
func (c *Client) ListClusterOperators(ctx context.Context) ([]ClusterOperator, error) {
	return list[ClusterOperator](ctx, c, clusterOperators)
}

// GetClusterOperator reads one ClusterOperator.
func (c *Client) GetClusterOperator(ctx context.Context, name string) (*ClusterOperator, error) {
	return call[ClusterOperator](ctx, c, http.MethodGet, objectPath(clusterOperators, name), nil)
}

// CreateClusterOperator creates co (its status is dropped by the API: set
// it with UpdateClusterOperatorStatus).
func (c *Client) CreateClusterOperator(ctx context.Context, co *ClusterOperator) (*ClusterOperator, error) {
	co.APIVersion, co.Kind = APIVersion, "ClusterOperator"
	return call[ClusterOperator](ctx, c, http.MethodPost, clusterOperators, co)
}

// UpdateClusterOperatorStatus writes co's status (compare-and-swap on its
// resourceVersion, as UpdateClusterVersionStatus).
func (c *Client) UpdateClusterOperatorStatus(ctx context.Context, co *ClusterOperator) (*ClusterOperator, error) {
	co.APIVersion, co.Kind = APIVersion, "ClusterOperator"
	return call[ClusterOperator](ctx, c, http.MethodPut, objectPath(clusterOperators, co.Metadata.Name)+"/status", co)
}

// CompletedVersion is the newest Completed release in cv's history, or "".
func (cv *ClusterVersion) CompletedVersion() string {
	for _, h := range cv.Status.History {
		if h.State == UpdateCompleted {
			return h.Version
		}
	}
	return ""
}

// Installed reports whether cv says the cluster is up, as
// openshift-install's wait-for install-complete decides it: Available
// True, Failing False and Progressing False.
func (cv *ClusterVersion) Installed() bool {
	cs := cv.Status.Conditions
	return IsTrue(cs, Available) && IsFalse(cs, Failing) && IsFalse(cs, Progressing)
}

// trimMessage shortens a message for a one-line summary.
func trimMessage(s string) string {
	s = strings.TrimSpace(s)
	if i := strings.IndexByte(s, '\n'); i >= 0 {
		s = s[:i]
	}
	return s
}

// Summary is the one-line state of a ClusterVersion, as
// `oc get clusterversion` shows it: the version, and the Progressing
// message.
func (cv *ClusterVersion) Summary() string {
	v := cv.CompletedVersion()
	if v == "" {
		v = cv.Status.Desired.Version
	}
	msg := ""
	if p := FindCondition(cv.Status.Conditions, Progressing); p != nil {
		msg = trimMessage(p.Message)
	}
	if msg == "" {
		return v
	}
	return v + ": " + msg
}
