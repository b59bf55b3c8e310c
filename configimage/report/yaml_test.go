package report

import (
	"fmt"
	"strings"
	"testing"
)

// A syntax error is reported at the line to fix, not at the start of the
// block yaml.v3 names (it said line 46 for a bad line 63).
func TestSyntaxErrorLine(t *testing.T) {
	// A block starting at line 3, its bad line at 3+pad+1.
	block := func(pad int, bad string) (string, int) {
		var b strings.Builder
		b.WriteString("apiVersion: v1\nplatform:\n  baremetal:\n")
		for i := 0; i < pad; i++ {
			fmt.Fprintf(&b, "    key%d: value\n", i)
		}
		b.WriteString(bad + "\n    after: \"value\"\n")
		return b.String(), 3 + pad + 1
	}
	for _, tc := range []struct {
		name, bad string
		pad       int
		block     bool // the message names the enclosing block
	}{
		{name: "unterminated quote deep in a block", bad: `    ingressVIPs: "x`, pad: 16, block: true},
		{name: "a key without a colon", bad: "    just words", pad: 16},
		{name: "an unclosed flow sequence", bad: "    vips: [a, b", pad: 3},
	} {
		t.Run(tc.name, func(t *testing.T) {
			doc, want := block(tc.pad, tc.bad)
			_, err := Documents([]byte(doc))
			if err == nil {
				t.Fatalf("%q parsed", doc)
			}
			e := SyntaxError([]byte(doc), err)
			if e.Line != want {
				t.Errorf("line %d (%s), want %d; yaml.v3 said %+v", e.Line, e.Message, want, YAMLErrors(err)[0])
			}
			if got := strings.Contains(e.Message, "block that starts at line 3"); got != tc.block {
				t.Errorf("message %q: names the block %v, want %v", e.Message, got, tc.block)
			}
		})
	}
}
