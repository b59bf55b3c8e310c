package installfiles

import (
	"errors"
	"net/url"
)

// pointerVersion is the spec of a day-2 host's pointer Ignition: assisted's
// node.ign template writes 3.2.0, which every RHCOS that joins a 4.x
// cluster reads.
const pointerVersion = "3.2.0"

// pointerConfig is the subset of Ignition 3.2 a pointer config uses.
type pointerConfig struct {
	Ignition pointerHeader `json:"ignition"`
	Storage  *ignStorage   `json:"storage,omitempty"`
}

type pointerHeader struct {
	Version  string           `json:"version"`
	Config   pointerMerge     `json:"config"`
	Security *pointerSecurity `json:"security,omitempty"`
}

type pointerMerge struct {
	Merge []ignResource `json:"merge"`
}

type pointerSecurity struct {
	TLS pointerTLS `json:"tls"`
}

type pointerTLS struct {
	CertificateAuthorities []ignResource `json:"certificateAuthorities"`
}

// PointerIgnition is the Ignition a host added to an installed cluster
// boots with, as assisted's FormatSecondDayWorkerIgnitionFile makes it: a
// config that merges the one the cluster's machine config server serves at
// source, trusting caBase64 (the base64 of a PEM bundle; "" when the
// endpoint is plain http) as a data URL, and writes /etc/hostname when
// hostname is set. It passes Check.
func PointerIgnition(source, caBase64, hostname string) ([]byte, error) {
	if source == "" {
		return nil, errors.New("pointer ignition: no source")
	}
	cfg := pointerConfig{Ignition: pointerHeader{
		Version: pointerVersion,
		Config:  pointerMerge{Merge: []ignResource{{Source: source}}},
	}}
	if caBase64 != "" {
		cfg.Ignition.Security = &pointerSecurity{TLS: pointerTLS{
			CertificateAuthorities: []ignResource{{Source: "data:text/plain;base64," + caBase64}},
		}}
	}
	if hostname != "" {
		cfg.Storage = &ignStorage{Files: []ignFile{file("/etc/hostname", 0o644, nil)}}
		cfg.Storage.Files[0].Contents.Source = "data:," + url.PathEscape(hostname)
	}
	b, err := marshalJSON(cfg)
	if err != nil {
		return nil, err
	}
	if err := Check("pointer.ign", b); err != nil {
		return nil, err
	}
	return b, nil
}
