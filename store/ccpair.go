package store

import (
	"context"
	"database/sql"
	"errors"
	"slices"

	"github.com/quarryhq/quarry"
)

// CreateCCPair pairs connector connectorID with credential credentialID and
// shares the pair with in.Groups. It returns the new pair's id.
func (db *DB) CreateCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64, in quarry.CCPairInput) (int64, error) {
	var id int64
	err := db.update(ctx, func(tx *Tx) error {
		source, sharing, err := tx.connectorSharing(connectorID)
		if err != nil {
			return err
		}
		pairs, err := tx.connectorPairs(connectorID)
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
		if !c.CanSeeCredential(&k.Credential) {
			return credentialNotFound(credentialID)
		}
		if k.Source != source && k.Source != "not_applicable" {
			return quarry.Errorf(quarry.EINVALID, "Credential %d is for %s, but connector %d reads %s", credentialID, k.Source, connectorID, source)
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
// credentialID, if c may see it (404) and remove it (403): see
// quarry.Caller's CanSeePair and CanRemovePair.
func (db *DB) DeleteCCPair(ctx context.Context, c *quarry.Caller, connectorID, credentialID int64) error {
	return db.update(ctx, func(tx *Tx) error {
		pairs, err := tx.connectorPairs(connectorID)
		if err != nil {
			return err
		}
		i := slices.IndexFunc(pairs, func(p *quarry.CCPair) bool { return p.CredentialID == credentialID })
		if i < 0 || !c.CanSeePair(pairs[i]) {
			return quarry.Errorf(quarry.ENOTFOUND, "Connector %d does not have Credential %d", connectorID, credentialID)
		}
		if !c.CanRemovePair(pairs[i]) {
			return quarry.Errorf(quarry.EFORBIDDEN, "Curators cannot control groups they don't curate")
		}
		if _, err := tx.exec(`DELETE FROM cc_pairs WHERE id = $1`, pairs[i].ID); err != nil {
			return err
		}
		tx.touch()
		return tx.audit(c, "cc_pair.delete", "cc_pair", pairs[i].ID, nil)
	})
}
