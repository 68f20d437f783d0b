package store

import (
	"fmt"
	"reflect"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
)

// TestBlockCache checks the cache's bound, its order of eviction (the
// least recently used first), the absences it keeps, and that a block of
// more than an eighth of the bound is not kept.
func TestBlockCache(t *testing.T) {
	block := func(seg int64, term string, n int) index.Block {
		return index.Block{Segment: seg, Term: term, DF: 1, Postings: make([]byte, n)}
	}
	one := (&keptBlock{key: blockKey{1, "t00"}, block: block(1, "t00", 100)}).cost()
	c := newBlockCache(10 * one)
	for i := range 10 {
		c.Put(block(1, fmt.Sprintf("t%02d", i), 100))
	}
	if s := c.Stats(); s.Entries != 10 || s.Bytes != 10*one {
		t.Fatalf("ten blocks kept: %+v", s)
	}
	if _, ok, found := c.Get(1, "t00"); !ok || !found { // t00 is now the most recently used.
		t.Fatal("t00 not kept")
	}
	c.Put(block(1, "t10", 100))
	if _, _, found := c.Get(1, "t01"); found {
		t.Error("t01, the least recently used, was kept past the bound")
	}
	for _, term := range []string{"t00", "t02", "t10"} {
		if b, ok, found := c.Get(1, term); !ok || !found || b.Term != term || len(b.Postings) != 100 {
			t.Errorf("%s: %v %v %+v", term, ok, found, b)
		}
	}
	if _, _, found := c.Get(2, "t00"); found {
		t.Error("segment 2's block of t00 found: blocks are kept by segment and term")
	}
	c.PutAbsent(2, "t00")
	if _, ok, found := c.Get(2, "t00"); ok || !found {
		t.Errorf("the absence of segment 2's t00: ok %v, found %v", ok, found)
	}
	if s := c.Stats(); s.Bytes > s.MaxBytes {
		t.Errorf("%d bytes kept, over the bound of %d", s.Bytes, s.MaxBytes)
	}
	c.Put(block(3, "big", int(2*one)))
	if _, _, found := c.Get(3, "big"); found {
		t.Error("a block of more than an eighth of the bound was kept")
	}
	var none *blockCache
	none.Put(block(1, "x", 1))
	if _, _, found := none.Get(1, "x"); found {
		t.Error("a nil cache found a block")
	}
}

// TestHitDocumentIsDocuments holds hitDocument's fields to quarry.Document's
// of the same names: the same types and the same JSON names, so that a
// result decodes a stored body as the document was written.
func TestHitDocumentIsDocuments(t *testing.T) {
	doc := reflect.TypeFor[quarry.Document]()
	hit := reflect.TypeFor[hitDocument]()
	name := func(f reflect.StructField) string { return strings.Split(f.Tag.Get("json"), ",")[0] }
	for i := range hit.NumField() {
		f := hit.Field(i)
		g, ok := doc.FieldByName(f.Name)
		if !ok || g.Type != f.Type || name(g) != name(f) {
			t.Errorf("hitDocument.%s (%s, %q) is not quarry.Document's (%v, %q)", f.Name, f.Type, name(f), g.Type, name(g))
		}
	}
}
