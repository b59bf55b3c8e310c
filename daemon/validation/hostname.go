package validation

import "regexp"

// HostnamePattern is the pattern a host name must match (assisted
// hostutil.HostnamePattern), at most 63 characters long.
const HostnamePattern = "^[a-z0-9][a-z0-9-]{0,62}(?:[.][a-z0-9-]{1,63})*$"

const maxHostnameLength = 63

var hostnameRE = regexp.MustCompile(HostnamePattern)

// ForbiddenHostnames are names no host may use (assisted
// hostutil.ForbiddenHostnames).
var ForbiddenHostnames = []string{
	"localhost",
	"localhost.localdomain",
	"localhost4",
	"localhost4.localdomain4",
	"localhost6",
	"localhost6.localdomain6",
}

func isForbiddenHostname(name string) bool {
	for _, f := range ForbiddenHostnames {
		if name == f {
			return true
		}
	}
	return false
}
