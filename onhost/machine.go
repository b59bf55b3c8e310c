package onhost

import (
	"encoding/json"
	"fmt"
)

// MachineBindingPath is where a host booted from a Cluster API Machine's
// bootstrap data (a config image the bootstrap provider made) finds which
// Machine it is: the test infrastructure provider's simulated cluster
// gives the host's Node the Machine's providerID from it.
const MachineBindingPath = "/etc/nodezero/machine"

// MachineBinding is the file at MachineBindingPath (JSON): the Machine
// the host was booted for.
type MachineBinding struct {
	Namespace string `json:"namespace"`
	Name      string `json:"name"`
	UID       string `json:"uid,omitempty"`
	Cluster   string `json:"cluster,omitempty"` // the CAPI Cluster's name
}

// Marshal writes the binding as indented JSON with a final newline; the
// same binding gives the same bytes.
func (b MachineBinding) Marshal() []byte {
	out, _ := json.MarshalIndent(b, "", "  ") // strings only: never fails
	return append(out, '\n')
}

// ParseMachineBinding reads the binding file; name is for errors.
// namespace and name are required.
func ParseMachineBinding(name string, data []byte) (MachineBinding, error) {
	var b MachineBinding
	if err := json.Unmarshal(data, &b); err != nil {
		return MachineBinding{}, fmt.Errorf("%s: %w", name, err)
	}
	if b.Namespace == "" || b.Name == "" {
		return MachineBinding{}, fmt.Errorf("%s: namespace and name are required, got %q and %q", name, b.Namespace, b.Name)
	}
	return b, nil
}
