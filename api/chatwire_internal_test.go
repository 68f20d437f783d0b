package api

import (
	"fmt"
	"math/rand/v2"
	"slices"
	"testing"

	"github.com/quarryhq/quarry"
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

// streamTestHits are documents with every kind of field a search gives:
// a link or none, a time or none, metadata, highlights, owners, text that
// Python escapes; the second and third share the first's id and pair and
// differ in their score or highlights, as one document given by two
// searches may.
func streamTestHits() []quarry.SearchHit {
	link := "https://wiki.example/é?a=1&b=<2>"
	at := quarry.TimeFromMicros(1_764_000_000_123_456)
	first := quarry.SearchHit{DocumentID: "doc-1", Pair: quarry.PairRef{ID: 3, Name: "wiki \"é\"", AccessType: quarry.AccessPrivate},
		ChunkNo: 2, SemanticIdentifier: "Quarterly report 日本 😀", Link: &link, Blurb: "line\nnext\t\x7f \u2028", Source: "confluence",
		Metadata: map[string]any{"tags": []any{"a", "b"}, "owner": "ö", "n": 1.5}, Score: 0.8123, MatchHighlights: []string{"<hi>quarterly</hi>"},
		UpdatedAt: &at, PrimaryOwners: []string{"ann@example.com"}, SecondaryOwners: []string{"bo"}}
	rescored := first
	rescored.Score = 0.5
	highlighted := first
	highlighted.MatchHighlights = []string{"other"}
	bare := quarry.SearchHit{DocumentID: "doc-2", Pair: quarry.PairRef{ID: 4, Name: "files", AccessType: quarry.AccessPublic}, Source: "file"}
	samePairOther := bare
	samePairOther.Pair.ID = 5
	return []quarry.SearchHit{first, bare, rescored, highlighted, samePairOther}
}

// TestStreamDocs holds the lines of the packets that carry documents,
// written by streamDocs with each document encoded once, to what
// pythonJSONLine makes of each packet, over one stream's packets in turn:
// documents given again, given again changed, none, and nil.
func TestStreamDocs(t *testing.T) {
	h := streamTestHits()
	packets := []chat.Packet{
		{Placement: chat.Placement{Turn: 1}, Obj: chat.SearchDocuments{Documents: h[:2]}},
		{Placement: chat.Placement{Turn: 1, Tab: 1}, Obj: chat.SearchDocuments{Documents: []quarry.SearchHit{}}},
		{Placement: chat.Placement{Turn: 1, Tab: 2}, Obj: chat.SearchDocuments{}},
		{Placement: chat.Placement{Turn: 2}, Obj: chat.SearchDocuments{Documents: []quarry.SearchHit{h[2], h[0], h[3], h[4], h[1]}}},
		{Placement: chat.Placement{Turn: 3}, Obj: chat.MessageStart{Documents: h, PreAnswerSeconds: 0.0123}},
		{Placement: chat.Placement{Turn: 3}, Obj: chat.MessageStart{Documents: h[:1], PreAnswerSeconds: 2}},
		{Placement: chat.Placement{Turn: 4}, Obj: chat.MessageStart{Documents: []quarry.SearchHit{}, PreAnswerSeconds: 1e-7}},
		{Placement: chat.Placement{Turn: 4}, Obj: chat.MessageStart{PreAnswerSeconds: 0}},
		{Placement: chat.Placement{Turn: 5}, Obj: chat.MessageStart{Documents: h[3:], PreAnswerSeconds: 3e16}},
	}
	var s streamDocs
	for i, p := range packets {
		want, err := pythonJSONLine(streamed(p))
		if err != nil {
			t.Fatal(err)
		}
		got, ok, err := s.line(p)
		if !ok || err != nil || string(got) != string(want) {
			t.Errorf("packet %d (%T): %v %v\n%s\nwant\n%s", i, p.Obj, ok, err, got, want)
		}
	}
	if n := len(s.seen[docKey{"doc-1", 3}]); n != 3 {
		t.Errorf("doc-1 encoded %d times, want 3 (once for each different copy)", n)
	}
	if _, ok, _ := s.line(chat.Packet{Obj: chat.MessageDelta{Content: "x"}}); ok {
		t.Error("a message_delta taken as a packet of documents")
	}
}

// BenchmarkDocumentLines measures the two lines that carry a search's ten
// documents (search_tool_documents_delta, then message_start), as one
// message of bench's sends them.
func BenchmarkDocumentLines(b *testing.B) {
	base := streamTestHits()[0]
	hits := make([]quarry.SearchHit, 10)
	for i := range hits {
		hits[i] = base
		hits[i].DocumentID = fmt.Sprintf("doc-%d", i)
		hits[i].Score = float64(i) / 10
	}
	search := chat.Packet{Placement: chat.Placement{Turn: 1}, Obj: chat.SearchDocuments{Documents: hits}}
	start := chat.Packet{Placement: chat.Placement{Turn: 2}, Obj: chat.MessageStart{Documents: slices.Clone(hits), PreAnswerSeconds: 0.004}}
	b.Run("once", func(b *testing.B) {
		for b.Loop() {
			var s streamDocs
			for _, p := range []chat.Packet{search, start} {
				if _, _, err := s.line(p); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
	b.Run("reflection", func(b *testing.B) {
		for b.Loop() {
			for _, p := range []chat.Packet{search, start} {
				if _, err := pythonJSONLine(streamed(p)); err != nil {
					b.Fatal(err)
				}
			}
		}
	})
}
