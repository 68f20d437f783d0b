package store

import (
	"fmt"

	"github.com/quarryhq/quarry"
)

// pairsVisibleTo returns the SQL condition under which caller c sees the
// cc-pair with alias p (quarry.Caller.CanSeePair), and appends its
// arguments to args. With connectorsVisibleTo it is the only SQL of
// visibility: like the rules, it reads the caller's memberships as
// authenticated, never the user_group_members table.
func pairsVisibleTo(c *quarry.Caller, p string, args *[]any) string {
	if c.ManagesConnectors() {
		return "TRUE"
	}
	cond := p + ".access_type IN ('public', 'sync')"
	if groups := c.SharingGroupIDs(); len(groups) > 0 {
		cond += " OR EXISTS (SELECT 1 FROM cc_pair_groups vpg WHERE vpg.cc_pair_id = " + p + ".id AND " +
			sqlIn("vpg.group_id", anys(groups), args) + ")"
	}
	return "(" + cond + ")"
}

// connectorsVisibleTo returns the SQL condition under which caller c sees
// the connector with alias conn (quarry.Caller.CanSeeConnector), and
// appends its arguments to args.
func connectorsVisibleTo(c *quarry.Caller, conn string, args *[]any) string {
	if c.ManagesConnectors() {
		return "TRUE"
	}
	*args = append(*args, c.ID)
	cond := fmt.Sprintf("%s.creator_id = $%d OR %[1]s.access_type IN ('public', 'sync')", conn, len(*args))
	if groups := c.CuratedGroupIDs(); len(groups) > 0 {
		cond += " OR EXISTS (SELECT 1 FROM connector_groups vcg WHERE vcg.connector_id = " + conn + ".id AND " +
			sqlIn("vcg.group_id", anys(groups), args) + ")"
	}
	cond += " OR EXISTS (SELECT 1 FROM cc_pairs vp WHERE vp.connector_id = " + conn + ".id AND " + pairsVisibleTo(c, "vp", args) + ")"
	return "(" + cond + ")"
}
