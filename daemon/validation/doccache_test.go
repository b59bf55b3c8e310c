package validation

import (
	"fmt"
	"testing"
)

// TestDocCache: a text is parsed once and its parse shared, errors
// included; the cache starts again past its bound and still answers.
func TestDocCache(t *testing.T) {
	var c docCache[[]int]
	a, err := c.parse(`[1,2]`)
	if err != nil || len(a) != 2 || a[1] != 2 {
		t.Fatalf("parse: %v %v", a, err)
	}
	b, _ := c.parse(`[1,2]`)
	if &a[0] != &b[0] {
		t.Error("the same text was parsed again")
	}
	if _, err := c.parse(`[1,`); err == nil {
		t.Error("a broken text parsed")
	}
	if _, err := c.parse(`[1,`); err == nil {
		t.Error("a broken text parsed the second time")
	}
	for i := range maxCachedDocs + 10 {
		if v, err := c.parse(fmt.Sprintf("[%d]", i)); err != nil || v[0] != i {
			t.Fatalf("text %d: %v %v", i, v, err)
		}
	}
	if len(c.m) > maxCachedDocs {
		t.Errorf("the cache holds %d parses, bound %d", len(c.m), maxCachedDocs)
	}
}
