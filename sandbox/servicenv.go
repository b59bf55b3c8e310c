package sandbox

import "fmt"

// What the sandbox's node zero is told through its environment, as ABI's
// units tell assisted-service through assisted-service.env.

// disabledSteps are the step types node zero never hands a sandbox host
// (assisted's DISABLED_STEPS): free-network-addresses arpings the hosts'
// subnet, and loopback has no link layer to arping on.
const disabledSteps = "free-network-addresses"

// sandboxDiskSpeedMs is the disk-speed threshold of the sandbox's hosts
// when their disk files lie on a real disk. Assisted's 10 ms is what etcd
// needs of a server's disk; five hosts writing files on one virtual disk
// at once measured 14 ms here, and nothing runs etcd on these files.
const sandboxDiskSpeedMs = 100

// sandboxRequirements is HW_VALIDATOR_REQUIREMENTS for those hosts:
// assisted's default table (daemon/validation/default_hw_requirements.json)
// with sandboxDiskSpeedMs for every role.
var sandboxRequirements = fmt.Sprintf(`[{"version":"default",`+
	`"master":{"cpu_cores":4,"ram_mib":16384,"disk_size_gb":100,"installation_disk_speed_threshold_ms":%[1]d,"network_latency_threshold_ms":100,"packet_loss_percentage":0},`+
	`"arbiter":{"cpu_cores":2,"ram_mib":8192,"disk_size_gb":50,"installation_disk_speed_threshold_ms":%[1]d,"network_latency_threshold_ms":1000,"packet_loss_percentage":0},`+
	`"worker":{"cpu_cores":2,"ram_mib":8192,"disk_size_gb":100,"installation_disk_speed_threshold_ms":%[1]d,"network_latency_threshold_ms":1000,"packet_loss_percentage":10},`+
	`"sno":{"cpu_cores":8,"ram_mib":16384,"disk_size_gb":100,"installation_disk_speed_threshold_ms":%[1]d},`+
	`"edge-worker":{"cpu_cores":2,"ram_mib":8192,"disk_size_gb":15,"installation_disk_speed_threshold_ms":%[1]d}},`+
	`{"version":"4.22","match_type":"min_version","sno":{"cpu_cores":4}}]`, sandboxDiskSpeedMs)

// hostsEnv is the environment of the hosts whose disk files lie in disks:
// the disabled steps, and on a real disk (not a tmpfs) the sandbox's
// disk-speed threshold.
func hostsEnv(disks string) []string {
	env := []string{"DISABLED_STEPS=" + disabledSteps}
	if !onTmpfs(disks) {
		env = append(env, "HW_VALIDATOR_REQUIREMENTS="+sandboxRequirements)
	}
	return env
}
