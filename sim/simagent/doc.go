// Package simagent simulates host agents for load tests: each Agent is one
// goroutine that speaks the agent protocol over real HTTP exactly as
// hostagent does — register, ask for instructions with ?wait= (or, with
// Config.Wait 0, every next_instruction_seconds without it, as
// assisted-installer-agent does), answer each step, leave out replies
// whose output did not change — but its hardware
// and its steps' results are synthetic, so a thousand of them cost the
// machine little more than their HTTP traffic.
//
// A simulated host's addresses lie in one data-only network (DefaultNetwork,
// the RFC 2544 benchmarking range): they appear in inventories and step
// outputs only; nothing is ever sent to them. The only traffic is the
// agents' requests to the service URL they are given.
//
// The install step is the real installer (hostagent/installer) with a
// sparse file for a disk and a simulated reboot, after which the host runs
// the simulated in-cluster controller (package sim, the one a sandbox host
// runs): it reports the stages OpenShift would until it is installed
// (install.go).
//
// simagent imports only the wire package, the installer, the disk speed
// check's argument decoder, sim (the simulated controller), internal/ and
// the standard library.
package simagent
