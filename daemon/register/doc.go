// Package register is what the agent-based installer's
// agent-installer-client does on node zero (assisted-service
// cmd/agentbasedinstaller, docs/reference/assisted-service.md §10), spoken over
// HTTP to any assisted v2 service with the user token:
//
//   - RegisterCluster and RegisterInfraEnv turn the ZTP manifests into a
//     cluster and an infra-env, reusing what a previous run registered;
//   - ApplyInstallConfigOverrides and RegisterExtraManifests apply the
//     AgentClusterInstall's install-config overrides and upload the extra
//     manifests, comparing first so that a restart sends nothing twice;
//   - ApplyHostConfigs applies the per-host roles and root device hints of
//     HOST_CONFIG_DIR as hosts come in, and WriteFailures writes what is
//     still wrong where install-status reads it;
//   - ExpectedHosts and StartDecision say when the installation may start
//     (start-cluster-installation.sh).
package register
