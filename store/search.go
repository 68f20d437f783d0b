package store

import (
	"cmp"
	"context"
	"encoding/json"
	"fmt"
	"maps"
	"runtime"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/index"
)

// Search: the index of the documents' chunks and the searches that read
// it with each caller's rights. A document is chunked and its terms found
// before the transaction that writes it (analyseDocuments; IndexMissing,
// after an upgrade, in its own), which writes its chunks (putDocuments):
// they are searched from then on, pending until
// MergeIndex writes them into a segment (searchindex.go). Its rows leave
// with the document (ON DELETE CASCADE), whichever path deletes it; its
// postings in a segment then match no chunk. Package index chunks, encodes
// and scores; this file reads and writes the rows.

// analysed is a document's content hash (contentHash) and, once analysed,
// its chunks (never none: a document without words is one chunk) and its
// two parts as documents keeps them (textCodec.pack).
type analysed struct {
	hash   string
	chunks []analysedChunk // nil: not analysed.
	body   string
	texts  []byte
}

// analyse chunks document d, finds each chunk's terms and packs it for
// storage, into a.
func (db *DB) analyse(d *quarry.Document, a *analysed) error {
	body, texts, err := db.texts.pack(d)
	if err != nil {
		return err
	}
	a.chunks, a.body, a.texts = analyse(d), body, texts
	return nil
}

// analysedChunk is a chunk, its length in terms and its terms, encoded as
// its pending row keeps them (index.EncodeTerms).
type analysedChunk struct {
	index.Chunk
	length int
	terms  []byte
}

// analyse chunks document d and finds each chunk's terms.
func analyse(d *quarry.Document) []analysedChunk {
	sections := make([]index.Section, len(d.Sections))
	for i, s := range d.Sections {
		sections[i] = index.Section(s)
	}
	var out []analysedChunk
	for _, c := range index.Chunks(d.DocumentTitle(), d.Link(), sections) {
		tf, length := c.Terms()
		out = append(out, analysedChunk{Chunk: c, length: length, terms: index.EncodeTerms(tf)})
	}
	return out
}

// analyseDocuments returns the content hashes of docs, documents of pair
// pairID, and analyses those whose hash is not the one the pair holds:
// before the transaction that writes them, so that it does not hold
// SQLite's one writer for it (it is most of a write's time), and on every
// core. The whole batch's chunks and terms are then held at once (about
// 5 MB for 1,000 documents of 2 KB). putDocuments analyses the few that
// changed between the two.
func (db *DB) analyseDocuments(ctx context.Context, pairID int64, docs []quarry.Document) ([]analysed, error) {
	ids := make([]string, len(docs))
	for i := range docs {
		ids[i] = docs[i].ID
	}
	held, err := contentHashes(ctx, db.read, pairID, ids)
	if err != nil {
		return nil, mapError(err)
	}
	out := make([]analysed, len(docs))
	var next atomic.Int64
	var failed atomic.Pointer[error]
	var wg sync.WaitGroup
	for range min(runtime.GOMAXPROCS(0), len(docs)) {
		wg.Go(func() {
			defer func() {
				// A request's panic is its own 500 (the API's recovery),
				// not the server's end.
				if p := recover(); p != nil {
					err := fmt.Errorf("analysing documents: %v", p)
					failed.CompareAndSwap(nil, &err)
				}
			}()
			for i := int(next.Add(1) - 1); i < len(docs) && failed.Load() == nil && ctx.Err() == nil; i = int(next.Add(1) - 1) {
				h, err := contentHash(&docs[i])
				if err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
				out[i].hash = h
				if old, ok := held[docs[i].ID]; !ok || old != h {
					if err := db.analyse(&docs[i], &out[i]); err != nil {
						failed.CompareAndSwap(nil, &err)
						return
					}
				}
			}
		})
	}
	wg.Wait()
	if err := failed.Load(); err != nil {
		return nil, *err
	}
	return out, ctx.Err()
}

// contentHashes returns the content hashes pair pairID holds of the
// documents of ids, by id.
func contentHashes(ctx context.Context, q querier, pairID int64, ids []string) (map[string]string, error) {
	out := map[string]string{}
	for chunk := range slices.Chunk(ids, inChunk) {
		args := []any{pairID}
		err := eachRow(ctx, q, `SELECT id, content_hash FROM documents WHERE cc_pair_id = $1 AND `+sqlIn("id", anys(chunk), &args), args, func(r scanner) error {
			var id, h string
			if err := r.Scan(&id, &h); err != nil {
				return err
			}
			out[id] = h
			return nil
		})
		if err != nil {
			return nil, err
		}
	}
	return out, nil
}

// indexDocument writes the chunks of document d of pair pairID (as
// analyse made them), pending, its tags and, for a sync pair, the access
// its connector reports; replace first removes what the document had.
func (tx *Tx) indexDocument(ctx context.Context, pairID int64, d *quarry.Document, chunks []analysedChunk, replace bool) error {
	if replace {
		for _, table := range []string{"search_chunks", "search_tags", "search_document_access"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE cc_pair_id = $1 AND document_id = $2`, pairID, d.ID); err != nil {
				return err
			}
		}
	}
	var updated any
	if d.DocUpdatedAt != nil {
		updated = d.DocUpdatedAt.UnixMicro()
	}
	for _, c := range chunks {
		if tx.db.dialect == Postgres {
			// The chunk and its pending row (addPending's) in one round
			// trip: a load of one-chunk documents makes a third fewer.
			if _, err := tx.ExecContext(ctx, `WITH c AS (INSERT INTO search_chunks (cc_pair_id, document_id, chunk_no, title, content, link, length,
				source, doc_updated_at) VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id)
				INSERT INTO search_pending (chunk_id, cc_pair_id, length, terms) SELECT id, $1, $7, $10 FROM c`,
				pairID, d.ID, c.No, c.Title, c.Content, c.Link, c.length, string(d.Source), updated, c.terms); err != nil {
				return err
			}
			tx.pendingChunks++
			continue
		}
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO search_chunks (cc_pair_id, document_id, chunk_no, title, content, link, length, source, doc_updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			pairID, d.ID, c.No, c.Title, c.Content, c.Link, c.length, string(d.Source), updated).Scan(&id); err != nil {
			return err
		}
		if err := tx.addPending(ctx, id, pairID, c.length, c.terms); err != nil {
			return err
		}
	}
	if err := tx.putTags(ctx, pairID, d); err != nil {
		return err
	}
	if d.ExternalAccess != nil {
		for _, p := range d.ExternalAccess.Principals() {
			if _, err := tx.ExecContext(ctx, `INSERT INTO search_document_access (cc_pair_id, document_id, principal) VALUES ($1, $2, $3)`,
				pairID, d.ID, p); err != nil {
				return err
			}
		}
	}
	return nil
}

// Search returns the copies of documents caller c may see that best match
// query q under filters f, best first, at most limit of them (each pair's
// copy of a document once, by its best chunk: a document several pairs
// hold is a result for each copy c may see, never one copy chosen for c
// across pairs, see quarry.DocumentCopy): BM25 over the chunks' weighted
// terms (see index.TitleWeight), with the index's statistics, as Lucene
// 8 scores it (index.Score).
// The caller's rights are a condition of the query itself, so a person
// whose documents rank below others' still gets limit results. A caller
// who may not search (quarry.Caller.CanSearch) is refused.
func (db *DB) Search(ctx context.Context, c *quarry.Caller, q index.Query, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	f, err := f.Normalized()
	if err != nil {
		return nil, err
	}
	out := []quarry.SearchHit{}
	if (q.Empty() || limit <= 0) && len(f.DocumentSets) == 0 {
		return out, nil // Sets named are checked all the same (setPairs).
	}
	err = db.snapshot(ctx, func(r querier) error {
		if db.dialect == Postgres {
			// The query is short but its estimated cost is not: compiling
			// it (JIT) costs more than running it.
			var v string
			if err := r.QueryRowContext(ctx, `SELECT set_config('jit', 'off', true)`).Scan(&v); err != nil {
				return err
			}
		}
		var err error
		out, err = db.search(ctx, r, c, q, f, limit)
		return err
	})
	return out, mapError(err)
}

// search is Search in a snapshot: the pairs c may see (narrowed to those
// of the sets f names, setPairs), the index's statistics and the postings
// of the query's terms are read (index.Score), the best chunks of those
// pairs taken (index.Candidates.Take), then checked in the order of their
// scores against c's rights and f, a batch at a time, until limit copies
// of documents are found or no chunk is left.
func (db *DB) search(ctx context.Context, r querier, c *quarry.Caller, q index.Query, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	inSets, err := setPairs(ctx, r, c, f)
	if err != nil || q.Empty() || limit <= 0 {
		return []quarry.SearchHit{}, err
	}
	visible, err := visiblePairs(ctx, r, c)
	if err != nil || visible == nil {
		return []quarry.SearchHit{}, err
	}
	if inSets != nil {
		maps.DeleteFunc(visible, func(p int64, _ bool) bool { return !inSets[p] })
		if len(visible) == 0 {
			return []quarry.SearchHit{}, nil
		}
	}
	snap, segs, err := readIndex(ctx, r)
	if err != nil || snap.Chunks == 0 {
		return []quarry.SearchHit{}, err
	}
	cands, prefixes, err := index.Score(&segmentReader{ctx: ctx, r: r, segs: segs, cache: db.blocks}, snap, q, visible)
	if err != nil {
		return nil, err
	}
	// The candidates' chunks, checked in order: still there, c may see
	// them (a sync pair's by each document's access), f lets them through.
	var args []any
	where := searchRights(c, "ch", &args)
	if len(f.Sources) > 0 {
		where += " AND " + sqlIn("ch.source", anys(f.Sources), &args)
	}
	if f.UpdatedAfter != nil {
		args = append(args, f.UpdatedAfter.UnixMicro())
		where += fmt.Sprintf(" AND (ch.doc_updated_at IS NULL OR ch.doc_updated_at >= $%d)", len(args))
	}
	if f.UpdatedBefore != nil {
		args = append(args, f.UpdatedBefore.UnixMicro())
		where += fmt.Sprintf(" AND (ch.doc_updated_at IS NULL OR ch.doc_updated_at <= $%d)", len(args))
	}
	if len(f.Tags) > 0 {
		var ors []string
		for _, t := range f.Tags {
			args = append(args, t[0], t[1])
			ors = append(ors, fmt.Sprintf("(st.tag_key = $%d AND st.tag_value = $%d)", len(args)-1, len(args)))
		}
		where += ` AND EXISTS (SELECT 1 FROM search_tags st WHERE st.cc_pair_id = ch.cc_pair_id AND st.document_id = ch.document_id AND (` +
			strings.Join(ors, " OR ") + `))`
	}
	cols := "ch.id, ch.cc_pair_id, ch.document_id"
	if len(q.Phrases) > 0 {
		cols += ", ch.title, ch.content"
	}
	type copyOf struct {
		pair int64
		doc  string
	}
	type checked struct {
		copyOf
		title, content string
	}
	// The chunks that hold the phrases come first; then, if fewer than
	// limit copies do, the best of those that hold only the phrases'
	// words (every chunk that failed the phrases, and the candidates
	// without a phrase's word taken until they fill what is left).
	var picked []index.Scored
	seen := map[copyOf]bool{}
	words := map[copyOf]index.Scored{} // Each copy's best chunk of the words only.
	fromWords := map[copyOf]bool{}     // The copies of candidates without a phrase's word, not among picked.
	full := func() bool {
		return len(picked) == limit || len(picked)+len(fromWords) >= limit
	}
	// The first batch is a few more than limit: in most searches nearly
	// every candidate passes, and each one checked is a row read (at
	// 1,000,000 chunks, 140 checked for 30 results cost a quarter of a
	// search). A batch that falls short is followed by one four times as
	// large.
	for batch, more := limit+searchSpare, true; !full() && more; batch = min(batch*4, 2000) {
		next, err := cands.Take(batch)
		if err != nil {
			return nil, err
		}
		more = len(next) == batch
		if len(next) == 0 {
			break
		}
		ids := make([]any, len(next))
		for i, s := range next {
			ids[i] = s.Chunk
		}
		a := slices.Clone(args)
		rows, err := r.QueryContext(ctx, `SELECT `+cols+` FROM search_chunks ch WHERE `+sqlIn("ch.id", ids, &a)+` AND `+where, a...)
		if err != nil {
			return nil, err
		}
		found := map[int64]checked{}
		for rows.Next() {
			var id int64
			var x checked
			dest := []any{&id, &x.pair, &x.doc}
			if len(q.Phrases) > 0 {
				dest = append(dest, &x.title, &x.content)
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			found[id] = x
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
		for _, s := range next {
			x, ok := found[s.Chunk]
			switch {
			case !ok || full():
			case !s.Words && q.Matches(x.title, x.content):
				if !seen[x.copyOf] {
					seen[x.copyOf] = true
					picked = append(picked, s)
				}
			default:
				if w, ok := words[x.copyOf]; !ok || s.Score > w.Score {
					words[x.copyOf] = s
				}
				if s.Words && !seen[x.copyOf] {
					fromWords[x.copyOf] = true
				}
			}
		}
	}
	// Every candidate that might hold the phrases was checked before the
	// first without (Candidates.Take), so picked is final here.
	phrased := len(picked)
	var rest []index.Scored
	for c, s := range words {
		if !seen[c] {
			rest = append(rest, s)
		}
	}
	slices.SortFunc(rest, func(a, b index.Scored) int {
		return cmp.Or(cmp.Compare(b.Score, a.Score), cmp.Compare(a.Chunk, b.Chunk))
	})
	picked = append(picked, rest[:min(len(rest), limit-len(picked))]...)
	ids := make([]int64, len(picked))
	scores := map[int64]float64{}
	for i, p := range picked {
		ids[i], scores[p.Chunk] = p.Chunk, p.Score
	}
	return db.hits(ctx, r, ids, scores, cands, phrased, q.TermSet(), prefixes)
}

// searchSpare is how many candidates beyond the results asked for a search
// checks in its first batch (search).
const searchSpare = 10

// hits reads the results of chunks ids, in order, each with its pair, and
// adds to each score the nearness of the query's words in its chunk
// (index.Candidates.Proximity of cands), then orders the first phrased
// results (those that hold the query's phrases) and the others apart,
// each by their new scores (ties by chunk id): nearness reorders the
// results a search found, it never brings in another.
func (db *DB) hits(ctx context.Context, r querier, ids []int64, scores map[int64]float64, cands *index.Candidates, phrased int, terms map[string]bool, prefixes []string) ([]quarry.SearchHit, error) {
	out := make([]quarry.SearchHit, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var args []any
	type row struct {
		id       int64
		no       int
		title    string
		content  string
		link     *string
		semantic string
		body     string
		pair     quarry.PairRef
	}
	rows, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (row, error) {
		var x row
		return x, s.Scan(&x.id, &x.no, &x.title, &x.content, &x.link, &x.semantic, &x.body, &x.pair.ID, &x.pair.Name, &x.pair.AccessType)
	}, `SELECT ch.id, ch.chunk_no, ch.title, ch.content, ch.link, d.semantic_identifier, d.body, p.id, p.name, p.access_type FROM search_chunks ch
		JOIN documents d ON d.cc_pair_id = ch.cc_pair_id AND d.id = ch.document_id JOIN cc_pairs p ON p.id = ch.cc_pair_id
		WHERE `+sqlIn("ch.id", anys(ids), &args), args...)
	if err != nil {
		return nil, err
	}
	byID := map[int64]row{}
	for _, x := range rows {
		byID[x.id] = x
	}
	score := map[int64]float64{}
	highlights := map[int64][]string{}
	for _, id := range ids {
		x := byID[id]
		var near float64
		highlights[id], near = cands.Result(x.title, x.content, terms, prefixes)
		score[id] = scores[id] + near
	}
	for _, group := range [][]int64{ids[:phrased], ids[phrased:]} {
		slices.SortStableFunc(group, func(a, b int64) int { return cmp.Or(cmp.Compare(score[b], score[a]), cmp.Compare(a, b)) })
	}
	for _, id := range ids {
		x := byID[id]
		var d hitDocument
		if err := json.Unmarshal([]byte(x.body), &d); err != nil {
			return nil, err
		}
		meta := d.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		out = append(out, quarry.SearchHit{
			DocumentID: d.ID, Pair: x.pair, ChunkNo: x.no, SemanticIdentifier: x.semantic, Link: x.link,
			Blurb: index.Blurb(x.content), Source: d.Source, Metadata: meta, Score: score[id],
			MatchHighlights: highlights[id], UpdatedAt: d.DocUpdatedAt,
			PrimaryOwners: quarry.OwnerNames(d.PrimaryOwners), SecondaryOwners: quarry.OwnerNames(d.SecondaryOwners),
			Content: x.content,
		})
	}
	return out, nil
}

// hitDocument is what a result shows of its document's stored body
// (quarry.Document's fields of the same names): all but its text, which
// the result takes from its chunk, so that decoding a body keeps none of
// the text's strings.
type hitDocument struct {
	ID              string                `json:"id"`
	Source          quarry.DocumentSource `json:"source"`
	Metadata        map[string]any        `json:"metadata"`
	DocUpdatedAt    *quarry.Time          `json:"doc_updated_at"`
	PrimaryOwners   []json.RawMessage     `json:"primary_owners"`
	SecondaryOwners []json.RawMessage     `json:"secondary_owners"`
}

// searchVersion is the migration since which the search index is the one
// this build writes: IndexMissing fills it in for the documents written
// before it (00017 dropped the chunks of 00015's index).
const searchVersion = 17

// IndexMissing indexes the documents that have no chunks: those written
// before migration 00017 made the index (every document written since has
// at least one chunk, its title's). Migrate runs it; replicas that run it
// at once each take a document under its row's lock, so that it is
// indexed once.
func (db *DB) IndexMissing(ctx context.Context) error {
	// The documents in the order of their key, from after the last one
	// taken (not from the start each round, which would read the indexed
	// ones again and again).
	var lastPair int64
	lastID := ""
	indexed := 0
	for {
		var n int
		err := db.update(ctx, func(tx *Tx) error {
			type doc struct {
				pair int64
				id   string
			}
			docs, err := queryAll(ctx, tx, func(r interface{ Scan(...any) error }) (doc, error) {
				var d doc
				return d, r.Scan(&d.pair, &d.id)
			}, `SELECT d.cc_pair_id, d.id FROM documents d WHERE (d.cc_pair_id > $1 OR (d.cc_pair_id = $1 AND d.id > $2))
				AND NOT EXISTS (SELECT 1 FROM search_chunks c WHERE c.cc_pair_id = d.cc_pair_id AND c.document_id = d.id)
				ORDER BY d.cc_pair_id, d.id LIMIT 200`, lastPair, lastID)
			if err != nil || len(docs) == 0 {
				return err
			}
			lastPair, lastID = docs[len(docs)-1].pair, docs[len(docs)-1].id
			lock := ""
			if db.dialect == Postgres {
				lock = " FOR UPDATE"
			}
			for _, d := range docs {
				// Its row's lock first, then whether another replica
				// indexed it meanwhile.
				var indexed bool
				if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_chunks WHERE cc_pair_id = d.cc_pair_id AND document_id = d.id)
					FROM documents d WHERE d.cc_pair_id = $1 AND d.id = $2`+lock, d.pair, d.id).Scan(&indexed); err != nil {
					return err
				}
				if indexed {
					continue
				}
				doc, err := db.storedDocument(ctx, tx, d.pair, d.id, "")
				if err != nil {
					return err
				}
				doc.ID = d.id
				if err := tx.indexDocument(ctx, d.pair, doc, analyse(doc), true); err != nil {
					return err
				}
			}
			n = len(docs)
			return nil
		})
		if err != nil || n == 0 {
			return err
		}
		// Their chunks into segments as they pile up, so that the first
		// searches after an upgrade do not read them all pending.
		if indexed += n; indexed >= index.FlushChunks {
			indexed = 0
			for did := true; did; {
				if did, err = db.flushPending(ctx); err != nil {
					return err
				}
			}
		}
	}
}
