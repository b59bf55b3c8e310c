package inputs

import (
	"fmt"
	"reflect"
	"sort"
	"strings"
	"sync"
)

func unknownFieldMessage(key string, known []string) string {
	if s := closest(key, known); s != "" {
		return fmt.Sprintf("unknown field, ignored; did you mean %q?", s)
	}
	return "unknown field, ignored; known fields: " + strings.Join(known, ", ")
}

// closest returns the known name within a small edit distance of key.
func closest(key string, known []string) string {
	best, bestD := "", 3
	for _, k := range known {
		if d := editDistance(strings.ToLower(key), strings.ToLower(k)); d < bestD {
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
