package connector

import (
	"cmp"
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"net/http"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"time"
	"unicode/utf8"

	"github.com/google/go-github/v75/github"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/pyrepr"
)

// GitHubSource is the source of the GitHub connector.
const GitHubSource quarry.DocumentSource = "github"

// GitHubAPI is GitHub's REST API, where the connector calls unless
// QUARRY_CONNECTOR_ENDPOINTS points github elsewhere (GitHub Enterprise
// Server's https://HOST/api/v3/).
const GitHubAPI = "https://api.github.com/"

// Limits of the GitHub connector.
const (
	ghTimeout      = 60 * time.Second // Each request.
	ghPerPage      = 100              // Items a page asks for: Onyx's ITEMS_PER_PAGE, GitHub's most.
	ghMaxRetries   = 5                // Rate limits waited out in a row: Onyx's _MAX_NUM_RATE_LIMIT_RETRIES.
	ghMaxWait      = 65 * time.Minute // The longest wait for a rate limit: GitHub's window is an hour.
	ghMaxRepos     = 4000             // Repositories a run reads: their ids fit a checkpoint (quarry.MaxCheckpointBytes).
	ghMaxPages     = 100000           // Pages of one listing.
	ghAnswerMaxLen = 32 << 20         // Bytes of one answer.
	ghFileBatch    = 100              // Files a step reads: Onyx's FILE_BATCH_SIZE.
	ghMaxFileSize  = 1_000_000        // Bytes of a file indexed, as the tree tells them: Onyx's GITHUB_MAX_FILE_SIZE_BYTES.
	// ghStartSlack is how far before its window a poll starts: Onyx moves
	// the start back 3 hours, "since some Issues/PRs are getting dropped";
	// ghEndSlack how far after it ends, a day "for timezone safety".
	ghStartSlack = 3 * time.Hour
	ghEndSlack   = 24 * time.Hour
)

// GitHub is Onyx's GitHub connector (backend/onyx/connectors/github/
// connector.py at v4.6.1) through GitHub's REST API with go-github: the
// pull requests and issues of the repositories of repo_owner (those
// repositories names, comma-separated, or all of the organization's or
// user's), each a document whose id and link are its html_url, titled
// "{number}: {title}", its text its body, with Onyx's metadata.
//
// A run is checkpointed as Onyx's: a first step lists the repositories,
// then each step reads one page of a repository's pull requests, then of
// its issues (state_filter, "all" by default; sorted by update, newest
// first), and stops a listing at the first item updated before its
// window (less 3 hours, as Onyx). For a sync pair, each document carries
// its repository's access as Onyx's EE doc sync decides it; the
// connector is a GroupSyncer (the collaborators, outside collaborators,
// teams and organization members, with their public emails) and a
// PermissionSyncer, and its Slim listing lists every pull request and
// issue for pruning. Rate limits (403 or 429, with Retry-After or
// X-RateLimit-Reset) are waited out, a refused token is a
// *CredentialError.
type GitHub struct {
	cfg   githubConfig
	names []string // The repositories named; nil: all of repo_owner's.
	api   *github.Client
	base  string // The API's base, for errors.
	env   *Env
	// What a run learned, read once a run.
	users   map[string]*github.User
	members map[string]bool // "org/login": the user is a member of the organization.
	access  map[int64]*quarry.ExternalAccess
}

// githubConfig is the connector_specific_config of the GitHub connector:
// Onyx's keys (GithubConnector.__init__).
type githubConfig struct {
	RepoOwner     string  `json:"repo_owner"`
	Repositories  *string `json:"repositories"`
	StateFilter   string  `json:"state_filter"`
	IncludePRs    *bool   `json:"include_prs"`
	IncludeIssues *bool   `json:"include_issues"`
	IncludeFiles  *bool   `json:"include_files"`
	Branch        *string `json:"branch"`
}

// githubCredential is the credential_json of the GitHub connector: Onyx's
// key.
type githubCredential struct {
	Token string `json:"github_access_token"`
}

// NewGitHub is the Constructor of the github source's connector.
func NewGitHub(config, credential json.RawMessage, env *Env) (Connector, error) {
	g, err := newGitHub(config, credential, env)
	if err != nil {
		return nil, err
	}
	return g, nil
}

func newGitHub(config, credential json.RawMessage, env *Env) (*GitHub, error) {
	var c githubConfig
	if err := json.Unmarshal(config, &c); err != nil {
		return nil, fmt.Errorf("not an object with repo_owner, repositories, include_prs and include_issues: %w", err)
	}
	c.RepoOwner = strings.TrimSpace(c.RepoOwner)
	if c.RepoOwner == "" {
		return nil, errors.New("repo_owner must be provided")
	}
	if c.StateFilter == "" {
		c.StateFilter = "all"
	}
	if !slices.Contains([]string{"all", "open", "closed"}, c.StateFilter) {
		return nil, fmt.Errorf("state_filter must be all, open or closed, not %q", c.StateFilter)
	}
	if c.IncludePRs == nil {
		c.IncludePRs = new(true) // Onyx's default.
	}
	if c.IncludeIssues == nil {
		c.IncludeIssues = new(false)
	}
	if c.IncludeFiles == nil {
		c.IncludeFiles = new(false)
	}
	if c.Branch != nil {
		c.Branch = new(strings.TrimSpace(*c.Branch))
	}
	if !*c.IncludePRs && !*c.IncludeIssues && !*c.IncludeFiles {
		return nil, errors.New("at least one of pull requests, issues, or files must be selected for indexing")
	}
	var names []string
	if c.Repositories != nil {
		for n := range strings.SplitSeq(*c.Repositories, ",") {
			if n = strings.TrimSpace(n); n != "" {
				names = append(names, n)
			}
		}
	}
	var cred githubCredential
	if err := json.Unmarshal(credential, &cred); err != nil || strings.TrimSpace(cred.Token) == "" {
		return nil, errors.New("the credential has no github_access_token")
	}
	if env == nil || env.HTTP == nil {
		return nil, errors.New("the GitHub connector needs the egress guard's HTTP client")
	}
	env = env.withDefaults()
	base := env.Endpoint(GitHubSource, GitHubAPI)
	u, err := url.Parse(base)
	if err != nil {
		return nil, fmt.Errorf("the GitHub API's base %q: %w", base, err)
	}
	hc := *env.HTTP
	next := env.HTTP.Transport
	if next == nil {
		next = http.DefaultTransport
	}
	hc.Transport = &ghBoundedTransport{next: next, host: u.Host, auth: "Bearer " + strings.TrimSpace(cred.Token)}
	api := github.NewClient(&hc)
	api.BaseURL = u
	return &GitHub{cfg: c, names: names, api: api, base: u.Redacted(), env: env,
		users: map[string]*github.User{}, members: map[string]bool{}, access: map[int64]*quarry.ExternalAccess{}}, nil
}

// ghBoundedTransport puts the token on the requests to the API's own host
// only (go-github's WithAuthToken would put it on every request, a
// redirect's to another host too, after the client took it off), and
// bounds what is read of each answer to ghAnswerMaxLen.
type ghBoundedTransport struct {
	next       http.RoundTripper
	host, auth string // The API's host, and the Authorization its requests carry.
}

func (t *ghBoundedTransport) RoundTrip(req *http.Request) (*http.Response, error) {
	if strings.EqualFold(req.URL.Host, t.host) {
		req = req.Clone(req.Context())
		req.Header.Set("Authorization", t.auth)
	}
	resp, err := t.next.RoundTrip(req)
	if err != nil {
		return nil, err
	}
	tooLarge := &limitError{what: "an answer of GitHub's API", limit: ghAnswerMaxLen}
	resp.Body = &ghBoundedBody{r: newBoundedReader(resp.Body, ghAnswerMaxLen, tooLarge), body: resp.Body}
	return resp, nil
}

// ghBoundedBody is an answer's body, bounded.
type ghBoundedBody struct {
	r    *boundedReader
	body io.Closer
}

func (b *ghBoundedBody) Read(p []byte) (int, error) { return b.r.Read(p) }
func (b *ghBoundedBody) Close() error               { return b.body.Close() }

// ---- Calls, rate limits and errors.

// call runs f, one request of GitHub's API (what says which, for errors),
// waiting out rate limits (up to ghMaxRetries in a row).
func (g *GitHub) call(ctx context.Context, what string, f func(ctx context.Context) (*github.Response, error)) error {
	for attempt := 0; ; attempt++ {
		cctx, cancel := context.WithTimeout(ctx, ghTimeout)
		resp, err := f(cctx)
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil {
			return ctx.Err()
		}
		wait, limited := ghRateLimitWait(resp, err, g.env.Now())
		if !limited {
			return g.apiError(what, resp, err)
		}
		if attempt >= ghMaxRetries {
			return fmt.Errorf("GitHub's API at %s was still rate-limited after %d waits (%s): %s", g.base, ghMaxRetries, what, ghMessage(resp, err))
		}
		if wait > ghMaxWait {
			return fmt.Errorf("GitHub's API at %s is rate-limited for %s, more than the connector waits (%s): %s", g.base, wait.Round(time.Second), what, ghMessage(resp, err))
		}
		g.env.Log.Info("github connector: rate-limited; waiting", "wait", wait.String(), "request", what)
		if err := sleep(ctx, wait); err != nil {
			return err
		}
	}
}

// ghRateLimitWait tells whether an answer is a rate limit, and how long to
// wait before trying again, as GitHub's documentation says: Retry-After
// seconds; or, when X-RateLimit-Remaining is 0, until X-RateLimit-Reset;
// or a minute for a 429 that says neither.
func ghRateLimitWait(resp *github.Response, err error, now time.Time) (time.Duration, bool) {
	var rle *github.RateLimitError
	if errors.As(err, &rle) { // Also go-github's own, without a request, until the reset it saw.
		return max(rle.Rate.Reset.Sub(now)+time.Second, time.Second), true
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) && abuse.RetryAfter != nil {
		return max(*abuse.RetryAfter, 0), true
	}
	if resp == nil || resp.Response == nil || (resp.StatusCode != http.StatusForbidden && resp.StatusCode != http.StatusTooManyRequests) {
		return 0, false
	}
	h := resp.Header
	if d, ok := retryAfter(h); ok {
		return d, true
	}
	if h.Get("X-RateLimit-Remaining") == "0" {
		if reset, err := strconv.ParseInt(h.Get("X-RateLimit-Reset"), 10, 64); err == nil {
			return max(time.Unix(reset, 0).Sub(now)+time.Second, time.Second), true
		}
	}
	if resp.StatusCode == http.StatusTooManyRequests {
		return time.Minute, true
	}
	return 0, false
}

// ghMessage is what GitHub said of an error: its answer's message, or the
// error. Neither holds the token (go-github's errors name the URL, which
// does not).
func ghMessage(resp *github.Response, err error) string {
	var er *github.ErrorResponse
	if errors.As(err, &er) && er.Message != "" {
		return er.Message
	}
	var rle *github.RateLimitError
	if errors.As(err, &rle) && rle.Message != "" {
		return rle.Message
	}
	var abuse *github.AbuseRateLimitError
	if errors.As(err, &abuse) && abuse.Message != "" {
		return abuse.Message
	}
	var ue *url.Error
	if errors.As(err, &ue) {
		return ue.Err.Error()
	}
	return err.Error()
}

// apiError is the error of a request that failed otherwise than by a
// rate limit: a *CredentialError when GitHub refused the token (401).
func (g *GitHub) apiError(what string, resp *github.Response, err error) error {
	var tooLarge *limitError
	if errors.As(err, &tooLarge) {
		return fmt.Errorf("GitHub's API at %s (%s): %w", g.base, what, tooLarge)
	}
	if resp == nil || resp.Response == nil {
		return fmt.Errorf("GitHub's API at %s (%s): %s", g.base, what, ghMessage(resp, err))
	}
	if resp.StatusCode == http.StatusUnauthorized {
		return &CredentialError{Reason: fmt.Sprintf("GitHub's API at %s answered %s (%s): %s", g.base, resp.Status, what, ghMessage(resp, err))}
	}
	return &ghStatusError{status: resp.StatusCode, msg: fmt.Sprintf("GitHub's API at %s answered %s (%s): %s", g.base, resp.Status, what, ghMessage(resp, err))}
}

// ghStatusError is the error of an answer with an error status.
type ghStatusError struct {
	status int
	msg    string
}

func (e *ghStatusError) Error() string { return e.msg }

// ghStatus is the status of err's answer, or 0.
func ghStatus(err error) int {
	var se *ghStatusError
	if errors.As(err, &se) {
		return se.status
	}
	return 0
}

// ---- Repositories.

// ghRepo is what a checkpoint keeps of a repository (Onyx keeps its raw
// data): what its documents and their access need.
type ghRepo struct {
	ID            int64      `json:"id"`
	Owner         string     `json:"owner"`
	Name          string     `json:"name"`
	FullName      string     `json:"full_name"`
	HTMLURL       string     `json:"html_url"`
	DefaultBranch string     `json:"default_branch"`
	PushedAt      *time.Time `json:"pushed_at"`
	Visibility    string     `json:"visibility"` // public, private or internal.
	OrgID         int64      `json:"organization_id,omitempty"`
	OrgLogin      string     `json:"organization_login,omitempty"`
}

func toGHRepo(r *github.Repository) *ghRepo {
	v := strings.ToLower(r.GetVisibility())
	if v == "" { // An older GitHub Enterprise Server: private or not.
		v = "public"
		if r.GetPrivate() {
			v = "private"
		}
	}
	if v != "public" && v != "private" && v != "internal" {
		v = "private" // Onyx's default for a visibility it does not know.
	}
	out := &ghRepo{ID: r.GetID(), Owner: r.GetOwner().GetLogin(), Name: r.GetName(), FullName: r.GetFullName(), HTMLURL: r.GetHTMLURL(),
		DefaultBranch: r.GetDefaultBranch(), Visibility: v, OrgID: r.GetOrganization().GetID(), OrgLogin: r.GetOrganization().GetLogin()}
	if r.PushedAt != nil {
		out.PushedAt = &r.PushedAt.Time
	}
	return out
}

// repos returns the repositories of the configuration, as Onyx's
// fetch_configured_repos: the one named (an error when GitHub has not
// got it), those of several named that GitHub has (the others logged
// and skipped), or all of repo_owner's as an organization, else as a
// user.
func (g *GitHub) repos(ctx context.Context) ([]*ghRepo, error) {
	var out []*ghRepo
	if len(g.names) > 0 {
		for _, n := range g.names {
			var r *github.Repository
			err := g.call(ctx, "get repository "+g.cfg.RepoOwner+"/"+n, func(ctx context.Context) (resp *github.Response, err error) {
				r, resp, err = g.api.Repositories.Get(ctx, g.cfg.RepoOwner, n)
				return resp, err
			})
			var ce *CredentialError
			switch {
			case errors.As(err, &ce) || ctx.Err() != nil:
				return nil, err
			case err != nil && len(g.names) == 1:
				return nil, err
			case err != nil:
				g.env.Log.Warn("github connector: a repository could not be read; skipped", "repository", g.cfg.RepoOwner+"/"+n, "error", err.Error())
				continue
			}
			out = append(out, toGHRepo(r))
		}
		return out, nil
	}
	list := func(what string, page func(ctx context.Context, p int) ([]*github.Repository, *github.Response, error)) error {
		return g.pages(ctx, what, func(ctx context.Context, p int) (*github.Response, error) {
			rs, resp, err := page(ctx, p)
			for _, r := range rs {
				if len(out) >= ghMaxRepos {
					return resp, fmt.Errorf("%s has more than %d repositories", g.cfg.RepoOwner, ghMaxRepos)
				}
				out = append(out, toGHRepo(r))
			}
			return resp, err
		})
	}
	var org *github.Organization
	err := g.call(ctx, "get organization "+g.cfg.RepoOwner, func(ctx context.Context) (resp *github.Response, err error) {
		org, resp, err = g.api.Organizations.Get(ctx, g.cfg.RepoOwner)
		return resp, err
	})
	switch {
	case err == nil:
		err = list("list the repositories of organization "+g.cfg.RepoOwner, func(ctx context.Context, p int) ([]*github.Repository, *github.Response, error) {
			return g.api.Repositories.ListByOrg(ctx, org.GetLogin(), &github.RepositoryListByOrgOptions{ListOptions: github.ListOptions{Page: p, PerPage: ghPerPage}})
		})
	case ghStatus(err) == http.StatusNotFound: // Not an organization: a user.
		err = list("list the repositories of user "+g.cfg.RepoOwner, func(ctx context.Context, p int) ([]*github.Repository, *github.Response, error) {
			return g.api.Repositories.ListByUser(ctx, g.cfg.RepoOwner, &github.RepositoryListByUserOptions{ListOptions: github.ListOptions{Page: p, PerPage: ghPerPage}})
		})
	}
	return out, err
}

// pages calls page with each page of a listing, from the first, following
// the Link headers (go-github's NextPage).
func (g *GitHub) pages(ctx context.Context, what string, page func(ctx context.Context, p int) (*github.Response, error)) error {
	p := 0
	for range ghMaxPages {
		var next int
		err := g.call(ctx, what, func(ctx context.Context) (*github.Response, error) {
			resp, err := page(ctx, p)
			if resp != nil {
				next = resp.NextPage
			}
			return resp, err
		})
		if err != nil {
			return err
		}
		if next == 0 {
			return nil
		}
		p = next
	}
	return fmt.Errorf("GitHub's API at %s (%s): more than %d pages", g.base, what, ghMaxPages)
}

// ---- Checkpointed runs.

// The stages of a repository's run.
const (
	ghStagePRs    = "prs"
	ghStageIssues = "issues"
	ghStageFiles  = "files"
)

// ghCheckpoint is the GitHub connector's checkpoint: Onyx's
// GithubConnectorCheckpoint (the repositories left by id, the one being
// read, its stage and page), without the cursor of Onyx's fallback. Of
// the files it keeps the SHA of the tree listed (which GitHub serves
// unchanged) where Onyx keeps the list of paths, so that it stays within
// quarry.MaxCheckpointBytes.
type ghCheckpoint struct {
	HasMore       bool    `json:"has_more"`
	Stage         string  `json:"stage"`
	CurrPage      int     `json:"curr_page"`
	CachedRepoIDs []int64 `json:"cached_repo_ids"` // null until the repositories are listed.
	CachedRepo    *ghRepo `json:"cached_repo"`
	// FileTree is the SHA of the tree the files stage lists, "none" when
	// it skips the repository's files, "" before it listed them.
	FileTree   string `json:"file_tree,omitempty"`
	FileBranch string `json:"file_paths_branch,omitempty"` // The branch FileTree is of.
}

// FirstCheckpoint is Onyx's build_dummy_checkpoint.
func (g *GitHub) FirstCheckpoint() json.RawMessage {
	b, _ := json.Marshal(ghCheckpoint{HasMore: true, Stage: ghStagePRs})
	return b
}

// Step runs one step: the first lists the repositories; each other reads
// one page of pull requests or issues of a repository.
func (g *GitHub) Step(ctx context.Context, w Window, raw json.RawMessage, out Emitter) (json.RawMessage, error) {
	var cp ghCheckpoint
	if err := json.Unmarshal(raw, &cp); err != nil {
		return nil, fmt.Errorf("the GitHub connector's checkpoint: %w", err)
	}
	start := w.Start.Add(-ghStartSlack)
	if start.Before(time.Unix(0, 0)) {
		start = time.Unix(0, 0)
	}
	end := w.End.Add(ghEndSlack)
	if err := g.step(ctx, &cp, start, end, out); err != nil {
		return nil, err
	}
	return json.Marshal(cp)
}

// step moves cp on by one step, emitting to out the documents of the
// items updated from start to end.
func (g *GitHub) step(ctx context.Context, cp *ghCheckpoint, start, end time.Time, out Emitter) error {
	if cp.CachedRepoIDs == nil {
		repos, err := g.repos(ctx)
		if err != nil {
			return err
		}
		if len(repos) == 0 {
			cp.HasMore = false
			return nil
		}
		cp.CachedRepo = repos[0]
		cp.CachedRepoIDs = []int64{}
		for _, r := range repos[1:] {
			cp.CachedRepoIDs = append(cp.CachedRepoIDs, r.ID)
		}
		cp.Stage, cp.CurrPage, cp.HasMore = ghStagePRs, 0, true
		return nil
	}
	repo := cp.CachedRepo
	if repo == nil {
		return errors.New("the GitHub connector's checkpoint has no repository")
	}
	if cp.Stage == ghStagePRs && *g.cfg.IncludePRs {
		more, err := g.itemPage(ctx, repo, true, cp.CurrPage, start, end, out)
		if err != nil || more {
			cp.CurrPage++
			return err
		}
	}
	if cp.Stage == ghStagePRs {
		cp.Stage, cp.CurrPage = ghStageIssues, 0
	}
	if cp.Stage == ghStageIssues && *g.cfg.IncludeIssues {
		more, err := g.itemPage(ctx, repo, false, cp.CurrPage, start, end, out)
		if err != nil || more {
			cp.CurrPage++
			return err
		}
	}
	if cp.Stage == ghStageIssues {
		cp.Stage, cp.CurrPage, cp.FileTree, cp.FileBranch = ghStageFiles, 0, "", ""
	}
	if cp.Stage == ghStageFiles && *g.cfg.IncludeFiles {
		more, err := g.filePage(ctx, repo, cp, start, out)
		if err != nil || more {
			return err
		}
	}
	// The repository is done: on to the next.
	for len(cp.CachedRepoIDs) > 0 {
		id := cp.CachedRepoIDs[0]
		cp.CachedRepoIDs = cp.CachedRepoIDs[1:]
		var r *github.Repository
		err := g.call(ctx, fmt.Sprintf("get repository %d", id), func(ctx context.Context) (resp *github.Response, err error) {
			r, resp, err = g.api.Repositories.GetByID(ctx, id)
			return resp, err
		})
		if ghStatus(err) == http.StatusNotFound {
			g.env.Log.Warn("github connector: a repository is gone since the run listed it; skipped", "id", id)
			continue
		}
		if err != nil {
			return err
		}
		cp.CachedRepo, cp.Stage, cp.CurrPage, cp.HasMore = toGHRepo(r), ghStagePRs, 0, true
		cp.FileTree, cp.FileBranch = "", ""
		return nil
	}
	cp.HasMore = false
	return nil
}

// ghItem is a pull request or an issue as a listing gives it.
type ghItem struct {
	number    int
	id        int64
	htmlURL   string
	updated   time.Time
	isPull    bool // An issue of the issues API that is a pull request.
	pull      *github.PullRequest
	issue     *github.Issue
	createdAt *github.Timestamp
}

// itemPage reads page p of a repository's pull requests (pulls) or issues,
// sorted by update, newest first, as Onyx's _get_batch_rate_limited does
// (get_page: per_page 100, page p+1), and emits the documents of those
// within start and end. It reports whether there is more to read: the
// page was full and no item in it was older than start.
func (g *GitHub) itemPage(ctx context.Context, repo *ghRepo, pulls bool, p int, start, end time.Time, out Emitter) (bool, error) {
	var items []ghItem
	var next int
	opts := github.ListOptions{Page: 0, PerPage: ghPerPage}
	if p > 0 {
		opts.Page = p + 1
	}
	what := fmt.Sprintf("list the issues of %s, page %d", repo.FullName, p+1)
	if pulls {
		what = fmt.Sprintf("list the pull requests of %s, page %d", repo.FullName, p+1)
	}
	err := g.call(ctx, what, func(ctx context.Context) (*github.Response, error) {
		items = items[:0]
		var resp *github.Response
		var err error
		if pulls {
			var prs []*github.PullRequest
			prs, resp, err = g.api.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{
				State: g.cfg.StateFilter, Sort: "updated", Direction: "desc", ListOptions: opts})
			for _, pr := range prs {
				items = append(items, ghItem{number: pr.GetNumber(), id: pr.GetID(), htmlURL: pr.GetHTMLURL(), updated: pr.GetUpdatedAt().Time,
					pull: pr, createdAt: pr.CreatedAt})
			}
		} else {
			var is []*github.Issue
			is, resp, err = g.api.Issues.ListByRepo(ctx, repo.Owner, repo.Name, &github.IssueListByRepoOptions{
				State: g.cfg.StateFilter, Sort: "updated", Direction: "desc", ListOptions: opts})
			for _, i := range is {
				items = append(items, ghItem{number: i.GetNumber(), id: i.GetID(), htmlURL: i.GetHTMLURL(), updated: i.GetUpdatedAt().Time,
					isPull: i.IsPullRequest(), issue: i, createdAt: i.CreatedAt})
			}
		}
		if resp != nil {
			next = resp.NextPage
		}
		return resp, err
	})
	if ghStatus(err) == http.StatusNotFound {
		// Onyx: the pull requests or issues are turned off (a mirror).
		g.env.Log.Warn("github connector: GitHub answered 404 to a listing; it is taken as empty", "request", what)
		return false, nil
	}
	if err != nil {
		return false, err
	}
	var access *quarry.ExternalAccess
	if len(items) > 0 {
		if access, err = g.repoAccess(ctx, repo); err != nil {
			return false, err
		}
	}
	for _, it := range items {
		if it.isPull {
			continue // The pull requests' stage reads them.
		}
		if it.updated.Before(start) {
			return false, nil // Newest first: the rest are older still.
		}
		if it.updated.After(end) {
			continue
		}
		d, err := g.document(ctx, repo, &it, access)
		var ce *CredentialError
		switch {
		case errors.As(err, &ce) || ctx.Err() != nil:
			return false, err
		case err != nil:
			link := it.htmlURL
			err = out.Failure(ctx, &quarry.ConnectorFailure{
				FailedDocument: &quarry.DocumentFailure{DocumentID: strconv.FormatInt(it.id, 10), DocumentLink: &link},
				FailureMessage: "Error converting it to a document: " + err.Error(),
			})
		default:
			err = out.Document(ctx, d)
		}
		if err != nil {
			return false, err
		}
	}
	return len(items) > 0 && next != 0, nil
}

// ---- Documents.

// document is the document of a pull request or an issue, as Onyx's
// _convert_pr_to_document and _convert_issue_to_document make it. A pull
// request is read whole (its merged, commits and changed_files, which a
// listing lacks, as PyGithub completes it); a closed issue too (its
// closed_by); the users' names and emails are read once a run.
func (g *GitHub) document(ctx context.Context, repo *ghRepo, it *ghItem, access *quarry.ExternalAccess) (*quarry.Document, error) {
	md := map[string]any{}
	var title, body, state string
	var created, updated, closed *github.Timestamp
	var user *github.User
	var assignees []*github.User
	var labels []*github.Label
	if it.pull != nil {
		var pr *github.PullRequest
		err := g.call(ctx, fmt.Sprintf("get pull request %s#%d", repo.FullName, it.number), func(ctx context.Context) (resp *github.Response, err error) {
			pr, resp, err = g.api.PullRequests.Get(ctx, repo.Owner, repo.Name, it.number)
			return resp, err
		})
		if err != nil {
			return nil, err
		}
		title, body, state = pr.GetTitle(), pr.GetBody(), pr.GetState()
		created, updated, closed = pr.CreatedAt, pr.UpdatedAt, pr.ClosedAt
		user, assignees, labels = pr.User, pr.Assignees, pr.Labels
		md["object_type"] = "PullRequest"
		md["id"] = strconv.Itoa(pr.GetNumber())
		md["merged"] = pyBool(pr.GetMerged())
		md["state"] = state
		if user != nil {
			md["user"] = g.userInfo(ctx, user)
		}
		md["assignees"] = g.usersInfo(ctx, assignees)
		md["repo"] = cmp.Or(pr.GetBase().GetRepo().GetFullName(), repo.FullName)
		md["num_commits"] = strconv.Itoa(pr.GetCommits())
		md["num_files_changed"] = strconv.Itoa(pr.GetChangedFiles())
	} else {
		is := it.issue
		if is.GetState() == "closed" {
			err := g.call(ctx, fmt.Sprintf("get issue %s#%d", repo.FullName, it.number), func(ctx context.Context) (resp *github.Response, err error) {
				is, resp, err = g.api.Issues.Get(ctx, repo.Owner, repo.Name, it.number)
				return resp, err
			})
			if err != nil {
				return nil, err
			}
		}
		title, body, state = is.GetTitle(), is.GetBody(), is.GetState()
		created, updated, closed = is.CreatedAt, is.UpdatedAt, is.ClosedAt
		user, assignees, labels = is.User, is.Assignees, is.Labels
		md["object_type"] = "Issue"
		md["id"] = strconv.Itoa(is.GetNumber())
		md["state"] = state
		if user != nil {
			md["user"] = g.userInfo(ctx, user)
		}
		md["assignees"] = g.usersInfo(ctx, assignees)
		md["repo"] = repo.FullName
		if is.ClosedBy != nil {
			md["closed_by"] = g.userInfo(ctx, is.ClosedBy)
		}
	}
	names := []string{}
	for _, l := range labels {
		names = append(names, l.GetName())
	}
	md["labels"] = names
	for k, t := range map[string]*github.Timestamp{"created_at": created, "updated_at": updated, "closed_at": closed} {
		if t != nil && !t.IsZero() {
			md[k] = pyTime(t.Time)
		}
	}
	if ctx.Err() != nil { // A user's read ended by the attempt's end.
		return nil, ctx.Err()
	}
	link := it.htmlURL
	d := &quarry.Document{
		ID:                 it.htmlURL,
		Sections:           []quarry.Section{{Text: body, Link: &link}},
		Source:             GitHubSource,
		SemanticIdentifier: fmt.Sprintf("%d: %s", it.number, title),
		Metadata:           md,
		ExternalAccess:     access,
	}
	if updated != nil && !updated.IsZero() {
		d.DocUpdatedAt = &quarry.Time{Time: updated.UTC()}
	}
	return d, nil
}

// userInfo is Onyx's _get_userinfo of a user, as Onyx's metadata keeps it
// (str() of a dict): its login, name and email, those it has; the name
// and email read from the user's own page ("Get a user") once a run, and
// left out when that read fails, as Onyx's _safe_get does.
func (g *GitHub) userInfo(ctx context.Context, u *github.User) string {
	login := u.GetLogin()
	full, ok := g.users[login]
	if !ok {
		err := g.call(ctx, "get user "+login, func(ctx context.Context) (resp *github.Response, err error) {
			full, resp, err = g.api.Users.Get(ctx, login)
			return resp, err
		})
		if err != nil {
			g.env.Log.Debug("github connector: a user's name and email could not be read", "login", login, "error", err.Error())
			full = nil
		}
		g.users[login] = full
	}
	parts := []string{pyrepr.Quote("login") + ": " + pyrepr.Quote(login)}
	if full != nil && full.Name != nil {
		parts = append(parts, pyrepr.Quote("name")+": "+pyrepr.Quote(*full.Name))
	}
	if full != nil && full.Email != nil {
		parts = append(parts, pyrepr.Quote("email")+": "+pyrepr.Quote(*full.Email))
	}
	return "{" + strings.Join(parts, ", ") + "}"
}

func (g *GitHub) usersInfo(ctx context.Context, us []*github.User) []string {
	out := []string{}
	for _, u := range us {
		out = append(out, g.userInfo(ctx, u))
	}
	return out
}

// pyBool is str() of a Python bool.
func pyBool(b bool) string {
	if b {
		return "True"
	}
	return "False"
}

// pyTime is str() of a Python datetime in UTC, as Onyx's metadata keeps
// times: "2024-03-01 09:00:00+00:00".
func pyTime(t time.Time) string {
	t = t.UTC()
	if t.Nanosecond()/1000 != 0 {
		return t.Format("2006-01-02 15:04:05.000000") + "+00:00"
	}
	return t.Format("2006-01-02 15:04:05") + "+00:00"
}

// ---- Access and groups (Onyx's EE github/utils.py).

// GitHubGroupID is the id of a group of a GitHub source as Onyx keeps it
// (build_ext_group_name_for_onyx): "github_" and the group's name,
// lowercase. The names are Onyx's: "{repository id}_collaborators",
// "{repository id}_outside_collaborators", "{organization id}_organization"
// and a team's slug.
func GitHubGroupID(name string) string { return strings.ToLower(string(GitHubSource) + "_" + name) }

// repoAccess is who may read a repository's documents, as Onyx's
// get_external_access_permission decides: everyone when it is public;
// its collaborators, outside collaborators and teams when it is private;
// its organization's members when it is internal. It is read once a run.
func (g *GitHub) repoAccess(ctx context.Context, repo *ghRepo) (*quarry.ExternalAccess, error) {
	if a, ok := g.access[repo.ID]; ok {
		return a, nil
	}
	a := &quarry.ExternalAccess{ExternalUserEmails: []string{}, ExternalUserGroupIDs: []string{}}
	switch repo.Visibility {
	case "public":
		a.IsPublic = true
	case "internal":
		a.ExternalUserGroupIDs = []string{GitHubGroupID(fmt.Sprintf("%d_organization", repo.OrgID))}
	default:
		teams, err := g.teams(ctx, repo)
		if s := ghStatus(err); s == http.StatusForbidden || s == http.StatusNotFound {
			// A token without the organization's Members permission: no
			// team groups, as Onyx (whose listing turns errors into none),
			// rather than failing every run of a pair that is not synced.
			g.env.Log.Warn("github connector: the repository's teams could not be read; its documents name no team", "repository", repo.FullName, "error", err.Error())
			teams, err = nil, nil
		}
		if err != nil {
			return nil, err
		}
		a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, GitHubGroupID(fmt.Sprintf("%d_collaborators", repo.ID)),
			GitHubGroupID(fmt.Sprintf("%d_outside_collaborators", repo.ID)))
		for _, t := range teams {
			a.ExternalUserGroupIDs = append(a.ExternalUserGroupIDs, GitHubGroupID(t.GetSlug()))
		}
		slices.Sort(a.ExternalUserGroupIDs)
		a.ExternalUserGroupIDs = slices.Compact(a.ExternalUserGroupIDs)
	}
	g.access[repo.ID] = a
	return a, nil
}

// teams returns the teams with access to a repository. A repository of a
// user has none: GitHub answers 404, which is taken as none, as Onyx
// takes any error.
func (g *GitHub) teams(ctx context.Context, repo *ghRepo) ([]*github.Team, error) {
	var out []*github.Team
	err := g.pages(ctx, "list the teams of "+repo.FullName, func(ctx context.Context, p int) (*github.Response, error) {
		ts, resp, err := g.api.Repositories.ListTeams(ctx, repo.Owner, repo.Name, &github.ListOptions{Page: p, PerPage: ghPerPage})
		out = append(out, ts...)
		return resp, err
	})
	if ghStatus(err) == http.StatusNotFound && repo.OrgLogin == "" {
		return nil, nil
	}
	return out, err
}

// emails returns the public emails of users, each once, sorted: a user's
// listing has none, so each user is read ("Get a user", once a run). A
// user without a public email is logged and left out, as Onyx does.
func (g *GitHub) emails(ctx context.Context, users []*github.User, what string) ([]string, error) {
	var out []string
	for _, u := range users {
		login := u.GetLogin()
		full, ok := g.users[login]
		if !ok {
			err := g.call(ctx, "get user "+login, func(ctx context.Context) (resp *github.Response, err error) {
				full, resp, err = g.api.Users.Get(ctx, login)
				return resp, err
			})
			if err != nil {
				return nil, err
			}
			g.users[login] = full
		}
		if full == nil || full.GetEmail() == "" {
			g.env.Log.Debug("github connector: a user has no public email; left out of the group", "login", login, "group", what)
			continue
		}
		out = append(out, full.GetEmail())
	}
	slices.Sort(out)
	return slices.Compact(out), nil
}

// users lists the users of a listing, every page.
func (g *GitHub) listUsers(ctx context.Context, what string, page func(ctx context.Context, p int) ([]*github.User, *github.Response, error)) ([]*github.User, error) {
	var out []*github.User
	err := g.pages(ctx, what, func(ctx context.Context, p int) (*github.Response, error) {
		us, resp, err := page(ctx, p)
		out = append(out, us...)
		return resp, err
	})
	return out, err
}

// isMember reports whether login is a member of organization org (204 or
// 404 to "Check organization membership for a user"), read once a run.
func (g *GitHub) isMember(ctx context.Context, org, login string) (bool, error) {
	k := org + "/" + login
	if m, ok := g.members[k]; ok {
		return m, nil
	}
	var m bool
	err := g.call(ctx, "check the membership of "+login+" in "+org, func(ctx context.Context) (resp *github.Response, err error) {
		m, resp, err = g.api.Organizations.IsMember(ctx, org, login)
		return resp, err
	})
	if err != nil {
		return false, err
	}
	g.members[k] = m
	return m, nil
}

// Groups lists the groups of the configured repositories, as Onyx's
// github_group_sync (get_external_user_group): for a private repository
// its collaborators who are members of its organization (or all of them,
// for a user's repository), its outside collaborators, and each of its
// teams, each with its members' public emails and only when it has some;
// for an internal repository its organization's members; nothing for a
// public one. A group several repositories share is listed once. Unlike
// Onyx, a failed read fails the sync rather than leaving a group empty.
func (g *GitHub) Groups(ctx context.Context, group func(ctx context.Context, g *quarry.ExternalGroup) error) error {
	repos, err := g.repos(ctx)
	if err != nil {
		return err
	}
	seen := map[string]bool{}
	emit := func(id string, emails []string, always bool) error {
		if seen[id] || (len(emails) == 0 && !always) {
			return nil
		}
		seen[id] = true
		if emails == nil {
			emails = []string{}
		}
		return group(ctx, &quarry.ExternalGroup{ID: id, UserEmails: emails})
	}
	for _, repo := range repos {
		switch repo.Visibility {
		case "public":
			continue
		case "internal":
			id := GitHubGroupID(fmt.Sprintf("%d_organization", repo.OrgID))
			if seen[id] {
				continue
			}
			members, err := g.listUsers(ctx, "list the members of "+repo.OrgLogin, func(ctx context.Context, p int) ([]*github.User, *github.Response, error) {
				return g.api.Organizations.ListMembers(ctx, repo.OrgLogin, &github.ListMembersOptions{Filter: "all", ListOptions: github.ListOptions{Page: p, PerPage: ghPerPage}})
			})
			if err != nil {
				return err
			}
			emails, err := g.emails(ctx, members, id)
			if err != nil {
				return err
			}
			if err := emit(id, emails, true); err != nil {
				return err
			}
			continue
		}
		collaborators, err := g.listUsers(ctx, "list the collaborators of "+repo.FullName, func(ctx context.Context, p int) ([]*github.User, *github.Response, error) {
			return g.api.Repositories.ListCollaborators(ctx, repo.Owner, repo.Name, &github.ListCollaboratorsOptions{ListOptions: github.ListOptions{Page: p, PerPage: ghPerPage}})
		})
		if err != nil {
			return err
		}
		var inside, outside []*github.User
		for _, c := range collaborators {
			member := true
			if repo.OrgLogin != "" {
				if member, err = g.isMember(ctx, repo.OrgLogin, c.GetLogin()); err != nil {
					return err
				}
			}
			if member {
				inside = append(inside, c)
			} else {
				outside = append(outside, c)
			}
		}
		for _, part := range []struct {
			name  string
			users []*github.User
		}{{fmt.Sprintf("%d_collaborators", repo.ID), inside}, {fmt.Sprintf("%d_outside_collaborators", repo.ID), outside}} {
			emails, err := g.emails(ctx, part.users, part.name)
			if err != nil {
				return err
			}
			if err := emit(GitHubGroupID(part.name), emails, false); err != nil {
				return err
			}
		}
		teams, err := g.teams(ctx, repo)
		if err != nil {
			return err
		}
		for _, t := range teams {
			id := GitHubGroupID(t.GetSlug())
			if seen[id] {
				continue
			}
			members, err := g.listUsers(ctx, "list the members of team "+t.GetSlug(), func(ctx context.Context, p int) ([]*github.User, *github.Response, error) {
				return g.api.Teams.ListTeamMembersBySlug(ctx, repo.OrgLogin, t.GetSlug(), &github.TeamListTeamMembersOptions{ListOptions: github.ListOptions{Page: p, PerPage: ghPerPage}})
			})
			if err != nil {
				return err
			}
			emails, err := g.emails(ctx, members, id)
			if err != nil {
				return err
			}
			if err := emit(id, emails, false); err != nil {
				return err
			}
		}
	}
	return nil
}

// listAll lists every pull request, issue and file of the configured
// repositories (as the slim listing of Onyx's connector, page by page),
// calling each with the ids of a page and their repository.
func (g *GitHub) listAll(ctx context.Context, each func(ctx context.Context, ids []string, repo *ghRepo) error) error {
	repos, err := g.repos(ctx)
	if err != nil {
		return err
	}
	for _, repo := range repos {
		for _, pulls := range []bool{true, false} {
			if (pulls && !*g.cfg.IncludePRs) || (!pulls && !*g.cfg.IncludeIssues) {
				continue
			}
			what := "list the issues of " + repo.FullName
			if pulls {
				what = "list the pull requests of " + repo.FullName
			}
			err := g.pages(ctx, what, func(ctx context.Context, p int) (*github.Response, error) {
				var ids []string
				var resp *github.Response
				var err error
				opts := github.ListOptions{Page: p, PerPage: ghPerPage}
				if pulls {
					var prs []*github.PullRequest
					prs, resp, err = g.api.PullRequests.List(ctx, repo.Owner, repo.Name, &github.PullRequestListOptions{
						State: g.cfg.StateFilter, Sort: "updated", Direction: "desc", ListOptions: opts})
					for _, pr := range prs {
						ids = append(ids, pr.GetHTMLURL())
					}
				} else {
					var is []*github.Issue
					is, resp, err = g.api.Issues.ListByRepo(ctx, repo.Owner, repo.Name, &github.IssueListByRepoOptions{
						State: g.cfg.StateFilter, Sort: "updated", Direction: "desc", ListOptions: opts})
					for _, i := range is {
						if !i.IsPullRequest() {
							ids = append(ids, i.GetHTMLURL())
						}
					}
				}
				if err == nil && len(ids) > 0 {
					err = each(ctx, ids, repo)
				}
				return resp, err
			})
			if ghStatus(err) == http.StatusNotFound {
				continue // Turned off for this repository, as in a run.
			}
			if err != nil {
				return err
			}
		}
		if *g.cfg.IncludeFiles {
			branch := g.branch(repo)
			paths, _, _, err := g.fileTree(ctx, repo, branch)
			if err != nil {
				return err
			}
			for batch := range slices.Chunk(paths, ghFileBatch) {
				var ids []string
				for _, p := range batch {
					ids = append(ids, repo.HTMLURL+"/blob/"+branch+"/"+p)
				}
				if err := each(ctx, ids, repo); err != nil {
					return err
				}
			}
		}
	}
	return nil
}

// ListIDs lists the ids of every pull request and issue a run would read,
// whatever their time: Onyx's retrieve_all_slim_docs.
func (g *GitHub) ListIDs(ctx context.Context, ids func(ctx context.Context, batch []string) error) error {
	return g.listAll(ctx, func(ctx context.Context, batch []string, _ *ghRepo) error { return ids(ctx, batch) })
}

// Permissions lists every pull request and issue a run would read with
// its repository's access (repoAccess): Onyx's github_doc_sync, which
// gives each document of a repository its repository's access.
func (g *GitHub) Permissions(ctx context.Context, access func(ctx context.Context, id string, a *quarry.ExternalAccess) error) error {
	return g.listAll(ctx, func(ctx context.Context, batch []string, repo *ghRepo) error {
		a, err := g.repoAccess(ctx, repo)
		if err != nil {
			return err
		}
		for _, id := range batch {
			if err := access(ctx, id, a); err != nil {
				return err
			}
		}
		return nil
	})
}

// ---- Files (Onyx's FILES stage).

// ghIndexableExtensions and ghIndexableNames are the files Onyx indexes:
// prose documents by extension, and conventional documents without one
// (matched case-insensitively); ghPathDenylist the path segments that
// exclude a file.
var (
	ghIndexableExtensions = []string{".md", ".mdx", ".markdown", ".rst", ".txt"}
	ghIndexableNames      = []string{"readme", "license", "licence", "changelog", "contributing", "authors", "notice", "copying",
		"install", "maintainers", "codeowners", "security", "support"}
	ghPathDenylist = []string{".git", "node_modules", "vendor", "dist", "build", ".venv", "__pycache__"}
)

// ghIndexablePath is Onyx's _is_indexable_path: within the size limit,
// no segment denied, and a document's extension or name.
func ghIndexablePath(path string, size int) bool {
	if size > ghMaxFileSize {
		return false
	}
	for seg := range strings.SplitSeq(path, "/") {
		if slices.Contains(ghPathDenylist, seg) {
			return false
		}
	}
	base := path[strings.LastIndex(path, "/")+1:]
	ext := ""
	if i := strings.LastIndex(base, "."); i > 0 { // Python's splitext: a leading dot is not an extension.
		ext = base[i:]
	}
	if slices.Contains(ghIndexableExtensions, strings.ToLower(ext)) {
		return true
	}
	return ext == "" && slices.Contains(ghIndexableNames, strings.ToLower(base))
}

// branch is the branch whose files are read: branch, or the repository's
// default one.
func (g *GitHub) branch(repo *ghRepo) string {
	if g.cfg.Branch != nil && *g.cfg.Branch != "" {
		return *g.cfg.Branch
	}
	return repo.DefaultBranch
}

// fileTree lists the indexable files of a tree (ref: a branch or a tree's
// SHA), sorted, with the tree's SHA and whether GitHub truncated it. An
// empty repository (409 "Git Repository is empty.") has none.
func (g *GitHub) fileTree(ctx context.Context, repo *ghRepo, ref string) (paths []string, sha string, truncated bool, err error) {
	var tree *github.Tree
	err = g.call(ctx, "get the tree of "+repo.FullName+" at "+ref, func(ctx context.Context) (resp *github.Response, err error) {
		tree, resp, err = g.api.Git.GetTree(ctx, repo.Owner, repo.Name, ref, true)
		return resp, err
	})
	switch {
	case ghStatus(err) == http.StatusConflict && strings.HasSuffix(err.Error(), ": Git Repository is empty."):
		g.env.Log.Info("github connector: the repository is empty; no files", "repository", repo.FullName)
		return []string{}, "none", false, nil
	case ghStatus(err) == http.StatusNotFound && g.cfg.Branch != nil && *g.cfg.Branch != "":
		return nil, "", false, fmt.Errorf("Branch '%s' not found in repository %s. Leave the branch setting blank to use the repository's default branch.",
			*g.cfg.Branch, repo.FullName)
	case err != nil:
		return nil, "", false, err
	}
	for _, e := range tree.Entries {
		if e.GetType() == "blob" && ghIndexablePath(e.GetPath(), e.GetSize()) {
			paths = append(paths, e.GetPath())
		}
	}
	slices.Sort(paths)
	return paths, tree.GetSHA(), tree.GetTruncated(), nil
}

// filePage reads one batch (ghFileBatch) of the files of a repository's
// branch and emits their documents, as
// Onyx's _fetch_repo_files: the tree is listed at the stage's first step
// (and again, by its SHA, at each later one), unless the repository was
// not pushed to since start; a truncated tree is a failure of its own. It
// reports whether there are more batches.
func (g *GitHub) filePage(ctx context.Context, repo *ghRepo, cp *ghCheckpoint, start time.Time, out Emitter) (bool, error) {
	branch := g.branch(repo)
	changed := cp.FileTree != "" && cp.FileBranch != branch
	if changed { // A resumed checkpoint of another branch: list again.
		cp.FileTree, cp.CurrPage = "", 0
	}
	var paths []string
	switch {
	case cp.FileTree == "none":
		return false, nil
	case cp.FileTree == "" && !changed && repo.PushedAt != nil && repo.PushedAt.Before(start):
		g.env.Log.Debug("github connector: no push since the window's start; files skipped", "repository", repo.FullName)
		cp.FileTree, cp.FileBranch = "none", branch
		return false, nil
	case cp.FileTree == "":
		var sha string
		var truncated bool
		var err error
		if paths, sha, truncated, err = g.fileTree(ctx, repo, branch); err != nil {
			return false, err
		}
		cp.FileTree, cp.FileBranch = sha, branch
		if truncated {
			if err := out.Failure(ctx, &quarry.ConnectorFailure{FailedEntity: &quarry.EntityFailure{EntityID: repo.FullName + ":files"},
				FailureMessage: fmt.Sprintf("GitHub truncated the file tree for %s; some files could not be enumerated and were not indexed.", repo.FullName)}); err != nil {
				return false, err
			}
		}
	default:
		var err error
		if paths, _, _, err = g.fileTree(ctx, repo, cp.FileTree); err != nil {
			return false, err
		}
	}
	page := cp.CurrPage
	cp.CurrPage++
	batch := paths[min(page*ghFileBatch, len(paths)):min((page+1)*ghFileBatch, len(paths))]
	var access *quarry.ExternalAccess
	if len(batch) > 0 {
		var err error
		if access, err = g.repoAccess(ctx, repo); err != nil {
			return false, err
		}
	}
	for _, path := range batch {
		link := repo.HTMLURL + "/blob/" + branch + "/" + path
		d, failure, err := g.fileDocument(ctx, repo, branch, path, access)
		switch {
		case err != nil:
			return false, err
		case failure != "":
			err = out.Failure(ctx, &quarry.ConnectorFailure{FailedDocument: &quarry.DocumentFailure{DocumentID: link, DocumentLink: &link},
				FailureMessage: failure})
		default:
			err = out.Document(ctx, d)
		}
		if err != nil {
			return false, err
		}
	}
	return (page+1)*ghFileBatch < len(paths), nil
}

// fileDocument is the document of a file, as Onyx's
// _convert_file_to_document makes it; a file that is not text, or that
// GitHub does not give, is a failure of its own (failure says why); err
// is the run's.
func (g *GitHub) fileDocument(ctx context.Context, repo *ghRepo, branch, path string, access *quarry.ExternalAccess) (d *quarry.Document, failure string, err error) {
	var fc *github.RepositoryContent
	err = g.call(ctx, "get the content of "+path+" in "+repo.FullName, func(ctx context.Context) (resp *github.Response, err error) {
		fc, _, resp, err = g.api.Repositories.GetContents(ctx, repo.Owner, repo.Name, path, &github.RepositoryContentGetOptions{Ref: branch})
		return resp, err
	})
	var ce *CredentialError
	if errors.As(err, &ce) || ctx.Err() != nil {
		return nil, "", cmp.Or(ctx.Err(), err)
	}
	if err == nil && fc == nil {
		err = fmt.Errorf("Expected a file at %s, got a directory", path)
	}
	var raw string
	if err == nil {
		raw, err = fc.GetContent()
	}
	if err != nil {
		return nil, fmt.Sprintf("Error converting file %s to document: %v", path, err), nil
	}
	if !ghIsText([]byte(raw)) {
		return nil, "Skipping non-text/undecodable file: " + path, nil
	}
	link := repo.HTMLURL + "/blob/" + branch + "/" + path
	ext := ""
	base := path[strings.LastIndex(path, "/")+1:]
	if i := strings.LastIndex(base, "."); i > 0 {
		ext = strings.ToLower(base[i:])
	}
	d = &quarry.Document{
		ID:                 link,
		Sections:           []quarry.Section{{Text: ghText([]byte(raw)), Link: &link}},
		Source:             GitHubSource,
		SemanticIdentifier: path,
		Metadata:           map[string]any{"object_type": "File", "repo": repo.FullName, "path": path, "file_extension": ext, "branch": branch},
		ExternalAccess:     access,
	}
	if repo.PushedAt != nil { // Onyx's stand-in: the tree gives no time per file.
		d.DocUpdatedAt = &quarry.Time{Time: repo.PushedAt.UTC()}
	}
	return d, "", nil
}

// ghIsText is Onyx's is_text_file: the first 1024 bytes are all printable
// or whitespace (bytes 7, 8, 9, 10, 12, 13, 27, 0x20 to 0xff but 0x7f).
func ghIsText(b []byte) bool {
	for _, c := range b[:min(len(b), 1024)] {
		if c < 0x20 && c != 7 && c != 8 && c != 9 && c != 10 && c != 12 && c != 13 && c != 27 || c == 0x7f {
			return false
		}
	}
	return true
}

// ghText is a file's text: UTF-8 when it is (Onyx's detect_encoding tries
// it first), else Latin-1 (where Onyx asks chardet).
func ghText(b []byte) string {
	if utf8.Valid(b) {
		return string(b)
	}
	r := make([]rune, len(b))
	for i, c := range b {
		r[i] = rune(c)
	}
	return string(r)
}
