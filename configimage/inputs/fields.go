package inputs

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

// unknownFieldMessage is the warning for an unknown key in a file
// openshift-install reads leniently: it ignores the key, and so do we.
func unknownFieldMessage(key string, known []string) string {
	if s := closest(key, known); s != "" {
		return fmt.Sprintf("unknown field, ignored; did you mean %q?", s)
	}
	return "unknown field, ignored; known fields: " + strings.Join(known, ", ")
}

// unknownFieldError is the error for an unknown key in a file
// openshift-install reads strictly; encoding/json (which its strict YAML
// reader ends in) says `unknown field "rootDeviceHint"`.
func unknownFieldError(key string, known []string) string {
	if s := closest(key, known); s != "" {
		return fmt.Sprintf("unknown field %q; did you mean %q?", key, s)
	}
	return fmt.Sprintf("unknown field %q; known fields: %s", key, strings.Join(known, ", "))
}

// closest returns the known name nearest to key by edit distance (case
// ignored), or "" when none is near enough to be the likely intent: at most
// two edits, at most one edit per four characters of key
// (additionalNTPServers for additionalNTPSources), or one name a prefix of
// the other (networkConfiguration, macAddr).
func closest(key string, known []string) string {
	lk := strings.ToLower(key)
	best, bestD := "", -1
	for _, k := range known {
		lc := strings.ToLower(k)
		d := editDistance(lk, lc)
		short := min(len(lk), len(lc))
		prefix := short >= 6 && (strings.HasPrefix(lk, lc) || strings.HasPrefix(lc, lk))
		if d > 2 && 4*d > len(lk) && !prefix {
			continue
		}
		if bestD < 0 || d < bestD {
			best, bestD = k, d
		}
	}
	return best
}

func editDistance(a, b string) int {
	if len(a) > 64 || len(b) > 64 {
		return 64
	}
	prev := make([]int, len(b)+1)
	cur := make([]int, len(b)+1)
	for j := range prev {
		prev[j] = j
	}
	for i := 1; i <= len(a); i++ {
		cur[0] = i
		for j := 1; j <= len(b); j++ {
			cost := 1
			if a[i-1] == b[j-1] {
				cost = 0
			}
			cur[j] = min(prev[j]+1, cur[j-1]+1, prev[j-1]+cost)
		}
		prev, cur = cur, prev
	}
	return prev[len(b)]
}

type fieldInfo struct {
	index   int
	ignored bool
}

type structInfo struct {
	byName map[string]fieldInfo
	byFold map[string]fieldInfo
	names  []string
	remain int
}

var structCache sync.Map // reflect.Type → *structInfo

// fieldsOf reads the `yaml:"name[,ignored]"` and `yaml:",remain"` tags.
func fieldsOf(t reflect.Type) *structInfo {
	if c, ok := structCache.Load(t); ok {
		return c.(*structInfo)
	}
	info := &structInfo{byName: map[string]fieldInfo{}, byFold: map[string]fieldInfo{}, remain: -1}
	for i := 0; i < t.NumField(); i++ {
		f := t.Field(i)
		tag, ok := f.Tag.Lookup("yaml")
		if !ok || tag == "-" || !f.IsExported() {
			continue
		}
		name, opts, _ := strings.Cut(tag, ",")
		if opts == "remain" {
			info.remain = i
			continue
		}
		fi := fieldInfo{index: i, ignored: opts == "ignored"}
		info.byName[name] = fi
		info.byFold[strings.ToLower(name)] = fi
		info.names = append(info.names, name)
	}
	sort.Strings(info.names)
	structCache.Store(t, info)
	return info
}
