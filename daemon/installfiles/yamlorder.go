package installfiles

import (
	"bytes"
	"encoding/json"
	"slices"
	"strings"

	"gopkg.in/yaml.v3"
)

// installConfigOrder is the order of the top-level keys in the file,
// openshift's documentation order; other keys follow sorted.
var installConfigOrder = []string{
	"apiVersion", "baseDomain", "metadata", "networking", "controlPlane", "compute", "arbiter",
	"platform", "pullSecret", "sshKey", "proxy", "additionalTrustBundle",
}

func marshalInstallConfig(ic map[string]any) ([]byte, error) {
	node, err := yamlNode(ic, installConfigOrder)
	if err != nil {
		return nil, err
	}
	var buf bytes.Buffer
	enc := yaml.NewEncoder(&buf)
	enc.SetIndent(2)
	if err := enc.Encode(node); err != nil {
		return nil, err
	}
	if err := enc.Close(); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}

// yamlNode turns the tree into YAML nodes, map keys in order first, the
// rest sorted (yaml.v3 would sort them all).
func yamlNode(v any, order []string) (*yaml.Node, error) {
	switch v := v.(type) {
	case map[string]any:
		n := &yaml.Node{Kind: yaml.MappingNode}
		keys := make([]string, 0, len(v))
		for k := range v {
			keys = append(keys, k)
		}
		slices.SortFunc(keys, func(a, b string) int {
			ia, ib := slices.Index(order, a), slices.Index(order, b)
			switch {
			case ia >= 0 && ib >= 0:
				return ia - ib
			case ia >= 0:
				return -1
			case ib >= 0:
				return 1
			}
			return strings.Compare(a, b)
		})
		for _, k := range keys {
			key, err := yamlNode(k, nil)
			if err != nil {
				return nil, err
			}
			val, err := yamlNode(v[k], nil)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, key, val)
		}
		return n, nil
	case []any:
		n := &yaml.Node{Kind: yaml.SequenceNode}
		for _, e := range v {
			c, err := yamlNode(e, nil)
			if err != nil {
				return nil, err
			}
			n.Content = append(n.Content, c)
		}
		return n, nil
	case json.Number:
		if i, err := v.Int64(); err == nil {
			return yamlNode(i, nil)
		}
		f, err := v.Float64()
		if err != nil {
			return nil, err
		}
		return yamlNode(f, nil)
	default:
		n := &yaml.Node{}
		if err := n.Encode(v); err != nil {
			return nil, err
		}
		return n, nil
	}
}
