package drivetest

import (
	"testing"
	"time"
)

// Created is when the fixture's first file was modified.
var Created = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// The fixture's domain and people.
const (
	Domain = "example.com"
	Admin  = "admin@example.com"
	Alice  = "alice@example.com"
	Bob    = "bob@example.com"
	Carol  = "carol@example.com"
	Eng    = "eng@example.com" // A group: Alice and Bob.
)

// NewFixture starts a simulator of example.com with a fixture: four
// users (Admin the administrator), the group Eng, the shared drive
// Engineering (Alice and Bob its members, not Admin), a folder, an image
// (a kind not read) and six files, each modified an hour after the one
// before it:
//
//   - 1RoadmapDoc, the Google Doc "Roadmap" of Alice's, shared with Bob;
//   - 1BudgetSheet, the Google Sheet "Budget" of Alice's, shared with Eng;
//   - 1NotesTxt, the text file "notes.txt" of Bob's, shared with the
//     domain (discoverable);
//   - 1HandbookDoc, the Google Doc "Handbook" of Carol's, shared with
//     anyone;
//   - 1DraftDoc, the Google Doc "Draft" of Carol's, shared with the domain
//     by link only;
//   - 1SpecDoc, the Google Doc "Design spec" of the shared drive.
func NewFixture(t testing.TB) *Server {
	s := New(t, Domain)
	s.Admins = []string{Admin}
	s.AddUser(Admin, Alice, Bob, Carol)
	s.SetGroup(Eng, Alice, Bob)
	s.AddDrive(Drive{ID: "0AEngDrive", Name: "Engineering", Members: []string{Alice, Bob}})
	no := false
	at := func(h int) time.Time { return Created.Add(time.Duration(h) * time.Hour) }
	for _, f := range []File{
		{ID: "1FolderA", Name: "Plans", MimeType: FolderType, Owner: Alice, Modified: at(0)},
		{ID: "1RoadmapDoc", Name: "Roadmap", MimeType: DocType, Owner: Alice, Parents: []string{"1FolderA"},
			Content: "The roadmap: search first, then the connectors.", Modified: at(1),
			Permissions: []Permission{{Type: "user", Email: Bob}}},
		{ID: "1BudgetSheet", Name: "Budget", MimeType: SheetType, Owner: Alice, Content: "item,cost\nservers,100\n", Modified: at(2),
			Permissions: []Permission{{Type: "group", Email: Eng}}},
		{ID: "1NotesTxt", Name: "notes.txt", MimeType: "text/plain", Owner: Bob, Content: "Notes of the weekly meeting.", Modified: at(3),
			Permissions: []Permission{{Type: "domain", Domain: Domain}}},
		{ID: "1HandbookDoc", Name: "Handbook", MimeType: DocType, Owner: Carol, Content: "Welcome to the company.", Modified: at(4),
			Permissions: []Permission{{Type: "anyone"}}},
		{ID: "1DraftDoc", Name: "Draft", MimeType: DocType, Owner: Carol, Content: "A draft only its link opens.", Modified: at(5),
			Permissions: []Permission{{Type: "domain", Domain: Domain, AllowFileDiscovery: &no}}},
		{ID: "1SpecDoc", Name: "Design spec", MimeType: DocType, DriveID: "0AEngDrive", Parents: []string{"0AEngDrive"},
			Content: "The design of the index.", Modified: at(6)},
		{ID: "1LogoPng", Name: "logo.png", MimeType: "image/png", Owner: Alice, Content: "\x89PNG", Modified: at(7)},
	} {
		s.AddFile(f)
	}
	return s
}
