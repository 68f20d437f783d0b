package api_test

import (
	"testing"

	"github.com/quarryhq/quarry/auth/authtest"
	"github.com/quarryhq/quarry/scim"
)

// TestSCIMThenSingleSignOn: a person the directory provisioned who then
// signs on at the provider is the same person: found by email when the
// provider says it is verified (Okta), and by email and externalId when it
// does not say so (Entra ID, whose object id, the oid claim, its
// provisioning sends as externalId). Not an admin's account by externalId
// alone, and not a person the directory deactivated.
func TestSCIMThenSingleSignOn(t *testing.T) {
	s := newSSOEnv(t, authtest.Start(t))
	s.waitReady()
	d := s.newDirectory("idp")
	provision := func(email, externalID string) string {
		return created(t, d.do("POST", "/Users", map[string]any{"schemas": []string{scim.UserSchema}, "userName": email,
			"externalId": externalID, "name": map[string]any{"givenName": "G", "familyName": "F"},
			"emails": []any{map[string]any{"value": email, "primary": true, "type": "work"}}}))
	}
	signIn := func(subject string) (*browser, *response) {
		b := s.newBrowser()
		return b, b.get(b.authorize(s, subject).String())
	}
	me := func(b *browser) string {
		var out struct{ ID string }
		b.get("/me").decodeInto(t, &out)
		return out.ID
	}

	// Okta: the subject is the externalId, and the email is verified.
	ann := provision("ann@example.com", "00u-ann")
	s.addUser("00u-ann", "ann@example.com", true)
	annB, r := signIn("00u-ann")
	s.wantRedirect(t, r, "?view=status")
	if got := me(annB); got != ann {
		t.Errorf("Ann signed in as %s, want the provisioned %s", got, ann)
	}

	// Entra ID: no email_verified; the object id is the externalId.
	bea := provision("bea@example.com", "oid-bea")
	s.op.AddUser(authtest.User{Subject: "pairwise-bea", Email: "bea@example.com", EmailUnsaid: true, ObjectID: "oid-bea",
		Name: "Bea", Password: "pw-pairwise-bea"})
	b, r := signIn("pairwise-bea")
	s.wantRedirect(t, r, "?view=status")
	if got := me(b); got != bea {
		t.Errorf("Bea signed in as %s, want the provisioned %s", got, bea)
	}
	// Later sign-ins find her by her identity.
	b, r = signIn("pairwise-bea")
	s.wantRedirect(t, r, "?view=status")
	if got := me(b); got != bea {
		t.Errorf("Bea's second sign-in: %s", got)
	}

	// Another object id, unverified: not linked.
	provision("cal@example.com", "oid-cal")
	s.op.AddUser(authtest.User{Subject: "pairwise-cal", Email: "cal@example.com", EmailUnsaid: true, ObjectID: "oid-other",
		Password: "pw-pairwise-cal"})
	_, r = signIn("pairwise-cal")
	s.wantRedirect(t, r, "?signin_error=email_taken")

	// An admin's account is not opened by externalId alone.
	provision("dee@example.com", "oid-dee")
	s.do(s.admin, "PATCH", "/manage/set-user-role", map[string]any{"user_email": "dee@example.com", "new_role": "admin"}).want(t, 200, `null`)
	s.op.AddUser(authtest.User{Subject: "pairwise-dee", Email: "dee@example.com", EmailUnsaid: true, ObjectID: "oid-dee",
		Password: "pw-pairwise-dee"})
	_, r = signIn("pairwise-dee")
	s.wantRedirect(t, r, "?signin_error=email_taken")

	// Deactivated by the directory: refused, and Ann's session ended.
	scimJSON(t, d.do("PATCH", "/Users/"+ann, `{"Operations":[{"op":"replace","value":{"active":false}}]}`), 200)
	annB.get("/me").want(t, 401, fxNotAuthed)
	b.get("/me").decodeInto(t, new(any)) // Bea's browser still works
	_, r = signIn("00u-ann")
	s.wantRedirect(t, r, "?signin_error=inactive")
}
