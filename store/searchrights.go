package store

import (
	"fmt"
	"strings"

	"github.com/quarryhq/quarry"
)

// Document rights: the SQL conditions under which a caller may read a
// pair's copy of a document. documentOpen is the one rule (pairOpen, a
// pair's own access, and syncDocumentOpen, a sync pair's document's);
// search (searchRights) adds that the pair is live, and the listings and
// counts of a pair's documents (documentsReadable) that those who see the
// whole pair see all of it (quarry.Caller.SeesWholePair). searchPairs
// narrows the postings a search reads to the live pairs documentOpen may
// open documents of.

// syncDocumentOpen returns the SQL condition under which the document
// doc of pair pair (SQL expressions), a pair of access type sync, is open
// to c: its connector (or the pair's latest permission sync) reported it
// public, or c's email among those that may read it, or a group whose
// members, as the same pair's latest group sync listed them, hold c's
// email (search_document_access and external_group_members, as Onyx
// v4.6.1's access/access.py draws a synced document's access; emails
// compared in lowercase). It appends its arguments to args.
func syncDocumentOpen(c *quarry.Caller, pair, doc string, args *[]any) string {
	*args = append(*args, "email:"+strings.ToLower(c.Email), strings.ToLower(c.Email))
	principal, email := fmt.Sprintf("$%d", len(*args)-1), fmt.Sprintf("$%d", len(*args))
	return `(EXISTS (SELECT 1 FROM search_document_access sda WHERE sda.cc_pair_id = ` + pair + `
		AND sda.document_id = ` + doc + ` AND sda.principal IN ('public', ` + principal + `))
		OR EXISTS (SELECT 1 FROM external_group_members egm JOIN search_document_access sdg
			ON sdg.cc_pair_id = egm.cc_pair_id AND sdg.principal = 'group:' || egm.group_id
			WHERE egm.user_email = ` + email + ` AND egm.cc_pair_id = ` + pair + ` AND sdg.document_id = ` + doc + `))`
}

// pairOpen returns the SQL condition under which every document of the
// pair of alias p (a row of cc_pairs) is open to the person whose id is
// the parameter me, as Onyx v4.6.1 draws access: the pair is public, or
// private and shared with a group of theirs or made with their
// credential. A sync pair's documents are each open to whom its connector
// says (syncDocumentOpen). The memberships are read from the tables in
// the statement's snapshot, not from the caller as authenticated.
func pairOpen(p, me string) string {
	return `(` + p + `.access_type = 'public'
		OR (` + p + `.access_type = 'private' AND (
			EXISTS (SELECT 1 FROM cc_pair_groups rg JOIN user_group_members rm ON rm.group_id = rg.group_id
				WHERE rg.cc_pair_id = ` + p + `.id AND rm.user_id = ` + me + `)
			OR EXISTS (SELECT 1 FROM credentials rc WHERE rc.id = ` + p + `.credential_id AND rc.user_id = ` + me + `))))`
}

// documentOpen returns the SQL condition under which c may read the copy
// of document doc (an SQL expression) held by the pair of alias p (a row
// of cc_pairs), as Onyx v4.6.1 draws document access (access/access.py,
// db/document.py): every document of a pair open to c (pairOpen), or of a
// sync pair, those its source reported public or open to c's email or to
// a group the pair's group sync lists c's email in (syncDocumentOpen);
// and c is an active person. Being an admin opens
// nothing more. It appends its arguments to args.
func documentOpen(c *quarry.Caller, p, doc string, args *[]any) string {
	*args = append(*args, c.ID)
	me := fmt.Sprintf("$%d", len(*args))
	return `((` + pairOpen(p, me) + `
		OR (` + p + `.access_type = 'sync' AND ` + syncDocumentOpen(c, p+".id", doc, args) + `))
		AND EXISTS (SELECT 1 FROM users ru WHERE ru.id = ` + me + ` AND ru.is_active))`
}

// searchRights returns the SQL condition under which the caller c may find
// the chunk of alias ch (or the copy of a document of alias ch, with
// columns cc_pair_id and document_id): its pair is neither paused nor
// being deleted, and c may read the copy (documentOpen). It appends its
// arguments to args.
func searchRights(c *quarry.Caller, ch string, args *[]any) string {
	return `EXISTS (SELECT 1 FROM cc_pairs rp WHERE rp.id = ` + ch + `.cc_pair_id AND rp.status NOT IN ('PAUSED', 'DELETING')
		AND ` + documentOpen(c, "rp", ch+".document_id", args) + `)`
}

// documentsReadable returns the SQL condition under which the listings and
// counts of a pair's documents show c the document of alias d (a row of
// documents) of a pair c sees: every document, when c manages every
// connector (quarry.Caller.SeesWholePair: admins, holders of
// manage:connectors); else those c may read (documentOpen, the rule of
// search, paused pairs included: a pause hides a pair from search, not
// from those who manage it). It appends its arguments to args.
func documentsReadable(c *quarry.Caller, d string, args *[]any) string {
	if c.ManagesConnectors() {
		return "TRUE"
	}
	return `EXISTS (SELECT 1 FROM cc_pairs dp WHERE dp.id = ` + d + `.cc_pair_id AND ` + documentOpen(c, "dp", d+".id", args) + `)`
}

// searchPairs returns the SQL condition under which the postings of alias
// sp are of a pair c may find documents of (searchRights without the
// documents' own access: a live pair, open to c or sync): what narrows
// the postings a search reads.
func searchPairs(c *quarry.Caller, sp string, args *[]any) string {
	*args = append(*args, c.ID)
	me := fmt.Sprintf("$%d", len(*args))
	return sp + `.cc_pair_id IN (SELECT vp.id FROM cc_pairs vp WHERE vp.status NOT IN ('PAUSED', 'DELETING')
		AND (vp.access_type = 'sync' OR ` + pairOpen("vp", me) + `))`
}
