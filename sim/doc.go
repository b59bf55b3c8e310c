// Package sim is what a sandbox or load-test install simulates, and
// nothing else: the fakes at the hardware and cluster edge after a host's
// install step. Everything here says SIMULATED where it logs.
//
//   - The firmware and the reboot of a host read from a hardware tree
//     (firmware.go): the installer's reboot records the disk the firmware
//     now boots (ROOT/var/lib/nodezero/boot-disk.json) and ends the
//     `nodezero run` process with ExitReboot; the sandbox starts it again.
//   - OpenShift's in-cluster controller on a host booted from its installed
//     disk (Controller): it reads the disk back, reports Configuring, Joined
//     and Done as assisted-installer-controller would, and on node zero
//     completes the installation once the cluster is finalizing.
//   - The cluster version operator and the cluster operators (StatusWriter):
//     their status written into the sandbox's Kubernetes API as the hosts
//     join; node zero completes only once the ClusterVersion is Available.
//   - The cluster's Nodes (nodes.go): each day-1 host's once it joined,
//     written by node zero's StatusWriter, so adding nodes finds the
//     architecture on a control-plane Node.
//   - A Cluster API Machine's host (machine.go): its config image binds it
//     to a Machine (onhost.MachineBinding); its Node, registered by the
//     host itself once it is Done (day 1, hub service) or by its Kubelet
//     (day 2), carries the Machine's providerID nodezero://<ns>/<name>.
//   - Day 2 (sandbox add-nodes): the installed cluster's machine config
//     server (MCS, mcs.go: the worker pool's Ignition with the kubelet's
//     bootstrap kubeconfig, over TLS), and a day-2 host booted from its
//     installed disk (day2.go): its disk's pointer Ignition is fetched as
//     Ignition would (ignitionfetch.go), then a kubelet (kubelet.go) asks
//     for its client certificate, registers its Node, asks for its serving
//     certificate, each CSR waiting for someone's approval; the kubelet
//     plays the CSR signer too (kube-controller-manager does not run).
//
// One controller serves both simulations: a sandbox host's `nodezero run`
// on its booted disk (RunInstalled, called by the node runtime) and each of
// a load test's simulated hosts (sim/simagent).
//
// sim imports wire, kube, hostagent/installer (the stages a booted host
// reports), hostagent/diskwrite (the disk read back) and internal/; never
// daemon, the node runtime, sandbox or cmd.
package sim
