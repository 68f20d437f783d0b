package tooldef_test

import (
	"context"
	"os"
	"testing"

	"github.com/google/go-cmp/cmp"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/tooldef"
)

func TestCache(t *testing.T) {
	ctx := context.Background()
	valid, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		t.Fatal(err)
	}
	invalid := []byte(`{"info": {"title": "t"}}`)
	c := tooldef.NewCache(2*len(valid), 1)
	want, _ := tooldef.Validate(ctx, valid)
	for range 2 {
		def := append([]byte(nil), valid...)
		got, err := c.Validate(ctx, def)
		if err != nil {
			t.Fatal(err)
		}
		for i := range def { // The caller may reuse its buffer.
			def[i] = ' '
		}
		if diff := cmp.Diff(want, got); diff != "" {
			t.Fatalf("cached methods mismatch (-want +got):\n%s", diff)
		}
	}
	for range 2 {
		if _, err := c.Validate(ctx, invalid); quarry.ErrorMessage(err) != "`description` is required in `info` section of OpenAPI schema" {
			t.Errorf("cached error = %v", err)
		}
	}
	// Older outcomes make way for new ones, within the budget.
	for i := range 5 {
		c.Validate(ctx, append([]byte(`{"n": `+string(rune('0'+i))+`}`), make([]byte, len(valid)/2)...))
	}
	if got, err := c.Validate(ctx, valid); err != nil || len(got) != len(want) {
		t.Errorf("after eviction: %d methods, %v", len(got), err)
	}
}

func BenchmarkCacheValidate(b *testing.B) {
	def, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		b.Fatal(err)
	}
	b.Run("uncached", func(b *testing.B) {
		for b.Loop() {
			tooldef.Validate(context.Background(), def)
		}
	})
	b.Run("cached", func(b *testing.B) {
		c := tooldef.NewCache(1<<20, 1)
		for b.Loop() {
			c.Validate(context.Background(), def)
		}
	})
}
