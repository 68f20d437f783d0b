package connector

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"maps"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"sync"
	"time"

	"golang.org/x/oauth2"
	"golang.org/x/oauth2/jwt"

	"github.com/quarryhq/quarry"
)

// GoogleDriveSource is the source of the Google Drive connector.
const GoogleDriveSource quarry.DocumentSource = "google_drive"

// GoogleAPI is where Google serves Drive v3 (drive/v3/) and the Admin
// SDK's Directory v1 (admin/directory/v1/), unless
// QUARRY_CONNECTOR_ENDPOINTS points google_drive elsewhere; the token
// endpoint is then that base's "token" too.
const GoogleAPI = "https://www.googleapis.com/"

// googleTokenURL is Google's token endpoint, for a credential that names
// none.
const googleTokenURL = "https://oauth2.googleapis.com/token"

// DriveScopes are the OAuth scopes the connector asks: Onyx's
// GOOGLE_SCOPES of google_drive (google_utils/shared_constants.py), the
// ones an admin grants the service account's domain-wide delegation.
var DriveScopes = []string{
	"https://www.googleapis.com/auth/drive.readonly",
	"https://www.googleapis.com/auth/drive.metadata.readonly",
	"https://www.googleapis.com/auth/admin.directory.group.readonly",
	"https://www.googleapis.com/auth/admin.directory.user.readonly",
}

// Drive's MIME types the connector treats apart.
const (
	driveFolderType   = "application/vnd.google-apps.folder"
	driveShortcutType = "application/vnd.google-apps.shortcut"
	driveDocType      = "application/vnd.google-apps.document"
	driveSheetType    = "application/vnd.google-apps.spreadsheet"
	driveSlidesType   = "application/vnd.google-apps.presentation"
)

// Fields the connector asks of files.list: Onyx's FILE_FIELDS with the
// permissions (FILE_FIELDS_WITH_PERMISSIONS) and the owners' names, and
// of permissions.list.
const (
	driveFileFields = "nextPageToken, files(mimeType, id, name, driveId, parents, " +
		"permissions(id, emailAddress, type, domain, allowFileDiscovery, permissionDetails), permissionIds, " +
		"createdTime, modifiedTime, webViewLink, shortcutDetails, owners(emailAddress, displayName), size)"
	drivePermissionFields = "nextPageToken, permissions(id, emailAddress, type, domain, allowFileDiscovery, permissionDetails)"
)

// Limits of the Google Drive connector.
const (
	driveTimeout       = 60 * time.Second // Each request.
	driveSizeThreshold = 10 << 20         // Bytes of a file read: Onyx's GOOGLE_DRIVE_CONNECTOR_SIZE_THRESHOLD.
	driveSlimBatch     = 500              // Ids a slim batch has: Onyx's SLIM_BATCH_SIZE.
	drivePageSize      = 1000             // Items a listing page asks: Drive's most for files.list.
	driveMaxRetries    = 5                // Rate limits waited out in a row.
	driveMaxWait       = 10 * time.Minute
	driveFirstWait     = time.Second // A rate limit without Retry-After, doubled each time.
	driveAnswerMaxLen  = 32 << 20    // Bytes of one JSON answer.
	driveMaxPages      = 100000      // Pages of one listing.
	driveMaxFolders    = 100000      // Folders of one crawl.
)

// GoogleDrive is Onyx's Google Drive connector (backend/onyx/connectors/
// google_drive/ at v4.6.1) over Drive's v3 REST API in plain HTTP: the
// files of the shared drives, My Drives, files shared with the users and
// folders its configuration names, each a document whose id is its
// webViewLink without query and trailing /edit or /view (Onyx's
// onyx_document_id_from_drive_file), titled by the file's name, its text
// the file's: Google Docs exported as text/plain, Sheets as text/csv,
// Slides as PPTX, other files downloaded (alt=media), each read as the
// file connector reads them; a file over Onyx's 10 MiB threshold is a
// failure of its document. Folders (shared_folder_urls) are crawled
// down their folders.
//
// A service account (google_service_account_key) signs a JWT with its
// key and exchanges it at the token endpoint, impersonating
// google_primary_admin and, for My Drives, each user of the domain that
// the Directory API lists (domain-wide delegation), as Onyx does; an
// OAuth credential (google_tokens) reads as the one user it is, its
// refreshed access token written back to the credential. A poll
// lists the files modified in its window (q "modifiedTime >= … and
// modifiedTime <= …", ordered by modifiedTime). Each document carries the
// access its Drive permissions give, as Onyx's EE doc_sync maps them:
// users' emails, groups as "google_drive_<email>", a discoverable domain
// share as the domain's group, "anyone" as public. The connector is a
// GroupSyncer (the Directory's groups and the domain's users) and a
// PermissionSyncer; its Slim listing lists every file for pruning. Rate
// limits (429, or 403 userRateLimitExceeded) are waited out; a refused
// credential, or a primary admin the Admin SDK answers 403, is a
// *CredentialError.
type GoogleDrive struct {
	cfg       driveConfig
	admin     string // google_primary_admin.
	domain    string // The admin's email's domain.
	service   bool   // A service account (else OAuth).
	key       *serviceAccountKey
	oauthTok  *oauth2.Token
	oauthConf *oauth2.Config
	api       string // The APIs' base.
	tokenURL  string
	env       *Env
	mu        sync.Mutex
	tokens    map[string]oauth2.TokenSource // By impersonated user.
	refused   map[string]error              // Users whose token was refused.
	// credential is the credential_json's keys, and tokensJSON its
	// google_tokens as read, for an OAuth token written back
	// (saveTokens); saved is the access token the credential holds.
	credential map[string]json.RawMessage
	tokensJSON map[string]any
	saved      string
}

// driveConfig is the connector_specific_config of the Google Drive
// connector: Onyx's keys (GoogleDriveConnector.__init__).
type driveConfig struct {
	IncludeSharedDrives      bool    `json:"include_shared_drives"`
	IncludeMyDrives          bool    `json:"include_my_drives"`
	IncludeFilesSharedWithMe bool    `json:"include_files_shared_with_me"`
	SharedDriveURLs          *string `json:"shared_drive_urls"`
	MyDriveEmails            *string `json:"my_drive_emails"`
	SharedFolderURLs         *string `json:"shared_folder_urls"`
	SpecificUserEmails       *string `json:"specific_user_emails"`
	ExcludeDomainLinkOnly    bool    `json:"exclude_domain_link_only"`
	// Parsed.
	driveIDs, folderIDs, myDriveEmails, userEmails []string
}

// driveCredential is the credential_json of the Google Drive connector:
// Onyx's keys, the key and tokens each a JSON object or, as Onyx keeps
// them, a string of one.
type driveCredential struct {
	ServiceAccountKey json.RawMessage `json:"google_service_account_key"`
	Tokens            json.RawMessage `json:"google_tokens"`
	PrimaryAdmin      string          `json:"google_primary_admin"`
	Method            string          `json:"authentication_method"`
}

// serviceAccountKey is a service account's JSON key, as Google's Cloud
// console downloads it.
type serviceAccountKey struct {
	Type         string `json:"type"`
	ClientEmail  string `json:"client_email"`
	PrivateKey   string `json:"private_key"`
	PrivateKeyID string `json:"private_key_id"`
	TokenURI     string `json:"token_uri"`
}

// commaList is Onyx's _extract_str_list_from_comma_str.
func commaList(s *string) []string {
	if s == nil {
		return nil
	}
	var out []string
	for p := range strings.SplitSeq(*s, ",") {
		if p = strings.TrimSpace(p); p != "" {
			out = append(out, p)
		}
	}
	return out
}

// driveIDFromURL is the id of a shared drive's or folder's URL: its
// path's last part, or its id query parameter (Onyx's
// _extract_ids_from_urls takes the path's last part).
func driveIDFromURL(s string) (string, error) {
	u, err := url.Parse(s)
	if err != nil || u.Host == "" {
		return "", fmt.Errorf("%q is not the URL of a shared drive or folder", s)
	}
	if id := u.Query().Get("id"); id != "" {
		return id, nil
	}
	parts := strings.Split(strings.TrimRight(u.Path, "/"), "/")
	id := parts[len(parts)-1]
	if id == "" || strings.ContainsAny(id, "'\\") {
		return "", fmt.Errorf("%q is not the URL of a shared drive or folder", s)
	}
	return id, nil
}

// jsonObject is raw as a JSON object: raw itself, or the object a JSON
// string of it holds.
func jsonObject(raw json.RawMessage) (json.RawMessage, bool) {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		raw = json.RawMessage(s)
	}
	var m map[string]any
	if json.Unmarshal(raw, &m) != nil || m == nil {
		return nil, false
	}
	return raw, true
}

// NewGoogleDrive is the Constructor of the google_drive source's
// connector.
func NewGoogleDrive(config, credential json.RawMessage, env *Env) (Connector, error) {
	d, err := newGoogleDrive(config, credential, env)
	if err != nil {
		return nil, err
	}
	return Polled(d), nil
}

func newGoogleDrive(config, credential json.RawMessage, env *Env) (*GoogleDrive, error) {
	var c driveConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with include_shared_drives, include_my_drives, include_files_shared_with_me, shared_drive_urls, my_drive_emails and shared_folder_urls: %w", err)
	}
	for _, u := range commaList(c.SharedDriveURLs) {
		id, err := driveIDFromURL(u)
		if err != nil {
			return nil, fmt.Errorf("shared_drive_urls: %w", err)
		}
		c.driveIDs = append(c.driveIDs, id)
	}
	for _, u := range commaList(c.SharedFolderURLs) {
		id, err := driveIDFromURL(u)
		if err != nil {
			return nil, fmt.Errorf("shared_folder_urls: %w", err)
		}
		c.folderIDs = append(c.folderIDs, id)
	}
	c.myDriveEmails = commaList(c.MyDriveEmails)
	c.userEmails = commaList(c.SpecificUserEmails)
	if !c.IncludeSharedDrives && !c.IncludeMyDrives && !c.IncludeFilesSharedWithMe && len(c.driveIDs) == 0 && len(c.folderIDs) == 0 && len(c.myDriveEmails) == 0 {
		return nil, errors.New("nothing to index. Please specify at least one of the following: include_shared_drives, include_my_drives, include_files_shared_with_me, shared_folder_urls, or my_drive_emails")
	}
	if len(c.driveIDs) > 0 || len(c.folderIDs) > 0 || len(c.myDriveEmails) > 0 {
		// Onyx: specific requests override the include_* flags.
		c.IncludeSharedDrives, c.IncludeMyDrives, c.IncludeFilesSharedWithMe = false, false, false
	}
	var cred driveCredential
	if err := json.Unmarshal(credential, &cred); err != nil {
		return nil, errors.New("the credential is not an object with google_service_account_key or google_tokens, and google_primary_admin")
	}
	cred.PrimaryAdmin = strings.TrimSpace(cred.PrimaryAdmin)
	at := strings.LastIndex(cred.PrimaryAdmin, "@")
	if at <= 0 || at == len(cred.PrimaryAdmin)-1 {
		return nil, errors.New("the credential's google_primary_admin is not an email address")
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the Google Drive connector needs the egress guard's HTTP client")
	}
	env = env.withDefaults()
	d := &GoogleDrive{cfg: c, admin: cred.PrimaryAdmin, domain: strings.ToLower(cred.PrimaryAdmin[at+1:]), env: env,
		api: env.Endpoint(GoogleDriveSource, GoogleAPI), tokens: map[string]oauth2.TokenSource{}, refused: map[string]error{}}
	_, pointed := env.Endpoints[GoogleDriveSource]
	switch {
	case len(cred.ServiceAccountKey) > 0 && string(cred.ServiceAccountKey) != "null":
		key, ok := jsonObject(cred.ServiceAccountKey)
		if !ok {
			return nil, errors.New("the credential's google_service_account_key is not a service account's JSON key")
		}
		var k serviceAccountKey
		if json.Unmarshal(key, &k) != nil || k.Type != "service_account" || k.ClientEmail == "" || !strings.Contains(k.PrivateKey, "PRIVATE KEY") {
			return nil, errors.New("the credential's google_service_account_key is not a service account's JSON key (type service_account, client_email, private_key)")
		}
		d.service, d.key, d.tokenURL = true, &k, cmpOr(k.TokenURI, googleTokenURL)
	case len(cred.Tokens) > 0 && string(cred.Tokens) != "null":
		raw, ok := jsonObject(cred.Tokens)
		var t struct {
			Token        string `json:"token"`
			AccessToken  string `json:"access_token"`
			RefreshToken string `json:"refresh_token"`
			ClientID     string `json:"client_id"`
			ClientSecret string `json:"client_secret"`
			TokenURI     string `json:"token_uri"`
			Expiry       string `json:"expiry"`
		}
		if !ok || json.Unmarshal(raw, &t) != nil || (t.RefreshToken == "" && t.Token == "" && t.AccessToken == "") {
			return nil, errors.New("the credential's google_tokens is not an authorized user's tokens (token, refresh_token, client_id, client_secret)")
		}
		if json.Unmarshal(credential, &d.credential) != nil || json.Unmarshal(raw, &d.tokensJSON) != nil {
			return nil, errors.New("the credential's google_tokens is not an authorized user's tokens (token, refresh_token, client_id, client_secret)")
		}
		tok := &oauth2.Token{AccessToken: t.Token, RefreshToken: t.RefreshToken, TokenType: "Bearer"}
		if tok.AccessToken == "" {
			tok.AccessToken = t.AccessToken
		}
		if e, err := time.Parse(time.RFC3339Nano, t.Expiry); err == nil {
			tok.Expiry = e
		} else if e, err := time.Parse("2006-01-02T15:04:05.999999", t.Expiry); err == nil {
			tok.Expiry = e
		} else if tok.RefreshToken != "" {
			tok.Expiry = time.Unix(1, 0) // Unknown: refreshed first.
		}
		d.tokenURL = cmpOr(t.TokenURI, googleTokenURL)
		d.oauthTok, d.saved = tok, tok.AccessToken
		d.oauthConf = &oauth2.Config{ClientID: t.ClientID, ClientSecret: t.ClientSecret, Scopes: DriveScopes}
	default:
		return nil, errors.New("the credential has neither google_service_account_key nor google_tokens")
	}
	if pointed {
		d.tokenURL = d.api + "token"
	}
	if d.oauthConf != nil {
		d.oauthConf.Endpoint = oauth2.Endpoint{TokenURL: d.tokenURL, AuthStyle: oauth2.AuthStyleInParams}
	}
	return d, nil
}

// ---- Tokens, calls, rate limits and errors.

// tokenSource is the tokens of user: the service account impersonating
// user, or the OAuth credential's (whose user is the admin).
func (d *GoogleDrive) tokenSource(user string) oauth2.TokenSource {
	d.mu.Lock()
	defer d.mu.Unlock()
	if ts, ok := d.tokens[user]; ok {
		return ts
	}
	ctx := context.WithValue(context.Background(), oauth2.HTTPClient, d.env.HTTP)
	var ts oauth2.TokenSource
	if d.service {
		jc := &jwt.Config{Email: d.key.ClientEmail, PrivateKey: []byte(d.key.PrivateKey), PrivateKeyID: d.key.PrivateKeyID,
			Scopes: DriveScopes, TokenURL: d.tokenURL, Subject: user}
		ts = jc.TokenSource(ctx)
	} else {
		ts = d.oauthConf.TokenSource(ctx, d.oauthTok)
	}
	ts = oauth2.ReuseTokenSource(nil, ts)
	d.tokens[user] = ts
	return ts
}

// token is an access token for user, or the token endpoint's refusal: a
// *CredentialError naming what Google said. An OAuth token refreshed is
// written back to the credential (saveTokens).
func (d *GoogleDrive) token(ctx context.Context, user string) (string, error) {
	d.mu.Lock()
	err := d.refused[user]
	d.mu.Unlock()
	if err != nil {
		return "", err
	}
	t, err := d.tokenSource(user).Token()
	if err == nil {
		if !d.service {
			d.saveTokens(ctx, t)
		}
		return t.AccessToken, nil
	}
	var re *oauth2.RetrieveError
	if !errors.As(err, &re) || re.Response == nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return "", fmt.Errorf("Google's token endpoint at %s (a token for %s): %w", d.tokenURL, d.who(user), err)
	}
	var body struct {
		Error       string `json:"error"`
		Description string `json:"error_description"`
	}
	msg := quarry.ClipText(strings.TrimSpace(string(re.Body)), 300)
	if json.Unmarshal(re.Body, &body) == nil && body.Error != "" {
		msg = body.Error
		if body.Description != "" {
			msg += ": " + body.Description
		}
	}
	status := re.Response.StatusCode
	line := fmt.Sprintf("Google's token endpoint at %s answered %d %s (a token for %s): %s", d.tokenURL, status, http.StatusText(status), d.who(user), msg)
	if status == http.StatusBadRequest || status == http.StatusUnauthorized || status == http.StatusForbidden {
		err = &CredentialError{Reason: line}
		d.mu.Lock()
		d.refused[user] = err
		d.mu.Unlock()
		return "", err
	}
	return "", errors.New(line)
}

// saveTokens writes t back to the OAuth credential when it is not the
// access token the credential holds (it was refreshed): google_tokens
// with its token, expiry (RFC 3339, which google-auth's
// from_authorized_user_info and newGoogleDrive read) and refresh token
// replaced, kept a JSON string when it was one, the credential's other
// keys as they were; so that the next run uses the token rather than
// refreshing it again. A write that fails (the credential was edited
// meanwhile) is logged: the run goes on with the token it has.
func (d *GoogleDrive) saveTokens(ctx context.Context, t *oauth2.Token) {
	d.mu.Lock()
	if t.AccessToken == d.saved || d.credential == nil {
		d.mu.Unlock()
		return
	}
	d.saved = t.AccessToken
	tokens := maps.Clone(d.tokensJSON)
	tokens["token"] = t.AccessToken
	if _, ok := tokens["access_token"]; ok {
		tokens["access_token"] = t.AccessToken
	}
	if t.RefreshToken != "" {
		tokens["refresh_token"] = t.RefreshToken
	}
	if !t.Expiry.IsZero() {
		tokens["expiry"] = t.Expiry.UTC().Format(time.RFC3339)
	}
	credential := maps.Clone(d.credential)
	d.mu.Unlock()
	if d.env.SaveCredential == nil {
		return
	}
	b, err := json.Marshal(tokens)
	if err != nil {
		return
	}
	var keep json.RawMessage = b
	var s string
	if json.Unmarshal(credential["google_tokens"], &s) == nil {
		keep, _ = json.Marshal(string(b))
	}
	credential["google_tokens"] = keep
	cb, err := json.Marshal(credential)
	if err != nil {
		return
	}
	if err := d.env.SaveCredential(ctx, cb); err != nil {
		d.env.Log.Warn("google drive connector: the refreshed OAuth token could not be written back to the credential; the next run refreshes it again",
			"error", err.Error())
	}
}

// who names user in errors: "the primary admin" for google_primary_admin,
// which is a value of the credential (and so masked in what the worker
// reports), the email otherwise.
func (d *GoogleDrive) who(user string) string {
	if user == d.admin {
		return "the primary admin"
	}
	return user
}

// driveStatusError is the error of an API answer with an error status
// other than 401 and a rate limit.
type driveStatusError struct {
	status int
	reason string
	msg    string
}

func (e *driveStatusError) Error() string { return e.msg }

// driveStatus is the status of err's answer, or 0.
func driveStatus(err error) int {
	var se *driveStatusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}

// googleMessage reads Google's JSON error body: its message and first
// reason.
func googleMessage(body []byte) (msg, reason string) {
	var e struct {
		Error struct {
			Message string `json:"message"`
			Errors  []struct {
				Reason string `json:"reason"`
			} `json:"errors"`
		} `json:"error"`
	}
	if json.Unmarshal(body, &e) == nil && e.Error.Message != "" {
		if len(e.Error.Errors) > 0 {
			reason = e.Error.Errors[0].Reason
		}
		return e.Error.Message, reason
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return quarry.ClipText(s, 300), ""
	}
	return "(no message)", ""
}

// get calls path of the APIs (e.g. "drive/v3/files") with query as user,
// waiting out rate limits (up to driveMaxRetries in a row: Retry-After,
// or a wait doubled each time), and returns the answer's body, at most
// limit bytes.
func (d *GoogleDrive) get(ctx context.Context, user, what, path string, query url.Values, limit int64) ([]byte, error) {
	u := d.api + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	wait := driveFirstWait
	for attempt := 0; ; attempt++ {
		tok, err := d.token(ctx, user)
		if err != nil {
			return nil, err
		}
		status, header, body, err := d.once(ctx, u, tok, limit)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			return nil, fmt.Errorf("Google at %s (%s): %w", d.api, what, err)
		}
		if status >= 200 && status < 300 {
			return body, nil
		}
		msg, reason := googleMessage(body)
		line := fmt.Sprintf("Google at %s answered %d %s (%s as %s): %s", d.api, status, http.StatusText(status), what, d.who(user), msg)
		limited := status == http.StatusTooManyRequests || (status == http.StatusForbidden && (reason == "userRateLimitExceeded" || reason == "rateLimitExceeded"))
		switch {
		case status == http.StatusUnauthorized:
			return nil, &CredentialError{Reason: line}
		case !limited:
			return nil, &driveStatusError{status: status, reason: reason, msg: line}
		}
		w, ok := retryAfter(header)
		if !ok {
			w = wait
			wait *= 2
		}
		if attempt >= driveMaxRetries {
			return nil, fmt.Errorf("Google at %s was still rate-limited after %d waits (%s): %s", d.api, driveMaxRetries, what, msg)
		}
		if w > driveMaxWait {
			return nil, fmt.Errorf("Google at %s is rate-limited for %s, more than the connector waits (%s): %s", d.api, w, what, msg)
		}
		d.env.Log.Info("google drive connector: rate-limited; waiting", "wait", w.String(), "request", what)
		if err := sleep(ctx, w); err != nil {
			return nil, err
		}
	}
}

// getJSON is get of a JSON answer, decoded into out.
func (d *GoogleDrive) getJSON(ctx context.Context, user, what, path string, query url.Values, out any) error {
	b, err := d.get(ctx, user, what, path, query, driveAnswerMaxLen)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, out); err != nil {
		return fmt.Errorf("Google at %s (%s): an answer that is not the JSON expected: %w", d.api, what, err)
	}
	return nil
}

// once makes one request and reads its answer, bounded.
func (d *GoogleDrive) once(ctx context.Context, u, tok string, limit int64) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, driveTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, "GET", u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", "Bearer "+tok)
	resp, err := d.env.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	tooLarge := &limitError{what: "an answer of Google's API", limit: limit}
	b, err := io.ReadAll(newBoundedReader(resp.Body, limit, tooLarge))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// ---- Listing.

// driveFile is a file as files.list writes one.
type driveFile struct {
	ID           string            `json:"id"`
	Name         string            `json:"name"`
	MimeType     string            `json:"mimeType"`
	DriveID      string            `json:"driveId"`
	Parents      []string          `json:"parents"`
	WebViewLink  string            `json:"webViewLink"`
	CreatedTime  string            `json:"createdTime"`
	ModifiedTime string            `json:"modifiedTime"`
	Size         string            `json:"size"`
	Permissions  []drivePermission `json:"permissions"`
	Owners       []struct {
		Email       string `json:"emailAddress"`
		DisplayName string `json:"displayName"`
	} `json:"owners"`
}

// drivePermission is a permission as Drive writes one.
type drivePermission struct {
	Type               string `json:"type"`
	Email              string `json:"emailAddress"`
	Domain             string `json:"domain"`
	AllowFileDiscovery *bool  `json:"allowFileDiscovery"`
}

// timeFilter is Onyx's generate_time_range_filter: the window in the q,
// as RFC 3339 times; nothing for no window.
func timeFilter(w *Window) string {
	if w == nil {
		return ""
	}
	const layout = "2006-01-02T15:04:05.999999Z07:00" // Python's isoformat, to the microsecond.
	return " and modifiedTime >= '" + w.Start.UTC().Format(layout) + "' and modifiedTime <= '" + w.End.UTC().Format(layout) + "'"
}

// list calls file with each file of a files.list of query as user, page
// by page.
func (d *GoogleDrive) list(ctx context.Context, user, what string, query url.Values, file func(f *driveFile) error) error {
	query.Set("fields", driveFileFields)
	query.Set("pageSize", strconv.Itoa(drivePageSize))
	for range driveMaxPages {
		var page struct {
			Files         []*driveFile `json:"files"`
			NextPageToken string       `json:"nextPageToken"`
		}
		if err := d.getJSON(ctx, user, what, "drive/v3/files", query, &page); err != nil {
			return err
		}
		for _, f := range page.Files {
			if err := file(f); err != nil {
				return err
			}
		}
		if page.NextPageToken == "" {
			return nil
		}
		query.Set("pageToken", page.NextPageToken)
	}
	return fmt.Errorf("Google at %s listed more than %d pages (%s)", d.api, driveMaxPages, what)
}

// users is who the connector reads as: specific_user_emails, or the
// admin and (a service account) the domain's users, admins first (Onyx's
// _get_all_user_emails).
func (d *GoogleDrive) users(ctx context.Context) ([]string, error) {
	if len(d.cfg.userEmails) > 0 {
		return d.cfg.userEmails, nil
	}
	out := []string{d.admin}
	if !d.service {
		return out, nil
	}
	for _, q := range []string{"isAdmin=true", "isAdmin=false"} {
		emails, err := d.directory(ctx, "list the domain's users", "admin/directory/v1/users",
			url.Values{"domain": {d.domain}, "query": {q}, "fields": {"nextPageToken, users(primaryEmail)"}}, "users", "primaryEmail")
		if err != nil {
			return nil, err
		}
		for _, e := range emails {
			if !slices.Contains(out, e) {
				out = append(out, e)
			}
		}
	}
	return out, nil
}

// directory lists a Directory API listing as the admin: the key field of
// each item of its list. A 403 (the admin is no Workspace administrator:
// the Admin SDK answers "Not Authorized to access this resource/api",
// drives.list with useDomainAdminAccess "insufficientAdministratorPrivileges")
// is a *CredentialError naming Google's answer, as Onyx's
// probe_directory_admin_permission refuses such a credential.
func (d *GoogleDrive) directory(ctx context.Context, what, path string, query url.Values, list, key string) ([]string, error) {
	var out []string
	for range driveMaxPages {
		var page map[string]json.RawMessage
		if err := d.getJSON(ctx, d.admin, what, path, query, &page); err != nil {
			var se *driveStatusError
			if errors.As(err, &se) && se.status == http.StatusForbidden {
				return nil, &CredentialError{Reason: se.msg + " (google_primary_admin must be a Google Workspace administrator's email: " +
					"the connector lists the domain's users, groups and shared drives as them)"}
			}
			return nil, err
		}
		var items []map[string]any
		if raw, ok := page[list]; ok {
			if err := json.Unmarshal(raw, &items); err != nil {
				return nil, fmt.Errorf("Google at %s (%s): an answer that is not the JSON expected: %w", d.api, what, err)
			}
		}
		for _, it := range items {
			if v, _ := it[key].(string); v != "" {
				out = append(out, v)
			}
		}
		var next string
		_ = json.Unmarshal(page["nextPageToken"], &next)
		if next == "" {
			return out, nil
		}
		query.Set("pageToken", next)
	}
	return nil, fmt.Errorf("Google at %s listed more than %d pages (%s)", d.api, driveMaxPages, what)
}

// sharedDrives is the ids of the shared drives to read: those of
// shared_drive_urls, or (include_shared_drives) every one drives.list
// gives the admin (with useDomainAdminAccess for a service account).
func (d *GoogleDrive) sharedDrives(ctx context.Context) ([]string, error) {
	if len(d.cfg.driveIDs) > 0 || !d.cfg.IncludeSharedDrives {
		return d.cfg.driveIDs, nil
	}
	q := url.Values{"pageSize": {"100"}, "fields": {"drives(id),nextPageToken"}}
	if d.service {
		q.Set("useDomainAdminAccess", "true")
	}
	ids, err := d.directory(ctx, "list the shared drives", "drive/v3/drives", q, "drives", "id")
	if err != nil {
		return nil, err
	}
	slices.Sort(ids)
	return ids, nil
}

// visit is called with each file a listing finds and the user it was
// listed as.
type visit func(ctx context.Context, f *driveFile, user string) error

// each calls v with every file of the configuration modified in w (every
// file for no window), once each: the shared drives' (read as the first
// user that may), the folders' (crawled likewise), the users' My Drives
// and files shared with them. Folders and shortcuts are not files.
func (d *GoogleDrive) each(ctx context.Context, w *Window, v visit) error {
	seen := map[string]bool{}
	one := func(user string) func(f *driveFile) error {
		return func(f *driveFile) error {
			if f.MimeType == driveFolderType || f.MimeType == driveShortcutType || seen[f.ID] {
				return nil
			}
			seen[f.ID] = true
			return v(ctx, f, user)
		}
	}
	users, err := d.users(ctx)
	if err != nil {
		return err
	}
	files := "mimeType != '" + driveFolderType + "' and trashed = false"
	drives, err := d.sharedDrives(ctx)
	if err != nil {
		return err
	}
	for _, id := range drives {
		if err := d.asAnyone(ctx, users, "the shared drive "+id, func(user string) error {
			q := url.Values{"corpora": {"drive"}, "driveId": {id}, "supportsAllDrives": {"true"}, "includeItemsFromAllDrives": {"true"},
				"q": {files + timeFilter(w)}, "orderBy": {"modifiedTime"}}
			return d.list(ctx, user, "list the files of shared drive "+id, q, one(user))
		}); err != nil {
			return err
		}
	}
	for _, id := range d.cfg.folderIDs {
		if err := d.asAnyone(ctx, users, "the folder "+id, func(user string) error {
			return d.crawl(ctx, user, id, w, one(user))
		}); err != nil {
			return err
		}
	}
	var mine []string
	switch {
	case len(d.cfg.myDriveEmails) > 0:
		mine = d.cfg.myDriveEmails
	case d.cfg.IncludeMyDrives || d.cfg.IncludeFilesSharedWithMe:
		mine = users
	}
	for _, user := range mine {
		q := files
		switch {
		case !d.cfg.IncludeFilesSharedWithMe:
			q += " and 'me' in owners"
		case !d.cfg.IncludeMyDrives && len(d.cfg.myDriveEmails) == 0:
			q += " and not 'me' in owners"
		}
		err := d.list(ctx, user, "list the files of "+user, url.Values{"corpora": {"user"}, "q": {q + timeFilter(w)}, "orderBy": {"modifiedTime"}}, one(user))
		var ce *CredentialError
		if errors.As(err, &ce) && user != d.admin {
			// A user the service account may not impersonate (suspended,
			// outside the delegation): skipped, as Onyx's threads skip.
			d.env.Log.Warn("google drive connector: a user's files could not be read; skipped", "user", user, "error", err.Error())
			continue
		}
		if err != nil {
			return err
		}
	}
	return nil
}

// asAnyone runs read as each user in turn until one may (an answer 403
// or 404 is another user's turn); none may: logged and skipped.
func (d *GoogleDrive) asAnyone(ctx context.Context, users []string, what string, read func(user string) error) error {
	var last error
	for _, user := range users {
		err := read(user)
		var ce *CredentialError
		if st := driveStatus(err); st == http.StatusForbidden || st == http.StatusNotFound || (errors.As(err, &ce) && user != d.admin) {
			last = err
			continue
		}
		return err
	}
	if last != nil {
		d.env.Log.Warn("google drive connector: no user may read "+what+"; skipped", "error", last.Error())
	}
	return nil
}

// crawl lists the files of folder id and of its folders, as user (Onyx's
// crawl_folders_for_files), folder by folder (corpora=allDrives, q
// "'<id>' in parents"): the folders, then the files, ordered by
// modifiedTime. The folder is read first (files.get), so that a user who
// may not see it answers 404 and asAnyone asks the next user: Drive
// lists nothing, without an error, of a folder a user may not see.
func (d *GoogleDrive) crawl(ctx context.Context, user, id string, w *Window, file func(f *driveFile) error) error {
	var root struct {
		ID string `json:"id"`
	}
	if err := d.getJSON(ctx, user, "read the folder "+id, "drive/v3/files/"+url.PathEscape(id),
		url.Values{"supportsAllDrives": {"true"}, "fields": {"id, mimeType"}}, &root); err != nil {
		return err
	}
	todo, done := []string{id}, map[string]bool{}
	for len(todo) > 0 && len(done) < driveMaxFolders {
		folder := todo[0]
		todo = todo[1:]
		if done[folder] {
			continue
		}
		done[folder] = true
		q := url.Values{"corpora": {"allDrives"}, "supportsAllDrives": {"true"}, "includeItemsFromAllDrives": {"true"},
			"q": {"mimeType = '" + driveFolderType + "' and trashed = false and '" + folder + "' in parents"}}
		if err := d.list(ctx, user, "list the folders of folder "+folder, q, func(f *driveFile) error {
			if len(todo)+len(done) < driveMaxFolders { // What is past the bound is never crawled.
				todo = append(todo, f.ID)
			}
			return nil
		}); err != nil {
			return err
		}
		q = url.Values{"corpora": {"allDrives"}, "supportsAllDrives": {"true"}, "includeItemsFromAllDrives": {"true"},
			"q": {"mimeType != '" + driveFolderType + "' and '" + folder + "' in parents and trashed = false" + timeFilter(w)}, "orderBy": {"modifiedTime"}}
		if err := d.list(ctx, user, "list the files of folder "+folder, q, file); err != nil {
			return err
		}
	}
	return nil
}

// ---- Documents.

// DriveDocumentID is the id of a file's document: its webViewLink without
// query, and without a trailing edit, view or preview (Onyx's
// onyx_document_id_from_drive_file).
func DriveDocumentID(webViewLink string) string {
	u, err := url.Parse(webViewLink)
	if err != nil {
		return webViewLink
	}
	u.RawQuery, u.ForceQuery = "", false
	parts := strings.Split(u.Path, "/")
	if n := len(parts); n > 0 && (parts[n-1] == "edit" || parts[n-1] == "view" || parts[n-1] == "preview") {
		u.Path = strings.Join(parts[:n-1], "/")
		u.RawPath = ""
	}
	return u.String()
}

// linkOnly is Onyx's has_link_only_permission: a domain or anyone share
// that is not discoverable.
func linkOnly(perms []drivePermission) bool {
	for _, p := range perms {
		if (p.Type == "domain" || p.Type == "anyone") && p.AllowFileDiscovery != nil && !*p.AllowFileDiscovery {
			return true
		}
	}
	return false
}

// DriveGroupID is the id of a Google group (by its email) or of a
// domain's group ("domain:" and the domain) as Onyx keeps it
// (build_ext_group_name_for_onyx): "google_drive_" and it, lowercase.
func DriveGroupID(name string) string { return strings.ToLower(string(GoogleDriveSource) + "_" + name) }

// permissions is f's permissions: those its listing gave, or
// permissions.list's as user.
func (d *GoogleDrive) permissions(ctx context.Context, f *driveFile, user string) ([]drivePermission, error) {
	if f.Permissions != nil {
		return f.Permissions, nil
	}
	var out []drivePermission
	q := url.Values{"fields": {drivePermissionFields}, "supportsAllDrives": {"true"}, "pageSize": {"100"}}
	for range driveMaxPages {
		var page struct {
			Permissions   []drivePermission `json:"permissions"`
			NextPageToken string            `json:"nextPageToken"`
		}
		if err := d.getJSON(ctx, user, "list the permissions of file "+f.ID, "drive/v3/files/"+url.PathEscape(f.ID)+"/permissions", q, &page); err != nil {
			return nil, err
		}
		out = append(out, page.Permissions...)
		if page.NextPageToken == "" {
			f.Permissions = out
			return out, nil
		}
		q.Set("pageToken", page.NextPageToken)
	}
	return nil, fmt.Errorf("Google at %s listed more than %d pages of permissions", d.api, driveMaxPages)
}

// access is who may read f as Onyx's get_external_access_for_raw_gdrive_file
// maps its permissions: users by email, groups by their email's group,
// a discoverable domain share by the domain's group, anyone as public.
// When its permissions may not be read, the user it was read as.
func (d *GoogleDrive) access(ctx context.Context, f *driveFile, user string) (*quarry.ExternalAccess, error) {
	perms, err := d.permissions(ctx, f, user)
	if st := driveStatus(err); st == http.StatusForbidden || st == http.StatusNotFound {
		d.env.Log.Warn("google drive connector: a file's permissions could not be read; it is open to the user it was read as", "file", f.ID, "user", user)
		return &quarry.ExternalAccess{ExternalUserEmails: []string{user}, ExternalUserGroupIDs: []string{}}, nil
	}
	if err != nil {
		return nil, err
	}
	a := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}
	for _, p := range perms {
		switch p.Type {
		case "user":
			if p.Email != "" && !slices.Contains(a.ExternalUserEmails, p.Email) {
				a.ExternalUserEmails = append(a.ExternalUserEmails, p.Email)
			}
		case "group":
			if p.Email != "" {
				a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, DriveGroupID(p.Email))
			}
		case "domain":
			if p.Domain != "" && (p.AllowFileDiscovery == nil || *p.AllowFileDiscovery) {
				a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, DriveGroupID("domain:"+p.Domain))
			}
		case "anyone":
			a.IsPublic = true
		}
	}
	slices.Sort(a.ExternalUserEmails)
	slices.Sort(a.ExternalUserGroupIDs)
	a.ExternalUserGroupIDs = slices.Compact(a.ExternalUserGroupIDs)
	return a, nil
}

// driveExports is the format each Google file is exported in: Onyx's
// GOOGLE_MIME_TYPES_TO_EXPORT (Slides as PPTX, read as the file
// connector reads a .pptx), with the kind of file it is read as.
var driveExports = map[string]struct{ mime, kind string }{
	driveDocType:    {"text/plain", quarry.FileKindText},
	driveSheetType:  {"text/csv", quarry.FileKindCSV},
	driveSlidesType: {"application/vnd.openxmlformats-officedocument.presentationml.presentation", quarry.FileKindPPTX},
}

// tooLarge is the error of a file over driveSizeThreshold: by its size
// (n > 0) or by what its download or export sent.
func tooLarge(n int64) error {
	size := "larger than " + ByteSize(driveSizeThreshold)
	if n > 0 {
		size = fmt.Sprintf("%d bytes", n)
	}
	return fmt.Errorf("the file is %s, more than the %s the connector reads (Onyx's GOOGLE_DRIVE_CONNECTOR_SIZE_THRESHOLD)", size, ByteSize(driveSizeThreshold))
}

// text is f's text read as user: a Google file exported (driveExports),
// another downloaded and read by its name's kind; "" for a file of a kind
// not read. A file over driveSizeThreshold (its size as listed, or what
// its download or export sends) is an error that says so: the failure of
// its document.
func (d *GoogleDrive) text(ctx context.Context, f *driveFile, user string) (string, error) {
	if export, ok := driveExports[f.MimeType]; ok {
		b, err := d.get(ctx, user, "export file "+f.ID, "drive/v3/files/"+url.PathEscape(f.ID)+"/export", url.Values{"mimeType": {export.mime}}, driveSizeThreshold)
		var le *limitError
		if errors.As(err, &le) {
			return "", tooLarge(0)
		}
		if err != nil {
			return "", err
		}
		return ExtractText(d.env.PDF, export.kind, strings.NewReader(string(b)), quarry.MaxDocumentBytes)
	}
	kind := quarry.FileKind(f.Name)
	if kind == "" || strings.HasPrefix(f.MimeType, "application/vnd.google-apps.") {
		return "", nil
	}
	if n, err := strconv.ParseInt(f.Size, 10, 64); err == nil && n > driveSizeThreshold {
		return "", tooLarge(n)
	}
	b, err := d.get(ctx, user, "download file "+f.ID, "drive/v3/files/"+url.PathEscape(f.ID), url.Values{"alt": {"media"}, "supportsAllDrives": {"true"}}, driveSizeThreshold)
	var le *limitError
	if errors.As(err, &le) {
		return "", tooLarge(0)
	}
	if err != nil {
		return "", err
	}
	return ExtractText(d.env.PDF, kind, strings.NewReader(string(b)), quarry.MaxDocumentBytes)
}

// document is Onyx's convert_drive_item_to_document: f's text read as
// user, then as its owners and the admin when user may not (403, 404);
// nil when it has no text or no one may read it.
func (d *GoogleDrive) document(ctx context.Context, f *driveFile, user string) (*quarry.Document, error) {
	readers := []string{user}
	for _, o := range f.Owners {
		readers = append(readers, o.Email)
	}
	readers = append(readers, d.admin)
	var text string
	var err error
	tried := map[string]bool{}
	for _, r := range readers {
		if r == "" || tried[r] || (r != user && !d.service) {
			continue
		}
		tried[r] = true
		text, err = d.text(ctx, f, r)
		if st := driveStatus(err); st == http.StatusForbidden || st == http.StatusNotFound {
			continue
		}
		var ce *CredentialError
		if errors.As(err, &ce) && r != d.admin {
			continue
		}
		user = r
		break
	}
	if err != nil {
		if st := driveStatus(err); st == http.StatusForbidden {
			d.env.Log.Warn("google drive connector: a file no user may download is skipped", "file", f.ID)
			return nil, nil
		}
		return nil, err
	}
	if strings.TrimSpace(text) == "" {
		return nil, nil
	}
	access, err := d.access(ctx, f, user)
	if err != nil {
		return nil, err
	}
	modified, err := time.Parse(time.RFC3339Nano, f.ModifiedTime)
	if err != nil {
		return nil, fmt.Errorf("its modifiedTime %q: %w", f.ModifiedTime, err)
	}
	link := f.WebViewLink
	names := make([]string, len(f.Owners))
	for i, o := range f.Owners {
		names[i] = o.DisplayName
	}
	return &quarry.Document{
		ID:                 DriveDocumentID(f.WebViewLink),
		Sections:           []quarry.Section{{Text: text, Link: &link}},
		Source:             GoogleDriveSource,
		SemanticIdentifier: f.Name,
		Metadata:           map[string]any{"owner_names": strings.Join(names, ", ")},
		DocUpdatedAt:       &quarry.Time{Time: modified.UTC()},
		ExternalAccess:     access,
	}, nil
}

// ---- Runs.

// Poll reads the files modified in w, emitting their documents with
// their access; a file that fails is a failure of its document.
func (d *GoogleDrive) Poll(ctx context.Context, w Window, out Emitter) error {
	return d.each(ctx, &w, func(ctx context.Context, f *driveFile, user string) error {
		if f.WebViewLink == "" {
			return nil
		}
		if d.cfg.ExcludeDomainLinkOnly {
			perms, err := d.permissions(ctx, f, user)
			if err == nil && linkOnly(perms) {
				return nil
			}
		}
		doc, err := d.document(ctx, f, user)
		var ce *CredentialError
		if errors.As(err, &ce) || ctx.Err() != nil {
			return err
		}
		if err != nil {
			link := f.WebViewLink
			return out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: DriveDocumentID(link), DocumentLink: &link},
				FailureMessage: fmt.Sprintf("Error converting file '%s' to Document as %s: %s", f.Name, user, err.Error())})
		}
		if doc == nil {
			return nil
		}
		return out.Document(ctx, doc)
	})
}

// ListIDs lists the ids of every file, for pruning: Onyx's
// retrieve_all_slim_docs.
func (d *GoogleDrive) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	var batch []string
	err := d.each(ctx, nil, func(ctx context.Context, f *driveFile, user string) error {
		if f.WebViewLink == "" || (d.cfg.ExcludeDomainLinkOnly && linkOnly(f.Permissions)) {
			return nil
		}
		batch = append(batch, DriveDocumentID(f.WebViewLink))
		if len(batch) >= driveSlimBatch {
			err := ids(ctx, batch)
			batch = nil
			return err
		}
		return nil
	})
	if err != nil {
		return err
	}
	if len(batch) > 0 {
		return ids(ctx, batch)
	}
	return nil
}

// Permissions lists every file with its access: Onyx's gdrive_doc_sync.
func (d *GoogleDrive) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	return d.each(ctx, nil, func(ctx context.Context, f *driveFile, user string) error {
		if f.WebViewLink == "" {
			return nil
		}
		if d.cfg.ExcludeDomainLinkOnly {
			if perms, err := d.permissions(ctx, f, user); err == nil && linkOnly(perms) {
				return nil
			}
		}
		a, err := d.access(ctx, f, user)
		if err != nil {
			return err
		}
		return access(ctx, DriveDocumentID(f.WebViewLink), a)
	})
}

// Groups lists the Workspace's Google groups with their members' emails,
// and the domain's group (every user the Directory lists): Onyx's
// gdrive_group_sync, without its groups of shared drives and folders
// (their members are in each file's permissions). A group with no member
// is not listed.
func (d *GoogleDrive) Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error {
	groups, err := d.directory(ctx, "list the groups", "admin/directory/v1/groups",
		url.Values{"domain": {d.domain}, "fields": {"groups(email),nextPageToken"}}, "groups", "email")
	if err != nil {
		return err
	}
	slices.Sort(groups)
	for _, g := range groups {
		members, err := d.directory(ctx, "list the members of group "+g, "admin/directory/v1/groups/"+url.PathEscape(g)+"/members",
			url.Values{"fields": {"members(email),nextPageToken"}}, "members", "email")
		if driveStatus(err) == http.StatusNotFound {
			continue
		}
		if err != nil {
			return err
		}
		slices.Sort(members)
		if members = slices.Compact(members); len(members) == 0 {
			continue
		}
		if err := group(ctx, &quarry.ExternalGroup{ID: DriveGroupID(g), UserEmails: members}); err != nil {
			return err
		}
	}
	users, err := d.directory(ctx, "list the domain's users", "admin/directory/v1/users",
		url.Values{"domain": {d.domain}, "fields": {"users(primaryEmail),nextPageToken"}}, "users", "primaryEmail")
	if err != nil {
		return err
	}
	slices.Sort(users)
	if len(users) == 0 {
		return nil
	}
	return group(ctx, &quarry.ExternalGroup{ID: DriveGroupID("domain:" + d.domain), UserEmails: users})
}
