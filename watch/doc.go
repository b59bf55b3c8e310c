// Package watch follows an install from outside node zero: one cluster
// through node zero's v2 REST API (a wire.Client), and, once node zero has
// rebooted into the cluster, the installed cluster through its Kubernetes
// API (a kube.Client).
//
// The parts, each usable alone:
//
//   - Watcher (watcher.go) polls node zero and says what changed since its
//     last poll: whether node zero answered, the cluster's status, each
//     validation whose status or message changed (through
//     wire.ValidationsInfo), the hosts whose status or install stage moved,
//     and the events that arrived (EventTail, events.go). Follow polls at an
//     interval until the caller is done.
//   - ClusterFollower (kube.go) follows the installed cluster's
//     ClusterVersion and cluster operators until it is initialized.
//   - WaitFor (waitfor.go, waitfor_lines.go) is `nodezero wait-for`: the two
//     above with openshift-install's log lines and exit statuses (5: the
//     bootstrap failed, 6: the install failed), and ReadInstallDir
//     (installdir.go) reads what `nodezero create config-image --dir`
//     leaves for it.
//   - AddNodes (addnodes.go) is `nodezero wait-for add-nodes`, like
//     `oc adm node-image monitor`: each added host through its own node
//     zero, then the cluster's CSRs (approved on request) and its Node.
//
// The load program (package loadtest) follows its cluster through a
// Watcher reading host counts from the cluster list; the sandbox's
// progress lines and the console's source can do the same with hosts.
//
// watch is a composition package: it may import wire, kube, configimage
// (the install directory's file names) and internal/ leaves, never cmd;
// daemon, hostagent and tui never import it.
package watch
