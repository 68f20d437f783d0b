package outbound_test

import (
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"fmt"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound/connector"
	"github.com/quarryhq/quarry/outbound/connector/drivetest"
)

// drivePair points the workers' google_drive at the simulator s and makes
// a google_drive connector of config, a service account credential whose
// key is signed by key (the one s trusts unless given) and their pair of
// access, as the admin; it returns the ids of the connector, the
// credential and the pair.
func (w *world) drivePair(s *drivetest.Server, config map[string]any, key *rsa.PrivateKey, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	if key == nil {
		key = drivetest.Key()
	}
	return w.drivePairOf(config, map[string]any{"google_service_account_key": s.ServiceAccountKey(key),
		"google_primary_admin": drivetest.Admin, "authentication_method": "uploaded"}, access)
}

// drivePairOf makes a google_drive connector of config, a credential of
// credential and their pair of access, as the admin.
func (w *world) drivePairOf(config, credential map[string]any, access string) (connectorID, credentialID, pairID int64) {
	w.t.Helper()
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("drive %s %d", w.t.Name(), time.Now().UnixNano())
	w.do("POST", "/manage/admin/connector", map[string]any{"name": name, "source": "google_drive",
		"input_type": "poll", "connector_specific_config": config}, &id)
	connectorID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("POST", "/manage/credential", map[string]any{"credential_json": credential, "admin_public": true, "source": "google_drive"}, &id)
	credentialID = id.ID + id.Data
	id.ID, id.Data = 0, 0
	w.do("PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", connectorID, credentialID),
		map[string]any{"name": "pair " + name, "access_type": access, "groups": []int64{}}, &id)
	return connectorID, credentialID, id.ID + id.Data
}

// driveAccessByName is the principals of each of a pair's documents, by
// its name.
func (w *world) driveAccessByName(pairID int64) map[string]string {
	w.t.Helper()
	names := map[string]string{}
	rows, err := w.raw.Query(`SELECT id, semantic_identifier FROM documents WHERE cc_pair_id = $1`, pairID)
	if err != nil {
		w.t.Fatal(err)
	}
	for rows.Next() {
		var id, name string
		if err := rows.Scan(&id, &name); err != nil {
			w.t.Fatal(err)
		}
		names[id] = name
	}
	rows.Close()
	out := map[string]string{}
	for id, ps := range w.principals(pairID) {
		out[names[id]] = strings.Join(ps, " ")
	}
	return out
}

// A sync pair of the Google Drive connector against the simulator,
// through a registered worker whose QUARRY_CONNECTOR_ENDPOINTS points
// google_drive at it (its APIs and its token endpoint), through the
// egress guard: the first attempt (its first Drive call answered 403
// userRateLimitExceeded, waited out) indexes the six files with the
// access their permissions give (a file shared with a user is opened to
// its owner and that user alone; a discoverable domain share to the
// domain's group; a link-only one to no one more; anyone's link to
// everyone); a poll lists only its window and writes the file edited
// since, its new text replacing the old; a prune removes the file deleted
// at Drive; the permission and group syncs, asked through Onyx's routes,
// carry a permission removed at Drive to the index.
func TestGoogleDriveConnectorRun(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.Limit(1)
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.registeredWorker()
	config := map[string]any{"include_shared_drives": true, "include_my_drives": true, "include_files_shared_with_me": true}
	connectorID, credentialID, pair := w.drivePair(s, config, nil, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 6 {
		t.Fatalf("attempt %s with %d new documents (error %v), want success with 6; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	want := []string{"https://docs.google.com/document/d/1DraftDoc Draft", "https://docs.google.com/document/d/1HandbookDoc Handbook",
		"https://docs.google.com/document/d/1RoadmapDoc Roadmap", "https://docs.google.com/document/d/1SpecDoc Design spec",
		"https://docs.google.com/spreadsheets/d/1BudgetSheet Budget", "https://drive.google.com/file/d/1NotesTxt notes.txt"}
	if got := w.documentNames(pair, ""); !slices.Equal(got, want) {
		t.Errorf("documents\n%q, want\n%q", got, want)
	}
	wantAccess := map[string]string{
		"Roadmap":     "email:alice@example.com email:bob@example.com",
		"Budget":      "email:alice@example.com group:google_drive_eng@example.com",
		"notes.txt":   "email:bob@example.com group:google_drive_domain:example.com",
		"Handbook":    "email:carol@example.com public",
		"Draft":       "email:carol@example.com",
		"Design spec": "email:alice@example.com email:bob@example.com",
	}
	if got := w.driveAccessByName(pair); fmt.Sprint(got) != fmt.Sprint(wantAccess) {
		t.Errorf("access\n%v, want\n%v", got, wantAccess)
	}

	// A poll: the file edited since.
	s.EditFile("1RoadmapDoc", func(f *drivetest.File) {
		f.Content = "The roadmap: connectors first."
		f.Modified = time.Now().UTC().Truncate(time.Millisecond)
	})
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": false}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.TotalDocsIndexed != 1 || a.NewDocsIndexed != 0 {
		t.Errorf("the poll %s with %d documents written, %d new (error %v), want success with 1 and 0", a.Status, a.TotalDocsIndexed, a.NewDocsIndexed, a.ErrorMsg)
	}
	_, body := w.document(pair, "https://docs.google.com/document/d/1RoadmapDoc")
	if !strings.Contains(body, "connectors first") || strings.Contains(body, "search first") {
		t.Errorf("Roadmap's body %s, not its edited text alone", body)
	}
	qs := s.Queries()
	if last := qs[len(qs)-1]; !strings.Contains(last, "modifiedTime >= '") || strings.Contains(last, "'1970-01-01") {
		t.Errorf("the poll's q %q does not start at its window", last)
	}

	// A prune after notes.txt was deleted at Drive.
	s.DeleteFile("1NotesTxt")
	if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/prune", pair), nil); code != 200 {
		t.Fatalf("prune: %d %s", code, body)
	}
	w.waitPruned(pair)
	if st, removed := w.pruneAttempt(pair); st != "success" || removed != 1 {
		t.Errorf("the prune ended %s removing %d documents, want success removing 1", st, removed)
	}
	if ids := w.documents(pair); len(ids) != 5 || slices.Contains(ids, "https://drive.google.com/file/d/1NotesTxt") {
		t.Errorf("documents after the prune %q, want the 5 but notes.txt", ids)
	}

	// Bob loses Roadmap at Drive; the syncs asked now carry it.
	s.EditFile("1RoadmapDoc", func(f *drivetest.File) { f.Permissions = nil })
	get := func(kind string) string {
		code, body := w.call("GET", fmt.Sprintf("/manage/admin/cc-pair/%d/%s", pair, kind), nil)
		if code != 200 {
			t.Fatalf("GET %s: %d %s", kind, code, body)
		}
		return body
	}
	before := get("sync-permissions")
	time.Sleep(2 * time.Millisecond)
	if code, body := w.call("POST", fmt.Sprintf("/manage/admin/cc-pair/%d/sync-permissions", pair), nil); code != 200 {
		t.Fatalf("POST sync-permissions: %d %s", code, body)
	}
	deadline := time.Now().Add(20 * time.Second)
	for get("sync-permissions") == before {
		if time.Now().After(deadline) {
			t.Fatalf("no permission sync; log:\n%s", w.log.String())
		}
		w.schedule()
		time.Sleep(20 * time.Millisecond)
	}
	if got := w.driveAccessByName(pair)["Roadmap"]; got != "email:alice@example.com" {
		t.Errorf("Roadmap's access after the sync %q, want alice's alone", got)
	}
	if log := w.log.String(); strings.Contains(log, "PRIVATE KEY") || strings.Contains(log, "ya29.") {
		t.Error("a log shows the key or a token")
	}
}

// A key Google's token endpoint refuses ends the attempt as every refused
// credential does (failed, quarry.StopCredentialRefused), with Google's
// answer and no secret.
func TestGoogleDriveConnectorRefused(t *testing.T) {
	s := drivetest.NewFixture(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.registeredWorker()
	_, _, pair := w.drivePair(s, map[string]any{"include_my_drives": true}, other, "public")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	want := quarry.CredentialRefusedMessage("Google's token endpoint at " + s.TokenURL() + " answered 400 Bad Request (a token for the primary admin): invalid_grant: Invalid JWT Signature.")
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %q, want failed with %q", a.Status, deref(a.ErrorMsg), want)
	}
	if strings.Contains(w.log.String(), "PRIVATE KEY") {
		t.Error("a log shows the key")
	}
}

// A pair of shared_drive_urls and shared_folder_urls through a worker:
// the shared drive named (not the other one), the folder and its folders
// down any depth (not the files outside them), its Slides exported as
// PPTX and read; a file over the 10 MiB threshold is an error of its
// document, so the attempt completes with errors.
func TestGoogleDriveConnectorFolders(t *testing.T) {
	s := drivetest.NewFixture(t)
	deck, err := os.ReadFile("connector/testdata/file/deck.pptx")
	if err != nil {
		t.Fatal(err)
	}
	s.AddDrive(drivetest.Drive{ID: "0AOpsDrive", Name: "Operations", Members: []string{drivetest.Carol}})
	at := drivetest.Created.Add(10 * time.Hour)
	for _, f := range []drivetest.File{
		{ID: "1RunbookDoc", Name: "Runbook", MimeType: drivetest.DocType, DriveID: "0AOpsDrive", Parents: []string{"0AOpsDrive"}, Content: "Restart the crusher.", Modified: at},
		{ID: "1FolderMinutes", Name: "Minutes", MimeType: drivetest.FolderType, Owner: drivetest.Alice, Parents: []string{"1FolderA"}, Modified: at},
		{ID: "1MinutesTxt", Name: "minutes.txt", MimeType: "text/plain", Owner: drivetest.Alice, Parents: []string{"1FolderMinutes"},
			Content: "Minutes of the planning meeting.", Modified: at},
		{ID: "1DeckSlides", Name: "Roadmap deck", MimeType: drivetest.SlidesType, Owner: drivetest.Alice, Parents: []string{"1FolderMinutes"},
			Content: string(deck), Modified: at},
		{ID: "1BigTxt", Name: "big.txt", MimeType: "text/plain", Owner: drivetest.Alice, Parents: []string{"1FolderA"},
			Content: strings.Repeat("x", 10<<20+1), Modified: at},
	} {
		s.AddFile(f)
	}
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.registeredWorker()
	_, _, pair := w.drivePair(s, map[string]any{"shared_drive_urls": "https://drive.google.com/drive/folders/0AEngDrive",
		"shared_folder_urls": "https://drive.google.com/drive/folders/1FolderA"}, nil, "sync")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexCompletedWithErrors || a.NewDocsIndexed != 4 {
		t.Fatalf("attempt %s with %d new documents (error %v), want completed_with_errors with 4; log:\n%s", a.Status, a.NewDocsIndexed, a.ErrorMsg, w.log.String())
	}
	want := []string{"https://docs.google.com/document/d/1RoadmapDoc Roadmap", "https://docs.google.com/document/d/1SpecDoc Design spec",
		"https://docs.google.com/presentation/d/1DeckSlides Roadmap deck", "https://drive.google.com/file/d/1MinutesTxt minutes.txt"}
	if got := w.documentNames(pair, ""); !slices.Equal(got, want) {
		t.Errorf("documents\n%q, want\n%q", got, want)
	}
	_, body := w.document(pair, "https://docs.google.com/presentation/d/1DeckSlides")
	if !strings.Contains(body, "Open the north face in spring") {
		t.Errorf("the deck's body %s", body)
	}
	es := w.errors(pair)
	wantErr := "Error converting file 'big.txt' to Document as alice@example.com: the file is 10485761 bytes, more than the 10 MiB the connector reads (Onyx's GOOGLE_DRIVE_CONNECTOR_SIZE_THRESHOLD)"
	if len(es) != 1 || es[0].FailureMessage != wantErr || es[0].DocumentID == nil || *es[0].DocumentID != "https://drive.google.com/file/d/1BigTxt" {
		t.Errorf("errors %+v, want big.txt's %q", es, wantErr)
	}
}

// A primary admin who is no Workspace administrator ends the attempt as a
// refused credential, with the Admin SDK's answer and no secret.
func TestGoogleDriveConnectorNotAdmin(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.Admins = nil
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.registeredWorker()
	_, _, pair := w.drivePair(s, map[string]any{"include_shared_drives": true, "include_my_drives": true}, nil, "public")
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed, quarry.IndexCanceled)
	want := quarry.CredentialRefusedMessage("Google at " + s.BaseURL() + " answered 403 Forbidden (list the domain's users as the primary admin): " +
		"Not Authorized to access this resource/api (google_primary_admin must be a Google Workspace administrator's email: " +
		"the connector lists the domain's users, groups and shared drives as them)")
	if a.Status != quarry.IndexFailed || a.ErrorMsg == nil || *a.ErrorMsg != want {
		t.Errorf("attempt %s with error %q, want failed with %q", a.Status, deref(a.ErrorMsg), want)
	}
}

// An OAuth credential through a worker: the first run refreshes the
// expired access token and writes the new one back to the credential,
// which stays sealed in the database and masked in the API; the next run
// uses it and asks the token endpoint nothing.
func TestGoogleDriveConnectorOAuth(t *testing.T) {
	s := drivetest.NewFixture(t)
	refresh := s.AddOAuthUser(drivetest.Bob)
	w := newWorld(t)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.registeredWorker()
	tokens, _ := json.Marshal(map[string]string{"token": "ya29.expired", "refresh_token": refresh, "client_id": drivetest.OAuthClientID,
		"client_secret": drivetest.OAuthClientSecret, "token_uri": "https://oauth2.googleapis.com/token", "expiry": "2024-01-01T00:00:00Z"})
	connectorID, credentialID, pair := w.drivePairOf(map[string]any{"include_my_drives": true},
		map[string]any{"google_tokens": string(tokens), "google_primary_admin": drivetest.Bob, "authentication_method": "oauth_interactive"}, "public")
	refreshes := func() int {
		n := 0
		for _, r := range s.Requests() {
			if strings.HasPrefix(r, "POST /token") {
				n++
			}
		}
		return n
	}
	w.schedule()
	a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != 1 || refreshes() != 1 {
		t.Fatalf("attempt %s with %d new documents after %d refreshes (error %v), want success with 1 after 1; log:\n%s",
			a.Status, a.NewDocsIndexed, refreshes(), a.ErrorMsg, w.log.String())
	}
	var secret []byte
	var version int64
	if err := w.raw.QueryRow(`SELECT secret, version FROM credentials WHERE id = $1`, credentialID).Scan(&secret, &version); err != nil {
		t.Fatal(err)
	}
	if version != 2 || strings.Contains(string(secret), "ya29.") || strings.Contains(string(secret), refresh) {
		t.Errorf("the stored credential at version %d, want 2, sealed", version)
	}
	if code, body := w.call("GET", fmt.Sprintf("/manage/credential/%d", credentialID), nil); code != 200 || strings.Contains(body, "ya29.") ||
		strings.Contains(body, refresh) || !strings.Contains(body, `"google_tokens"`) {
		t.Errorf("GET the credential: %d %s, want it masked", code, body)
	}
	w.do("POST", "/manage/admin/connector/run-once", map[string]any{"connector_id": connectorID,
		"credential_ids": []int64{credentialID}, "from_beginning": true}, nil)
	w.schedule()
	a = w.waitAttempt(pair, 2, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
	if a.Status != quarry.IndexSuccess || refreshes() != 1 {
		t.Errorf("the second attempt %s after %d refreshes in all (error %v), want success after 1", a.Status, refreshes(), a.ErrorMsg)
	}
	if strings.Contains(w.log.String(), "ya29.sim-") {
		t.Error("a log shows an access token")
	}
}

// BenchmarkGoogleDriveConnectorIndexing indexes a My Drive of 1,000 Google
// Docs (about 1 KB of text each, shared with a colleague) from the
// simulator (pages of 100 files), from the scheduler's pass to the
// attempt's end, through the worker of quarry serve into the store:
// docs/s is the Google Drive connector's indexing rate, sim-ms/op the
// simulator's own time answering.
func BenchmarkGoogleDriveConnectorIndexing(b *testing.B) {
	const n = 1000
	s := drivetest.New(b, drivetest.Domain)
	s.Admins = []string{drivetest.Admin}
	s.AddUser(drivetest.Admin, drivetest.Alice)
	s.PageSize = 100
	text := strings.Repeat("A line of the document, with some words in it. ", 21)
	for i := range n {
		s.AddFile(drivetest.File{ID: fmt.Sprintf("1Bench%04d", i), Name: fmt.Sprintf("Doc %d", i), MimeType: drivetest.DocType, Owner: drivetest.Admin,
			Content: text, Modified: drivetest.Created.Add(time.Duration(i) * time.Minute),
			Permissions: []drivetest.Permission{{Type: "user", Email: drivetest.Alice}}})
	}
	w := newWorld(b)
	w.endpoints = connector.Endpoints{connector.GoogleDriveSource: s.BaseURL()}
	w.inProcessWorker()
	served := s.ServeTime()
	b.ResetTimer()
	for b.Loop() {
		_, _, pair := w.drivePair(s, map[string]any{"my_drive_emails": drivetest.Admin}, nil, "sync")
		w.schedule()
		a := w.waitAttempt(pair, 1, quarry.IndexSuccess, quarry.IndexCompletedWithErrors, quarry.IndexFailed)
		if a.Status != quarry.IndexSuccess || a.NewDocsIndexed != n {
			b.Fatalf("attempt %s with %d new documents (error %v), want success with %d", a.Status, a.NewDocsIndexed, a.ErrorMsg, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "docs/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}
