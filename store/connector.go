package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/quarryhq/quarry"
)

// pairVisible is the condition under which the caller may see cc-pair p:
// admins ($2) see every pair; curators the public and sync pairs and those
// shared with a group they ($1) are a member of.
const pairVisible = `($2 OR p.access_type IN ('public', 'sync') OR EXISTS (
	SELECT 1 FROM cc_pair_groups pg JOIN user_group_members m ON m.group_id = pg.group_id
	WHERE pg.cc_pair_id = p.id AND m.user_id = $1))`

// connectorVisible is the condition under which the caller may see
// connector c: admins see all, curators those they created and those with a
// cc-pair they can see.
const connectorVisible = `($2 OR c.creator_id = $1 OR EXISTS (
	SELECT 1 FROM cc_pairs p WHERE p.connector_id = c.id AND ` + pairVisible + `))`

const connectorColumns = `c.id, c.name, c.source, c.input_type, c.config, c.refresh_freq, c.prune_freq,
	c.indexing_start, c.created_at, c.updated_at`

func connectorNotFound(id int64) error {
	return quarry.Errorf(quarry.ENOTFOUND, "Connector %d does not exist", id)
}

// connectorRow receives the connectorColumns of one row.
type connectorRow struct {
	c                quarry.Connector
	config           sql.RawBytes // Only valid until the next Scan: connector copies it.
	indexing         sql.NullInt64
	created, updated int64
}

func (r *connectorRow) dest() []any {
	return []any{&r.c.ID, &r.c.Name, &r.c.Source, &r.c.InputType, &r.config, &r.c.RefreshFreq, &r.c.PruneFreq,
		&r.indexing, &r.created, &r.updated}
}

func (r *connectorRow) connector() *quarry.Connector {
	c := r.c
	c.Config = append([]byte(nil), r.config...)
	if r.indexing.Valid {
		t := quarry.TimeFromMicros(r.indexing.Int64)
		c.IndexingStart = &t
	}
	c.CreatedAt, c.UpdatedAt = quarry.TimeFromMicros(r.created), quarry.TimeFromMicros(r.updated)
	c.CredentialIDs = []int64{}
	return &c
}

func scanConnector(s interface{ Scan(...any) error }) (*quarry.Connector, error) {
	var r connectorRow
	if err := s.Scan(r.dest()...); err != nil {
		return nil, err
	}
	return r.connector(), nil
}

// CreateConnector creates a connector and returns its id.
func (db *DB) CreateConnector(ctx context.Context, c *quarry.Caller, in quarry.ConnectorInput) (int64, error) {
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		if err := tx.checkConnectorInput(c, in, 0); err != nil {
			return err
		}
		err := tx.queryRow(`INSERT INTO connectors (name, source, input_type, config, refresh_freq, prune_freq,
				indexing_start, creator_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $9) RETURNING id`,
			in.Name, in.Source, in.InputType, string(in.Config), in.RefreshFreq, in.PruneFreq,
			timeMicros(in.IndexingStart), c.ID, tx.now.Micros()).Scan(&id)
		if err != nil {
			return err
		}
		tx.touch()
		return tx.audit(c, "connector.create", "connector", id, connectorFields)
	})
	return id, err
}

var connectorFields = []string{"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start"}

// checkConnectorInput applies the sharing rules and the uniqueness of
// name+source to a connector being created (self 0) or changed.
func (tx *Tx) checkConnectorInput(c *quarry.Caller, in quarry.ConnectorInput, self int64) error {
	if err := tx.checkGroupsExist(in.Groups); err != nil {
		return err
	}
	if err := c.CheckSharing(in.Groups, in.AccessType == quarry.AccessPublic); err != nil {
		return err
	}
	var other int64
	err := tx.queryRow(`SELECT id FROM connectors WHERE name = $1 AND source = $2`, in.Name, in.Source).Scan(&other)
	if err == nil && other != self {
		return quarry.Errorf(quarry.ECONFLICT, "Connector by this name already exists, duplicate naming not allowed.")
	}
	if errors.Is(err, sql.ErrNoRows) {
		return nil
	}
	return err
}

// Connector returns connector id if c may see it, with the credentials of
// the cc-pairs c may see.
func (db *DB) Connector(ctx context.Context, c *quarry.Caller, id int64) (*quarry.Connector, error) {
	cs, err := db.connectors(ctx, db.read, c, id)
	if err != nil {
		return nil, err
	}
	if len(cs) == 0 {
		return nil, connectorNotFound(id)
	}
	return cs[0], nil
}

// Connectors returns the connectors c may see, ascending by id.
func (db *DB) Connectors(ctx context.Context, c *quarry.Caller) ([]*quarry.Connector, error) {
	return db.connectors(ctx, db.read, c, 0)
}

// connectors loads one visible connector (id > 0) or all, in two statements.
func (db *DB) connectors(ctx context.Context, q queryer, c *quarry.Caller, id int64) ([]*quarry.Connector, error) {
	rows, err := q.QueryContext(ctx, `SELECT `+connectorColumns+` FROM connectors c
		WHERE c.id BETWEEN $3 AND $4 AND `+connectorVisible+` ORDER BY c.id`, append([]any{c.ID, c.IsAdmin()}, idRange(id)...)...)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Connector{}
	byID := map[int64]*quarry.Connector{}
	for rows.Next() {
		conn, err := scanConnector(rows)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		out = append(out, conn)
		byID[conn.ID] = conn
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = q.QueryContext(ctx, `SELECT p.connector_id, p.credential_id FROM cc_pairs p
		WHERE p.connector_id BETWEEN $3 AND $4 AND `+pairVisible+` ORDER BY p.connector_id, p.credential_id`,
		append([]any{c.ID, c.IsAdmin()}, idRange(id)...)...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var cid, kid int64
		if err := rows.Scan(&cid, &kid); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if conn := byID[cid]; conn != nil {
			conn.CredentialIDs = append(conn.CredentialIDs, kid)
		}
	}
	return out, closeRows(rows)
}

// canChangeConnector reports whether c may change connector id: admins
// always; curators when they created it, or when it has cc-pairs and every
// one of them is shared only with groups they curate.
func (tx *Tx) canChangeConnector(c *quarry.Caller, id int64) (bool, error) {
	if c.IsAdmin() {
		return true, nil
	}
	var creator sql.NullString
	if err := tx.queryRow(`SELECT creator_id FROM connectors WHERE id = $1`, id).Scan(&creator); err != nil {
		return false, err
	}
	if creator.Valid && creator.String == c.ID {
		return true, nil
	}
	rows, err := tx.query(`SELECT p.id, pg.group_id FROM cc_pairs p LEFT JOIN cc_pair_groups pg ON pg.cc_pair_id = p.id
		WHERE p.connector_id = $1`, id)
	if err != nil {
		return false, err
	}
	n := 0
	ok := true
	for rows.Next() {
		var pid int64
		var gid sql.NullInt64
		if err := rows.Scan(&pid, &gid); err != nil {
			rows.Close()
			return false, err
		}
		n++
		ok = ok && gid.Valid && c.Curates(gid.Int64)
	}
	if err := closeRows(rows); err != nil {
		return false, err
	}
	return n > 0 && ok, nil
}

// UpdateConnector replaces the fields of connector id.
func (db *DB) UpdateConnector(ctx context.Context, c *quarry.Caller, id int64, in quarry.ConnectorInput) (*quarry.Connector, error) {
	var conn *quarry.Connector
	err := db.update(ctx, func(tx *Tx) error {
		old, err := db.connectors(ctx, tx, c, id)
		if err != nil {
			return err
		}
		if len(old) == 0 {
			return connectorNotFound(id)
		}
		ok, err := tx.canChangeConnector(c, id)
		if err != nil {
			return err
		}
		if !ok {
			return quarry.Errorf(quarry.EFORBIDDEN, "Curators cannot control groups they don't curate")
		}
		if err := tx.checkConnectorInput(c, in, id); err != nil {
			return err
		}
		_, err = tx.exec(`UPDATE connectors SET name = $1, source = $2, input_type = $3, config = $4, refresh_freq = $5,
				prune_freq = $6, indexing_start = $7, updated_at = $8 WHERE id = $9`,
			in.Name, in.Source, in.InputType, string(in.Config), in.RefreshFreq, in.PruneFreq,
			timeMicros(in.IndexingStart), later(tx.now, old[0].UpdatedAt).Micros(), id)
		if err != nil {
			return err
		}
		tx.touch()
		if err := tx.audit(c, "connector.update", "connector", id, changedConnectorFields(old[0], in)); err != nil {
			return err
		}
		cs, err := db.connectors(ctx, tx, c, id)
		if err != nil {
			return err
		}
		conn = cs[0]
		return nil
	})
	return conn, err
}

func changedConnectorFields(old *quarry.Connector, in quarry.ConnectorInput) []string {
	var f []string
	add := func(changed bool, name string) {
		if changed {
			f = append(f, name)
		}
	}
	add(old.Name != in.Name, "name")
	add(old.Source != in.Source, "source")
	add(old.InputType != in.InputType, "input_type")
	add(!quarry.SameJSON(old.Config, in.Config), "connector_specific_config")
	add(!eqPtr(old.RefreshFreq, in.RefreshFreq), "refresh_freq")
	add(!eqPtr(old.PruneFreq, in.PruneFreq), "prune_freq")
	add(!eqPtr(timeMicros(old.IndexingStart), timeMicros(in.IndexingStart)), "indexing_start")
	return f
}

// DeleteConnector deletes connector id, which no cc-pair may use.
func (db *DB) DeleteConnector(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		var n int
		if err := tx.queryRow(`SELECT (SELECT COUNT(*) FROM cc_pairs WHERE connector_id = $1) FROM connectors WHERE id = $1`, id).Scan(&n); err != nil {
			if errors.Is(err, sql.ErrNoRows) {
				return connectorNotFound(id)
			}
			return err
		}
		if n > 0 {
			return quarry.Errorf(quarry.ECONFLICT, "Connector %d is still used by %d cc-pair(s); remove them first", id, n)
		}
		if _, err := tx.exec(`DELETE FROM connectors WHERE id = $1`, id); err != nil {
			return err
		}
		tx.touch()
		return tx.audit(c, "connector.delete", "connector", id, nil)
	})
}

// timeMicros returns t in microseconds, or nil.
func timeMicros(t *quarry.Time) *int64 {
	if t == nil {
		return nil
	}
	us := t.Micros()
	return &us
}

// later returns now, or one microsecond after prev if now is not after it,
// so that time_updated always advances.
func later(now, prev quarry.Time) quarry.Time {
	if now.Micros() > prev.Micros() {
		return now
	}
	return quarry.TimeFromMicros(prev.Micros() + 1)
}

func eqPtr[T comparable](a, b *T) bool {
	if a == nil || b == nil {
		return a == b
	}
	return *a == *b
}
