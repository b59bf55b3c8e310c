package inventory

import (
	"crypto/md5"
	"encoding/hex"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/jaypipes/ghw"
	"github.com/jaypipes/ghw/pkg/util"
)

// ErrNoHostID is returned by HostID when the host has no usable board serial,
// SMBIOS UUID or MAC address. The agent then uses FailureHostID; a caller
// that wants its behaviour can do the same.
var ErrNoHostID = errors.New("no board serial, system UUID or MAC address to derive a host ID from")

// FailureHostID is the ID the agent falls back to when nothing identifies the
// host (FailureUUID in src/scanners/machine_uuid_scanner.go).
const FailureHostID = "deaddead-dead-dead-dead-deaddeaddead"

// placeholderSerials are board serials that firmware ships unset, so many
// machines share them; they are never used as an ID. Compared
// case-insensitively. This is the agent's list (machine_uuid_scanner.go at
// a272a11d: "", ghw's "unknown", "none", "(none)", "-", BlueField's
// "unspecified base board/system serial number", "default string", Linode's
// "not specified", ProLiant Gen11's "PCA_number.ACC") plus "To be filled by
// O.E.M.", which the agent added in PR #1625 (OCPBUGS-106189) after ASUS
// boards gave every host one ID (agent issues #354, #714).
var placeholderSerials = []string{
	"", util.UNKNOWN, "none", "(none)", "-",
	"unspecified base board serial number",
	"unspecified system serial number",
	"default string",
	"not specified",
	"pca_number.acc",
	"to be filled by o.e.m.",
}

// placeholderUUIDs are SMBIOS system UUIDs that are not unique: unset, all
// zeroes, and the one all Kaloom hosts share.
var placeholderUUIDs = []string{
	"", util.UNKNOWN,
	"00000000-0000-0000-0000-000000000000",
	"03000200-0400-0500-0006-000700080009",
}

// HostID derives the host ID as the agent does (ReadId): an MD5-derived UUID
// of the baseboard serial; else the SMBIOS system UUID, lowercased; else an
// MD5-derived UUID of the lowest MAC address among the root's network
// interfaces. DMI is read through ghw under Options.Root, interfaces from
// Root/sys/class/net. Options.Addresses and Hostname play no part. The same
// root always gives the same ID.
func HostID(o Options) (string, error) {
	c, err := newCollector(o)
	if err != nil {
		return "", err
	}
	var board *ghw.BaseboardInfo
	if err := safely("read baseboard", func() error {
		var err error
		board, err = ghw.Baseboard(c.ghwOpts()...)
		return err
	}); err == nil && !slices.Contains(placeholderSerials, strings.ToLower(board.SerialNumber)) {
		return md5UUID(board.SerialNumber), nil
	}
	var product *ghw.ProductInfo
	if err := safely("read product", func() error {
		var err error
		product, err = ghw.Product(c.ghwOpts()...)
		return err
	}); err == nil {
		if id, ok := canonicalUUID(product.UUID); ok && !slices.Contains(placeholderUUIDs, id) {
			return id, nil
		}
	}
	var macs []string
	for _, l := range c.links() {
		if l.mac != "" {
			macs = append(macs, l.mac)
		}
	}
	if len(macs) > 0 {
		return md5UUID(slices.Min(macs)), nil
	}
	return "", fmt.Errorf("host ID for root %s: %w", c.root, ErrNoHostID)
}

// md5UUID formats the MD5 of s as a UUID (md5GenerateUUID); the version and
// variant bits are left as the hash has them.
func md5UUID(s string) string {
	sum := md5.Sum([]byte(s))
	h := hex.EncodeToString(sum[:])
	return h[0:8] + "-" + h[8:12] + "-" + h[12:16] + "-" + h[16:20] + "-" + h[20:]
}

// canonicalUUID accepts what the agent's strfmt.IsUUID accepts (google/uuid
// Parse: plain, braced, urn:uuid: and 32-hex forms) and returns the
// lowercase hyphenated form. The agent returns the input lowercased as is;
// DMI product_uuid is always the hyphenated form, so the two agree on real
// hosts.
func canonicalUUID(s string) (string, bool) {
	s = strings.ToLower(s)
	switch len(s) {
	case 36 + 9:
		if !strings.HasPrefix(s, "urn:uuid:") {
			return "", false
		}
		s = s[9:]
	case 36 + 2:
		if s[0] != '{' || s[37] != '}' {
			return "", false
		}
		s = s[1:37]
	case 32:
		s = s[0:8] + "-" + s[8:12] + "-" + s[12:16] + "-" + s[16:20] + "-" + s[20:]
	}
	if len(s) != 36 {
		return "", false
	}
	for i, r := range s {
		switch i {
		case 8, 13, 18, 23:
			if r != '-' {
				return "", false
			}
		default:
			if !strings.ContainsRune("0123456789abcdef", r) {
				return "", false
			}
		}
	}
	return s, true
}
