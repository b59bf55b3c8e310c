// Package machineimage makes the bootstrap data of one Cluster API
// Machine: a config image (or the same files as an Ignition v3 config)
// that boots a host as an agent of a hub `nodezero service` (the one the
// Cluster API providers run in the management cluster). Its
// rendezvous-host.env names the hub's URL, the agent token and the
// Machine's own infra-env (INFRA_ENV_ID), so the host registers straight
// into it and never becomes node zero; /etc/nodezero/machine names the
// Machine; the host's root device hints, NMState keyfiles and NTP sources
// and the hub's CA come along when given. The same Spec always gives the
// same bytes, so a re-made data secret is byte-identical.
//
// It imports configimage (Build, the host-config, keyfile and chrony
// renderers), configimage/inputs and configimage/manifests for their
// types, and onhost for the on-host formats; nothing of Kubernetes.
package machineimage
