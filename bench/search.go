package bench

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/corpus"
	"github.com/quarryhq/quarry/store"
)

// -op search: issue 34's speed targets. A reproducible corpus (package
// corpus: -search-docs documents of about 2 KB, one chunk each) is loaded
// through the store, as a worker's batches land (store.DB.IngestBatch, in
// batches of one pair, pair after pair), into 60 pairs: 50 private ones,
// each shared with one of 50 groups, and 10 public ones, all in one public
// document set. Then -clients clients search through HTTP (POST
// /search/send-search-message, not streamed) for -duration as a basic
// person in 3 of the 50 groups (who sees 13 of the 60 pairs), beside the
// floor; with -document-set, each search is narrowed to the set
// (filters.document_set, issue 42): it finds what it finds without, so
// the two runs' latencies differ by the filter's own cost. The report gives the load's
// chunks/s, the searches' latencies, how many found something, the index's
// size on disk and the process's memory. A database given with -db is
// kept, and a later run on it finds the corpus loaded and only searches;
// if the load was stopped (Ctrl-C, a kill, the machine's restart), the
// later run resumes it at the first batch not written (setUpSearch).

// Search is the -op of searches over a loaded corpus.
const Search = "search"

// MaxSearchDocs bounds -search-docs.
const MaxSearchDocs = 10_000_000

// The corpus's shape, and the targets of issue 34.
const (
	searchGroups       = 50   // Private pairs, each shared with a group of its own.
	searchPublic       = 10   // Public pairs.
	searchPersonGroups = 3    // The person is a member of the first 3 groups.
	searchBatch        = 1000 // Documents of a batch, at most.
	searchQueries      = 1000 // Queries the clients draw from.
	searchNumHits      = 30   // num_hits of each search: Onyx's default.
	searchSeed         = 34   // Of the documents; the queries' is searchSeed+1.

	targetSearchP50MS = 20.0
	targetSearchP99MS = 100.0
	targetChunksPerS  = 1000.0
)

// Names of what the corpus's run makes; the person's key marks a database
// that holds the corpus.
const (
	searchNames     = "bench-search-"
	searchPersonKey = "bench search person"
	searchAdminKey  = "bench search admin"
	searchPath      = "/search/send-search-message"
	// searchSet is the corpus's document set: every pair of it, public.
	searchSet = "bench search set"
)

var searchSeries = series{name: Search, route: route{"POST", searchPath}, results: true}

// SearchReport is what -op search measured beside the latencies (which
// are the report's Results).
type SearchReport struct {
	Corpus  SearchCorpus  `json:"corpus"`
	Load    SearchLoad    `json:"load"`
	Queries SearchQueries `json:"queries"`
	Index   SearchIndex   `json:"index"`
	Memory  SearchMemory  `json:"memory"`
	// Peer is the Lucene peer's figures (-peer), or nil.
	Peer *SearchPeer `json:"peer,omitempty"`
	// Missed names the targets missed, with the figures.
	Missed []string `json:"missed"`
}

// SearchCorpus is the corpus searched.
type SearchCorpus struct {
	// Documents is -search-docs: documents of one chunk each.
	Documents    int `json:"documents"`
	Pairs        int `json:"pairs"`
	PublicPairs  int `json:"public_pairs"`
	Groups       int `json:"groups"`
	PersonGroups int `json:"person_groups"`
	// VisiblePairs are the pairs the person sees: the public ones and
	// those of their groups.
	VisiblePairs int `json:"visible_pairs"`
	// Reused is true when the database held the corpus already: nothing
	// was loaded (a load resumed is not reused: SearchLoad.ResumedFrom).
	Reused bool `json:"reused"`
}

// SearchLoad is the corpus's load; zero when the corpus was reused.
type SearchLoad struct {
	// Documents are those this run loaded: the whole corpus, or the
	// documents from ResumedFrom on.
	Documents int `json:"documents"`
	BatchSize int `json:"batch_size"`
	// ResumedFrom is how many documents (whole batches) the database held
	// when this run resumed a load a run before had begun and was stopped;
	// 0 when this run loaded the corpus from its start.
	ResumedFrom int `json:"resumed_from"`
	// Seconds runs from the first batch this run wrote to the return of
	// store.DB.SettleIndex, of which SettleSeconds; ChunksPerS is
	// Documents over Seconds.
	Seconds          float64 `json:"seconds"`
	SettleSeconds    float64 `json:"settle_seconds"`
	ChunksPerS       float64 `json:"chunks_per_second"`
	TargetChunksPerS float64 `json:"target_chunks_per_second"`
}

// SearchQueries are the searches' requests, and what their answers held.
type SearchQueries struct {
	Distinct int `json:"distinct"` // Queries the clients draw from.
	NumHits  int `json:"num_hits"`
	// DocumentSet is the set the searches were narrowed to (-document-set),
	// or "".
	DocumentSet string `json:"document_set"`
	// Answered and WithResults count the server's answers during its
	// measured load, and those with at least one result.
	Answered         int64   `json:"answered"`
	WithResults      int64   `json:"with_results"`
	WithResultsShare float64 `json:"with_results_share"`
	TargetP50MS      float64 `json:"target_p50_ms"`
	TargetP99MS      float64 `json:"target_p99_ms"`
}

// SearchIndex is the index's size on disk (store.DB.SearchIndexSize).
type SearchIndex struct {
	TablesBytes   map[string]int64 `json:"tables_bytes"`
	IndexBytes    int64            `json:"index_bytes"`
	DatabaseBytes int64            `json:"database_bytes"`
}

// SearchMemory is the bench process's memory (the server, in process).
type SearchMemory struct {
	// PeakRSSAfterLoadBytes is VmHWM once the corpus is loaded (or
	// found): the peak since the start. The peak during the searches is
	// the report's server.peak_rss_bytes.
	PeakRSSAfterLoadBytes *int64 `json:"peak_rss_after_load_bytes"`
	// HeapAfterLoadBytes and HeapAfterSearchesBytes are the Go heap in
	// use (HeapInuse) after a collection, once the corpus is loaded and
	// once the server's searches have ended.
	HeapAfterLoadBytes     uint64 `json:"heap_inuse_after_load_bytes"`
	HeapAfterSearchesBytes uint64 `json:"heap_inuse_after_searches_bytes"`
	// BlockCache is what the server keeps of the index's blocks in memory
	// once the searches have ended, within its bound, and how often the
	// searches found a block there (store.DB.SearchCacheStats); nil
	// when the server is not in process.
	BlockCache *store.SearchCacheStats `json:"block_cache"`
}

// searchCorpus is the corpus of a run: its load, and the person's key.
type searchCorpus struct {
	docs        int
	reused      bool
	load        SearchLoad
	personToken string
	set         string // The set the searches are narrowed to (-document-set), or "".
	stopAfter   int    // Batches after which this run's load stops (Options.stopLoadAfter); 0 for none.
}

// searchWork is what the clients of -op search send.
type searchWork struct {
	token  string   // The person's.
	bodies [][]byte // One request body a query.
}

// batchSize returns the documents of a batch for a corpus of docs: 1,000,
// or fewer so that every pair gets some.
func batchSize(docs int) int {
	pairs := searchGroups + searchPublic
	return max(1, min(searchBatch, (docs+pairs-1)/pairs))
}

// searchBatches returns how many batches the load of a corpus of docs
// writes.
func searchBatches(docs int) int {
	bs := batchSize(docs)
	return (docs + bs - 1) / bs
}

// pairDocs returns how many documents of a corpus of docs each pair holds,
// by the pair's place (batch b goes to pair b mod 60).
func pairDocs(docs int) []int {
	out := make([]int, searchGroups+searchPublic)
	bs := batchSize(docs)
	for b := 0; b*bs < docs; b++ {
		out[b%len(out)] += min(bs, docs-b*bs)
	}
	return out
}

// loadedBatches returns k when held, the documents each pair holds by its
// place, is exactly what the first k batches of the load of a corpus of
// docs give (k is searchBatches(docs) when the load is complete), and
// false when it is no such prefix: a corpus of another -search-docs,
// whose batches are of another size, or pairs written otherwise.
func loadedBatches(docs int, held []int) (int, bool) {
	bs := batchSize(docs)
	want := make([]int, searchGroups+searchPublic)
	for b := 0; ; b++ {
		if slices.Equal(held, want) {
			return b, true
		}
		if b*bs >= docs {
			return 0, false
		}
		want[b%len(want)] += min(bs, docs-b*bs)
	}
}

// pairName returns the name of the pair of place i (0 to 59):
// bench-search-01 to -60.
func pairName(i int) string { return fmt.Sprintf("%s%02d", searchNames, i+1) }

// personSees reports whether the person sees the pair of place i: the
// private pairs of their groups (the first searchPersonGroups) and the
// public ones (the last searchPublic), as setUpSearch makes them.
func personSees(i int) bool { return i < searchPersonGroups || i >= searchGroups }

// corpusBatch is a batch of the corpus's load, and the place of its pair.
type corpusBatch struct {
	place int
	docs  []quarry.Document
}

// corpusBatches generates the corpus of docs documents (ahead, in a
// goroutine of its own) in the batches of its load, from batch from on:
// batch b goes to the pair of place b mod 60. The generator is
// sequential, so the documents of the batches before from are generated
// too, and dropped. The channel closes after the last, or when ctx is
// done.
func corpusBatches(ctx context.Context, docs, from int) <-chan corpusBatch {
	bs := batchSize(docs)
	ch := make(chan corpusBatch, 4)
	go func() {
		defer close(ch)
		gen := corpus.New(searchSeed)
		for i := range min(from*bs, docs) {
			if i%bs == 0 && ctx.Err() != nil {
				return
			}
			gen.Document()
		}
		for b := from; b*bs < docs; b++ {
			bt := corpusBatch{place: b % (searchGroups + searchPublic)}
			for i := b * bs; i < min((b+1)*bs, docs); i++ {
				title, text := gen.Document()
				link := fmt.Sprintf("https://docs.example.com/bench/%07d", i)
				bt.docs = append(bt.docs, quarry.Document{ID: fmt.Sprintf("bench-%07d", i), SemanticIdentifier: title, Source: "ingestion_api",
					Sections: []quarry.Section{{Text: text, Link: &link}}, Metadata: map[string]any{}})
			}
			select {
			case ch <- bt:
			case <-ctx.Done():
				return
			}
		}
	}()
	return ch
}

// searchQueryTexts returns the queries the clients draw from, as typed.
func searchQueryTexts() []string {
	gen := corpus.New(searchSeed + 1)
	out := make([]string, searchQueries)
	for i := range out {
		out[i] = gen.Query()
	}
	return out
}

// holdsSearchCorpus reports whether db is one that -op search set up: the
// person's key is there. It reads nothing else, so that a database of any
// schema version can be asked.
func holdsSearchCorpus(ctx context.Context, db *store.DB) bool {
	keys, err := db.APIKeys(ctx)
	return err == nil && slices.ContainsFunc(keys, func(k *quarry.APIKey) bool { return k.Name != nil && *k.Name == searchPersonKey })
}

// setUpSearch makes an admin's key for the run, and the corpus. When
// reuse (db holds the person's key: holdsSearchCorpus), it finds the
// corpus a run before made (find): whole, it is searched again; stopped
// during its load, with the first k batches written (each batch is one
// transaction), the load resumes at batch k and goes on as a fresh load
// would. Otherwise it makes the groups, the pairs and the person and
// loads the documents. A run stopped before it had made every pair is
// not resumed: find refuses its database, and says to give a fresh one,
// as the set-up takes seconds. It returns the
// admin's key.
func setUpSearch(ctx context.Context, db *store.DB, o *Options, reuse bool, sc *screen) (*searchCorpus, string, error) {
	name := searchAdminKey
	_, adminToken, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		return nil, "", err
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(adminToken))
	if err != nil {
		return nil, "", err
	}
	s := &searchCorpus{docs: o.SearchDocs, stopAfter: o.stopLoadAfter}
	if o.DocumentSet {
		s.set = searchSet
	}
	if reuse {
		pairs, loaded, err := s.find(ctx, db, admin, sc)
		if err != nil {
			return nil, "", err
		}
		if s.reused = loaded == searchBatches(s.docs); s.reused {
			// A run stopped while settling the index leaves merges to do:
			// they are done before the searches (nothing when settled).
			if err := db.SettleIndex(ctx); err != nil {
				return nil, "", fmt.Errorf("settling the index: %w", err)
			}
		} else if err := s.loadCorpus(ctx, db, admin, pairs, loaded, sc); err != nil {
			return nil, "", err
		}
		return s, adminToken, ensureSearchSet(ctx, db, admin)
	}

	sc.line(fmt.Sprintf("making %d groups, %d pairs and the person (in %d groups)", searchGroups, searchGroups+searchPublic, searchPersonGroups))
	name = searchPersonKey
	person, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleBasic)
	if err != nil {
		return nil, "", err
	}
	s.personToken = token
	var pairs []int64
	for i := range searchGroups + searchPublic {
		label := pairName(i)
		access, groups := quarry.AccessPublic, []int64{}
		if i < searchGroups {
			members := []string{}
			if i < searchPersonGroups {
				members = []string{person.UserID}
			}
			g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &label, UserIDs: members, CCPairIDs: []int64{}})
			if err != nil {
				return nil, "", err
			}
			access, groups = quarry.AccessPrivate, []int64{g.ID}
		}
		conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: label, Source: "ingestion_api", InputType: "load_state",
			Config: json.RawMessage(`{}`), AccessType: access, Groups: &groups})
		if err != nil {
			return nil, "", err
		}
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Name: &label, Source: "ingestion_api", CredentialJSON: map[string]any{}, AdminPublic: true})
		if err != nil {
			return nil, "", err
		}
		p, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: label, AccessType: access, Groups: groups})
		if err != nil {
			return nil, "", err
		}
		pairs = append(pairs, p)
	}
	if err := s.loadCorpus(ctx, db, admin, pairs, 0, sc); err != nil {
		return nil, "", err
	}
	return s, adminToken, ensureSearchSet(ctx, db, admin)
}

// ensureSearchSet makes the corpus's document set, every pair of it, unless
// the database holds it (a corpus loaded before document sets has none).
func ensureSearchSet(ctx context.Context, db *store.DB, admin *quarry.Caller) error {
	sets, err := db.DocumentSets(ctx, admin, false)
	if err != nil || slices.ContainsFunc(sets, func(s *quarry.DocumentSet) bool { return s.Name == searchSet }) {
		return err
	}
	briefs, err := db.CCPairBriefs(ctx, admin, "ingestion_api")
	if err != nil {
		return err
	}
	var pairs []int64
	for _, p := range briefs {
		if strings.HasPrefix(p.Name, searchNames) {
			pairs = append(pairs, p.ID)
		}
	}
	_, err = db.CreateDocumentSet(ctx, admin, quarry.DocumentSetInput{Name: searchSet, Description: "Every pair of the corpus",
		PairIDs: pairs, IsPublic: true})
	return err
}

// find checks the corpus a run before made, and regenerates the person's
// key. It returns the pairs' ids by place, and how many batches of the
// load they hold (loadedBatches): searchBatches(s.docs) when the load is
// complete, fewer when it was stopped. Counts that are no such prefix are
// refused, and so is a corpus short of a pair: its run stopped while
// making them.
func (s *searchCorpus) find(ctx context.Context, db *store.DB, admin *quarry.Caller, sc *screen) (pairs []int64, loaded int, err error) {
	sc.line("the database holds a search corpus: checking it")
	keys, err := db.APIKeys(ctx)
	if err != nil {
		return nil, 0, err
	}
	i := slices.IndexFunc(keys, func(k *quarry.APIKey) bool { return k.Name != nil && *k.Name == searchPersonKey })
	if _, s.personToken, err = db.RegenerateAPIKey(ctx, admin, keys[i].ID); err != nil {
		return nil, 0, err
	}
	briefs, err := db.CCPairBriefs(ctx, admin, "ingestion_api")
	if err != nil {
		return nil, 0, err
	}
	byName := map[string]*quarry.CCPairBrief{}
	for _, p := range briefs {
		byName[p.Name] = p
	}
	want := pairDocs(s.docs)
	held := make([]int, len(want))
	var wrong []string
	for i, n := range want {
		label := pairName(i)
		p, ok := byName[label]
		if !ok {
			return nil, 0, fmt.Errorf("-db: the search corpus in it has no pair %s (the run that made it stopped while making the groups and pairs); give a fresh database", label)
		}
		if i == 0 {
			// The server reads the credentials (the status listing): they
			// must open with this run's key.
			if _, err := db.Credential(ctx, admin, p.CredentialID); err != nil {
				return nil, 0, fmt.Errorf("-db: the corpus's secrets do not open with this run's key (give the QUARRY_ENCRYPTION_KEY of the run that loaded it): %w", err)
			}
		}
		_, total, err := db.PairDocumentPage(ctx, admin, p.ID, 0, 1)
		if err != nil {
			return nil, 0, err
		}
		pairs = append(pairs, p.ID)
		held[i] = int(total)
		if int(total) != n {
			wrong = append(wrong, fmt.Sprintf("%s holds %d, not %d", label, total, n))
		}
	}
	loaded, ok := loadedBatches(s.docs, held)
	if !ok {
		sum := 0
		for _, n := range held {
			sum += n
		}
		return nil, 0, fmt.Errorf("-db: it holds a search corpus of %d documents, not the %d of -search-docs %d nor the first batches of its load (%s); give the -search-docs it was loaded with, or a fresh database",
			sum, s.docs, s.docs, strings.Join(wrong[:min(3, len(wrong))], "; "))
	}
	return pairs, loaded, nil
}

// loadCorpus generates the documents (ahead, in a goroutine of its own)
// and writes them in batches of one pair, pair after pair, from batch from
// on (the batches before it were written by a run before), with the
// index's upkeep running beside the writes as in a server
// (store.DB.RunIndexUpkeep), timed from the first batch it writes until
// the index has settled. With s.stopAfter, it stops after writing that
// many batches, as a run killed then would: the index is not settled.
func (s *searchCorpus) loadCorpus(ctx context.Context, db *store.DB, admin *quarry.Caller, pairs []int64, from int, sc *screen) error {
	bs := batchSize(s.docs)
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	ch := corpusBatches(gctx, s.docs, from)

	skipped := min(from*bs, s.docs)
	if skipped > 0 {
		sc.line(fmt.Sprintf("resuming the load at document %d of %d (batch %d of %d, of %d documents): a run before loaded the first %d, which are generated again to reach it",
			skipped, s.docs, from+1, searchBatches(s.docs), bs, skipped))
	} else {
		sc.line(fmt.Sprintf("loading %d documents in batches of %d", s.docs, bs))
	}
	var start, last time.Time
	done, batches := 0, 0
	show := func(final bool) {
		secs := time.Since(start).Seconds()
		rate := float64(done) / secs
		at := skipped + done
		line := fmt.Sprintf("loading: %d/%d documents (%d%%), %.0f chunks/s", at, s.docs, at*100/s.docs, rate)
		if !final && rate > 0 {
			line += fmt.Sprintf(", about %s left", (time.Duration(float64(s.docs-at)/rate) * time.Second).Round(time.Second))
		}
		if sc.out.Terminal {
			sc.inPlace(line, final)
			if final {
				sc.end()
			}
		} else if final || time.Since(last) >= 10*time.Second {
			sc.line(line)
			last = time.Now()
		}
	}
	upkeep, stopUpkeep := context.WithCancel(ctx)
	var upkeepErr error
	var upkeepDone sync.WaitGroup
	upkeepDone.Go(func() {
		db.RunIndexUpkeep(upkeep, time.Second, func(err error) {
			if upkeepErr == nil {
				upkeepErr = err
			}
		})
	})
	defer func() { stopUpkeep(); upkeepDone.Wait() }()
	for bt := range ch {
		if start.IsZero() {
			start, last = time.Now(), time.Now()
		}
		if _, err := db.IngestBatch(ctx, admin, &pairs[bt.place], bt.docs); err != nil {
			return fmt.Errorf("loading the corpus: %w", err)
		}
		done += len(bt.docs)
		show(false)
		if batches++; batches == s.stopAfter {
			return fmt.Errorf("loading the corpus: stopped after %d batches, as asked", batches)
		}
	}
	if err := ctx.Err(); err != nil {
		return err
	}
	show(true)
	stopUpkeep()
	upkeepDone.Wait()
	if upkeepErr != nil {
		return fmt.Errorf("the index's upkeep: %w", upkeepErr)
	}
	sc.line("waiting for the index to settle")
	settle := time.Now()
	if err := db.SettleIndex(ctx); err != nil {
		return fmt.Errorf("settling the index: %w", err)
	}
	end := time.Now()
	s.load = SearchLoad{Documents: done, BatchSize: bs, ResumedFrom: skipped, Seconds: round(end.Sub(start).Seconds()),
		SettleSeconds: round(end.Sub(settle).Seconds()), ChunksPerS: round(float64(done) / end.Sub(start).Seconds()), TargetChunksPerS: targetChunksPerS}
	line := fmt.Sprintf("loaded in %s: %.0f chunks/s", end.Sub(start).Round(time.Millisecond), s.load.ChunksPerS)
	if skipped > 0 {
		line = fmt.Sprintf("loaded documents %d to %d in %s: %.0f chunks/s", skipped, s.docs-1, end.Sub(start).Round(time.Millisecond), s.load.ChunksPerS)
	}
	sc.line(line)
	return nil
}

// prepareSearch draws the queries and sends them, as the person, until
// one finds something: its answer is the floor's.
func prepareSearch(ctx context.Context, w *work, p *preparation) error {
	s := p.sys.search
	w.search = &searchWork{token: s.personToken}
	for _, query := range searchQueryTexts() {
		body := map[string]any{"search_query": query, "num_hits": searchNumHits, "stream": false}
		if s.set != "" {
			body["filters"] = map[string]any{"document_set": []string{s.set}}
		}
		b, err := json.Marshal(body)
		if err != nil {
			return err
		}
		w.search.bodies = append(w.search.bodies, b)
	}
	c := &caller{client: p.caller.client, base: p.caller.base, token: s.personToken}
	for _, body := range w.search.bodies {
		answer, err := c.call(ctx, "POST", searchPath, body)
		if err != nil {
			return err
		}
		if n, err := searchResults(answer); err != nil {
			return fmt.Errorf("bench: the search answered %s", truncate(answer, 300))
		} else if n > 0 {
			w.answers[searchSeries.route] = answer
			return nil
		}
	}
	return errors.New("bench: none of the queries found anything for the person: is the corpus loaded?")
}

// stepSearch sends one of the queries as the person.
func stepSearch(c *client, measure bool) {
	s := c.w.search
	c.do(searchSeries, searchPath, s.bodies[c.rng.IntN(len(s.bodies))], measure, "Authorization", "Bearer "+s.token)
}

// searchResults returns the number of results of an answer of
// POST /search/send-search-message.
func searchResults(answer []byte) (int, error) {
	var v struct {
		SearchDocs []json.RawMessage `json:"search_docs"`
	}
	err := json.Unmarshal(answer, &v)
	return len(v.SearchDocs), err
}

// heapInUse returns the Go heap in use after a collection.
func heapInUse() uint64 {
	runtime.GC()
	var m runtime.MemStats
	runtime.ReadMemStats(&m)
	return m.HeapInuse
}

// startSearchReport starts the report's search part once the corpus is
// there: its shape, its load, the index's size, the memory.
func (r *Report) startSearchReport(ctx context.Context, sys *system) error {
	s := sys.search
	size, err := sys.db.SearchIndexSize(ctx)
	if err != nil {
		return err
	}
	sr := &SearchReport{
		Corpus: SearchCorpus{Documents: s.docs, Pairs: searchGroups + searchPublic, PublicPairs: searchPublic, Groups: searchGroups,
			PersonGroups: searchPersonGroups, VisiblePairs: searchPublic + searchPersonGroups, Reused: s.reused},
		Load: s.load,
		Queries: SearchQueries{Distinct: searchQueries, NumHits: searchNumHits, DocumentSet: s.set, TargetP50MS: targetSearchP50MS,
			TargetP99MS: targetSearchP99MS},
		Index:  SearchIndex{TablesBytes: map[string]int64{}, IndexBytes: size.IndexBytes, DatabaseBytes: size.DatabaseBytes},
		Missed: []string{},
	}
	for _, t := range size.Tables {
		sr.Index.TablesBytes[t.Name] = t.Bytes
	}
	if v, ok := vmHWM(); ok {
		sr.Memory.PeakRSSAfterLoadBytes = &v
	}
	sr.Memory.HeapAfterLoadBytes = heapInUse()
	r.Search = sr
	return nil
}

// endSearchReport ends the report's search part once the server's and the
// floor's loads are done: the answers counted, the targets.
func (r *Report) endSearchReport(server *phase) {
	sr := r.Search
	q := &sr.Queries
	q.Answered, q.WithResults = server.answered.Load(), server.withResults.Load()
	if q.Answered > 0 {
		q.WithResultsShare = round(float64(q.WithResults) / float64(q.Answered))
	}
	if sr.Load.Documents > 0 && sr.Load.ChunksPerS < targetChunksPerS {
		sr.Missed = append(sr.Missed, fmt.Sprintf("indexing: %.0f chunks/s, under %.0f", sr.Load.ChunksPerS, targetChunksPerS))
	}
	for _, res := range r.Results {
		if res.Op != Search {
			continue
		}
		if l := res.Server.LatencyMS; l.P50 > targetSearchP50MS {
			sr.Missed = append(sr.Missed, fmt.Sprintf("search: p50 %s, over %s", ms(l.P50), ms(targetSearchP50MS)))
		}
		if l := res.Server.LatencyMS; l.P99 > targetSearchP99MS {
			sr.Missed = append(sr.Missed, fmt.Sprintf("search: p99 %s, over %s", ms(l.P99), ms(targetSearchP99MS)))
		}
	}
}

// writeSearchText writes -op search's figures beside the latencies.
func (r *Report) writeSearchText(w io.Writer) {
	sr := r.Search
	q := sr.Queries
	fmt.Fprintf(w, "answers   %d of the server's %d had results (%.1f%%); %d queries of 2-3 words, num_hits %d, as a person in %d of %d groups (%d of %d pairs)\n",
		q.WithResults, q.Answered, 100*q.WithResultsShare, q.Distinct, q.NumHits, sr.Corpus.PersonGroups, sr.Corpus.Groups, sr.Corpus.VisiblePairs, sr.Corpus.Pairs)
	if q.DocumentSet != "" {
		fmt.Fprintf(w, "filter    document set %q (every pair of the corpus)\n", q.DocumentSet)
	}
	if l := sr.Load; l.Documents > 0 {
		resumed := ""
		if l.ResumedFrom > 0 {
			resumed = fmt.Sprintf(", resumed at document %d of %d (a run before was stopped),", l.ResumedFrom, sr.Corpus.Documents)
		}
		fmt.Fprintf(w, "load      %d documents%s in %s (batches of %d; settling %s): %.0f chunks/s, target %.0f\n",
			l.Documents, resumed, ms(l.Seconds*1000), l.BatchSize, ms(l.SettleSeconds*1000), l.ChunksPerS, l.TargetChunksPerS)
	} else {
		fmt.Fprintln(w, "load      none: the database held the corpus (reused)")
	}
	if p := sr.Peer; p != nil {
		load := "reused"
		if !p.Reused {
			load = "loaded in " + ms(p.LoadSeconds*1000)
		}
		share := 0.0
		if p.Answered > 0 {
			share = float64(p.WithResults) / float64(p.Answered)
		}
		fmt.Fprintf(w, "lucene    Lucene %s at %s, %d documents (%s); %d rounds of %s each, alternated with Quarry's, after %d queries each unmeasured; %d of its %d answers had results (%.1f%%)\n",
			p.Lucene, p.URL, p.Documents, load, p.Rounds, ms(p.RoundSeconds*1000), p.Warmup, p.WithResults, p.Answered, 100*share)
	}
	var tables []string
	for _, name := range slices.Sorted(maps.Keys(sr.Index.TablesBytes)) {
		tables = append(tables, name+" "+formatBytes(sr.Index.TablesBytes[name]))
	}
	fmt.Fprintf(w, "index     %s on disk, of a %s database (%s)\n", formatBytes(sr.Index.IndexBytes), formatBytes(sr.Index.DatabaseBytes), strings.Join(tables, ", "))
	m := sr.Memory
	peak := "unknown"
	if m.PeakRSSAfterLoadBytes != nil {
		peak = formatBytes(*m.PeakRSSAfterLoadBytes)
	}
	fmt.Fprintf(w, "memory    peak RSS %s after the load (since the start); Go heap in use %s after the load, %s after the searches\n",
		peak, formatBytes(int64(m.HeapAfterLoadBytes)), formatBytes(int64(m.HeapAfterSearchesBytes)))
	if c := m.BlockCache; c != nil {
		share := 0.0
		if c.Hits+c.Misses > 0 {
			share = 100 * float64(c.Hits) / float64(c.Hits+c.Misses)
		}
		fmt.Fprintf(w, "cache     %s of blocks kept (bound %s, %d entries), %.1f%% of the blocks asked for found there\n",
			formatBytes(c.Bytes), formatBytes(c.MaxBytes), c.Entries, share)
	}
	if len(sr.Missed) == 0 {
		fmt.Fprintf(w, "targets   met (p50 ≤ %s, p99 ≤ %s, ≥ %.0f chunks/s)\n", ms(q.TargetP50MS), ms(q.TargetP99MS), targetChunksPerS)
		return
	}
	for _, m := range sr.Missed {
		fmt.Fprintf(w, "missed    %s\n", m)
	}
}
