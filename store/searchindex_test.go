package store_test

import (
	"encoding/json"
	"fmt"
	"math"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

// searchFixture is a database with a public pair and an admin to write
// and search it.
type searchFixture struct {
	db    *store.DB
	admin *quarry.Caller
	pair  int64
}

func newSearchFixture(t testing.TB, db *store.DB) *searchFixture {
	t.Helper()
	name := "admin"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "c", Source: "web", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
	if err != nil {
		t.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		t.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "p", AccessType: quarry.AccessPublic, Groups: []int64{}})
	if err != nil {
		t.Fatal(err)
	}
	return &searchFixture{db, admin, pair}
}

// ingest writes documents ids (each once per version) with words drawn
// from a small vocabulary, reproducibly.
func (f *searchFixture) ingest(t testing.TB, version int, ids ...int) {
	t.Helper()
	var docs []quarry.Document
	for _, id := range ids {
		r := rand.New(rand.NewPCG(uint64(id), uint64(version)))
		words := make([]string, 20+r.IntN(40))
		for i := range words {
			words[i] = searchWords[min(r.IntN(len(searchWords)), r.IntN(len(searchWords)))] // Some words are frequent.
		}
		docs = append(docs, quarry.Document{ID: fmt.Sprint("d", id), SemanticIdentifier: searchWords[r.IntN(len(searchWords))],
			Source: "web", Sections: []quarry.Section{{Text: strings.Join(words, " ")}}, Metadata: map[string]any{}})
	}
	if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, docs); err != nil {
		t.Fatal(err)
	}
}

var searchWords = strings.Fields(`granite basalt quartz feldspar mica shale slate marble gneiss schist
	obsidian pumice chalk flint jasper agate onyx opal garnet beryl topaz zircon`)

// searchQueries are the searches whose results the merges must not move:
// words, a phrase, a prefix.
var searchQueries = []string{"granite", "basalt quartz", "zircon onyx opal", `"granite basalt"`, "gar", "slate mic"}

// results returns every query's hits as "document score" lines.
func (f *searchFixture) results(t *testing.T) []string {
	t.Helper()
	var out []string
	for _, q := range searchQueries {
		hits, err := f.db.Search(ctx, f.admin, index.ParseQuery(q), quarry.SearchFilters{}, 20)
		if err != nil {
			t.Fatal(err)
		}
		line := q + ":"
		for _, h := range hits {
			line += fmt.Sprintf(" %s %.9f", h.DocumentID, h.Score)
		}
		out = append(out, line)
	}
	return out
}

// count runs a query of one number.
func (f *searchFixture) count(t *testing.T, query string) int64 {
	t.Helper()
	var n int64
	if err := f.db.QueryRowForTest(ctx, query, &n); err != nil {
		t.Fatal(err)
	}
	return n
}

// TestSearchIndexMerges checks that where a chunk is kept does not change
// what a search finds or how it ranks it: pending, written into segments,
// and segments merged, against the same documents all pending in another
// database. A merge leaves out the chunks written again since, so that
// the statistics are the live chunks' again; so does ExpungeIndex, for a
// segment a quarter of whose chunks are gone.
func TestSearchIndexMerges(t *testing.T) {
	merged := newSearchFixture(t, storetest.Open(t))
	pending := newSearchFixture(t, storetest.Open(t))
	same := func(step string) {
		t.Helper()
		got, want := merged.results(t), pending.results(t)
		for i := range want {
			if got[i] != want[i] {
				t.Errorf("%s: %s\nwant %s", step, got[i], want[i])
			}
		}
	}
	both := func(version int, ids ...int) {
		t.Helper()
		merged.ingest(t, version, ids...)
		pending.ingest(t, version, ids...)
	}
	batch := func(i int) []int {
		ids := make([]int, 12)
		for j := range ids {
			ids[j] = i*12 + j
		}
		return ids
	}
	for i := range 9 {
		both(0, batch(i)...)
		if did, err := merged.db.MergeIndex(ctx); err != nil || !did {
			t.Fatalf("batch %d: MergeIndex: %v, %v", i, did, err)
		}
		same(fmt.Sprint("segment ", i+1))
	}
	if n := merged.count(t, `SELECT COUNT(*) FROM search_segments`); n != 9 {
		t.Fatalf("%d segments, want 9 (a segment per batch, none merged yet)", n)
	}
	if n := pending.count(t, `SELECT COUNT(*) FROM search_pending`); n != 9*12 {
		t.Fatalf("%d pending chunks, want %d", n, 9*12)
	}

	// Twelve documents written again: their old chunks stay in their
	// segments until the next merge, matching no chunk.
	both(1, 0, 1, 2, 13, 14, 15, 40, 41, 60, 61, 100, 101)
	ids := func(f *searchFixture) string {
		hits, err := f.db.Search(ctx, f.admin, index.ParseQuery("granite basalt quartz zircon"), quarry.SearchFilters{}, 200)
		if err != nil {
			t.Fatal(err)
		}
		var out []string
		for _, h := range hits {
			out = append(out, h.DocumentID)
		}
		return strings.Join(out, " ")
	}
	if got, want := ids(merged), ids(pending); got != want {
		// The scores differ until the merge (the old chunks still count in
		// the statistics), but every document is found once.
		gotSet, wantSet := strings.Fields(got), strings.Fields(want)
		if len(gotSet) != len(wantSet) {
			t.Errorf("after writing again: %d documents found, want %d", len(gotSet), len(wantSet))
		}
	}
	if did, err := merged.db.MergeIndex(ctx); err != nil || !did {
		t.Fatalf("the tenth segment: %v, %v", did, err)
	}
	if n := merged.count(t, `SELECT COUNT(*) FROM search_segments`); n != 1 {
		t.Errorf("%d segments, want the ten merged into 1", n)
	}
	if n := merged.count(t, `SELECT COUNT(*) FROM search_blocks WHERE segment_id NOT IN (SELECT id FROM search_segments)`); n != 0 {
		t.Errorf("%d blocks of the merged segments left, want none", n)
	}
	if n, live := merged.count(t, `SELECT SUM(chunks) FROM search_segments`), merged.count(t, `SELECT COUNT(*) FROM search_chunks`); n != live {
		t.Errorf("the merged segment holds %d chunks, want the %d live ones", n, live)
	}
	same("merged")
	if did, err := merged.db.MergeIndex(ctx); err != nil || did {
		t.Errorf("nothing left to do: %v, %v", did, err)
	}

	// A segment of which a quarter of the chunks are gone is rewritten
	// alone (no tier would merge it again once it is at the cap).
	if did, err := merged.db.ExpungeIndex(ctx); err != nil || did {
		t.Errorf("nothing to expunge yet: %v, %v", did, err)
	}
	rewritten := make([]int, 30)
	for i := range rewritten {
		rewritten[i] = i * 3
	}
	both(2, rewritten...)
	if did, err := merged.db.MergeIndex(ctx); err != nil || !did {
		t.Fatalf("the rewritten documents' segment: %v, %v", did, err)
	}
	if did, err := merged.db.ExpungeIndex(ctx); err != nil || !did {
		t.Fatalf("expunge: %v, %v", did, err)
	}
	if n, live := merged.count(t, `SELECT SUM(chunks) FROM search_segments WHERE state = 'live'`),
		merged.count(t, `SELECT COUNT(*) FROM search_chunks`); n != live {
		t.Errorf("after the expunge the segments hold %d chunks, want the %d live ones", n, live)
	}
	same("expunged")
}

// TestSearchIndexUpkeepAtOnce runs the index's upkeep from several
// servers (handles of one database) while documents are written: every
// chunk ends in exactly one segment.
func TestSearchIndexUpkeepAtOnce(t *testing.T) {
	db := storetest.Open(t)
	f := newSearchFixture(t, db)
	replicas := []*store.DB{db, storetest.OpenURL(t, storetest.URL(t), storetest.Key(t))}
	if !strings.HasPrefix(storetest.URL(t), "postgres") {
		replicas = replicas[:1] // One process's handle per SQLite file in a test.
	}
	var wg sync.WaitGroup
	done := make(chan struct{})
	errs := make(chan error, 2*len(replicas))
	for _, r := range replicas {
		for range 2 {
			wg.Go(func() {
				for {
					if _, err := r.MergeIndex(ctx); err != nil {
						errs <- err
						return
					}
					select {
					case <-done:
						return
					default:
					}
				}
			})
		}
	}
	for i := range 40 {
		ids := make([]int, 30)
		for j := range ids {
			ids[j] = i*30 + j
		}
		f.ingest(t, 0, ids...)
	}
	close(done)
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("MergeIndex: %v", err)
	}
	if err := db.SettleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	inSegments := f.count(t, `SELECT COALESCE(SUM(chunks), 0) FROM search_segments WHERE state = 'live'`)
	if chunks := f.count(t, `SELECT COUNT(*) FROM search_chunks`); inSegments != chunks || chunks != 1200 {
		t.Errorf("%d chunks in segments, %d written, want 1200 each", inSegments, chunks)
	}
	if n := f.count(t, `SELECT COUNT(*) FROM search_pending`); n != 0 {
		t.Errorf("%d chunks still pending", n)
	}
	// Each chunk is one document here: the documents that hold a word are
	// its postings, once each.
	hits, err := db.Search(ctx, f.admin, index.ParseQuery("granite"), quarry.SearchFilters{}, 2000)
	if err != nil {
		t.Fatal(err)
	}
	df := f.count(t, `SELECT SUM(df) FROM search_blocks WHERE term = 'granit'`)
	if int64(len(hits)) != df || df == 0 {
		t.Errorf("granite: %d documents found, %d postings", len(hits), df)
	}
	for i := 1; i < len(hits); i++ {
		if hits[i].Score > hits[i-1].Score || math.IsNaN(hits[i].Score) {
			t.Fatalf("out of order at %d: %v after %v", i, hits[i].Score, hits[i-1].Score)
		}
	}
}

// TestSearchPhraseAmongManyTerms checks that a phrase's words are required
// wherever they sort among the query's terms: past the 64th of them, once
// a prefix has added its terms (a mask by position once lost them).
func TestSearchPhraseAmongManyTerms(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	const letters = "bcdfgklmnp" // No English suffix ends in these: each word is its own term.
	word := func(prefix string, i int) string { return prefix + string(letters[i/10]) + string(letters[i%10]) }
	var many, prefixed []string
	for i := range 60 {
		many = append(many, word("zz", i))
	}
	for i := range 32 {
		prefixed = append(prefixed, word("abq", i))
	}
	text := "zzzbk zzzcd " + strings.Join(many, " ") + " " + strings.Join(prefixed, " ")
	if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, []quarry.Document{{ID: "many", SemanticIdentifier: "Many",
		Source: "web", Sections: []quarry.Section{{Text: text}}, Metadata: map[string]any{}}}); err != nil {
		t.Fatal(err)
	}
	for _, q := range []string{`"zzzbk zzzcd" ` + strings.Join(many, " "), `"zzzbk zzzcd" ` + strings.Join(many, " ") + " ab"} {
		hits, err := f.db.Search(ctx, f.admin, index.ParseQuery(q), quarry.SearchFilters{}, 10)
		if err != nil || len(hits) != 1 {
			t.Errorf("%d hits (%v) for %.40q…, want the document", len(hits), err, q)
		}
	}
}

// TestSearchKeepsBlocks checks that searches read a live segment's blocks
// from the database once: the same searches again run a statement fewer
// for each read of blocks, and find the same.
func TestSearchKeepsBlocks(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	ids := make([]int, 24)
	for i := range ids {
		ids[i] = i
	}
	f.ingest(t, 0, ids...)
	if did, err := f.db.MergeIndex(ctx); err != nil || !did {
		t.Fatalf("MergeIndex: %v, %v", did, err)
	}
	runs := make([][]string, 3)
	statements := make([]int64, 3)
	for i := range runs {
		before := f.db.Statements()
		runs[i] = f.results(t)
		statements[i] = f.db.Statements() - before
	}
	for i := 1; i < len(runs); i++ {
		if !slices.Equal(runs[i], runs[0]) {
			t.Errorf("run %d found\n%q\nthe first\n%q", i+1, runs[i], runs[0])
		}
	}
	if saved := statements[0] - statements[1]; saved < int64(len(searchQueries)) || statements[2] != statements[1] {
		t.Errorf("statements of three runs of %d searches: %v; want at least one fewer a search from the second on, then the same",
			len(searchQueries), statements)
	}
	if s := f.db.SearchCacheStats(); s.Entries == 0 || s.Hits == 0 || s.Bytes > s.MaxBytes {
		t.Errorf("cache: %+v", s)
	}
}

// TestSearchAnalysedBeforeWriting checks the documents analysed before the
// transaction that writes them (analyseDocuments): a document the pair
// held unchanged then, and changed since, is analysed when written, and so
// is one the pair did not hold; what each search finds is what was written
// last.
func TestSearchAnalysedBeforeWriting(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	doc := func(id, text string) quarry.Document {
		return quarry.Document{ID: id, SemanticIdentifier: id, Source: "web", Sections: []quarry.Section{{Text: text}}, Metadata: map[string]any{}}
	}
	if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, []quarry.Document{doc("held", "granite")}); err != nil {
		t.Fatal(err)
	}
	// "held" is unchanged when analysed, and changed (to basalt) before it
	// is written again as granite; "new" is written between too. "twice"
	// is held as obsidian, and comes twice in the batch: as pumice (it
	// is analysed), then as obsidian again (it was not, and is written).
	if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, []quarry.Document{doc("twice", "obsidian")}); err != nil {
		t.Fatal(err)
	}
	batch := []quarry.Document{doc("held", "granite"), doc("new", "quartz"), doc("twice", "pumice"), doc("twice", "obsidian")}
	err := f.db.IngestBatchAround(ctx, f.pair, batch, func() {
		if _, err := f.db.IngestBatch(ctx, f.admin, &f.pair, []quarry.Document{doc("held", "basalt"), doc("new", "zircon")}); err != nil {
			t.Fatal(err)
		}
	})
	if err != nil {
		t.Fatal(err)
	}
	if err := f.db.SettleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	for query, want := range map[string]string{"granite": "held", "basalt": "", "quartz": "new", "zircon": "", "obsidian": "twice", "pumice": ""} {
		hits, err := f.db.Search(ctx, f.admin, index.ParseQuery(query), quarry.SearchFilters{}, 10)
		if err != nil {
			t.Fatal(err)
		}
		var got []string
		for _, h := range hits {
			got = append(got, h.DocumentID)
		}
		if strings.Join(got, " ") != want {
			t.Errorf("%s finds %q, want %q", query, got, want)
		}
	}
}

// TestSettleIndexWaitsForTheLock checks that SettleIndex, while another
// server's upkeep holds the index's lock, waits for it rather than return
// with chunks pending. It tells only on PostgreSQL: on SQLite the lock is
// the one writer, which SettleIndex's flush waits for all the same.
func TestSettleIndexWaitsForTheLock(t *testing.T) {
	f := newSearchFixture(t, storetest.Open(t))
	f.ingest(t, 0, 1, 2, 3)
	release, err := f.db.HoldIndexLockForTest(ctx)
	if err != nil {
		t.Fatal(err)
	}
	time.AfterFunc(200*time.Millisecond, release)
	if err := f.db.SettleIndex(ctx); err != nil {
		t.Fatal(err)
	}
	if n := f.count(t, `SELECT COUNT(*) FROM search_pending`); n != 0 {
		t.Errorf("%d chunks pending after SettleIndex, want none", n)
	}
}
