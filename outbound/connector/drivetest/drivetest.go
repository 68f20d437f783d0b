// Package drivetest simulates the part of Google's APIs that the Google
// Drive connector calls (and Google's Python client, the client of
// Onyx's, calls for it), as Google's API references document them: the
// OAuth 2.0 token endpoint of service accounts (a JWT bearer assertion
// signed with the account's key, RS256, its signature checked against
// the key's public half, its aud, scope and sub checked, the subject
// impersonated as domain-wide delegation does; an OAuth client's refresh
// tokens), Drive v3 (files.list with its corpora, driveId,
// supportsAllDrives, includeItemsFromAllDrives, q (with "'<id>' in
// parents") orderBy and pageToken, each file's size; files.get with
// alt=media, files.export (Slides as PPTX only), permissions.list,
// drives.list) and the Admin
// SDK's Directory v1 (users.list, groups.list, members.list). Every
// listing pages, at most PageSize items a page whatever pageSize asks;
// errors are Google's JSON error bodies; Limit answers the next calls
// 403 userRateLimitExceeded, as Drive answers a rate limit. The q it takes
// is only of the clauses the connector sends; any other is refused with
// Drive's 400 "Invalid Value", so that a drift shows. Its content can
// change between runs. It is for tests only.
package drivetest

import (
	"crypto"
	"crypto/rand"
	"crypto/rsa"
	"crypto/sha256"
	"crypto/x509"
	"encoding/base64"
	"encoding/json"
	"encoding/pem"
	"fmt"
	"net/http"
	"net/http/httptest"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// MIME types of Google's own files, and a folder's.
const (
	DocType    = "application/vnd.google-apps.document"
	SheetType  = "application/vnd.google-apps.spreadsheet"
	SlidesType = "application/vnd.google-apps.presentation"
	FolderType = "application/vnd.google-apps.folder"
	// PPTXType is PowerPoint's, the format Slides are exported in.
	PPTXType = "application/vnd.openxmlformats-officedocument.presentationml.presentation"
)

// Scopes are the OAuth scopes a token must have: Onyx's GOOGLE_SCOPES of
// google_drive. Drive's calls need the first two, Directory's the last
// two.
var Scopes = []string{
	"https://www.googleapis.com/auth/drive.readonly",
	"https://www.googleapis.com/auth/drive.metadata.readonly",
	"https://www.googleapis.com/auth/admin.directory.group.readonly",
	"https://www.googleapis.com/auth/admin.directory.user.readonly",
}

// Permission is a permission of a file: Type "user" or "group" (Email),
// "domain" (Domain) or "anyone"; AllowFileDiscovery false is a link-only
// share.
type Permission struct {
	Type, Email, Domain string
	AllowFileDiscovery  *bool
}

// File is a file. Owner is a user's email for a file of a My Drive; a
// file of a shared drive has DriveID instead. Content is the text its
// download or export serves (a Slides file's: the PPTX its export
// serves). A file in a folder (Parents) may be read by whoever may read
// the folder, and carries the folder's permissions as inherited ones.
type File struct {
	ID, Name, MimeType string
	Owner              string
	DriveID            string
	Parents            []string
	Content            string
	Created, Modified  time.Time
	Permissions        []Permission
	Trashed            bool
}

// WebViewLink is the link Drive gives f.
func (f *File) WebViewLink() string {
	switch f.MimeType {
	case DocType:
		return "https://docs.google.com/document/d/" + f.ID + "/edit?usp=drivesdk"
	case SheetType:
		return "https://docs.google.com/spreadsheets/d/" + f.ID + "/edit?usp=drivesdk"
	case SlidesType:
		return "https://docs.google.com/presentation/d/" + f.ID + "/edit?usp=drivesdk"
	case FolderType:
		return "https://drive.google.com/drive/folders/" + f.ID
	}
	return "https://drive.google.com/file/d/" + f.ID + "/view?usp=drivesdk"
}

// Drive is a shared drive and the users who are its members.
type Drive struct {
	ID, Name string
	Members  []string
}

// Server is a simulated Google, served on 127.0.0.1 until the test ends.
type Server struct {
	*httptest.Server
	// Domain is the Workspace's domain; Admins are its administrators,
	// whose tokens may use the Directory API and useDomainAdminAccess.
	Domain string
	Admins []string
	// PageSize is the most items a page of a listing has.
	PageSize int

	key      *rsa.PrivateKey
	keyID    string
	mu       sync.Mutex
	users    []string
	groups   map[string][]string // By group email: its members' emails.
	drives   []*Drive
	files    []*File
	tokens   map[string]token
	refresh  map[string]string // Refresh tokens: their user.
	limited  int
	requests []string
	queries  []string
	serving  atomic.Int64 // Nanoseconds spent answering.
}

type token struct {
	subject string
	scopes  []string
}

var (
	keyOnce sync.Once
	theKey  *rsa.PrivateKey
)

// Key is the service account's key the simulator trusts, made once a
// process.
func Key() *rsa.PrivateKey {
	keyOnce.Do(func() {
		k, err := rsa.GenerateKey(rand.Reader, 2048)
		if err != nil {
			panic(err)
		}
		theKey = k
	})
	return theKey
}

// ClientEmail is the service account's email.
const ClientEmail = "quarry-indexer@quarry-test.iam.gserviceaccount.com"

// New starts an empty simulator of domain that trusts Key().
func New(t testing.TB, domain string) *Server {
	s := &Server{Domain: domain, PageSize: 2, key: Key(), keyID: "3f2a5c7e0b1d", groups: map[string][]string{}, tokens: map[string]token{}, refresh: map[string]string{}}
	s.Server = httptest.NewServer(http.HandlerFunc(s.serve))
	t.Cleanup(s.Close)
	return s
}

// BaseURL is where QUARRY_CONNECTOR_ENDPOINTS points google_drive: the
// APIs under it (drive/v3/, admin/directory/v1/) and the token endpoint
// (token).
func (s *Server) BaseURL() string { return s.URL + "/" }

// TokenURL is the token endpoint.
func (s *Server) TokenURL() string { return s.URL + "/token" }

// ServiceAccountKey is the JSON key file of the service account, as the
// Cloud console downloads it, signed by key (Key() for the one the
// simulator trusts).
func (s *Server) ServiceAccountKey(key *rsa.PrivateKey) string {
	der, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		panic(err)
	}
	b, _ := json.Marshal(map[string]string{
		"type": "service_account", "project_id": "quarry-test", "private_key_id": s.keyID,
		"private_key":  string(pem.EncodeToMemory(&pem.Block{Type: "PRIVATE KEY", Bytes: der})),
		"client_email": ClientEmail, "client_id": "104729381650192837465",
		"auth_uri": "https://accounts.google.com/o/oauth2/auth", "token_uri": s.TokenURL(),
		"auth_provider_x509_cert_url": "https://www.googleapis.com/oauth2/v1/certs",
	})
	return string(b)
}

// AddUser adds users of the domain.
func (s *Server) AddUser(emails ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.users = append(s.users, emails...)
}

// SetGroup sets the members of the group email.
func (s *Server) SetGroup(email string, members ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.groups[email] = members
}

// AddDrive adds a shared drive.
func (s *Server) AddDrive(d Drive) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.drives = append(s.drives, &d)
}

// AddFile adds a file.
func (s *Server) AddFile(f File) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f.Created.IsZero() {
		f.Created = f.Modified
	}
	s.files = append(s.files, &f)
}

// EditFile changes the file id with edit.
func (s *Server) EditFile(id string, edit func(f *File)) {
	s.mu.Lock()
	defer s.mu.Unlock()
	if f := s.file(id); f != nil {
		edit(f)
	}
}

// DeleteFile removes the file id.
func (s *Server) DeleteFile(id string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.files = slices.DeleteFunc(s.files, func(f *File) bool { return f.ID == id })
}

// Limit answers the next n API calls (not the token endpoint's) 403
// userRateLimitExceeded.
func (s *Server) Limit(n int) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.limited = n
}

// Requests returns the requests served so far: method, path and query.
func (s *Server) Requests() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.requests)
}

// Queries returns the q of every files.list served so far.
func (s *Server) Queries() []string {
	s.mu.Lock()
	defer s.mu.Unlock()
	return slices.Clone(s.queries)
}

// ServeTime is the time the simulator has spent answering.
func (s *Server) ServeTime() time.Duration { return time.Duration(s.serving.Load()) }

func (s *Server) file(id string) *File {
	for _, f := range s.files {
		if f.ID == id {
			return f
		}
	}
	return nil
}

// ---- Errors, as Google writes them.

// googleError writes Google's JSON error body.
func googleError(w http.ResponseWriter, code int, reason, message string) {
	status := map[int]string{400: "INVALID_ARGUMENT", 401: "UNAUTHENTICATED", 403: "PERMISSION_DENIED", 404: "NOT_FOUND", 429: "RESOURCE_EXHAUSTED"}[code]
	domain := "global"
	if reason == "userRateLimitExceeded" {
		domain = "usageLimits"
	}
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	w.WriteHeader(code)
	_ = json.NewEncoder(w).Encode(map[string]any{"error": map[string]any{
		"code": code, "message": message, "status": status,
		"errors": []map[string]string{{"domain": domain, "reason": reason, "message": message}},
	}})
}

func writeJSON(w http.ResponseWriter, v any) {
	w.Header().Set("Content-Type", "application/json; charset=UTF-8")
	_ = json.NewEncoder(w).Encode(v)
}

// ---- Serving.

func (s *Server) serve(w http.ResponseWriter, r *http.Request) {
	start := time.Now()
	defer func() { s.serving.Add(int64(time.Since(start))) }()
	s.mu.Lock()
	defer s.mu.Unlock()
	s.requests = append(s.requests, r.Method+" "+r.URL.RequestURI())
	if r.URL.Path == "/token" {
		s.serveToken(w, r)
		return
	}
	auth, ok := strings.CutPrefix(r.Header.Get("Authorization"), "Bearer ")
	tok, known := s.tokens[auth]
	if !ok || !known {
		w.Header().Set("WWW-Authenticate", `Bearer realm="https://accounts.google.com/"`)
		googleError(w, 401, "authError", "Request had invalid authentication credentials. Expected OAuth 2 access token, login cookie or other valid authentication credential.")
		return
	}
	if s.limited > 0 {
		s.limited--
		googleError(w, 403, "userRateLimitExceeded", "User rate limit exceeded.")
		return
	}
	q := r.URL.Query()
	path := r.URL.Path
	switch {
	case strings.HasPrefix(path, "/drive/v3/"):
		if !slices.Contains(tok.scopes, Scopes[0]) {
			googleError(w, 403, "insufficientPermissions", "Request had insufficient authentication scopes.")
			return
		}
		s.serveDrive(w, tok.subject, strings.TrimPrefix(path, "/drive/v3/"), q)
	case strings.HasPrefix(path, "/admin/directory/v1/"):
		if !slices.Contains(tok.scopes, Scopes[2]) || !slices.Contains(tok.scopes, Scopes[3]) {
			googleError(w, 403, "insufficientPermissions", "Request had insufficient authentication scopes.")
			return
		}
		if !slices.Contains(s.Admins, tok.subject) {
			googleError(w, 403, "forbidden", "Not Authorized to access this resource/api")
			return
		}
		s.serveDirectory(w, strings.TrimPrefix(path, "/admin/directory/v1/"), q)
	default:
		googleError(w, 404, "notFound", "Not Found")
	}
}

// serveToken is the token endpoint of a service account's JWT bearer
// grant (RFC 7523), as Google's answers it.
func (s *Server) serveToken(w http.ResponseWriter, r *http.Request) {
	fail := func(code int, e, desc string) {
		w.Header().Set("Content-Type", "application/json; charset=utf-8")
		w.WriteHeader(code)
		_ = json.NewEncoder(w).Encode(map[string]string{"error": e, "error_description": desc})
	}
	if r.Method != http.MethodPost || r.ParseForm() != nil {
		fail(400, "invalid_request", "Invalid request.")
		return
	}
	if r.PostForm.Get("grant_type") == "refresh_token" {
		// An authorized user's refresh (OAuth): the client and the
		// refresh token AddOAuthUser made.
		user, ok := s.refresh[r.PostForm.Get("refresh_token")]
		switch {
		case r.PostForm.Get("client_id") != OAuthClientID || r.PostForm.Get("client_secret") != OAuthClientSecret:
			fail(401, "invalid_client", "The OAuth client was not found.")
		case !ok:
			fail(400, "invalid_grant", "Token has been expired or revoked.")
		default:
			t := s.newToken(user, Scopes)
			writeJSON(w, map[string]any{"access_token": t, "expires_in": 3599, "token_type": "Bearer", "scope": strings.Join(Scopes, " ")})
		}
		return
	}
	if r.PostForm.Get("grant_type") != "urn:ietf:params:oauth:grant-type:jwt-bearer" {
		fail(400, "unsupported_grant_type", "Invalid grant_type: "+r.PostForm.Get("grant_type"))
		return
	}
	parts := strings.Split(r.PostForm.Get("assertion"), ".")
	if len(parts) != 3 {
		fail(400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe.")
		return
	}
	var header struct {
		Alg string `json:"alg"`
		Kid string `json:"kid"`
	}
	var claims struct {
		Iss   string `json:"iss"`
		Sub   string `json:"sub"`
		Aud   string `json:"aud"`
		Scope string `json:"scope"`
		Iat   int64  `json:"iat"`
		Exp   int64  `json:"exp"`
	}
	// base64url with or without its padding: google-auth pads, Go's
	// x/oauth2 does not, Google takes both.
	dec := func(s string) ([]byte, error) { return base64.RawURLEncoding.DecodeString(strings.TrimRight(s, "=")) }
	hb, err1 := dec(parts[0])
	cb, err2 := dec(parts[1])
	sig, err3 := dec(parts[2])
	if err1 != nil || err2 != nil || err3 != nil || json.Unmarshal(hb, &header) != nil || json.Unmarshal(cb, &claims) != nil {
		fail(400, "invalid_grant", "Invalid JWT: the assertion is not base64url JSON.")
		return
	}
	sum := sha256.Sum256([]byte(parts[0] + "." + parts[1]))
	if header.Alg != "RS256" || rsa.VerifyPKCS1v15(&s.key.PublicKey, crypto.SHA256, sum[:], sig) != nil {
		fail(400, "invalid_grant", "Invalid JWT Signature.")
		return
	}
	now := time.Now().Unix()
	switch {
	case claims.Iss != ClientEmail:
		fail(401, "invalid_client", "The OAuth client was not found.")
		return
	case claims.Aud != s.TokenURL():
		fail(400, "invalid_grant", "Invalid JWT: Failed audience check. The right audience is "+s.TokenURL())
		return
	case claims.Exp < now-60 || claims.Iat > now+60 || claims.Exp-claims.Iat > 3600:
		fail(400, "invalid_grant", "Invalid JWT: Token must be a short-lived token (60 minutes) and in a reasonable timeframe. Check your iat and exp values in the JWT claim.")
		return
	case claims.Sub == "" || !slices.Contains(s.users, claims.Sub):
		fail(400, "invalid_grant", "Invalid email or User ID")
		return
	}
	scopes := strings.Fields(claims.Scope)
	if len(scopes) == 0 || slices.ContainsFunc(scopes, func(sc string) bool { return !slices.Contains(Scopes, sc) }) {
		fail(401, "unauthorized_client", "Client is unauthorized to retrieve access tokens using this method, or client not authorized for any of the scopes requested.")
		return
	}
	writeJSON(w, map[string]any{"access_token": s.newToken(claims.Sub, scopes), "expires_in": 3599, "token_type": "Bearer"})
}

// newToken makes an access token of user with scopes.
func (s *Server) newToken(user string, scopes []string) string {
	b := make([]byte, 18)
	_, _ = rand.Read(b)
	t := "ya29.sim-" + base64.RawURLEncoding.EncodeToString(b)
	s.tokens[t] = token{subject: user, scopes: scopes}
	return t
}

// The OAuth client whose refresh tokens the token endpoint takes.
const (
	OAuthClientID     = "1234567890-sim.apps.googleusercontent.com"
	OAuthClientSecret = "GOCSPX-sim-client-secret"
)

// AddOAuthUser returns a refresh token of user (one of the domain's)
// for OAuthClientID, as Google's consent gives one.
func (s *Server) AddOAuthUser(user string) string {
	s.mu.Lock()
	defer s.mu.Unlock()
	t := "1//sim-refresh-" + strings.NewReplacer("@", "-", ".", "-").Replace(user)
	s.refresh[t] = user
	return t
}

// page returns the page of n items that pageToken (an offset) starts,
// and the next page's token ("" at the end).
func (s *Server) page(n int, pageToken string) (from, to int, next string, ok bool) {
	if pageToken != "" {
		var err error
		if from, err = strconv.Atoi(strings.TrimPrefix(pageToken, "sim-")); err != nil || from < 0 || from > n {
			return 0, 0, "", false
		}
	}
	to = min(from+s.PageSize, n)
	if to < n {
		next = "sim-" + strconv.Itoa(to)
	}
	return from, to, next, true
}

// canRead reports whether user may read f: a member of its shared drive,
// its owner, one its permissions name, or one who may read a folder it
// is in (Drive's inherited permissions).
func (s *Server) canRead(user string, f *File) bool {
	return s.canReadIn(user, f, 0)
}

func (s *Server) canReadIn(user string, f *File, depth int) bool {
	if depth < 100 {
		for _, p := range f.Parents {
			if parent := s.file(p); parent != nil && parent.MimeType == FolderType && s.canReadIn(user, parent, depth+1) {
				return true
			}
		}
	}
	if f.DriveID != "" {
		for _, d := range s.drives {
			if d.ID == f.DriveID && slices.Contains(d.Members, user) {
				return true
			}
		}
	}
	if f.Owner == user {
		return true
	}
	for _, p := range f.Permissions {
		switch p.Type {
		case "user":
			if strings.EqualFold(p.Email, user) {
				return true
			}
		case "group":
			if slices.Contains(s.groups[p.Email], user) {
				return true
			}
		case "domain":
			if strings.HasSuffix(user, "@"+p.Domain) {
				return true
			}
		case "anyone":
			return true
		}
	}
	return false
}

// sharedWith reports whether f is shared with user by a user or group
// permission (Drive's "Shared with me").
func (s *Server) sharedWith(user string, f *File) bool {
	for _, p := range f.Permissions {
		if (p.Type == "user" && strings.EqualFold(p.Email, user)) || (p.Type == "group" && slices.Contains(s.groups[p.Email], user)) {
			return true
		}
	}
	return false
}

// filter is a files.list q of the clauses the connector sends, joined by
// " and ".
type filter struct {
	folders, notFolders, notTrashed bool
	mine, notMine                   bool
	parent                          string
	after, before                   *time.Time
}

func parseQ(q string) (*filter, bool) {
	f := &filter{}
	for c := range strings.SplitSeq(q, " and ") {
		c = strings.TrimSpace(c)
		switch {
		case c == "mimeType = '"+FolderType+"'":
			f.folders = true
		case c == "mimeType != '"+FolderType+"'":
			f.notFolders = true
		case c == "trashed = false":
			f.notTrashed = true
		case c == "'me' in owners":
			f.mine = true
		case c == "not 'me' in owners":
			f.notMine = true
		case strings.HasSuffix(c, "' in parents") && strings.HasPrefix(c, "'"):
			f.parent = strings.TrimSuffix(strings.TrimPrefix(c, "'"), "' in parents")
		case strings.HasPrefix(c, "modifiedTime >= '") || strings.HasPrefix(c, "modifiedTime <= '"):
			v := strings.TrimSuffix(c[len("modifiedTime >= '"):], "'")
			t, err := time.Parse(time.RFC3339Nano, v)
			if err != nil {
				return nil, false
			}
			if c[len("modifiedTime ")] == '>' {
				f.after = &t
			} else {
				f.before = &t
			}
		default:
			return nil, false
		}
	}
	return f, true
}

func (f *filter) match(user string, file *File) bool {
	isFolder := file.MimeType == FolderType
	switch {
	case f.folders && !isFolder, f.notFolders && isFolder, f.notTrashed && file.Trashed,
		f.mine && file.Owner != user, f.notMine && file.Owner == user,
		f.parent != "" && !slices.Contains(file.Parents, f.parent),
		f.after != nil && file.Modified.Before(*f.after), f.before != nil && file.Modified.After(*f.before):
		return false
	}
	return true
}

// fileJSON is f as Drive writes a file resource, with its permissions
// when fields asks for them and f is of a My Drive (Drive leaves a shared
// drive's files' permissions out of listings: permissions.list reads
// them).
func (s *Server) fileJSON(f *File, fields string) map[string]any {
	m := map[string]any{"kind": "drive#file", "id": f.ID, "name": f.Name, "mimeType": f.MimeType,
		"webViewLink": f.WebViewLink(), "createdTime": f.Created.UTC().Format("2006-01-02T15:04:05.000Z"),
		"modifiedTime": f.Modified.UTC().Format("2006-01-02T15:04:05.000Z")}
	if len(f.Parents) > 0 {
		m["parents"] = f.Parents
	}
	if f.DriveID != "" {
		m["driveId"] = f.DriveID
	} else if f.Owner != "" {
		m["owners"] = []map[string]string{{"emailAddress": f.Owner, "displayName": displayName(f.Owner)}}
	}
	if f.MimeType != DocType && f.MimeType != SheetType && f.MimeType != SlidesType && f.MimeType != FolderType {
		m["size"] = strconv.Itoa(len(f.Content))
	}
	if strings.Contains(fields, "permissions") {
		perms := s.permissions(f)
		ids := make([]string, len(perms))
		for i, p := range perms {
			ids[i] = p["id"].(string)
		}
		m["permissionIds"] = ids
		if f.DriveID == "" {
			m["permissions"] = perms
		}
	}
	return m
}

// displayName is a user's name: the part of the email before the @,
// capitalized.
func displayName(email string) string {
	name, _, _ := strings.Cut(email, "@")
	if name == "" {
		return ""
	}
	return strings.ToUpper(name[:1]) + name[1:]
}

// permissions is f's permissions as Drive writes them: its owner's, its
// shared drive's members' (inherited), then its own.
func (s *Server) permissions(f *File) []map[string]any {
	var out []map[string]any
	add := func(p Permission, role string, inherited bool) {
		m := map[string]any{"kind": "drive#permission", "type": p.Type, "role": role}
		switch p.Type {
		case "user", "group":
			m["emailAddress"] = p.Email
			m["id"] = fmt.Sprintf("%x", sha256.Sum256([]byte(p.Email)))[:20]
		case "domain":
			m["domain"] = p.Domain
			m["id"] = p.Domain + "k"
		case "anyone":
			m["id"] = "anyoneWithLink"
		}
		if p.Type == "domain" || p.Type == "anyone" {
			m["allowFileDiscovery"] = p.AllowFileDiscovery == nil || *p.AllowFileDiscovery
		}
		if f.DriveID != "" {
			m["permissionDetails"] = []map[string]any{{"permissionType": "file", "role": role, "inherited": inherited}}
		}
		out = append(out, m)
	}
	if f.Owner != "" {
		add(Permission{Type: "user", Email: f.Owner}, "owner", false)
	}
	for _, d := range s.drives {
		if d.ID == f.DriveID {
			for _, m := range d.Members {
				add(Permission{Type: "user", Email: m}, "organizer", true)
			}
		}
	}
	for _, p := range f.Permissions {
		add(p, "reader", false)
	}
	// A folder's permissions are its files' too (inherited), once each.
	seen := map[string]bool{}
	for _, m := range out {
		seen[m["id"].(string)] = true
	}
	for folder, depth := f, 0; depth < 100 && len(folder.Parents) > 0; depth++ {
		if folder = s.file(folder.Parents[0]); folder == nil || folder.MimeType != FolderType {
			break
		}
		own := folder.Permissions
		if folder.Owner != "" {
			own = append([]Permission{{Type: "user", Email: folder.Owner}}, own...)
		}
		for _, p := range own {
			n := len(out)
			add(p, "reader", true)
			if id := out[n]["id"].(string); seen[id] {
				out = out[:n]
			} else {
				seen[id] = true
			}
		}
	}
	return out
}

func (s *Server) serveDrive(w http.ResponseWriter, user, path string, q url.Values) {
	switch {
	case path == "files":
		s.listFiles(w, user, q)
	case path == "drives":
		var drives []*Drive
		for _, d := range s.drives {
			if (q.Get("useDomainAdminAccess") == "true" && slices.Contains(s.Admins, user)) || slices.Contains(d.Members, user) {
				drives = append(drives, d)
			}
		}
		if q.Get("useDomainAdminAccess") == "true" && !slices.Contains(s.Admins, user) {
			googleError(w, 403, "insufficientAdministratorPrivileges", "The user does not have sufficient permissions for this operation. Domain administrator privileges are required.")
			return
		}
		from, to, next, ok := s.page(len(drives), q.Get("pageToken"))
		if !ok {
			googleError(w, 400, "invalid", "Invalid Value")
			return
		}
		items := []map[string]string{}
		for _, d := range drives[from:to] {
			items = append(items, map[string]string{"kind": "drive#drive", "id": d.ID, "name": d.Name})
		}
		res := map[string]any{"kind": "drive#driveList", "drives": items}
		if next != "" {
			res["nextPageToken"] = next
		}
		writeJSON(w, res)
	default:
		rest, ok := strings.CutPrefix(path, "files/")
		if !ok {
			googleError(w, 404, "notFound", "Not Found")
			return
		}
		id, sub, _ := strings.Cut(rest, "/")
		f := s.file(id)
		// files.export takes no supportsAllDrives; the others need it
		// for a shared drive's file.
		if f == nil || !s.canRead(user, f) || (f.DriveID != "" && sub != "export" && q.Get("supportsAllDrives") != "true") {
			googleError(w, 404, "notFound", "File not found: "+id+".")
			return
		}
		switch sub {
		case "":
			if q.Get("alt") == "media" {
				if strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
					googleError(w, 403, "fileNotDownloadable", "Only files with binary content can be downloaded. Use Export with Docs Editors files.")
					return
				}
				w.Header().Set("Content-Type", f.MimeType)
				_, _ = w.Write([]byte(f.Content))
				return
			}
			writeJSON(w, s.fileJSON(f, q.Get("fields")))
		case "export":
			// Slides export as PPTX (what the connector asks, as Onyx's
			// does): Content is the deck's bytes.
			want := map[string]string{DocType: "text/plain", SheetType: "text/csv", SlidesType: PPTXType}[f.MimeType]
			if want == "" {
				googleError(w, 403, "fileNotExportable", "Export only supports Docs Editors files.")
				return
			}
			if q.Get("mimeType") != want {
				googleError(w, 400, "badRequest", "The requested conversion is not supported.")
				return
			}
			w.Header().Set("Content-Type", want)
			_, _ = w.Write([]byte(f.Content))
		case "permissions":
			perms := s.permissions(f)
			from, to, next, ok := s.page(len(perms), q.Get("pageToken"))
			if !ok {
				googleError(w, 400, "invalid", "Invalid Value")
				return
			}
			res := map[string]any{"kind": "drive#permissionList", "permissions": perms[from:to]}
			if next != "" {
				res["nextPageToken"] = next
			}
			writeJSON(w, res)
		default:
			googleError(w, 404, "notFound", "Not Found")
		}
	}
}

// listFiles is files.list.
func (s *Server) listFiles(w http.ResponseWriter, user string, q url.Values) {
	s.queries = append(s.queries, q.Get("q"))
	f, ok := parseQ(q.Get("q"))
	if !ok {
		googleError(w, 400, "invalid", "Invalid Value")
		return
	}
	var files []*File
	switch corpora := q.Get("corpora"); corpora {
	case "", "user":
		for _, file := range s.files {
			if file.DriveID == "" && (file.Owner == user || s.sharedWith(user, file)) && f.match(user, file) {
				files = append(files, file)
			}
		}
	case "drive", "allDrives":
		if q.Get("supportsAllDrives") != "true" || q.Get("includeItemsFromAllDrives") != "true" {
			googleError(w, 403, "teamDrivesParameterRequired", "The includeItemsFromAllDrives parameter must be set to true when corpora is drive.")
			return
		}
		id := q.Get("driveId")
		if corpora == "drive" {
			i := slices.IndexFunc(s.drives, func(d *Drive) bool { return d.ID == id })
			if i < 0 || !slices.Contains(s.drives[i].Members, user) {
				googleError(w, 404, "notFound", "Shared drive not found: "+id)
				return
			}
		}
		for _, file := range s.files {
			if (corpora == "allDrives" || file.DriveID == id) && s.canRead(user, file) && f.match(user, file) {
				files = append(files, file)
			}
		}
	default:
		googleError(w, 400, "invalid", "Invalid Value")
		return
	}
	if q.Get("orderBy") == "modifiedTime" {
		slices.SortStableFunc(files, func(a, b *File) int { return a.Modified.Compare(b.Modified) })
	}
	from, to, next, ok := s.page(len(files), q.Get("pageToken"))
	if !ok {
		googleError(w, 400, "invalid", "Invalid Value")
		return
	}
	items := []map[string]any{}
	for _, file := range files[from:to] {
		items = append(items, s.fileJSON(file, q.Get("fields")))
	}
	res := map[string]any{"kind": "drive#fileList", "files": items, "incompleteSearch": false}
	if next != "" {
		res["nextPageToken"] = next
	}
	writeJSON(w, res)
}

// serveDirectory is the Directory API's users, groups and members.
func (s *Server) serveDirectory(w http.ResponseWriter, path string, q url.Values) {
	var key string
	var items []map[string]string
	switch {
	case path == "users":
		if q.Get("domain") != s.Domain && q.Get("customer") != "my_customer" {
			googleError(w, 400, "badRequest", "Bad Request")
			return
		}
		key = "users"
		for _, u := range s.users {
			admin := slices.Contains(s.Admins, u)
			if (q.Get("query") == "isAdmin=true" && !admin) || (q.Get("query") == "isAdmin=false" && admin) {
				continue
			}
			items = append(items, map[string]string{"kind": "admin#directory#user", "primaryEmail": u})
		}
	case path == "groups":
		if q.Get("domain") != s.Domain && q.Get("customer") != "my_customer" {
			googleError(w, 400, "badRequest", "Bad Request")
			return
		}
		key = "groups"
		for _, g := range slices.Sorted(func(yield func(string) bool) {
			for g := range s.groups {
				if !yield(g) {
					return
				}
			}
		}) {
			items = append(items, map[string]string{"kind": "admin#directory#group", "email": g})
		}
	case strings.HasPrefix(path, "groups/") && strings.HasSuffix(path, "/members"):
		g := strings.TrimSuffix(strings.TrimPrefix(path, "groups/"), "/members")
		members, ok := s.groups[g]
		if !ok {
			googleError(w, 404, "notFound", "Resource Not Found: groupKey")
			return
		}
		key = "members"
		for _, m := range members {
			items = append(items, map[string]string{"kind": "admin#directory#member", "email": m, "type": "USER", "role": "MEMBER"})
		}
	default:
		googleError(w, 404, "notFound", "Not Found")
		return
	}
	from, to, next, ok := s.page(len(items), q.Get("pageToken"))
	if !ok {
		googleError(w, 400, "invalid", "Invalid Value")
		return
	}
	res := map[string]any{key: items[from:to]}
	if next != "" {
		res["nextPageToken"] = next
	}
	writeJSON(w, res)
}
