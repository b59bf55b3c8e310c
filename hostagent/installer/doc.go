// Package installer runs the install step inside the host agent: the part
// assisted-installer plays on a host once the service hands it an install
// instruction (docs/reference/agent-and-installer.md §2.13 and §5).
//
// Run writes the OS image and the host's ignition to the boot device,
// reporting assisted's progress stages with their exact names, waits for
// the control plane where the role asks for it, and schedules the reboot.
// The stages each role reports are a forward-only subset of the service's
// list for that role (docs/reference/assisted-service.md §7.3):
//
//	master, arbiter: Starting installation, Installing, Writing image to disk, Rebooting
//	worker:          ... Writing image to disk, Waiting for control plane, Rebooting
//	bootstrap:       ... Writing image to disk, Waiting for control plane,
//	                 Waiting for bootkube, Waiting for controller, Rebooting
//	single node:     Starting installation, Installing, Waiting for bootkube,
//	                 Writing image to disk, Rebooting
//
// The image is written by coreos-installer when the host has it, else by
// the built-in writer the caller passes (Config.Write). The built-in writer
// knows nothing of installer args, so the installer folds the ones it can
// honour (kernel arguments, --copy-network) into the ignition first boot
// applies, and refuses the others by name.
//
// installer imports only the wire package of the project.
package installer
