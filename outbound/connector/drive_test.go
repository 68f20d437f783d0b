package connector

import (
	"context"
	"crypto/rand"
	"crypto/rsa"
	"encoding/json"
	"errors"
	"fmt"
	"log/slog"
	"net/http"
	"os"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/syncbuf"
	"github.com/quarryhq/quarry/outbound/connector/drivetest"
)

// driveOpen opens the Google Drive connector of cfg with the fixture's
// service account key (signed by key: drivetest.Key() unless given),
// google_primary_admin the fixture's admin, its endpoint the simulator.
func driveOpen(t testing.TB, s *drivetest.Server, cfg map[string]any, key *rsa.PrivateKey) *GoogleDrive {
	t.Helper()
	if key == nil {
		key = drivetest.Key()
	}
	b, _ := json.Marshal(cfg)
	cb, _ := json.Marshal(map[string]any{"google_service_account_key": s.ServiceAccountKey(key), "google_primary_admin": drivetest.Admin,
		"authentication_method": "uploaded"})
	c, err := NewGoogleDrive(b, cb, &Env{HTTP: http.DefaultClient, PDF: testPDF, Now: time.Now, Log: slog.New(slog.DiscardHandler),
		Endpoints: Endpoints{GoogleDriveSource: s.BaseURL()}})
	if err != nil {
		t.Fatal(err)
	}
	d, ok := As[*GoogleDrive](c)
	if !ok {
		t.Fatalf("%T is not the Google Drive connector", c)
	}
	return d
}

var driveAll = map[string]any{"include_shared_drives": true, "include_my_drives": true, "include_files_shared_with_me": true}

// driveAccess is each document's principals, by the file's name.
func driveAccess(r *recorder) map[string]string {
	out := map[string]string{}
	for _, d := range r.docs {
		out[d.SemanticIdentifier] = strings.Join(d.ExternalAccess.Principals(), " ")
	}
	return out
}

// The fixture read whole (its first files.list answered 403
// userRateLimitExceeded, waited out): a document of each file but the
// folder and the image, with Onyx's ids, names, links, text (Docs
// exported as text, the Sheet as CSV, the text file downloaded) and the
// access its permissions give, the shared drive's file read as a member
// (the admin is not one) with its permissions from permissions.list.
func TestGoogleDriveRun(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.Limit(1)
	d := driveOpen(t, s, driveAll, nil)
	rec := &recorder{}
	if err := d.Poll(context.Background(), everything(), rec); err != nil {
		t.Fatal(err)
	}
	if len(rec.failures) > 0 {
		t.Fatalf("failures %+v", rec.failures[0])
	}
	want := []string{"https://docs.google.com/document/d/1DraftDoc", "https://docs.google.com/document/d/1HandbookDoc",
		"https://docs.google.com/document/d/1RoadmapDoc", "https://docs.google.com/document/d/1SpecDoc",
		"https://docs.google.com/spreadsheets/d/1BudgetSheet", "https://drive.google.com/file/d/1NotesTxt"}
	if got := docIDs(rec); !slices.Equal(got, want) {
		t.Fatalf("ids\n%q, want\n%q", got, want)
	}
	wantAccess := map[string]string{
		"Roadmap":     "email:alice@example.com email:bob@example.com",
		"Budget":      "email:alice@example.com group:google_drive_eng@example.com",
		"notes.txt":   "email:bob@example.com group:google_drive_domain:example.com",
		"Handbook":    "email:carol@example.com public",
		"Draft":       "email:carol@example.com",
		"Design spec": "email:alice@example.com email:bob@example.com",
	}
	if got := driveAccess(rec); fmt.Sprint(got) != fmt.Sprint(wantAccess) {
		t.Errorf("access\n%v, want\n%v", got, wantAccess)
	}
	for _, doc := range rec.docs {
		if doc.SemanticIdentifier != "Budget" {
			continue
		}
		b, _ := json.Marshal(doc)
		want := `{"id":"https://docs.google.com/spreadsheets/d/1BudgetSheet","sections":[{"text":"item, cost\nservers, 100\n",` +
			`"link":"https://docs.google.com/spreadsheets/d/1BudgetSheet/edit?usp=drivesdk"}],"source":"google_drive","semantic_identifier":"Budget",` +
			`"metadata":{"owner_names":"Alice"},"doc_updated_at":"2024-03-01T11:00:00Z","external_access":{"external_user_emails":["alice@example.com"],` +
			`"external_user_group_ids":["google_drive_eng@example.com"],"is_public":false}}`
		if string(b) != want {
			t.Errorf("Budget's document\n%s, want\n%s", b, want)
		}
	}
	reqs := strings.Join(s.Requests(), "\n")
	for _, r := range []string{"/drive/v3/drives?fields=drives%28id%29%2CnextPageToken&pageSize=100&useDomainAdminAccess=true",
		"/drive/v3/files/1BudgetSheet/export?mimeType=text%2Fcsv", "/drive/v3/files/1NotesTxt?alt=media&supportsAllDrives=true",
		"/drive/v3/files/1SpecDoc/permissions?", "pageToken=sim-2"} {
		if !strings.Contains(reqs, r) {
			t.Errorf("no request with %s in\n%s", r, reqs)
		}
	}
}

// A poll lists only the files modified in its window, by modifiedTime in
// the q; exclude_domain_link_only leaves the link-only share out, of
// runs and of the slim listing.
func TestGoogleDriveWindow(t *testing.T) {
	s := drivetest.NewFixture(t)
	d := driveOpen(t, s, map[string]any{"include_my_drives": true, "exclude_domain_link_only": true}, nil)
	rec := &recorder{}
	w := Window{Start: drivetest.Created.Add(150 * time.Minute), End: drivetest.Created.Add(330 * time.Minute)}
	if err := d.Poll(context.Background(), w, rec); err != nil {
		t.Fatal(err)
	}
	if got, want := docIDs(rec), []string{"https://docs.google.com/document/d/1HandbookDoc", "https://drive.google.com/file/d/1NotesTxt"}; !slices.Equal(got, want) {
		t.Errorf("the window's documents %q, want %q", got, want)
	}
	q := s.Queries()
	if want := "mimeType != 'application/vnd.google-apps.folder' and trashed = false and 'me' in owners and modifiedTime >= '2024-03-01T11:30:00Z' and modifiedTime <= '2024-03-01T14:30:00Z'"; !slices.Contains(q, want) {
		t.Errorf("queries %q, none %q", q, want)
	}
	var ids []string
	if err := d.ListIDs(context.Background(), func(_ context.Context, b []string) error { ids = append(ids, b...); return nil }); err != nil {
		t.Fatal(err)
	}
	slices.Sort(ids)
	if want := []string{"https://docs.google.com/document/d/1HandbookDoc", "https://docs.google.com/document/d/1RoadmapDoc",
		"https://docs.google.com/spreadsheets/d/1BudgetSheet", "https://drive.google.com/file/d/1LogoPng", "https://drive.google.com/file/d/1NotesTxt"}; !slices.Equal(ids, want) {
		t.Errorf("slim ids %q, want %q", ids, want)
	}
}

// The groups: the Directory's, with their members, and the domain's.
func TestGoogleDriveGroups(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.SetGroup("Ops@example.com", drivetest.Carol)
	d := driveOpen(t, s, driveAll, nil)
	var got []string
	if err := d.Groups(context.Background(), func(_ context.Context, g *quarry.ExternalGroup) error {
		got = append(got, g.ID+"="+strings.Join(g.UserEmails, ","))
		return nil
	}); err != nil {
		t.Fatal(err)
	}
	want := []string{"google_drive_ops@example.com=carol@example.com", "google_drive_eng@example.com=alice@example.com,bob@example.com",
		"google_drive_domain:example.com=admin@example.com,alice@example.com,bob@example.com,carol@example.com"}
	if !slices.Equal(got, want) {
		t.Errorf("groups\n%q, want\n%q", got, want)
	}
}

// A key the token endpoint refuses is a *CredentialError naming Google's
// answer, and never the key.
func TestGoogleDriveRefused(t *testing.T) {
	s := drivetest.NewFixture(t)
	other, err := rsa.GenerateKey(rand.Reader, 2048)
	if err != nil {
		t.Fatal(err)
	}
	d := driveOpen(t, s, driveAll, other)
	err = d.Poll(context.Background(), everything(), &recorder{})
	var ce *CredentialError
	want := "Google's token endpoint at " + s.TokenURL() + " answered 400 Bad Request (a token for the primary admin): invalid_grant: Invalid JWT Signature."
	if !errors.As(err, &ce) || ce.Reason != want {
		t.Fatalf("error %v, want a credential error %q", err, want)
	}
	if strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Error("the error shows the key")
	}
}

// A configuration with nothing to index, or a credential without a key
// or an admin, is refused.
func TestGoogleDriveConfig(t *testing.T) {
	env := &Env{HTTP: http.DefaultClient, PDF: testPDF}
	for _, c := range []struct{ cfg, cred, want string }{
		{`{}`, `{"google_tokens":"{\"token\":\"x\"}","google_primary_admin":"a@example.com"}`, "nothing to index. Please specify at least one of the following: include_shared_drives, include_my_drives, include_files_shared_with_me, shared_folder_urls, or my_drive_emails"},
		{`{"include_my_drives":true}`, `{"google_primary_admin":"a@example.com"}`, "the credential has neither google_service_account_key nor google_tokens"},
		{`{"include_my_drives":true}`, `{"google_tokens":"{\"token\":\"x\"}"}`, "the credential's google_primary_admin is not an email address"},
		{`{"include_my_drives":true}`, `{"google_service_account_key":"{\"type\":\"service_account\"}","google_primary_admin":"a@example.com"}`, "the credential's google_service_account_key is not a service account's JSON key (type service_account, client_email, private_key)"},
		{`{"shared_drive_urls":"not a url"}`, `{"google_tokens":"{\"token\":\"x\"}","google_primary_admin":"a@example.com"}`, `shared_drive_urls: "not a url" is not the URL of a shared drive or folder`},
	} {
		_, err := NewGoogleDrive(json.RawMessage(c.cfg), json.RawMessage(c.cred), env)
		if err == nil || err.Error() != c.want {
			t.Errorf("%s %s: %v, want %q", c.cfg, c.cred, err, c.want)
		}
	}
}

// Onyx's document ids: the webViewLink without query and trailing edit,
// view or preview.
func TestDriveDocumentID(t *testing.T) {
	for in, want := range map[string]string{
		"https://docs.google.com/document/d/1abc/edit?usp=drivesdk": "https://docs.google.com/document/d/1abc",
		"https://drive.google.com/file/d/1abc/view?usp=drivesdk":    "https://drive.google.com/file/d/1abc",
		"https://docs.google.com/presentation/d/1abc/preview":       "https://docs.google.com/presentation/d/1abc",
		"https://drive.google.com/drive/folders/1abc":               "https://drive.google.com/drive/folders/1abc",
	} {
		if got := DriveDocumentID(in); got != want {
			t.Errorf("DriveDocumentID(%q) = %q, want %q", in, got, want)
		}
	}
}

// BenchmarkGoogleDrivePermissions lists the access of 10,000 files of
// two users' My Drives (each shared with a user, a group and the
// domain) as a permission sync does: files.list pages of 1,000 with the
// permissions inline. entries/s is the rate, sim-ms/op the simulator's
// own time answering.
func BenchmarkGoogleDrivePermissions(b *testing.B) {
	const n = 10000
	s := drivetest.New(b, drivetest.Domain)
	s.Admins = []string{drivetest.Admin}
	s.AddUser(drivetest.Admin, drivetest.Alice, drivetest.Bob)
	s.SetGroup(drivetest.Eng, drivetest.Alice, drivetest.Bob)
	s.PageSize = 1000
	for i := range n {
		owner := drivetest.Alice
		if i%2 == 1 {
			owner = drivetest.Bob
		}
		s.AddFile(drivetest.File{ID: fmt.Sprintf("1Perm%05d", i), Name: fmt.Sprintf("Doc %d", i), MimeType: drivetest.DocType, Owner: owner,
			Modified:    drivetest.Created.Add(time.Duration(i) * time.Second),
			Permissions: []drivetest.Permission{{Type: "user", Email: drivetest.Carol}, {Type: "group", Email: drivetest.Eng}, {Type: "domain", Domain: drivetest.Domain}}})
	}
	served := s.ServeTime()
	for b.Loop() {
		d := driveOpen(b, s, map[string]any{"include_my_drives": true}, nil)
		got := 0
		if err := d.Permissions(context.Background(), func(_ context.Context, _ string, a *quarry.ExternalAccess) error {
			got++
			return nil
		}); err != nil {
			b.Fatal(err)
		}
		if got != n {
			b.Fatalf("%d entries, want %d", got, n)
		}
	}
	b.ReportMetric(float64(b.N*n)/b.Elapsed().Seconds(), "entries/s")
	b.ReportMetric(float64((s.ServeTime()-served).Milliseconds())/float64(b.N), "sim-ms/op")
}

// An OAuth credential (google_tokens, as Onyx keeps it: a JSON string of
// an authorized user's tokens, the access token expired) reads as its
// one user: the token refreshed at the endpoint, then that user's files
// and those shared with them; a revoked refresh token is refused with
// Google's answer.
func TestGoogleDriveOAuth(t *testing.T) {
	s := drivetest.NewFixture(t)
	open := func(refresh string) *GoogleDrive {
		tokens, _ := json.Marshal(map[string]string{"token": "ya29.expired", "refresh_token": refresh, "client_id": drivetest.OAuthClientID,
			"client_secret": drivetest.OAuthClientSecret, "token_uri": "https://oauth2.googleapis.com/token", "expiry": "2024-01-01T00:00:00Z"})
		cb, _ := json.Marshal(map[string]any{"google_tokens": string(tokens), "google_primary_admin": drivetest.Bob, "authentication_method": "oauth_interactive"})
		c, err := NewGoogleDrive(json.RawMessage(`{"include_my_drives":true,"include_files_shared_with_me":true}`), cb,
			&Env{HTTP: http.DefaultClient, PDF: testPDF, Endpoints: Endpoints{GoogleDriveSource: s.BaseURL()}})
		if err != nil {
			t.Fatal(err)
		}
		d, _ := As[*GoogleDrive](c)
		return d
	}
	rec := &recorder{}
	if err := open(s.AddOAuthUser(drivetest.Bob)).Poll(context.Background(), everything(), rec); err != nil {
		t.Fatal(err)
	}
	var names []string
	for _, d := range rec.docs {
		names = append(names, d.SemanticIdentifier)
	}
	slices.Sort(names)
	if want := []string{"Budget", "Roadmap", "notes.txt"}; !slices.Equal(names, want) {
		t.Errorf("Bob's documents %q, want %q", names, want)
	}
	err := open("1//revoked").Poll(context.Background(), everything(), &recorder{})
	var ce *CredentialError
	want := "Google's token endpoint at " + s.TokenURL() + " answered 400 Bad Request (a token for the primary admin): invalid_grant: Token has been expired or revoked."
	if !errors.As(err, &ce) || ce.Reason != want {
		t.Errorf("error %v, want a credential error %q", err, want)
	}
}

// drivePoll polls everything of the connector of cfg against s, and
// returns what it emitted.
func drivePoll(t *testing.T, s *drivetest.Server, cfg map[string]any) *recorder {
	t.Helper()
	rec := &recorder{}
	if err := driveOpen(t, s, cfg, nil).Poll(context.Background(), everything(), rec); err != nil {
		t.Fatal(err)
	}
	return rec
}

// shared_folder_urls crawls each folder and its folders, down any depth,
// as Onyx's crawl_folders_for_files does ('<id>' in parents, corpora
// allDrives), and nothing else: Alice's folder Plans (which the admin may
// not see, so it is read as the next user, Alice) with Roadmap, its
// folder Minutes and that one's folder Archive; a folder of the shared
// drive (read with supportsAllDrives); not Alice's other folder, nor the
// files outside folders.
func TestGoogleDriveFolders(t *testing.T) {
	s := drivetest.NewFixture(t)
	at := drivetest.Created.Add(10 * time.Hour)
	for _, f := range []drivetest.File{
		{ID: "1FolderMinutes", Name: "Minutes", MimeType: drivetest.FolderType, Owner: drivetest.Alice, Parents: []string{"1FolderA"}, Modified: at},
		{ID: "1MinutesTxt", Name: "minutes.txt", MimeType: "text/plain", Owner: drivetest.Alice, Parents: []string{"1FolderMinutes"},
			Content: "Minutes of the planning meeting.", Modified: at},
		{ID: "1FolderArchive", Name: "Archive", MimeType: drivetest.FolderType, Owner: drivetest.Alice, Parents: []string{"1FolderMinutes"}, Modified: at},
		{ID: "1OldPlanDoc", Name: "Old plan", MimeType: drivetest.DocType, Owner: drivetest.Alice, Parents: []string{"1FolderArchive"},
			Content: "The plan of last year.", Modified: at},
		{ID: "1FolderOther", Name: "Other", MimeType: drivetest.FolderType, Owner: drivetest.Alice, Modified: at},
		{ID: "1OtherDoc", Name: "Other", MimeType: drivetest.DocType, Owner: drivetest.Alice, Parents: []string{"1FolderOther"}, Content: "Not asked for.", Modified: at},
		{ID: "1FolderEng", Name: "Designs", MimeType: drivetest.FolderType, DriveID: "0AEngDrive", Parents: []string{"0AEngDrive"}, Modified: at},
		{ID: "1EngDoc", Name: "Index design", MimeType: drivetest.DocType, DriveID: "0AEngDrive", Parents: []string{"1FolderEng"},
			Content: "How the index is laid out.", Modified: at},
	} {
		s.AddFile(f)
	}
	rec := drivePoll(t, s, map[string]any{"shared_folder_urls": "https://drive.google.com/drive/folders/1FolderA, https://drive.google.com/drive/folders/1FolderEng?usp=sharing"})
	if len(rec.failures) > 0 {
		t.Fatalf("failures %+v", rec.failures[0])
	}
	want := []string{"https://docs.google.com/document/d/1EngDoc", "https://docs.google.com/document/d/1OldPlanDoc",
		"https://docs.google.com/document/d/1RoadmapDoc", "https://drive.google.com/file/d/1MinutesTxt"}
	if got := docIDs(rec); !slices.Equal(got, want) {
		t.Fatalf("ids\n%q, want\n%q", got, want)
	}
	wantAccess := map[string]string{
		"Roadmap":      "email:alice@example.com email:bob@example.com",
		"minutes.txt":  "email:alice@example.com",
		"Old plan":     "email:alice@example.com",
		"Index design": "email:alice@example.com email:bob@example.com",
	}
	if got := driveAccess(rec); fmt.Sprint(got) != fmt.Sprint(wantAccess) {
		t.Errorf("access\n%v, want\n%v", got, wantAccess)
	}
	q := strings.Join(s.Queries(), "\n")
	for _, c := range []string{"\nmimeType = 'application/vnd.google-apps.folder' and trashed = false and '1FolderMinutes' in parents\n",
		"\nmimeType != 'application/vnd.google-apps.folder' and '1FolderArchive' in parents and trashed = false and modifiedTime >= '1970-01-01T00:00:00Z'"} {
		if !strings.Contains(q, c) {
			t.Errorf("no files.list of q %q in\n%s", c, q)
		}
	}
	reqs := strings.Join(s.Requests(), "\n")
	if !strings.Contains(reqs, "/drive/v3/files?corpora=allDrives&fields=") || !strings.Contains(reqs, "includeItemsFromAllDrives=true") ||
		strings.Contains(reqs, "/drive/v3/drives") {
		t.Errorf("requests\n%s", reqs)
	}
}

// shared_drive_urls reads those shared drives only (corpora=drive,
// driveId, supportsAllDrives, includeItemsFromAllDrives), as a member
// (the admin is none), without listing the organization's drives.
func TestGoogleDriveSharedDriveURLs(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.AddDrive(drivetest.Drive{ID: "0AOpsDrive", Name: "Operations", Members: []string{drivetest.Carol}})
	s.AddFile(drivetest.File{ID: "1RunbookDoc", Name: "Runbook", MimeType: drivetest.DocType, DriveID: "0AOpsDrive", Parents: []string{"0AOpsDrive"},
		Content: "Restart the crusher.", Modified: drivetest.Created})
	rec := drivePoll(t, s, map[string]any{"shared_drive_urls": "https://drive.google.com/drive/folders/0AEngDrive", "include_shared_drives": true})
	if got, want := docIDs(rec), []string{"https://docs.google.com/document/d/1SpecDoc"}; !slices.Equal(got, want) || len(rec.failures) > 0 {
		t.Fatalf("ids %q (failures %v), want %q", got, rec.failures, want)
	}
	reqs := strings.Join(s.Requests(), "\n")
	if !strings.Contains(reqs, "/drive/v3/files?corpora=drive&driveId=0AEngDrive&fields=") || strings.Contains(reqs, "0AOpsDrive") ||
		strings.Contains(reqs, "/drive/v3/drives") || strings.Contains(reqs, "corpora=user") {
		t.Errorf("requests\n%s", reqs)
	}
}

// A file over Onyx's 10 MiB threshold is a failure of its document that
// says so, never a silent skip: one whose listed size is over it is not
// downloaded; a Google Doc, which has no size, is exported up to the
// threshold and no further. The others are read.
func TestGoogleDriveTooLarge(t *testing.T) {
	s := drivetest.NewFixture(t)
	big := strings.Repeat("x", driveSizeThreshold+1)
	s.AddFile(drivetest.File{ID: "1BigTxt", Name: "big.txt", MimeType: "text/plain", Owner: drivetest.Alice, Content: big, Modified: drivetest.Created})
	s.AddFile(drivetest.File{ID: "1BigDoc", Name: "Big doc", MimeType: drivetest.DocType, Owner: drivetest.Alice, Content: big, Modified: drivetest.Created})
	rec := drivePoll(t, s, map[string]any{"my_drive_emails": drivetest.Alice})
	var got []string
	for _, f := range rec.failures {
		got = append(got, f.FailedDocument.DocumentID+": "+f.FailureMessage)
	}
	slices.Sort(got)
	want := []string{
		"https://docs.google.com/document/d/1BigDoc: Error converting file 'Big doc' to Document as alice@example.com: " +
			"the file is larger than 10 MiB, more than the 10 MiB the connector reads (Onyx's GOOGLE_DRIVE_CONNECTOR_SIZE_THRESHOLD)",
		"https://drive.google.com/file/d/1BigTxt: Error converting file 'big.txt' to Document as alice@example.com: " +
			"the file is 10485761 bytes, more than the 10 MiB the connector reads (Onyx's GOOGLE_DRIVE_CONNECTOR_SIZE_THRESHOLD)",
	}
	if !slices.Equal(got, want) {
		t.Errorf("failures\n%q, want\n%q", got, want)
	}
	if got, want := docIDs(rec), []string{"https://docs.google.com/document/d/1RoadmapDoc", "https://docs.google.com/spreadsheets/d/1BudgetSheet"}; !slices.Equal(got, want) {
		t.Errorf("documents %q, want %q", got, want)
	}
	if reqs := strings.Join(s.Requests(), "\n"); strings.Contains(reqs, "/files/1BigTxt?alt=media") {
		t.Error("the file over the threshold by its size was downloaded")
	}
}

// A primary admin who is no Workspace administrator: the Admin SDK
// answers 403 "Not Authorized to access this resource/api", which ends
// the run (and the group sync) as a refused credential naming Google's
// answer, as Onyx refuses it; no email or key is in it.
func TestGoogleDriveNotAdmin(t *testing.T) {
	s := drivetest.NewFixture(t)
	s.Admins = nil
	d := driveOpen(t, s, driveAll, nil)
	want := "Google at " + s.BaseURL() + " answered 403 Forbidden (list the domain's users as the primary admin): Not Authorized to access this resource/api " +
		"(google_primary_admin must be a Google Workspace administrator's email: the connector lists the domain's users, groups and shared drives as them)"
	var ce *CredentialError
	if err := d.Poll(context.Background(), everything(), &recorder{}); !errors.As(err, &ce) || ce.Reason != want {
		t.Errorf("the run's error %v, want a credential error %q", err, want)
	}
	err := d.Groups(context.Background(), func(context.Context, *quarry.ExternalGroup) error { return nil })
	want = strings.Replace(want, "list the domain's users", "list the groups", 1)
	if !errors.As(err, &ce) || ce.Reason != want {
		t.Errorf("the group sync's error %v, want a credential error %q", err, want)
	}
	if strings.Contains(err.Error(), drivetest.Admin) || strings.Contains(err.Error(), "PRIVATE KEY") {
		t.Errorf("the error names a secret: %v", err)
	}
}

// Google Slides are exported as PPTX and read as the file connector reads
// a .pptx, as Onyx's GOOGLE_MIME_TYPES_TO_EXPORT and read_pptx_file do.
func TestGoogleDriveSlides(t *testing.T) {
	s := drivetest.NewFixture(t)
	deck, err := os.ReadFile("testdata/file/deck.pptx")
	if err != nil {
		t.Fatal(err)
	}
	s.AddFile(drivetest.File{ID: "1DeckSlides", Name: "Roadmap deck", MimeType: drivetest.SlidesType, Owner: drivetest.Alice, Content: string(deck),
		Modified: drivetest.Created})
	rec := drivePoll(t, s, map[string]any{"my_drive_emails": drivetest.Alice})
	if len(rec.failures) > 0 {
		t.Fatalf("failures %+v", rec.failures[0])
	}
	var text string
	for _, d := range rec.docs {
		if d.ID == "https://docs.google.com/presentation/d/1DeckSlides" {
			text = d.Sections[0].Text
		}
	}
	for _, w := range []string{"Quarry roadmap", "Open the north face in spring", "Budget: crushers and trucks"} {
		if !strings.Contains(text, w) {
			t.Errorf("the deck's text %q lacks %q", text, w)
		}
	}
	if reqs := strings.Join(s.Requests(), "\n"); !strings.Contains(reqs,
		"/drive/v3/files/1DeckSlides/export?mimeType=application%2Fvnd.openxmlformats-officedocument.presentationml.presentation") {
		t.Errorf("no PPTX export in\n%s", reqs)
	}
}

// An OAuth token refreshed is written back through Env.SaveCredential,
// once: google_tokens (a JSON string, as it was) with the new access
// token and its expiry, its refresh token and client kept, the
// credential's other keys as they were; a run of the credential written
// back uses that token and asks the token endpoint nothing.
func TestGoogleDriveOAuthSaved(t *testing.T) {
	s := drivetest.NewFixture(t)
	credential, refresh := expiredOAuth(s)
	run := func(credential json.RawMessage) (saved []json.RawMessage) {
		t.Helper()
		c, err := NewGoogleDrive(json.RawMessage(`{"include_my_drives":true}`), credential, &Env{HTTP: http.DefaultClient, PDF: testPDF,
			Endpoints: Endpoints{GoogleDriveSource: s.BaseURL()},
			SaveCredential: func(_ context.Context, c json.RawMessage) error {
				saved = append(saved, c)
				return nil
			}})
		if err != nil {
			t.Fatal(err)
		}
		rec := &recorder{}
		d, _ := As[*GoogleDrive](c)
		if err := d.Poll(context.Background(), everything(), rec); err != nil || len(rec.docs) != 1 {
			t.Fatalf("the run: %v, %d documents, want notes.txt", err, len(rec.docs))
		}
		return saved
	}
	tokenCalls := func() int {
		n := 0
		for _, r := range s.Requests() {
			if strings.HasPrefix(r, "POST /token") {
				n++
			}
		}
		return n
	}
	saved := run(credential)
	if len(saved) != 1 || tokenCalls() != 1 {
		t.Fatalf("%d credentials written back after %d refreshes, want 1 after 1", len(saved), tokenCalls())
	}
	var got struct {
		Tokens string `json:"google_tokens"`
		Admin  string `json:"google_primary_admin"`
		Method string `json:"authentication_method"`
	}
	var tok map[string]string
	if err := json.Unmarshal(saved[0], &got); err != nil || json.Unmarshal([]byte(got.Tokens), &tok) != nil {
		t.Fatalf("written back %s, not the credential with google_tokens a JSON string", saved[0])
	}
	expiry, err := time.Parse(time.RFC3339, tok["expiry"])
	if !strings.HasPrefix(tok["token"], "ya29.sim-") || tok["refresh_token"] != refresh || tok["client_id"] != drivetest.OAuthClientID ||
		tok["client_secret"] != drivetest.OAuthClientSecret || err != nil || expiry.Before(time.Now().Add(50*time.Minute)) ||
		got.Admin != drivetest.Bob || got.Method != "oauth_interactive" {
		t.Errorf("written back %s", saved[0])
	}
	if again := run(saved[0]); len(again) != 0 || tokenCalls() != 1 {
		t.Errorf("the next run wrote back %d credentials and refreshed %d times in all, want none and 1", len(again), tokenCalls())
	}
}

// expiredOAuth returns an OAuth credential of Bob's at s whose access
// token has expired (google_tokens a JSON string, as Onyx stores it), and
// its refresh token.
func expiredOAuth(s *drivetest.Server) (json.RawMessage, string) {
	refresh := s.AddOAuthUser(drivetest.Bob)
	tokens, _ := json.Marshal(map[string]string{"token": "ya29.expired", "refresh_token": refresh, "client_id": drivetest.OAuthClientID,
		"client_secret": drivetest.OAuthClientSecret, "token_uri": "https://oauth2.googleapis.com/token", "expiry": "2024-01-01T00:00:00Z"})
	credential, _ := json.Marshal(map[string]any{"google_tokens": string(tokens), "google_primary_admin": drivetest.Bob, "authentication_method": "oauth_interactive"})
	return credential, refresh
}

// TestGoogleDriveOAuthSaveRefused: when the worker refuses the refreshed
// token's write-back (the credential was edited meanwhile: 412), the run
// goes on with the new token, and the warning it logs holds no token.
func TestGoogleDriveOAuthSaveRefused(t *testing.T) {
	s := drivetest.NewFixture(t)
	credential, refresh := expiredOAuth(s)
	var logs syncbuf.Buffer
	tries := 0
	c, err := NewGoogleDrive(json.RawMessage(`{"include_my_drives":true}`), credential, &Env{HTTP: http.DefaultClient, PDF: testPDF,
		Endpoints: Endpoints{GoogleDriveSource: s.BaseURL()}, Log: slog.New(slog.NewTextHandler(&logs, nil)),
		SaveCredential: func(context.Context, json.RawMessage) error {
			tries++
			return errors.New("the worker answered 412: the credential changed since the attempt began")
		}})
	if err != nil {
		t.Fatal(err)
	}
	rec := &recorder{}
	d, _ := As[*GoogleDrive](c)
	if err := d.Poll(context.Background(), everything(), rec); err != nil || len(rec.docs) != 1 || tries != 1 {
		t.Fatalf("the run: %v, %d documents, %d write-backs tried; want notes.txt and 1", err, len(rec.docs), tries)
	}
	log := logs.String()
	if !strings.Contains(log, "the refreshed OAuth token could not be written back") || !strings.Contains(log, "412") {
		t.Errorf("log %q, want the write-back's refusal", log)
	}
	if strings.Contains(log, "ya29.") || strings.Contains(log, refresh) {
		t.Errorf("log %q holds a token", log)
	}
}
