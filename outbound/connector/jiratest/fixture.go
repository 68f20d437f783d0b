package jiratest

import (
	"encoding/json"
	"testing"
	"time"
)

// Created is when the fixture's first issue was created.
var Created = time.Date(2024, 3, 1, 9, 0, 0, 0, time.UTC)

// Fixture's account: the email its API token goes with.
const FixtureEmail = "indexer@example.com"

// NewFixture starts a simulator that takes FixtureEmail and token, with
// a fixture: five users (one hiding its email, one an app), three
// groups, three projects and seven issues.
//
//   - ENG (Engineering) may be browsed by alice (a user holder), the
//     group engineering and role 10002 (the group support, dave and
//     carol, whose email is hidden); its scheme also has a reporter
//     holder and an anyone holder of another permission, which give no
//     one.
//   - OPS (Operations) by anyone: public.
//   - SEC (Security) by the reporter only: no one.
//
// ENG-1 is an epic with an ADF description of nested nodes; ENG-2 its
// story with comments (one by the app, automation@example.com); ENG-3 a
// bug labelled secret with no description; ENG-4 a resolved task with a
// due date. OPS-1, OPS-2 and SEC-1 are plain. Each issue was updated an
// hour after the one before it.
func NewFixture(t testing.TB, token string) *Server {
	s := New(t, FixtureEmail, token)
	for _, u := range []User{
		{AccountID: "5b10a2844c20165700ede21g", DisplayName: "Alice Admin", Email: "alice@example.com"},
		{AccountID: "5b10ac8d82e05b22cc7d4ef5", DisplayName: "Bob Builder", Email: "bob@example.com"},
		{AccountID: "5b109f2e9729b51b54dc274d", DisplayName: "Carol Quiet", Email: "carol@example.com", HideEmail: true},
		{AccountID: "5b10a0effa615349cb016cd8", DisplayName: "Dave Dev", Email: "dave@example.com"},
		{AccountID: "557058:f58131cb-b67d-43c7-b30d-6b58d40bd077", DisplayName: "Automation for Jira", Email: "automation@example.com", AccountType: "app"},
	} {
		s.AddUser(u)
	}
	alice, bob, carol, dave, bot := Alice, Bob, Carol, Dave, Bot
	s.AddGroup("engineering", alice, bob, carol)
	s.AddGroup("jira-admins", alice)
	s.AddGroup("support", dave, bot)
	s.AddProject(Project{Key: "ENG", Name: "Engineering",
		Permissions: []Holder{{Type: "user", Param: alice}, {Type: "group", Param: "engineering"}, {Type: "projectRole", Param: "10002"},
			{Type: "reporter"}, {Permission: "CREATE_ISSUES", Type: "anyone"}},
		Roles: map[int][]Actor{10002: {{Group: "support"}, {User: dave}, {User: carol}}}})
	s.AddProject(Project{Key: "OPS", Name: "Operations", Permissions: []Holder{{Type: "anyone"}}})
	s.AddProject(Project{Key: "SEC", Name: "Security", Permissions: []Holder{{Type: "reporter"}}})
	at := func(h int) time.Time { return Created.Add(time.Duration(h) * time.Hour) }
	resolved := at(20)
	epic := json.RawMessage(`{"type":"doc","version":1,"content":[` +
		`{"type":"heading","attrs":{"level":2},"content":[{"type":"text","text":"Goals"}]},` +
		`{"type":"bulletList","content":[{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"text","text":"Faster","marks":[{"type":"strong"}]},{"type":"text","text":"answers"}]}]},` +
		`{"type":"listItem","content":[{"type":"paragraph","content":[{"type":"mention","attrs":{"id":"` + bob + `","text":"@Bob Builder"}},{"type":"text","text":"owns it"}]}]}]},` +
		`{"type":"paragraph","content":[{"type":"hardBreak"},{"type":"text","text":""}]}]}`)
	for _, is := range []Issue{
		{Project: "ENG", Summary: "Search revamp", DescriptionADF: epic, Status: "In Progress", Priority: "High", IssueType: "Epic",
			Reporter: alice, Assignee: alice, Labels: []string{"search"}, Created: at(0), Updated: at(1)},
		{Project: "ENG", Summary: "Index the wiki", Description: "Index every page of the wiki.\nKeep the links.", Status: "In Progress", Priority: "Medium",
			IssueType: "Story", Reporter: alice, Assignee: bob, Labels: []string{"search", "backend"}, Parent: "ENG-1", Created: at(1), Updated: at(2),
			Comments: []Comment{{Author: bob, Body: "Started on it.", Created: at(2)}, {Author: bot, Body: "Build passed.", Created: at(2)},
				{Author: carol, Body: "Looks good.", Created: at(2)}}},
		{Project: "ENG", Summary: "Crash on empty query", Status: "To Do", Priority: "Highest", IssueType: "Bug", Reporter: bob,
			Labels: []string{"secret"}, Created: at(2), Updated: at(3)},
		{Project: "ENG", Summary: "Write the docs", Description: "Operations and decisions.", Status: "Done", Priority: "Low", IssueType: "Task",
			Resolution: "Done", ResolutionDate: &resolved, DueDate: "2024-03-15", Reporter: dave, Assignee: carol, Created: at(3), Updated: at(4)},
		{Project: "OPS", Summary: "Rotate the keys", Description: "Every quarter.", Status: "To Do", Priority: "Medium", IssueType: "Task",
			Reporter: dave, Created: at(4), Updated: at(5)},
		{Project: "OPS", Summary: "Renew the certificate", Description: "Before it expires.", Status: "To Do", Priority: "Medium", IssueType: "Task",
			Reporter: dave, Assignee: dave, Created: at(5), Updated: at(6)},
		{Project: "SEC", Summary: "Audit", Description: "Who reads what.", Status: "To Do", Priority: "High", IssueType: "Task",
			Reporter: alice, Created: at(6), Updated: at(7)},
	} {
		s.AddIssue(is)
	}
	return s
}

// Accounts of the fixture, by name.
var (
	Alice = "5b10a2844c20165700ede21g"
	Bob   = "5b10ac8d82e05b22cc7d4ef5"
	Carol = "5b109f2e9729b51b54dc274d"
	Dave  = "5b10a0effa615349cb016cd8"
	Bot   = "557058:f58131cb-b67d-43c7-b30d-6b58d40bd077"
)
