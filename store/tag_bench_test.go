package store_test

import (
	"encoding/json"
	"fmt"
	"os"
	"strconv"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkValidTags lists tags (GET /query/valid-tags' store call) on a
// corpus of QUARRY_BENCH_TAG_DOCS documents (20,000 unless set) in 10
// private pairs of 10 groups, each document with 5 tags: its own id, one
// of 100 teams, one of 7 kinds (a list) and one of 1,000 labels (a list),
// and, in 9 of the 10 pairs, secret=yes. The reader is in one group, so
// that 9 documents in 10 (and every copy carrying secret=yes) are not
// theirs: each pattern's walk must skip tags the reader may not see. The
// time of a listing should not grow with the corpus: it walks an index of
// the tags up to its limit and probes the copies of the tags it meets.
func BenchmarkValidTags(b *testing.B) {
	docs := 20000
	if v, err := strconv.Atoi(os.Getenv("QUARRY_BENCH_TAG_DOCS")); err == nil {
		docs = v
	}
	db := storetest.Open(b)
	admin := adminOf(b, db)
	_, token, err := db.CreateAPIKey(ctx, nil, ptr("reader"), quarry.RoleBasic)
	if err != nil {
		b.Fatal(err)
	}
	reader, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	var pairs []int64
	for i := range 10 {
		name := fmt.Sprint("g", i)
		members := []string{}
		if i == 0 {
			members = []string{reader.ID}
		}
		g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: members, CCPairIDs: []int64{}})
		if err != nil {
			b.Fatal(err)
		}
		conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: name, Source: "web", InputType: "poll",
			Config: json.RawMessage(`{}`), AccessType: quarry.AccessPublic, Groups: &[]int64{}})
		if err != nil {
			b.Fatal(err)
		}
		k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "web", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
		if err != nil {
			b.Fatal(err)
		}
		p, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: name, AccessType: quarry.AccessPrivate, Groups: []int64{g.ID}})
		if err != nil {
			b.Fatal(err)
		}
		pairs = append(pairs, p)
	}
	reader, err = db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	const batch = 500
	for i := 0; i < docs; i += batch {
		pi := (i / batch) % len(pairs)
		var ds []quarry.Document
		for j := i; j < min(i+batch, docs); j++ {
			meta := map[string]any{"document_id": fmt.Sprint("d", j), "team": fmt.Sprint("t", j%100),
				"kind": []any{fmt.Sprint("k", j%7)}, "label": []any{fmt.Sprint("l", j%1000)}}
			if pi != 0 {
				meta["secret"] = "yes"
			}
			ds = append(ds, quarry.Document{ID: fmt.Sprint("d", j), SemanticIdentifier: "d", Source: "web",
				Sections: []quarry.Section{{Text: "basalt"}}, Metadata: meta})
		}
		if _, err := db.IngestBatch(ctx, admin, &pairs[pi], ds); err != nil {
			b.Fatal(err)
		}
	}
	for _, bc := range []struct{ name, pattern string }{
		{"all", ""},
		{"key", "te"},
		{"value", "l9"},
		{"key=value", "document_id=d1"},
		{"hidden", "secret"},
	} {
		b.Run(bc.name, func(b *testing.B) {
			q := quarry.ParseTagQuery(bc.pattern, nil, quarry.DefaultTagLimit)
			n := 0
			for b.Loop() {
				tags, err := db.ValidTags(ctx, reader, q)
				if err != nil {
					b.Fatal(err)
				}
				n = len(tags)
			}
			b.ReportMetric(float64(n), "tags")
		})
	}
}
