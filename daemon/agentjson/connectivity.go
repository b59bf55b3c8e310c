package agentjson

import (
	"math"
	"strconv"
	"sync"

	"github.com/nodezero/nodezero/wire"
)

// The connectivity report's fast path (see the package comment): ScanConnectivity
// reads a report once, hands each remote host to the caller, and writes the
// report again as json.Marshal writes the model, which is what the store
// keeps.

var (
	connReportKeys = []string{"remote_hosts"}
	remoteHostKeys = []string{"host_id", "l2_connectivity", "l3_connectivity", "mtu_report"}
	l2Keys         = []string{"outgoing_nic", "outgoing_ip_address", "remote_ip_address", "remote_mac", "successful"}
	l3Keys         = []string{"outgoing_nic", "remote_ip_address", "successful", "average_rtt_ms", "packet_loss_percentage"}
	mtuKeys        = []string{"outgoing_nic", "remote_ip_address", "mtu_successful"}
)

// ScanConnectivity reads a connectivity-check report (a wire.ConnectivityReport's
// text) in the form agents write it, calling visit with each remote host in
// order. The host and the entries it points to are reused for the next one,
// and its strings are substrings of text: visit copies what it keeps.
// canonical is the report as json.Marshal writes the decoded report (what
// assisted stores: only the fields of the model). ok is false when the text
// is not in that form; visit may have seen some hosts by then, and the
// caller decodes the text with wire.DecodeEmbedded instead.
func ScanConnectivity(text string, visit func(*wire.ConnectivityRemoteHost)) (canonical string, ok bool) {
	p := jsonReader{s: text}
	var (
		rh    wire.ConnectivityRemoteHost
		l2    []wire.L2Connectivity
		l3    []wire.L3Connectivity
		mtu   []wire.MTUReport
		buf   = canonicalBufs.Get().(*[]byte)
		w     = jsonObject{b: append((*buf)[:0], `{"remote_hosts":[`...)}
		hosts int
	)
	defer func() {
		*buf = w.b[:0]
		canonicalBufs.Put(buf)
	}()
	remoteHost := func() bool {
		l2, l3, mtu = l2[:0], l3[:0], mtu[:0]
		rh.HostID = ""
		ok := p.object(remoteHostKeys, func(key string) bool {
			switch key {
			case "host_id":
				var ok bool
				rh.HostID, ok = p.plain()
				return ok
			case "l2_connectivity":
				return objects(&p, l2Keys, &l2, l2Field)
			case "l3_connectivity":
				return objects(&p, l3Keys, &l3, l3Field)
			case "mtu_report":
				return objects(&p, mtuKeys, &mtu, mtuField)
			}
			return false
		})
		if !ok {
			return false
		}
		// The pools are complete for this host: point at them now (an
		// append while reading may have moved them).
		rh.L2Connectivity = pointAt(rh.L2Connectivity, l2)
		rh.L3Connectivity = pointAt(rh.L3Connectivity, l3)
		rh.MTUReport = pointAt(rh.MTUReport, mtu)
		if hosts > 0 {
			w.b = append(w.b, ',')
		}
		hosts++
		w.remoteHost(&rh)
		visit(&rh)
		return true
	}
	ok = p.object(connReportKeys, func(string) bool { return p.array(remoteHost) })
	if !ok || !p.end() {
		return "", false
	}
	if hosts == 0 {
		return "{}", true
	}
	w.b = append(w.b, "]}"...)
	if string(w.b) == text {
		return text, true // an agent that writes it as json.Marshal does
	}
	return string(w.b), true
}

// objects reads an array of objects with the given keys into *pool (from
// its start), each member by field.
func objects[T any](p *jsonReader, keys []string, pool *[]T, field func(p *jsonReader, e *T, key string) bool) bool {
	*pool = (*pool)[:0]
	return p.array(func() bool {
		var zero T
		*pool = append(*pool, zero)
		e := &(*pool)[len(*pool)-1]
		return p.object(keys, func(key string) bool { return field(p, e, key) })
	})
}

// pointAt returns list (reused) pointing at each element of pool.
func pointAt[T any](list []*T, pool []T) []*T {
	list = list[:0]
	for i := range pool {
		list = append(list, &pool[i])
	}
	return list
}

func l2Field(p *jsonReader, e *wire.L2Connectivity, key string) (ok bool) {
	switch key {
	case "outgoing_nic":
		e.OutgoingNic, ok = p.plain()
	case "outgoing_ip_address":
		e.OutgoingIPAddress, ok = p.plain()
	case "remote_ip_address":
		e.RemoteIPAddress, ok = p.plain()
	case "remote_mac":
		e.RemoteMAC, ok = p.plain()
	case "successful":
		e.Successful, ok = p.bool()
	}
	return ok
}

func l3Field(p *jsonReader, e *wire.L3Connectivity, key string) (ok bool) {
	switch key {
	case "outgoing_nic":
		e.OutgoingNic, ok = p.plain()
	case "remote_ip_address":
		e.RemoteIPAddress, ok = p.plain()
	case "successful":
		e.Successful, ok = p.bool()
	case "average_rtt_ms":
		e.AverageRTTMs, ok = p.float()
	case "packet_loss_percentage":
		e.PacketLossPercentage, ok = p.float()
	}
	return ok
}

func mtuField(p *jsonReader, e *wire.MTUReport, key string) (ok bool) {
	switch key {
	case "outgoing_nic":
		e.OutgoingNic, ok = p.plain()
	case "remote_ip_address":
		e.RemoteIPAddress, ok = p.plain()
	case "mtu_successful":
		e.MTUSuccessful, ok = p.bool()
	}
	return ok
}

// canonicalBufs hold the canonical text of a report while it is written:
// most agents write the canonical form already, and then the text itself
// is returned.
var canonicalBufs = sync.Pool{New: func() any { return new([]byte) }}

// jsonObject writes the members of an object as json.Marshal does for this
// package's structs: in field order, with omitempty fields left out when
// zero.
type jsonObject struct {
	b []byte
	n int
}

func (o *jsonObject) key(name string) {
	if o.n > 0 {
		o.b = append(o.b, ',')
	}
	o.n++
	o.b = append(o.b, '"')
	o.b = append(o.b, name...)
	o.b = append(o.b, '"', ':')
}

// str writes a plain string (see jsonReader.plain) as json.Marshal does,
// which escapes <, > and & for HTML.
func (o *jsonObject) str(name, v string) {
	if v == "" {
		return
	}
	o.key(name)
	o.b = append(o.b, '"')
	for i := 0; i < len(v); i++ {
		switch c := v[i]; c {
		case '<', '>', '&':
			o.b = append(o.b, '\\', 'u', '0', '0', hexDigit[c>>4], hexDigit[c&0xf])
		default:
			o.b = append(o.b, c)
		}
	}
	o.b = append(o.b, '"')
}

const hexDigit = "0123456789abcdef"

func (o *jsonObject) bool(name string, v bool) {
	if v {
		o.key(name)
		o.b = append(o.b, "true"...)
	}
}

// float writes a float64 as json.Marshal does: the shortest form that
// reads back the same, in exponent form below 1e-6 and from 1e21 up, with
// a one-digit exponent not padded.
func (o *jsonObject) float(name string, f float64) {
	if f == 0 {
		return
	}
	o.key(name)
	format := byte('f')
	if abs := math.Abs(f); abs < 1e-6 || abs >= 1e21 {
		format = 'e'
	}
	o.b = strconv.AppendFloat(o.b, f, format, -1, 64)
	if n := len(o.b); format == 'e' && n >= 4 && o.b[n-4] == 'e' && o.b[n-3] == '-' && o.b[n-2] == '0' {
		o.b[n-2] = o.b[n-1]
		o.b = o.b[:n-1]
	}
}

// list writes an array of n objects, each by elem, unless it is empty.
func (o *jsonObject) list(name string, n int, elem func(o *jsonObject, i int)) {
	if n == 0 {
		return
	}
	o.key(name)
	o.b = append(o.b, '[')
	for i := range n {
		if i > 0 {
			o.b = append(o.b, ',')
		}
		// The element's members are written by o itself, counted from
		// zero (a jsonObject of its own would be allocated per element).
		o.b = append(o.b, '{')
		members := o.n
		o.n = 0
		elem(o, i)
		o.n = members
		o.b = append(o.b, '}')
	}
	o.b = append(o.b, ']')
}

// remoteHost appends rh as json.Marshal writes it: the fields in the
// order of the structs (steps_gen.go).
func (o *jsonObject) remoteHost(rh *wire.ConnectivityRemoteHost) {
	o.b = append(o.b, '{')
	o.n = 0
	o.str("host_id", rh.HostID)
	o.list("l2_connectivity", len(rh.L2Connectivity), func(o *jsonObject, i int) {
		e := rh.L2Connectivity[i]
		o.str("outgoing_nic", e.OutgoingNic)
		o.str("outgoing_ip_address", e.OutgoingIPAddress)
		o.str("remote_ip_address", e.RemoteIPAddress)
		o.str("remote_mac", e.RemoteMAC)
		o.bool("successful", e.Successful)
	})
	o.list("l3_connectivity", len(rh.L3Connectivity), func(o *jsonObject, i int) {
		e := rh.L3Connectivity[i]
		o.str("outgoing_nic", e.OutgoingNic)
		o.str("remote_ip_address", e.RemoteIPAddress)
		o.bool("successful", e.Successful)
		o.float("average_rtt_ms", e.AverageRTTMs)
		o.float("packet_loss_percentage", e.PacketLossPercentage)
	})
	o.list("mtu_report", len(rh.MTUReport), func(o *jsonObject, i int) {
		e := rh.MTUReport[i]
		o.str("outgoing_nic", e.OutgoingNic)
		o.str("remote_ip_address", e.RemoteIPAddress)
		o.bool("mtu_successful", e.MTUSuccessful)
	})
	o.b = append(o.b, '}')
}
