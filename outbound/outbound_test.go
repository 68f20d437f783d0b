package outbound

import (
	"errors"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/toolrun"
)

func TestCheckMCPCallback(t *testing.T) {
	for _, tt := range []struct {
		state, code, want string
	}{
		{"", "", "invalid: Missing state parameter"},
		{"", "c", "invalid: Missing state parameter"},
		{"s", "", "invalid: Missing code parameter"},
		{"s", "c", ""},
	} {
		got := ""
		if err := CheckMCPCallback(tt.state, tt.code); err != nil {
			got = quarry.ErrorCode(err) + ": " + quarry.ErrorMessage(err)
		}
		if got != tt.want {
			t.Errorf("CheckMCPCallback(%q, %q) = %q, want %q", tt.state, tt.code, got, tt.want)
		}
	}
}

func TestProviderToken(t *testing.T) {
	const jwt = "a.b.c"
	for _, tt := range []struct {
		authz string
		want  string
		ok    bool
	}{
		{"Bearer " + jwt, jwt, true},
		{"bearer  " + jwt, jwt, true},
		{"Basic " + jwt, "", false},
		{"Bearer qk_notajwt", "", false},
		{jwt, "", false},
		{"", "", false},
	} {
		got, ok := providerToken(tt.authz)
		if got != tt.want || ok != tt.ok {
			t.Errorf("providerToken(%q) = %q, %v; want %q, %v", tt.authz, got, ok, tt.want, tt.ok)
		}
	}
}

func TestOutcomes(t *testing.T) {
	if got := refusedOutcome(quarry.Errorf(quarry.ECONFLICT, "disabled")); got != quarry.RunDisabled {
		t.Errorf("a 409 refusal: %q", got)
	}
	if got := refusedOutcome(quarry.Errorf(quarry.EINVALID, "built-in")); got != quarry.RunInvalid {
		t.Errorf("a 400 refusal: %q", got)
	}
	if got := mcpOutcome(&toolrun.MCPError{}); got != quarry.RunUpstream4xx {
		t.Errorf("a JSON-RPC error: %q", got)
	}
	if got := mcpOutcome(errors.New("refused")); got != "" {
		t.Errorf("another failure: %q", got)
	}
	if got := hostOf("https://auth.example:8443/token"); got != "auth.example" {
		t.Errorf("hostOf: %q", got)
	}
}
