package timesync

import (
	"context"
	"strconv"
	"strings"
	"testing"

	"github.com/google/go-cmp/cmp"
	"github.com/nodezero/nodezero/hostagent/step"
)

func itoa(i int) string { return strconv.Itoa(i) }

func TestDecodeArgs(t *testing.T) {
	tests := []struct {
		name    string
		args    []string
		want    []string
		wantErr string
	}{
		{"one ip", []string{`{"ntp_source":"10.0.0.1"}`}, []string{"10.0.0.1"}, ""},
		{"names and ipv6", []string{`{"ntp_source":"ntp.example.com,fd00::1,clock"}`}, []string{"ntp.example.com", "fd00::1", "clock"}, ""},
		{"empty", []string{`{"ntp_source":""}`}, nil, ""},
		{"no args", nil, nil, "ntp synchronizer cmd accepts 1 params in args, given args []"},
		{"two args", []string{"{}", "{}"}, nil, "ntp synchronizer cmd accepts 1 params"},
		{"not json", []string{"ntp"}, nil, "ntp synchronizer args"},
		{"bad name", []string{`{"ntp_source":"-bad-.com"}`}, nil, "Invalid NTP source: -bad-.com"},
		{"empty element", []string{`{"ntp_source":"a.com,,b.com"}`}, nil, "Invalid NTP source"},
		{"space", []string{`{"ntp_source":"a.com, b.com"}`}, nil, "Invalid NTP source"},
		{"port", []string{`{"ntp_source":"a.com:123"}`}, nil, "Invalid NTP source"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			got, err := DecodeArgs(tt.args)
			if tt.wantErr != "" {
				if err == nil || !strings.Contains(err.Error(), tt.wantErr) {
					t.Fatalf("DecodeArgs(%q) error = %v, want %q", tt.args, err, tt.wantErr)
				}
				return
			}
			if err != nil {
				t.Fatalf("DecodeArgs(%q): %v", tt.args, err)
			}
			if diff := cmp.Diff(tt.want, got); diff != "" {
				t.Errorf("DecodeArgs(%q) (-want +got):\n%s", tt.args, diff)
			}
		})
	}
}

func TestStepBadArgs(t *testing.T) {
	out, stderr, code := Step(Options{})(context.Background(), []string{`{"ntp_source":"a b"}`})
	if code != step.ExitNotRun || out != "" || !strings.Contains(stderr, "Invalid NTP source") {
		t.Errorf("step = %q, %q, %d; want no output, Invalid NTP source, %d", out, stderr, code, step.ExitNotRun)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	f.Add(`{"ntp_source":"10.0.0.1,ntp.example.com"}`)
	f.Add(`{"ntp_source":""}`)
	f.Add(`{"ntp_source":"a..b"}`)
	f.Add(`[]`)
	f.Fuzz(func(t *testing.T, arg string) {
		srcs, err := DecodeArgs([]string{arg})
		if err != nil {
			return
		}
		for _, s := range srcs {
			if !validSource(s) || strings.ContainsAny(s, ", \t\n") {
				t.Fatalf("DecodeArgs(%q) accepted source %q", arg, s)
			}
		}
	})
}
