package store

import (
	"context"
	"fmt"
	"strings"

	"github.com/quarryhq/quarry"
)

// ConnectorStatuses returns the cc-pairs c may see (contract section 4.1),
// ascending by id, each with its connector and its unmasked credential. It
// runs three statements whatever the number of pairs: the pairs with their
// connectors and credentials, the pairs' groups, and the credentials'
// groups. Entries share one *Connector per connector and one *Credential per
// credential.
func (db *DB) ConnectorStatuses(ctx context.Context, c *quarry.Caller, f quarry.StatusFilter) ([]quarry.ConnectorStatus, error) {
	where, args := statusWhere(c, f)
	rows, err := db.read.QueryContext(ctx, `SELECT p.id, p.name, p.access_type, `+connectorColumns+`, `+credentialColumns+`
		FROM cc_pairs p
		JOIN connectors c ON c.id = p.connector_id
		JOIN credentials k ON k.id = p.credential_id
		LEFT JOIN users u ON u.id = k.user_id
		WHERE `+where+` ORDER BY p.id`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	var (
		out         = []quarry.ConnectorStatus{}
		connectors  = map[int64]*quarry.Connector{}
		credentials = map[int64]*sealedCredential{}
		pairs       = map[int64]*quarry.ConnectorStatus{}
	)
	for rows.Next() {
		var (
			s    quarry.ConnectorStatus
			conn connectorRow
			cred credentialRow
		)
		dest := append(append([]any{&s.CCPairID, &s.Name, &s.AccessType}, conn.dest()...), cred.dest()...)
		if err := rows.Scan(dest...); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		cn := connectors[conn.c.ID]
		if cn == nil {
			cn = conn.connector()
			connectors[cn.ID] = cn
		}
		k := credentials[cred.k.ID]
		if k == nil {
			k = cred.credential()
			credentials[k.ID] = k
		}
		cn.CredentialIDs = append(cn.CredentialIDs, k.ID)
		s.Connector, s.Credential, s.Groups = cn, &k.Credential, []int64{}
		out = append(out, s)
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for i := range out {
		pairs[out[i].CCPairID] = &out[i]
	}
	for _, conn := range connectors {
		conn.CredentialIDs = dedupe(conn.CredentialIDs)
	}

	// The pairs' groups and the credentials' groups, for the same visible
	// pairs.
	rows, err = db.read.QueryContext(ctx, `SELECT pg.cc_pair_id, pg.group_id FROM cc_pair_groups pg
		JOIN cc_pairs p ON p.id = pg.cc_pair_id JOIN connectors c ON c.id = p.connector_id
		WHERE `+where+` ORDER BY pg.cc_pair_id, pg.group_id`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var pid, gid int64
		if err := rows.Scan(&pid, &gid); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if s := pairs[pid]; s != nil {
			s.Groups = append(s.Groups, gid)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	rows, err = db.read.QueryContext(ctx, `SELECT DISTINCT cg.credential_id, cg.group_id FROM credential_groups cg
		JOIN cc_pairs p ON p.credential_id = cg.credential_id JOIN connectors c ON c.id = p.connector_id
		WHERE `+where+` ORDER BY cg.credential_id, cg.group_id`, args...)
	if err != nil {
		return nil, mapError(err)
	}
	for rows.Next() {
		var kid, gid int64
		if err := rows.Scan(&kid, &gid); err != nil {
			rows.Close()
			return nil, mapError(err)
		}
		if k := credentials[kid]; k != nil {
			k.Groups = append(k.Groups, gid)
		}
	}
	if err := closeRows(rows); err != nil {
		return nil, err
	}
	for _, k := range credentials {
		if _, err := db.unseal(k); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// statusWhere returns the condition and arguments that select the pairs c
// may see through filter f, over aliases p (cc_pairs) and c (connectors).
func statusWhere(c *quarry.Caller, f quarry.StatusFilter) (string, []any) {
	var b strings.Builder
	b.WriteString(pairVisible)
	args := []any{c.ID, c.IsAdmin()}
	in := func(column string, values []string) {
		if len(values) == 0 {
			return
		}
		fmt.Fprintf(&b, " AND %s IN (", column)
		for i, v := range values {
			if i > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			fmt.Fprintf(&b, "$%d", len(args))
		}
		b.WriteString(")")
	}
	in("c.source", stringsOf(f.Sources))
	in("p.access_type", stringsOf(f.AccessTypes))
	return b.String(), args
}

func stringsOf[T ~string](s []T) []string {
	out := make([]string, len(s))
	for i, v := range s {
		out[i] = string(v)
	}
	return out
}
