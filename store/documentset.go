package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
)

// Document sets (quarry.DocumentSet): their rows in document_sets, their
// pairs, people and groups in document_set_pairs, document_set_users and
// document_set_groups (migration 00023). The rules are the root
// package's (documentset.go); this file reads the facts they need in the
// write's transaction, asks them, and writes. A set's documents are those
// of its pairs at each search (setPairs): nothing is written per document,
// so there is no sync to wait for, and a set is deleted at once (Onyx
// marks it and deletes it once its index has been synced).

// documentSetColumns are the columns scanDocumentSet reads, from
// document_sets s.
const documentSetColumns = `s.id, s.name, s.description, s.user_id, s.is_public, s.created_at, s.updated_at`

// scanDocumentSet reads a row of documentSetColumns.
func scanDocumentSet(r interface{ Scan(...any) error }) (*quarry.DocumentSet, error) {
	var (
		s                quarry.DocumentSet
		created, updated int64
	)
	if err := r.Scan(&s.ID, &s.Name, &s.Description, &s.OwnerID, &s.IsPublic, &created, &updated); err != nil {
		return nil, err
	}
	s.CreatedAt, s.UpdatedAt = quarry.TimeFromMicros(created), quarry.TimeFromMicros(updated)
	s.Pairs, s.Users, s.Groups = []quarry.DocumentSetPair{}, []string{}, []int64{}
	return &s, nil
}

// documentSets returns the sets that cond (a condition on document_sets s,
// with its arguments; "" for every set) selects, ascending by id, each
// with its pairs (ascending by id, with their connectors' sources), people
// and groups: four statements, whatever their number (a few hundred sets
// at a time).
func documentSets(ctx context.Context, q querier, cond string, args ...any) ([]*quarry.DocumentSet, error) {
	where := ""
	if cond != "" {
		where = " WHERE " + cond
	}
	sets, err := queryAll(ctx, q, scanDocumentSet, `SELECT `+documentSetColumns+` FROM document_sets s`+where+` ORDER BY s.id`, args...)
	if err != nil || len(sets) == 0 {
		return sets, err
	}
	byID := make(map[int64]*quarry.DocumentSet, len(sets))
	ids := make([]int64, len(sets))
	for i, s := range sets {
		byID[s.ID], ids[i] = s, s.ID
	}
	err = inChunks(ids, "document_set_id", func(in string, args []any) error {
		if err := eachRow(ctx, q, `SELECT x.document_set_id, p.id, p.name, p.access_type, c.source
			FROM document_set_pairs x JOIN cc_pairs p ON p.id = x.cc_pair_id JOIN connectors c ON c.id = p.connector_id
			WHERE x.`+in+` ORDER BY x.document_set_id, p.id`, args, func(row scanner) error {
			var set int64
			var p quarry.DocumentSetPair
			if err := row.Scan(&set, &p.ID, &p.Name, &p.AccessType, &p.Source); err != nil {
				return err
			}
			byID[set].Pairs = append(byID[set].Pairs, p)
			return nil
		}); err != nil {
			return err
		}
		if err := eachRow(ctx, q, `SELECT document_set_id, user_id FROM document_set_users WHERE `+in+
			` ORDER BY document_set_id, user_id`, args, func(row scanner) error {
			var set int64
			var user string
			if err := row.Scan(&set, &user); err != nil {
				return err
			}
			byID[set].Users = append(byID[set].Users, user)
			return nil
		}); err != nil {
			return err
		}
		return eachInts(ctx, q, `SELECT document_set_id, group_id FROM document_set_groups WHERE `+in+
			` ORDER BY document_set_id, group_id`, args, func(set, g int64) { byID[set].Groups = append(byID[set].Groups, g) })
	})
	return sets, mapError(err)
}

// documentSet returns set id, or quarry.ErrDocumentSetNotFound.
func documentSet(ctx context.Context, q querier, id int64) (*quarry.DocumentSet, error) {
	sets, err := documentSets(ctx, q, "s.id = $1", id)
	if err != nil {
		return nil, err
	}
	if len(sets) == 0 {
		return nil, quarry.ErrDocumentSetNotFound(id)
	}
	return sets[0], nil
}

// DocumentSets returns the sets c may see (quarry.Caller.CanSeeDocumentSet),
// or, when editable, those c may change (CanEditDocumentSet), ascending by
// id, read in one snapshot. Each shows only the pairs c may see
// (CanSeePair): a set does not show a person the names of pairs they may
// not see (Onyx shows every pair of a set to whoever sees the set).
func (db *DB) DocumentSets(ctx context.Context, c *quarry.Caller, editable bool) ([]*quarry.DocumentSet, error) {
	var sets []*quarry.DocumentSet
	err := db.snapshot(ctx, func(q querier) error {
		var err error
		sets, err = documentSets(ctx, q, "")
		if err != nil || c.ManagesConnectors() {
			return err
		}
		var args []any
		seen, err := queryInts(ctx, q, `SELECT p.id FROM cc_pairs p WHERE `+pairsVisibleTo(c, "p", &args), args...)
		for _, s := range sets {
			s.Pairs = slices.DeleteFunc(s.Pairs, func(p quarry.DocumentSetPair) bool { _, ok := slices.BinarySearch(seen, p.ID); return !ok })
		}
		return err
	})
	if err != nil {
		return nil, err
	}
	allowed := c.CanSeeDocumentSet
	if editable {
		allowed = c.CanEditDocumentSet
	}
	return slices.DeleteFunc(sets, func(s *quarry.DocumentSet) bool { return !allowed(s) }), nil
}

// DocumentSetsArePublic reports whether every pair of the sets ids is
// public (quarry.DocumentSetsPublic), of those c may see: an id of a set
// that does not exist, or that c may not see, counts as a set of no pair,
// as Onyx counts an id of no set.
func (db *DB) DocumentSetsArePublic(ctx context.Context, c *quarry.Caller, ids []int64) (bool, error) {
	var sets []*quarry.DocumentSet
	err := db.snapshot(ctx, func(q querier) error {
		return inChunks(dedupe(ids), "s.id", func(in string, args []any) error {
			some, err := documentSets(ctx, q, in, args...)
			sets = append(sets, some...)
			return err
		})
	})
	if err != nil {
		return false, err
	}
	return quarry.DocumentSetsPublic(slices.DeleteFunc(sets, func(s *quarry.DocumentSet) bool { return !c.CanSeeDocumentSet(s) })), nil
}

// CreateDocumentSet makes set in for c and returns its id. See
// writeDocumentSet for the checks, in one transaction.
func (db *DB) CreateDocumentSet(ctx context.Context, c *quarry.Caller, in quarry.DocumentSetInput) (int64, error) {
	in.ID = 0
	err := db.update(ctx, func(tx *Tx) error { return tx.writeDocumentSet(ctx, c, nil, &in) })
	return in.ID, err
}

// UpdateDocumentSet makes set in.ID what in says, whole (Onyx's
// DocumentSetUpdateRequest replaces every field): a set c may not see is
// not found (404), one it may not change is refused (403), then the
// checks of writeDocumentSet, in one transaction.
func (db *DB) UpdateDocumentSet(ctx context.Context, c *quarry.Caller, in quarry.DocumentSetInput) error {
	return db.update(ctx, func(tx *Tx) error {
		old, err := tx.editableDocumentSet(ctx, c, in.ID)
		if err != nil {
			return err
		}
		return tx.writeDocumentSet(ctx, c, old, &in)
	})
}

// DeleteDocumentSet deletes set id, with its pairs, people and groups: a
// set c may not see is not found (404), one it may not change is refused
// (403), one an assistant that is not deleted searches is refused
// (quarry.ErrDocumentSetInUse), so that no assistant loses its last set
// and searches everything its person may read.
func (db *DB) DeleteDocumentSet(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		if _, err := tx.editableDocumentSet(ctx, c, id); err != nil {
			return err
		}
		var using int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM persona_document_sets x JOIN personas p ON p.id = x.persona_id
			WHERE x.document_set_id = $1 AND NOT p.deleted`, id).Scan(&using); err != nil {
			return err
		}
		if using > 0 {
			return quarry.ErrDocumentSetInUse(using)
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM document_sets WHERE id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "document_set.delete", "document_set", id, nil)
	})
}

// editableDocumentSet returns set id, locked for the rest of tx on
// PostgreSQL, if c may see it (else ErrDocumentSetNotFound) and change it
// (else quarry.Caller.CheckEditDocumentSet's refusal).
func (tx *Tx) editableDocumentSet(ctx context.Context, c *quarry.Caller, id int64) (*quarry.DocumentSet, error) {
	var one int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM document_sets WHERE id = $1`+tx.db.forUpdate(), id).Scan(&one)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, quarry.ErrDocumentSetNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	s, err := documentSet(ctx, tx, id)
	if err != nil {
		return nil, err
	}
	if !c.CanSeeDocumentSet(s) {
		return nil, quarry.ErrDocumentSetNotFound(id)
	}
	return s, c.CheckEditDocumentSet(s)
}

// writeDocumentSet writes set in for c: a new one when old is nil (in.ID
// is then set), else over old. Checks, in order: in's own
// (quarry.DocumentSetInput.Check, 400); its groups exist and are not
// default ones (400); the sharing rules (CheckDocumentSetSharing, 400 or
// 403); its people exist (404, as for a group's); its pairs exist, are
// ones c sees and may be in the set (CheckPairs, 400); its name is no
// other set's (409). The audit entry names the fields that changed.
func (tx *Tx) writeDocumentSet(ctx context.Context, c *quarry.Caller, old *quarry.DocumentSet, in *quarry.DocumentSetInput) error {
	if err := in.Check(); err != nil {
		return err
	}
	if err := tx.checkGroupsExist(ctx, in.Groups); err != nil {
		return err
	}
	if err := c.CheckDocumentSetSharing(old, in); err != nil {
		return err
	}
	if err := tx.checkUsersExist(ctx, in.Users); err != nil {
		return err
	}
	ids := slices.Clone(in.PairIDs)
	if old != nil {
		for _, p := range old.Pairs {
			ids = append(ids, p.ID)
		}
	}
	pairs, err := tx.pairsShared(ctx, ids)
	if err != nil {
		return err
	}
	if old != nil {
		in.KeepUnseenPairs(c, old, pairs)
	}
	if err := in.CheckPairs(c, old, pairs); err != nil {
		return err
	}
	var other int64
	err = tx.QueryRowContext(ctx, `SELECT id FROM document_sets WHERE name = $1 AND id <> $2`, in.Name, in.ID).Scan(&other)
	if err == nil {
		return quarry.ErrDocumentSetTaken(in.Name)
	}
	if !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	action := "document_set.update"
	if old == nil {
		action = "document_set.create"
		if err := tx.QueryRowContext(ctx, `INSERT INTO document_sets (name, description, user_id, is_public, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $5) RETURNING id`, in.Name, in.Description, c.ID, in.IsPublic, tx.now.Micros()).Scan(&in.ID); err != nil {
			return err
		}
	} else {
		if _, err := tx.ExecContext(ctx, `UPDATE document_sets SET name = $1, description = $2, is_public = $3, updated_at = $4 WHERE id = $5`,
			in.Name, in.Description, in.IsPublic, tx.now.Micros(), in.ID); err != nil {
			return err
		}
		for _, table := range []string{"document_set_pairs", "document_set_users", "document_set_groups"} {
			if _, err := tx.ExecContext(ctx, `DELETE FROM `+table+` WHERE document_set_id = $1`, in.ID); err != nil {
				return err
			}
		}
	}
	for _, rows := range []struct {
		table, from string
		ids         []any
	}{
		{"document_set_pairs (document_set_id, cc_pair_id)", "cc_pairs", anys(in.PairIDs)},
		{"document_set_users (document_set_id, user_id)", "users", anys(in.Users)},
		{"document_set_groups (document_set_id, group_id)", "user_groups", anys(in.Groups)},
	} {
		err := inChunks(rows.ids, "id", func(cond string, args []any) error {
			args = append(args, in.ID)
			_, err := tx.ExecContext(ctx, fmt.Sprintf(`INSERT INTO %s SELECT CAST($%d AS BIGINT), id FROM %s WHERE %s`, rows.table, len(args), rows.from, cond), args...)
			return err
		})
		if err != nil {
			return err
		}
	}
	return tx.audit(ctx, c, action, "document_set", in.ID, quarry.DocumentSetChangedFields(old, in))
}

// pairsShared returns the pairs ids (each once) that exist, by id, with
// their groups, locked against change for the rest of tx on PostgreSQL
// (FOR SHARE: a pair's sharing cannot change under the checks of a set
// that holds it): two statements a few hundred pairs at a time.
func (tx *Tx) pairsShared(ctx context.Context, ids []int64) (map[int64]*quarry.CCPair, error) {
	lock := ""
	if tx.db.dialect == Postgres {
		lock = " FOR SHARE"
	}
	pairs := make(map[int64]*quarry.CCPair, len(ids))
	err := inChunks(dedupe(ids), "id", func(in string, args []any) error {
		some, err := queryAll(ctx, tx, func(r interface{ Scan(...any) error }) (*quarry.CCPair, error) {
			p := &quarry.CCPair{Groups: []int64{}}
			return p, r.Scan(&p.ID, &p.Name, &p.AccessType)
		}, `SELECT id, name, access_type FROM cc_pairs WHERE `+in+` ORDER BY id`+lock, args...)
		for _, p := range some {
			pairs[p.ID] = p
		}
		if err != nil {
			return err
		}
		return eachInts(ctx, tx, `SELECT cc_pair_id, group_id FROM cc_pair_groups WHERE cc_pair_id IN (SELECT id FROM cc_pairs WHERE `+in+
			`) ORDER BY cc_pair_id, group_id`, args, func(p, g int64) { pairs[p].Groups = append(pairs[p].Groups, g) })
	})
	return pairs, err
}

// CheckDocumentSetNames refuses a search of c narrowed to the sets named
// names when some name is of no set c may see
// (quarry.Caller.CheckDocumentSetNames): what chat asks before an answer
// begins, as the search itself does (setPairs).
func (db *DB) CheckDocumentSetNames(ctx context.Context, c *quarry.Caller, names []string) error {
	if len(names) == 0 {
		return nil
	}
	f, err := quarry.SearchFilters{DocumentSets: names}.Normalized()
	if err != nil {
		return err
	}
	sets, _, err := searchSets(ctx, db.read, f.DocumentSets, nil)
	if err != nil {
		return err
	}
	_, err = c.CheckDocumentSetNames(f.DocumentSets, sets)
	return err
}

// setPairs returns the pairs a search of c narrowed by f's sets may read
// documents of, in snapshot q: the pairs of the sets f names (their
// union; with both names and ids, those of the named sets that are also
// of the sets of ids, so that an assistant's sets bound what a search of
// its chats names), nil when f names none. Sets named by name must each be one c
// may see (quarry.Caller.CheckDocumentSetNames, Onyx's 403); sets named
// by id are an assistant's, whose sets were checked when they were given
// it. The search then intersects them with the pairs c may read
// (searchPairs): a set never widens what c reads. One statement, whatever
// the sets (searchSets).
func setPairs(ctx context.Context, q querier, c *quarry.Caller, f quarry.SearchFilters) (map[int64]bool, error) {
	if len(f.DocumentSets) == 0 && len(f.DocumentSetIDs) == 0 {
		return nil, nil
	}
	named, byID, err := searchSets(ctx, q, f.DocumentSets, f.DocumentSetIDs)
	if err != nil {
		return nil, err
	}
	pairsOf := func(sets []*quarry.DocumentSet) map[int64]bool {
		out := map[int64]bool{}
		for _, s := range sets {
			for _, p := range s.Pairs {
				out[p.ID] = true
			}
		}
		return out
	}
	out := pairsOf(byID)
	if len(f.DocumentSets) > 0 {
		seen, err := c.CheckDocumentSetNames(f.DocumentSets, named)
		if err != nil {
			return nil, err
		}
		var sets []*quarry.DocumentSet
		for _, s := range seen {
			sets = append(sets, s)
		}
		byName := pairsOf(sets)
		if len(f.DocumentSetIDs) == 0 {
			return byName, nil
		}
		// Both: the sets the search names, within the assistant's.
		for id := range out {
			if !byName[id] {
				delete(out, id)
			}
		}
	}
	return out, nil
}

// searchSets returns the sets of names and those of ids, as a search needs
// them (quarry.Caller.CanSeeDocumentSet's facts, and their pairs' ids
// alone), in one statement: each set with its pairs (or none), then with
// its groups, then with its people, each read through its table's key.
func searchSets(ctx context.Context, q querier, names []string, ids []int64) (named, byID []*quarry.DocumentSet, err error) {
	names, ids = dedupe(names), dedupe(ids)
	var args []any
	cond := func() string {
		var conds []string
		if len(names) > 0 {
			conds = append(conds, sqlIn("s.name", anys(names), &args))
		}
		if len(ids) > 0 {
			conds = append(conds, sqlIn("s.id", anys(ids), &args))
		}
		return strings.Join(conds, " OR ")
	}
	rows, err := q.QueryContext(ctx, `SELECT s.id, s.name, s.user_id, s.is_public, 'p', x.cc_pair_id, ''
			FROM document_sets s LEFT JOIN document_set_pairs x ON x.document_set_id = s.id WHERE `+cond()+`
		UNION ALL SELECT s.id, s.name, s.user_id, s.is_public, 'g', x.group_id, ''
			FROM document_sets s JOIN document_set_groups x ON x.document_set_id = s.id WHERE `+cond()+`
		UNION ALL SELECT s.id, s.name, s.user_id, s.is_public, 'u', 0, x.user_id
			FROM document_sets s JOIN document_set_users x ON x.document_set_id = s.id WHERE `+cond(), args...)
	if err != nil {
		return nil, nil, mapError(err)
	}
	bySet := map[int64]*quarry.DocumentSet{}
	var sets []*quarry.DocumentSet
	for rows.Next() {
		var (
			x          quarry.DocumentSet
			kind, user string
			n          sql.NullInt64
		)
		if err := rows.Scan(&x.ID, &x.Name, &x.OwnerID, &x.IsPublic, &kind, &n, &user); err != nil {
			rows.Close()
			return nil, nil, mapError(err)
		}
		s := bySet[x.ID]
		if s == nil {
			s = &x
			s.Pairs, s.Users, s.Groups = []quarry.DocumentSetPair{}, []string{}, []int64{}
			bySet[x.ID] = s
			sets = append(sets, s)
		}
		switch {
		case kind == "p" && n.Valid:
			s.Pairs = append(s.Pairs, quarry.DocumentSetPair{PairRef: quarry.PairRef{ID: n.Int64}})
		case kind == "g":
			s.Groups = append(s.Groups, n.Int64)
		case kind == "u":
			s.Users = append(s.Users, user)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, nil, err
	}
	for _, s := range sets {
		if slices.Contains(names, s.Name) {
			named = append(named, s)
		}
		if slices.Contains(ids, s.ID) {
			byID = append(byID, s)
		}
	}
	return named, byID, nil
}
