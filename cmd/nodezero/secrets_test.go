package main

import (
	"archive/tar"
	"bytes"
	"compress/gzip"
	"context"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"io"
	"io/fs"
	"net/http"
	"net/url"
	"os"
	"os/exec"
	"path/filepath"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/nodezero/nodezero/configimage"
	"github.com/nodezero/nodezero/configimage/credentials"
	"github.com/nodezero/nodezero/configimage/inputs"
	"github.com/nodezero/nodezero/onhost"
	"github.com/nodezero/nodezero/sandbox"
	"github.com/nodezero/nodezero/wire"
)

// This file checks that an install's secrets stay where they belong (issue
// #8, security). The pull secret, the kubeadmin password, the three tokens
// and every private key of an install are known values; none may show in a
// log, an event, an API response a watcher token can read, or what
// `nodezero wait-for` prints. Every file that holds one must be its owner's
// alone (no group or other bits), and the files ABI puts on a host have
// ABI's modes (filemodes_test.go).
//
// The sandbox installs of TestSandboxInstalls and
// TestSandboxControlPlaneNeverJoins call checkSandboxSecrets, so the check
// costs no install of its own.

// secret is a value an install must keep out of its outputs.
type secret struct {
	name, value string
}

// needles are the forms a secret takes in an output: as is, escaped for
// JSON or a URL, and inside base64 (standard or URL alphabet) at each of
// the three byte alignments, as in a data URL or a base64 pull secret.
func (s secret) needles() [][]byte {
	v := []byte(s.value)
	out := [][]byte{v}
	add := func(b []byte) {
		if len(b) >= 8 && !slices.ContainsFunc(out, func(o []byte) bool { return bytes.Equal(o, b) }) {
			out = append(out, b)
		}
	}
	js, _ := json.Marshal(s.value)
	add(js[1 : len(js)-1])
	add(bytes.ReplaceAll(js[1:len(js)-1], []byte("/"), []byte(`\/`)))
	add([]byte(url.QueryEscape(s.value)))
	add([]byte(url.PathEscape(s.value)))
	for _, enc := range []*base64.Encoding{base64.StdEncoding, base64.URLEncoding} {
		for k := range 3 {
			b := enc.EncodeToString(append(make([]byte, k), v...))
			// Keep the characters that depend on the secret alone.
			from, to := (8*k+5)/6, 8*(k+len(v))/6
			if to-from >= 12 {
				add([]byte(b[from:to]))
			}
		}
	}
	return out
}

// findSecrets names the secrets found in data, looking inside gzip, tar
// and config images too.
func findSecrets(data []byte, secrets []secret) []string {
	var found []string
	for _, blob := range unwrap(data, 0) {
		for _, s := range secrets {
			if slices.Contains(found, s.name) {
				continue
			}
			for _, n := range s.needles() {
				if bytes.Contains(blob, n) {
					found = append(found, s.name)
					break
				}
			}
		}
	}
	return found
}

// unwrap returns data and, when it is a gzip stream, a tar archive or a
// config image, the contents too (two levels: a tar.gz log bundle).
func unwrap(data []byte, depth int) [][]byte {
	out := [][]byte{data}
	if depth > 2 {
		return out
	}
	switch {
	case len(data) > 2 && data[0] == 0x1f && data[1] == 0x8b:
		if zr, err := gzip.NewReader(bytes.NewReader(data)); err == nil {
			if b, err := io.ReadAll(io.LimitReader(zr, 256<<20)); err == nil {
				out = append(out, unwrap(b, depth+1)...)
			}
		}
	case len(data) > 262 && string(data[257:262]) == "ustar":
		tr := tar.NewReader(bytes.NewReader(data))
		for {
			h, err := tr.Next()
			if err != nil {
				break
			}
			if h.Typeflag == tar.TypeReg {
				if b, err := io.ReadAll(io.LimitReader(tr, 256<<20)); err == nil {
					out = append(out, unwrap(b, depth+1)...)
				}
			}
		}
	case len(data) > 0x8006 && string(data[0x8001:0x8006]) == "CD001":
		if ms, err := configimage.Read(bytes.NewReader(data), int64(len(data)), configimage.Limits{}); err == nil {
			for _, m := range ms {
				out = append(out, unwrap(m.Data, depth+1)...)
			}
		}
	}
	return out
}

// privateKeyPEM reports whether data holds a PEM private key (of any kind,
// SSH included).
func privateKeyPEM(data []byte) bool {
	for _, blob := range unwrap(data, 0) {
		for rest := blob; ; {
			var blk *pem.Block
			blk, rest = pem.Decode(rest)
			if blk == nil {
				break
			}
			if strings.HasSuffix(blk.Type, "PRIVATE KEY") {
				return true
			}
		}
	}
	return false
}

// pemSecrets are two body lines of each PEM block of p: a leaked key shows
// them, and they are random (the first line starts with a fixed DER
// header, so the second is taken, and one from the middle).
func pemSecrets(name, p string) []secret {
	var out []secret
	for i, blk := range strings.Split(p, "-----END") {
		var body []string
		for _, l := range strings.Split(blk, "\n") {
			if l = strings.TrimSpace(l); l != "" && !strings.HasPrefix(l, "-----") && !strings.HasSuffix(l, "-----") {
				body = append(body, l)
			}
		}
		if len(body) < 3 {
			continue
		}
		out = append(out, secret{fmt.Sprintf("%s #%d line 2", name, i), body[1]})
		if mid := len(body) / 2; mid > 1 {
			out = append(out, secret{fmt.Sprintf("%s #%d line %d", name, i, mid+1), body[mid]})
		}
	}
	return out
}

// installSecrets are the secrets of the install directory dir: the tokens
// (their signatures: the header and claims of a token are the same in
// every install), the kubeadmin password, the private keys of the
// credentials state, and the pull secret's auth values, encoded and
// decoded.
func installSecrets(t *testing.T, dir string) []secret {
	t.Helper()
	b, err := os.ReadFile(filepath.Join(dir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	st, err := credentials.Parse(b)
	if err != nil {
		t.Fatal(err)
	}
	var out []secret
	for _, s := range []string{configimage.TokenAgent, configimage.TokenUser, configimage.TokenWatcher} {
		parts := strings.Split(st.Tokens[s], ".")
		if len(parts) != 3 || len(parts[2]) < 40 {
			t.Fatalf("state: %s token %q is not a signed JWT", s, st.Tokens[s])
		}
		out = append(out, secret{s + " token signature", parts[2]})
	}
	out = append(out, secret{"kubeadmin password (install dir)", st.KubeadminPass})
	out = append(out, pemSecrets("token signing key", st.ECPrivateKeyPEM)...)
	out = append(out, pemSecrets("admin client key", st.AdminKeyPEM)...)
	for _, name := range credentials.Signers {
		out = append(out, pemSecrets(name+" key", st.SignerKeyPEM[name])...)
	}
	ic, _, rep := configimage.LoadInputs(dir)
	if rep.HasErrors() {
		t.Fatal(rep.String())
	}
	out = append(out, pullSecretAuths(t, ic)...)
	return out
}

// pullSecretAuths are the auth values of ic's pull secret and what they
// decode to (user:password).
func pullSecretAuths(t *testing.T, ic *inputs.InstallConfig) []secret {
	t.Helper()
	var ps struct {
		Auths map[string]struct {
			Auth string `json:"auth"`
		} `json:"auths"`
	}
	if err := json.Unmarshal([]byte(ic.PullSecret), &ps); err != nil {
		t.Fatalf("install-config pullSecret: %v", err)
	}
	var out []secret
	for reg, a := range ps.Auths {
		if len(a.Auth) < 8 {
			continue
		}
		out = append(out, secret{"pull secret auth for " + reg, a.Auth})
		if dec, err := base64.StdEncoding.DecodeString(a.Auth); err == nil {
			out = append(out, secret{"pull secret credentials for " + reg, string(dec)})
		}
	}
	if len(out) == 0 {
		t.Fatal("install-config pullSecret has no auth value to look for")
	}
	return out
}

// output is something a person or a program other than the owner sees:
// a log, an API response, a command's output.
type output struct {
	what string
	data []byte
}

// checkOutputs fails for every secret found in an output.
func checkOutputs(t *testing.T, outs []output, secrets []secret) {
	t.Helper()
	for _, o := range outs {
		if found := findSecrets(o.data, secrets); len(found) > 0 {
			t.Errorf("%s holds %s", o.what, strings.Join(found, ", "))
		}
	}
}

// checkSandboxSecrets checks a finished sandbox install in dir: its host
// roots' modes, and no secret in the hosts' logs, the sandbox's output,
// node zero's events, the API responses a watcher token reads, the hosts'
// and cluster's JSON (user token) or what `nodezero wait-for` prints.
//
// Left out by design, as in assisted-service: the user token's
// /clusters/{id}/credentials and /downloads/credentials (the kubeadmin
// password and kubeconfig are what they serve), /downloads/files
// (install-config.yaml carries the pull secret), the hosts' Ignition
// downloads and the logs download.
//
// install/.nodezero_state.json carries the tokens for the person running
// the sandbox: the operator's own file, 0600 like openshift-install's
// auth/ files, checked for its mode. summary.json names that file and
// holds no secret (it carried the user token before).
func checkSandboxSecrets(t *testing.T, dir string, sum sandbox.Summary, sandboxOut string) {
	t.Helper()
	began := time.Now()
	installDir := filepath.Join(dir, "install")
	secrets := installSecrets(t, installDir)

	// Positive controls: the matcher sees every secret where it must be.
	state, err := os.ReadFile(filepath.Join(installDir, stateFile))
	if err != nil {
		t.Fatal(err)
	}
	for _, s := range secrets {
		if strings.HasPrefix(s.name, "pull secret") {
			continue
		}
		if len(findSecrets(state, []secret{s})) == 0 {
			t.Fatalf("the matcher does not find %s in the state file", s.name)
		}
	}

	var zero sandbox.HostSummary
	for _, h := range sum.Hosts {
		if h.Bootstrap {
			zero = h
		}
	}
	if zero.Root == "" {
		t.Fatalf("no bootstrap host in %+v", sum.Hosts)
	}
	env := readEnv(t, filepath.Join(zero.Root, onhost.AssistedServiceEnvPath))
	rv := readEnv(t, filepath.Join(zero.Root, onhost.RendezvousEnvPath))
	userTok, watcherTok := rv["USER_AUTH_TOKEN"], env["WATCHER_AUTH_TOKEN"]
	if userTok == "" || watcherTok == "" {
		t.Fatalf("node zero's env files lack a token: user set %v, watcher set %v", userTok != "", watcherTok != "")
	}

	// Node zero's service again, on its store, verifying with the
	// install's key: the install's own tokens are accepted.
	svcLog := filepath.Join(t.TempDir(), "service.log")
	p := start(t, svcLog, []string{"EC_PUBLIC_KEY_PEM=" + env["EC_PUBLIC_KEY_PEM"]},
		"service", "--dir", filepath.Join(zero.Root, dataDirPath), "--listen", "127.0.0.1:0", "--log-level", "debug", "--monitor-interval", "1h")
	waitFor(t, "node zero's service", 20*time.Second, func() (bool, string) { return listeningRE.MatchString(p.output()), p.output() })
	base := "http://" + listeningRE.FindStringSubmatch(p.output())[1] + "/api/assisted-install/v2"
	get := func(header, token, rel string) []byte {
		t.Helper()
		req, err := http.NewRequest("GET", base+rel, nil)
		if err != nil {
			t.Fatal(err)
		}
		req.Header.Set(header, token)
		resp, err := http.DefaultClient.Do(req)
		if err != nil {
			t.Fatal(err)
		}
		defer resp.Body.Close()
		b, err := io.ReadAll(resp.Body)
		if err != nil || resp.StatusCode != http.StatusOK {
			t.Fatalf("GET %s: %d %s (%v)", rel, resp.StatusCode, b, err)
		}
		return b
	}
	installed := sum.Status == wire.ClusterStatusInstalled
	// The cluster's kubeadmin password, made when the installation
	// started.
	var creds wire.Credentials
	if err := json.Unmarshal(get("Authorization", userTok, "/clusters/"+sum.ClusterID+"/credentials"), &creds); err != nil || creds.Password == "" {
		t.Fatalf("credentials: %+v %v", creds, err)
	}
	secrets = append(secrets, secret{"kubeadmin password (cluster)", creds.Password})
	checkOneSetOfCredentials(t, installDir, creds.Password,
		get("Authorization", userTok, "/clusters/"+sum.ClusterID+"/downloads/credentials?file_name=kubeconfig-noingress"))

	var outs []output
	watch := func(rel string) []byte {
		b := get("Watcher-Authorization", watcherTok, rel)
		outs = append(outs, output{"GET " + rel + " (watcher)", b})
		return b
	}
	watch("/clusters")
	watch("/clusters/" + sum.ClusterID)
	watch("/infra-envs")
	var evs []*wire.Event
	if err := json.Unmarshal(watch("/events?cluster_id="+sum.ClusterID), &evs); err != nil {
		t.Fatal(err)
	}
	if len(evs) < 10 {
		t.Fatalf("%d events: too few to say anything", len(evs))
	}
	watch("/events?cluster_id=" + sum.ClusterID + "&cluster_level=true")
	var ies []*wire.InfraEnv
	if err := json.Unmarshal(get("Watcher-Authorization", watcherTok, "/infra-envs"), &ies); err != nil || len(ies) == 0 {
		t.Fatalf("infra-envs: %v (%d)", err, len(ies))
	}
	for _, ie := range ies {
		watch("/events?infra_env_id=" + ie.ID)
		b := get("Authorization", userTok, "/infra-envs/"+ie.ID)
		outs = append(outs, output{"GET /infra-envs/" + ie.ID + " (user)", b})
		for _, h := range sum.Hosts {
			watch("/events?host_ids=" + h.HostID)
			b := get("Authorization", userTok, "/infra-envs/"+ie.ID+"/hosts/"+h.HostID)
			outs = append(outs, output{"GET host " + h.Name + " (user)", b})
		}
	}
	outs = append(outs, output{"GET /clusters/{id}/hosts (user)", get("Authorization", userTok, "/clusters/"+sum.ClusterID+"/hosts")})

	// What `nodezero wait-for` prints to the person watching, the
	// failure's story included: its first look tells all of it, and on a
	// failed install it waits out its timeout, so that is short.
	waitTimeout := "30s"
	if !installed {
		waitTimeout = "2s"
	}
	for _, target := range []string{"bootstrap-complete", "install-complete"} {
		ctx, cancel := context.WithTimeout(context.Background(), time.Minute)
		cmd := exec.CommandContext(ctx, nodezeroBinary(t), "wait-for", target, "--url", strings.TrimSuffix(base, "/api/assisted-install/v2"),
			"--token", watcherTok, "--interval", "100ms", "--timeout", waitTimeout)
		b, err := cmd.CombinedOutput()
		cancel()
		if installed && err != nil {
			t.Fatalf("wait-for %s: %v\n%s", target, err, b)
		}
		outs = append(outs, output{"wait-for " + target, b})
	}
	p.kill()
	outs = append(outs, output{"node zero's service log (debug)", []byte(p.output())})
	outs = append(outs, output{"the sandbox's output", []byte(sandboxOut)})

	// Every log: the hosts' run.log (each host's own output, node zero's
	// service included), any *.log under the sandbox, everything under a
	// host root's /var/log, and log bundles the hosts uploaded.
	logs, bundles := 0, 0
	err = filepath.WalkDir(dir, func(p string, d fs.DirEntry, err error) error {
		if err != nil || d.IsDir() {
			return err
		}
		rel := filepath.ToSlash(strings.TrimPrefix(p, dir))
		bundle := strings.Contains(rel, "/root"+dataDirPath+"/logs/")
		if strings.HasSuffix(p, ".log") || strings.Contains(rel, "/root/var/log/") || bundle {
			b, err := os.ReadFile(p)
			if err != nil {
				return err
			}
			outs = append(outs, output{rel, b})
			logs++
			if bundle {
				bundles++
			}
		}
		return nil
	})
	if err != nil {
		t.Fatal(err)
	}
	if logs < len(sum.Hosts) {
		t.Fatalf("%d logs for %d hosts", logs, len(sum.Hosts))
	}
	summary, err := os.ReadFile(filepath.Join(dir, "summary.json"))
	if err != nil {
		t.Fatal(err)
	}
	outs = append(outs, output{"summary.json", summary})
	checkOutputs(t, outs, secrets)
	t.Logf("secrets: %d values looked for in %d outputs (%d events, %d uploaded log bundles)", len(secrets), len(outs), len(evs), bundles)

	for _, h := range sum.Hosts {
		checkHostModes(t, h.Root, secrets)
	}
	// The operator's side: the install directory and the summary; the
	// payload is a generated OS image.
	checkModes(t, dir, secrets, false, "/hosts", "/payload")
	for _, f := range []string{"summary.json", "install/" + stateFile, "install/auth/kubeadmin-password", "install/auth/kubeconfig", "install/install-config.yaml", "install/agentconfig.noarch.iso"} {
		if fi, err := os.Stat(filepath.Join(dir, f)); err != nil || fi.Mode().Perm() != 0o600 {
			t.Errorf("%s: %v %v, want mode 0600", f, fi, err)
		}
	}
	t.Logf("secrets: checked in %s", time.Since(began).Round(time.Millisecond))
}

// TestSecretNeedles: the matcher finds a secret in the forms outputs give
// it, and nothing in unrelated text.
func TestSecretNeedles(t *testing.T) {
	s := secret{"s", "c2FuZGJveDpzYW5k/+x-Qz9"}
	var gz bytes.Buffer
	zw := gzip.NewWriter(&gz)
	zw.Write([]byte("log line " + s.value + "\n"))
	zw.Close()
	for name, data := range map[string]string{
		"raw":            "token=" + s.value + ";",
		"json":           `{"a":"` + strings.ReplaceAll(s.value, "/", `\/`) + `"}`,
		"query":          "?t=" + url.QueryEscape(s.value),
		"base64 offset0": base64.StdEncoding.EncodeToString([]byte(s.value)),
		"base64 offset1": base64.StdEncoding.EncodeToString([]byte("x" + s.value + "y")),
		"base64 offset2": base64.URLEncoding.EncodeToString([]byte("xy" + s.value)),
		"gzip":           gz.String(),
	} {
		if got := findSecrets([]byte(data), []secret{s}); len(got) != 1 {
			t.Errorf("%s: findSecrets(%q) = %v, want [s]", name, data, got)
		}
	}
	if got := findSecrets([]byte("c2FuZGJveDpzYW5k nothing else"), []secret{s}); len(got) != 0 {
		t.Errorf("findSecrets(prefix only) = %v, want none", got)
	}
	if !privateKeyPEM([]byte("x\n-----BEGIN OPENSSH PRIVATE KEY-----\nAAAA\n-----END OPENSSH PRIVATE KEY-----\n")) {
		t.Error("privateKeyPEM misses an OpenSSH private key")
	}
	if privateKeyPEM([]byte("-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n")) {
		t.Error("privateKeyPEM takes a certificate for a key")
	}
}
