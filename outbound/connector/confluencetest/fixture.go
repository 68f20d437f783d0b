package confluencetest

import (
	"testing"
	"time"
)

// Created is when the fixture's pages were made; each was last modified
// a day after the one before.
var Created = time.Date(2025, 3, 1, 9, 30, 0, 0, time.UTC)

// The fixture's page ids.
const (
	DesignID  = "2001"
	SecretsID = "2002"
	PlansID   = "2003"
	WelcomeID = "2004"
	OldID     = "2005"
	CommentID = "3001"
	NotesID   = "3002"
	DiagramID = "3003"
	// The pages AddDrafts adds.
	BudgetDraftID = "2006"
	BudgetID      = "2007"
	BudgetFileID  = "3004"
	LaunchDraftID = "2008"
	LaunchID      = "2009"
)

// DesignBody is the storage format of the page Design.
const DesignBody = `<h1>Design</h1><p>The service has <strong>three</strong> parts, reviewed by <ac:link><ri:user ri:account-id="acc-bob" /></ac:link>.</p>` +
	`<ul><li>API</li><li>Store</li></ul><table><tbody><tr><th>Part</th><th>Owner</th></tr><tr><td>API</td><td>Alice</td></tr></tbody></table>` +
	`<p>See <ac:link><ri:page ri:content-title="Plans" /><ac:link-body>the plans</ac:link-body></ac:link> and <ac:link><ri:attachment ri:filename="arch diagram.png" /></ac:link>.</p>`

// NewFixture starts a simulated Confluence Cloud of user and token with
// three users (alice and bob with emails, carol without), two spaces (ENG,
// read by the group engineering and by bob; PUB, read by anonymous
// users), and five pages: in ENG, Design (with a comment), Secrets under
// it (restricted to alice) and Plans under Secrets (restricted through
// it); in PUB, Welcome and Old news (labelled archived). Design has two
// attachments: notes.txt and an image.
func NewFixture(t testing.TB, user, token string) *Server {
	s := New(t, user, token)
	s.AddUser(User{AccountID: "acc-alice", Name: "Alice Adams", Email: "alice@example.com", Groups: []string{"engineering", "confluence-users"}})
	s.AddUser(User{AccountID: "acc-bob", Name: "Bob Brown", Email: "bob@example.com", Groups: []string{"confluence-users"}})
	s.AddUser(User{AccountID: "acc-carol", Name: "Carol Clark", Groups: []string{"engineering"}})
	s.AddSpace(Space{Key: "ENG", Name: "Engineering", ReaderGroups: []string{"engineering"}, ReaderUsers: []string{"acc-bob"}})
	s.AddSpace(Space{Key: "PUB", Name: "Public", Anonymous: true})
	day := func(n int) time.Time { return Created.Add(time.Duration(n) * 24 * time.Hour) }
	s.AddPage(Page{ID: DesignID, Space: "ENG", Title: "Design", Body: DesignBody, Author: "acc-alice", Labels: []string{"architecture", "draft"}, Created: Created, Updated: day(1)})
	s.AddPage(Page{ID: CommentID, Space: "ENG", Container: DesignID, Body: "<p>Looks good to me.</p>", Author: "acc-bob", Created: day(1), Updated: day(1)})
	s.AddPage(Page{ID: NotesID, Space: "ENG", Container: DesignID, Attachment: true, Title: "notes.txt", MediaType: "text/plain",
		Data: []byte("Release notes: the API ships first.\n"), Author: "acc-bob", Created: day(1), Updated: day(1)})
	s.AddPage(Page{ID: DiagramID, Space: "ENG", Container: DesignID, Attachment: true, Title: "arch diagram.png", MediaType: "image/png",
		Data: []byte("\x89PNG"), Author: "acc-alice", Created: day(1), Updated: day(1)})
	s.AddPage(Page{ID: SecretsID, Space: "ENG", Title: "Secrets", Parent: DesignID, Body: "<p>The keys are rotated monthly.</p>", Author: "acc-alice",
		Created: Created, Updated: day(2), RestrictUsers: []string{"acc-alice"}})
	s.AddPage(Page{ID: PlansID, Space: "ENG", Title: "Plans", Parent: SecretsID, Body: "<p>Ship in <em>May</em>.</p><pre>line one\n  line two</pre>", Author: "acc-bob",
		Created: Created, Updated: day(3)})
	s.AddPage(Page{ID: WelcomeID, Space: "PUB", Title: "Welcome", Body: "<p>Welcome to the wiki.<br/>Ask in #help.</p>", Author: "acc-carol", Created: Created, Updated: day(4)})
	s.AddPage(Page{ID: OldID, Space: "PUB", Title: "Old news", Body: "<p>Nothing to see.</p>", Author: "acc-bob", Labels: []string{"archived"}, Created: Created, Updated: day(5)})
	return s
}

// AddDrafts adds to NewFixture's content two drafts in ENG, each with a
// page under it (CONFCLOUD-77618's case): a draft under Secrets
// (restricted to carol) with Budget under it, which has an attachment,
// budget.txt; a draft at the top of ENG with Launch under it.
func (s *Server) AddDrafts() {
	day := func(n int) time.Time { return Created.Add(time.Duration(n) * 24 * time.Hour) }
	s.AddPage(Page{ID: BudgetDraftID, Space: "ENG", Title: "Budget draft", Parent: SecretsID, Body: "<p>Draft.</p>",
		Author: "acc-carol", Created: day(6), Updated: day(6), Draft: true, RestrictUsers: []string{"acc-carol"}})
	s.AddPage(Page{ID: BudgetID, Space: "ENG", Title: "Budget", Parent: BudgetDraftID, Body: "<p>The budget is set.</p>",
		Author: "acc-alice", Created: day(6), Updated: day(6)})
	s.AddPage(Page{ID: BudgetFileID, Space: "ENG", Container: BudgetID, Attachment: true, Title: "budget.txt", MediaType: "text/plain",
		Data: []byte("Budget: 10.\n"), Author: "acc-alice", Created: day(6), Updated: day(6)})
	s.AddPage(Page{ID: LaunchDraftID, Space: "ENG", Title: "Launch draft", Body: "<p>Draft.</p>",
		Author: "acc-carol", Created: day(7), Updated: day(7), Draft: true})
	s.AddPage(Page{ID: LaunchID, Space: "ENG", Title: "Launch", Parent: LaunchDraftID, Body: "<p>Launch in June.</p>",
		Author: "acc-bob", Created: day(7), Updated: day(7)})
}
