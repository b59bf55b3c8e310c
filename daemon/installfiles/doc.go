// Package installfiles makes a cluster's install files when the cluster goes
// preparing-for-installation: the install-config.yaml assembled from the
// stored cluster (as assisted-service's install-config builder does), the
// role Ignition configs bootstrap.ign, master.ign and worker.ign (arbiter.ign
// when the cluster has arbiters), metadata.json, the admin kubeconfig, the
// kubeadmin password, and one whole Ignition config per host.
//
// Two payload adapters make them. When the factory image's payload carries
// an openshift-install executable, Generate runs it (create manifests, then
// create ignition-configs) in a scratch directory and reads its outputs.
// Otherwise a built-in generator writes Ignition 3.4.0 configs that lay the
// cluster's facts on disk (the core user's SSH keys, the pull secret, the
// trust bundle, the role, and on the bootstrap host the install-config,
// the user manifests and the credentials) without the control-plane
// manifests only openshift-install can render.
//
// Both use one set of credentials: the signers and kubeadmin password of
// the config image's /opt/agent/tls (Input.TLSDir), which the user's
// auth/kubeconfig and auth/kubeadmin-password were made with. openshift-install
// gets that directory's files in its tls/ with
// OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true, as assisted-service gives them;
// the built-in generator lays the same signers and hash into its configs.
// Without a directory (a service started on its own) a set is minted.
//
// A host added to an installed cluster (day 2) gets no generated files:
// PointerIgnition makes its Ignition, a pointer to the cluster's machine
// config server, as assisted-service does.
//
// Every Ignition config Generate returns has passed Check, which parses it
// as Ignition does and reports where it is wrong: file, JSON path, line and
// column.
//
// The package imports the standard library, coreos/ignition, yaml.v3,
// golang.org/x/crypto, the wire types of wire, configimage/credentials
// (the owner of the /opt/agent/tls format) and configimage/report (the
// shape of its problems), nothing else of this module.
package installfiles
