package api

import (
	"math/rand/v2"
	"testing"

	"github.com/quarryhq/quarry/chat"
)

// TestAppendDeltaLine holds a message_delta's line, written directly, to
// what pythonJSONLine makes of the packet: texts with every kind of
// character Python's json.dumps escapes, and random bytes.
func TestAppendDeltaLine(t *testing.T) {
	texts := []string{"", "plain [1] text", "quote\" back\\slash /", "\x00\x01\x08\t\n\x0b\x0c\r\x1f \x7f", "é 日本 😀 \u2028\u2029 \ufffd",
		"\xff\xfe bad \xe2\x82", "<>&'", "\U0010ffff\U00010000"}
	rng := rand.New(rand.NewPCG(1, 2))
	for range 500 {
		b := make([]byte, rng.IntN(40))
		for i := range b {
			b[i] = byte(rng.IntN(256))
		}
		texts = append(texts, string(b))
	}
	for i, text := range texts {
		at := chat.Placement{Turn: i % 7, Tab: i % 3}
		want, err := pythonJSONLine(streamed(chat.Packet{Placement: at, Obj: chat.MessageDelta{Content: text}}))
		if err != nil {
			t.Fatal(err)
		}
		if got := appendDeltaLine([]byte("kept"), at, text); string(got) != "kept"+string(want) {
			t.Errorf("appendDeltaLine(%q) =\n%s\nwant\n%s", text, got[4:], want)
		}
	}
}

// BenchmarkDeltaLine measures a message_delta's line, of a piece of an
// answer as the scripted model sends it.
func BenchmarkDeltaLine(b *testing.B) {
	p := chat.Packet{Placement: chat.Placement{Turn: 2}, Obj: chat.MessageDelta{Content: "the quarterly report [1] "}}
	b.Run("direct", func(b *testing.B) {
		var buf []byte
		for b.Loop() {
			buf = appendDeltaLine(buf[:0], p.Placement, p.Obj.(chat.MessageDelta).Content)
		}
	})
	b.Run("reflection", func(b *testing.B) {
		for b.Loop() {
			if _, err := pythonJSONLine(streamed(p)); err != nil {
				b.Fatal(err)
			}
		}
	})
}
