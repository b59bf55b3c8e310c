package sandbox

import (
	"fmt"
	"io"
	"net"
	"net/url"
	"path/filepath"
	"time"
)

// NextSteps is what the person does after a run: where the credentials
// are, whether the APIs still answer, how to clean up and run again. It is
// printed at the end and kept in summary.json.
type NextSteps struct {
	Kubeconfig        string `json:"kubeconfig"`
	KubeadminPassword string `json:"kubeadmin_password_file"`
	// UserTokenFile holds node zero's user token (never the token itself).
	UserTokenFile string `json:"user_token_file"`
	// API is node zero's REST API, APIState whether it answers: "answers",
	// "stops with the sandbox" or "stopped with the sandbox".
	API      string `json:"api"`
	APIState string `json:"api_state"`
	// KubeAPI is the installed cluster's Kubernetes API ("" when none ran).
	KubeAPI      string `json:"kube_api,omitempty"`
	KubeAPIState string `json:"kube_api_state,omitempty"`
	Clean        string `json:"clean"`
	Resume       string `json:"resume"`
	Fresh        string `json:"fresh"`
	// Retry: the install failed, and Resume resets the cluster and
	// installs it again.
	Retry bool `json:"retry,omitempty"`
}

// API states.
const (
	apiAnswers     = "answers"
	apiStops       = "stops with the sandbox"
	apiStopped     = "stopped with the sandbox"
	apiNotAnswered = "does not answer"
)

// nextSteps fills the block for the run in dir. running says whether the
// hosts (and the kube API) go on after the sandbox returns (--keep-running)
// or are still up only until it exits; probed APIs say "answers" only
// when they accept a connection now.
func nextSteps(dir, installDir, tokenFile, api, kubeAPI string, running, up bool) NextSteps {
	n := NextSteps{
		Kubeconfig:        filepath.Join(installDir, "auth", "kubeconfig"),
		KubeadminPassword: filepath.Join(installDir, "auth", "kubeadmin-password"),
		UserTokenFile:     tokenFile,
		API:               api,
		APIState:          apiState(api, running, up),
		KubeAPI:           kubeAPI,
		Clean:             "nodezero sandbox clean --dir " + dir + "   (the disks; rm -rf " + dir + " for the rest)",
		Resume:            "nodezero sandbox --dir " + dir + " --resume",
		Fresh:             "nodezero sandbox --dir " + dir + " --fresh",
	}
	if kubeAPI != "" {
		n.KubeAPIState = apiState(kubeAPI, running, up)
	}
	return n
}

// apiState probes u: only a connection accepted now is "answers"; an API
// that is up until the sandbox exits "stops with the sandbox".
func apiState(u string, running, up bool) string {
	if !up {
		if answers(u) {
			return apiAnswers
		}
		return apiStopped
	}
	if !answers(u) {
		return apiNotAnswered
	}
	if running {
		return apiAnswers + " (until you interrupt the sandbox)"
	}
	return apiStops
}

// answers reports whether something accepts a TCP connection at u's host
// and port within a second.
func answers(u string) bool {
	pu, err := url.Parse(u)
	if err != nil || pu.Host == "" {
		return false
	}
	c, err := net.DialTimeout("tcp", pu.Host, time.Second)
	if err != nil {
		return false
	}
	c.Close()
	return true
}

// print writes the block.
func (n NextSteps) print(w io.Writer) {
	fmt.Fprintln(w, "\nnext steps")
	fmt.Fprintf(w, "  kubeconfig          %s\n", n.Kubeconfig)
	fmt.Fprintf(w, "  kubeadmin password  %s\n", n.KubeadminPassword)
	fmt.Fprintf(w, "  node zero's API     %s: %s (user token in %s)\n", n.API, n.APIState, n.UserTokenFile)
	if n.KubeAPI != "" {
		fmt.Fprintf(w, "  cluster API         %s: %s\n", n.KubeAPI, n.KubeAPIState)
	}
	fmt.Fprintf(w, "  clean up            %s\n", n.Clean)
	fmt.Fprintf(w, "  run again           %s   (a new install)\n", n.Fresh)
	if n.Retry {
		fmt.Fprintf(w, "  retry               %s  (resets the failed cluster, reboots the hosts into discovery, installs again)\n", n.Resume)
		return
	}
	fmt.Fprintf(w, "                      %s  (continue this one)\n", n.Resume)
}
