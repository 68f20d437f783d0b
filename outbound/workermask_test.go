package outbound

import (
	"bytes"
	"encoding/json"
	"errors"
	"log/slog"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

func TestCredentialMask(t *testing.T) {
	credential := json.RawMessage(`{"api_token": "tok/en+value", "nested": {"list": ["pa\"ss-word", "ab"]},
		"port": 12345, "enabled": true, "prefix": "tok/en"}`)
	m := &credentialMask{}
	m.add(credential)
	m.add(json.RawMessage(`{"refreshed": "new-access-token"}`))
	m.add(json.RawMessage(`not json`))
	tests := []struct {
		name, in, want string
	}{
		{"raw value", "401 from https://x/api?token=tok/en+value", "401 from https://x/api?token=••••••••••••"},
		{"query-escaped", "GET /api?token=tok%2Fen%2Bvalue failed", "GET /api?token=•••••••••••• failed"},
		{"path-escaped", "GET /tok%2Fen+value failed", "GET /•••••••••••• failed"},
		{"json-escaped", `body {"password":"pa\"ss-word"}`, `body {"password":"••••••••••••"}`},
		{"raw with a quote", `password pa"ss-word refused`, `password •••••••••••• refused`},
		{"the longest value first", "tok/en+value and tok/en", "•••••••••••• and ••••••••••••"},
		{"a value written back", "token new-access-token expired", "token •••••••••••• expired"},
		{"short values and numbers are left", "ab 12345 true", "ab 12345 true"},
		{"nothing to mask", "connection refused", "connection refused"},
	}
	for _, tt := range tests {
		t.Run(tt.name, func(t *testing.T) {
			if got := m.apply(tt.in); got != tt.want {
				t.Errorf("apply(%q) = %q, want %q", tt.in, got, tt.want)
			}
		})
	}
	var empty credentialMask
	if got := empty.apply("tok/en+value"); got != "tok/en+value" {
		t.Errorf("the empty mask changed a text: %q", got)
	}
}

func TestMaskingHandler(t *testing.T) {
	m := &credentialMask{}
	m.add(json.RawMessage(`{"token":"s3cr3t-value"}`))
	var buf bytes.Buffer
	log := slog.New(&maskingHandler{inner: slog.NewTextHandler(&buf, nil), mask: m})
	log.With("url", "https://x?t=s3cr3t-value").WithGroup("g").Info("calling with s3cr3t-value",
		"err", errors.New("refused s3cr3t-value"), "n", 3, slog.Group("inner", "v", "s3cr3t-value"))
	if strings.Contains(buf.String(), "s3cr3t-value") || !strings.Contains(buf.String(), quarry.MaskedSecret) {
		t.Errorf("the log shows the credential: %s", buf.String())
	}
}
