package installfiles

import (
	"bytes"
	"context"
	"fmt"
	"io"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"time"

	"github.com/nodezero/nodezero/configimage/credentials"
)

// InstallerError is a failed openshift-install run. Output holds the last
// lines it printed (stdout and stderr together), where its fatal message is.
type InstallerError struct {
	Args   []string // after the executable
	Err    error
	Output string
}

func (e *InstallerError) Error() string {
	msg := fmt.Sprintf("openshift-install %s: %v", strings.Join(e.Args, " "), e.Err)
	if e.Output != "" {
		msg += "; last output:\n" + e.Output
	}
	return msg
}

func (e *InstallerError) Unwrap() error { return e.Err }

// installerTailLines is how much of a failed run's output the error keeps.
const installerTailLines = 20

// maxInstallerFile bounds what is read back from the installer's
// directory (a bootstrap.ign is a few MB).
const maxInstallerFile = 64 << 20

// installerEnv tells openshift-install who runs it, as the agent-based
// installer's service does.
const installerEnv = "OPENSHIFT_INSTALL_INVOKER=agent-installer"

// loadCertsEnv makes openshift-install load the signers and the kubeadmin
// password from tls/ instead of minting them; assisted-service sets it on
// its create commands whenever the override directory is configured.
const loadCertsEnv = "OPENSHIFT_INSTALL_LOAD_CLUSTER_CERTS=true"

// runInstaller makes the install files with the payload's openshift-install:
// version, then (with in.TLSDir) the override directory's files into tls/,
// then create manifests on the install-config, then the user manifests
// copied in, then create ignition-configs. As assisted-service does, it
// copies every regular file of the directory, whatever its name; it also
// checks them first and checks after the run that openshift-install's
// auth/ came from them, so that an installer that ignored the flag fails
// the preparation rather than install a cluster the user cannot open.
func runInstaller(ctx context.Context, in Input, p *plan) (*Files, error) {
	if in.WorkDir != "" {
		if err := os.MkdirAll(in.WorkDir, 0o700); err != nil {
			return nil, fmt.Errorf("openshift-install work directory: %w", err)
		}
	}
	dir, err := os.MkdirTemp(in.WorkDir, "openshift-install-")
	if err != nil {
		return nil, fmt.Errorf("openshift-install work directory: %w", err)
	}
	defer os.RemoveAll(dir)

	out, err := runTool(ctx, in.Installer, dir, nil, "version")
	if err != nil {
		return nil, err
	}
	version := installerVersion(out)

	var source *credentials.TLS
	var env []string
	if in.TLSDir != "" {
		var files map[string][]byte
		if source, files, err = credentials.ReadTLSDir(in.TLSDir); err != nil {
			return nil, err
		}
		if err := writeTLS(filepath.Join(dir, "tls"), files); err != nil {
			return nil, err
		}
		env = []string{loadCertsEnv}
	}
	if err := os.WriteFile(filepath.Join(dir, FileInstallConfig), p.icRaw, 0o600); err != nil {
		return nil, fmt.Errorf("openshift-install input: %w", err)
	}
	if _, err := runTool(ctx, in.Installer, dir, env, "create", "manifests", "--dir", dir); err != nil {
		return nil, err
	}
	for _, m := range in.Manifests {
		folder := filepath.Join(dir, m.Folder)
		if err := os.MkdirAll(folder, 0o755); err != nil {
			return nil, fmt.Errorf("manifest %s/%s: %w", m.Folder, m.FileName, err)
		}
		if err := os.WriteFile(filepath.Join(folder, m.FileName), m.Content, 0o644); err != nil {
			return nil, fmt.Errorf("manifest %s/%s: %w", m.Folder, m.FileName, err)
		}
	}
	if _, err := runTool(ctx, in.Installer, dir, env, "create", "ignition-configs", "--dir", dir); err != nil {
		return nil, err
	}

	files := &Files{
		Generator: version,
		Cluster:   map[string][]byte{FileInstallConfig: p.icRaw},
	}
	outputs := map[string]string{
		FileBootstrap:         FileBootstrap,
		FileMaster:            FileMaster,
		FileWorker:            FileWorker,
		FileMetadata:          FileMetadata,
		FileKubeconfig:        filepath.Join("auth", "kubeconfig"),
		FileKubeadminPassword: filepath.Join("auth", "kubeadmin-password"),
	}
	if _, _, arbiters := countRoles(p.hosts); arbiters > 0 {
		outputs[FileArbiter] = FileArbiter
	}
	for name, rel := range outputs {
		b, err := readLimited(filepath.Join(dir, rel))
		if err != nil {
			return nil, fmt.Errorf("openshift-install create ignition-configs left no usable %s: %w", rel, err)
		}
		files.Cluster[name] = b
	}
	if source != nil {
		if string(files.Cluster[FileKubeadminPassword]) != source.Password {
			return nil, fmt.Errorf("openshift-install wrote an auth/kubeadmin-password other than the cluster TLS directory's %s (was %s honoured?): the user's password would not log in",
				credentials.PasswordFile, loadCertsEnv)
		}
		if err := checkKubeconfig("openshift-install's auth/kubeconfig", files.Cluster[FileKubeconfig], source); err != nil {
			return nil, err
		}
	}
	return files, nil
}

// writeTLS writes the override directory's files into the installer's
// tls/ directory, mode 0600, as assisted-service's importClusterTLSCerts
// does.
func writeTLS(dir string, files map[string][]byte) error {
	if err := os.Mkdir(dir, 0o755); err != nil {
		return fmt.Errorf("openshift-install tls directory: %w", err)
	}
	for name, b := range files {
		if err := os.WriteFile(filepath.Join(dir, name), b, 0o600); err != nil {
			return fmt.Errorf("openshift-install tls directory: %w", err)
		}
	}
	return nil
}

// installerVersion turns `openshift-install version`'s first line
// ("openshift-install 4.16.3") into the Generator name.
func installerVersion(out []byte) string {
	first, _, _ := strings.Cut(string(out), "\n")
	if f := strings.Fields(first); len(f) >= 2 {
		return "openshift-install " + f[1]
	}
	return "openshift-install (unknown version)"
}

func readLimited(name string) ([]byte, error) {
	f, err := os.Open(name)
	if err != nil {
		return nil, err
	}
	defer f.Close()
	b, err := io.ReadAll(io.LimitReader(f, maxInstallerFile+1))
	if err != nil {
		return nil, err
	}
	if len(b) > maxInstallerFile {
		return nil, fmt.Errorf("larger than %d bytes", maxInstallerFile)
	}
	return b, nil
}

// runTool runs the installer in dir, with env added to its environment,
// and returns its output; a failure is an *InstallerError with the
// output's last lines.
func runTool(ctx context.Context, exe, dir string, env []string, args ...string) ([]byte, error) {
	cmd := exec.CommandContext(ctx, exe, args...)
	cmd.Dir = dir
	cmd.Env = append(append(os.Environ(), installerEnv), env...)
	// A child holding the output pipes open must not keep us waiting once
	// the installer itself is gone.
	cmd.WaitDelay = 10 * time.Second
	var out tailBuffer
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Run(); err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w (%v)", ctx.Err(), err)
		}
		return nil, &InstallerError{Args: args, Err: err, Output: out.lastLines(installerTailLines)}
	}
	return out.bytes(), nil
}

// tailBuffer keeps the last tailBytes of what is written to it.
type tailBuffer struct {
	mu  sync.Mutex
	buf []byte
}

const tailBytes = 64 << 10

func (t *tailBuffer) Write(p []byte) (int, error) {
	t.mu.Lock()
	defer t.mu.Unlock()
	t.buf = append(t.buf, p...)
	if over := len(t.buf) - tailBytes; over > 0 {
		t.buf = append(t.buf[:0], t.buf[over:]...)
	}
	return len(p), nil
}

func (t *tailBuffer) bytes() []byte {
	t.mu.Lock()
	defer t.mu.Unlock()
	return bytes.Clone(t.buf)
}

func (t *tailBuffer) lastLines(n int) string {
	lines := strings.Split(strings.TrimRight(string(t.bytes()), "\n"), "\n")
	if len(lines) > n {
		lines = lines[len(lines)-n:]
	}
	return strings.Join(lines, "\n")
}
