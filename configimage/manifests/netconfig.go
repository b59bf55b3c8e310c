package manifests

import (
	"fmt"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

// NetConfig is a host's nmstate document, as YAML text. It is written in
// the manifest as a nested mapping and read back in canonical form (keys
// sorted, the installer's layout): the form assisted-service hands on as
// static_network_config network_yaml, since it turns the CRD's JSON back
// into YAML the same way (api/v1beta1/nmstate_util.go).
type NetConfig string

// MarshalYAML returns the document as a node, so it nests in the manifest.
func (c NetConfig) MarshalYAML() (any, error) {
	if c == "" {
		return nil, nil
	}
	var doc yaml.Node
	if err := yaml.Unmarshal([]byte(c), &doc); err != nil {
		return nil, fmt.Errorf("nmstate config: %w", err)
	}
	if len(doc.Content) == 0 {
		return nil, nil
	}
	root := resolve(doc.Content[0])
	if root.Kind != yaml.MappingNode {
		return nil, fmt.Errorf("nmstate config: line %d: want a mapping", root.Line)
	}
	return root, nil
}

// UnmarshalYAML takes a mapping (or null) and keeps its canonical text.
func (c *NetConfig) UnmarshalYAML(n *yaml.Node) error {
	n = resolve(n)
	if n.Kind == yaml.ScalarNode && n.ShortTag() == "!!null" {
		*c = ""
		return nil
	}
	if n.Kind != yaml.MappingNode {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: nmstate config must be a mapping", n.Line)}}
	}
	// What JSON cannot hold, as the CRD's JSON form cannot: non-scalar
	// and repeated mapping keys (report.Walk; an alias bomb ends there too).
	if _, rep, ok := report.Walk("", n, walkLimits); !ok || rep.HasErrors() {
		e := rep.Errors()[0]
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: nmstate config: %s", e.Line, e.Message)}}
	}
	if len(n.Content) == 0 {
		*c = ""
		return nil
	}
	b, err := marshal(n)
	if err != nil {
		return &yaml.TypeError{Errors: []string{fmt.Sprintf("line %d: nmstate config: %v", n.Line, err)}}
	}
	*c = NetConfig(b)
	return nil
}

// Canonical returns the document in canonical form: what Write then Load
// make of it.
func (c NetConfig) Canonical() (NetConfig, error) {
	v, err := c.MarshalYAML()
	if err != nil || v == nil {
		return "", err
	}
	var out NetConfig
	if err := out.UnmarshalYAML(v.(*yaml.Node)); err != nil {
		return "", err
	}
	return out, nil
}
