package store

import (
	"context"
	"fmt"
	"maps"
	"slices"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
)

// Tags: each key and value of the documents' metadata once (table tags,
// Onyx's tag table), and the copies of documents that carry each
// (search_tags, which the search's filter reads). valid-tags walks the
// tags in the order of an index and lists those the caller may find a
// copy of, so that its cost is bounded by its limit and the copies it
// probes, not by the number of documents.

// maxPairHint is how many pairs a walk of the tags names to narrow its
// probes of the copies carrying each tag (an index seek a pair); with
// more, the probe reads the tag's copies and checks each pair.
const maxPairHint = 1000

// putTags writes the tags of document d of pair pairID (quarry.Document.Tags):
// each tag once in tags, then the copy's row naming it.
func (tx *Tx) putTags(ctx context.Context, pairID int64, d *quarry.Document) error {
	for _, t := range d.Tags() {
		if _, err := tx.ExecContext(ctx, `INSERT INTO tags (tag_key, tag_value, source, is_list, key_fold, value_fold)
			VALUES ($1, $2, $3, $4, $5, $6) ON CONFLICT (tag_key, tag_value, source, is_list) DO NOTHING`,
			t.Key, t.Value, string(t.Source), t.IsList, quarry.FoldTag(t.Key), quarry.FoldTag(t.Value)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `INSERT INTO search_tags (cc_pair_id, document_id, tag_key, tag_value, tag_id)
			SELECT $1, $2, t.tag_key, t.tag_value, t.id FROM tags t
			WHERE t.tag_key = $3 AND t.tag_value = $4 AND t.source = $5 AND t.is_list = $6 ON CONFLICT DO NOTHING`,
			pairID, d.ID, t.Key, t.Value, string(t.Source), t.IsList); err != nil {
			return err
		}
	}
	return nil
}

// ValidTags returns the tags of q (GET /query/valid-tags) that caller c
// may find a copy of a document carrying, as a search finds copies (the
// rights of Search: searchRights), listed as q.ListedTags says. A caller
// who may not search (quarry.Caller.CanSearch) is refused. Each branch of
// q walks an index of the tags in order and stops at its limit: a tag no
// copy c may find carries costs a probe of its copies, nothing more.
func (db *DB) ValidTags(ctx context.Context, c *quarry.Caller, q quarry.TagQuery) ([]quarry.Tag, error) {
	if err := c.CheckSearch(); err != nil {
		return nil, err
	}
	var found []quarry.Tag
	err := db.snapshot(ctx, func(r querier) error {
		visible, err := visiblePairs(ctx, r, c)
		if err != nil || visible == nil {
			return err
		}
		for _, b := range q.Branches() {
			tags, err := branchTags(ctx, r, c, b, slices.Sorted(maps.Keys(visible)))
			if err != nil {
				return err
			}
			found = append(found, tags...)
		}
		return nil
	})
	if err != nil {
		return nil, mapError(err)
	}
	return q.ListedTags(found), nil
}

// branchTags returns the tags of branch b of a query (quarry.TagQuery.Branches)
// that c may find a copy carrying, in the order of the index it walks
// (the key's, or the value's for a value's prefix alone), at most twice
// b.Limit of them (a key and value may be two tags, from a list and not).
// visible are the pairs c may search (visiblePairs). It walks the index a
// page at a time and asks which tags of the page c may find, so that the
// walk stops at the limit whatever the planner thinks of a join of every
// tag with search_tags (PostgreSQL chose that for a walk without a
// pattern: 51 ms at 100,000 documents).
func branchTags(ctx context.Context, r querier, c *quarry.Caller, b quarry.TagQuery, visible []int64) ([]quarry.Tag, error) {
	want := 2 * b.Limit
	page := max(want, tagPage)
	order := []string{"t.key_fold", "t.value_fold", "t.id"}
	if b.KeyPrefix == "" && b.ValuePrefix != "" {
		order = []string{"t.value_fold", "t.key_fold", "t.id"}
	}
	var (
		found []quarry.Tag
		after []any // The walk's position: the last tag's values of order.
	)
	for {
		var args []any
		var conds []string
		prefix := func(col, p string) {
			args = append(args, p, p+"\U0010FFFF")
			conds = append(conds, fmt.Sprintf("%s >= $%d AND %s < $%d", col, len(args)-1, col, len(args)))
		}
		if b.KeyPrefix != "" {
			prefix("t.key_fold", b.KeyPrefix)
		}
		if b.ValuePrefix != "" {
			prefix("t.value_fold", b.ValuePrefix)
		}
		if len(b.Sources) > 0 {
			conds = append(conds, sqlIn("t.source", anys(b.Sources), &args))
		}
		if after != nil {
			args = append(args, after...)
			n := len(args)
			conds = append(conds, fmt.Sprintf("(%s) > ($%d, $%d, $%d)", strings.Join(order, ", "), n-2, n-1, n))
		}
		where := ""
		if len(conds) > 0 {
			where = " WHERE " + strings.Join(conds, " AND ")
		}
		cands, err := queryAll(ctx, r, func(s interface{ Scan(...any) error }) (walkedTag, error) {
			var w walkedTag
			return w, s.Scan(&w.ID, &w.Key, &w.Value, &w.Source, &w.IsList, &w.keyFold, &w.valueFold)
		}, `SELECT t.id, t.tag_key, t.tag_value, t.source, t.is_list, t.key_fold, t.value_fold FROM tags t`+where+
			` ORDER BY `+strings.Join(order, ", ")+` LIMIT `+strconv.Itoa(page), args...)
		if err != nil || len(cands) == 0 {
			return found, err
		}
		ids := make([]any, len(cands))
		for i, t := range cands {
			ids[i] = t.ID
		}
		var probe []any
		pairs := ""
		if len(visible) <= maxPairHint {
			pairs = " AND " + sqlIn("st.cc_pair_id", anys(visible), &probe)
		}
		cond := sqlIn("t.id", ids, &probe)
		open, err := queryInts(ctx, r, `SELECT t.id FROM tags t WHERE `+cond+
			` AND EXISTS (SELECT 1 FROM search_tags st WHERE st.tag_id = t.id`+pairs+` AND `+searchRights(c, "st", &probe)+`)`, probe...)
		if err != nil {
			return nil, err
		}
		for _, t := range cands {
			if slices.Contains(open, t.ID) {
				found = append(found, t.Tag)
				if len(found) == want {
					return found, nil
				}
			}
		}
		if len(cands) < page {
			return found, nil
		}
		l := cands[len(cands)-1]
		after = []any{l.keyFold, l.valueFold, l.ID}
		if order[0] == "t.value_fold" {
			after = []any{l.valueFold, l.keyFold, l.ID}
		}
	}
}

// tagPage is how many tags a walk of the index reads at a time, at least.
const tagPage = 256

// walkedTag is a tag read by a walk of the index, with its place in it.
type walkedTag struct {
	quarry.Tag
	keyFold, valueFold string
}

// scanTag reads a tag: its id, key, value, source and is_list.
func scanTag(s interface{ Scan(...any) error }) (quarry.Tag, error) {
	var t quarry.Tag
	return t, s.Scan(&t.ID, &t.Key, &t.Value, &t.Source, &t.IsList)
}

// DocumentTags returns the tags that pair pairID's copy of document id
// carries, as kept (quarry.Document.Tags, each with its id), sorted by
// key, value and IsList; none for a copy the pair does not hold. It reads
// no caller's rights: it is for tests and tools that hold the database.
func (db *DB) DocumentTags(ctx context.Context, pairID int64, id string) ([]quarry.Tag, error) {
	return queryAll(ctx, db.read, scanTag, `SELECT t.id, t.tag_key, t.tag_value, t.source, t.is_list
		FROM search_tags st JOIN tags t ON t.id = st.tag_id WHERE st.cc_pair_id = $1 AND st.document_id = $2
		ORDER BY t.tag_key, t.tag_value, t.is_list`, pairID, id)
}
