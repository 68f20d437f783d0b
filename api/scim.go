package api

import (
	"context"
	"errors"
	"io"
	"mime"
	"net/http"
	"strconv"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/scim"
)

// SCIM 2.0 (RFC 7643, RFC 7644) under /scim/v2, as Onyx serves it: the
// company's directory provisions people and groups with its SCIM token.
// The token opens these routes and nothing else (authenticate refuses it),
// and nothing else opens them: no API key, session or access token. Every
// answer, errors included, is application/scim+json (writeSCIM,
// writeSCIMError). Package scim speaks the protocol, package store keeps
// the records.

// scimHandlerFunc is a SCIM handler: the caller is the directory.
type scimHandlerFunc func(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error

// errSCIMNotAuthenticated answers a SCIM request that brings no
// credentials, and errSCIMInvalidToken one whose credentials are not the
// active SCIM token (another kind of token, a revoked one...): the same
// body, and WWW-Authenticate says which (RFC 6750), as for the rest of the
// API (errNotAuthenticated, errInvalidToken).
var (
	errSCIMNotAuthenticated = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")
	errSCIMInvalidToken     = quarry.Errorf(quarry.EUNAUTHORIZED, "Not authenticated")
)

// scimAuthed adapts a SCIM handler: the request must carry the active SCIM
// token as a bearer token (401 otherwise), and every error it returns is
// written as a SCIM error.
func (s *Server) scimAuthed(h scimHandlerFunc) http.Handler {
	return s.scimPublic(func(w http.ResponseWriter, r *http.Request) error {
		c, err := s.scimCaller(r)
		if err != nil {
			return err
		}
		return h(w, r, c)
	})
}

// scimPublic adapts a SCIM handler that needs no token (discovery).
func (s *Server) scimPublic(h func(w http.ResponseWriter, r *http.Request) error) http.Handler {
	return http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		ctx, cancel := context.WithTimeout(r.Context(), s.cfg.DBTimeout)
		defer cancel()
		r = r.WithContext(ctx)
		if err := h(w, r); err != nil {
			s.writeSCIMError(w, r, err)
		}
	})
}

// scimCaller returns the directory, if the request carries the active SCIM
// token.
func (s *Server) scimCaller(r *http.Request) (*quarry.Caller, error) {
	h := r.Header.Get("Authorization")
	if h == "" {
		if _, err := r.Cookie(sessionCookie); err != nil {
			return nil, errSCIMNotAuthenticated
		}
		return nil, errSCIMInvalidToken // A session opens nothing here.
	}
	scheme, token, ok := strings.Cut(h, " ")
	token = strings.TrimSpace(token)
	if !ok || !strings.EqualFold(scheme, "bearer") || !quarry.ValidSCIMTokenFormat(token) {
		return nil, errSCIMInvalidToken
	}
	c, err := s.db.SCIMCaller(r.Context(), quarry.HashToken(token))
	if quarry.ErrorCode(err) == quarry.EUNAUTHORIZED {
		return nil, errSCIMInvalidToken
	}
	return c, err
}

// scimBase returns the SCIM base URL of the site as the request reached it
// (QUARRY_PUBLIC_URL's, when set), for locations.
func (s *Server) scimBase(r *http.Request) string {
	if u := s.cfg.SignIn.PublicURL; u != nil {
		return strings.TrimRight(u.String(), "/") + "/scim/v2"
	}
	scheme := "http"
	if r.TLS != nil || forwardedHTTPS(r) {
		scheme = "https"
	}
	return scheme + "://" + r.Host + s.cookiePath(r) + "/scim/v2"
}

// scimBody reads the body of a SCIM request: JSON (application/scim+json,
// application/json or another +json type), within the size limit.
func scimBody(r *http.Request) ([]byte, error) {
	mt, _, err := mime.ParseMediaType(r.Header.Get("Content-Type"))
	if err != nil || (mt != scim.MediaType && mt != "application/json" && !strings.HasSuffix(mt, "+json")) {
		return nil, &scim.Error{Type: scim.InvalidSyntax, Detail: "The body must be application/scim+json"}
	}
	body, err := io.ReadAll(r.Body)
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return nil, quarry.Errorf(quarry.ETOOLARGE, "Request body is larger than %d bytes", mbe.Limit)
	}
	return body, err
}

// scimPage is the pagination and projection of a listing: startIndex
// (1-based; less than 1 is 1), count (negative is 0; at most
// scim.MaxResults, 100 by default), attributes and excludedAttributes.
type scimPage struct {
	start, count         int
	attributes, excluded []string
}

// scimQuery reads the pagination and projection of r; a number that is not
// one is refused (invalidValue).
func scimQuery(r *http.Request) (scimPage, error) {
	q := r.URL.Query()
	p := scimPage{start: 1, count: 100,
		attributes: scim.ParseAttributeList(q.Get("attributes")), excluded: scim.ParseAttributeList(q.Get("excludedAttributes"))}
	for name, dst := range map[string]*int{"startIndex": &p.start, "count": &p.count} {
		v := strings.TrimSpace(q.Get(name))
		if v == "" {
			continue
		}
		n, err := strconv.Atoi(v)
		if err != nil {
			return p, &scim.Error{Type: scim.InvalidValue, Detail: name + " must be an integer"}
		}
		*dst = n
	}
	p.start = max(p.start, 1)
	p.count = min(max(p.count, 0), scim.MaxResults)
	return p, nil
}

// ifMatchValues returns the values of the If-Match header, nil when it has
// none.
func ifMatchValues(r *http.Request) []string {
	if v := r.Header.Values("If-Match"); len(v) > 0 {
		return v
	}
	return nil
}

// handleSCIMServiceProviderConfig serves GET /scim/v2/ServiceProviderConfig.
func (s *Server) handleSCIMServiceProviderConfig(w http.ResponseWriter, r *http.Request) error {
	return writeSCIM(w, http.StatusOK, scim.NewServiceProviderConfig(s.scimBase(r)))
}

// handleSCIMResourceTypes serves GET /scim/v2/ResourceTypes, in a list
// envelope (Entra ID expects an object, not an array).
func (s *Server) handleSCIMResourceTypes(w http.ResponseWriter, r *http.Request) error {
	rts := scim.ResourceTypes(s.scimBase(r))
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(rts, len(rts), 1))
}

// handleSCIMResourceType serves GET /scim/v2/ResourceTypes/{name}.
func (s *Server) handleSCIMResourceType(w http.ResponseWriter, r *http.Request) error {
	for _, rt := range scim.ResourceTypes(s.scimBase(r)) {
		if strings.EqualFold(rt.(*scim.ResourceType).ID, r.PathValue("name")) {
			return writeSCIM(w, http.StatusOK, rt)
		}
	}
	return quarry.Errorf(quarry.ENOTFOUND, "Resource type %s not found", r.PathValue("name"))
}

// handleSCIMSchemas serves GET /scim/v2/Schemas, in a list envelope.
func (s *Server) handleSCIMSchemas(w http.ResponseWriter, r *http.Request) error {
	ss := scim.Schemas(s.scimBase(r))
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(ss, len(ss), 1))
}

// handleSCIMSchema serves GET /scim/v2/Schemas/{id}.
func (s *Server) handleSCIMSchema(w http.ResponseWriter, r *http.Request) error {
	for _, sc := range scim.Schemas(s.scimBase(r)) {
		if strings.EqualFold(sc.(*scim.Schema).ID, r.PathValue("id")) {
			return writeSCIM(w, http.StatusOK, sc)
		}
	}
	return quarry.Errorf(quarry.ENOTFOUND, "Schema %s not found", r.PathValue("id"))
}

// userResource returns u as the SCIM resource of r's answer.
func (s *Server) userResource(r *http.Request, u *quarry.DirectoryUser) *scim.User {
	return scim.UserResource(u, s.scimBase(r)+"/Users/"+u.ID)
}

// writeSCIMUser writes u with status, its ETag and, for a creation, its
// Location.
func (s *Server) writeSCIMUser(w http.ResponseWriter, r *http.Request, status int, u *quarry.DirectoryUser, p scimPage) error {
	res := s.userResource(r, u)
	w.Header().Set("ETag", scim.ETag(u.Version()))
	if status == http.StatusCreated {
		w.Header().Set("Location", res.Meta.Location)
	}
	res.Project(p.attributes, p.excluded)
	return writeSCIM(w, status, res)
}

// handleSCIMListUsers serves GET /scim/v2/Users: the directory's people
// that filter selects, a page at a time, in the order they were
// provisioned.
func (s *Server) handleSCIMListUsers(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	f, err := scim.ParseFilter(r.URL.Query().Get("filter"), scim.Users)
	if err != nil {
		return err
	}
	users, total, err := s.db.DirectoryUsers(r.Context(), f, p.start, p.count)
	if err != nil {
		return err
	}
	out := make([]any, len(users))
	for i, u := range users {
		res := s.userResource(r, u)
		res.Project(p.attributes, p.excluded)
		out[i] = res
	}
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(out, total, p.start))
}

// handleSCIMGetUser serves GET /scim/v2/Users/{user_id}; If-None-Match
// with its version answers 304.
func (s *Server) handleSCIMGetUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	u, err := s.db.DirectoryUser(r.Context(), r.PathValue("user_id"))
	if err != nil {
		return err
	}
	if scimNotModified(w, r, u.Version()) {
		return nil
	}
	return s.writeSCIMUser(w, r, http.StatusOK, u, p)
}

// scimNotModified answers 304 with the resource's ETag, and reports so,
// when the request's If-None-Match names version.
func scimNotModified(w http.ResponseWriter, r *http.Request, version string) bool {
	if !quarry.VersionMatches(r.Header.Values("If-None-Match"), version) {
		return false
	}
	w.Header().Set("ETag", scim.ETag(version))
	w.WriteHeader(http.StatusNotModified)
	return true
}

// handleSCIMCreateUser serves POST /scim/v2/Users: 201 with the person (a
// new account, or the account that has the email already, which the
// directory manages from then on), 409 (uniqueness) for a person the
// directory has already.
func (s *Server) handleSCIMCreateUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	in, err := scim.DecodeUser(body)
	if err != nil {
		return err
	}
	u, err := s.db.CreateDirectoryUser(r.Context(), c, in, s.cfg.SignIn.Registration.Domains)
	if err != nil {
		return err
	}
	return s.writeSCIMUser(w, r, http.StatusCreated, u, scimPage{})
}

// handleSCIMReplaceUser serves PUT /scim/v2/Users/{user_id}: the attributes
// Quarry keeps are replaced by those of the body (one left out is cleared;
// the person's name stays when the body has none).
func (s *Server) handleSCIMReplaceUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	in, err := scim.DecodeUser(body)
	if err != nil {
		return err
	}
	u, err := s.db.UpdateDirectoryUser(r.Context(), c, r.PathValue("user_id"), ifMatchValues(r), s.cfg.SignIn.Registration.Domains,
		func(u *quarry.DirectoryUser) error {
			u.UserName, u.ExternalID, u.DisplayName, u.Emails, u.Active = in.UserName, in.ExternalID, in.DisplayName, in.Emails, in.Active
			u.GivenName, u.FamilyName, u.Formatted = in.GivenName, in.FamilyName, in.Formatted
			u.Department, u.Manager = in.Department, in.Manager
			return nil
		})
	if err != nil {
		return err
	}
	return s.writeSCIMUser(w, r, http.StatusOK, u, scimPage{})
}

// handleSCIMPatchUser serves PATCH /scim/v2/Users/{user_id}: 200 with the
// person as the operations left them (unchanged, and not written, when
// they change nothing).
func (s *Server) handleSCIMPatchUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	ops, err := scim.ParsePatch(body)
	if err != nil {
		return err
	}
	u, err := s.db.UpdateDirectoryUser(r.Context(), c, r.PathValue("user_id"), ifMatchValues(r), s.cfg.SignIn.Registration.Domains,
		func(u *quarry.DirectoryUser) error { return scim.ApplyUser(u, ops) })
	if err != nil {
		return err
	}
	return s.writeSCIMUser(w, r, http.StatusOK, u, scimPage{})
}

// handleSCIMDeleteUser serves DELETE /scim/v2/Users/{user_id}: 204; the
// account is deactivated and no longer the directory's (a second deletion
// answers 404).
func (s *Server) handleSCIMDeleteUser(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if err := s.db.DeleteDirectoryUser(r.Context(), c, r.PathValue("user_id"), ifMatchValues(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}

// groupResource returns g as the SCIM resource of r's answer.
func (s *Server) groupResource(r *http.Request, g *quarry.DirectoryGroup) *scim.Group {
	return scim.GroupResource(g, s.scimBase(r)+"/Groups/"+strconv.FormatInt(g.ID, 10))
}

// writeSCIMGroup writes g with status, its ETag and, for a creation, its
// Location.
func (s *Server) writeSCIMGroup(w http.ResponseWriter, r *http.Request, status int, g *quarry.DirectoryGroup, p scimPage) error {
	res := s.groupResource(r, g)
	w.Header().Set("ETag", scim.ETag(g.Version()))
	if status == http.StatusCreated {
		w.Header().Set("Location", res.Meta.Location)
	}
	res.Project(p.attributes, p.excluded)
	return writeSCIM(w, status, res)
}

// handleSCIMListGroups serves GET /scim/v2/Groups: every group (the
// default ones too) that filter selects, ascending by id, with the
// directory's people as members (read only when shown).
func (s *Server) handleSCIMListGroups(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	f, err := scim.ParseFilter(r.URL.Query().Get("filter"), scim.Groups)
	if err != nil {
		return err
	}
	groups, total, err := s.db.DirectoryGroups(r.Context(), f, p.start, p.count, scim.WantsMembers(p.attributes, p.excluded))
	if err != nil {
		return err
	}
	out := make([]any, len(groups))
	for i, g := range groups {
		res := s.groupResource(r, g)
		res.Project(p.attributes, p.excluded)
		out[i] = res
	}
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(out, total, p.start))
}

// handleSCIMGetGroup serves GET /scim/v2/Groups/{group_id}.
func (s *Server) handleSCIMGetGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	g, err := s.db.DirectoryGroup(r.Context(), r.PathValue("group_id"), true)
	if err != nil {
		return err
	}
	if scimNotModified(w, r, g.Version()) {
		return nil
	}
	return s.writeSCIMGroup(w, r, http.StatusOK, g, p)
}

// handleSCIMCreateGroup serves POST /scim/v2/Groups: 201 with the group.
func (s *Server) handleSCIMCreateGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	in, err := scim.DecodeGroup(body)
	if err != nil {
		return err
	}
	g, err := s.db.CreateDirectoryGroup(r.Context(), c, in)
	if err != nil {
		return err
	}
	return s.writeSCIMGroup(w, r, http.StatusCreated, g, scimPage{})
}

// handleSCIMReplaceGroup serves PUT /scim/v2/Groups/{group_id}: its name,
// externalId and the directory's people in it are those of the body.
func (s *Server) handleSCIMReplaceGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	in, err := scim.DecodeGroup(body)
	if err != nil {
		return err
	}
	g, err := s.db.UpdateDirectoryGroup(r.Context(), c, r.PathValue("group_id"), ifMatchValues(r),
		func(g *quarry.DirectoryGroup) error {
			g.DisplayName, g.ExternalID, g.Members = in.DisplayName, in.ExternalID, in.Members
			return nil
		})
	if err != nil {
		return err
	}
	return s.writeSCIMGroup(w, r, http.StatusOK, g, scimPage{})
}

// handleSCIMPatchGroup serves PATCH /scim/v2/Groups/{group_id}: 200 with the
// group as the operations left it.
func (s *Server) handleSCIMPatchGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	ops, err := scim.ParsePatch(body)
	if err != nil {
		return err
	}
	g, err := s.db.UpdateDirectoryGroup(r.Context(), c, r.PathValue("group_id"), ifMatchValues(r),
		func(g *quarry.DirectoryGroup) error { return scim.ApplyGroup(g, ops) })
	if err != nil {
		return err
	}
	return s.writeSCIMGroup(w, r, http.StatusOK, g, scimPage{})
}

// handleSCIMDeleteGroup serves DELETE /scim/v2/Groups/{group_id}: 204.
func (s *Server) handleSCIMDeleteGroup(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if err := s.db.DeleteDirectoryGroup(r.Context(), c, r.PathValue("group_id"), ifMatchValues(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
