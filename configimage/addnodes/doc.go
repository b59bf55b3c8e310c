// Package addnodes makes the node config image of day 2: what
// `nodezero create node-config-image` writes, as `oc adm node-image create`
// writes node-config.noarch.iso for ABI's add-nodes workflow
// (docs/reference/abi-on-host.md §1.1, §2, §3.7, §8.3, §13). From
// nodes-config.yaml (configimage/inputs) and what the installed cluster's
// API says of itself (kube.ClusterInfo) it writes Dir/node-config.noarch.iso:
// an agent_configimage ISO whose members make every added host its own node
// zero on 127.0.0.1 that imports the cluster (add-nodes.env, clusterconfig/),
// registers its infra-env from the ZTP manifests and installs itself as a
// day-2 worker. It owns the day-2 state file beside the image (the token key,
// the three tokens with their expiry, the infra-env id), so a rebuild gives
// the same bytes and a caller (the sandbox, wait-for add-nodes) can read the
// user token (LoadState).
//
// addnodes imports, of this module, configimage and its subpackages
// (inputs, manifests, credentials, report), kube (ClusterInfo only),
// onhost and internal/atomicfile.
package addnodes
