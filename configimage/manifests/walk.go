package manifests

import (
	"reflect"
	"strings"

	"github.com/nodezero/nodezero/configimage/report"
	"gopkg.in/yaml.v3"
)

var unmarshalerType = reflect.TypeFor[yaml.Unmarshaler]()

// unknownFields warns about the keys under path that t has no field for,
// following t's yaml tags the way yaml.v3 decodes; the keys are the ones
// report.Walk found.
func (d *doc) unknownFields(path string, t reflect.Type) {
	for t.Kind() == reflect.Pointer {
		t = t.Elem()
	}
	if reflect.PointerTo(t).Implements(unmarshalerType) {
		return // free-form (NetConfig)
	}
	switch t.Kind() {
	case reflect.Struct:
		fields := yamlFields(t)
		for _, k := range d.tree.Keys(path) {
			ft, ok := fields[k.Name]
			if !ok {
				d.l.warns = append(d.l.warns, report.Entry{File: d.tree.File, Line: k.Pos.Line, Column: k.Pos.Column,
					Path: k.Path, Severity: report.Warning, Message: "unknown field, ignored"})
				continue
			}
			d.unknownFields(k.Path, ft)
		}
	case reflect.Map:
		for _, k := range d.tree.Keys(path) {
			d.unknownFields(k.Path, t.Elem())
		}
	case reflect.Slice:
		for i := range d.tree.Len(path) {
			d.unknownFields(report.Index(path, i), t.Elem())
		}
	}
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
