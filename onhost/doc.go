// Package onhost owns the files an agent-based install keeps on a host,
// one reader and one writer each: where they live (paths.go), the env files
// with their systemd EnvironmentFile syntax (rendezvous-host.env,
// assisted-service.env, start-cluster.env: env.go), node zero's record
// /etc/assisted/node0 (node0.go) and the record of the disk a host boots
// after its install (boot-disk.json: bootdisk.go) and the Cluster API
// Machine a hub agent was booted for (/etc/nodezero/machine: machine.go). The layout is the
// agent-based installer's (docs/reference/abi-on-host.md §2); a real host
// and a sandbox host differ only in the root the paths are joined to.
//
// onhost imports nothing of this module; every layer may import it.
package onhost
