package bench

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"
)

// -op search -peer URL: Lucene beside Quarry (issue 45). The peer is
// scripts/speed/LuceneSearch.java, Lucene behind a minimal HTTP front; the
// bench makes it hold the same corpus (the same generator, the same pair
// of each batch, the pairs by name), then times it with the same queries,
// the same clients and the same time as Quarry, in rounds alternated with
// Quarry's, the person's 13 pairs its rights filter. The report gives
// Lucene's figures and Quarry's divided by them.

// peerRounds is the number of rounds of each system; each lasts
// -duration / peerRounds, so that each system is loaded for -duration in
// all.
const peerRounds = 3

// peerWarmup is the shortest warm-up before the first round (-duration
// when that is shorter), after every query was sent once to each system:
// time for the JVM to compile what it runs most (200 queries were not
// enough at 2,000 documents: the first round ran at a third of the speed
// of the next), and for both systems to read their index's busiest parts.
const peerWarmup = 10 * time.Second

// Paths of the peer's endpoints (LuceneSearch.java's header).
const (
	peerStatsPath  = "/stats"
	peerClearPath  = "/clear"
	peerLoadPath   = "/load"
	peerCommitPath = "/commit"
	peerSearchPath = "/search"
)

var (
	peerSeries = series{name: "lucene", route: route{"POST", peerSearchPath}, results: true}
	// peerOp is the peer's search: not one of ops (it is no -op of its
	// own), the operation of the peer's rounds.
	peerOp = &op{name: "lucene", series: []series{peerSeries}, step: stepPeer}
)

// SearchPeer is what -op search measured of its Lucene peer (-peer).
type SearchPeer struct {
	URL string `json:"url"`
	// Lucene is the version of Lucene the peer runs.
	Lucene    string `json:"lucene"`
	Documents int    `json:"documents"`
	// Reused is true when the peer held the corpus already: nothing was
	// loaded into it.
	Reused bool `json:"reused"`
	// LoadSeconds runs from the first batch to the return of the commit;
	// 0 when reused.
	LoadSeconds float64 `json:"load_seconds"`
	// Rounds is the number of rounds of each system, alternated (Quarry
	// first), of RoundSeconds each; the report's results add up
	// Quarry's.
	Rounds       int     `json:"rounds"`
	RoundSeconds float64 `json:"round_seconds"`
	// Warmup is the number of queries each system answered, unmeasured,
	// before the first round (peerWarmup).
	Warmup int `json:"warmup_queries"`
	// ResponseBytes is the size of the peer's answer to the first query
	// of the warm-up that found something (Quarry's is the result's).
	ResponseBytes int     `json:"response_bytes"`
	Peer          Numbers `json:"peer"`
	// Answered and WithResults count the peer's answers during its
	// rounds, and those with at least one result.
	Answered    int64 `json:"answered"`
	WithResults int64 `json:"with_results"`
	// Errors are the peer's failed requests during its rounds.
	Errors ErrorCounts `json:"errors"`
	// QuarryOverPeer divides Quarry's numbers by the peer's: throughput
	// below 1 and latencies above 1 are where Lucene is faster.
	QuarryOverPeer Ratios `json:"quarry_over_peer"`
}

// peerStats is the peer's answer to GET /stats.
type peerStats struct {
	Documents int    `json:"documents"`
	Corpus    string `json:"corpus"`
	Lucene    string `json:"lucene"`
}

// peerDoc is a document as the peer's /load takes it.
type peerDoc struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Text  string `json:"text"`
	Pair  string `json:"pair"`
}

// lucenePeer is the peer of a run: where it is, its requests, and what
// was found of it.
type lucenePeer struct {
	c      *caller
	work   *work // The peer's rounds' requests.
	report SearchPeer
}

// corpusTag names the corpus of docs documents as the peer's commit keeps
// it: a peer that holds another (or a load never committed) is loaded
// again.
func corpusTag(docs int) string {
	return fmt.Sprintf("quarry bench -op search: corpus seed %d, %d documents, batches of %d over %d pairs",
		searchSeed, docs, batchSize(docs), searchGroups+searchPublic)
}

// setUpPeer makes the peer hold the corpus of o.SearchDocs, loading it
// unless it does, and readies its requests: the queries of w, with the
// person's pairs.
func setUpPeer(ctx context.Context, o *Options, sc *screen) (*lucenePeer, error) {
	p := &lucenePeer{c: &caller{client: setupClient(), base: strings.TrimRight(o.Peer, "/")}}
	p.report = SearchPeer{URL: p.c.base, Rounds: peerRounds, RoundSeconds: round((o.Duration / peerRounds).Seconds())}
	var st peerStats
	if err := p.c.getJSON(ctx, peerStatsPath, &st); err != nil {
		return nil, fmt.Errorf("-peer: %w", err)
	}
	tag := corpusTag(o.SearchDocs)
	if p.report.Reused = st.Documents == o.SearchDocs && st.Corpus == tag; p.report.Reused {
		sc.line(fmt.Sprintf("the peer (Lucene %s) holds the corpus", st.Lucene))
	} else {
		sc.line(fmt.Sprintf("the peer (Lucene %s) holds %d documents (%q): loading the corpus into it", st.Lucene, st.Documents, st.Corpus))
		var err error
		if st, err = p.load(ctx, o.SearchDocs, tag, sc); err != nil {
			return nil, fmt.Errorf("-peer: loading the corpus: %w", err)
		}
		if st.Documents != o.SearchDocs || st.Corpus != tag {
			return nil, fmt.Errorf("-peer: after the load it holds %d documents (%q), not %d", st.Documents, st.Corpus, o.SearchDocs)
		}
	}
	p.report.Lucene, p.report.Documents = st.Lucene, st.Documents

	var pairs []string
	for i := range searchGroups + searchPublic {
		if personSees(i) {
			pairs = append(pairs, pairName(i))
		}
	}
	p.work = &work{mix: []weight{{peerOp, 1}}, total: 1, search: &searchWork{}}
	for _, q := range searchQueryTexts() {
		p.work.search.bodies = append(p.work.search.bodies, mustJSON(map[string]any{"query": q, "pairs": pairs, "num_hits": searchNumHits}))
	}
	return p, nil
}

// load replaces what the peer holds with the corpus of docs documents,
// in the batches of Quarry's load, each document with its pair's name,
// and commits it tagged.
func (p *lucenePeer) load(ctx context.Context, docs int, tag string, sc *screen) (peerStats, error) {
	var st peerStats
	start := time.Now()
	if _, err := p.c.call(ctx, "POST", peerClearPath, nil); err != nil {
		return st, err
	}
	gctx, cancel := context.WithCancel(ctx)
	defer cancel()
	done := 0
	for bt := range corpusBatches(gctx, docs, 0) {
		batch := make([]peerDoc, len(bt.docs))
		for i, d := range bt.docs {
			batch[i] = peerDoc{ID: d.ID, Title: d.SemanticIdentifier, Text: d.Sections[0].Text, Pair: pairName(bt.place)}
		}
		if _, err := p.c.call(ctx, "POST", peerLoadPath, mustJSON(map[string]any{"documents": batch})); err != nil {
			return st, err
		}
		done += len(batch)
		sc.fraction("loading the peer", done, docs)
	}
	if err := ctx.Err(); err != nil {
		return st, err
	}
	if err := p.c.decode(ctx, "POST", peerCommitPath, mustJSON(map[string]string{"corpus": tag}), &st); err != nil {
		return st, err
	}
	p.report.LoadSeconds = round(time.Since(start).Seconds())
	sc.line(fmt.Sprintf("the peer loaded %d documents in %s", st.Documents, time.Since(start).Round(time.Millisecond)))
	return st, nil
}

// warmUp sends the queries, in order, query by query to Quarry (as the
// person) and then to the peer, unmeasured: each query once, then on
// until peerWarmup or d if shorter has passed, so that what both systems
// keep between searches (Quarry's blocks in memory, the JVM's compiled
// code, both indexes' pages in the system's cache) holds what the rounds
// read, as in a server that has been serving. It fails when none of the
// peer's answers had results.
func (p *lucenePeer) warmUp(ctx context.Context, w *work, base string, d time.Duration) error {
	quarry := &caller{client: p.c.client, base: base, token: w.search.token}
	deadline := time.Now().Add(min(peerWarmup, d))
	found := false
	n := 0
	for ; n < len(w.search.bodies) || time.Now().Before(deadline); n++ {
		i := n % len(w.search.bodies)
		if _, err := quarry.call(ctx, "POST", searchPath, w.search.bodies[i]); err != nil {
			return err
		}
		answer, err := p.c.call(ctx, "POST", peerSearchPath, p.work.search.bodies[i])
		if err != nil {
			return fmt.Errorf("-peer: %w", err)
		}
		if k, err := searchResults(answer); err != nil {
			return fmt.Errorf("-peer: the search answered %s", truncate(answer, 300))
		} else if k > 0 && !found {
			p.report.ResponseBytes, found = len(answer), true
		}
	}
	p.report.Warmup = n
	if !found {
		return errors.New("-peer: none of the queries found anything in the peer")
	}
	return nil
}

// stepPeer sends one of the queries to the peer.
func stepPeer(c *client, measure bool) {
	s := c.w.search
	c.do(peerSeries, peerSearchPath, s.bodies[c.rng.IntN(len(s.bodies))], measure)
}

// rounds loads Quarry (w at base) and the peer in alternated rounds,
// Quarry first, and returns each one's phase, its rounds added up.
func (p *lucenePeer) rounds(ctx context.Context, w *work, base string, o *Options, sc *screen) (quarry, peer *phase, err error) {
	ro := *o
	ro.Duration = o.Duration / peerRounds
	for i := range peerRounds {
		q, err := w.load(ctx, fmt.Sprintf("server (round %d of %d)", i+1, peerRounds), base, &ro, sc)
		if err != nil {
			return nil, nil, err
		}
		l, err := p.work.load(ctx, fmt.Sprintf("peer (round %d of %d)", i+1, peerRounds), p.c.base, &ro, sc)
		if err != nil {
			return nil, nil, err
		}
		if i == 0 {
			quarry, peer = q, l
		} else {
			quarry.add(q)
			peer.add(l)
		}
	}
	quarry.name, peer.name = "server", "peer"
	return quarry, peer, nil
}

// endReport ends the peer's part of the report: its figures, from its
// phase, and Quarry's (the report's results) divided by them.
func (p *lucenePeer) endReport(r *Report, peer *phase) {
	sp := p.report
	sp.Peer = numbersOf(peer, peerSeries.name)
	sp.Answered, sp.WithResults = peer.answered.Load(), peer.withResults.Load()
	sp.Errors = errorCountsOf(&peer.errs)
	for _, res := range r.Results {
		if res.Op == Search {
			sp.QuarryOverPeer = ratiosOf(res.Server, sp.Peer)
		}
	}
	r.Search.Peer = &sp
}
