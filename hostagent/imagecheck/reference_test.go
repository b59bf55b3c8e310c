package imagecheck

import (
	"context"
	"strings"
	"testing"

	"github.com/nodezero/nodezero/hostagent/step"
)

func TestParseReference(t *testing.T) {
	dg := "sha256:" + strings.Repeat("ab", 32)
	tests := []struct {
		in      string
		want    Reference
		wantErr bool
	}{
		{in: "quay.io/openshift-release-dev/ocp-release:4.18.1-x86_64", want: Reference{Registry: "quay.io", Repository: "openshift-release-dev/ocp-release", Tag: "4.18.1-x86_64"}},
		{in: "quay.io/ocp/art@" + dg, want: Reference{Registry: "quay.io", Repository: "ocp/art", Digest: dg}},
		{in: "reg.local:5000/a/b:t@" + dg, want: Reference{Registry: "reg.local:5000", Repository: "a/b", Tag: "t", Digest: dg}},
		{in: "127.0.0.1:5000/a", want: Reference{Registry: "127.0.0.1:5000", Repository: "a", Tag: "latest"}},
		{in: "localhost/a:1", want: Reference{Registry: "localhost", Repository: "a", Tag: "1"}},
		{in: "[fd00::1]:5000/a:1", want: Reference{Registry: "[fd00::1]:5000", Repository: "a", Tag: "1"}},
		{in: "busybox", want: Reference{Registry: "docker.io", Repository: "library/busybox", Tag: "latest"}},
		{in: "user/app:v1", want: Reference{Registry: "docker.io", Repository: "user/app", Tag: "v1"}},
		{in: "", wantErr: true},
		{in: "quay.io/UPPER:1", wantErr: true},
		{in: "quay.io/a:", wantErr: true},
		{in: "quay.io/a@sha256:12", wantErr: true},
		{in: "quay.io//a", wantErr: true},
		{in: "quay.io:x/a", wantErr: true},
		{in: "quay.io/a:-bad", wantErr: true},
		{in: "quay.io/a/../b", wantErr: true},
	}
	for _, tt := range tests {
		t.Run(tt.in, func(t *testing.T) {
			got, err := ParseReference(tt.in)
			if tt.wantErr {
				if err == nil {
					t.Errorf("ParseReference(%q) = %+v, want an error", tt.in, got)
				}
				return
			}
			if err != nil || got != tt.want {
				t.Errorf("ParseReference(%q) = %+v, %v; want %+v", tt.in, got, err, tt.want)
			}
		})
	}
}

func TestDecodeArgs(t *testing.T) {
	if _, err := DecodeArgs(nil); err == nil || !strings.Contains(err.Error(), "image availability cmd accepts 1 params in args") {
		t.Errorf("DecodeArgs(nil) = %v, want the agent's message", err)
	}
	if _, err := DecodeArgs([]string{`{"timeout":-1}`}); err == nil {
		t.Error("DecodeArgs accepted a negative timeout")
	}
	req, err := DecodeArgs([]string{`{"images":["quay.io/a:1"],"timeout":120}`})
	if err != nil || len(req.Images) != 1 || req.Timeout != 120 {
		t.Errorf("DecodeArgs = %+v, %v", req, err)
	}
	out, stderr, code := Step(Options{})(context.Background(), []string{"["})
	if code != step.ExitNotRun || out != "" || stderr == "" {
		t.Errorf("step with bad args = %q, %q, %d; want -1 with a reason", out, stderr, code)
	}
}

func FuzzDecodeArgs(f *testing.F) {
	f.Add(`{"images":["quay.io/a:1","b@sha256:` + strings.Repeat("0", 64) + `"],"timeout":5}`)
	f.Add(`{"images":null}`)
	f.Fuzz(func(t *testing.T, arg string) {
		req, err := DecodeArgs([]string{arg})
		if err != nil {
			return
		}
		if req.Timeout < 0 {
			t.Fatalf("DecodeArgs(%q) timeout %d", arg, req.Timeout)
		}
		for _, im := range req.Images {
			r, err := ParseReference(im)
			if err != nil {
				continue
			}
			if r.Repository == "" || r.Registry == "" || r.ref() == "" || strings.Contains(r.ref(), "/") {
				t.Fatalf("ParseReference(%q) = %+v", im, r)
			}
		}
	})
}
