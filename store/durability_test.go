package store

import (
	"bufio"
	"bytes"
	"context"
	"fmt"
	"math/rand/v2"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

// helperEnv switches TestHelperWriter on and names the file it writes.
const helperEnv = "NODEZERO_STORE_HELPER_DB"

// eventsPerTx makes each transaction long enough that a kill often lands
// inside one.
const eventsPerTx = 10

// TestHelperWriter is not a test: TestKill9LosesNothingAcknowledged runs the
// test binary again with helperEnv set, and this function becomes a writer
// that commits transaction after transaction and prints each one's number
// on stdout once Update has returned, until it is killed.
func TestHelperWriter(t *testing.T) {
	path := os.Getenv(helperEnv)
	if path == "" {
		t.Skip("helper process for TestKill9LosesNothingAcknowledged; runs only as its child")
	}
	ctx := context.Background()
	s, err := Open(ctx, path, Options{})
	if err != nil {
		fmt.Fprintln(os.Stderr, "open:", err)
		os.Exit(2)
	}
	// Carry on from the last committed transaction of an earlier child.
	var last int
	err = s.View(ctx, func(tx *Tx) error {
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		last, err = strconv.Atoi(c.StatusInfo)
		return err
	})
	if err != nil {
		fmt.Fprintln(os.Stderr, "read counter:", err)
		os.Exit(2)
	}
	for i := last + 1; ; i++ {
		err := s.Update(ctx, func(tx *Tx) error {
			c, err := tx.Cluster("c1")
			if err != nil {
				return err
			}
			c.StatusInfo = strconv.Itoa(i)
			if err := tx.PutCluster(c); err != nil {
				return err
			}
			for k := range eventsPerTx {
				e := Event{Severity: "info", Message: fmt.Sprintf("tx %d event %d", i, k), ClusterID: "c1", RequestID: strconv.Itoa(i)}
				if _, err := tx.AddEvent(e); err != nil {
					return err
				}
			}
			return nil
		})
		if err != nil {
			fmt.Fprintln(os.Stderr, "update:", err)
			os.Exit(2)
		}
		// os.Stdout is not buffered: the line is in the pipe when this returns.
		fmt.Printf("%d\n", i)
	}
}

// A writer process is killed with SIGKILL while it commits; every
// transaction it acknowledged is in the file afterwards, none is half
// there, and the file passes integrity_check. Three rounds on one file, so
// recovery after a kill is itself followed by writes and another kill.
func TestKill9LosesNothingAcknowledged(t *testing.T) {
	path := filepath.Join(t.TempDir(), "kill9.db")
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatal(err)
	}
	mustUpdate(t, s, func(tx *Tx) error { return tx.PutCluster(Cluster{ID: "c1", Status: "ready", StatusInfo: "0"}) })
	if err := s.Close(); err != nil {
		t.Fatal(err)
	}

	committed := 0
	for round := range 3 {
		first, last := runAndKill(t, path, 30+rand.IntN(120))
		// Each child starts after the last transaction on disk.
		if first != committed+1 {
			t.Fatalf("round %d: child started at %d, want %d", round, first, committed+1)
		}
		committed = checkAcknowledged(t, path, last)
	}
}

// runAndKill starts a writer child, kills it after it has acknowledged
// killAfter transactions, and returns the first and last numbers it
// acknowledged, including those still in the pipe when it died.
func runAndKill(t *testing.T, path string, killAfter int) (first, last int) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^TestHelperWriter$", "-test.count=1")
	cmd.Env = append(os.Environ(), helperEnv+"="+path)
	var stderr bytes.Buffer
	cmd.Stderr = &stderr
	out, err := cmd.StdoutPipe()
	if err != nil {
		t.Fatal(err)
	}
	if err := cmd.Start(); err != nil {
		t.Fatal(err)
	}
	watchdog := time.AfterFunc(60*time.Second, func() { cmd.Process.Kill() })
	defer watchdog.Stop()

	sc := bufio.NewScanner(out)
	seen, killed := 0, false
	for sc.Scan() {
		n, err := strconv.Atoi(sc.Text())
		if err != nil {
			continue // test framework chatter
		}
		if seen > 0 && n != last+1 {
			t.Errorf("child acknowledged %d after %d", n, last)
		}
		if seen == 0 {
			first = n
		}
		last = n
		seen++
		if seen == killAfter && !killed {
			killed = true
			// Process.Kill is SIGKILL on Unix: no deferred code, no
			// Close, no checkpoint in the child.
			if err := cmd.Process.Kill(); err != nil {
				t.Fatalf("kill: %v", err)
			}
		}
	}
	err = cmd.Wait()
	if !killed {
		t.Fatalf("child exited (%v) after %d acknowledgements, before the kill; stderr:\n%s", err, seen, stderr.String())
	}
	if err == nil {
		t.Fatal("killed child exited cleanly")
	}
	return first, last
}

// checkAcknowledged reopens the file after a kill, checks it, and returns
// the number of the last transaction in it.
func checkAcknowledged(t *testing.T, path string, acked int) (committed int) {
	t.Helper()
	s, err := Open(context.Background(), path, Options{})
	if err != nil {
		t.Fatalf("reopen after kill: %v", err)
	}
	defer s.Close()

	var integrity string
	if err := s.reader.QueryRow(`PRAGMA integrity_check`).Scan(&integrity); err != nil {
		t.Fatal(err)
	}
	if integrity != "ok" {
		t.Errorf("integrity_check after kill = %q, want ok", integrity)
	}

	mustView(t, s, func(tx *Tx) error {
		events, err := tx.Events(EventFilter{ClusterID: "c1"})
		if err != nil {
			return err
		}
		perTx := map[int]int{}
		highest := 0
		for _, e := range events {
			n, _ := strconv.Atoi(e.RequestID)
			perTx[n]++
			highest = max(highest, n)
		}
		for i := 1; i <= acked; i++ {
			if perTx[i] != eventsPerTx {
				t.Errorf("acknowledged transaction %d has %d events, want %d", i, perTx[i], eventsPerTx)
			}
		}
		for n, c := range perTx {
			if c != eventsPerTx {
				t.Errorf("transaction %d is half there: %d of %d events", n, c, eventsPerTx)
			}
		}
		// At most the one transaction committed but not yet printed.
		if highest > acked+1 {
			t.Errorf("events of transaction %d exist, but only %d were acknowledged", highest, acked)
		}
		c, err := tx.Cluster("c1")
		if err != nil {
			return err
		}
		if want := strconv.Itoa(highest); c.StatusInfo != want {
			t.Errorf("cluster counter = %s but the events reach %s: a transaction was split", c.StatusInfo, want)
		}
		committed = highest
		return nil
	})
	return committed
}
