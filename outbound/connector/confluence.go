package connector

import (
	"cmp"
	"context"
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"math"
	"net/http"
	"net/url"
	"regexp"
	"slices"
	"strconv"
	"strings"
	"time"

	"golang.org/x/net/html"
	"golang.org/x/net/html/atom"

	"github.com/quarryhq/quarry"
)

// ConfluenceSource is the source of Confluence's connector.
const ConfluenceSource quarry.DocumentSource = "confluence"

// Limits and waits of the Confluence connector, as Onyx v4.6.1's
// (connector.py, onyx_confluence.py and utils.py) where it has them.
const (
	confluenceBatchSize   = 16   // INDEX_BATCH_SIZE: the pages a step asks for.
	confluenceSlimLimit   = 5000 // _SLIM_DOC_BATCH_SIZE: the limit of slim listings.
	confluenceListLimit   = 1000 // _DEFAULT_PAGINATION_LIMIT: of the other listings.
	confluenceMaxRetries  = 5    // handle_confluence_rate_limit's MAX_RETRIES.
	confluenceMinWait     = 2 * time.Second
	confluenceMaxWait     = 60 * time.Second
	confluenceTimeout     = 60 * time.Second // One call.
	confluenceMaxAnswer   = 32 << 20         // One answer's bytes.
	confluenceMaxPages    = 100000           // Pages of one listing.
	confluenceUnknownUser = "Unknown Confluence User"
	// ConfluenceAllUsersGroup is the group of every Confluence user the
	// group sync found with an email, which Onyx's Cloud group sync adds
	// (ALL_CONF_EMAILS_GROUP_NAME).
	ConfluenceAllUsersGroup = "All_Confluence_Users_Found_By_Onyx"
)

// The fields a search expands, as Onyx v4.6.1's: pages (to which Quarry
// adds their restrictions and their ancestors', for the access it gives
// the documents of sync pairs), comments, the slim listing for pruning, the
// one for the permission sync and the permission sync's after
// CONFCLOUD-77618 (the ancestors bare, their restrictions read one by one).
var (
	confluencePageExpand        = "body.storage.value,version,space,metadata.labels,history.lastUpdated,ancestors,restrictions.read.restrictions.user,restrictions.read.restrictions.group,ancestors.restrictions.read.restrictions.user,ancestors.restrictions.read.restrictions.group,history"
	confluenceCommentExpand     = "body.storage.value"
	confluenceAttachmentExpand  = "version,space,metadata.labels,history"
	confluencePruneExpand       = "space,ancestors,history"
	confluenceRestrictionExpand = "space,restrictions.read.restrictions.user,restrictions.read.restrictions.group,ancestors.restrictions.read.restrictions.user,ancestors.restrictions.read.restrictions.group,history"
	confluencePerPageExpand     = "space,restrictions.read.restrictions.user,restrictions.read.restrictions.group,ancestors,history"
)

// confluence77618Signatures are what Confluence Cloud's 404 says when a
// search expanding the ancestors' restrictions meets a draft, outdated or
// trashed ancestor (CONFCLOUD-77618, CONFCLOUD-76424), as Onyx's
// _CONFCLOUD_77618_404_BODY_SIGNATURES.
var confluence77618Signatures = []string{"No content with id", "Cannot find content. Outdated version/old_draft/trashed"}

// Confluence is Onyx v4.6.1's Confluence connector
// (backend/onyx/connectors/confluence): the pages a CQL query finds
// (every page, a space's, a page and maybe its descendants, or the
// admin's own query), each a document whose id is its web address, its
// text the page's storage format made text as Onyx makes it with its
// comments' as a second section, and a document for each attachment
// Quarry reads (include_attachments), read a batch of results a step through
// the search's _links.next (the checkpoint). A poll's query carries its
// window (lastmodified, in minutes, as CQL takes it). It is Slim (every
// page's id, for pruning), a PermissionSyncer (space permissions, with a
// page's or its closest restricted ancestor's read restrictions
// overriding them, as Onyx's doc_sync, each ancestor's read on its own
// when Confluence cannot expand them (CONFCLOUD-77618); anonymous read
// makes a space public) and a GroupSyncer (each user's groups, by email,
// as Onyx's group_sync). Rate limits (429, with Retry-After or not) and
// server errors are waited out, up to confluenceMaxRetries in a row; a 401
// or 403 is a *CredentialError naming Confluence's message.
type Confluence struct {
	env       *Env
	base      string // wiki_base, without a trailing slash.
	cloud     bool
	auth      string // The Authorization header.
	pageQuery string // The CQL of the pages, without a window.
	labels    string // " and label not in (...)", or "".
	tz        *time.Location
	attach    bool // include_attachments.

	users  map[string]string                 // Display names by account id or user key.
	spaces map[string]*quarry.ExternalAccess // Space access by key, once a run (nil: refused, see access).
	// spacesUnlisted says that the listing of the spaces was refused.
	spacesUnlisted bool
}

// confluenceConfig is the connector_specific_config of Onyx v4.6.1's
// ConfluenceConnector.
type confluenceConfig struct {
	WikiBase           string   `json:"wiki_base"`
	IsCloud            bool     `json:"is_cloud"`
	Space              string   `json:"space"`
	PageID             string   `json:"page_id"`
	IndexRecursively   bool     `json:"index_recursively"`
	CQLQuery           *string  `json:"cql_query"`
	LabelsToSkip       []string `json:"labels_to_skip"`
	TimezoneOffset     *float64 `json:"timezone_offset"`
	ScopedToken        bool     `json:"scoped_token"`
	IncludeAttachments *bool    `json:"include_attachments"`
}

// confluenceCredential is the credential_json of Onyx's Confluence
// credentials.
type confluenceCredential struct {
	Username     string `json:"confluence_username"`
	AccessToken  string `json:"confluence_access_token"`
	RefreshToken string `json:"confluence_refresh_token"`
}

// NewConfluence makes a Confluence connector.
func NewConfluence(config, credential json.RawMessage, env *Env) (Connector, error) {
	c, err := newConfluence(config, credential, env)
	if err != nil {
		return nil, err
	}
	return c, nil
}

func newConfluence(config, credential json.RawMessage, env *Env) (*Confluence, error) {
	var cfg confluenceConfig
	if err := json.Unmarshal(config, &cfg); err != nil {
		return nil, fmt.Errorf("not a Confluence configuration: %w", err)
	}
	u, err := url.Parse(strings.TrimSpace(cfg.WikiBase))
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil {
		return nil, fmt.Errorf("wiki_base %q is not an http(s) URL", cfg.WikiBase)
	}
	if cfg.ScopedToken {
		return nil, errors.New("scoped_token: Quarry's Confluence connector does not take scoped API tokens yet; use an API token without scopes")
	}
	var cred confluenceCredential
	if len(credential) > 0 {
		if err := json.Unmarshal(credential, &cred); err != nil {
			return nil, errors.New("the credential is not a JSON object of confluence_username and confluence_access_token")
		}
	}
	if cred.RefreshToken != "" {
		return nil, errors.New("the credential is an OAuth token (confluence_refresh_token), which Quarry's Confluence connector does not take yet; use an API token")
	}
	if cred.AccessToken == "" || (cfg.IsCloud && cred.Username == "") {
		return nil, errors.New("the credential needs confluence_access_token, and confluence_username for Confluence Cloud")
	}
	c := &Confluence{env: env, base: strings.TrimRight(u.String(), "/"), cloud: cfg.IsCloud, tz: time.UTC, users: map[string]string{},
		attach: cfg.IncludeAttachments == nil || *cfg.IncludeAttachments}
	if cfg.IsCloud {
		c.auth = "Basic " + base64.StdEncoding.EncodeToString([]byte(cred.Username+":"+cred.AccessToken))
	} else {
		c.auth = "Bearer " + cred.AccessToken
	}
	if cfg.TimezoneOffset != nil {
		c.tz = time.FixedZone("", int(math.Round(*cfg.TimezoneOffset*3600)))
	}
	// Onyx's base_cql_page_query: the admin's query, or a page (and maybe
	// its descendants), or a space, or every page.
	q := "type=page"
	switch {
	case cfg.CQLQuery != nil && *cfg.CQLQuery != "":
		q = *cfg.CQLQuery
	case cfg.PageID != "" && cfg.IndexRecursively:
		q += fmt.Sprintf(" and (ancestor='%s' or id='%s')", cfg.PageID, cfg.PageID)
	case cfg.PageID != "":
		q += fmt.Sprintf(" and id='%s'", cfg.PageID)
	case cfg.Space != "":
		q += fmt.Sprintf(" and space='%s'", pyQuote(cfg.Space))
	}
	c.pageQuery = q
	if len(cfg.LabelsToSkip) > 0 {
		labels := slices.Clone(cfg.LabelsToSkip)
		slices.Sort(labels)
		labels = slices.Compact(labels)
		quoted := make([]string, len(labels))
		for i, l := range labels {
			quoted[i] = "'" + pyQuote(l) + "'"
		}
		c.labels = " and label not in (" + strings.Join(quoted, ",") + ")"
	}
	return c, nil
}

// pyQuote is Python's urllib.parse.quote of s (safe "/"), with which Onyx
// writes space keys and labels into CQL.
func pyQuote(s string) string {
	var b strings.Builder
	for _, c := range []byte(s) {
		if c >= 'A' && c <= 'Z' || c >= 'a' && c <= 'z' || c >= '0' && c <= '9' || strings.IndexByte("_.-~/", c) >= 0 {
			b.WriteByte(c)
		} else {
			fmt.Fprintf(&b, "%%%02X", c)
		}
	}
	return b.String()
}

// window is the CQL of a window (nil ends left open), as Onyx writes it.
func (c *Confluence) window(start, end *time.Time) string {
	q := ""
	if start != nil {
		q += " and lastmodified >= '" + start.In(c.tz).Format("2006-01-02 15:04") + "'"
	}
	if end != nil {
		q += " and lastmodified <= '" + end.In(c.tz).Format("2006-01-02 15:04") + "'"
	}
	return q
}

// pageCQL is Onyx's _construct_page_cql_query: the pages' query, the
// labels to skip, the window (nil ends are left open) and the order.
func (c *Confluence) pageCQL(start, end *time.Time) string {
	return c.pageQuery + c.labels + c.window(start, end) + " order by lastmodified asc"
}

// searchPath is the path and query of a content search.
func searchPath(cql, expand string, limit int) string {
	v := url.Values{"cql": {cql}, "expand": {expand}, "limit": {strconv.Itoa(limit)}}
	return "rest/api/content/search?" + v.Encode()
}

// confluenceCheckpoint is Onyx's ConfluenceCheckpoint.
type confluenceCheckpoint struct {
	HasMore     bool    `json:"has_more"`
	NextPageURL *string `json:"next_page_url"`
}

// FirstCheckpoint is Onyx's build_dummy_checkpoint.
func (c *Confluence) FirstCheckpoint() json.RawMessage {
	return json.RawMessage(`{"has_more":true,"next_page_url":null}`)
}

// Step reads one page of the search's results (the first, or the one the
// checkpoint's next_page_url names) and emits a document for each: Onyx's
// load_from_checkpoint, whose window ends a day later than asked.
func (c *Confluence) Step(ctx context.Context, w Window, raw json.RawMessage, out Emitter) (json.RawMessage, error) {
	var cp confluenceCheckpoint
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("not a Confluence checkpoint: %w", err)
	}
	var start *time.Time
	if w.Start.Unix() > 0 { // Onyx's "if start": none from the epoch.
		start = &w.Start
	}
	end := w.End.Add(24 * time.Hour)
	path := searchPath(c.pageCQL(start, &end), confluencePageExpand, confluenceBatchSize)
	if cp.NextPageURL != nil && *cp.NextPageURL != "" {
		path = *cp.NextPageURL
	}
	var res confluencePage[*confluenceContent]
	err := c.get(ctx, "search the pages", path, &res)
	if confluenceUnreadable(err) && expandsRestrictions(path) {
		// The restrictions the account may not read (or an ancestor it
		// does not see: CONFCLOUD-77618) are the permission sync's to
		// read; the pages are read without, and carry no access.
		c.env.Log.Warn("confluence connector: the pages' read restrictions could not be read; their documents carry no access until the permission sync", "error", err.Error())
		path = withoutRestrictions(path)
		err = c.get(ctx, "search the pages", path, &res)
	}
	if err != nil {
		return nil, err
	}
	restricted := expandsRestrictions(path)
	for _, p := range res.Results {
		var access *quarry.ExternalAccess
		if restricted { // Else a restricted page would get its space's access.
			if access, err = c.access(ctx, p, false, nil); err != nil {
				return nil, err
			}
		}
		d, err := c.document(ctx, p, access)
		if err != nil {
			if ctx.Err() != nil {
				return nil, ctx.Err()
			}
			var ce *CredentialError
			if errors.As(err, &ce) {
				return nil, err
			}
			link := c.docID(p.Links.WebUI)
			if err := out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: p.ID, DocumentLink: &link},
				FailureMessage: fmt.Sprintf("Error converting page %s: %v", p.ID, err)}); err != nil {
				return nil, err
			}
			continue
		}
		if err := out.Document(ctx, d); err != nil {
			return nil, err
		}
		if err := c.attachments(ctx, p, d, start, &end, out); err != nil {
			return nil, err
		}
	}
	next := confluenceCheckpoint{HasMore: res.Links.Next != "" && len(res.Results) > 0}
	if next.HasMore {
		n := strings.TrimLeft(res.Links.Next, "/")
		next.NextPageURL = &n
	}
	b, err := json.Marshal(next)
	return b, err
}

// confluencePage is a page of a listing of T.
type confluencePage[T any] struct {
	Results []T `json:"results"`
	Links   struct {
		Next string `json:"next"`
	} `json:"_links"`
}

// confluenceName is a group, or another result of which only the name is
// read.
type confluenceName struct {
	Name string `json:"name"`
}

// confluenceContent is a page or comment, with the fields the connector
// expands.
type confluenceContent struct {
	ID    string `json:"id"`
	Title string `json:"title"`
	Links struct {
		WebUI    string `json:"webui"`
		Download string `json:"download"`
	} `json:"_links"`
	Extensions *struct {
		MediaType string `json:"mediaType"`
		FileSize  int64  `json:"fileSize"`
	} `json:"extensions"`
	Body *struct {
		Storage *struct {
			Value string `json:"value"`
		} `json:"storage"`
		View *struct {
			Value string `json:"value"`
		} `json:"view"`
	} `json:"body"`
	Space *struct {
		Key  string `json:"key"`
		Name string `json:"name"`
	} `json:"space"`
	Version *struct {
		When string          `json:"when"`
		By   *confluenceUser `json:"by"`
	} `json:"version"`
	Metadata *struct {
		MediaType string `json:"mediaType"`
		Labels    *struct {
			Results []confluenceName `json:"results"`
		} `json:"labels"`
	} `json:"metadata"`
	Restrictions *confluenceRestrictions `json:"restrictions"`
	Ancestors    []*confluenceContent    `json:"ancestors"`
}

// confluenceUser is a user as Confluence shows one.
type confluenceUser struct {
	AccountID   string  `json:"accountId"`
	UserKey     string  `json:"userKey"`
	DisplayName *string `json:"displayName"`
	Email       *string `json:"email"`
}

// confluenceRestrictions are a content's read restrictions.
type confluenceRestrictions struct {
	Read struct {
		Restrictions struct {
			User struct {
				Results []confluenceUser `json:"results"`
			} `json:"user"`
			Group struct {
				Results []confluenceName `json:"results"`
			} `json:"group"`
		} `json:"restrictions"`
	} `json:"read"`
}

// docID is Onyx's build_confluence_document_id: the address of a web
// path under the wiki's base (with /wiki added for Cloud when the base
// lacks it).
func (c *Confluence) docID(webui string) string {
	base := c.base + "/"
	if c.cloud && !strings.HasSuffix(base, "/wiki/") {
		base += "wiki/"
	}
	b, err := url.Parse(base)
	if err != nil {
		return base + strings.TrimLeft(webui, "/")
	}
	r, err := url.Parse(strings.TrimLeft(webui, "/"))
	if err != nil {
		return base + strings.TrimLeft(webui, "/")
	}
	return b.ResolveReference(r).String()
}

// document is Onyx's _convert_page_to_document of page p.
func (c *Confluence) document(ctx context.Context, p *confluenceContent, access *quarry.ExternalAccess) (*quarry.Document, error) {
	if p.Links.WebUI == "" || p.Version == nil {
		return nil, errors.New("the page has no web link or version")
	}
	id := c.docID(p.Links.WebUI)
	text, err := c.text(ctx, p)
	if err != nil {
		return nil, err
	}
	link := id
	d := &quarry.Document{ID: id, Sections: []quarry.Section{{Text: text, Link: &link}}, Source: ConfluenceSource,
		SemanticIdentifier: p.Title, Metadata: map[string]any{}, ExternalAccess: access}
	var commentText strings.Builder
	cql := "type=comment and container='" + p.ID + "'" + c.labels
	if err := confluenceList(ctx, c, "search the comments of page "+p.ID, searchPath(cql, confluenceCommentExpand, confluenceListLimit), func(comments []*confluenceContent) error {
		for _, cm := range comments {
			t, err := c.text(ctx, cm)
			if err != nil {
				return err
			}
			commentText.WriteString("\nComment:\n" + t)
		}
		return nil
	}); err != nil {
		return nil, err
	}
	if commentText.Len() > 0 {
		l := id + "#comments"
		d.Sections = append(d.Sections, quarry.Section{Text: commentText.String(), Link: &l})
	}
	if p.Space != nil {
		d.Metadata["space"] = p.Space.Name
	}
	if p.Metadata != nil && p.Metadata.Labels != nil && len(p.Metadata.Labels.Results) > 0 {
		labels := []string{}
		for _, l := range p.Metadata.Labels.Results {
			labels = append(labels, l.Name)
		}
		d.Metadata["labels"] = labels
	}
	if by := p.Version.By; by != nil {
		o, _ := json.Marshal(imapOwner{DisplayName: cmp.Or(deref(by.DisplayName), "Unknown"), Email: cmp.Or(deref(by.Email), "unknown@domain.invalid")})
		d.PrimaryOwners = []json.RawMessage{o}
	}
	if t, err := time.Parse(time.RFC3339, p.Version.When); err == nil {
		d.DocUpdatedAt = &quarry.Time{Time: t.UTC()}
	}
	return d, nil
}

func deref(s *string) string {
	if s == nil {
		return ""
	}
	return *s
}

// get reads the answer to a GET of path (under the wiki's base) into
// out, waiting out rate limits and server errors as Onyx's
// handle_confluence_rate_limit does.
func (c *Confluence) get(ctx context.Context, what, path string, out any) error {
	body, err := c.read(ctx, what, path)
	if err != nil {
		return err
	}
	if err := json.Unmarshal(body, out); err != nil {
		return fmt.Errorf("Confluence at %s answered what is not JSON (%s): %w", c.base, what, err)
	}
	return nil
}

// read returns the body of the answer to a GET of path (under the wiki's
// base), waiting out rate limits and server errors as get does.
func (c *Confluence) read(ctx context.Context, what, path string) ([]byte, error) {
	u := c.base + "/" + strings.TrimLeft(path, "/")
	for attempt := 0; ; attempt++ {
		status, header, body, err := c.call(ctx, u)
		if err != nil {
			return nil, fmt.Errorf("Confluence at %s (%s): %w", c.base, what, err)
		}
		switch {
		case status == http.StatusOK:
			return body, nil
		case status == http.StatusUnauthorized || status == http.StatusForbidden:
			return nil, &confluenceStatusError{status, confluenceMessage(body), &CredentialError{Reason: fmt.Sprintf("Confluence at %s answered %d %s (%s): %s", c.base, status, http.StatusText(status), what, confluenceMessage(body))}}
		}
		limited := status == http.StatusTooManyRequests || strings.Contains(strings.ToLower(string(body)), "rate limit exceeded")
		if !limited && status < 500 {
			return nil, &confluenceStatusError{status, confluenceMessage(body), fmt.Errorf("Confluence at %s answered %d %s (%s): %s", c.base, status, http.StatusText(status), what, confluenceMessage(body))}
		}
		if attempt >= confluenceMaxRetries-1 {
			return nil, fmt.Errorf("Confluence at %s still answered %d %s after %d tries (%s): %s", c.base, status, http.StatusText(status), confluenceMaxRetries, what, confluenceMessage(body))
		}
		wait := min(5*time.Second<<attempt, confluenceMaxWait) // Onyx's backoff, without Retry-After.
		if d, ok := retryAfter(header); limited && ok {
			wait = min(max(d, confluenceMinWait), confluenceMaxWait)
		}
		c.env.Log.Info("confluence connector: rate-limited or failing; waiting", "status", status, "wait", wait.String(), "request", what)
		if err := sleep(ctx, wait); err != nil {
			return nil, err
		}
	}
}

// confluenceStatusError is an answer of Confluence's that refused a read:
// its status, its message (confluenceMessage), and the error said of it
// (a *CredentialError for 401 and 403).
type confluenceStatusError struct {
	status  int
	message string
	err     error
}

func (e *confluenceStatusError) Error() string { return e.err.Error() }
func (e *confluenceStatusError) Unwrap() error { return e.err }

// confluenceUnreadable reports whether err is Confluence's 403 or 404 to
// a read: what the account may not read, or does not see (Onyx's
// fetch_content_read_restrictions reads both as "unreadable").
func confluenceUnreadable(err error) bool {
	var se *confluenceStatusError
	return errors.As(err, &se) && (se.status == http.StatusForbidden || se.status == http.StatusNotFound)
}

// confluence77618 reports whether err is Confluence Cloud's 404 to a
// search that expands the ancestors' restrictions of a page under a
// draft, outdated or trashed page (CONFCLOUD-77618), as Onyx's
// _is_confcloud_77618_response.
func confluence77618(err error) bool {
	var se *confluenceStatusError
	return errors.As(err, &se) && se.status == http.StatusNotFound &&
		slices.ContainsFunc(confluence77618Signatures, func(sig string) bool { return strings.Contains(se.message, sig) })
}

// withoutRestrictions returns path, a content search, with no read
// restrictions in its expand.
func withoutRestrictions(path string) string {
	u, err := url.Parse(path)
	if err != nil {
		return path
	}
	q := u.Query()
	var keep []string
	for _, e := range strings.Split(q.Get("expand"), ",") {
		if !strings.Contains(e, "restrictions") {
			keep = append(keep, e)
		}
	}
	q.Set("expand", strings.Join(keep, ","))
	u.RawQuery = q.Encode()
	return u.String()
}

// expandsRestrictions reports whether path, a content search, expands
// its results' read restrictions.
func expandsRestrictions(path string) bool {
	u, err := url.Parse(path)
	return err == nil && strings.Contains(u.Query().Get("expand"), "restrictions")
}

// call makes one GET of u.
func (c *Confluence) call(parent context.Context, u string) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(parent, confluenceTimeout)
	defer cancel()
	req, err := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Authorization", c.auth)
	req.Header.Set("Accept", "application/json")
	resp, err := c.env.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err // Without the URL's query.
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	body, err := io.ReadAll(newBoundedReader(resp.Body, confluenceMaxAnswer, &limitError{what: "an answer", limit: confluenceMaxAnswer}))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, body, nil
}

// confluenceMessage is what an error answer says: its message, or its
// text clipped.
func confluenceMessage(body []byte) string {
	var e struct {
		Message string `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil && e.Message != "" {
		return e.Message
	}
	return quarry.ClipText(strings.TrimSpace(string(body)), 200)
}

// confluenceList reads a listing of T from path, calling f with each
// page's results, following _links.next; a page without results ends it,
// as Onyx's _paginate_url, and so do confluenceMaxPages pages (an error: a
// server whose next link never ends would hold the attempt for ever).
func confluenceList[T any](ctx context.Context, c *Confluence, what, path string, f func(results []T) error) error {
	for pages := 0; path != ""; pages++ {
		if pages == confluenceMaxPages {
			return fmt.Errorf("Confluence at %s gave more than %d pages (%s)", c.base, confluenceMaxPages, what)
		}
		var page confluencePage[T]
		if err := c.get(ctx, what, path, &page); err != nil {
			return err
		}
		if err := f(page.Results); err != nil {
			return err
		}
		if len(page.Results) == 0 {
			return nil
		}
		path = page.Links.Next
	}
	return nil
}

// ListIDs lists the id of every page the query finds, without a window:
// Onyx's retrieve_all_slim_docs.
func (c *Confluence) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	return confluenceList(ctx, c, "list the pages", searchPath(c.pageCQL(nil, nil), confluencePruneExpand, confluenceSlimLimit), func(pages []*confluenceContent) error {
		batch := make([]string, 0, len(pages))
		for _, p := range pages {
			batch = append(batch, c.docID(p.Links.WebUI))
			if err := c.eachAttachment(ctx, p, nil, nil, confluencePruneExpand, func(a *confluenceContent) error {
				batch = append(batch, c.docID(a.Links.WebUI))
				return nil
			}); err != nil {
				return err
			}
		}
		if len(batch) == 0 {
			return nil
		}
		return ids(ctx, batch)
	})
}

// Permissions lists every page the query finds with its access: Onyx's
// confluence_doc_sync (retrieve_all_slim_docs_perm_sync). As Onyx, when
// Confluence answers the listing with CONFCLOUD-77618's 404 (an ancestor
// that is a draft, outdated or trashed), the listing starts again with the
// ancestors bare, and each ancestor's read restrictions are read on their
// own (content/{id}/restriction/byOperation, once a run each), an ancestor
// Confluence refuses or does not find (403, 404) passed over. The pages
// listed before the 404 are listed again with the same access.
func (c *Confluence) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	err := c.permissions(ctx, confluenceRestrictionExpand, nil, access)
	if !confluence77618(err) {
		return err
	}
	c.env.Log.Warn("confluence connector: Confluence could not expand the ancestors' restrictions (CONFCLOUD-77618); listing the pages again and reading each ancestor's restrictions on its own", "error", err.Error())
	return c.permissions(ctx, confluencePerPageExpand, map[string]*confluenceRestrictions{}, access)
}

// permissions lists every page with its access, as Permissions, from a
// search expanding expand; ancestors is nil when expand has the
// ancestors' restrictions, else the cache of the ancestors' restrictions
// read on their own (see access).
func (c *Confluence) permissions(ctx context.Context, expand string, ancestors map[string]*confluenceRestrictions, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	return confluenceList(ctx, c, "list the pages' restrictions", searchPath(c.pageCQL(nil, nil), expand, confluenceSlimLimit), func(pages []*confluenceContent) error {
		for _, p := range pages {
			a, err := c.access(ctx, p, true, ancestors)
			if err != nil {
				return err
			}
			if err := access(ctx, c.docID(p.Links.WebUI), a); err != nil {
				return err
			}
			if err := c.eachAttachment(ctx, p, nil, nil, expand, func(at *confluenceContent) error {
				return access(ctx, c.docID(at.Links.WebUI), a)
			}); err != nil {
				return err
			}
		}
		return nil
	})
}

// ConfluenceGroupID is the id Quarry gives Confluence's group name in
// documents' access and group syncs: Onyx's build_ext_group_name_for_onyx.
func ConfluenceGroupID(name string) string {
	return strings.ToLower(string(ConfluenceSource) + "_" + name)
}

// access is who may read page p, as Onyx's get_page_restrictions and
// get_space_permission decide: the page's read restrictions when it has
// any, else its closest ancestor's that has, else its space's permissions.
// The ancestors' restrictions are those p's search expanded when
// ancestors is nil; else each is read on its own as Onyx's
// get_page_restrictions_with_per_ancestor_fetch (ancestorRestrictions),
// ancestors keeping what was read for the other pages.
// A page of a space with no permissions the account can see has an
// access no one has. When the spaces or a space's permissions may not be
// read (403, 404: the account is not the space's admin), strict (the
// permission sync) fails and otherwise (indexing) the page carries no
// access (nil), as Jira's projectAccess: only a sync pair reads it, and
// there no one sees the page until the permission sync.
func (c *Confluence) access(ctx context.Context, p *confluenceContent, strict bool, ancestors map[string]*confluenceRestrictions) (*quarry.ExternalAccess, error) {
	chain := []*confluenceContent{p}
	for i := len(p.Ancestors) - 1; i >= 0; i-- {
		chain = append(chain, p.Ancestors[i])
	}
	for i, r := range chain {
		restrictions := r.Restrictions
		if i > 0 && ancestors != nil {
			var err error
			if restrictions, err = c.ancestorRestrictions(ctx, r.ID, ancestors); err != nil {
				return nil, err
			}
		}
		if restrictions == nil {
			continue
		}
		rr := restrictions.Read.Restrictions
		if len(rr.User.Results) == 0 && len(rr.Group.Results) == 0 {
			continue
		}
		a := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}
		for _, u := range rr.User.Results {
			if e := deref(u.Email); e != "" && !slices.Contains(a.ExternalUserEmails, e) {
				a.ExternalUserEmails = append(a.ExternalUserEmails, e)
			}
		}
		for _, g := range rr.Group.Results {
			if g.Name != "" && !slices.Contains(a.ExternalUserGroupIDs, ConfluenceGroupID(g.Name)) {
				a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, ConfluenceGroupID(g.Name))
			}
		}
		return a, nil
	}
	if c.spaces == nil || (strict && c.spacesUnlisted) {
		if err := c.spaceAccess(ctx, strict); err != nil {
			return nil, err
		}
	}
	if c.spacesUnlisted {
		return nil, nil
	}
	if p.Space != nil {
		if a, ok := c.spaces[p.Space.Key]; ok && (a != nil || !strict) {
			return a, nil
		} else if ok {
			a, err := c.spacePermissions(ctx, p.Space.Key)
			if err != nil {
				return nil, err
			}
			c.spaces[p.Space.Key] = a
			return a, nil
		}
	}
	return &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}, nil
}

// ancestorRestrictions returns the read restrictions of the content of
// id as Onyx's fetch_content_read_restrictions reads them
// (content/{id}/restriction/byOperation), nil when Confluence refuses
// them or does not find it (403, 404: a draft another user owns) or id is
// empty, and keeps them in known for the next pages under it.
func (c *Confluence) ancestorRestrictions(ctx context.Context, id string, known map[string]*confluenceRestrictions) (*confluenceRestrictions, error) {
	if id == "" {
		return nil, nil
	}
	if r, ok := known[id]; ok {
		return r, nil
	}
	r := &confluenceRestrictions{}
	err := c.get(ctx, "read the restrictions of content "+id, "rest/api/content/"+url.PathEscape(id)+"/restriction/byOperation", r)
	if confluenceUnreadable(err) {
		r, err = nil, nil
	}
	if err != nil {
		return nil, err
	}
	known[id] = r
	return r, nil
}

// spaceAccess reads the permissions of every space, as Onyx's
// get_all_space_permissions on Cloud (spacePermissions). Unless strict, a
// listing refused (403, 404) leaves the spaces unlisted, and a space whose
// permissions are refused has a nil access (access).
func (c *Confluence) spaceAccess(ctx context.Context, strict bool) error {
	spaces := map[string]*quarry.ExternalAccess{}
	var keys []string
	err := confluenceList(ctx, c, "list the spaces", fmt.Sprintf("rest/api/space?limit=%d", confluenceSlimLimit), func(spaces []struct {
		Key string `json:"key"`
	}) error {
		for _, s := range spaces {
			if s.Key != "" {
				keys = append(keys, s.Key)
			}
		}
		return nil
	})
	if !strict && confluenceUnreadable(err) {
		c.env.Log.Warn("confluence connector: the spaces could not be listed; their pages carry no access until the permission sync", "error", err.Error())
		c.spaces, c.spacesUnlisted = spaces, true
		return nil
	}
	if err != nil {
		return err
	}
	for _, key := range keys {
		a, err := c.spacePermissions(ctx, key)
		if !strict && confluenceUnreadable(err) {
			c.env.Log.Warn("confluence connector: a space's permissions could not be read; its pages carry no access until the permission sync", "space", key, "error", err.Error())
		} else if err != nil {
			return err
		}
		spaces[key] = a
	}
	c.spaces, c.spacesUnlisted = spaces, false
	return nil
}

// spacePermissions reads the access of space key: the users (by email)
// and groups with read, and public when anonymous users may read.
func (c *Confluence) spacePermissions(ctx context.Context, key string) (*quarry.ExternalAccess, error) {
	var sp struct {
		Permissions []struct {
			Operation struct {
				Operation string `json:"operation"`
			} `json:"operation"`
			AnonymousAccess bool `json:"anonymousAccess"`
			Subjects        *struct {
				User struct {
					Results []confluenceUser `json:"results"`
				} `json:"user"`
				Group struct {
					Results []confluenceName `json:"results"`
				} `json:"group"`
			} `json:"subjects"`
		} `json:"permissions"`
	}
	if err := c.get(ctx, "read the permissions of space "+key, "rest/api/space/"+url.PathEscape(key)+"?expand=permissions", &sp); err != nil {
		return nil, err
	}
	a := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}
	for _, p := range sp.Permissions {
		if p.Subjects == nil {
			if p.Operation.Operation == "read" && p.AnonymousAccess {
				a.IsPublic = true
			}
			continue
		}
		if us := p.Subjects.User.Results; len(us) > 0 {
			if e := deref(us[0].Email); e != "" && !slices.Contains(a.ExternalUserEmails, e) {
				a.ExternalUserEmails = append(a.ExternalUserEmails, e)
			}
		}
		if gs := p.Subjects.Group.Results; len(gs) > 0 && gs[0].Name != "" && !slices.Contains(a.ExternalUserGroupIDs, ConfluenceGroupID(gs[0].Name)) {
			a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, ConfluenceGroupID(gs[0].Name))
		}
	}
	return a, nil
}

// Groups lists Confluence's groups with their members' emails, as Onyx's
// confluence_group_sync: every user with an email, the groups of each;
// on Cloud, also the group of all of them (ConfluenceAllUsersGroup).
func (c *Confluence) Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error {
	members := map[string][]string{}
	var names, all []string
	err := confluenceList(ctx, c, "list the users", fmt.Sprintf("rest/api/search/user?cql=type=user&limit=%d", confluenceListLimit), func(users []struct {
		User confluenceUser `json:"user"`
	}) error {
		for _, r := range users {
			email := deref(r.User.Email)
			if email == "" {
				continue // Onyx: a user without an email is skipped.
			}
			all = append(all, email)
			path := fmt.Sprintf("rest/api/user/memberof?accountId=%s&limit=%d", url.QueryEscape(r.User.AccountID), confluenceListLimit)
			if err := confluenceList(ctx, c, "list the groups of a user", path, func(groups []confluenceName) error {
				for _, g := range groups {
					if _, ok := members[g.Name]; !ok {
						names = append(names, g.Name)
					}
					if !slices.Contains(members[g.Name], email) {
						members[g.Name] = append(members[g.Name], email)
					}
				}
				return nil
			}); err != nil {
				return err
			}
		}
		return nil
	})
	if err != nil {
		return err
	}
	for _, n := range names {
		if err := group(ctx, &quarry.ExternalGroup{ID: ConfluenceGroupID(n), UserEmails: members[n]}); err != nil {
			return err
		}
	}
	if c.cloud {
		if all == nil {
			all = []string{}
		}
		return group(ctx, &quarry.ExternalGroup{ID: ConfluenceGroupID(ConfluenceAllUsersGroup), UserEmails: all})
	}
	return nil
}

// userName is the display name of the user of id (an account id on
// Cloud, a user key on Data Center), once a run: Onyx's _get_user.
func (c *Confluence) userName(ctx context.Context, id string) (string, error) {
	if n, ok := c.users[id]; ok {
		return n, nil
	}
	field := "key"
	if c.cloud {
		field = "accountId"
	}
	var u confluenceUser
	name := confluenceUnknownUser
	err := c.get(ctx, "read a user", "rest/api/user?"+field+"="+url.QueryEscape(id), &u)
	var ce *CredentialError
	switch {
	case errors.As(err, &ce) || ctx.Err() != nil:
		return "", cmp.Or(ctx.Err(), err)
	case err == nil && deref(u.DisplayName) != "":
		name = *u.DisplayName
	}
	c.users[id] = name
	return name, nil
}

// text is Onyx's extract_text_from_confluence_html of content p: its
// storage format (or view) with users named, link bodies and attachments
// written out, made text by format_document_soup.
func (c *Confluence) text(ctx context.Context, p *confluenceContent) (string, error) {
	src := ""
	if p.Body != nil {
		if p.Body.Storage != nil {
			src = p.Body.Storage.Value
		} else if p.Body.View != nil {
			src = p.Body.View.Value
		}
	}
	ctxNode := &html.Node{Type: html.ElementNode, Data: "body", DataAtom: atom.Body}
	nodes, err := html.ParseFragment(strings.NewReader(src), ctxNode)
	if err != nil {
		return "", err
	}
	root := &html.Node{Type: html.DocumentNode}
	for _, n := range nodes {
		root.AppendChild(n)
	}
	var replace []*html.Node
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		switch n.Data {
		case "ac:structured-macro":
			if m := findElement(n, func(e *html.Node) bool { v, _ := attr(e, "ac:name"); return e.Data == "ac:parameter" && v == "page" }); m != nil {
				m.Parent.RemoveChild(m)
			}
		case "ri:user", "ac:link-body", "ri:attachment":
			replace = append(replace, n)
			return
		}
		for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
			walk(ch)
		}
	}
	walk(root)
	for _, n := range replace {
		var t string
		switch n.Data {
		case "ri:user":
			id, ok := attr(n, "ri:account-id")
			if !ok {
				id, _ = attr(n, "ri:userkey")
			}
			if id == "" {
				continue
			}
			name, err := c.userName(ctx, id)
			if err != nil {
				return "", err
			}
			t = "@" + name
		case "ac:link-body":
			t = "(LINK TEXT: " + innerText(n) + ")"
		case "ri:attachment":
			f, _ := attr(n, "ri:filename")
			t = "<attachment>" + strings.NewReplacer("<", "_", ">", "_", " ", "_", ":", "_").Replace(f) + "</attachment>"
		}
		n.Parent.InsertBefore(&html.Node{Type: html.TextNode, Data: t}, n)
		n.Parent.RemoveChild(n)
	}
	return formatDocumentSoup(root), nil
}

// findElement is the first element under n (n excluded) that ok takes.
func findElement(n *html.Node, ok func(*html.Node) bool) *html.Node {
	for ch := n.FirstChild; ch != nil; ch = ch.NextSibling {
		if ch.Type == html.ElementNode && ok(ch) {
			return ch
		}
		if f := findElement(ch, ok); f != nil {
			return f
		}
	}
	return nil
}

var (
	soupSpaces   = regexp.MustCompile(` +`)
	soupTrailing = regexp.MustCompile(` +[\n\r]`)
	soupNewlines = regexp.MustCompile(`[\n\r]+`)
)

// formatDocumentSoup is Onyx's format_document_soup
// (onyx/file_processing/html_utils.py), links stripped as its default
// HTML_BASED_CONNECTOR_TRANSFORM_LINKS_STRATEGY does: the text of a tree
// with a line break around paragraphs, headings and breaks, list items on
// lines of their own after "- ", table rows on lines and cells after tabs,
// <pre> verbatim; then strip_excessive_newlines_and_spaces.
func formatDocumentSoup(root *html.Node) string {
	var b strings.Builder
	listStart, lastNewline, verbatim := false, false, 0
	inTable := func(n *html.Node) bool {
		for p := n.Parent; p != nil; p = p.Parent {
			if p.Type == html.ElementNode && p.Data == "table" {
				return true
			}
		}
		return false
	}
	var walk func(n *html.Node)
	walk = func(n *html.Node) {
		for e := n.FirstChild; e != nil; e = e.NextSibling {
			verbatim--
			switch e.Type {
			case html.TextNode:
				t := e.Data
				table := inTable(e)
				if table {
					t = strings.TrimSpace(strings.ReplaceAll(t, "\n", " "))
				}
				if lastNewline && strings.HasPrefix(t, " ") {
					t, lastNewline = t[1:], false
				}
				if t != "" {
					if verbatim <= 0 {
						t = soupNewlines.ReplaceAllString(t, " ")
					}
					s := b.String()
					if s != "" && !isSpace(s[len(s)-1]) && !isSpace(t[0]) {
						b.WriteByte(' ')
					}
					b.WriteString(t)
					listStart = false
				}
			case html.ElementNode:
				table := inTable(e)
				switch {
				case e.Data == "tr" && table:
					b.WriteByte('\n')
				case (e.Data == "td" || e.Data == "th") && table:
					b.WriteByte('\t')
				case table:
				case e.Data == "p" || e.Data == "div":
					if !listStart {
						b.WriteByte('\n')
					}
				case e.Data == "h1" || e.Data == "h2" || e.Data == "h3" || e.Data == "h4" || e.Data == "br":
					b.WriteByte('\n')
					listStart, lastNewline = false, true
				case e.Data == "li":
					b.WriteString("\n- ")
					listStart = true
				case e.Data == "pre":
					if verbatim <= 0 {
						verbatim = 0
						for ch := e.FirstChild; ch != nil; ch = ch.NextSibling {
							verbatim++
						}
					}
				}
				walk(e)
			}
		}
	}
	walk(root)
	s := soupSpaces.ReplaceAllString(b.String(), " ")
	s = soupTrailing.ReplaceAllString(s, "\n")
	s = soupNewlines.ReplaceAllString(s, "\n")
	return strings.TrimSpace(s)
}

// isSpace is Python's str.isspace of an ASCII byte.
func isSpace(c byte) bool {
	return c == ' ' || c == '\n' || c == '\t' || c == '\r' || c == '\f' || c == '\v'
}

// The limits of attachments, Onyx's: a larger file is not downloaded
// (CONFLUENCE_CONNECTOR_ATTACHMENT_SIZE_THRESHOLD), a longer text not
// indexed (CONFLUENCE_CONNECTOR_ATTACHMENT_CHAR_COUNT_THRESHOLD).
const (
	confluenceAttachmentMaxBytes = 10 << 20
	confluenceAttachmentMaxChars = 200_000
)

// eachAttachment calls f with each attachment of page p (within the
// window start to end) that a run indexes, as Onyx admits them: not an
// image (Onyx's allow_images is off), and a file whose kind Quarry reads
// (quarry.FileKind); none when include_attachments is off.
func (c *Confluence) eachAttachment(ctx context.Context, p *confluenceContent, start, end *time.Time, expand string, f func(a *confluenceContent) error) error {
	if !c.attach {
		return nil
	}
	cql := "type=attachment and container='" + p.ID + "'" + c.labels + c.window(start, end) + " order by lastmodified asc"
	return confluenceList(ctx, c, "search the attachments of page "+p.ID, searchPath(cql, expand, confluenceListLimit), func(attachments []*confluenceContent) error {
		for _, a := range attachments {
			media := ""
			if a.Metadata != nil {
				media = a.Metadata.MediaType
			}
			if a.Extensions != nil && media == "" {
				media = a.Extensions.MediaType
			}
			if strings.HasPrefix(media, "image/") || strings.HasPrefix(media, "video/") || media == "application/gliffy+json" || quarry.FileKind(a.Title) == "" {
				continue
			}
			if err := f(a); err != nil {
				return err
			}
		}
		return nil
	})
}

// attachments emits a document for each attachment of page p, whose
// document is d: Onyx's _fetch_page_attachments. An attachment that
// cannot be read is an error of that attachment; a listing Confluence
// refuses (400, 401, 403), an error of the page, as Onyx's.
func (c *Confluence) attachments(ctx context.Context, p *confluenceContent, d *quarry.Document, start, end *time.Time, out Emitter) error {
	err := c.eachAttachment(ctx, p, start, end, confluenceAttachmentExpand, func(a *confluenceContent) error {
		ad, err := c.attachment(ctx, p, d, a)
		if err == nil {
			return out.Document(ctx, ad)
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		var ce *CredentialError
		if errors.As(err, &ce) {
			return err
		}
		link := c.docID(a.Links.WebUI)
		return out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: link, DocumentLink: &link},
			FailureMessage: fmt.Sprintf("Failed to extract/summarize attachment %s for doc %s: %v", a.Title, d.ID, err)})
	})
	if err == nil || ctx.Err() != nil {
		return err
	}
	link := d.ID
	return out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: d.ID, DocumentLink: &link},
		FailureMessage: fmt.Sprintf("The attachments of page '%s' (ID: %s) were not read: %v", p.Title, p.ID, err)})
}

// attachment is the document of attachment a of page p (whose document
// is d), as Onyx makes it: its text, its address as id, a link to its
// download, its title, space, labels and page, its page's access. An
// attachment over Onyx's limits is an error of it.
func (c *Confluence) attachment(ctx context.Context, p *confluenceContent, d *quarry.Document, a *confluenceContent) (*quarry.Document, error) {
	if a.Extensions != nil && a.Extensions.FileSize > confluenceAttachmentMaxBytes {
		return nil, fmt.Errorf("it is larger than %s", ByteSize(confluenceAttachmentMaxBytes))
	}
	download, object := a.Links.Download, a.Links.Download
	if c.cloud {
		download = "rest/api/content/" + url.PathEscape(p.ID) + "/child/attachment/" + url.PathEscape(a.ID) + "/download"
		object = "/download/attachments/" + p.ID + "/" + pyQuote(a.Title)
	}
	body, err := c.read(ctx, "download attachment "+a.ID, download)
	if err != nil {
		return nil, err
	}
	text, err := ExtractText(c.env.PDF, quarry.FileKind(a.Title), strings.NewReader(string(body)), quarry.MaxDocumentBytes)
	if err != nil {
		return nil, err
	}
	if n := len([]rune(text)); n > confluenceAttachmentMaxChars {
		return nil, fmt.Errorf("its text is too long: %d characters", n)
	}
	link := c.docID(object)
	ad := &quarry.Document{ID: c.docID(a.Links.WebUI), Sections: []quarry.Section{{Text: text, Link: &link}}, Source: ConfluenceSource,
		SemanticIdentifier: cmp.Or(a.Title, link), Metadata: map[string]any{}, ExternalAccess: d.ExternalAccess}
	if a.Space != nil {
		ad.Metadata["space"] = a.Space.Name
	}
	if a.Metadata != nil && a.Metadata.Labels != nil && len(a.Metadata.Labels.Results) > 0 {
		labels := []string{}
		for _, l := range a.Metadata.Labels.Results {
			labels = append(labels, l.Name)
		}
		ad.Metadata["labels"] = labels
	}
	ad.Metadata["parent_page_id"] = d.ID
	if a.Version != nil {
		if by := a.Version.By; by != nil {
			o, _ := json.Marshal(imapOwner{DisplayName: cmp.Or(deref(by.DisplayName), "Unknown"), Email: cmp.Or(deref(by.Email), "unknown@domain.invalid")})
			ad.PrimaryOwners = []json.RawMessage{o}
		}
		if t, err := time.Parse(time.RFC3339, a.Version.When); err == nil {
			ad.DocUpdatedAt = &quarry.Time{Time: t.UTC()}
		}
	}
	return ad, nil
}
