package configimage

import (
	"testing"

	"github.com/nodezero/nodezero/configimage/manifests"
)

func TestDefaultEnvConf(t *testing.T) {
	tests := []struct {
		name string
		p    *manifests.Proxy
		want string
	}{
		{"no proxy", nil, ""},
		{"empty proxy", &manifests.Proxy{}, ""},
		{"all three", &manifests.Proxy{HTTPProxy: "http://proxy:3128", HTTPSProxy: "http://proxy:3129", NoProxy: ".example.com,10.0.0.0/8"},
			"[Manager]\nDefaultEnvironment=HTTP_PROXY=\"http://proxy:3128\"\nDefaultEnvironment=HTTPS_PROXY=\"http://proxy:3129\"\nDefaultEnvironment=NO_PROXY=\".example.com,10.0.0.0/8\"\n"},
		{"specifiers and quotes escaped", &manifests.Proxy{HTTPProxy: `http://u%40x:p"w@proxy:3128`},
			"[Manager]\nDefaultEnvironment=HTTP_PROXY=\"http://u%%40x:p\\\"w@proxy:3128\"\n"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := string(DefaultEnvConf(tt.p)); got != tt.want {
				t.Errorf("DefaultEnvConf = %q, want %q", got, tt.want)
			}
		})
	}
}

func TestChronyConf(t *testing.T) {
	if got := ChronyConf(nil); got != nil {
		t.Errorf("ChronyConf(nil) = %q, want nil", got)
	}
	want := "server 192.168.111.1 iburst\nserver ntp.example.com iburst\nmakestep 1.0 3\nrtcsync\nlogdir /var/log/chrony\n"
	if got := string(ChronyConf([]string{"192.168.111.1", "ntp.example.com"})); got != want {
		t.Errorf("ChronyConf = %q, want %q", got, want)
	}
}
