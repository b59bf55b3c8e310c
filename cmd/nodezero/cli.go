package main

import (
	"flag"
	"fmt"
	"io"
	"strings"
)

// newFlags returns a subcommand's flag set. Its -h prints the command's
// one-line purpose, its usage line, the examples and then the flags, and
// the command returns flag.ErrHelp, which main ends with status 0 (help was
// asked for, nothing failed).
func newFlags(stderr io.Writer, name, purpose, usage string, examples ...string) *flag.FlagSet {
	fs := flag.NewFlagSet(name, flag.ContinueOnError)
	fs.SetOutput(stderr)
	fs.Usage = func() {
		w := fs.Output()
		fmt.Fprintf(w, "nodezero %s: %s\n\nusage: nodezero %s %s\n", name, purpose, name, usage)
		if len(examples) > 0 {
			fmt.Fprintf(w, "\nexample%s:\n", plural(len(examples)))
			for _, e := range examples {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
		fmt.Fprintln(w, "\nflags:")
		fs.PrintDefaults()
	}
	return fs
}

// noArgs is the error for positional arguments a command does not take.
func noArgs(fs *flag.FlagSet) error {
	if fs.NArg() == 0 {
		return nil
	}
	return fmt.Errorf("%s: unexpected argument%s %s (every option is a flag; see nodezero %s -h)", fs.Name(), plural(fs.NArg()), strings.Join(quoteAll(fs.Args()), " "), fs.Name())
}

func plural(n int) string {
	if n == 1 {
		return ""
	}
	return "s"
}

func quoteAll(ss []string) []string {
	out := make([]string, len(ss))
	for i, s := range ss {
		out[i] = fmt.Sprintf("%q", s)
	}
	return out
}
