package wire

import (
	"testing"

	"github.com/google/go-cmp/cmp"
)

func TestValidationsInfoRoundTrip(t *testing.T) {
	text := `{"network":[{"id":"has-default-route","status":"pending","message":"waiting"}],` +
		`"hardware":[{"id":"has-min-cpu-cores","status":"success","message":"ok"},` +
		`{"id":"has-min-memory","status":"failure","message":"too little"},` +
		`{"id":"ntp-synced","status":"error","message":"broken"},` +
		`{"id":"odf","status":"disabled","message":"off"}]}`
	got, err := ParseValidationsInfo(text)
	if err != nil {
		t.Fatal(err)
	}
	want := ValidationsInfo{
		{ID: "has-min-cpu-cores", Status: ValidationSuccess, Message: "ok", Category: CategoryHardware},
		{ID: "has-min-memory", Status: ValidationFailure, Message: "too little", Category: CategoryHardware},
		{ID: "ntp-synced", Status: ValidationError, Message: "broken", Category: CategoryHardware},
		{ID: "odf", Status: ValidationDisabled, Message: "off", Category: CategoryHardware},
		{ID: "has-default-route", Status: ValidationPending, Message: "waiting", Category: CategoryNetwork},
	}
	if d := cmp.Diff(want, got); d != "" {
		t.Fatalf("parse (-want +got):\n%s", d)
	}
	ids := func(v ValidationsInfo) []string {
		var out []string
		for _, r := range v {
			out = append(out, r.ID)
		}
		return out
	}
	if d := cmp.Diff([]string{"has-min-memory", "ntp-synced"}, ids(got.Failing())); d != "" {
		t.Errorf("Failing (-want +got):\n%s", d)
	}
	if d := cmp.Diff([]string{"has-min-memory", "ntp-synced", "has-default-route"}, ids(got.Unmet())); d != "" {
		t.Errorf("Unmet (-want +got):\n%s", d)
	}
	out, err := got.Marshal()
	if err != nil {
		t.Fatal(err)
	}
	again, err := ParseValidationsInfo(out)
	if err != nil {
		t.Fatal(err)
	}
	if d := cmp.Diff(got, again); d != "" {
		t.Errorf("marshal and parse again (-want +got):\n%s", d)
	}
}

func TestParseValidationsInfoErrors(t *testing.T) {
	for _, s := range []string{"", "  "} {
		if v, err := ParseValidationsInfo(s); err != nil || v != nil {
			t.Errorf("ParseValidationsInfo(%q) = %v, %v; want nil, nil", s, v, err)
		}
	}
	if _, err := ParseValidationsInfo("{not json"); err == nil {
		t.Error("ParseValidationsInfo of bad text: no error")
	}
}
