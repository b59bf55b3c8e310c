package wire

import "encoding/json"

// MarshalJSON writes a registration answer. One with no status is the
// answer to a re-registration, which assisted-service gives with status
// and status_info null (its swagger requires both; its generated clients
// take null): so it is written here.
func (r HostRegistrationResponse) MarshalJSON() ([]byte, error) {
	type plain HostRegistrationResponse // without this method
	b, err := json.Marshal(plain(r))
	if err != nil || r.Status != "" {
		return b, err
	}
	var m map[string]json.RawMessage
	if err := json.Unmarshal(b, &m); err != nil {
		return nil, err
	}
	m["status"], m["status_info"] = json.RawMessage("null"), json.RawMessage("null")
	return json.Marshal(m)
}
