package tooldef

import (
	"context"
	"errors"
	"os"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
)

func TestValidateTimeBudget(t *testing.T) {
	def, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = runner{budget: 0}.validate(context.Background(), def)
	want := "Invalid OpenAPI document: checking it took longer than 3s"
	if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != want {
		t.Errorf("validate with no time left: error %v, want %q", err, want)
	}
	// The cache does not remember an outcome that depends on the time taken.
	c := NewCache(1<<20, 1)
	c.run.budget = 0
	if _, err := c.Validate(context.Background(), def); quarry.ErrorMessage(err) != want {
		t.Errorf("Cache.Validate with no time left: error %v, want %q", err, want)
	}
	c.run.budget = timeBudget
	if _, err := c.Validate(context.Background(), def); err != nil {
		t.Errorf("Cache.Validate remembered a timeout: %v", err)
	}
}

// TestCacheSlots checks that a Cache validates no more definitions at once
// than it has slots: one that finds none free in time fails with
// EUNAVAILABLE (not remembered), and one whose context ends while it waits
// stops.
func TestCacheSlots(t *testing.T) {
	def, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		t.Fatal(err)
	}
	c := NewCache(1<<20, 2)
	c.run.wait = time.Millisecond
	if cap(c.run.slots) != 2 {
		t.Fatalf("%d slots, want 2", cap(c.run.slots))
	}
	c.run.slots <- struct{}{} // Two validations under way.
	c.run.slots <- struct{}{}
	_, err = c.Validate(context.Background(), def)
	if quarry.ErrorCode(err) != quarry.EUNAVAILABLE || quarry.ErrorMessage(err) != msgBusy {
		t.Errorf("Validate with no free slot: error %v, want EUNAVAILABLE %q", err, msgBusy)
	}
	c.run.wait = time.Hour
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if _, err := c.Validate(ctx, def); !errors.Is(err, context.Canceled) {
		t.Errorf("Validate with no free slot and an ended context: error %v, want %v", err, context.Canceled)
	}
	<-c.run.slots
	if _, err := c.Validate(context.Background(), def); err != nil {
		t.Errorf("Validate with a free slot: %v", err)
	}
	if n := len(c.run.slots); n != 1 {
		t.Errorf("%d slots taken after the validation, want 1", n)
	}
	// NewCache makes at least one slot.
	if n := cap(NewCache(1<<20, 0).run.slots); n != 1 {
		t.Errorf("NewCache(…, 0) has %d slots, want 1", n)
	}
}

// TestValidateGivesBackSlot checks that a validation whose caller stops
// waiting gives its slot back once its work is done.
func TestValidateGivesBackSlot(t *testing.T) {
	c := NewCache(1<<20, 1)
	def := []byte(`{"openapi": "3.0.3", "info": {"title": "T", "description": "D", "version": "1"},
		"servers": [{"url": "https://a"}], "paths": {"/a": {"get": {"operationId": "a", "summary": "S",
		"responses": {"200": {"description": "OK"}}}}}}`)
	ctx, cancel := context.WithCancel(context.Background())
	go cancel()
	c.Validate(ctx, def) // Cut short or not, depending on when cancel runs.
	c.run.slots <- struct{}{}
	<-c.run.slots
}
