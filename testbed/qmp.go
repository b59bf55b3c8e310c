package testbed

import (
	"bufio"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"net"
	"os"
	"path/filepath"
	"strconv"
	"sync"
	"time"
)

// QMP, QEMU's machine protocol: one connection per power-on, made before
// the guest runs (QEMU waits for it), that carries commands and every
// event. Events are kept for the VM's life (Events), and WaitEvent hands
// each one out once.

// Event is a QMP event: RESET, SHUTDOWN, DEVICE_DELETED, DEVICE_TRAY_MOVED...
type Event struct {
	Name string          // e.g. "SHUTDOWN"
	Data json.RawMessage // its "data" member, e.g. {"guest":true,"reason":"guest-reset"}
	Time time.Time       // QEMU's timestamp
}

// QMPError is an error QEMU (or the guest agent) answered a command with.
type QMPError struct {
	Command string
	Class   string // e.g. "GenericError", "DeviceNotFound"
	Desc    string
}

func (e *QMPError) Error() string {
	return fmt.Sprintf("%s: %s: %s", e.Command, e.Class, e.Desc)
}

// qmpMsg is any message QEMU sends: the greeting, an answer or an event.
type qmpMsg struct {
	ID     string          `json:"id"`
	Return json.RawMessage `json:"return"`
	Error  *struct {
		Class string `json:"class"`
		Desc  string `json:"desc"`
	} `json:"error"`
	Event     string          `json:"event"`
	Data      json.RawMessage `json:"data"`
	Timestamp struct {
		Seconds      int64 `json:"seconds"`
		Microseconds int64 `json:"microseconds"`
	} `json:"timestamp"`
}

// qmpConn is a QMP client connection.
type qmpConn struct {
	conn    net.Conn
	onEvent func(Event)
	wmu     sync.Mutex // one writer at a time
	mu      sync.Mutex
	nextID  int
	pending map[string]chan qmpMsg
	done    chan struct{} // closed when the reader has stopped
}

// dialQMP connects to QEMU's QMP socket at path, as soon as QEMU has made
// it, and negotiates capabilities. It gives up when QEMU exits or ctx ends.
func dialQMP(ctx context.Context, path string, exited <-chan struct{}, onEvent func(Event)) (*qmpConn, error) {
	tick := time.NewTicker(20 * time.Millisecond)
	defer tick.Stop()
	var conn net.Conn
	for {
		var err error
		if conn, err = (&net.Dialer{}).DialContext(ctx, "unix", path); err == nil {
			break
		}
		select {
		case <-exited:
			return nil, fmt.Errorf("qmp %s: qemu exited", path)
		case <-ctx.Done():
			return nil, fmt.Errorf("qmp %s: %w", path, ctx.Err())
		case <-tick.C:
		}
	}
	stop := context.AfterFunc(ctx, func() { _ = conn.SetDeadline(time.Unix(1, 0)) })
	dec := json.NewDecoder(bufio.NewReader(conn))
	var greeting struct {
		QMP json.RawMessage `json:"QMP"`
	}
	err := dec.Decode(&greeting)
	if err == nil && greeting.QMP == nil {
		err = errors.New("no QMP greeting")
	}
	if err == nil {
		_, err = conn.Write([]byte(`{"execute":"qmp_capabilities","id":"caps"}` + "\n"))
	}
	var m qmpMsg
	for err == nil {
		// Events may come first once the guest runs.
		if err = dec.Decode(&m); err == nil && m.ID == "caps" {
			if m.Error != nil {
				err = &QMPError{"qmp_capabilities", m.Error.Class, m.Error.Desc}
			}
			break
		}
		if err == nil && m.Event != "" {
			onEvent(m.event())
		}
	}
	if !stop() || err != nil {
		conn.Close()
		if err == nil {
			err = ctx.Err()
		}
		return nil, fmt.Errorf("qmp %s: %w", path, err)
	}
	_ = conn.SetDeadline(time.Time{})
	q := &qmpConn{conn: conn, onEvent: onEvent, pending: map[string]chan qmpMsg{}, done: make(chan struct{})}
	go q.read(dec)
	return q, nil
}

func (m qmpMsg) event() Event {
	return Event{Name: m.Event, Data: m.Data, Time: time.Unix(m.Timestamp.Seconds, m.Timestamp.Microseconds*1000)}
}

// read hands answers to their callers and events to onEvent until the
// connection ends (QEMU exited).
func (q *qmpConn) read(dec *json.Decoder) {
	defer close(q.done)
	defer q.conn.Close()
	for {
		var m qmpMsg
		if err := dec.Decode(&m); err != nil {
			return
		}
		if m.Event != "" {
			q.onEvent(m.event())
			continue
		}
		q.mu.Lock()
		ch := q.pending[m.ID]
		delete(q.pending, m.ID)
		q.mu.Unlock()
		if ch != nil {
			ch <- m
		}
	}
}

// execute runs a QMP command and decodes its answer into result (if not nil).
func (q *qmpConn) execute(ctx context.Context, command string, args, result any) error {
	q.mu.Lock()
	q.nextID++
	id := strconv.Itoa(q.nextID)
	ch := make(chan qmpMsg, 1)
	q.pending[id] = ch
	q.mu.Unlock()
	defer func() {
		q.mu.Lock()
		delete(q.pending, id)
		q.mu.Unlock()
	}()
	req := map[string]any{"execute": command, "id": id}
	if args != nil {
		req["arguments"] = args
	}
	b, err := json.Marshal(req)
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	q.wmu.Lock()
	_, err = q.conn.Write(append(b, '\n'))
	q.wmu.Unlock()
	if err != nil {
		return fmt.Errorf("%s: %w", command, err)
	}
	select {
	case m := <-ch:
		if m.Error != nil {
			return &QMPError{command, m.Error.Class, m.Error.Desc}
		}
		if result != nil {
			if err := json.Unmarshal(m.Return, result); err != nil {
				return fmt.Errorf("%s: answer %s: %w", command, m.Return, err)
			}
		}
		return nil
	case <-q.done:
		return fmt.Errorf("%s: %w (qemu exited)", command, ErrVMNotRunning)
	case <-ctx.Done():
		return fmt.Errorf("%s: %w", command, ctx.Err())
	}
}

// QMP runs a QMP command on the running VM (e.g. "query-block", args nil)
// and decodes its "return" member into result, if result is not nil.
func (v *VM) QMP(ctx context.Context, command string, args, result any) error {
	run := v.current()
	if run == nil || isDone(run.done) {
		return fmt.Errorf("vm %s: qmp %s: %w", v.Name, command, ErrVMNotRunning)
	}
	if err := run.qmp.execute(ctx, command, args, result); err != nil {
		return fmt.Errorf("vm %s: qmp %w", v.Name, err)
	}
	return nil
}

func (v *VM) addEvent(e Event) {
	v.mu.Lock()
	defer v.mu.Unlock()
	v.events = append(v.events, e)
	v.taken = append(v.taken, false)
	v.notifyLocked()
}

// Events returns every QMP event of the VM so far, over all its power-ons,
// in order.
func (v *VM) Events() []Event {
	v.mu.Lock()
	defer v.mu.Unlock()
	return append([]Event(nil), v.events...)
}

// WaitEvent returns the earliest event with this name that no WaitEvent
// has returned yet, waiting for one if need be: an event that came before
// the call counts (an InsertCD's DEVICE_TRAY_MOVED is there when it
// returns). It fails when ctx ends or the VM is off with no such event.
func (v *VM) WaitEvent(ctx context.Context, name string) (Event, error) {
	return v.WaitEventFunc(ctx, name, func(Event) bool { return true })
}

// WaitEventFunc is WaitEvent for the earliest such event that match accepts
// (e.g. DEVICE_TRAY_MOVED with "tray-open": false).
func (v *VM) WaitEventFunc(ctx context.Context, name string, match func(Event) bool) (Event, error) {
	for {
		v.mu.Lock()
		for i, e := range v.events {
			if !v.taken[i] && e.Name == name && match(e) {
				v.taken[i] = true
				v.mu.Unlock()
				return e, nil
			}
		}
		changed := v.changed
		off := v.run == nil || isDone(v.run.done)
		v.mu.Unlock()
		if off {
			return Event{}, fmt.Errorf("vm %s: wait for event %s: %w", v.Name, name, ErrVMNotRunning)
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return Event{}, fmt.Errorf("vm %s: wait for event %s: %w", v.Name, name, ctx.Err())
		}
	}
}

// waitEventFrom waits, without taking it, for an event from index from on
// that match accepts.
func (v *VM) waitEventFrom(ctx context.Context, from int, match func(Event) bool) error {
	for {
		v.mu.Lock()
		for _, e := range v.events[min(from, len(v.events)):] {
			if match(e) {
				v.mu.Unlock()
				return nil
			}
		}
		changed := v.changed
		off := v.run == nil || isDone(v.run.done)
		v.mu.Unlock()
		if off {
			return ErrVMNotRunning
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return ctx.Err()
		}
	}
}

// The config CD: one scsi-cd on the virtio-scsi controller.
const (
	cdID     = "cd0"
	cdNode   = "cd0"
	cdFileNd = "cd0-file"
)

// InsertCD plugs a CD drive holding iso into the running VM, as an operator
// attaches virtual media: the image's nodes are added (blockdev-add, read
// only), an empty scsi-cd is plugged into virtio-scsi (device_add; on q35
// only such a device can be unplugged again), and the medium goes in
// through its tray (open, insert, close: the guest sees a media change, and
// QMP emits DEVICE_TRAY_MOVED open then closed). One CD at a time.
func (v *VM) InsertCD(ctx context.Context, iso string) error {
	abs, err := filepath.Abs(iso)
	if err != nil {
		return fmt.Errorf("vm %s: insert cd %s: %w", v.Name, iso, err)
	}
	if fi, err := os.Stat(abs); err != nil || !fi.Mode().IsRegular() {
		return fmt.Errorf("vm %s: insert cd %s: not a regular file (%v)", v.Name, iso, err)
	}
	v.mu.Lock()
	if v.cd {
		v.mu.Unlock()
		return fmt.Errorf("vm %s: insert cd %s: a cd is in already: RemoveCD first", v.Name, iso)
	}
	v.cd = true // taken; undone on failure
	v.mu.Unlock()
	steps := []struct {
		cmd  string
		args map[string]any
	}{
		{"blockdev-add", map[string]any{"driver": "file", "filename": abs, "node-name": cdFileNd, "read-only": true}},
		{"blockdev-add", map[string]any{"driver": "raw", "file": cdFileNd, "node-name": cdNode, "read-only": true}},
		{"device_add", map[string]any{"driver": "scsi-cd", "bus": "scsi0.0", "id": cdID}},
		// force: a guest that locked the (empty) tray cannot hold it shut.
		{"blockdev-open-tray", map[string]any{"id": cdID, "force": true}},
		{"blockdev-insert-medium", map[string]any{"id": cdID, "node-name": cdNode}},
		{"blockdev-close-tray", map[string]any{"id": cdID}},
	}
	for _, s := range steps {
		if err := v.QMP(ctx, s.cmd, s.args, nil); err != nil {
			undo := v.removeCD(context.WithoutCancel(ctx))
			v.mu.Lock()
			v.cd = false
			v.mu.Unlock()
			return errors.Join(fmt.Errorf("insert cd %s: %w", iso, err), undo)
		}
	}
	return nil
}

// RemoveCD takes the CD out (tray forced open, medium removed), unplugs
// the drive and waits for QEMU's DEVICE_DELETED before it drops the
// image's nodes. Without a CD it does nothing.
func (v *VM) RemoveCD(ctx context.Context) error {
	v.mu.Lock()
	in := v.cd
	v.mu.Unlock()
	if !in {
		return nil
	}
	if err := v.removeCD(ctx); err != nil {
		return err
	}
	v.mu.Lock()
	v.cd = false
	v.mu.Unlock()
	return nil
}

// removeCD undoes as much of InsertCD as was done.
func (v *VM) removeCD(ctx context.Context) error {
	var notFound *QMPError
	gone := func(err error) bool { return errors.As(err, &notFound) && notFound.Class == "DeviceNotFound" }
	if err := v.QMP(ctx, "blockdev-open-tray", map[string]any{"id": cdID, "force": true}, nil); err != nil && !gone(err) {
		return fmt.Errorf("remove cd: %w", err)
	}
	_ = v.QMP(ctx, "blockdev-remove-medium", map[string]any{"id": cdID}, nil) // none if the insert failed early
	v.mu.Lock()
	from := len(v.events)
	v.mu.Unlock()
	err := v.QMP(ctx, "device_del", map[string]any{"id": cdID}, nil)
	switch {
	case err == nil:
		err = v.waitEventFrom(ctx, from, func(e Event) bool {
			var d struct {
				Device string `json:"device"`
			}
			return e.Name == "DEVICE_DELETED" && json.Unmarshal(e.Data, &d) == nil && d.Device == cdID
		})
		if err != nil {
			return fmt.Errorf("vm %s: remove cd: wait for DEVICE_DELETED: %w", v.Name, err)
		}
	case !gone(err):
		return fmt.Errorf("remove cd: %w", err)
	}
	var nodes []struct {
		Name string `json:"node-name"`
	}
	has := func(name string) bool {
		for _, n := range nodes {
			if n.Name == name {
				return true
			}
		}
		return false
	}
	if err := v.QMP(ctx, "query-named-block-nodes", map[string]any{"flat": true}, &nodes); err != nil {
		return fmt.Errorf("remove cd: %w", err)
	}
	var errs []error
	for _, node := range []string{cdNode, cdFileNd} { // the raw node holds the file node: it goes first
		if !has(node) {
			continue
		}
		if err := v.QMP(ctx, "blockdev-del", map[string]any{"node-name": node}, nil); err != nil {
			errs = append(errs, fmt.Errorf("remove cd: %w", err))
		}
	}
	return errors.Join(errs...)
}
