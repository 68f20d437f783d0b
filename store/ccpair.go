package store

import (
	"context"
	"database/sql"
	"errors"
	"fmt"
	"slices"

	"github.com/quarryhq/quarry"
)

// CreateCCPair pairs connector connectorID with credential credentialID and
// shares the pair with in.Groups. It returns the new pair's id.
func (db *DB) CreateCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64, in quarry.CCPairInput) (int64, error) {
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		source, sharing, err := connectorSharing(ctx, tx, connectorID)
		if err != nil {
			return err
		}
		pairs, err := connectorPairs(ctx, tx, connectorID)
		if err != nil {
			return err
		}
		if !c.CanSeeConnector(sharing, slices.ContainsFunc(pairs, c.CanSeePair)) {
			return connectorNotFound(connectorID)
		}
		k, err := db.credential(ctx, tx, credentialID)
		if err != nil {
			return err
		}
		if !c.CanUseCredential(&k.Credential) {
			return credentialNotFound(credentialID)
		}
		if err := quarry.CheckPairSources(connectorID, source, &k.Credential); err != nil {
			return err
		}
		groups := dedupe(in.Groups)
		if err := tx.checkGroupsExist(ctx, groups); err != nil {
			return err
		}
		if err := c.CheckSharing(groups, in.AccessType == quarry.AccessPublic); err != nil {
			return err
		}
		var existing int64
		err = tx.QueryRowContext(ctx, `SELECT id FROM cc_pairs WHERE connector_id = $1 AND credential_id = $2`, connectorID, credentialID).Scan(&existing)
		if err == nil {
			return quarry.Errorf(quarry.ECONFLICT, "Connector %d already has Credential %d", connectorID, credentialID)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = tx.QueryRowContext(ctx, `INSERT INTO cc_pairs (name, connector_id, credential_id, access_type, creator_id, created_at, status)
			VALUES ($1, $2, $3, $4, $5, $6, $7) RETURNING id`,
			in.Name, connectorID, credentialID, in.AccessType, c.ID, tx.now.Micros(), quarry.CCPairScheduled).Scan(&id)
		if err != nil {
			return err
		}
		if err := tx.reschedule(ctx, id); err != nil {
			return err
		}
		for _, g := range groups {
			if _, err := tx.ExecContext(ctx, `INSERT INTO cc_pair_groups (cc_pair_id, group_id) VALUES ($1, $2)`, id, g); err != nil {
				return err
			}
		}
		tx.changed(ChangePair, id)
		return tx.audit(ctx, c, "cc_pair.create", "cc_pair", id, []string{"name", "access_type", "groups"})
	})
	return id, err
}

// DeleteCCPair removes the pair of connector connectorID and credential
// credentialID, if c may see it (404) and remove it (403): see
// quarry.Caller's CanSeePair and CanChangePair.
func (db *DB) DeleteCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64) error {
	return db.update(ctx, func(tx *Tx) error {
		_, err := tx.removePair(ctx, c, connectorID, credentialID,
			quarry.Errorf(quarry.ENOTFOUND, "Connector %d does not have Credential %d", connectorID, credentialID))
		return err
	})
}

// DeleteCCPairCompletely is what Onyx's deletion attempt ends with once its
// background task has removed the pair's documents, which Quarry does not
// have: the pair of connector connectorID and credential credentialID is
// removed under the rules of DeleteCCPair, and its connector with it if it
// was the connector's last pair and c may delete the connector
// (quarry.Caller.CanDeleteConnector: admins and its creator). Any other
// connector stays, without pairs.
func (db *DB) DeleteCCPairCompletely(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64) error {
	return db.update(ctx, func(tx *Tx) error {
		pairs, err := tx.removePair(ctx, c, connectorID, credentialID, quarry.Errorf(quarry.ENOTFOUND,
			"Connector with ID '%d' and credential ID '%d' does not exist. Has it already been deleted?", connectorID, credentialID))
		if err != nil || len(pairs) > 1 {
			return err
		}
		_, sharing, err := connectorSharing(ctx, tx, connectorID)
		if err != nil {
			return err
		}
		if !c.CanDeleteConnector(sharing) {
			return nil
		}
		if _, err := tx.ExecContext(ctx, `DELETE FROM connectors WHERE id = $1`, connectorID); err != nil {
			return err
		}
		return tx.audit(ctx, c, "connector.delete", "connector", connectorID, nil)
	})
}

// removePair removes the pair of connector connectorID and credential
// credentialID for c, and returns the connector's pairs as they were before.
// A pair that does not exist, or that c may not see, fails with notFound.
func (tx *Tx) removePair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64, notFound error) ([]*quarry.CCPair, error) {
	pairs, err := connectorPairs(ctx, tx, connectorID)
	if err != nil {
		return nil, err
	}
	i := slices.IndexFunc(pairs, func(p *quarry.CCPair) bool { return p.CredentialID == credentialID })
	if i < 0 || !c.CanSeePair(pairs[i]) {
		return nil, notFound
	}
	if err := c.CheckChangePair(pairs[i]); err != nil {
		return nil, err
	}
	// Its documents first, through the one way documents are deleted
	// (the foreign key's cascade would delete them unseen).
	if _, err := tx.deleteDocuments(ctx, pairs[i].ID, `TRUE`); err != nil {
		return nil, err
	}
	if _, err := tx.ExecContext(ctx, `DELETE FROM cc_pairs WHERE id = $1`, pairs[i].ID); err != nil {
		return nil, err
	}
	// Its connector and credential may leave the listing with it.
	tx.changed(ChangePair, pairs[i].ID)
	tx.changed(ChangeConnector, connectorID)
	tx.changed(ChangeCredential, credentialID)
	return pairs, tx.audit(ctx, c, "cc_pair.delete", "cc_pair", pairs[i].ID, nil)
}

// UpdateCCPair renames, pauses or resumes cc-pair id for c, who must see it
// (404) and may change it (403, see quarry.Caller.CanChangePair). The check
// of u.IfMatch and the write are one conditional statement. An update that
// changes nothing (pausing a paused pair) writes nothing: the version stays
// and no audit entry is made.
func (db *DB) UpdateCCPair(ctx context.Context, c *quarry.Caller, id int64, u quarry.CCPairUpdate) (*quarry.CCPairInfo, error) {
	return retryRaced(fmt.Sprintf("CC pair %d", id), func() (*quarry.CCPairInfo, error) { return db.updateCCPair(ctx, c, id, u) })
}

func (db *DB) updateCCPair(ctx context.Context, c *quarry.Caller, id int64, u quarry.CCPairUpdate) (*quarry.CCPairInfo, error) {
	var p *quarry.CCPairInfo
	err := db.update(ctx, func(tx *Tx) error {
		old, err := tx.pair(ctx, id)
		if err != nil {
			return err
		}
		if !c.CanSeePair(old) {
			return ccPairNotFound(id)
		}
		if err := c.CheckChangePair(old); err != nil {
			return err
		}
		if err := quarry.CheckVersion(u.IfMatch, old.Version); err != nil {
			return err
		}
		fields := u.ChangedFields(old)
		if len(fields) == 0 { // Pausing a paused pair, say: nothing to do, nor to record.
			p, err = db.ccPair(ctx, tx, c, id)
			return err
		}
		name, status := old.Name, old.Status
		if u.Name != nil {
			name = *u.Name
		}
		if u.Status != nil {
			status = *u.Status
		}
		res, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET name = $1, status = $2, version = version + 1 WHERE id = $3 AND version = $4`,
			name, status, id, old.Version)
		if err := swapped(res, err, u.IfMatch != nil); err != nil {
			return err
		}
		if status != old.Status {
			// A pause stops its live attempt; any change of status may
			// change when it is next due; a resume of an INVALID pair asks
			// for a run.
			if !status.Active() {
				if err := tx.stopAttempts(ctx, id); err != nil {
					return err
				}
			}
			if quarry.RetryOnResume(old.Status, status) {
				if _, err := tx.ExecContext(ctx, `UPDATE cc_pairs SET indexing_trigger = COALESCE(indexing_trigger, $1) WHERE id = $2`,
					quarry.IndexUpdate, id); err != nil {
					return err
				}
			}
			if err := tx.reschedule(ctx, id); err != nil {
				return err
			}
		}
		tx.changed(ChangePair, id)
		if err := tx.audit(ctx, c, "cc_pair.update", "cc_pair", id, fields); err != nil {
			return err
		}
		p, err = db.ccPair(ctx, tx, c, id)
		return err
	})
	return p, err
}

// pair loads cc-pair id with its groups.
func (tx *Tx) pair(ctx context.Context, id int64) (*quarry.CCPair, error) {
	var (
		p       quarry.CCPair
		created int64
	)
	err := tx.QueryRowContext(ctx, `SELECT id, name, connector_id, credential_id, access_type, status, creator_id, created_at, version
		FROM cc_pairs WHERE id = $1`, id).Scan(&p.ID, &p.Name, &p.ConnectorID, &p.CredentialID, &p.AccessType, &p.Status,
		&p.CreatorID, &created, &p.Version)
	if errors.Is(err, sql.ErrNoRows) {
		return nil, ccPairNotFound(id)
	}
	if err != nil {
		return nil, err
	}
	p.CreatedAt = quarry.TimeFromMicros(created)
	p.Groups, err = queryInts(ctx, tx, `SELECT group_id FROM cc_pair_groups WHERE cc_pair_id = $1 ORDER BY group_id`, id)
	return &p, err
}

func ccPairNotFound(id int64) error {
	return quarry.Errorf(quarry.ENOTFOUND, "CC pair %d does not exist", id)
}

// CCPair returns cc-pair id, with its connector, credential and creator's
// email, if c may see it (quarry.Caller.CanSeePair).
func (db *DB) CCPair(ctx context.Context, c *quarry.Caller, id int64) (*quarry.CCPairInfo, error) {
	return db.ccPair(ctx, db.read, c, id)
}

func (db *DB) ccPair(ctx context.Context, q querier, c *quarry.Caller, id int64) (*quarry.CCPairInfo, error) {
	ps, err := db.ccPairInfos(ctx, q, c, "p.id = $1", []any{id})
	if err != nil {
		return nil, err
	}
	if len(ps) == 0 {
		return nil, ccPairNotFound(id)
	}
	return ps[0], nil
}

// ccPairInfos loads the cc-pairs that cond (on alias p, with args) selects
// and c may see, ascending by id, each with its groups, connector (with the
// credentials of the connector's pairs c may see), credential (with its
// groups, decrypted) and creator's email. It runs six statements however
// many pairs there are.
func (db *DB) ccPairInfos(ctx context.Context, q querier, c *quarry.Caller, cond string, args []any) ([]*quarry.CCPairInfo, error) {
	args = slices.Clone(args)
	where := `(` + cond + `) AND ` + pairsVisibleTo(c, "p", &args)
	from := ` FROM cc_pairs p WHERE ` + where
	rows, err := q.QueryContext(ctx, `SELECT p.id, p.name, p.connector_id, p.credential_id, p.access_type, p.status, p.creator_id,
			u.email, p.created_at, p.version
		FROM cc_pairs p LEFT JOIN users u ON u.id = p.creator_id
		WHERE `+where+` ORDER BY p.id`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	out := []*quarry.CCPairInfo{}
	byID := map[int64]*quarry.CCPairInfo{}
	for rows.Next() {
		p := &quarry.CCPairInfo{}
		var created int64
		if err := rows.Scan(&p.ID, &p.Name, &p.ConnectorID, &p.CredentialID, &p.AccessType, &p.Status, &p.CreatorID,
			&p.CreatorEmail, &created, &p.Version); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		p.CreatedAt, p.Groups = quarry.TimeFromMicros(created), []int64{}
		out = append(out, p)
		byID[p.ID] = p
	}
	if err := closeRows(rows); err != nil || len(out) == 0 {
		return out, err
	}
	err = eachInts(ctx, q, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg WHERE pg.cc_pair_id IN (SELECT p.id`+from+`)
		ORDER BY pg.cc_pair_id, pg.group_id`, args, func(pair, group int64) {
		if p := byID[pair]; p != nil {
			p.Groups = append(p.Groups, group)
		}
	})
	if err != nil {
		return nil, err
	}

	// The connectors, with the credentials of their pairs c may see.
	connectors := map[int64]*quarry.Connector{}
	rows, err = q.QueryContext(ctx, `SELECT `+connectorColumns+` FROM connectors c WHERE c.id IN (SELECT p.connector_id`+from+`)`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		conn, err := scanConnector(rows)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		connectors[conn.ID] = conn
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	credArgs := slices.Clone(args)
	err = eachInts(ctx, q, `SELECT v.connector_id, v.credential_id FROM cc_pairs v
		WHERE v.connector_id IN (SELECT p.connector_id`+from+`) AND `+pairsVisibleTo(c, "v", &credArgs)+`
		ORDER BY v.connector_id, v.credential_id`, credArgs, func(conn, cred int64) {
		if c := connectors[conn]; c != nil {
			c.CredentialIDs = append(c.CredentialIDs, cred)
		}
	})
	if err != nil {
		return nil, err
	}

	// The credentials, with their groups.
	credentials := map[int64]*sealedCredential{}
	rows, err = q.QueryContext(ctx, `SELECT `+credentialColumns+` FROM credentials k LEFT JOIN users u ON u.id = k.user_id
		WHERE k.id IN (SELECT p.credential_id`+from+`)`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		k, err := scanCredential(rows)
		if err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		credentials[k.ID] = k
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	err = eachInts(ctx, q, `SELECT cg.credential_id, cg.group_id FROM credential_groups cg
		WHERE cg.credential_id IN (SELECT p.credential_id`+from+`) ORDER BY cg.credential_id, cg.group_id`, args,
		func(cred, group int64) {
			if k := credentials[cred]; k != nil {
				k.Groups = append(k.Groups, group)
			}
		})
	if err != nil {
		return nil, err
	}
	opened := map[int64]*quarry.Credential{}
	for _, p := range out {
		p.Connector = connectors[p.ConnectorID]
		k := credentials[p.CredentialID]
		if p.Connector == nil || k == nil {
			return nil, fmt.Errorf("store: cc-pair %d without its connector or credential", p.ID)
		}
		if opened[k.ID] == nil {
			if opened[k.ID], err = db.unseal(k); err != nil {
				return nil, err
			}
		}
		p.Credential = opened[k.ID]
	}
	return out, nil
}

// CCPairBriefs returns the cc-pairs c may see (quarry.Caller.CanSeePair),
// with their groups and their connectors' sources, of source only if it is
// not empty, descending by id.
func (db *DB) CCPairBriefs(ctx context.Context, c *quarry.Caller, source quarry.DocumentSource) ([]*quarry.CCPairBrief, error) {
	var out []*quarry.CCPairBrief
	err := db.snapshot(ctx, func(q querier) error {
		var args []any
		where := pairsVisibleTo(c, "p", &args)
		if source != "" {
			args = append(args, source)
			where += fmt.Sprintf(" AND p.connector_id IN (SELECT id FROM connectors WHERE source = $%d)", len(args))
		}
		rows, err := q.QueryContext(ctx, `SELECT p.id, p.name, p.connector_id, p.credential_id, p.access_type, p.status, p.creator_id,
				p.created_at, p.version, c.source
			FROM cc_pairs p JOIN connectors c ON c.id = p.connector_id WHERE `+where+` ORDER BY p.id DESC`, args...)
		if err != nil {
			return mapError(err)
		}
		out = []*quarry.CCPairBrief{}
		byID := map[int64]*quarry.CCPairBrief{}
		for rows.Next() {
			p := &quarry.CCPairBrief{}
			var created int64
			if err := rows.Scan(&p.ID, &p.Name, &p.ConnectorID, &p.CredentialID, &p.AccessType, &p.Status, &p.CreatorID,
				&created, &p.Version, &p.Source); err != nil {
				rows.Close()
				return mapError(err)
			}
			p.CreatedAt, p.Groups = quarry.TimeFromMicros(created), []int64{}
			out = append(out, p)
			byID[p.ID] = p
		}
		if err := closeRows(rows); err != nil || len(out) == 0 {
			return err
		}
		return eachInts(ctx, q, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg
			WHERE pg.cc_pair_id IN (SELECT p.id FROM cc_pairs p WHERE `+where+`) ORDER BY pg.cc_pair_id, pg.group_id`, args,
			func(pair, group int64) {
				if p := byID[pair]; p != nil {
					p.Groups = append(p.Groups, group)
				}
			})
	})
	return out, err
}
