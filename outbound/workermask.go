package outbound

import (
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"log/slog"
	"net/url"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
)

// minMaskedBytes is the length of the shortest credential value looked
// for in texts: shorter ones ("on", "1") cannot be told from words.
const minMaskedBytes = 4

// credentialMask hides the values of a pair's credential in the texts a
// worker sends or logs (an attempt's error_msg and trace): a connector's
// error may quote a URL with a token in it, or an answer that echoes one.
type credentialMask struct {
	values []string // Longest first, so that a value inside another is not left half shown.
}

// add adds the values of credential, a JSON object, to the mask: every
// string value in it, at any depth, as written and as it would appear
// JSON-escaped or URL-escaped.
func (m *credentialMask) add(credential json.RawMessage) {
	dec := json.NewDecoder(bytes.NewReader(credential))
	dec.UseNumber()
	var v any
	if dec.Decode(&v) != nil {
		return
	}
	seen := map[string]bool{}
	for _, s := range m.values {
		seen[s] = true
	}
	var walk func(any)
	walk = func(v any) {
		switch v := v.(type) {
		case map[string]any:
			for _, e := range v {
				walk(e)
			}
		case []any:
			for _, e := range v {
				walk(e)
			}
		case string:
			esc, _ := json.Marshal(v)
			for _, form := range []string{v, string(esc[1 : len(esc)-1]), url.QueryEscape(v), url.PathEscape(v)} {
				if len(form) >= minMaskedBytes && !seen[form] {
					seen[form] = true
					m.values = append(m.values, form)
				}
			}
		}
	}
	walk(v)
	slices.SortFunc(m.values, func(a, b string) int { return len(b) - len(a) })
}

// apply returns s with every value of the credential replaced.
func (m *credentialMask) apply(s string) string {
	for _, v := range m.values {
		if strings.Contains(s, v) {
			s = strings.ReplaceAll(s, v, quarry.MaskedSecret)
		}
	}
	return s
}

// maskingHandler is a slog.Handler that masks the credential's values in
// the message and the string attributes of every record before inner
// handles it: what a connector logs never shows its credential.
type maskingHandler struct {
	inner slog.Handler
	mask  *credentialMask
}

// Enabled implements slog.Handler.
func (h *maskingHandler) Enabled(ctx context.Context, l slog.Level) bool {
	return h.inner.Enabled(ctx, l)
}

// Handle implements slog.Handler.
func (h *maskingHandler) Handle(ctx context.Context, r slog.Record) error {
	out := slog.NewRecord(r.Time, r.Level, h.mask.apply(r.Message), r.PC)
	r.Attrs(func(a slog.Attr) bool {
		out.AddAttrs(h.maskAttr(a))
		return true
	})
	return h.inner.Handle(ctx, out)
}

// maskAttr masks the strings of a, and of the attributes of a group.
func (h *maskingHandler) maskAttr(a slog.Attr) slog.Attr {
	v := a.Value.Resolve()
	switch v.Kind() {
	case slog.KindString:
		return slog.String(a.Key, h.mask.apply(v.String()))
	case slog.KindGroup:
		attrs := v.Group()
		masked := make([]any, len(attrs))
		for i, g := range attrs {
			masked[i] = h.maskAttr(g)
		}
		return slog.Group(a.Key, masked...)
	case slog.KindAny:
		if err, ok := v.Any().(error); ok {
			return slog.String(a.Key, h.mask.apply(err.Error()))
		}
		return slog.String(a.Key, h.mask.apply(fmt.Sprint(v.Any())))
	}
	return a
}

// WithAttrs implements slog.Handler.
func (h *maskingHandler) WithAttrs(attrs []slog.Attr) slog.Handler {
	masked := make([]slog.Attr, len(attrs))
	for i, a := range attrs {
		masked[i] = h.maskAttr(a)
	}
	return &maskingHandler{inner: h.inner.WithAttrs(masked), mask: h.mask}
}

// WithGroup implements slog.Handler.
func (h *maskingHandler) WithGroup(name string) slog.Handler {
	return &maskingHandler{inner: h.inner.WithGroup(name), mask: h.mask}
}
