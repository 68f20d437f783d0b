package store

import (
	"context"
	"encoding/json"
	"fmt"
	"math"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/quarryhq/quarry"
)

// Search: the index of the documents' chunks (migration 00015) and the
// searches that read it with each caller's rights. A document is chunked
// and indexed in the transaction that writes it (putDocuments), so the
// index is always the documents' own; its rows leave with the document
// (ON DELETE CASCADE), whichever path deletes it.

// BM25's parameters, Lucene's defaults.
const (
	bm25K1 = 1.2
	bm25B  = 0.75
)

// statsTTL is how long a server keeps the index's statistics (its number
// of chunks, their total length, each term's document frequency) before
// reading them again: a change from another replica reaches its ranking
// within it; one of its own at once. The statistics only weigh terms:
// what a search may find is read from the database at every search.
const statsTTL = 10 * time.Second

// maxStatsTerms bounds the document frequencies a server keeps; past it
// they are read again.
const maxStatsTerms = 100_000

// searchStats are the index's statistics as a server last read them.
type searchStats struct {
	mu     sync.Mutex
	gen    uint64 // Bumped by every write of this server to the index.
	readAt time.Time
	atGen  uint64
	chunks int64
	length int64
	df     map[string]int64
}

// indexDocument chunks document d of pair pairID and writes its chunks,
// their postings, its tags and, for a sync pair, the access its connector
// reports; replace first removes what the document had.
func (tx *Tx) indexDocument(ctx context.Context, pairID int64, d *quarry.Document, replace bool) error {
	if replace {
		for _, table := range []string{"search_chunks", "search_tags", "search_document_access"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE cc_pair_id = $1 AND document_id = $2`, pairID, d.ID); err != nil {
				return err
			}
		}
	}
	tx.searchChanged = true
	var updated any
	if d.DocUpdatedAt != nil {
		updated = d.DocUpdatedAt.UnixMicro()
	}
	var postings []any
	// flush writes the postings gathered, in statements of a few fixed
	// sizes (so that SQLite keeps each prepared), the last ones whole.
	flush := func(all bool) error {
		for _, size := range []int{100, 10, 1} {
			for len(postings) >= size*5 {
				if _, err := tx.ExecContext(ctx, insertPostings(size), postings[:size*5]...); err != nil {
					return err
				}
				postings = postings[size*5:]
			}
			if !all {
				break
			}
		}
		return nil
	}
	terms := map[string]bool{}
	for _, c := range d.Chunks() {
		tf, length := c.ChunkTerms()
		var id int64
		if err := tx.QueryRowContext(ctx, `INSERT INTO search_chunks (cc_pair_id, document_id, chunk_no, title, content, link, length, source, doc_updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9) RETURNING id`,
			pairID, d.ID, c.No, c.Title, c.Content, c.Link, length, string(d.Source), updated).Scan(&id); err != nil {
			return err
		}
		keys := make([]string, 0, len(tf))
		for t := range tf {
			keys = append(keys, t)
		}
		sort.Strings(keys)
		for _, t := range keys {
			postings = append(postings, t, pairID, id, tf[t], length)
			terms[t] = true
			if len(postings) >= 100*5 {
				if err := flush(false); err != nil {
					return err
				}
			}
		}
	}
	if err := flush(true); err != nil {
		return err
	}
	if err := tx.addTerms(ctx, terms); err != nil {
		return err
	}
	for _, tag := range d.Tags() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_tags (cc_pair_id, document_id, tag_key, tag_value) VALUES ($1, $2, $3, $4)
			ON CONFLICT DO NOTHING`, pairID, d.ID, tag[0], tag[1]); err != nil {
			return err
		}
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

// insertPostings returns the statement that inserts n postings.
func insertPostings(n int) string {
	var b strings.Builder
	b.WriteString(`INSERT INTO search_postings (term, cc_pair_id, chunk_id, tf, length) VALUES `)
	for i := range n {
		if i > 0 {
			b.WriteString(", ")
		}
		fmt.Fprintf(&b, "($%d, $%d, $%d, $%d, $%d)", i*5+1, i*5+2, i*5+3, i*5+4, i*5+5)
	}
	return b.String()
}

// addTerms adds terms to the index's dictionary, in order (so that
// concurrent writers on PostgreSQL wait for each other rather than
// deadlock).
func (tx *Tx) addTerms(ctx context.Context, terms map[string]bool) error {
	list := make([]string, 0, len(terms))
	for t := range terms {
		list = append(list, t)
	}
	sort.Strings(list)
	for _, size := range []int{100, 10, 1} {
		for len(list) >= size {
			var b strings.Builder
			b.WriteString(`INSERT INTO search_terms (term) VALUES `)
			args := make([]any, size)
			for i := range size {
				if i > 0 {
					b.WriteString(", ")
				}
				fmt.Fprintf(&b, "($%d)", i+1)
				args[i] = list[i]
			}
			b.WriteString(` ON CONFLICT DO NOTHING`)
			if _, err := tx.ExecContext(ctx, b.String(), args...); err != nil {
				return err
			}
			list = list[size:]
		}
	}
	return nil
}

// stats returns the number of chunks, their total length and the document
// frequencies of terms, as kept (see statsTTL) or read from q.
func (db *DB) stats(ctx context.Context, q querier, terms []string) (chunks, length int64, df map[string]int64, err error) {
	s := &db.searchStats
	s.mu.Lock()
	now := time.Now()
	if s.df == nil || s.atGen != s.gen || now.Sub(s.readAt) > statsTTL || len(s.df) > maxStatsTerms {
		s.df, s.readAt, s.atGen, s.chunks = map[string]int64{}, now, s.gen, -1
	}
	chunks, length = s.chunks, s.length
	df = map[string]int64{}
	var missing []any
	for _, t := range terms {
		if n, ok := s.df[t]; ok {
			df[t] = n
		} else {
			missing = append(missing, t)
		}
	}
	gen := s.gen
	s.mu.Unlock()
	if chunks < 0 {
		if err := q.QueryRowContext(ctx, `SELECT COUNT(*), COALESCE(SUM(length), 0) FROM search_chunks`).Scan(&chunks, &length); err != nil {
			return 0, 0, nil, err
		}
	}
	if len(missing) > 0 {
		var args []any
		rows, err := q.QueryContext(ctx, `SELECT term, COUNT(*) FROM search_postings WHERE `+sqlIn("term", missing, &args)+` GROUP BY term`, args...)
		if err != nil {
			return 0, 0, nil, err
		}
		for _, t := range missing {
			df[t.(string)] = 0
		}
		for rows.Next() {
			var t string
			var n int64
			if err := rows.Scan(&t, &n); err != nil {
				rows.Close()
				return 0, 0, nil, err
			}
			df[t] = n
		}
		if err := closeRows(rows); err != nil {
			return 0, 0, nil, err
		}
	}
	s.mu.Lock()
	if s.atGen == gen && s.gen == gen {
		s.chunks, s.length = chunks, length
		for t, n := range df {
			s.df[t] = n
		}
	}
	s.mu.Unlock()
	return chunks, length, df, nil
}

// idf is Lucene's BM25 inverse document frequency.
func idf(n, df int64) float64 {
	return math.Log(1 + (float64(n)-float64(df)+0.5)/(float64(df)+0.5))
}

// Search returns the documents caller c may see that best match query q
// under filters f, best first, at most limit of them (each document once,
// by its best chunk): BM25 over the chunks' weighted terms (see
// quarry.TitleWeight), with the index's statistics, as Lucene 8 scores it.
// The caller's rights are a condition of the query itself, so a person
// whose documents rank below others' still gets limit results. A caller
// who may not search (quarry.Caller.CanSearch) is refused.
func (db *DB) Search(ctx context.Context, c *quarry.Caller, q quarry.Query, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	f, err := f.Normalized()
	if err != nil {
		return nil, err
	}
	out := []quarry.SearchHit{}
	if q.Empty() || limit <= 0 || len(f.DocumentSets) > 0 {
		return out, nil
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

// search is Search in a snapshot.
func (db *DB) search(ctx context.Context, r querier, c *quarry.Caller, q quarry.Query, f quarry.SearchFilters, limit int) ([]quarry.SearchHit, error) {
	terms := make([]string, 0, len(q.Terms))
	for t := range q.Terms {
		terms = append(terms, t)
	}
	sort.Strings(terms)
	chunks, length, df, err := db.stats(ctx, r, terms)
	if err != nil {
		return nil, err
	}
	weights := map[string]float64{}
	for _, t := range terms {
		weights[t] = float64(q.Terms[t])
	}
	var prefixes []string
	if q.Prefix != "" && df[q.PrefixTerm] == 0 {
		expanded, err := db.expandPrefix(ctx, r, q.Prefix)
		if err != nil {
			return nil, err
		}
		if len(expanded) > 0 {
			prefixes = []string{q.Prefix}
			delete(weights, q.PrefixTerm)
		}
		for t, n := range expanded {
			df[t] = n
			weights[t] += 1
		}
	}
	if chunks == 0 || len(weights) == 0 {
		return []quarry.SearchHit{}, nil
	}
	avgdl := float64(length) / float64(chunks)
	// The query's terms and their weights, as a table.
	var args []any
	var qt strings.Builder
	keys := make([]string, 0, len(weights))
	for t := range weights {
		if df[t] > 0 {
			keys = append(keys, t)
		}
	}
	if len(keys) == 0 {
		return []quarry.SearchHit{}, nil
	}
	sort.Strings(keys)
	for i, t := range keys {
		if i > 0 {
			qt.WriteString(" UNION ALL ")
		}
		args = append(args, t, weights[t]*idf(chunks, df[t]))
		fmt.Fprintf(&qt, "SELECT CAST($%d AS TEXT) AS term, CAST($%d AS DOUBLE PRECISION) AS w", len(args)-1, len(args))
	}
	args = append(args, bm25K1, bm25B, avgdl)
	k1, b, avg := len(args)-2, len(args)-1, len(args)
	// The parameters are cast: in arithmetic with integer columns,
	// PostgreSQL would type them integer and round them.
	float := func(i int) string { return fmt.Sprintf("CAST($%d AS DOUBLE PRECISION)", i) }
	having := ""
	phraseTerms := map[string]bool{}
	for _, p := range q.Phrases {
		for _, t := range p.Terms {
			phraseTerms[t] = true
		}
	}
	if len(phraseTerms) > 0 {
		list := make([]any, 0, len(phraseTerms))
		for t := range phraseTerms {
			list = append(list, t)
		}
		sort.Slice(list, func(i, j int) bool { return list[i].(string) < list[j].(string) })
		having = fmt.Sprintf(" HAVING SUM(CASE WHEN %s THEN 1 ELSE 0 END) = %d", sqlIn("sp.term", list, &args), len(list))
	}
	pairs := searchPairs(c, "sp", &args)
	rights := searchRights(c, "ch", &args)
	var filters []string
	if len(f.Sources) > 0 {
		filters = append(filters, sqlIn("ch.source", anys(f.Sources), &args))
	}
	if f.UpdatedAfter != nil {
		args = append(args, f.UpdatedAfter.UnixMicro())
		filters = append(filters, fmt.Sprintf("(ch.doc_updated_at IS NULL OR ch.doc_updated_at >= $%d)", len(args)))
	}
	if f.UpdatedBefore != nil {
		args = append(args, f.UpdatedBefore.UnixMicro())
		filters = append(filters, fmt.Sprintf("(ch.doc_updated_at IS NULL OR ch.doc_updated_at <= $%d)", len(args)))
	}
	if len(f.Tags) > 0 {
		var ors []string
		for _, t := range f.Tags {
			args = append(args, t[0], t[1])
			ors = append(ors, fmt.Sprintf("(st.tag_key = $%d AND st.tag_value = $%d)", len(args)-1, len(args)))
		}
		filters = append(filters, `EXISTS (SELECT 1 FROM search_tags st WHERE st.cc_pair_id = ch.cc_pair_id AND st.document_id = ch.document_id AND (`+
			strings.Join(ors, " OR ")+`))`)
	}
	where := rights
	for _, x := range filters {
		where += " AND " + x
	}
	cols := "ch.id, ch.document_id, s.score"
	if len(q.Phrases) > 0 {
		cols += ", ch.title, ch.content"
	}
	query := `WITH q (term, w) AS (` + qt.String() + `),
		scored AS (
			SELECT sp.chunk_id, SUM(q.w * sp.tf / (sp.tf + ` + float(k1) + ` * (1 - ` + float(b) + ` + ` + float(b) +
		` * sp.length / ` + float(avg) + `))) AS score
			FROM q JOIN search_postings sp ON sp.term = q.term
			WHERE ` + pairs + `
			GROUP BY sp.chunk_id` + having + `)
		SELECT ` + cols + ` FROM scored s JOIN search_chunks ch ON ch.id = s.chunk_id
		WHERE ` + where + `
		ORDER BY s.score DESC, ch.id LIMIT $`
	type candidate struct {
		chunk int64
		doc   string
		score float64
	}
	for fetch := limit*4 + 20; ; fetch *= 4 {
		rows, err := r.QueryContext(ctx, query+fmt.Sprint(len(args)+1), append(args, fetch)...)
		if err != nil {
			return nil, err
		}
		var picked []candidate
		seen := map[string]bool{}
		n := 0
		for rows.Next() {
			n++
			var cand candidate
			var title, content string
			dest := []any{&cand.chunk, &cand.doc, &cand.score}
			if len(q.Phrases) > 0 {
				dest = append(dest, &title, &content)
			}
			if err := rows.Scan(dest...); err != nil {
				rows.Close()
				return nil, err
			}
			if seen[cand.doc] || len(picked) == limit || !q.Matches(title, content) {
				continue
			}
			seen[cand.doc] = true
			picked = append(picked, cand)
		}
		if err := closeRows(rows); err != nil {
			return nil, err
		}
		if len(picked) == limit || n < fetch {
			ids := make([]int64, len(picked))
			scores := map[int64]float64{}
			for i, p := range picked {
				ids[i], scores[p.chunk] = p.chunk, p.score
			}
			return db.hits(ctx, r, ids, scores, q.TermSet(), prefixes)
		}
	}
}

// expandPrefix returns up to quarry.MaxPrefixMatches terms of the index
// that begin with prefix, the most frequent first, and their document
// frequencies.
func (db *DB) expandPrefix(ctx context.Context, r querier, prefix string) (map[string]int64, error) {
	cands, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (string, error) {
		var t string
		return t, s.Scan(&t)
	}, `SELECT term FROM search_terms WHERE term >= $1 AND term < $2 ORDER BY term LIMIT 256`, prefix, prefix+"\U0010FFFF")
	if err != nil {
		return nil, err
	}
	if len(cands) == 0 {
		return nil, nil
	}
	_, _, df, err := db.stats(ctx, r, cands)
	if err != nil {
		return nil, err
	}
	sort.SliceStable(cands, func(i, j int) bool { return df[cands[i]] > df[cands[j]] })
	out := map[string]int64{}
	for _, t := range cands {
		if df[t] > 0 && len(out) < quarry.MaxPrefixMatches {
			out[t] = df[t]
		}
	}
	return out, nil
}

// hits reads the results of chunks ids, in order.
func (db *DB) hits(ctx context.Context, r querier, ids []int64, scores map[int64]float64, terms map[string]bool, prefixes []string) ([]quarry.SearchHit, error) {
	out := make([]quarry.SearchHit, 0, len(ids))
	if len(ids) == 0 {
		return out, nil
	}
	var args []any
	type row struct {
		id       int64
		no       int
		content  string
		link     *string
		semantic string
		body     string
	}
	rows, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (row, error) {
		var x row
		return x, s.Scan(&x.id, &x.no, &x.content, &x.link, &x.semantic, &x.body)
	}, `SELECT ch.id, ch.chunk_no, ch.content, ch.link, d.semantic_identifier, d.body FROM search_chunks ch
		JOIN documents d ON d.cc_pair_id = ch.cc_pair_id AND d.id = ch.document_id WHERE `+sqlIn("ch.id", anys(ids), &args), args...)
	if err != nil {
		return nil, err
	}
	byID := map[int64]row{}
	for _, x := range rows {
		byID[x.id] = x
	}
	for _, id := range ids {
		x := byID[id]
		var d quarry.Document
		if err := json.Unmarshal([]byte(x.body), &d); err != nil {
			return nil, err
		}
		meta := d.Metadata
		if meta == nil {
			meta = map[string]any{}
		}
		out = append(out, quarry.SearchHit{
			DocumentID: d.ID, ChunkNo: x.no, SemanticIdentifier: x.semantic, Link: x.link,
			Blurb: quarry.Blurb(x.content), Source: d.Source, Metadata: meta, Score: scores[id],
			MatchHighlights: quarry.Highlights(x.content, terms, prefixes), UpdatedAt: d.DocUpdatedAt,
			PrimaryOwners: quarry.OwnerNames(d.PrimaryOwners), SecondaryOwners: quarry.OwnerNames(d.SecondaryOwners),
			Content: x.content,
		})
	}
	return out, nil
}

// searchVersion is the migration that adds the search index, which
// IndexMissing fills in for the documents written before it.
const searchVersion = 15

// IndexMissing indexes the documents that have no chunks: those written
// before migration 00015 made the index (every document written since has
// at least one chunk, its title's). Migrate runs it; replicas that run it
// at once each take a document under its row's lock, so that it is
// indexed once.
func (db *DB) IndexMissing(ctx context.Context) error {
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
			}, `SELECT d.cc_pair_id, d.id FROM documents d WHERE NOT EXISTS (SELECT 1 FROM search_chunks c
				WHERE c.cc_pair_id = d.cc_pair_id AND c.document_id = d.id) ORDER BY d.cc_pair_id, d.id LIMIT 200`)
			if err != nil {
				return err
			}
			lock := ""
			if db.dialect == Postgres {
				lock = " FOR UPDATE"
			}
			for _, d := range docs {
				var body string
				if err := tx.QueryRowContext(ctx, `SELECT body FROM documents WHERE cc_pair_id = $1 AND id = $2`+lock, d.pair, d.id).Scan(&body); err != nil {
					return err
				}
				var indexed bool
				if err := tx.QueryRowContext(ctx, `SELECT EXISTS (SELECT 1 FROM search_chunks WHERE cc_pair_id = $1 AND document_id = $2)`,
					d.pair, d.id).Scan(&indexed); err != nil {
					return err
				}
				if indexed {
					continue
				}
				var doc quarry.Document
				if err := json.Unmarshal([]byte(body), &doc); err != nil {
					return err
				}
				doc.ID = d.id
				if err := tx.indexDocument(ctx, d.pair, &doc, true); err != nil {
					return err
				}
			}
			n = len(docs)
			return nil
		})
		if err != nil || n == 0 {
			return err
		}
	}
}
