package quarry_test

import (
	"encoding/json"
	"reflect"
	"testing"

	"github.com/quarryhq/quarry"
)

func TestOwnerNames(t *testing.T) {
	got := quarry.OwnerNames([]json.RawMessage{
		json.RawMessage(`{"first_name":"Ada","last_name":"Lovelace"}`),
		json.RawMessage(`{"first_name":"Alan","middle_initial":"M","last_name":"Turing","display_name":"AT"}`),
		json.RawMessage(`{"display_name":"Grace"}`),
		json.RawMessage(`{"email":"not-an-email"}`),
		json.RawMessage(`{"email":"e@example.com"}`),
	})
	want := []string{"Ada None Lovelace", "Alan M Turing", "Grace", "e@example.com"}
	if !reflect.DeepEqual(got, want) {
		t.Errorf("OwnerNames = %q, want %q", got, want)
	}
	if quarry.OwnerNames(nil) != nil {
		t.Error("no owners should be null")
	}
}
