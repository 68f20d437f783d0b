package onyxtest

import (
	"context"
	"fmt"
	"reflect"
	"slices"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

// The replays of Onyx v4.6.1's tests of tags (tags/test_tags.py). Onyx's
// test reads its database for each document's tags (Document.tags) and
// their structured form (get_structured_tags_for_document); the replays
// read the same facts from Quarry's store (DocumentTags: each tag's key,
// value, list-ness and id), and, beyond the test, the tags GET
// /query/valid-tags lists (key, value and source).

// tagFixture is what both tests make first: admin@onyx.app, the file
// connector's pair "KG-Test-FileConnector" (CCPairManager.create_from_scratch
// with its input type and configuration), an admin API key sending the
// admin's headers too, and an LLM provider (LLMProviderManager.create).
func tagFixture(t *testing.T, c client) (admin daUser, p daCCPair, key daAPIKey) {
	t.Helper()
	admin = must(c.createUser("", "admin@onyx.app"))(t)
	const name = "KG-Test-FileConnector"
	conn := must(c.createConnector(admin.caller(), connectorArgs{Name: name, Source: "file", InputType: "load_state",
		Config: map[string]any{"file_locations": []string{}, "file_names": []string{}, "zip_metadata_file_id": nil}, AccessType: "public"}))(t)
	public := true
	k := must(c.createCredential(admin.caller(), credentialArgs{Name: name, Source: "file", CuratorPublic: &public}))(t)
	p = must(c.createCCPair(conn.ID, k.ID, admin.caller(), name, "public", nil))(t)
	key = must(c.createAPIKey(admin, "", "admin"))(t)
	if c.tg.ModelBase != "" {
		base := c.tg.ModelBase
		must(c.createLLMProvider(admin.caller(), llmProviderArgs{APIBase: &base}))(t)
	}
	return admin, p, key
}

// seedDocWithMetadata is DocumentManager.seed_doc_with_content with a
// document id and metadata: _generate_dummy_document's document, its
// metadata document_id and then the test's.
func (c client) seedDocWithMetadata(p daCCPair, key daAPIKey, id, content string, metadata map[string]any) error {
	meta := map[string]any{"document_id": id}
	for k, v := range metadata {
		meta[k] = v
	}
	_, err := c.do(key.caller(), "POST", "/onyx-api/ingestion", map[string]any{
		"document": map[string]any{"id": id, "sections": []map[string]any{{"text": content, "link": id}}, "source": "not_applicable",
			"metadata": meta, "semantic_identifier": "Test Document " + id, "from_ingestion_api": true},
		"cc_pair_id": p.ID,
	})
	return err
}

// tagTriple is the test's (tag_key, tag_value, is_list).
type tagTriple struct {
	Key, Value string
	IsList     bool
}

// documentTags returns the tags the store keeps for the pair's copy of
// document id: the test's doc.tags, read from Onyx's database.
func (c client) documentTags(t *testing.T, p daCCPair, id string) []quarry.Tag {
	t.Helper()
	tags, err := c.tg.DB.DocumentTags(context.Background(), p.ID, id)
	if err != nil {
		t.Fatal(err)
	}
	return tags
}

// triples returns the (key, value, is_list) of tags, sorted.
func triples(tags []quarry.Tag) []tagTriple {
	out := []tagTriple{}
	for _, t := range tags {
		out = append(out, tagTriple{t.Key, t.Value, t.IsList})
	}
	slices.SortFunc(out, func(a, b tagTriple) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return out
}

// sortedTriples returns want sorted as triples sorts.
func sortedTriples(want ...tagTriple) []tagTriple {
	slices.SortFunc(want, func(a, b tagTriple) int { return strings.Compare(fmt.Sprint(a), fmt.Sprint(b)) })
	return want
}

// structuredTags is get_structured_tags_for_document: the metadata the
// tags make, a list's items in the tags' order.
func structuredTags(tags []quarry.Tag) map[string]any {
	out := map[string]any{}
	for _, t := range tags {
		if t.IsList {
			l, _ := out[t.Key].([]string)
			out[t.Key] = append(l, t.Value)
			continue
		}
		if _, ok := out[t.Key]; !ok {
			out[t.Key] = t.Value
		}
	}
	return out
}

// validTags returns what GET /query/valid-tags lists u (as TagResponse),
// as "key=value@source", sorted.
func (c client) validTags(t *testing.T, u User, query string) []string {
	t.Helper()
	r := onyxParse[onyxTagResponse](t, c.tg.Do(u, "GET", "/query/valid-tags"+query, nil), 200)
	out := []string{}
	for _, tag := range r.Tags {
		out = append(out, tag.TagKey+"="+tag.TagValue+"@"+string(tag.Source))
	}
	slices.Sort(out)
	return out
}

var tagReplays = []Replay{
	{Name: "tags/test_tags.py/test_tag_creation_and_update", Run: func(t *testing.T, c client) {
		admin, p, key := tagFixture(t, c)
		ok(t, c.seedDocWithMetadata(p, key, "doc1", "Dummy content", map[string]any{"value": "val",
			"multiple_list": []string{"a", "b", "c"}, "single_list": []string{"x"}}))
		// "these are added by the connector": document_id.
		tags := c.documentTags(t, p, "doc1")
		want := sortedTriples(tagTriple{"value", "val", false}, tagTriple{"multiple_list", "a", true}, tagTriple{"multiple_list", "b", true},
			tagTriple{"multiple_list", "c", true}, tagTriple{"single_list", "x", true}, tagTriple{"document_id", "doc1", false})
		check(t, reflect.DeepEqual(triples(tags), want), "doc1's tags %v, want %v", triples(tags), want)
		meta := map[string]any{"value": "val", "multiple_list": []string{"a", "b", "c"}, "single_list": []string{"x"}, "document_id": "doc1"}
		check(t, reflect.DeepEqual(structuredTags(tags), meta), "doc1's structured tags %v, want %v", structuredTags(tags), meta)
		// Beyond the test: valid-tags lists them, with the document's source.
		listed := []string{"document_id=doc1@not_applicable", "multiple_list=a@not_applicable", "multiple_list=b@not_applicable",
			"multiple_list=c@not_applicable", "single_list=x@not_applicable", "value=val@not_applicable"}
		got := c.validTags(t, admin.caller(), "")
		check(t, slices.Equal(got, listed), "valid-tags lists %v, want %v", got, listed)

		// Update the metadata.
		ok(t, c.seedDocWithMetadata(p, key, "doc1", "Dummy content", map[string]any{"value": "val2",
			"multiple_list": []string{"a", "d"}, "new_value": "new_val"}))
		tags = c.documentTags(t, p, "doc1")
		want = sortedTriples(tagTriple{"value", "val2", false}, tagTriple{"multiple_list", "a", true}, tagTriple{"multiple_list", "d", true},
			tagTriple{"new_value", "new_val", false}, tagTriple{"document_id", "doc1", false})
		check(t, reflect.DeepEqual(triples(tags), want), "doc1's new tags %v, want %v", triples(tags), want)
		meta = map[string]any{"value": "val2", "multiple_list": []string{"a", "d"}, "new_value": "new_val", "document_id": "doc1"}
		check(t, reflect.DeepEqual(structuredTags(tags), meta), "doc1's new structured tags %v, want %v", structuredTags(tags), meta)
		// The tags no document carries any more are listed no more.
		listed = []string{"document_id=doc1@not_applicable", "multiple_list=a@not_applicable", "multiple_list=d@not_applicable",
			"new_value=new_val@not_applicable", "value=val2@not_applicable"}
		got = c.validTags(t, admin.caller(), "")
		check(t, slices.Equal(got, listed), "valid-tags lists %v, want %v", got, listed)
	}},
	{Name: "tags/test_tags.py/test_tag_sharing", Run: func(t *testing.T, c client) {
		admin, p, key := tagFixture(t, c)
		ok(t, c.seedDocWithMetadata(p, key, "doc1", "Dummy content", map[string]any{"value": "val", "list": []string{"a", "b"}, "same_key": "x"}))
		ok(t, c.seedDocWithMetadata(p, key, "doc2", "Dummy content", map[string]any{"value": "val", "list": []string{"a", "c"},
			"same_key": []string{"x"}}))
		tags1, tags2 := c.documentTags(t, p, "doc1"), c.documentTags(t, p, "doc2")
		want1 := sortedTriples(tagTriple{"value", "val", false}, tagTriple{"list", "a", true}, tagTriple{"list", "b", true},
			tagTriple{"same_key", "x", false}, tagTriple{"document_id", "doc1", false})
		want2 := sortedTriples(tagTriple{"value", "val", false}, tagTriple{"list", "a", true}, tagTriple{"list", "c", true},
			tagTriple{"same_key", "x", true}, tagTriple{"document_id", "doc2", false})
		check(t, reflect.DeepEqual(triples(tags1), want1), "doc1's tags %v, want %v", triples(tags1), want1)
		check(t, reflect.DeepEqual(triples(tags2), want2), "doc2's tags %v, want %v", triples(tags2), want2)
		// Tag sharing: the same key and value is one tag, but a list's
		// item and a single value are two.
		id := func(tags []quarry.Tag, k, v string) int64 {
			for _, t := range tags {
				if t.Key == k && t.Value == v {
					return t.ID
				}
			}
			return 0
		}
		check(t, id(tags1, "value", "val") == id(tags2, "value", "val"), "value=val: tags %d and %d", id(tags1, "value", "val"), id(tags2, "value", "val"))
		check(t, id(tags1, "list", "a") == id(tags2, "list", "a"), "list=a: tags %d and %d", id(tags1, "list", "a"), id(tags2, "list", "a"))
		check(t, id(tags1, "same_key", "x") != id(tags2, "same_key", "x"), "same_key=x: one tag %d", id(tags1, "same_key", "x"))
		// Beyond the test: valid-tags lists same_key=x once (Onyx lists
		// its two tags, alike on the wire).
		got := c.validTags(t, admin.caller(), "?match_pattern=same_key%3D")
		check(t, slices.Equal(got, []string{"same_key=x@not_applicable"}), "valid-tags same_key=: %v", got)
	}},
}
