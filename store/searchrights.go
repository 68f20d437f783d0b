package store

import (
	"fmt"
	"strings"

	"github.com/quarryhq/quarry"
)

// Document rights: the SQL conditions under which a caller may see a pair's
// documents, shared by search (searchRights, searchPairs) and a pair's
// document listing (documentsReadable).

// syncDocumentOpen returns the SQL condition under which the document
// doc of pair pair (SQL expressions), a pair of access type sync, is open
// to c: its connector reported it public, or c's email among those that
// may read it (search_document_access, as Onyx v4.6.1's
// access/access.py draws a synced document's access). Search's results
// (searchRights) and a pair's documents (documentsReadable) both read a
// sync pair's documents through it. It appends its arguments to args.
func syncDocumentOpen(c *quarry.Caller, pair, doc string, args *[]any) string {
	*args = append(*args, "email:"+strings.ToLower(c.Email))
	email := fmt.Sprintf("$%d", len(*args))
	return `EXISTS (SELECT 1 FROM search_document_access sda WHERE sda.cc_pair_id = ` + pair + `
		AND sda.document_id = ` + doc + ` AND sda.principal IN ('public', ` + email + `))`
}

// searchRights returns the SQL condition under which the caller c may see
// the chunk of alias ch, as Onyx v4.6.1 draws document access
// (access/access.py, db/document.py): its pair is neither paused nor being
// deleted, and it is public; or private, and shared with a group c is a
// member of, or its credential is c's; or sync, and the connector reported
// the document public or c's email among those that may read it. The
// memberships and the pairs are read from the tables in the search's own
// snapshot. It appends its arguments to args.
func searchRights(c *quarry.Caller, ch string, args *[]any) string {
	*args = append(*args, c.ID)
	me := fmt.Sprintf("$%d", len(*args))
	return `EXISTS (SELECT 1 FROM cc_pairs rp WHERE rp.id = ` + ch + `.cc_pair_id AND rp.status NOT IN ('PAUSED', 'DELETING') AND (
		rp.access_type = 'public'
		OR (rp.access_type = 'private' AND (
			EXISTS (SELECT 1 FROM cc_pair_groups rg JOIN user_group_members rm ON rm.group_id = rg.group_id
				WHERE rg.cc_pair_id = rp.id AND rm.user_id = ` + me + `)
			OR EXISTS (SELECT 1 FROM credentials rc WHERE rc.id = rp.credential_id AND rc.user_id = ` + me + `)))
		OR (rp.access_type = 'sync' AND ` + syncDocumentOpen(c, ch+".cc_pair_id", ch+".document_id", args) + `)))
		AND EXISTS (SELECT 1 FROM users ru WHERE ru.id = ` + me + ` AND ru.is_active)`
}

// searchPairs returns the SQL condition under which the postings of alias
// sp are of a pair c may see documents of (searchRights without the
// documents' own access): what narrows the postings a search reads.
func searchPairs(c *quarry.Caller, sp string, args *[]any) string {
	*args = append(*args, c.ID)
	me := fmt.Sprintf("$%d", len(*args))
	return sp + `.cc_pair_id IN (SELECT vp.id FROM cc_pairs vp WHERE vp.status NOT IN ('PAUSED', 'DELETING') AND (
		vp.access_type IN ('public', 'sync')
		OR EXISTS (SELECT 1 FROM cc_pair_groups vg JOIN user_group_members vm ON vm.group_id = vg.group_id
			WHERE vg.cc_pair_id = vp.id AND vm.user_id = ` + me + `)
		OR EXISTS (SELECT 1 FROM credentials vc WHERE vc.id = vp.credential_id AND vc.user_id = ` + me + `)))`
}
