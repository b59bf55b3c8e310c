// Package inputs reads install-config.yaml and agent-config.yaml with the
// schema openshift-install defines for agent-based installs, and validates
// them with the installer's rules and messages
// (docs/reference/abi-on-host.md §9–§10), and nodes-config.yaml, the hosts
// day 2 adds to an installed cluster (nodesconfig.go), whose hosts follow
// agent-config's rules.
//
// Loading walks the yaml.Node tree with report.Walk, so that every problem
// carries the file, line and column of the node it is about, and a field
// path in the style of Kubernetes' field.ErrorList
// (hosts[1].interfaces[0].macAddress); rules run after loading are placed
// through the walk's report.Tree. Problems are collected, not returned one
// at a time, into a report.Report: errors block, warnings never do.
// Unknown keys follow openshift-install's loaders: errors in
// agent-config.yaml (read strictly), warnings in install-config.yaml (read
// leniently after a strict attempt); both name the nearest known key ("did
// you mean"). Beyond the installer's rules,
// the hosts' static addresses are checked against the machine networks,
// each other, the VIPs and the rendezvous IP (addresses.go), which
// assisted-service would otherwise only fail on the booted hosts.
//
//	ic, rep := inputs.LoadInstallConfig("install-config.yaml", icData)
//	ac, rep2 := inputs.LoadAgentConfig("agent-config.yaml", acData)
//	rep.Merge(rep2)
//	rep.Merge(inputs.Validate(ic, ac)) // nil configs are skipped
//	for _, w := range rep.Warnings() { ... }
//	if err := rep.Err(); err != nil { ... } // errors.Is(err, report.ErrInvalid)
//
// The package imports the standard library, gopkg.in/yaml.v3 and, of this
// module, configimage/report and configimage/nmstate.
package inputs
