package api

import (
	"math"
	"net/http"
	"net/url"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// People, with Onyx's paths and shapes: the listing, roles, activation,
// invitations, and (Quarry's own) sessions.

// fullUserSnapshot is a user in the listings of people: Onyx's
// FullUserSnapshot, with how they sign in.
type fullUserSnapshot struct {
	ID                 string              `json:"id"`
	Email              string              `json:"email"`
	Role               quarry.Role         `json:"role"`
	AccountType        string              `json:"account_type"` // Onyx's AccountType: STANDARD, SERVICE_ACCOUNT
	IsActive           bool                `json:"is_active"`
	PasswordConfigured bool                `json:"password_configured"`
	PersonalName       *string             `json:"personal_name"`
	CreatedAt          quarry.Time         `json:"created_at"`
	UpdatedAt          quarry.Time         `json:"updated_at"`
	Groups             []quarry.GroupBrief `json:"groups"`
	IsSCIMSynced       bool                `json:"is_scim_synced"` // The company's directory manages the person.
	CraftEnabled       *bool               `json:"craft_enabled"`  // Onyx's Craft, which Quarry has not: null.
	SSOIssuers         []string            `json:"sso_issuers"`    // The OpenID providers the person signed in with.
	// SCIMActive is, for a person the directory manages, whether it says
	// they are active (an admin may not activate one it deactivated); null
	// otherwise.
	SCIMActive *bool `json:"scim_active"`
}

// snapshotOf returns what the listings show of p; groups says whether
// they show its groups.
func snapshotOf(p *quarry.Person, groups bool) fullUserSnapshot {
	s := fullUserSnapshot{ID: p.ID, Email: p.Email, Role: p.Role, AccountType: "STANDARD",
		IsActive: p.IsActive, PasswordConfigured: p.PasswordConfigured, PersonalName: p.Name, CreatedAt: p.CreatedAt,
		UpdatedAt: p.UpdatedAt, Groups: []quarry.GroupBrief{}, IsSCIMSynced: p.SCIMSynced, SSOIssuers: p.Identities,
		SCIMActive: p.SCIMActive}
	if p.ServiceAccount {
		s.AccountType = "SERVICE_ACCOUNT"
	}
	if groups {
		s.Groups = p.Groups
	}
	return s
}

// paginated is Onyx's PaginatedReturn.
type paginated[T any] struct {
	Items      []T `json:"items"`
	TotalItems int `json:"total_items"`
}

// handleAcceptedUsers serves GET /manage/users/accepted: the people (not
// the API keys' service accounts), a page at a time, ascending by email.
func (s *Server) handleAcceptedUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in usersQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	page := in.PageNum
	if p := value(in.Page); p != nil {
		page = *p - 1
	}
	f := quarry.UserFilter{Roles: in.Roles, Active: value(in.IsActive), Limit: int(in.PageSize), Offset: int(page * in.PageSize)}
	if q := value(in.Q); q != nil {
		f.Query = *q
	}
	out := paginated[fullUserSnapshot]{Items: []fullUserSnapshot{}}
	if st := value(in.Status); st != nil {
		active := *st == "live"
		if *st == "invited" || (f.Active != nil && *f.Active != active) {
			// Invited people have no account yet; and no one is both.
			return writeJSON(w, http.StatusOK, out)
		}
		f.Active = &active
	}
	people, total, err := s.db.People(r.Context(), f)
	if err != nil {
		return err
	}
	for _, p := range people {
		out.Items = append(out.Items, snapshotOf(p, true))
	}
	out.TotalItems = total
	return writeJSON(w, http.StatusOK, out)
}

// usersPageSize is the size of the pages of GET /manage/users, Onyx's
// USERS_PAGE_SIZE.
const usersPageSize = 10

// allUsers is the answer of GET /manage/users: Onyx's AllUsersResponse.
// Quarry has no Slack users: that list is always empty.
type allUsers struct {
	Accepted        []fullUserSnapshot `json:"accepted"`
	Invited         []invitedUser      `json:"invited"`
	SlackUsers      []fullUserSnapshot `json:"slack_users"`
	AcceptedPages   int                `json:"accepted_pages"`
	InvitedPages    int                `json:"invited_pages"`
	SlackUsersPages int                `json:"slack_users_pages"`
}

// invitedUser is Onyx's InvitedUserSnapshot.
type invitedUser struct {
	Email string `json:"email"`
}

// handleAllUsers serves GET /manage/users, Onyx's listing of every user
// for curators and admins: the people (and, with include_api_keys, the
// service accounts of API keys that are not revoked), ascending by email,
// and the invitations of those who have no account yet, both narrowed by
// q (a part of the email, in any case). With accepted_page, invited_page
// and slack_users_page all given it answers pages of 10 (from 0), else
// everything. As in Onyx, this route does not show the users' groups.
func (s *Server) handleAllUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in allUsersQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f := quarry.UserFilter{EmailOnly: true, ServiceAccounts: in.IncludeAPIKeys, Limit: math.MaxInt32}
	if q := value(in.Q); q != nil {
		f.Query = *q
	}
	accepted, invited := value(in.AcceptedPage), value(in.InvitedPage)
	paged := accepted != nil && invited != nil && in.SlackUsersPage.Set()
	if paged {
		f.Offset, f.Limit = int(*accepted)*usersPageSize, usersPageSize
	}
	people, total, err := s.db.People(r.Context(), f)
	if err != nil {
		return err
	}
	inv, err := s.db.Invitations(r.Context())
	if err != nil {
		return err
	}
	out := allUsers{Accepted: []fullUserSnapshot{}, Invited: []invitedUser{}, SlackUsers: []fullUserSnapshot{},
		AcceptedPages: 1, InvitedPages: 1, SlackUsersPages: 1}
	for _, p := range people {
		out.Accepted = append(out.Accepted, snapshotOf(p, false))
	}
	q := strings.ToLower(f.Query)
	var emails []string
	for _, i := range inv {
		if strings.Contains(strings.ToLower(i.Email), q) {
			emails = append(emails, i.Email)
		}
	}
	if paged {
		out.AcceptedPages = pages(total)
		out.InvitedPages = pages(len(emails))
		out.SlackUsersPages = 0
		emails = emails[min(len(emails), int(*invited)*usersPageSize):min(len(emails), int(*invited+1)*usersPageSize)]
	}
	for _, e := range emails {
		out.Invited = append(out.Invited, invitedUser{Email: e})
	}
	return writeJSON(w, http.StatusOK, out)
}

// pages returns the number of pages of usersPageSize that n items fill.
func pages(n int) int { return (n + usersPageSize - 1) / usersPageSize }

// handleSetUserRole serves PATCH /manage/set-user-role.
func (s *Server) handleSetUserRole(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in setUserRoleRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.SetRole(r.Context(), c, in.Body.UserEmail, in.Body.NewRole, in.Body.ExplicitOverride); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSetActive serves PATCH /manage/admin/activate-user (active) and
// PATCH /manage/admin/deactivate-user.
func (s *Server) handleSetActive(active bool) handlerFunc {
	return func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
		var in setActiveRequest
		if err := decode.Request(r, &in); err != nil {
			return err
		}
		if err := s.db.SetActive(r.Context(), c, in.Body.UserEmail, active); err != nil {
			return err
		}
		return writeJSON(w, http.StatusOK, nil)
	}
}

// handleInvitedUsers serves GET /manage/users/invited.
func (s *Server) handleInvitedUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	inv, err := s.db.Invitations(r.Context())
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, inv)
}

// handleInviteUsers serves PUT /manage/admin/users: invitations for the
// emails (those with an account or an invitation are skipped); it answers
// how many were invited.
func (s *Server) handleInviteUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in inviteUsersRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	n, err := s.db.Invite(r.Context(), c, in.Body.Emails)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, n)
}

// invitationLink is an answer of POST /manage/admin/invitations: an
// invitation's link, whose token is shown only this once.
type invitationLink struct {
	Email     string      `json:"email"`
	Token     string      `json:"token"`
	URL       string      `json:"url"`
	ExpiresAt quarry.Time `json:"expires_at"`
}

// handleIssueInvitations serves POST /manage/admin/invitations: invitations
// for the emails, each with a new single-use link (one issued before stops
// working), shown once. The link opens the console's registration with
// the token; it is absolute when QUARRY_PUBLIC_URL is set, a path on this
// site otherwise.
func (s *Server) handleIssueInvitations(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in issueInvitationsRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	links, err := s.db.IssueInvitations(r.Context(), c, in.Body.Emails, s.cfg.SignIn.InvitationTTL)
	if err != nil {
		return err
	}
	out := make([]invitationLink, len(links))
	for i, l := range links {
		q := url.Values{"email": {l.Email}, "invitation": {l.Token}}
		out[i] = invitationLink{Email: l.Email, Token: l.Token, URL: s.publicBase(r) + "/#register?" + q.Encode(), ExpiresAt: l.ExpiresAt}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleRemoveInvitation serves PATCH /manage/admin/remove-invited-user.
func (s *Server) handleRemoveInvitation(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in removeInvitationRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.RemoveInvitation(r.Context(), c, in.Body.UserEmail); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleSessions serves GET /manage/admin/sessions: the sessions that have
// not ended, of everyone or of one person, newest first.
func (s *Server) handleSessions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in sessionsQuery
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	email := ""
	if e := value(in.UserEmail); e != nil {
		email = strings.TrimSpace(*e)
	}
	ss, err := s.db.Sessions(r.Context(), email, s.cfg.SignIn.Sessions)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, ss)
}

// handleEndSession serves DELETE /manage/admin/sessions/{session_id}.
func (s *Server) handleEndSession(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in endSessionRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if err := s.db.EndSession(r.Context(), c, in.ID); err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, nil)
}

// handleEndUserSessions serves POST /manage/admin/end-user-sessions: every
// session of one person ends; it answers how many did.
func (s *Server) handleEndUserSessions(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in endUserSessionsRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	n, err := s.db.EndUserSessions(r.Context(), c, in.Body.UserEmail)
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, struct {
		Ended int `json:"ended"`
	}{n})
}
