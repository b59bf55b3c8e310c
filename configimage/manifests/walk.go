package manifests

import (
	"fmt"
	"reflect"
	"strings"

	"gopkg.in/yaml.v3"
)

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// walk records where each field of n sits and warns about keys t has no
// field for. It follows t's yaml tags the way yaml.v3 decodes.
func (d *doc) walk(n *yaml.Node, t reflect.Type, p string, depth int) {
	n = resolve(n)
	if depth > 100 {
		return
	}
	if _, ok := d.paths[p]; !ok {
		d.paths[p] = n
	}
	if _, ok := d.lines[n.Line]; !ok && n.Kind == yaml.ScalarNode {
		d.lines[n.Line] = p
	}
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return // free-form (NetConfig)
	}
	switch t.Kind() {
	case reflect.Struct:
		if n.Kind != yaml.MappingNode {
			return
		}
		fields := yamlFields(t)
		for i := 0; i+1 < len(n.Content); i += 2 {
			k := resolve(n.Content[i])
			sub := join(p, k.Value)
			if _, ok := d.keys[sub]; !ok {
				d.keys[sub] = k
			}
			ft, ok := fields[k.Value]
			if !ok {
				d.l.warns = append(d.l.warns, Problem{File: d.file, Line: k.Line, Column: k.Column, Path: sub, Message: "unknown field, ignored"})
				continue
			}
			d.walk(n.Content[i+1], ft, sub, depth+1)
		}
	case reflect.Map:
		if n.Kind != yaml.MappingNode {
			return
		}
		for i := 0; i+1 < len(n.Content); i += 2 {
			d.walk(n.Content[i+1], t.Elem(), join(p, resolve(n.Content[i]).Value), depth+1)
		}
	case reflect.Slice:
		if n.Kind != yaml.SequenceNode {
			return
		}
		for i, item := range n.Content {
			d.walk(item, t.Elem(), fmt.Sprintf("%s[%d]", p, i), depth+1)
		}
	}
}

func join(p, key string) string {
	if p == "" {
		return key
	}
	return p + "." + key
}

// yamlFields maps the yaml keys of struct t to field types, inline
// structs included.
func yamlFields(t reflect.Type) map[string]reflect.Type {
	out := map[string]reflect.Type{}
	for i := range t.NumField() {
		f := t.Field(i)
		if !f.IsExported() {
			continue
		}
		tag := f.Tag.Get("yaml")
		name, opts, _ := strings.Cut(tag, ",")
		if name == "-" {
			continue
		}
		if strings.Contains(opts, "inline") {
			for k, v := range yamlFields(f.Type) {
				out[k] = v
			}
			continue
		}
		if name == "" {
			name = strings.ToLower(f.Name)
		}
		out[name] = f.Type
	}
	return out
}

func typeOf(v any) reflect.Type { return reflect.TypeOf(v) }

// typeMetaOf returns the TypeMeta of one of the manifest types.
func typeMetaOf(v any) TypeMeta {
	switch x := v.(type) {
	case *ClusterDeployment:
		return x.TypeMeta
	case *AgentClusterInstall:
		return x.TypeMeta
	case *ClusterImageSet:
		return x.TypeMeta
	case *InfraEnv:
		return x.TypeMeta
	case *Secret:
		return x.TypeMeta
	case *NMStateConfig:
		return x.TypeMeta
	}
	return TypeMeta{}
}
