package main

import (
	"flag"
	"fmt"
	"io"
	"reflect"
	"strings"
	"time"
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
		fmt.Fprintf(w, "nodezero %s: %s\n\nusage: %s\n", name, purpose, strings.TrimSpace("nodezero "+name+" "+usage))
		if len(examples) > 0 {
			fmt.Fprintf(w, "\nexample%s:\n", plural(len(examples)))
			for _, e := range examples {
				fmt.Fprintf(w, "  %s\n", e)
			}
		}
		n := 0
		fs.VisitAll(func(*flag.Flag) { n++ })
		if n > 0 {
			fmt.Fprintln(w, "\nflags:")
			printFlags(w, fs)
		}
	}
	return fs
}

// printFlags is flag.PrintDefaults but for one difference: flags that set
// the same variable are one entry ("-O, -output string"), with the longest
// of their texts. (A flag whose default cannot be said as a value, like
// --reboot-delay's "the installer's", is a string flag with no default and
// says it in its text: see rebootDelayFlag.)
func printFlags(w io.Writer, fs *flag.FlagSet) {
	done := map[string]bool{}
	fs.VisitAll(func(f *flag.Flag) {
		if done[f.Name] {
			return
		}
		names := []string{"-" + f.Name}
		usage := f.Usage
		fs.VisitAll(func(g *flag.Flag) {
			if g.Name == f.Name || !sameVar(f.Value, g.Value) {
				return
			}
			done[g.Name] = true
			names = append(names, "-"+g.Name)
			if len(g.Usage) > len(usage) {
				usage = g.Usage
			}
		})
		alias := *f
		alias.Usage = usage
		typ, text := flag.UnquoteUsage(&alias)
		line := "  " + strings.Join(names, ", ")
		if typ != "" {
			line += " " + typ
		}
		text = strings.ReplaceAll(text, "\n", "\n    \t")
		if !zeroDefault(f) {
			if g, ok := f.Value.(flag.Getter); ok {
				if _, isString := g.Get().(string); isString {
					text += fmt.Sprintf(" (default %q)", f.DefValue)
				} else {
					text += fmt.Sprintf(" (default %v)", f.DefValue)
				}
			} else {
				text += fmt.Sprintf(" (default %v)", f.DefValue)
			}
		}
		fmt.Fprintf(w, "%s\n    \t%s\n", line, text)
	})
}

// sameVar reports whether two flags' values are one variable (StringVar
// twice on the same string gives two flags with equal pointer values).
func sameVar(a, b flag.Value) bool {
	ta, tb := reflect.TypeOf(a), reflect.TypeOf(b)
	return ta == tb && ta.Kind() == reflect.Pointer && a == b
}

// zeroDefault reports whether a flag's default is its type's zero value,
// which the flag package leaves unsaid too.
func zeroDefault(f *flag.Flag) bool {
	switch f.DefValue {
	case "", "0", "false", "0s", "[]":
		return true
	}
	return false
}

// rebootDelayFlag is --reboot-delay of run and agent: a duration, or
// unset for the installer's own delay (a minute on a multi-node cluster,
// none for a single node). It is a string flag so that the help says that
// default in words rather than as the -1 that stands for it.
func rebootDelayFlag(fs *flag.FlagSet) func() (time.Duration, error) {
	text := fs.String("reboot-delay", "", "delay between the install and the reboot, e.g. 1ms (default: the installer's: 1m for control-plane hosts and workers, none for a single node)")
	return func() (time.Duration, error) {
		if *text == "" {
			return -1, nil
		}
		d, err := time.ParseDuration(*text)
		if err != nil || d < 0 {
			return 0, fmt.Errorf("%s: --reboot-delay %q: want a duration of 0 or more, e.g. 1ms or 1m", fs.Name(), *text)
		}
		return d, nil
	}
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
