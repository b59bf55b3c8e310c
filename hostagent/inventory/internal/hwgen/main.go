// Command hwgen writes the synthetic hardware trees (package internal/hwtree)
// that the inventory tests read, with a README describing them:
//
//	go generate ./hostagent/inventory
//
// runs `go run ./internal/hwgen -out ../../testdata/hw`.
package main

import (
	"flag"
	"fmt"
	"os"

	"github.com/nodezero/nodezero/internal/hwtree"
)

func main() {
	out := flag.String("out", "", "directory to write the host trees and README.md into")
	flag.Parse()
	if *out == "" {
		fmt.Fprintln(os.Stderr, "hwgen: -out is required")
		os.Exit(2)
	}
	if err := hwtree.Generate(*out); err != nil {
		fmt.Fprintln(os.Stderr, "hwgen:", err)
		os.Exit(1)
	}
}
