package onyxtest

import (
	"encoding/json"
	"fmt"
	"slices"
	"strings"
	"testing"

	"github.com/google/uuid"
)

// Onyx v4.6.1's DocumentSetManager (common_utils/managers/document_set.py)
// and the replays of its tests of document sets:
// document_set/test_syncing.py and permissions/test_doc_set_permissions.py.
// Onyx writes each document's sets into Vespa and its tests read Vespa
// (DocumentManager.verify); Quarry writes nothing per document: a
// document's sets are those of its pair at each search. The replays
// assert what the tests assert through the API: each document is found
// by a search narrowed to each set it belongs to, and by no other.

// daDocumentSet is Onyx's DATestDocumentSet, which the manager builds in
// memory (create) or from the keys of each DocumentSetSummary (get_all).
type daDocumentSet struct {
	ID                  int64
	Name                string
	Description         string
	CCPairIDs           []int64
	IsPublic            bool
	IsUpToDate          bool
	Users               []string
	Groups              []int64
	FederatedConnectors []json.RawMessage
}

// docSetArgs are DocumentSetManager.create's arguments: is_public true
// unless IsPublic says otherwise.
type docSetArgs struct {
	Name, Description string
	CCPairIDs         []int64
	IsPublic          *bool
	Users             []string
	Groups            []int64
}

// createDocumentSet is DocumentSetManager.create: the name
// test_doc_set_<uuid4> unless given, the description the name unless
// given; the id is the answer.
func (c client) createDocumentSet(by User, a docSetArgs) (daDocumentSet, error) {
	if a.Name == "" {
		a.Name = "test_doc_set_" + uuid.NewString()
	}
	if a.Description == "" {
		a.Description = a.Name
	}
	public := a.IsPublic == nil || *a.IsPublic
	s := daDocumentSet{Name: a.Name, Description: a.Description, CCPairIDs: orEmpty(a.CCPairIDs), IsPublic: public, IsUpToDate: true,
		Users: orEmpty(a.Users), Groups: orEmpty(a.Groups), FederatedConnectors: []json.RawMessage{}}
	r, err := c.do(by, "POST", "/manage/admin/document-set", map[string]any{"name": s.Name, "description": s.Description,
		"cc_pair_ids": s.CCPairIDs, "is_public": s.IsPublic, "users": s.Users, "groups": s.Groups, "federated_connectors": []any{}})
	if err != nil {
		return s, err
	}
	if err := json.Unmarshal(r.Body, &s.ID); err != nil {
		return s, &validationError{"int(response.json())", err, r.Body}
	}
	return s, nil
}

// editDocumentSet is DocumentSetManager.edit: the whole set.
func (c client) editDocumentSet(s daDocumentSet, by User) error {
	_, err := c.do(by, "PATCH", "/manage/admin/document-set", map[string]any{"id": s.ID, "name": s.Name, "description": s.Description,
		"cc_pair_ids": orEmpty(s.CCPairIDs), "is_public": s.IsPublic, "users": orEmpty(s.Users), "groups": orEmpty(s.Groups),
		"federated_connectors": orEmpty(s.FederatedConnectors)})
	return err
}

// deleteDocumentSet is DocumentSetManager.delete.
func (c client) deleteDocumentSet(s daDocumentSet, by User) error {
	_, err := c.do(by, "DELETE", fmt.Sprint("/manage/admin/document-set/", s.ID), nil)
	return err
}

// getAllDocumentSets is DocumentSetManager.get_all: each set of GET
// /manage/document-set read by its keys.
func (c client) getAllDocumentSets(by User) ([]daDocumentSet, error) {
	r, err := c.do(by, "GET", "/manage/document-set", nil)
	if err != nil {
		return nil, err
	}
	var raw []map[string]json.RawMessage
	if err := json.Unmarshal(r.Body, &raw); err != nil {
		return nil, &validationError{"a list of objects", err, r.Body}
	}
	var out []daDocumentSet
	for _, m := range raw {
		for _, k := range []string{"id", "name", "description", "cc_pair_summaries", "is_public", "is_up_to_date", "users", "groups",
			"federated_connector_summaries"} {
			if _, ok := m[k]; !ok {
				return nil, &validationError{"DocumentSetSummary", fmt.Errorf("KeyError: %q", k), r.Body}
			}
		}
		var s daDocumentSet
		var pairs []struct {
			ID int64 `json:"id"`
		}
		for _, f := range []struct {
			key string
			v   any
		}{{"id", &s.ID}, {"name", &s.Name}, {"description", &s.Description}, {"cc_pair_summaries", &pairs}, {"is_public", &s.IsPublic},
			{"is_up_to_date", &s.IsUpToDate}, {"users", &s.Users}, {"groups", &s.Groups}, {"federated_connector_summaries", &s.FederatedConnectors}} {
			if err := json.Unmarshal(m[f.key], f.v); err != nil {
				return nil, &validationError{"DATestDocumentSet." + f.key, err, r.Body}
			}
		}
		for _, p := range pairs {
			s.CCPairIDs = append(s.CCPairIDs, p.ID)
		}
		out = append(out, s)
	}
	return out, nil
}

// waitForDocumentSetSync is DocumentSetManager.wait_for_sync: poll until
// every set (of check, when given) is up to date.
func (c client) waitForDocumentSetSync(by User, check ...daDocumentSet) error {
	for range pollLimit {
		all, err := c.getAllDocumentSets(by)
		if err != nil {
			return err
		}
		if len(check) > 0 {
			var kept []daDocumentSet
			for _, want := range check {
				found := false
				for _, s := range all {
					if s.ID == want.ID {
						kept, found = append(kept, s), true
					}
				}
				if !found {
					return fmt.Errorf("RuntimeError: Document set not found")
				}
			}
			all = kept
		}
		synced := true
		for _, s := range all {
			synced = synced && s.IsUpToDate
		}
		if synced {
			return nil
		}
	}
	return fmt.Errorf("TimeoutError: Document sets were not synced")
}

// verifyDocumentSet is DocumentSetManager.verify: the set is listed (or,
// with verifyDeleted, not) with the same name, pairs, is_public, people,
// groups and federated connectors (a ValueError otherwise).
func (c client) verifyDocumentSet(s daDocumentSet, by User, verifyDeleted bool) error {
	all, err := c.getAllDocumentSets(by)
	if err != nil {
		return err
	}
	for _, x := range all {
		if x.ID != s.ID {
			continue
		}
		if verifyDeleted {
			return fmt.Errorf("ValueError: Document set %d found but should have been deleted", s.ID)
		}
		if x.Name == s.Name && sameSet(x.CCPairIDs, s.CCPairIDs) && x.IsPublic == s.IsPublic && sameSet(x.Users, s.Users) &&
			sameSet(x.Groups, s.Groups) && len(x.FederatedConnectors) == len(s.FederatedConnectors) {
			return nil
		}
	}
	if !verifyDeleted {
		return fmt.Errorf("ValueError: Document set %d not found", s.ID)
	}
	return nil
}

// seedDummyDocs is DocumentManager.seed_dummy_docs: n documents of
// _generate_dummy_document, each with its own id, pushed into the pair
// with the API key.
func (c client) seedDummyDocs(p daCCPair, key daAPIKey, n int) ([]simpleTestDocument, error) {
	var out []simpleTestDocument
	for range n {
		id := "test-doc-" + uuid.NewString()
		content := "This is test document " + id
		if err := c.ingestDummy(p, id, content, key); err != nil {
			return out, err
		}
		out = append(out, simpleTestDocument{id, content})
	}
	return out, nil
}

// simpleTestDocument is Onyx's SimpleTestDocument: a document's id and
// text.
type simpleTestDocument struct{ ID, Content string }

// numDocs is Onyx's NUM_DOCS, the documents seed_dummy_docs makes.
const numDocs = 5

// verifyDocumentSets is DocumentManager.verify with doc_set_names, through
// the API: each of docs (of pair p) is found, as by (who made them), by a
// search of its text narrowed to each of names, and by one narrowed to
// any other set of others (the sets the test made): its sets are exactly
// names. Onyx reads each document's document_sets in Vespa.
func (c client) verifyDocumentSets(t *testing.T, by User, docs []simpleTestDocument, names, others []string) {
	t.Helper()
	for _, d := range docs {
		r, results := c.search(d.Content, by, nil)
		check(t, r.Status == 200 && len(containing(results, d.Content)) == 1, "document %s is not found: %d %s", d.ID, r.Status, clip(r.Body))
		for _, set := range others {
			r, results := c.search(d.Content, by, map[string]any{"document_sets": []string{set}})
			check(t, r.Status == 200, "search in set %s: %d %s", set, r.Status, clip(r.Body))
			want := slices.Contains(names, set)
			check(t, (len(containing(results, d.Content)) == 1) == want,
				"Document set names mismatch: document %s found in set %s: %t; expected sets %v", d.ID, set, !want, names)
		}
	}
}

// ---- document_set/test_syncing.py ----

var documentSetReplays = []Replay{
	{Name: "document_set/test_syncing.py/test_multiple_document_sets_syncing_same_connnector", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
		docs := must(c.seedDummyDocs(p, key, numDocs))(t)
		set1 := must(c.createDocumentSet(admin.caller(), docSetArgs{CCPairIDs: []int64{p.ID}}))(t)
		set2 := must(c.createDocumentSet(admin.caller(), docSetArgs{CCPairIDs: []int64{p.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller()))
		ok(t, c.verifyDocumentSet(set1, admin.caller(), false))
		ok(t, c.verifyDocumentSet(set2, admin.caller(), false))
		names := []string{set1.Name, set2.Name}
		c.verifyDocumentSets(t, admin.caller(), docs, names, names)
	}},
	{Name: "document_set/test_syncing.py/test_removing_connector", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		p1 := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
		p2 := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
		docs1 := must(c.seedDummyDocs(p1, key, numDocs))(t)
		docs2 := must(c.seedDummyDocs(p2, key, numDocs))(t)
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{CCPairIDs: []int64{p1.ID, p2.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller()))
		ok(t, c.verifyDocumentSet(set, admin.caller(), false))
		names := []string{set.Name}
		c.verifyDocumentSets(t, admin.caller(), docs1, names, names)
		c.verifyDocumentSets(t, admin.caller(), docs2, names, names)
		// Remove cc_pair_2 from the set.
		set.CCPairIDs = []int64{p1.ID}
		ok(t, c.editDocumentSet(set, admin.caller()))
		ok(t, c.waitForDocumentSetSync(admin.caller()))
		c.verifyDocumentSets(t, admin.caller(), docs1, names, names)
		c.verifyDocumentSets(t, admin.caller(), docs2, nil, names)
	}},
	{Name: "document_set/test_syncing.py/test_renaming_document_set", Run: func(t *testing.T, c client) {
		admin := adminUser(t, c)
		key := must(c.createAPIKey(admin, "", "admin"))(t)
		p := must(c.createCCPairFromScratch(admin.caller(), "", "", nil, "ingestion_api"))(t)
		docs := must(c.seedDummyDocs(p, key, numDocs))(t)
		original := "original_doc_set_" + uuid.NewString()
		set := must(c.createDocumentSet(admin.caller(), docSetArgs{Name: original, CCPairIDs: []int64{p.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller()))
		ok(t, c.verifyDocumentSet(set, admin.caller(), false))
		renamed := "renamed_doc_set_" + uuid.NewString()
		set.Name = renamed
		ok(t, c.editDocumentSet(set, admin.caller()))
		ok(t, c.waitForDocumentSetSync(admin.caller()))
		ok(t, c.verifyDocumentSet(set, admin.caller(), false))
		c.verifyDocumentSets(t, admin.caller(), docs, []string{renamed}, []string{renamed})
		// Beyond Onyx's test, which reads Vespa: the old name names no set.
		r, _ := c.search(docs[0].Content, admin.caller(), map[string]any{"document_sets": []string{original}})
		check(t, r.Status == 403, "the old name: %d %s, want Onyx's 403", r.Status, clip(r.Body))
	}},

	// ---- permissions/test_doc_set_permissions.py ----
	{Name: "permissions/test_doc_set_permissions.py/test_doc_set_permissions_setup", Run: func(t *testing.T, c client) {
		admin := must(c.createUser("admin_user", ""))(t)
		curator := must(c.createUser("curator", ""))(t)
		g1 := must(c.createGroup(admin.caller(), "curated_user_group", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		ok(t, c.setCurator(g1, curator, admin.caller(), true))
		g2 := must(c.createGroup(admin.caller(), "uncurated_user_group", []string{curator.ID}, []int64{}))(t)
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		private := must(c.createCCPairFromScratch(admin.caller(), "", "private", nil, "ingestion_api"))(t)
		public := must(c.createCCPairFromScratch(admin.caller(), "", "public", nil, "ingestion_api"))(t)
		no := false

		// Things curators and admins may not do.
		_, err := c.createDocumentSet(curator.caller(), docSetArgs{Name: "Invalid Document Set 1", IsPublic: &no, Groups: []int64{g2.ID},
			CCPairIDs: []int64{public.ID}})
		raises(t, err, "a set of a group the curator does not curate")
		_, err = c.createDocumentSet(curator.caller(), docSetArgs{Name: "Invalid Document Set 2", IsPublic: &no, CCPairIDs: []int64{public.ID},
			Groups: []int64{g1.ID, g2.ID}})
		raises(t, err, "a set of both groups")
		_, err = c.createDocumentSet(curator.caller(), docSetArgs{Name: "Invalid Document Set 3", IsPublic: &no, CCPairIDs: []int64{public.ID},
			Groups: []int64{}})
		raises(t, err, "a set of no group")
		_, err = c.createDocumentSet(curator.caller(), docSetArgs{Name: "Invalid Document Set 4", IsPublic: &no, CCPairIDs: []int64{},
			Groups: []int64{g1.ID}})
		raises(t, err, "a curator's set of no pair")
		_, err = c.createDocumentSet(admin.caller(), docSetArgs{Name: "Invalid Document Set 4", IsPublic: &no, CCPairIDs: []int64{},
			Groups: []int64{g1.ID}})
		raises(t, err, "an admin's set of no pair")

		// What curators may do.
		valid := must(c.createDocumentSet(curator.caller(), docSetArgs{Name: "Valid Document Set", IsPublic: &no, CCPairIDs: []int64{public.ID},
			Groups: []int64{g1.ID}}))(t)
		ok(t, c.waitForDocumentSetSync(admin.caller(), valid))
		ok(t, c.verifyDocumentSet(valid, admin.caller(), false))
		all := must(c.getAllDocumentSets(admin.caller()))(t)
		check(t, len(all) == 1, "%d document sets, want 1", len(all))

		valid.CCPairIDs = append(valid.CCPairIDs, private.ID)
		raises(t, c.editDocumentSet(valid, curator.caller()), "the curator adds the private pair")
		raises(t, c.editDocumentSet(valid, admin.caller()), "the admin adds the private pair")
		err = c.verifyDocumentSet(valid, admin.caller(), false)
		check(t, err != nil && strings.HasPrefix(err.Error(), "ValueError"), "the set was changed: %v", err)

		g1.CCPairIDs = append(g1.CCPairIDs, private.ID)
		ok(t, c.editGroup(g1, admin.caller()))
		ok(t, c.waitForGroupSync(admin.caller(), g1))
		ok(t, c.verifyGroup(g1, admin.caller(), false))

		ok(t, c.editDocumentSet(valid, curator.caller()))
		ok(t, c.waitForDocumentSetSync(admin.caller(), valid))
		ok(t, c.verifyDocumentSet(valid, admin.caller(), false))
	}},
}
