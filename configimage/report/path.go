package report

import (
	"strconv"
	"strings"
)

// Child is the path of field name under path: "spec.networking", or name
// alone at the root.
func Child(path, name string) string {
	if path == "" {
		return name
	}
	return path + "." + name
}

// Index is the path of a list's i-th item: "hosts[1]".
func Index(path string, i int) string { return path + "[" + strconv.Itoa(i) + "]" }

// Parent is the path path is under: "hosts[1]" for hosts[1].interfaces,
// "hosts" for hosts[1], "" for a top-level field.
func Parent(path string) string {
	if strings.HasSuffix(path, "]") {
		if i := strings.LastIndex(path, "["); i >= 0 {
			return path[:i]
		}
	}
	if i := strings.LastIndex(path, "."); i >= 0 {
		return path[:i]
	}
	return ""
}
