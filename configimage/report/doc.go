// Package report is the one shape every input problem takes and the one
// walk that places it. An Entry is a problem found in an input file —
// install-config.yaml, agent-config.yaml, a host's nmstate document, a ZTP
// manifest, an Ignition config, the facts the install files are made from
// — with its file, line, column, field path and severity; Entry.String
// writes it as "file:line:col: path: message" and is the only place that
// format is produced. A Report collects every entry, errors and warnings,
// so a person fixes the files in one pass: warnings never block, errors
// do (Report.Err).
//
// Walk is the one YAML walker: it visits a yaml.v3 node tree once, aliases
// followed within Limits, records where every field path sits (its value,
// its key, the keys of a mapping, the length of a list) in a Tree, and
// reports what no input may hold: mapping keys that are not strings,
// duplicate keys, merge keys, documents too large or too deep. Loaders
// then decode with their own schema and place what their rules find
// through the Tree (Tree.Value, Tree.Field), ignition/vcontext style: a
// rule names a path, the tree says where it is, or where its nearest
// parent is when the value was absent or defaulted. Check is the same walk
// without the tree, for a decoder that reads positions from the nodes it
// holds (nmstate).
//
// Field paths are written as Kubernetes' field.ErrorList writes them and
// as openshift-install prints them: hosts[1].interfaces[0].macAddress
// (Child, Index, Parent).
//
// The shape follows github.com/coreos/vcontext (Ignition's report: entries
// carry a logical path, a tree of the document correlates it with a line
// and column), but does not use its types: its YAML tree keeps a mapping
// as a Go map, so it drops duplicate keys and key order, it does not
// follow aliases nor bound them, its paths print as $.hosts.1.interfaces
// where users of openshift-install and nmstate read hosts[1].interfaces,
// and its entries carry no file. Ignition's own reports are converted to
// entries where Ignition configs are checked (daemon/installfiles).
//
// The package imports the standard library and gopkg.in/yaml.v3 only.
package report
