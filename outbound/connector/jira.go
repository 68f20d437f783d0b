package connector

import (
	"bytes"
	"cmp"
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
	"time"

	"github.com/quarryhq/quarry"
)

// JiraSource is the source of the Jira connector.
const JiraSource quarry.DocumentSource = "jira"

// JiraScopedAPI is where Atlassian serves the API to scoped API tokens
// (https://api.atlassian.com/ex/jira/{cloudId}/…), unless
// QUARRY_CONNECTOR_ENDPOINTS points jira elsewhere.
const JiraScopedAPI = "https://api.atlassian.com/"

// Limits of the Jira connector.
const (
	jiraTimeout = 60 * time.Second // Each request.
	// jiraIDsPage is the ids a search page asks for. Onyx asks 5000
	// (_MAX_RESULTS_FETCH_IDS); Quarry asks 1000, so that the ids a
	// checkpoint keeps fit it (quarry.MaxCheckpointBytes).
	jiraIDsPage       = 1000
	jiraFullPage      = 50        // Issues a step reads: Onyx's _JIRA_FULL_PAGE_SIZE.
	jiraBulkLimit     = 100       // Issues a bulk fetch asks for: Onyx's _JIRA_BULK_FETCH_LIMIT, Jira's most.
	jiraSlimPage      = 500       // Issues a slim batch has: Onyx's JIRA_SLIM_PAGE_SIZE.
	jiraMemberPage    = 50        // Members a page asks for: Onyx's _GROUP_MEMBER_PAGE_SIZE.
	jiraMaxTicketSize = 100 << 10 // Bytes of an issue's text: Onyx's JIRA_CONNECTOR_MAX_TICKET_SIZE.
	jiraMaxRetries    = 5         // Rate limits waited out in a row.
	jiraMaxWait       = 10 * time.Minute
	jiraDefaultWait   = 10 * time.Second // A 429 without Retry-After.
	jiraAnswerMaxLen  = 32 << 20         // Bytes of one answer.
	jiraMaxPages      = 100000           // Pages of one listing.
)

// Jira is Onyx's Jira connector (backend/onyx/connectors/jira/ at
// v4.6.1) over Jira's REST API in plain HTTP: the issues of a project
// (project_key), of a JQL query (jql_query) or all the account may
// browse, each a document whose id and link are its browse URL
// ({jira_base_url}/browse/KEY-1), titled "KEY-1: summary", its text its
// description (Atlassian Document Format rendered to its text nodes, as
// Onyx does) and its comments, with Onyx's metadata.
//
// Jira Cloud (a credential with jira_user_email: basic authentication
// with the API token) is read as Onyx reads it, checkpointed: a step
// lists a page of the window's issue ids with the enhanced search (GET
// search/jql, nextPageToken) when it has none left, then reads 50 of them
// with issue/bulkfetch. Jira Data Center (a personal access token alone)
// is read with the v2 search, 50 issues a step by startAt. The window is
// in the JQL, as epoch milliseconds: "updated >= START AND updated <=
// END". For a sync pair, each document carries its project's access as
// Onyx's EE page_access decides it (the BROWSE_PROJECTS holders of the
// project's permission scheme); the connector is a GroupSyncer (Jira's
// groups with their members' emails) and a PermissionSyncer, and its
// Slim listing lists every issue for pruning. Rate limits (429, with
// Retry-After) are waited out; a refused credential is a
// *CredentialError.
type Jira struct {
	cfg   jiraConfig
	cred  jiraCredential
	base  string // The site, jira_base_url without its trailing slash: the documents' links.
	api   string // Where the REST API is: base, or the scoped token's.
	cloud bool
	env   *Env
	// Read once a run.
	access map[string]*quarry.ExternalAccess // By project key; nil: unknown.
	users  map[string]*jiraUser              // By account id or name.
}

// jiraConfig is the connector_specific_config of the Jira connector:
// Onyx's keys (JiraConnector.__init__).
type jiraConfig struct {
	BaseURL               string   `json:"jira_base_url"`
	ProjectKey            *string  `json:"project_key"`
	CommentEmailBlacklist []string `json:"comment_email_blacklist"`
	LabelsToSkip          []string `json:"labels_to_skip"`
	JQLQuery              *string  `json:"jql_query"`
	ScopedToken           bool     `json:"scoped_token"`
}

// jiraCredential is the credential_json of the Jira connector: Onyx's
// keys. With an email, Jira Cloud; without, Data Center's personal
// access token.
type jiraCredential struct {
	Email *string `json:"jira_user_email"`
	Token string  `json:"jira_api_token"`
}

// NewJira is the Constructor of the jira source's connector.
func NewJira(config, credential json.RawMessage, env *Env) (Connector, error) {
	j, err := newJira(config, credential, env)
	if err != nil {
		return nil, err
	}
	return j, nil
}

func newJira(config, credential json.RawMessage, env *Env) (*Jira, error) {
	var c jiraConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with jira_base_url, project_key, jql_query and comment_email_blacklist: %w", err)
	}
	base := strings.TrimRight(strings.TrimSpace(c.BaseURL), "/")
	u, err := url.Parse(base)
	if err != nil || (u.Scheme != "http" && u.Scheme != "https") || u.Host == "" || u.User != nil || u.RawQuery != "" || u.Fragment != "" {
		return nil, fmt.Errorf("jira_base_url must be the http(s) URL of a Jira site, e.g. https://your-domain.atlassian.net, not %q", c.BaseURL)
	}
	for _, s := range []**string{&c.ProjectKey, &c.JQLQuery} {
		if *s != nil && strings.TrimSpace(**s) == "" {
			*s = nil
		}
	}
	if c.ProjectKey != nil && strings.ContainsAny(*c.ProjectKey, `"\`) {
		return nil, fmt.Errorf("project_key %q is not a Jira project key", *c.ProjectKey)
	}
	var cred jiraCredential
	if err := json.Unmarshal(credential, &cred); err != nil || strings.TrimSpace(cred.Token) == "" {
		return nil, errors.New("the credential has no jira_api_token")
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the Jira connector needs the egress guard's HTTP client")
	}
	env = env.withDefaults()
	cloud := cred.Email != nil && strings.TrimSpace(*cred.Email) != "" // Onyx's form leaves it null for Data Center.
	return &Jira{cfg: c, cred: cred, base: base, api: base, cloud: cloud, env: env,
		access: map[string]*quarry.ExternalAccess{}, users: map[string]*jiraUser{}}, nil
}

// ---- Calls, rate limits and errors.

// version is the REST API's version: 3 for Cloud, 2 for Data Center, as
// Onyx's JIRA_CLOUD_API_VERSION and JIRA_SERVER_API_VERSION.
func (j *Jira) version() string {
	if j.cloud {
		return "3"
	}
	return "2"
}

// apiBase is the REST API's base: the site's, or for a scoped token
// Atlassian's gateway with the site's cloud id (read from the site's
// /_edge/tenant_info, as Onyx's scoped_url).
func (j *Jira) apiBase(ctx context.Context) (string, error) {
	if !j.cfg.ScopedToken || j.api != j.base {
		return j.api, nil
	}
	var info struct {
		CloudID string `json:"cloudId"`
	}
	if err := j.call(ctx, "read the site's cloud id", "GET", j.base+"/_edge/tenant_info", nil, &info); err != nil {
		return "", err
	}
	if info.CloudID == "" || strings.ContainsAny(info.CloudID, "/?#") {
		return "", fmt.Errorf("the Jira site %s told no cloud id", j.base)
	}
	u, _ := url.Parse(j.base)
	j.api = j.env.Endpoint(JiraSource, JiraScopedAPI) + "ex/jira/" + info.CloudID + u.Path
	return j.api, nil
}

// rest calls path of the REST API (e.g. "search/jql") with query and, for
// a POST, body; it decodes the answer into out.
func (j *Jira) rest(ctx context.Context, what, method, path string, query url.Values, body, out any) error {
	base, err := j.apiBase(ctx)
	if err != nil {
		return err
	}
	u := base + "/rest/api/" + j.version() + "/" + path
	if len(query) > 0 {
		u += "?" + query.Encode()
	}
	return j.call(ctx, what, method, u, body, out)
}

// call makes one request (what says which, for errors), waiting out rate
// limits (up to jiraMaxRetries in a row), and decodes the answer into out.
func (j *Jira) call(ctx context.Context, what, method, u string, body, out any) error {
	var payload []byte
	if body != nil {
		var err error
		if payload, err = json.Marshal(body); err != nil {
			return err
		}
	}
	for attempt := 0; ; attempt++ {
		status, header, answer, err := j.once(ctx, method, u, payload)
		if err != nil {
			if ctx.Err() != nil {
				return ctx.Err()
			}
			return fmt.Errorf("Jira at %s (%s): %w", j.api, what, err)
		}
		if status >= 200 && status < 300 {
			if out == nil {
				return nil
			}
			if err := json.Unmarshal(answer, out); err != nil {
				return fmt.Errorf("Jira at %s (%s): an answer that is not the JSON expected: %w", j.api, what, err)
			}
			return nil
		}
		msg := jiraMessage(answer)
		line := fmt.Sprintf("Jira at %s answered %d %s (%s): %s", j.api, status, http.StatusText(status), what, msg)
		switch status {
		case http.StatusUnauthorized:
			return &CredentialError{Reason: line}
		case http.StatusTooManyRequests:
		default:
			return &jiraStatusError{status: status, text: msg, msg: line}
		}
		wait, ok := retryAfter(header)
		if !ok {
			wait = jiraDefaultWait
		}
		if attempt >= jiraMaxRetries {
			return fmt.Errorf("Jira at %s was still rate-limited after %d waits (%s): %s", j.api, jiraMaxRetries, what, msg)
		}
		if wait > jiraMaxWait {
			return fmt.Errorf("Jira at %s is rate-limited for %s, more than the connector waits (%s): %s", j.api, wait, what, msg)
		}
		j.env.Log.Info("jira connector: rate-limited; waiting", "wait", wait.String(), "request", what)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// once makes one request and reads its answer, bounded.
func (j *Jira) once(ctx context.Context, method, u string, payload []byte) (int, http.Header, []byte, error) {
	ctx, cancel := context.WithTimeout(ctx, jiraTimeout)
	defer cancel()
	var rd io.Reader
	if payload != nil {
		rd = bytes.NewReader(payload)
	}
	req, err := http.NewRequestWithContext(ctx, method, u, rd)
	if err != nil {
		return 0, nil, nil, err
	}
	req.Header.Set("Accept", "application/json")
	if payload != nil {
		req.Header.Set("Content-Type", "application/json")
	}
	if j.cloud {
		req.SetBasicAuth(strings.TrimSpace(*j.cred.Email), strings.TrimSpace(j.cred.Token))
	} else {
		req.Header.Set("Authorization", "Bearer "+strings.TrimSpace(j.cred.Token))
	}
	resp, err := j.env.HTTP.Do(req)
	if err != nil {
		var ue *url.Error
		if errors.As(err, &ue) {
			err = ue.Err
		}
		return 0, nil, nil, err
	}
	defer resp.Body.Close()
	tooLarge := &limitError{what: "an answer of Jira's API", limit: jiraAnswerMaxLen}
	b, err := io.ReadAll(newBoundedReader(resp.Body, jiraAnswerMaxLen, tooLarge))
	if err != nil {
		return 0, nil, nil, err
	}
	return resp.StatusCode, resp.Header, b, nil
}

// jiraMessage is what Jira said in an error's body: its errorMessages
// (and errors) joined by "; ", or the body's text, clipped.
func jiraMessage(body []byte) string {
	var e struct {
		ErrorMessages []string          `json:"errorMessages"`
		Errors        map[string]string `json:"errors"`
		Message       string            `json:"message"`
	}
	if json.Unmarshal(body, &e) == nil {
		msgs := slices.Clone(e.ErrorMessages)
		for _, k := range slices.Sorted(maps.Keys(e.Errors)) {
			msgs = append(msgs, k+": "+e.Errors[k])
		}
		if e.Message != "" {
			msgs = append(msgs, e.Message)
		}
		if len(msgs) > 0 {
			return strings.Join(msgs, "; ")
		}
	}
	if s := strings.TrimSpace(string(body)); s != "" {
		return quarry.ClipText(s, 300)
	}
	return "(no message)"
}

// jiraStatusError is the error of an answer with an error status other
// than 401 and 429.
type jiraStatusError struct {
	status int
	text   string // What Jira said.
	msg    string
}

func (e *jiraStatusError) Error() string { return e.msg }

// jiraStatus is the status of err's answer and what Jira said, or 0.
func jiraStatus(err error) (int, string) {
	var se *jiraStatusError
	if errors.As(err, &se) {
		return se.status, se.text
	}
	return 0, ""
}

// ---- Issues.

// jiraUser is a user as Jira's API writes one.
type jiraUser struct {
	AccountID   string  `json:"accountId"`
	Name        string  `json:"name"` // Data Center's.
	Key         string  `json:"key"`  // Data Center's.
	DisplayName string  `json:"displayName"`
	Email       string  `json:"emailAddress"`
	AccountType *string `json:"accountType"`
}

// jiraNamed is a field that has a name (status, priority…).
type jiraNamed struct {
	Name string `json:"name"`
}

// jiraIssue is an issue as search and bulkfetch write one.
type jiraIssue struct {
	ID     string `json:"id"`
	Key    string `json:"key"`
	Fields struct {
		Summary     string          `json:"summary"`
		Description json.RawMessage `json:"description"`
		Comment     *struct {
			Comments []struct {
				Body   json.RawMessage `json:"body"`
				Author *jiraUser       `json:"author"`
			} `json:"comments"`
		} `json:"comment"`
		Reporter       *jiraUser  `json:"reporter"`
		Assignee       *jiraUser  `json:"assignee"`
		Priority       *jiraNamed `json:"priority"`
		Status         *jiraNamed `json:"status"`
		Resolution     *jiraNamed `json:"resolution"`
		IssueType      *jiraNamed `json:"issuetype"`
		Labels         []string   `json:"labels"`
		Created        string     `json:"created"`
		Updated        string     `json:"updated"`
		DueDate        string     `json:"duedate"`
		ResolutionDate string     `json:"resolutiondate"`
		Parent         *struct {
			Key string `json:"key"`
		} `json:"parent"`
		Project *struct {
			Key  string `json:"key"`
			Name string `json:"name"`
		} `json:"project"`
	} `json:"fields"`
}

// JiraTime reads a time as Jira writes it ("2024-03-01T09:00:00.000+0000").
func JiraTime(s string) (time.Time, error) {
	for _, layout := range []string{"2006-01-02T15:04:05.000-0700", "2006-01-02T15:04:05-0700", time.RFC3339Nano} {
		if t, err := time.Parse(layout, s); err == nil {
			return t.UTC(), nil
		}
	}
	return time.Time{}, fmt.Errorf("%q is not a time as Jira writes them", s)
}

// jiraRichText is a description's or comment's text: a string as it is
// (Data Center's wiki markup), or Atlassian Document Format rendered as
// Onyx's extract_text_from_adf does (its text nodes, joined by spaces).
func jiraRichText(raw json.RawMessage) string {
	var s string
	if json.Unmarshal(raw, &s) == nil {
		return s
	}
	var node any
	if json.Unmarshal(raw, &node) != nil {
		return ""
	}
	var texts []string
	var walk func(n any)
	walk = func(n any) {
		m, ok := n.(map[string]any)
		if !ok {
			return
		}
		if m["type"] == "text" {
			if t, _ := m["text"].(string); t != "" {
				texts = append(texts, t)
			}
		}
		if cs, ok := m["content"].([]any); ok {
			for _, c := range cs {
				walk(c)
			}
		}
	}
	walk(node)
	return strings.Join(texts, " ")
}

// jiraOwner is Onyx's BasicExpertInfo of a user, as JSON, and its
// semantic name; ok false when it has neither name nor email.
func jiraOwner(u *jiraUser) (owner json.RawMessage, name string, ok bool) {
	if u == nil || (u.DisplayName == "" && u.Email == "") {
		return nil, "", false
	}
	var display, email *string
	if u.DisplayName != "" {
		display = &u.DisplayName
	}
	if u.Email != "" {
		email = &u.Email
	}
	b, _ := json.Marshal(map[string]*string{"display_name": display, "first_name": nil, "middle_initial": nil, "last_name": nil, "email": email})
	if display != nil {
		return b, *display, true
	}
	return b, *email, true
}

// document is Onyx's process_jira_issue: nil when the issue has a label
// to skip or its text is larger than Onyx indexes.
func (j *Jira) document(is *jiraIssue, access *quarry.ExternalAccess) (*quarry.Document, error) {
	f := &is.Fields
	for _, l := range j.cfg.LabelsToSkip {
		if slices.Contains(f.Labels, l) {
			j.env.Log.Info("jira connector: an issue with a label to skip is skipped", "issue", is.Key, "label", l)
			return nil, nil
		}
	}
	var b strings.Builder
	b.WriteString(jiraRichText(f.Description))
	b.WriteString("\n")
	var comments []string
	if f.Comment != nil {
		for _, c := range f.Comment.Comments {
			if c.Author != nil && c.Author.Email != "" && slices.ContainsFunc(j.cfg.CommentEmailBlacklist, func(e string) bool { return strings.TrimSpace(e) == c.Author.Email }) {
				continue
			}
			if t := jiraRichText(c.Body); t != "" {
				comments = append(comments, "Comment: "+t)
			}
		}
	}
	b.WriteString(strings.Join(comments, "\n"))
	text := b.String()
	if len(text) > jiraMaxTicketSize {
		j.env.Log.Info("jira connector: an issue larger than the connector indexes is skipped", "issue", is.Key, "bytes", len(text))
		return nil, nil
	}
	md := map[string]any{"key": is.Key}
	var owners []json.RawMessage
	for _, p := range []struct {
		key string
		u   *jiraUser
	}{{"reporter", f.Reporter}, {"assignee", f.Assignee}} {
		owner, name, ok := jiraOwner(p.u)
		if !ok {
			continue
		}
		if !slices.ContainsFunc(owners, func(o json.RawMessage) bool { return bytes.Equal(o, owner) }) {
			owners = append(owners, owner)
		}
		md[p.key] = name
		if p.u.Email != "" {
			md[p.key+"_email"] = p.u.Email
		}
	}
	for k, n := range map[string]*jiraNamed{"priority": f.Priority, "status": f.Status, "resolution": f.Resolution, "issuetype": f.IssueType} {
		if n != nil && n.Name != "" {
			md[k] = n.Name
		}
	}
	if len(f.Labels) > 0 {
		md["labels"] = slices.Clone(f.Labels)
	}
	for k, v := range map[string]string{"created": f.Created, "updated": f.Updated, "duedate": f.DueDate, "resolution_date": f.ResolutionDate} {
		if v != "" {
			md[k] = v
		}
	}
	if f.Parent != nil {
		md["parent"] = f.Parent.Key
	}
	if f.Project != nil {
		md["project_name"] = f.Project.Name
		md["project"] = f.Project.Key
	}
	updated, err := JiraTime(f.Updated)
	if err != nil {
		return nil, fmt.Errorf("its updated time: %w", err)
	}
	link := j.base + "/browse/" + is.Key
	title := is.Key + " " + f.Summary
	return &quarry.Document{
		ID:                 link,
		Sections:           []quarry.Section{{Text: text, Link: &link}},
		Source:             JiraSource,
		SemanticIdentifier: is.Key + ": " + f.Summary,
		Title:              &title,
		Metadata:           md,
		DocUpdatedAt:       &quarry.Time{Time: updated},
		PrimaryOwners:      owners,
		ExternalAccess:     access,
	}, nil
}

// ---- Runs.

// jqlQuery is Onyx's _get_jql_query: the configured project or query,
// and the window as epoch milliseconds.
func (j *Jira) jqlQuery(start, end time.Time) string {
	window := fmt.Sprintf("updated >= %d AND updated <= %d", start.UnixMilli(), end.UnixMilli())
	switch {
	case j.cfg.JQLQuery != nil:
		return "(" + *j.cfg.JQLQuery + ") AND " + window
	case j.cfg.ProjectKey != nil:
		return `project = "` + *j.cfg.ProjectKey + `" AND ` + window
	}
	return window
}

// jiraCheckpoint is Onyx's JiraConnectorCheckpoint.
type jiraCheckpoint struct {
	HasMore bool `json:"has_more"`
	// Cloud: the ids listed and not yet read, in batches (the last read
	// first), whether the listing is done, and its next page's token.
	AllIssueIDs [][]string `json:"all_issue_ids"`
	IDsDone     bool       `json:"ids_done"`
	Cursor      *string    `json:"cursor"`
	// Data Center: the issues read.
	Offset               *int     `json:"offset"`
	SeenHierarchyNodeIDs []string `json:"seen_hierarchy_node_ids"`
}

// FirstCheckpoint is Onyx's build_dummy_checkpoint.
func (j *Jira) FirstCheckpoint() json.RawMessage {
	b, _ := json.Marshal(jiraCheckpoint{HasMore: true, AllIssueIDs: [][]string{}, SeenHierarchyNodeIDs: []string{}})
	return b
}

// Step reads the next issues of the window w from the checkpoint raw,
// emitting their documents with their project's access.
func (j *Jira) Step(ctx context.Context, w Window, raw json.RawMessage, out Emitter) (json.RawMessage, error) {
	var cp jiraCheckpoint
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("the Jira connector's checkpoint: %w", err)
	}
	before := cp
	before.AllIssueIDs = slices.Clone(cp.AllIssueIDs)
	issues, err := j.page(ctx, j.jqlQuery(w.Start, w.End), &cp, jiraFullPage)
	if status, text := jiraStatus(err); status == http.StatusBadRequest && strings.Contains(text, "field 'updated' is invalid") {
		// Onyx's is_atlassian_date_error: the window again, an hour earlier.
		cp = before
		issues, err = j.page(ctx, j.jqlQuery(w.Start.Add(-time.Hour), w.End), &cp, jiraFullPage)
	}
	if err != nil {
		return nil, err
	}
	for _, is := range issues {
		var access *quarry.ExternalAccess
		if is.Fields.Project != nil {
			if access, err = j.projectAccess(ctx, is.Fields.Project.Key, false); err != nil {
				return nil, err
			}
		}
		d, err := j.document(is, access)
		if err != nil {
			link := j.base + "/browse/" + is.Key
			if err := out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: is.Key, DocumentLink: &link},
				FailureMessage: "Failed to process Jira issue: " + err.Error()}); err != nil {
				return nil, err
			}
			continue
		}
		if d != nil {
			if err := out.Document(ctx, d); err != nil {
				return nil, err
			}
		}
	}
	return json.Marshal(cp)
}

// page moves cp on by one page of jql's issues (at most size) and returns
// them: Onyx's _perform_jql_search. On Cloud, it lists the next page of
// ids when none is left to read, then reads the last batch of ids; on
// Data Center, it reads the page at cp's offset.
func (j *Jira) page(ctx context.Context, jql string, cp *jiraCheckpoint, size int) ([]*jiraIssue, error) {
	if !j.cloud {
		offset := 0
		if cp.Offset != nil {
			offset = *cp.Offset
		}
		var res struct {
			Issues []*jiraIssue `json:"issues"`
			Total  int          `json:"total"`
		}
		q := url.Values{"jql": {jql}, "startAt": {strconv.Itoa(offset)}, "maxResults": {strconv.Itoa(size)}, "fields": {"*all"}}
		if err := j.rest(ctx, "search issues", "GET", "search", q, nil, &res); err != nil {
			return nil, j.searchError(err, jql)
		}
		offset += len(res.Issues)
		cp.Offset = &offset
		cp.HasMore = len(res.Issues) > 0 && offset < res.Total
		return res.Issues, nil
	}
	if len(cp.AllIssueIDs) == 0 && !cp.IDsDone {
		q := url.Values{"jql": {jql}, "maxResults": {strconv.Itoa(jiraIDsPage)}, "fields": {"id"}}
		if cp.Cursor != nil {
			q.Set("nextPageToken", *cp.Cursor)
		}
		var res struct {
			Issues []struct {
				ID string `json:"id"`
			} `json:"issues"`
			NextPageToken *string `json:"nextPageToken"`
		}
		if err := j.rest(ctx, "search issue ids", "GET", "search/jql", q, nil, &res); err != nil {
			return nil, j.searchError(err, jql)
		}
		ids := make([]string, len(res.Issues))
		for i, is := range res.Issues {
			ids[i] = is.ID
		}
		for b := range slices.Chunk(ids, size) {
			cp.AllIssueIDs = append(cp.AllIssueIDs, b)
		}
		cp.Cursor = res.NextPageToken
		cp.IDsDone = res.NextPageToken == nil || *res.NextPageToken == ""
	}
	var issues []*jiraIssue
	if n := len(cp.AllIssueIDs); n > 0 {
		batch := cp.AllIssueIDs[n-1]
		cp.AllIssueIDs = cp.AllIssueIDs[:n-1]
		for ids := range slices.Chunk(batch, jiraBulkLimit) {
			var res struct {
				Issues []*jiraIssue `json:"issues"`
			}
			body := map[string]any{"issueIdsOrKeys": ids, "fields": []string{"*all"}}
			if err := j.rest(ctx, "bulk fetch issues", "POST", "issue/bulkfetch", nil, body, &res); err != nil {
				return nil, err
			}
			issues = append(issues, res.Issues...)
		}
	}
	cp.HasMore = len(cp.AllIssueIDs) > 0 || !cp.IDsDone
	return issues, nil
}

// searchError is Onyx's _handle_jira_search_error: a refused JQL or
// project named as such; a 403 the credential's refusal.
func (j *Jira) searchError(err error, jql string) error {
	status, text := jiraStatus(err)
	switch status {
	case http.StatusBadRequest:
		if strings.Contains(text, "does not exist for the field 'project'") {
			return fmt.Errorf("the specified Jira project does not exist or you don't have access to it. JQL query: %s. %w", jql, err)
		}
		return fmt.Errorf("invalid JQL query. JQL: %s. %w", jql, err)
	case http.StatusForbidden:
		return &CredentialError{Reason: "insufficient permissions to execute the JQL query: " + err.Error()}
	}
	return err
}

// each calls issue with each issue of every window (Onyx's slim listing:
// from the epoch to a day from now), in batches of jiraSlimPage.
func (j *Jira) each(ctx context.Context, batch func(ctx context.Context, issues []*jiraIssue) error) error {
	jql := j.jqlQuery(time.Unix(0, 0), j.env.Now().Add(24*time.Hour))
	cp := jiraCheckpoint{HasMore: true}
	for range jiraMaxPages {
		if !cp.HasMore {
			return nil
		}
		issues, err := j.page(ctx, jql, &cp, jiraSlimPage)
		if err != nil {
			return err
		}
		if len(issues) > 0 {
			if err := batch(ctx, issues); err != nil {
				return err
			}
		}
	}
	return fmt.Errorf("Jira at %s listed more than %d pages", j.api, jiraMaxPages)
}

// ListIDs lists the ids of every issue, for pruning: Onyx's
// retrieve_all_slim_docs.
func (j *Jira) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	return j.each(ctx, func(ctx context.Context, issues []*jiraIssue) error {
		batch := make([]string, 0, len(issues))
		for _, is := range issues {
			if is.Fields.Project != nil && is.Fields.Project.Key != "" {
				batch = append(batch, j.base+"/browse/"+is.Key)
			}
		}
		return ids(ctx, batch)
	})
}

// Permissions lists every issue with its project's access: Onyx's
// jira_doc_sync (retrieve_all_slim_docs_perm_sync). A permission scheme
// the credential may not read fails it.
func (j *Jira) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	return j.each(ctx, func(ctx context.Context, issues []*jiraIssue) error {
		for _, is := range issues {
			if is.Fields.Project == nil || is.Fields.Project.Key == "" {
				continue
			}
			a, err := j.projectAccess(ctx, is.Fields.Project.Key, true)
			if err != nil {
				return err
			}
			if a == nil {
				return fmt.Errorf("Jira at %s: the permission scheme of project %s could not be read", j.api, is.Fields.Project.Key)
			}
			if err := access(ctx, j.base+"/browse/"+is.Key, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---- Access and groups (Onyx's EE jira/page_access.py, group_sync.py).

// JiraGroupID is the id of a Jira group as Onyx keeps it
// (build_ext_group_name_for_onyx): "jira_" and its name, lowercase.
func JiraGroupID(name string) string { return strings.ToLower(string(JiraSource) + "_" + name) }

// jiraHolder is a permission's holder in a permission scheme.
type jiraHolder struct {
	Type      string    `json:"type"`
	Parameter string    `json:"parameter"`
	Value     string    `json:"value"`
	User      *jiraUser `json:"user"`
}

// projectAccess is who may browse the project key's issues, as Onyx's
// get_project_permissions decides from its permission scheme's
// BROWSE_PROJECTS holders: everyone for "anyone" or "applicationRole";
// otherwise the users' emails and the groups of the "user", "group" and
// "projectRole" holders (the roles' actors read from the project's
// roles); the other holders (reporter, assignee…) give no one. It is
// read once a run. When the scheme may not be read (403, 404: the
// account does not administer the project), strict fails and otherwise
// the issues carry no access (nil): only a sync pair reads it, and there
// no one then sees them.
func (j *Jira) projectAccess(ctx context.Context, key string, strict bool) (*quarry.ExternalAccess, error) {
	if a, ok := j.access[key]; ok && (a != nil || !strict) {
		return a, nil
	}
	var scheme struct {
		Permissions []struct {
			Permission string      `json:"permission"`
			Holder     *jiraHolder `json:"holder"`
		} `json:"permissions"`
	}
	err := j.rest(ctx, "read the permission scheme of project "+key, "GET", "project/"+url.PathEscape(key)+"/permissionscheme", url.Values{"expand": {"user"}}, nil, &scheme)
	if status, _ := jiraStatus(err); !strict && (status == http.StatusForbidden || status == http.StatusNotFound) {
		j.env.Log.Warn("jira connector: a project's permission scheme could not be read; its issues carry no access", "project", key, "error", err.Error())
		j.access[key] = nil
		return nil, nil
	}
	if err != nil {
		return nil, err
	}
	holders := map[string][]*jiraHolder{}
	for _, p := range scheme.Permissions {
		if p.Permission != "BROWSE_PROJECTS" || p.Holder == nil || p.Holder.Type == "" {
			continue
		}
		holders[p.Holder.Type] = append(holders[p.Holder.Type], p.Holder)
	}
	a := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}
	if len(holders["anyone"]) > 0 || len(holders["applicationRole"]) > 0 {
		a.IsPublic = true
		j.access[key] = a
		return a, nil
	}
	emails := map[string]bool{}
	groups := map[string]bool{}
	for _, h := range holders["user"] {
		if h.User != nil && h.User.Email != "" {
			emails[h.User.Email] = true
		}
	}
	for _, h := range holders["group"] {
		// Onyx takes the holder's value (on Cloud the group's id) before
		// its parameter (its name); Quarry takes the name, which the
		// group sync's ids are made of.
		if name := cmp.Or(h.Parameter, h.Value); name != "" {
			groups[name] = true
		}
	}
	for _, h := range holders["projectRole"] {
		id := cmp.Or(h.Value, h.Parameter)
		if id == "" {
			continue
		}
		if err := j.roleActors(ctx, key, id, emails, groups); err != nil {
			return nil, err
		}
	}
	for e := range emails {
		a.ExternalUserEmails = append(a.ExternalUserEmails, e)
	}
	for g := range groups {
		a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, JiraGroupID(g))
	}
	slices.Sort(a.ExternalUserEmails)
	slices.Sort(a.ExternalUserGroupIDs)
	j.access[key] = a
	return a, nil
}

// roleActors adds the actors of the role id of project key: its groups'
// names, its users' emails (read from the user when the role does not
// tell it; app accounts left out).
func (j *Jira) roleActors(ctx context.Context, key, id string, emails, groups map[string]bool) error {
	var role struct {
		Actors []struct {
			Type        string `json:"type"`
			Name        string `json:"name"`
			DisplayName string `json:"displayName"`
			ActorGroup  *struct {
				Name        string `json:"name"`
				DisplayName string `json:"displayName"`
			} `json:"actorGroup"`
			ActorUser *jiraUser `json:"actorUser"`
		} `json:"actors"`
	}
	if err := j.rest(ctx, "read role "+id+" of project "+key, "GET", "project/"+url.PathEscape(key)+"/role/"+url.PathEscape(id), nil, nil, &role); err != nil {
		return err
	}
	for _, ac := range role.Actors {
		switch {
		case ac.ActorGroup != nil || ac.Type == "atlassian-group-role-actor":
			name := ac.Name
			if ac.ActorGroup != nil {
				name = cmp.Or(ac.ActorGroup.Name, cmp.Or(ac.ActorGroup.DisplayName, name))
			}
			if name = cmp.Or(name, ac.DisplayName); name != "" {
				groups[name] = true
			}
		case ac.ActorUser != nil || ac.Type == "atlassian-user-role-actor":
			u := ac.ActorUser
			if u == nil {
				u = &jiraUser{Name: ac.Name}
			}
			if u.Email != "" {
				emails[u.Email] = true
				continue
			}
			full, err := j.user(ctx, u)
			if err != nil {
				return err
			}
			if full != nil && (full.AccountType == nil || *full.AccountType == "atlassian") && full.Email != "" {
				emails[full.Email] = true
			}
		}
	}
	return nil
}

// user reads a user (by account id on Cloud, by name on Data Center),
// once a run; nil when it has no id.
func (j *Jira) user(ctx context.Context, u *jiraUser) (*jiraUser, error) {
	param, id := "accountId", cmp.Or(u.AccountID, cmp.Or(u.Name, u.Key))
	if !j.cloud {
		param, id = "username", cmp.Or(u.Name, cmp.Or(u.Key, u.AccountID))
	}
	if id == "" {
		return nil, nil
	}
	if full, ok := j.users[id]; ok {
		return full, nil
	}
	var full jiraUser
	if err := j.rest(ctx, "read user "+id, "GET", "user", url.Values{param: {id}}, nil, &full); err != nil {
		if status, _ := jiraStatus(err); status == http.StatusNotFound {
			j.users[id] = nil
			return nil, nil
		}
		return nil, err
	}
	j.users[id] = &full
	return &full, nil
}

// Groups lists Jira's groups with their members' emails: Onyx's
// jira_group_sync. Members that are not people (app accounts) and those
// whose email is hidden are left out; a group left with none is not
// listed.
func (j *Jira) Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error {
	var picker struct {
		Groups []struct {
			Name string `json:"name"`
		} `json:"groups"`
	}
	if err := j.rest(ctx, "list groups", "GET", "groups/picker", url.Values{"maxResults": {"9999"}}, nil, &picker); err != nil {
		return err
	}
	var names []string
	for _, g := range picker.Groups {
		if g.Name != "" {
			names = append(names, g.Name)
		}
	}
	slices.Sort(names)
	if len(names) == 0 {
		return fmt.Errorf("Jira at %s lists no groups", j.api)
	}
	for _, name := range names {
		emails, err := j.members(ctx, name)
		if err != nil {
			return err
		}
		if len(emails) == 0 {
			continue
		}
		if err := group(ctx, &quarry.ExternalGroup{ID: JiraGroupID(name), UserEmails: emails}); err != nil {
			return err
		}
	}
	return nil
}

// members is the emails of the group name's active members, sorted: nil
// when the group is gone.
func (j *Jira) members(ctx context.Context, name string) ([]string, error) {
	set := map[string]bool{}
	for start, n := 0, 0; n < jiraMaxPages; n++ {
		var page struct {
			IsLast *bool      `json:"isLast"`
			Values []jiraUser `json:"values"`
		}
		q := url.Values{"groupname": {name}, "includeInactiveUsers": {"false"}, "startAt": {strconv.Itoa(start)}, "maxResults": {strconv.Itoa(jiraMemberPage)}}
		err := j.rest(ctx, "list the members of group "+name, "GET", "group/member", q, nil, &page)
		if status, text := jiraStatus(err); status == http.StatusNotFound {
			if t := strings.ToLower(text); strings.Contains(t, "the group named") && strings.Contains(t, "does not exist") {
				j.env.Log.Warn("jira connector: a group listed is gone; skipped", "group", name)
				return nil, nil
			}
			return nil, fmt.Errorf("%w (group/member needs Jira 6.0 or later)", err)
		}
		if err != nil {
			return nil, err
		}
		for _, m := range page.Values {
			if m.AccountType != nil && *m.AccountType != "atlassian" {
				continue
			}
			if m.Email != "" {
				set[m.Email] = true
			}
		}
		if page.IsLast == nil || *page.IsLast || len(page.Values) == 0 {
			break
		}
		start += len(page.Values)
	}
	out := make([]string, 0, len(set))
	for e := range set {
		out = append(out, e)
	}
	slices.Sort(out)
	return out, nil
}
