package testbed

import (
	"bufio"
	"bytes"
	"context"
	"crypto/rand"
	"encoding/base64"
	"encoding/binary"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"strings"
	"time"
)

// The QEMU guest agent (qemu-guest-agent in the guest, on a virtio-serial
// port): commands and files in the guest without a network. Its protocol is
// QMP's JSON, one answer per line, on a socket that stays up while the
// guest reboots, so a conversation may find answers left from an earlier
// one. Each conversation therefore starts with a reset byte (0xFF) and
// guest-sync with a random id, and skips every line until the answer that
// carries that id.

// agentChunk is how much of a file one guest-file-read asks for.
const agentChunk = 1 << 20

// maxAgentFile bounds ReadFile.
const maxAgentFile = 256 << 20

// agentConn is one conversation with the guest agent.
type agentConn struct {
	conn net.Conn
	r    *bufio.Reader
}

// dialAgent opens a conversation and synchronises it. The agent's answer
// to guest-sync is awaited at most ctx's time.
func (v *VM) dialAgent(ctx context.Context) (*agentConn, error) {
	conn, err := (&net.Dialer{}).DialContext(ctx, "unix", v.plan.qga)
	if err != nil {
		return nil, err
	}
	a := &agentConn{conn: conn, r: bufio.NewReader(conn)}
	if err := a.sync(ctx); err != nil {
		conn.Close()
		return nil, err
	}
	return a, nil
}

func (a *agentConn) close() { a.conn.Close() }

// sync resets the agent's parser and waits for the answer to a guest-sync
// with a fresh id, dropping whatever came before it.
func (a *agentConn) sync(ctx context.Context) error {
	var b [4]byte
	_, _ = rand.Read(b[:])
	id := int64(binary.BigEndian.Uint32(b[:]) >> 1) // positive, fits every JSON reader
	req, _ := json.Marshal(map[string]any{"execute": "guest-sync", "arguments": map[string]any{"id": id}})
	stop := a.deadline(ctx)
	defer stop()
	// 0xFF is never valid JSON: the agent drops what its parser held
	// (a half-written request of an earlier conversation) and starts anew.
	if _, err := a.conn.Write(append([]byte{0xff}, append(req, '\n')...)); err != nil {
		return fmt.Errorf("guest-sync: %w", err)
	}
	for {
		line, err := a.r.ReadBytes('\n')
		if err != nil {
			return fmt.Errorf("guest-sync: %w", err)
		}
		var m struct {
			Return *int64 `json:"return"`
		}
		// Lines that are not the answer (stale answers, the error for
		// the reset byte, a leading 0xFF) are skipped.
		if json.Unmarshal(bytes.TrimLeft(line, "\xff"), &m) == nil && m.Return != nil && *m.Return == id {
			return nil
		}
	}
}

// deadline makes the connection's reads and writes fail once ctx ends,
// until the returned stop is called.
func (a *agentConn) deadline(ctx context.Context) (stop func()) {
	if d, ok := ctx.Deadline(); ok {
		_ = a.conn.SetDeadline(d)
	}
	cancel := context.AfterFunc(ctx, func() { _ = a.conn.SetDeadline(time.Unix(1, 0)) })
	return func() {
		cancel()
		_ = a.conn.SetDeadline(time.Time{})
	}
}

// call runs one agent command and decodes its "return" into result.
func (a *agentConn) call(ctx context.Context, command string, args, result any) error {
	req := map[string]any{"execute": command}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	stop := a.deadline(ctx)
	defer stop()
	if _, err := a.conn.Write(append(b, '\n')); err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	line, err := a.r.ReadBytes('\n')
	if err != nil {
		if ctx.Err() != nil {
			err = ctx.Err()
		}
		return fmt.Errorf("%s: %w", command, err)
	}
	var m qmpMsg
	if err := json.Unmarshal(line, &m); err != nil {
		return fmt.Errorf("%s: answer %q: %w", command, line, err)
	}
	if m.Error != nil {
		return &QMPError{command, m.Error.Class, m.Error.Desc}
	}
	if result != nil {
		if err := json.Unmarshal(m.Return, result); err != nil {
			return fmt.Errorf("%s: answer %s: %w", command, m.Return, err)
		}
	}
	return nil
}

// agentSyncTry bounds one guest-sync of WaitGuestAgent: an agent that is
// up answers within a moment even in a loaded TCG guest, one that is not
// yet never does.
const agentSyncTry = 10 * time.Second

// WaitGuestAgent waits until the guest agent answers guest-sync (the guest
// has booted far enough to start qemu-guest-agent). It fails when ctx ends
// or the VM is off.
func (v *VM) WaitGuestAgent(ctx context.Context) error {
	v.agent.Lock()
	defer v.agent.Unlock()
	tick := time.NewTicker(time.Second)
	defer tick.Stop()
	var last error
	for {
		if !v.Running() {
			return fmt.Errorf("vm %s: wait for the guest agent: %w", v.Name, ErrVMNotRunning)
		}
		try, cancel := context.WithTimeout(ctx, agentSyncTry)
		a, err := v.dialAgent(try)
		cancel()
		if err == nil {
			a.close()
			return nil
		}
		last = err
		select {
		case <-ctx.Done():
			return fmt.Errorf("vm %s: wait for the guest agent: %w (last: %v)", v.Name, ctx.Err(), last)
		case <-v.Exited():
		case <-tick.C:
		}
	}
}

// GuestExitError is Exec's error for a command that ran and failed.
type GuestExitError struct {
	Argv   []string
	Exit   int    // the exit status, or -1 when killed by a signal
	Signal int    // the signal that killed it, if any
	Stderr []byte // what it wrote on stderr
}

func (e *GuestExitError) Error() string {
	how := fmt.Sprintf("exit status %d", e.Exit)
	if e.Signal != 0 {
		how = fmt.Sprintf("killed by signal %d", e.Signal)
	}
	return fmt.Sprintf("guest command %s: %s: %s", strings.Join(e.Argv, " "), how, strings.TrimSpace(string(e.Stderr)))
}

// Exec runs argv in the guest through the agent (guest-exec, its output
// captured; argv[0] is looked up in the agent's PATH, so "sh", "-c", ...
// works) and waits for it to end. out is its stdout. A command that exits
// non-zero or is killed returns its exit status (-1 for a signal) and a
// *GuestExitError with its stderr. A command that reboots the guest must
// detach itself and redirect its output, else it never reports its end.
func (v *VM) Exec(ctx context.Context, argv ...string) (out []byte, exit int, err error) {
	if len(argv) == 0 {
		return nil, 0, fmt.Errorf("vm %s: exec: no command", v.Name)
	}
	v.agent.Lock()
	defer v.agent.Unlock()
	fail := func(err error) ([]byte, int, error) {
		return nil, 0, fmt.Errorf("vm %s: exec %s: %w", v.Name, strings.Join(argv, " "), err)
	}
	if !v.Running() {
		return fail(ErrVMNotRunning)
	}
	a, err := v.dialAgent(ctx)
	if err != nil {
		return fail(err)
	}
	defer a.close()
	var started struct {
		PID int `json:"pid"`
	}
	args := map[string]any{"path": argv[0], "arg": argv[1:], "capture-output": true}
	if err := a.call(ctx, "guest-exec", args, &started); err != nil {
		return fail(err)
	}
	tick := time.NewTicker(50 * time.Millisecond)
	defer tick.Stop()
	for n := 0; ; n++ {
		var st struct {
			Exited   bool   `json:"exited"`
			ExitCode *int   `json:"exitcode"`
			Signal   *int   `json:"signal"`
			OutData  string `json:"out-data"`
			ErrData  string `json:"err-data"`
		}
		if err := a.call(ctx, "guest-exec-status", map[string]any{"pid": started.PID}, &st); err != nil {
			return fail(err)
		}
		if st.Exited {
			stdout, err1 := base64.StdEncoding.DecodeString(st.OutData)
			stderr, err2 := base64.StdEncoding.DecodeString(st.ErrData)
			if err := errors.Join(err1, err2); err != nil {
				return fail(fmt.Errorf("guest-exec-status: output: %w", err))
			}
			e := &GuestExitError{Argv: argv, Exit: -1, Stderr: stderr}
			if st.ExitCode != nil {
				e.Exit = *st.ExitCode
			}
			if st.Signal != nil {
				e.Signal = *st.Signal
			}
			if e.Exit == 0 && e.Signal == 0 {
				return stdout, 0, nil
			}
			return stdout, e.Exit, e
		}
		if n == 20 { // a second in: poll less often
			tick.Reset(250 * time.Millisecond)
		}
		select {
		case <-ctx.Done():
			return fail(ctx.Err())
		case <-tick.C:
		}
	}
}

// ReadFile reads a file of the guest through the agent
// (guest-file-open, guest-file-read until EOF, guest-file-close).
func (v *VM) ReadFile(ctx context.Context, path string) ([]byte, error) {
	v.agent.Lock()
	defer v.agent.Unlock()
	fail := func(err error) ([]byte, error) {
		return nil, fmt.Errorf("vm %s: read guest file %s: %w", v.Name, path, err)
	}
	if !v.Running() {
		return fail(ErrVMNotRunning)
	}
	a, err := v.dialAgent(ctx)
	if err != nil {
		return fail(err)
	}
	defer a.close()
	var handle int64
	if err := a.call(ctx, "guest-file-open", map[string]any{"path": path, "mode": "r"}, &handle); err != nil {
		return fail(err)
	}
	defer func() {
		ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), agentSyncTry)
		defer cancel()
		_ = a.call(ctx, "guest-file-close", map[string]any{"handle": handle}, nil)
	}()
	var data []byte
	for {
		var chunk struct {
			Count int    `json:"count"`
			Buf   string `json:"buf-b64"`
			EOF   bool   `json:"eof"`
		}
		if err := a.call(ctx, "guest-file-read", map[string]any{"handle": handle, "count": agentChunk}, &chunk); err != nil {
			return fail(err)
		}
		b, err := base64.StdEncoding.DecodeString(chunk.Buf)
		if err != nil || len(b) != chunk.Count {
			return fail(fmt.Errorf("guest-file-read: %d bytes of base64 for a count of %d (%v)", len(b), chunk.Count, err))
		}
		data = append(data, b...)
		if len(data) > maxAgentFile {
			return fail(fmt.Errorf("larger than %d bytes", maxAgentFile))
		}
		if chunk.EOF || chunk.Count == 0 {
			return data, nil
		}
	}
}
