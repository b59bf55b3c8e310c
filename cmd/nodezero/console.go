package main

import (
	"bufio"
	"context"
	"flag"
	"fmt"
	"io"
	"os"
	"path/filepath"
	"sort"
	"strings"
	"time"

	"github.com/nodezero/nodezero/daemon/issue"
)

// runConsole is `nodezero console`, started by nodezero-console.service on
// the graphical VT and nodezero-console-serial@.service on a serial line.
// Until the tview console (issue #7) lands it shows the host's status
// lines, the same ones /etc/issue.d holds, refreshed every few seconds;
// "q" and Enter leave it, and the login prompt follows.
func runConsole(ctx context.Context, args []string, stdout, stderr io.Writer) error {
	fs := flag.NewFlagSet("console", flag.ContinueOnError)
	fs.SetOutput(stderr)
	root := fs.String("root", "/", "the host's root directory")
	once := fs.Bool("once", false, "print the status once and exit")
	every := fs.Duration("interval", 3*time.Second, "how often to refresh")
	if err := fs.Parse(args); err != nil {
		return err
	}
	if *once {
		_, err := io.WriteString(stdout, consoleText(*root))
		return err
	}
	defer switchToOwnVT()()
	quit := make(chan struct{})
	go func() { // ends with the process: stdin is the console's tty
		sc := bufio.NewScanner(os.Stdin)
		for sc.Scan() {
			if strings.TrimSpace(sc.Text()) == "q" {
				break
			}
		}
		close(quit)
	}()
	t := time.NewTicker(*every)
	defer t.Stop()
	for {
		// Clear the screen and home the cursor; works on the Linux VT and
		// on vt220 serial terminals.
		if _, err := io.WriteString(stdout, "\x1b[H\x1b[2J"+consoleText(*root)+"\nPress q and Enter for a login prompt.\n"); err != nil {
			return err
		}
		select {
		case <-ctx.Done():
			return nil
		case <-quit:
			return nil
		case <-t.C:
		}
	}
}

// consoleText is the status lines of the host, in the issue keys' order.
func consoleText(root string) string {
	dir := filepath.Join(root, issue.MotdDir)
	ents, err := os.ReadDir(dir)
	var b strings.Builder
	b.WriteString("nodezero " + version + "\n\n")
	if err != nil && !os.IsNotExist(err) {
		fmt.Fprintf(&b, "cannot read the status: %v\n", err)
		return b.String()
	}
	var names []string
	for _, e := range ents {
		if !e.IsDir() {
			names = append(names, e.Name())
		}
	}
	sort.Strings(names)
	if len(names) == 0 {
		b.WriteString("Starting…\n")
	}
	for _, n := range names {
		data, err := os.ReadFile(filepath.Join(dir, n))
		if err != nil {
			continue // replaced as we read: the next refresh shows it
		}
		b.Write(data)
		if len(data) > 0 && data[len(data)-1] != '\n' {
			b.WriteByte('\n')
		}
	}
	return b.String()
}
