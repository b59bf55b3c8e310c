package gather

import (
	"bytes"
	"encoding/json"
	"errors"
	"fmt"
	"io"
)

// The JSON the bundle reads (pull secrets, the store's documents) is
// decoded into an ordered tree so that redacting it and writing it back
// keeps the fields in the order the file had them: object for {}, []any
// for [], and string, json.Number, bool or nil for the rest.

// object is a JSON object with its members in their order.
type object []member

type member struct {
	Key   string
	Value any
}

// get returns the value of key, or nil.
func (o object) get(key string) any {
	for _, m := range o {
		if m.Key == key {
			return m.Value
		}
	}
	return nil
}

// str returns the string value of key, or "".
func (o object) str(key string) string {
	s, _ := o.get(key).(string)
	return s
}

// set replaces the value of key, or appends it.
func (o *object) set(key string, v any) {
	for i := range *o {
		if (*o)[i].Key == key {
			(*o)[i].Value = v
			return
		}
	}
	*o = append(*o, member{key, v})
}

// MarshalJSON writes the members in order, without HTML escaping (so
// <redacted> stays readable).
func (o object) MarshalJSON() ([]byte, error) {
	var b bytes.Buffer
	b.WriteByte('{')
	for i, m := range o {
		if i > 0 {
			b.WriteByte(',')
		}
		k, err := marshal(m.Key, "")
		if err != nil {
			return nil, err
		}
		b.Write(k)
		b.WriteByte(':')
		v, err := marshal(m.Value, "")
		if err != nil {
			return nil, err
		}
		b.Write(v)
	}
	b.WriteByte('}')
	return b.Bytes(), nil
}

// marshal encodes v without HTML escaping, indented when indent is set.
func marshal(v any, indent string) ([]byte, error) {
	var b bytes.Buffer
	enc := json.NewEncoder(&b)
	enc.SetEscapeHTML(false)
	if indent != "" {
		enc.SetIndent("", indent)
	}
	if err := enc.Encode(v); err != nil {
		return nil, err
	}
	return bytes.TrimSuffix(b.Bytes(), []byte("\n")), nil
}

// parseJSON decodes one JSON value into the ordered tree; trailing data is
// an error.
func parseJSON(b []byte) (any, error) {
	dec := json.NewDecoder(bytes.NewReader(b))
	dec.UseNumber()
	v, err := decodeValue(dec)
	if err != nil {
		return nil, err
	}
	if _, err := dec.Token(); !errors.Is(err, io.EOF) {
		return nil, errors.New("data after the JSON value")
	}
	return v, nil
}

func decodeValue(dec *json.Decoder) (any, error) {
	tok, err := dec.Token()
	if err != nil {
		return nil, err
	}
	d, ok := tok.(json.Delim)
	if !ok {
		return tok, nil
	}
	switch d {
	case '{':
		o := object{}
		for dec.More() {
			kt, err := dec.Token()
			if err != nil {
				return nil, err
			}
			k, ok := kt.(string)
			if !ok {
				return nil, fmt.Errorf("object key %v is not a string", kt)
			}
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			o = append(o, member{k, v})
		}
		_, err := dec.Token() // }
		return o, err
	case '[':
		a := []any{}
		for dec.More() {
			v, err := decodeValue(dec)
			if err != nil {
				return nil, err
			}
			a = append(a, v)
		}
		_, err := dec.Token() // ]
		return a, err
	}
	return nil, fmt.Errorf("unexpected %v", d)
}

// JSON redacts a JSON document by its field names (see SecretName) and
// writes it back indented, fields in their order. A secret field holding a
// string of JSON (assisted's pull_secret) is redacted inside and kept as a
// string; one whose content has no secret field of its own is redacted
// whole. It fails only when b is not JSON.
func (r *Redactor) JSON(b []byte) ([]byte, int, error) {
	v, err := parseJSON(b)
	if err != nil {
		return nil, 0, err
	}
	v, n := r.walk(v)
	out, err := marshal(v, "  ")
	if err != nil {
		return nil, 0, err
	}
	return append(out, '\n'), n, nil
}

// walk redacts the values of secret keys in a tree.
func (r *Redactor) walk(v any) (any, int) {
	n := 0
	switch t := v.(type) {
	case object:
		for i := range t {
			var k int
			if SecretName(t[i].Key) {
				t[i].Value, k = r.secretValue(t[i].Value)
			} else {
				t[i].Value, k = r.walk(t[i].Value)
			}
			n += k
		}
	case []any:
		for i := range t {
			var k int
			t[i], k = r.walk(t[i])
			n += k
		}
	}
	return v, n
}

// secretValue redacts the value of a secret key: a scalar becomes
// <redacted>; a container or a string of JSON is redacted by its own keys,
// or every scalar in it when none of its keys names a secret.
func (r *Redactor) secretValue(v any) (any, int) {
	switch t := v.(type) {
	case nil, bool:
		return v, 0
	case json.Number:
		return Redacted, 1
	case string:
		if t == "" || t == Redacted {
			return v, 0
		}
		if red, n, ok := r.jsonString(t); ok {
			return red, n
		}
		r.Learn(t)
		return Redacted, 1
	}
	w, n := r.walk(v)
	if n > 0 {
		return w, n
	}
	return r.scalars(w)
}

// jsonString redacts s when it is a JSON object or array, and returns it
// compact. ok is false when s is not JSON or has no secret key inside, so
// the caller redacts it whole.
func (r *Redactor) jsonString(s string) (string, int, bool) {
	if len(s) == 0 || (s[0] != '{' && s[0] != '[') {
		return "", 0, false
	}
	v, err := parseJSON([]byte(s))
	if err != nil {
		return "", 0, false
	}
	v, n := r.walk(v)
	if n == 0 {
		return "", 0, false
	}
	out, err := marshal(v, "")
	if err != nil {
		return "", 0, false
	}
	return string(out), n, true
}

// scalars redacts every string and number in a tree.
func (r *Redactor) scalars(v any) (any, int) {
	n := 0
	switch t := v.(type) {
	case object:
		for i := range t {
			var k int
			t[i].Value, k = r.scalars(t[i].Value)
			n += k
		}
	case []any:
		for i := range t {
			var k int
			t[i], k = r.scalars(t[i])
			n += k
		}
	case string:
		if t == "" || t == Redacted {
			return v, 0
		}
		r.Learn(t)
		return Redacted, 1
	case json.Number:
		return Redacted, 1
	}
	return v, n
}
