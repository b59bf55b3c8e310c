package wire

import (
	"strings"
	"time"
)

// DateTime is a swagger "date-time" field. It marshals the way go-openapi's
// strfmt.DateTime does (UTC, milliseconds, "Z"). Fields that may be unset are
// tagged omitzero: an unset time is left out rather than sent as
// "0001-01-01T00:00:00.000Z" (only the swagger's required times, such as an
// infra-env's created_at, are always there).
type DateTime time.Time

// dateTimeLayout is strfmt's marshal format.
const dateTimeLayout = "2006-01-02T15:04:05.000Z07:00"

// Time returns t as a time.Time.
func (t DateTime) Time() time.Time { return time.Time(t) }

// IsZero reports whether t is the zero time.
func (t DateTime) IsZero() bool { return time.Time(t).IsZero() }

// String formats t like its JSON form, without quotes.
func (t DateTime) String() string { return time.Time(t).UTC().Format(dateTimeLayout) }

// MarshalJSON implements json.Marshaler.
func (t DateTime) MarshalJSON() ([]byte, error) {
	return []byte(`"` + t.String() + `"`), nil
}

// UnmarshalJSON accepts RFC 3339 with or without fractional seconds, and null.
func (t *DateTime) UnmarshalJSON(b []byte) error {
	s := string(b)
	if s == "null" || s == `""` {
		*t = DateTime{}
		return nil
	}
	s = strings.Trim(s, `"`)
	p, err := time.Parse(time.RFC3339Nano, s)
	if err != nil {
		return err
	}
	*t = DateTime(p)
	return nil
}
