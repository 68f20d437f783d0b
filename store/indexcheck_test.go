package store_test

import (
	"fmt"
	"slices"
	"testing"

	"github.com/quarryhq/quarry/store/storetest"
)

// TestCheckIndex checks a sound index (segments, pending chunks, and the
// dead postings of documents written again since), then indexes damaged
// each its own way, on both databases: each fails with a message that
// names what is wrong.
func TestCheckIndex(t *testing.T) {
	// indexed is a database of 40 documents: 30 flushed into a segment,
	// 5 of them written again since (their old chunks gone, their
	// postings dead), 10 pending.
	indexed := func(t *testing.T) *searchFixture {
		f := newSearchFixture(t, storetest.Open(t))
		ids := make([]int, 30)
		for i := range ids {
			ids[i] = i
		}
		f.ingest(t, 1, ids...)
		if err := f.db.SettleIndex(ctx); err != nil {
			t.Fatal(err)
		}
		f.ingest(t, 2, 0, 1, 2, 3, 4)
		f.ingest(t, 1, 30, 31, 32, 33, 34, 35, 36, 37, 38, 39)
		return f
	}
	scalar := func(t *testing.T, f *searchFixture, query string) (v int64) {
		t.Helper()
		if err := f.db.QueryRowForTest(ctx, query, &v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return v
	}
	text := func(t *testing.T, f *searchFixture, query string) (v string) {
		t.Helper()
		if err := f.db.QueryRowForTest(ctx, query, &v); err != nil {
			t.Fatalf("%s: %v", query, err)
		}
		return v
	}

	t.Run("sound", func(t *testing.T) {
		f := indexed(t)
		r, err := f.db.CheckIndex(ctx)
		if err != nil {
			t.Fatal(err)
		}
		chunks := scalar(t, f, `SELECT COUNT(*) FROM search_chunks`)
		if r.Found() != 0 || r.Documents != 40 || r.Chunks != chunks || r.Pending != 15 || r.Segments != 1 || r.Listed != 30 ||
			r.Blocks == 0 || r.Postings < r.Blocks {
			t.Errorf("a sound index: %+v; %s", r, r.Verdict())
		}
		want := fmt.Sprintf("40 documents, %d chunks (15 pending, the rest in 1 live segment listing 30 chunks), %d blocks of %d postings",
			chunks, r.Blocks, r.Postings)
		if r.Summary() != want {
			t.Errorf("summary %q, want %q", r.Summary(), want)
		}
	})

	for _, tt := range []struct {
		name   string
		damage func(t *testing.T, f *searchFixture) (want string)
	}{
		{"a block's bytes corrupted", func(t *testing.T, f *searchFixture) string {
			seg := scalar(t, f, `SELECT id FROM search_segments WHERE state = 'live'`)
			term := text(t, f, `SELECT MIN(term) FROM search_blocks`)
			if err := f.db.ExecForTest(ctx, `UPDATE search_blocks SET postings = $1 WHERE segment_id = $2 AND term = $3`, []byte{0xff}, seg, term); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("segment %d's block of term %q does not decode", seg, term)
		}},
		{"a block's postings short of its count", func(t *testing.T, f *searchFixture) string {
			seg := scalar(t, f, `SELECT id FROM search_segments WHERE state = 'live'`)
			term := text(t, f, `SELECT MIN(term) FROM search_blocks`)
			df := scalar(t, f, `SELECT df FROM search_blocks WHERE term = '`+term+`'`)
			if err := f.db.ExecForTest(ctx, `UPDATE search_blocks SET df = df + 1 WHERE segment_id = $1 AND term = $2`, seg, term); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("segment %d's block of term %q holds %d postings and says %d", seg, term, df, df+1)
		}},
		{"a chunk's pending row removed", func(t *testing.T, f *searchFixture) string {
			chunk := scalar(t, f, `SELECT MAX(chunk_id) FROM search_pending`)
			if err := f.db.ExecForTest(ctx, `DELETE FROM search_pending WHERE chunk_id = $1`, chunk); err != nil {
				t.Fatal(err)
			}
			pair := scalar(t, f, fmt.Sprintf(`SELECT cc_pair_id FROM search_chunks WHERE id = %d`, chunk))
			return fmt.Sprintf("chunk %d (document \"d39\" of cc-pair %d) is neither pending nor in a live segment: no search finds it", chunk, pair)
		}},
		{"a segment's norms inconsistent", func(t *testing.T, f *searchFixture) string {
			seg := scalar(t, f, `SELECT id FROM search_segments WHERE state = 'live'`)
			if err := f.db.ExecForTest(ctx, `UPDATE search_segments SET chunks = chunks + 1 WHERE id = $1`, seg); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("segment %d's norms list 30 chunks, and the segment says 31", seg)
		}},
		{"a document's chunks gone", func(t *testing.T, f *searchFixture) string {
			pair := scalar(t, f, `SELECT MIN(cc_pair_id) FROM documents`)
			if err := f.db.ExecForTest(ctx, `DELETE FROM search_chunks WHERE document_id = 'd35'`); err != nil {
				t.Fatal(err)
			}
			return fmt.Sprintf("document \"d35\" of cc-pair %d has no chunks: no search finds it", pair)
		}},
	} {
		t.Run(tt.name, func(t *testing.T) {
			f := indexed(t)
			want := tt.damage(t, f)
			r, err := f.db.CheckIndex(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if r.Found() == 0 || !slices.Contains(r.Problems, want) {
				t.Errorf("the check found %d problems: %q; want %q", r.Found(), r.Problems, want)
			}
		})
	}
}

// BenchmarkCheckIndex checks the index of 20,000 documents of 20 to 60
// words (one chunk each), settled into segments: the time of quarry
// check's index check, which reads every chunk, pending row, norm and
// block once.
func BenchmarkCheckIndex(b *testing.B) {
	db := storetest.Open(b)
	f := newSearchFixture(b, db)
	for start := 0; start < 20_000; start += 1000 {
		ids := make([]int, 1000)
		for i := range ids {
			ids[i] = start + i
		}
		f.ingest(b, 1, ids...)
	}
	if err := db.SettleIndex(ctx); err != nil {
		b.Fatal(err)
	}
	for b.Loop() {
		r, err := db.CheckIndex(ctx)
		if err != nil || r.Found() != 0 || r.Documents != 20_000 {
			b.Fatalf("%+v, %v", r, err)
		}
	}
}
