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
	token, ok := bearerToken(h)
	if !ok || !quarry.ValidSCIMTokenFormat(token) {
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
	rt, err := scim.FindResourceType(s.scimBase(r), r.PathValue("name"))
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, rt)
}

// handleSCIMSchemas serves GET /scim/v2/Schemas, in a list envelope.
func (s *Server) handleSCIMSchemas(w http.ResponseWriter, r *http.Request) error {
	ss := scim.Schemas(s.scimBase(r))
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(ss, len(ss), 1))
}

// handleSCIMSchema serves GET /scim/v2/Schemas/{id}.
func (s *Server) handleSCIMSchema(w http.ResponseWriter, r *http.Request) error {
	sc, err := scim.FindSchema(s.scimBase(r), r.PathValue("id"))
	if err != nil {
		return err
	}
	return writeSCIM(w, http.StatusOK, sc)
}

// scimKind is what differs between SCIM's two resources, Users and Groups,
// in the steps of their routes: one generic path serves both (list, get,
// create, replace, patch, delete), T being the domain's type and R the
// resource SCIM shows.
type scimKind[T any, R scimResource] struct {
	s       *Server
	path    string    // The collection's path segment: "Users", "Groups".
	param   string    // The path parameter of one resource.
	filter  scim.Kind // What the filters of its listing select.
	id      func(T) string
	version func(T) string
	view    func(T, string) R // The resource at a location.
	list    func(ctx context.Context, f *quarry.DirectoryFilter, p scimPage) ([]T, int, error)
	get     func(ctx context.Context, id string) (T, error)
	decode  func([]byte) (T, error)
	create  func(ctx context.Context, c *quarry.Caller, in T) (T, error)
	update  func(ctx context.Context, c *quarry.Caller, id string, ifMatch []string, change func(T) error) (T, error)
	replace func(t, in T) // What a PUT replaces of t with the body's in.
	apply   func(T, []scim.Operation) error
	remove  func(ctx context.Context, c *quarry.Caller, id string, ifMatch []string) error
}

// scimResource is a resource as SCIM shows it (scim.User, scim.Group).
type scimResource interface {
	Project(attributes, excluded []string)
	Location() string
}

// scimUsers is the directory's people: the account the directory gives
// a person is kept to its rules (the email domains of registration).
func (s *Server) scimUsers() *scimKind[*quarry.DirectoryUser, *scim.User] {
	domains := s.cfg.SignIn.Registration.Domains
	return &scimKind[*quarry.DirectoryUser, *scim.User]{s: s, path: "Users", param: "user_id", filter: scim.Users,
		id: func(u *quarry.DirectoryUser) string { return u.ID }, version: (*quarry.DirectoryUser).Version,
		view: scim.UserResource,
		list: func(ctx context.Context, f *quarry.DirectoryFilter, p scimPage) ([]*quarry.DirectoryUser, int, error) {
			return s.db.DirectoryUsers(ctx, f, p.start, p.count)
		},
		get:    s.db.DirectoryUser,
		decode: scim.DecodeUser,
		create: func(ctx context.Context, c *quarry.Caller, in *quarry.DirectoryUser) (*quarry.DirectoryUser, error) {
			return s.db.CreateDirectoryUser(ctx, c, in, domains)
		},
		update: func(ctx context.Context, c *quarry.Caller, id string, ifMatch []string, change func(*quarry.DirectoryUser) error) (*quarry.DirectoryUser, error) {
			return s.db.UpdateDirectoryUser(ctx, c, id, ifMatch, domains, change)
		},
		// The attributes Quarry keeps are replaced by those of the body (one
		// left out is cleared; the person's name stays when the body has none).
		replace: func(u, in *quarry.DirectoryUser) {
			u.UserName, u.ExternalID, u.DisplayName, u.Emails, u.Active = in.UserName, in.ExternalID, in.DisplayName, in.Emails, in.Active
			u.GivenName, u.FamilyName, u.Formatted = in.GivenName, in.FamilyName, in.Formatted
			u.Department, u.Manager = in.Department, in.Manager
		},
		apply:  scim.ApplyUser,
		remove: s.db.DeleteDirectoryUser,
	}
}

// scimGroups is every group (the default ones too), with the directory's
// people as members (read only when shown).
func (s *Server) scimGroups() *scimKind[*quarry.DirectoryGroup, *scim.Group] {
	return &scimKind[*quarry.DirectoryGroup, *scim.Group]{s: s, path: "Groups", param: "group_id", filter: scim.Groups,
		id: func(g *quarry.DirectoryGroup) string { return strconv.FormatInt(g.ID, 10) }, version: (*quarry.DirectoryGroup).Version,
		view: scim.GroupResource,
		list: func(ctx context.Context, f *quarry.DirectoryFilter, p scimPage) ([]*quarry.DirectoryGroup, int, error) {
			return s.db.DirectoryGroups(ctx, f, p.start, p.count, scim.WantsMembers(p.attributes, p.excluded))
		},
		get: func(ctx context.Context, id string) (*quarry.DirectoryGroup, error) {
			return s.db.DirectoryGroup(ctx, id, true)
		},
		decode: scim.DecodeGroup,
		create: s.db.CreateDirectoryGroup,
		update: s.db.UpdateDirectoryGroup,
		// Its name, externalId and the directory's people in it are those of
		// the body.
		replace: func(g, in *quarry.DirectoryGroup) {
			g.DisplayName, g.ExternalID, g.Members = in.DisplayName, in.ExternalID, in.Members
		},
		apply:  scim.ApplyGroup,
		remove: s.db.DeleteDirectoryGroup,
	}
}

// resource returns t as the SCIM resource of r's answer.
func (k *scimKind[T, R]) resource(r *http.Request, t T) R {
	return k.view(t, k.s.scimBase(r)+"/"+k.path+"/"+k.id(t))
}

// write writes t with status, its ETag and, for a creation, its Location.
func (k *scimKind[T, R]) write(w http.ResponseWriter, r *http.Request, status int, t T, p scimPage) error {
	res := k.resource(r, t)
	w.Header().Set("ETag", scim.ETag(k.version(t)))
	if status == http.StatusCreated {
		w.Header().Set("Location", res.Location())
	}
	res.Project(p.attributes, p.excluded)
	return writeSCIM(w, status, res)
}

// handleList serves GET /scim/v2/Users and GET /scim/v2/Groups: the
// resources that filter selects, a page at a time (people in the order
// they were provisioned, groups ascending by id).
func (k *scimKind[T, R]) handleList(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	f, err := scim.ParseFilter(r.URL.Query().Get("filter"), k.filter)
	if err != nil {
		return err
	}
	ts, total, err := k.list(r.Context(), f, p)
	if err != nil {
		return err
	}
	out := make([]any, len(ts))
	for i, t := range ts {
		res := k.resource(r, t)
		res.Project(p.attributes, p.excluded)
		out[i] = res
	}
	return writeSCIM(w, http.StatusOK, scim.NewListResponse(out, total, p.start))
}

// handleGet serves GET /scim/v2/Users/{user_id} and GET
// /scim/v2/Groups/{group_id}; If-None-Match with its version answers 304.
func (k *scimKind[T, R]) handleGet(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	p, err := scimQuery(r)
	if err != nil {
		return err
	}
	t, err := k.get(r.Context(), r.PathValue(k.param))
	if err != nil {
		return err
	}
	if scimNotModified(w, r, k.version(t)) {
		return nil
	}
	return k.write(w, r, http.StatusOK, t, p)
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

// handleCreate serves POST /scim/v2/Users and POST /scim/v2/Groups: 201
// with the resource. A person is a new account, or the account that has
// the email already, which the directory manages from then on; one the
// directory has already is 409 (uniqueness).
func (k *scimKind[T, R]) handleCreate(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	in, err := k.body(r)
	if err != nil {
		return err
	}
	t, err := k.create(r.Context(), c, in)
	if err != nil {
		return err
	}
	return k.write(w, r, http.StatusCreated, t, scimPage{})
}

// body decodes the request's body as one resource.
func (k *scimKind[T, R]) body(r *http.Request) (T, error) {
	body, err := scimBody(r)
	if err != nil {
		var zero T
		return zero, err
	}
	return k.decode(body)
}

// handleReplace serves PUT /scim/v2/Users/{user_id} and PUT
// /scim/v2/Groups/{group_id}: what the kind's replace says is replaced by
// the body's.
func (k *scimKind[T, R]) handleReplace(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	in, err := k.body(r)
	if err != nil {
		return err
	}
	return k.change(w, r, c, func(t T) error {
		k.replace(t, in)
		return nil
	})
}

// handlePatch serves PATCH /scim/v2/Users/{user_id} and PATCH
// /scim/v2/Groups/{group_id}: 200 with the resource as the operations left
// it (unchanged, and not written, when they change nothing).
func (k *scimKind[T, R]) handlePatch(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	body, err := scimBody(r)
	if err != nil {
		return err
	}
	ops, err := scim.ParsePatch(body)
	if err != nil {
		return err
	}
	return k.change(w, r, c, func(t T) error { return k.apply(t, ops) })
}

// change applies change to the resource of the request's path, as the
// If-Match header allows, and answers it.
func (k *scimKind[T, R]) change(w http.ResponseWriter, r *http.Request, c *quarry.Caller, change func(T) error) error {
	t, err := k.update(r.Context(), c, r.PathValue(k.param), ifMatchValues(r), change)
	if err != nil {
		return err
	}
	return k.write(w, r, http.StatusOK, t, scimPage{})
}

// handleDelete serves DELETE /scim/v2/Users/{user_id} and DELETE
// /scim/v2/Groups/{group_id}: 204. A person's account is deactivated and
// no longer the directory's (a second deletion answers 404).
func (k *scimKind[T, R]) handleDelete(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	if err := k.remove(r.Context(), c, r.PathValue(k.param), ifMatchValues(r)); err != nil {
		return err
	}
	w.WriteHeader(http.StatusNoContent)
	return nil
}
