package main

import (
	"bytes"
	"context"
	"testing"

	"github.com/nodezero/nodezero/daemon/issue"
)

// TestConsoleOnce: the console shows the board's lines in key order.
func TestConsoleOnce(t *testing.T) {
	root := t.TempDir()
	b := issue.NewBoard(root)
	ctx := context.Background()
	if _, err := b.Set(ctx, issue.KeyStartInstall, issue.Yellow, "Waiting for 1 of 5 hosts to be known: worker-1 insufficient"); err != nil {
		t.Fatal(err)
	}
	if _, err := b.Set(ctx, issue.KeyRendezvousHost, issue.None, "This host (10.0.0.10) is the rendezvous host."); err != nil {
		t.Fatal(err)
	}
	var out bytes.Buffer
	if err := runConsole(ctx, []string{"--root", root, "--once"}, &out, &out); err != nil {
		t.Fatal(err)
	}
	want := "nodezero " + version + "\n\nThis host (10.0.0.10) is the rendezvous host.\nWaiting for 1 of 5 hosts to be known: worker-1 insufficient\n"
	if out.String() != want {
		t.Errorf("console:\n%s\nwant:\n%s", out.String(), want)
	}
	out.Reset()
	if err := runConsole(ctx, []string{"--root", t.TempDir(), "--once"}, &out, &out); err != nil || !bytes.Contains(out.Bytes(), []byte("Starting…")) {
		t.Errorf("empty board: %q %v", out.String(), err)
	}
}
