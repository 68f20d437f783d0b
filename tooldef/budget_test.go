package tooldef

import (
	"context"
	"os"
	"testing"

	"github.com/quarryhq/quarry"
)

func TestValidateTimeBudget(t *testing.T) {
	def, err := os.ReadFile("testdata/valid30.json")
	if err != nil {
		t.Fatal(err)
	}
	_, err = validate(context.Background(), def, 0)
	want := "Invalid OpenAPI document: checking it took longer than 3s"
	if quarry.ErrorCode(err) != quarry.EINVALID || quarry.ErrorMessage(err) != want {
		t.Errorf("validate with no time left: error %v, want %q", err, want)
	}
	// The cache does not remember an outcome that depends on the time taken.
	c := NewCache(1 << 20)
	c.maxTime = 0
	if _, err := c.Validate(context.Background(), def); quarry.ErrorMessage(err) != want {
		t.Errorf("Cache.Validate with no time left: error %v, want %q", err, want)
	}
	c.maxTime = timeBudget
	if _, err := c.Validate(context.Background(), def); err != nil {
		t.Errorf("Cache.Validate remembered a timeout: %v", err)
	}
}
