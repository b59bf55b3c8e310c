package timesync

import (
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/wire"
)

func TestParseSources(t *testing.T) {
	tests := []struct {
		name string
		out  string
		want []*wire.NTPSource
	}{
		{
			name: "every state",
			out: `MS Name/IP address         Stratum Poll Reach LastRx Last sample
===============================================================================
^* 192.168.1.10                  2   6   377    34   -120us[ -180us] +/-   15ms
^+ 10.0.0.2                      2   6   377    35   +230us[ +230us] +/-   20ms
^- fd00::5                       3   6   377    36    +1ms[   +1ms] +/-   40ms
^? 10.0.0.4                      0   6     0     -     +0ns[   +0ns] +/-    0ns
^x 10.0.0.5                      1   6   377    12    -3s[   -3s] +/-  100us
^~ 10.0.0.6                      2   6   377    12    +9ms[  +9ms] +/-  900us
`,
			want: []*wire.NTPSource{
				{SourceName: "192.168.1.10", SourceState: wire.SourceStateSynced},
				{SourceName: "10.0.0.2", SourceState: wire.SourceStateCombined},
				{SourceName: "fd00::5", SourceState: wire.SourceStateNotCombined},
				{SourceName: "10.0.0.4", SourceState: wire.SourceStateUnreachable},
				{SourceName: "10.0.0.5", SourceState: wire.SourceStateError},
				{SourceName: "10.0.0.6", SourceState: wire.SourceStateVariable},
			},
		},
		{
			name: "peers, refclocks and unknown states skipped",
			out: `MS Name/IP address         Stratum Poll Reach LastRx Last sample
===============================================================================
=* 10.0.0.7                      2   6   377    34   -120us[ -180us] +/-   15ms
#* PPS0                          0   4   377    10     +1us[   +1us] +/-  200ns
^! 10.0.0.8                      2   6   377    34   -120us[ -180us] +/-   15ms
^*
^? 127.0.0.1                     0   6     0     -     +0ns[   +0ns] +/-    0ns
`,
			want: []*wire.NTPSource{{SourceName: "127.0.0.1", SourceState: wire.SourceStateUnreachable}},
		},
		{name: "no sources", out: "MS Name/IP address         Stratum Poll Reach LastRx Last sample\n====\n", want: nil},
		{name: "empty", out: "", want: nil},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got := ParseSources(tt.out)
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("ParseSources (-want +got):\n%s", diff)
			}
		})
	}
}
