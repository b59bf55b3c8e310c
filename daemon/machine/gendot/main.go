// Command gendot writes the state-machine diagrams and rule tables of
// package machine (host.dot, cluster.dot, host.md, cluster.md) to a
// directory. Run it through `go generate ./daemon/machine`.
package main

import (
	"flag"
	"fmt"
	"maps"
	"os"
	"path/filepath"
	"slices"

	"github.com/nodezero/nodezero/daemon/machine"
)

func main() {
	out := flag.String("out", "docs/state-machines", "directory to write the files to")
	flag.Parse()
	if err := run(*out); err != nil {
		fmt.Fprintln(os.Stderr, "gendot:", err)
		os.Exit(1)
	}
}

func run(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("create output directory: %w", err)
	}
	docs := machine.Docs()
	for _, name := range slices.Sorted(maps.Keys(docs)) {
		if err := os.WriteFile(filepath.Join(dir, name), []byte(docs[name]), 0o644); err != nil {
			return fmt.Errorf("write %s: %w", name, err)
		}
	}
	return nil
}
