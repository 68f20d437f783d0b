package store_test

import (
	"encoding/json"
	"fmt"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store/storetest"
)

// BenchmarkPermissionSync10k runs a permission sync of 10,000 documents'
// access (two emails and a group each) through the store's worker
// protocol: ten reports of quarry.MaxBatchAccess entries, then its end,
// which applies them in one transaction. The time per operation is the
// whole sync's, as the server spends it (no connector, no HTTP).
func BenchmarkPermissionSync10k(b *testing.B) {
	const n = 10_000
	db := storetest.Open(b)
	name := "admin"
	_, token, err := db.CreateAPIKey(ctx, nil, &name, quarry.RoleAdmin)
	if err != nil {
		b.Fatal(err)
	}
	admin, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		b.Fatal(err)
	}
	conn, err := db.CreateConnector(ctx, admin, quarry.ConnectorInput{Name: "repos", Source: "github", InputType: "poll",
		Config: json.RawMessage(`{}`), AccessType: quarry.AccessSync, Groups: &[]int64{}})
	if err != nil {
		b.Fatal(err)
	}
	k, err := db.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "github", CredentialJSON: map[string]any{"k": "v"}, AdminPublic: true})
	if err != nil {
		b.Fatal(err)
	}
	pair, err := db.CreateCCPair(ctx, admin, conn, k.ID, quarry.CCPairInput{Name: "repos", AccessType: quarry.AccessSync, Groups: []int64{}})
	if err != nil {
		b.Fatal(err)
	}
	docs := make([]quarry.Document, 0, quarry.MaxBatchDocuments)
	for i := range n {
		docs = append(docs, quarry.Document{ID: fmt.Sprint("doc-", i), SemanticIdentifier: "d", Source: "github", Metadata: map[string]any{},
			Sections: []quarry.Section{{Text: "quartz"}}, ExternalAccess: &quarry.ExternalAccess{ExternalUserEmails: []string{"a@example.com"}}})
		if len(docs) == cap(docs) {
			if _, err := db.IngestBatch(ctx, admin, &pair, docs); err != nil {
				b.Fatal(err)
			}
			docs = docs[:0]
		}
	}
	_, worker, err := db.StartInProcessWorker(ctx, "bench")
	if err != nil {
		b.Fatal(err)
	}
	batches := make([]quarry.Progress, n/quarry.MaxBatchAccess)
	for i := range n {
		batches[i/quarry.MaxBatchAccess].Access = append(batches[i/quarry.MaxBatchAccess].Access, quarry.DocumentAccess{DocumentID: fmt.Sprint("doc-", i),
			ExternalAccess: quarry.ExternalAccess{ExternalUserEmails: []string{fmt.Sprintf("u%d@example.com", i%50), "b@example.com"},
				ExternalUserGroupIDs: []string{fmt.Sprint("g", i%20)}}})
	}
	for b.Loop() {
		if err := db.RequestSync(ctx, admin, pair, quarry.AttemptPermissionSync); err != nil {
			b.Fatal(err)
		}
		var l *quarry.Lease
		for l == nil || l.Kind != quarry.AttemptPermissionSync {
			res, err := db.Schedule(ctx)
			if err != nil {
				b.Fatal(err)
			}
			if l, err = db.LeaseAttempt(ctx, worker); err != nil || l == nil {
				b.Fatalf("lease: %v, %v (schedule %+v)", l, err, res)
			}
			if l.Kind != quarry.AttemptPermissionSync { // The pair's first indexing, its group sync.
				if _, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
					b.Fatal(err)
				}
			}
		}
		for i := range batches {
			if _, err := db.ReportProgress(ctx, worker, l.AttemptID, &batches[i]); err != nil {
				b.Fatal(err)
			}
		}
		if st, err := db.FinishAttempt(ctx, worker, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil || st != quarry.IndexSuccess {
			b.Fatalf("finish: %s, %v", st, err)
		}
	}
}
