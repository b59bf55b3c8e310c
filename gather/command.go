package gather

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strings"
	"time"
)

// okExit lists exit statuses that report a state rather than a failure:
// systemctl status exits 3 when a unit is not running.
var okExit = map[string][]int{"systemctl": {3}}

// command runs a read-only command for at most timeout and adds its
// output as name. A command that is not installed is noted as not found,
// with an entry saying so; one that fails keeps its output, with the
// failure in the manifest.
func (g *gatherer) command(ctx context.Context, timeout time.Duration, name string, args ...string) {
	line := strings.Join(args, " ")
	bin, err := g.o.LookPath(args[0])
	if err != nil {
		msg := fmt.Sprintf("$ %s\n%s: not found\n", line, args[0])
		if g.b.write(name, []byte(msg)) == nil {
			g.b.note(name, StatusNotFound, "%s is not installed", args[0])
		}
		return
	}
	ctx, cancel := context.WithTimeout(ctx, timeout)
	defer cancel()
	out := &tailBuffer{max: g.o.MaxFile}
	cmd := exec.CommandContext(ctx, bin, args[1:]...)
	cmd.Stdout, cmd.Stderr = out, out
	cmd.Env = append(os.Environ(), "LC_ALL=C", "SYSTEMD_PAGER=", "SYSTEMD_COLORS=0")
	err = cmd.Run()
	var ee *exec.ExitError
	if errors.As(err, &ee) {
		for _, c := range okExit[args[0]] {
			if ee.ExitCode() == c {
				err = nil
			}
		}
	}
	data := append([]byte("$ "+line+"\n"), out.bytes()...)
	if err != nil {
		if ctx.Err() != nil {
			err = fmt.Errorf("%w after %v", err, timeout)
		}
		data, _ = g.red.Text(data)
		if g.b.write(name, data) == nil {
			g.b.note(name, StatusFailed, "%s: %v: %s", line, err, lastLine(out.bytes()))
		}
		return
	}
	detail := ""
	if out.dropped > 0 {
		detail = fmt.Sprintf("the last %d bytes, %d dropped", out.max, out.dropped)
	}
	g.b.add(name, data, 0, detail)
}

// lastLine is the last non-empty line of a command's output, for the
// manifest.
func lastLine(b []byte) string {
	lines := strings.Split(strings.TrimSpace(string(b)), "\n")
	return strings.TrimSpace(lines[len(lines)-1])
}

// tailBuffer keeps the last max bytes written to it.
type tailBuffer struct {
	buf     bytes.Buffer
	max     int64
	dropped int64
}

func (t *tailBuffer) Write(p []byte) (int, error) {
	n := len(p)
	t.buf.Write(p)
	if over := int64(t.buf.Len()) - t.max; over > 0 {
		// Drop whole chunks rarely: keep up to twice max before trimming.
		if over > t.max {
			t.buf.Next(int(over))
			t.dropped += over
		}
	}
	return n, nil
}

// bytes trims the buffer to its last max bytes and returns them.
func (t *tailBuffer) bytes() []byte {
	if over := int64(t.buf.Len()) - t.max; over > 0 {
		t.buf.Next(int(over))
		t.dropped += over
	}
	return t.buf.Bytes()
}
