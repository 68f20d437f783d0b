package store

import (
	"context"
	"database/sql"
	"encoding/json"
	"errors"
	"slices"

	"github.com/quarryhq/quarry"
)

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
		sharing := in.Sharing(quarry.ConnectorSharing{AccessType: quarry.AccessPrivate})
		if err := tx.checkConnectorInput(ctx, c, in, sharing, 0); err != nil {
			return err
		}
		err := tx.QueryRowContext(ctx, `INSERT INTO connectors (name, source, input_type, config, refresh_freq, prune_freq,
				indexing_start, access_type, creator_id, created_at, updated_at)
			VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $10) RETURNING id`,
			in.Name, in.Source, in.InputType, string(in.Config), in.RefreshFreq, in.PruneFreq,
			timeMicros(in.IndexingStart), sharing.AccessType, c.ID, tx.now.Micros()).Scan(&id)
		if err != nil {
			return err
		}
		if err := tx.setConnectorGroups(ctx, id, sharing.Groups); err != nil {
			return err
		}
		return tx.audit(ctx, c, "connector.create", "connector", id, connectorFields)
	})
	return id, err
}

var connectorFields = []string{"name", "source", "input_type", "connector_specific_config", "refresh_freq", "prune_freq", "indexing_start",
	"access_type", "groups"}

// setConnectorGroups replaces the groups connector id is shared with.
func (tx *Tx) setConnectorGroups(ctx context.Context, id int64, groups []int64) error {
	if _, err := tx.ExecContext(ctx, `DELETE FROM connector_groups WHERE connector_id = $1`, id); err != nil {
		return err
	}
	for _, g := range dedupe(groups) {
		if _, err := tx.ExecContext(ctx, `INSERT INTO connector_groups (connector_id, group_id) VALUES ($1, $2)`, id, g); err != nil {
			return err
		}
	}
	return nil
}

// connectorSharing returns who made connector id and how it is shared,
// with its source, or a not-found error.
func connectorSharing(ctx context.Context, tx querier, id int64) (quarry.DocumentSource, quarry.ConnectorSharing, error) {
	var (
		source quarry.DocumentSource
		s      quarry.ConnectorSharing
	)
	err := tx.QueryRowContext(ctx, `SELECT source, creator_id, access_type FROM connectors WHERE id = $1`, id).Scan(&source, &s.CreatorID, &s.AccessType)
	if errors.Is(err, sql.ErrNoRows) {
		return "", s, connectorNotFound(id)
	}
	if err != nil {
		return "", s, err
	}
	s.Groups, err = queryInts(ctx, tx, `SELECT group_id FROM connector_groups WHERE connector_id = $1 ORDER BY group_id`, id)
	return source, s, err
}

// connectorPairs returns the cc-pairs of connector id, with their groups,
// ascending by id.
func connectorPairs(ctx context.Context, tx querier, id int64) ([]*quarry.CCPair, error) {
	rows, err := tx.QueryContext(ctx, `SELECT p.id, p.credential_id, p.access_type, p.creator_id, pg.group_id FROM cc_pairs p
		LEFT JOIN cc_pair_groups pg ON pg.cc_pair_id = p.id WHERE p.connector_id = $1 ORDER BY p.id, pg.group_id`, id)
	if err != nil {
		return nil, err
	}
	var pairs []*quarry.CCPair
	for rows.Next() {
		var (
			p     quarry.CCPair
			group sql.NullInt64
		)
		if err := rows.Scan(&p.ID, &p.CredentialID, &p.AccessType, &p.CreatorID, &group); err != nil {
			rows.Close()
			return nil, err
		}
		if n := len(pairs); n == 0 || pairs[n-1].ID != p.ID {
			p.ConnectorID = id
			pairs = append(pairs, &p)
		}
		if group.Valid {
			last := pairs[len(pairs)-1]
			last.Groups = append(last.Groups, group.Int64)
		}
	}
	return pairs, closeRows(rows)
}

// checkConnectorInput applies the sharing rules to sharing, how a connector
// being created (self 0) or changed would be shared, and the uniqueness of
// name+source to in.
func (tx *Tx) checkConnectorInput(ctx context.Context, c *quarry.Caller, in quarry.ConnectorInput, sharing quarry.ConnectorSharing, self int64) error {
	if err := tx.checkGroupsExist(ctx, sharing.Groups); err != nil {
		return err
	}
	if err := c.CheckSharing(sharing.Groups, sharing.AccessType == quarry.AccessPublic); err != nil {
		return err
	}
	var other int64
	err := tx.QueryRowContext(ctx, `SELECT id FROM connectors WHERE name = $1 AND source = $2`, in.Name, in.Source).Scan(&other)
	if err == nil && other != self {
		return quarry.Errorf(quarry.ECONFLICT, "Connector by this name already exists, duplicate naming not allowed.")
	}
	if err != nil && !errors.Is(err, sql.ErrNoRows) {
		return err
	}
	return tx.checkConnectorFiles(ctx, c, in, self)
}

// checkConnectorFiles refuses a file connector's configuration that names
// files c did not upload (quarry.ConnectorFiles), unless connector self
// named them already or c manages every connector: a file's id, which a
// connector's configuration shows to whoever sees the connector, must not
// let another curator index the file into a pair of theirs.
func (tx *Tx) checkConnectorFiles(ctx context.Context, c *quarry.Caller, in quarry.ConnectorInput, self int64) error {
	ids := quarry.ConnectorFiles(in.Source, in.Config)
	if len(ids) == 0 || c.ManagesConnectors() {
		return nil
	}
	named := map[string]bool{}
	if self != 0 {
		var source, config string
		if err := tx.QueryRowContext(ctx, `SELECT source, config FROM connectors WHERE id = $1`, self).Scan(&source, &config); err != nil {
			return err
		}
		for _, id := range quarry.ConnectorFiles(quarry.DocumentSource(source), json.RawMessage(config)) {
			named[id] = true
		}
	}
	for _, id := range ids {
		if named[id] {
			continue
		}
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM files WHERE id = $1 AND created_by = $2`, id, c.ID).Scan(&n); err != nil {
			return err
		}
		if n == 0 {
			return quarry.Errorf(quarry.EINVALID, "The configuration names a file you did not upload (%s): upload it, then name the id the upload answers", quarry.ClipText(id, 64))
		}
	}
	return nil
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

// connectors loads one visible connector (id > 0) or all, with the
// credentials of the pairs c sees and the connectors' sharing, in three
// statements.
func (db *DB) connectors(ctx context.Context, q querier, c *quarry.Caller, id int64) ([]*quarry.Connector, error) {
	args := idRange(id)
	rows, err := q.QueryContext(ctx, `SELECT `+connectorColumns+`, c.access_type FROM connectors c
		WHERE c.id BETWEEN $1 AND $2 AND `+connectorsVisibleTo(c, "c", &args)+` ORDER BY c.id`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.Connector{}
	byID := map[int64]*quarry.Connector{}
	for rows.Next() {
		var (
			r      connectorRow
			access quarry.AccessType
		)
		if err := rows.Scan(append(r.dest(), &access)...); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		conn := r.connector()
		conn.AccessType, conn.Groups = access, []int64{}
		out = append(out, conn)
		byID[conn.ID] = conn
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	args = idRange(id)
	err = eachInts(ctx, q, `SELECT p.connector_id, p.credential_id FROM cc_pairs p
		WHERE p.connector_id BETWEEN $1 AND $2 AND `+pairsVisibleTo(c, "p", &args)+` ORDER BY p.connector_id, p.credential_id`,
		args, func(conn, cred int64) {
			if c := byID[conn]; c != nil {
				c.CredentialIDs = append(c.CredentialIDs, cred)
			}
		})
	if err != nil {
		return nil, err
	}
	return out, eachInts(ctx, q, `SELECT cg.connector_id, cg.group_id FROM connector_groups cg
		WHERE cg.connector_id BETWEEN $1 AND $2 ORDER BY cg.connector_id, cg.group_id`, idRange(id), func(conn, group int64) {
		if c := byID[conn]; c != nil {
			c.Groups = append(c.Groups, group)
		}
	})
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
		_, sharing, err := connectorSharing(ctx, tx, id)
		if err != nil {
			return err
		}
		pairs, err := connectorPairs(ctx, tx, id)
		if err != nil {
			return err
		}
		if err := c.CheckChangeConnector(sharing, pairs); err != nil {
			return err
		}
		next := in.Sharing(sharing)
		if err := tx.checkConnectorInput(ctx, c, in, next, id); err != nil {
			return err
		}
		if err := tx.lockConnectorPairs(ctx, id); err != nil {
			return err
		}
		_, err = tx.ExecContext(ctx, `UPDATE connectors SET name = $1, source = $2, input_type = $3, config = $4, refresh_freq = $5,
				prune_freq = $6, indexing_start = $7, access_type = $8, updated_at = $9 WHERE id = $10`,
			in.Name, in.Source, in.InputType, string(in.Config), in.RefreshFreq, in.PruneFreq,
			timeMicros(in.IndexingStart), next.AccessType, later(tx.now, old[0].UpdatedAt).Micros(), id)
		if err != nil {
			return err
		}
		if in.Groups != nil {
			if err := tx.setConnectorGroups(ctx, id, next.Groups); err != nil {
				return err
			}
		}
		tx.changed(ChangeConnector, id)
		fields := in.ChangedFields(old[0], sharing, next)
		// An edit may let its INVALID pairs run; its source, refresh
		// frequency or indexing start may change when its pairs are next
		// due.
		ids := make([]int64, len(pairs))
		for i, p := range pairs {
			ids[i] = p.ID
		}
		if err := tx.revalidate(ctx, ids); err != nil {
			return err
		}
		if quarry.SourceChangedFields(fields) {
			if err := tx.forgetSyncs(ctx, ids); err != nil {
				return err
			}
		}
		if err := tx.rescheduleConnector(ctx, id); err != nil {
			return err
		}
		if err := tx.audit(ctx, c, "connector.update", "connector", id, fields); err != nil {
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

// DeleteConnector deletes connector id, which c must see (404) and may
// delete (403, quarry.Caller.CanDeleteConnector), and which no cc-pair may
// use (409).
func (db *DB) DeleteConnector(ctx context.Context, c *quarry.Caller, id int64) error {
	return db.update(ctx, func(tx *Tx) error {
		_, sharing, err := connectorSharing(ctx, tx, id)
		if err != nil {
			return err
		}
		pairs, err := connectorPairs(ctx, tx, id)
		if err != nil {
			return err
		}
		if !c.CanSeeConnector(sharing, slices.ContainsFunc(pairs, c.CanSeePair)) {
			return connectorNotFound(id)
		}
		if err := c.CheckDeleteConnector(sharing); err != nil {
			return err
		}
		if err := quarry.CheckConnectorUnused(id, len(pairs)); err != nil {
			return err
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM connectors WHERE id = $1`, id); err != nil {
			return err
		}
		return tx.audit(ctx, c, "connector.delete", "connector", id, nil)
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
