package store

import (
	"context"
	"database/sql"
	"errors"

	"github.com/quarryhq/quarry"
)

// CreateCCPair pairs connector connectorID with credential credentialID and
// shares the pair with in.Groups. It returns the new pair's id.
func (db *DB) CreateCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64, in quarry.CCPairInput) (int64, error) {
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		conns, err := db.connectors(ctx, tx, c, connectorID)
		if err != nil {
			return err
		}
		if len(conns) == 0 {
			return connectorNotFound(connectorID)
		}
		k, err := db.credential(ctx, tx, credentialID)
		if err != nil {
			return err
		}
		if !c.CanSeeCredential(&k.Credential) {
			return credentialNotFound(credentialID)
		}
		if k.Source != conns[0].Source && k.Source != "not_applicable" {
			return quarry.Errorf(quarry.EINVALID, "Credential %d is for %s, but connector %d reads %s", credentialID, k.Source, connectorID, conns[0].Source)
		}
		groups := dedupe(in.Groups)
		if err := tx.checkGroupsExist(groups); err != nil {
			return err
		}
		if err := c.CheckSharing(groups, in.AccessType == quarry.AccessPublic); err != nil {
			return err
		}
		var existing int64
		err = tx.queryRow(`SELECT id FROM cc_pairs WHERE connector_id = $1 AND credential_id = $2`, connectorID, credentialID).Scan(&existing)
		if err == nil {
			return quarry.Errorf(quarry.ECONFLICT, "Connector %d already has Credential %d", connectorID, credentialID)
		}
		if !errors.Is(err, sql.ErrNoRows) {
			return err
		}
		err = tx.queryRow(`INSERT INTO cc_pairs (name, connector_id, credential_id, access_type, creator_id, created_at)
			VALUES ($1, $2, $3, $4, $5, $6) RETURNING id`,
			in.Name, connectorID, credentialID, in.AccessType, c.ID, tx.now.Micros()).Scan(&id)
		if err != nil {
			return err
		}
		for _, g := range groups {
			if _, err := tx.exec(`INSERT INTO cc_pair_groups (cc_pair_id, group_id) VALUES ($1, $2)`, id, g); err != nil {
				return err
			}
		}
		tx.touch()
		return tx.audit(c, "cc_pair.create", "cc_pair", id, []string{"name", "access_type", "groups"})
	})
	return id, err
}

// DeleteCCPair removes the pair of connector connectorID and credential
// credentialID. Curators may remove the pairs they created and those shared
// only with groups they curate.
func (db *DB) DeleteCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64) error {
	return db.update(ctx, func(tx *Tx) error {
		var (
			id         int64
			accessType quarry.AccessType
			creator    sql.NullString
		)
		err := tx.queryRow(`SELECT p.id, p.access_type, p.creator_id FROM cc_pairs p
			WHERE p.connector_id = $3 AND p.credential_id = $4 AND `+pairVisible,
			c.ID, c.IsAdmin(), connectorID, credentialID).Scan(&id, &accessType, &creator)
		if errors.Is(err, sql.ErrNoRows) {
			return quarry.Errorf(quarry.ENOTFOUND, "Connector %d does not have Credential %d", connectorID, credentialID)
		}
		if err != nil {
			return err
		}
		if !c.IsAdmin() && !(creator.Valid && creator.String == c.ID) {
			groups, err := queryInts(tx.ctx, tx, `SELECT group_id FROM cc_pair_groups WHERE cc_pair_id = $1`, id)
			if err != nil {
				return err
			}
			if len(groups) == 0 || !c.CuratesAll(groups) {
				return quarry.Errorf(quarry.EFORBIDDEN, "Curators cannot control groups they don't curate")
			}
		}
		if _, err := tx.exec(`DELETE FROM cc_pairs WHERE id = $1`, id); err != nil {
			return err
		}
		tx.touch()
		return tx.audit(c, "cc_pair.delete", "cc_pair", id, nil)
	})
}
