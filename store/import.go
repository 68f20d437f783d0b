package store

import (
	"context"
	"fmt"
	"slices"
	"strings"

	"github.com/quarryhq/quarry"
)

// Import writes many objects that a program made (such as the synthetic
// deployment the bench seeds) in one transaction, with the ids they have,
// far faster than one request each: their rows go in multi-row INSERTs.
// fill adds the objects through the Importer: an object that another
// refers to must be added before it (groups, connectors and credentials
// before the pairs of them). The objects are written as they are given,
// as of the import's time: Import checks only what the schema checks (an
// id or a name taken is a conflict, an unknown reference invalid input)
// and decides nothing about them; nothing is written if fill or a write
// fails. On PostgreSQL the id sequences are moved past the ids written,
// so that objects made later get new ones. The status listing is read
// whole again after an import, and the audit log gets one entry,
// database.import, naming the tables written (and one per API key).
func (db *DB) Import(ctx context.Context, fill func(*Importer) error) error {
	return db.update(ctx, func(tx *Tx) error {
		im := &Importer{ctx: ctx, tx: tx, rows: make([][][]any, len(importTables)), wrote: make([]bool, len(importTables))}
		if err := fill(im); err != nil {
			return err
		}
		if err := im.flush(); err != nil {
			return err
		}
		var fields []string
		for i, t := range importTables {
			if !im.wrote[i] || !t.ids {
				continue
			}
			fields = append(fields, t.name)
			if db.dialect == Postgres {
				if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('`+t.name+`', 'id'), (SELECT MAX(id) FROM `+t.name+`))`); err != nil {
					return err
				}
			}
		}
		if len(fields) == 0 {
			return nil
		}
		tx.changed(ChangeAll)
		return tx.audit(ctx, nil, "database.import", "database", 0, fields)
	})
}

// importTables are the tables Import writes, parents first: written in
// this order, every row a row refers to is already there. ids marks those
// whose rows have ids.
var importTables = []struct {
	name, columns string
	ids           bool
}{
	{"user_groups", "id, name, name_key, created_at, updated_at", true},
	{"group_permissions", "group_id, permission, granted_at", false},
	{"user_group_members", "group_id, user_id, is_curator", false},
	{"connectors", "id, name, source, input_type, config, refresh_freq, prune_freq, indexing_start, access_type, creator_id, created_at, updated_at", true},
	{"connector_groups", "connector_id, group_id", false},
	{"credentials", "id, name, source, secret, admin_public, curator_public, user_id, created_at, updated_at", true},
	{"credential_groups", "credential_id, group_id", false},
	{"cc_pairs", "id, name, connector_id, credential_id, access_type, status, creator_id, created_at, next_index_at", true},
	{"cc_pair_groups", "cc_pair_id, group_id", false},
}

// The importTables, by index.
const (
	importGroups = iota
	importGrants
	importMembers
	importConnectors
	importConnectorGroups
	importCredentials
	importCredentialGroups
	importPairs
	importPairGroups
)

// importBatch is the number of rows of a table that the Importer keeps
// before it writes them all.
const importBatch = 500

// Importer adds objects to an Import. It keeps their rows and writes them
// a batch at a time, every table in the order of importTables.
type Importer struct {
	ctx   context.Context
	tx    *Tx
	rows  [][][]any // Per table, the rows not written yet.
	wrote []bool    // Per table, whether it got rows.
}

// APIKey makes an API key and its service-account user, as CreateAPIKey
// does, and returns it with its token, which is shown only now.
func (im *Importer) APIKey(name *string, role quarry.Role) (*quarry.APIKey, string, error) {
	return im.tx.createAPIKey(im.ctx, nil, name, role)
}

// Group adds the user group g: its id and name, its members (Users, by
// id) and which of them curate it (CuratorIDs). It is granted basic, as
// every group is (DB.CreateGroup).
func (im *Importer) Group(g *quarry.UserGroup) error {
	now := im.tx.now.Micros()
	if err := im.add(importGroups, g.ID, g.Name, quarry.FoldCase(g.Name), now, now); err != nil {
		return err
	}
	if err := im.add(importGrants, g.ID, quarry.PermBasic, now); err != nil {
		return err
	}
	for _, u := range g.Users {
		if err := im.add(importMembers, g.ID, u.ID, slices.Contains(g.CuratorIDs, u.ID)); err != nil {
			return err
		}
	}
	return nil
}

// Connector adds the connector c, made by creatorID (nil: nobody), shared
// as its AccessType (private if empty) and Groups say.
func (im *Importer) Connector(c *quarry.Connector, creatorID *string) error {
	now := im.tx.now.Micros()
	access := c.AccessType
	if access == "" {
		access = quarry.AccessPrivate // As the schema's default.
	}
	return im.addShared(importConnectors, importConnectorGroups, c.ID, c.Groups, c.ID, c.Name, c.Source, c.InputType,
		string(c.Config), c.RefreshFreq, c.PruneFreq, timeMicros(c.IndexingStart), access, creatorID, now, now)
}

// Credential adds the credential k: its CredentialJSON (in clear; it is
// sealed), its owner (UserID) and the groups it is shared with.
func (im *Importer) Credential(k *quarry.Credential) error {
	now := im.tx.now.Micros()
	return im.addShared(importCredentials, importCredentialGroups, k.ID, k.Groups, k.ID, k.Name, k.Source,
		im.tx.db.keys.seal(purposeCredential, k.CredentialJSON), k.AdminPublic, k.CuratorPublic, k.UserID, now, now)
}

// Pair adds the cc-pair p of a connector and a credential added before,
// in its Status (ACTIVE if empty), shared with its Groups. A pair in an
// active status is due for indexing at once (the scheduler's pass checks
// its facts before it makes an attempt).
func (im *Importer) Pair(p *quarry.CCPair) error {
	status := p.Status
	if status == "" {
		status = quarry.CCPairActive // As the schema's default.
	}
	now := im.tx.now.Micros()
	var due any
	if status.Active() {
		due = now
	}
	return im.addShared(importPairs, importPairGroups, p.ID, p.Groups, p.ID, p.Name, p.ConnectorID, p.CredentialID,
		p.AccessType, status, p.CreatorID, now, due)
}

// addShared keeps row, of the object id of table t, and a row of table
// shares for each of the groups it is shared with.
func (im *Importer) addShared(t, shares int, id int64, groups []int64, row ...any) error {
	if err := im.add(t, row...); err != nil {
		return err
	}
	for _, g := range groups {
		if err := im.add(shares, id, g); err != nil {
			return err
		}
	}
	return nil
}

// add keeps a row of table t, and writes every row kept once t has a
// batch of them.
func (im *Importer) add(t int, row ...any) error {
	im.rows[t] = append(im.rows[t], row)
	im.wrote[t] = true
	if len(im.rows[t]) < importBatch {
		return nil
	}
	return im.flush()
}

// flush writes the rows kept, table by table in the order of
// importTables.
func (im *Importer) flush() error {
	for t, table := range importTables {
		if err := im.tx.insertRows(im.ctx, table.name, table.columns, im.rows[t]); err != nil {
			return err
		}
		im.rows[t] = im.rows[t][:0]
	}
	return nil
}

// insertRows inserts rows into table with one multi-row INSERT.
func (tx *Tx) insertRows(ctx context.Context, table, columns string, rows [][]any) error {
	return tx.insertRowsThen(ctx, table, columns, rows, "")
}

// insertRowsThen is insertRows with tail after the rows (an ON CONFLICT
// clause).
func (tx *Tx) insertRowsThen(ctx context.Context, table, columns string, rows [][]any, tail string) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, columns)
	args := make([]any, 0, len(rows)*len(rows[0]))
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			// SQLite looks $n names up one by one: plain ? is much
			// faster for thousands of parameters.
			if tx.db.dialect == SQLite {
				b.WriteByte('?')
			} else {
				fmt.Fprintf(&b, "$%d", len(args))
			}
		}
		b.WriteByte(')')
	}
	b.WriteString(tail)
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}
