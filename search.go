package quarry

import (
	"cmp"
	"encoding/json"
	"fmt"
	"slices"
	"sort"
	"strings"
)

// Search: what the domain says of it (who may search, the filters and the
// results a search gives, a document's title, tags and access as the index
// keeps them). The engine (chunks, queries, the index's codec, scoring,
// highlights) is package index; the index's tables and the rights in SQL
// are the store's (store/search.go).

// DocumentTitle returns the title the index keeps for d: its title, or its
// semantic identifier.
func (d *Document) DocumentTitle() string {
	if d.Title != nil && strings.TrimSpace(*d.Title) != "" {
		return *d.Title
	}
	return d.SemanticIdentifier
}

// ExternalAccess is the access to a document that a connector of a sync
// pair reports from its source: Onyx's ExternalAccess.
type ExternalAccess struct {
	ExternalUserEmails   []string `json:"external_user_emails"`
	ExternalUserGroupIDs []string `json:"external_user_group_ids"`
	IsPublic             bool     `json:"is_public"`
}

// ExternalGroup is a group of people at a source, as a sync pair's
// connector lists it for the group sync: Onyx's ExternalUserGroup. A
// document's access names it by ID (ExternalAccess.ExternalUserGroupIDs);
// its members are matched to Quarry's people by email, compared by their
// keys (EmailKey).
type ExternalGroup struct {
	ID         string   `json:"id"`
	UserEmails []string `json:"user_emails"`
}

// Principals returns the principals of a's access as the index keeps them:
// "public", "email:" and an address's key (EmailKey, as an account's
// email is kept), "group:" and an external group id; each once, sorted.
func (a *ExternalAccess) Principals() []string {
	set := map[string]bool{}
	if a.IsPublic {
		set["public"] = true
	}
	for _, e := range a.ExternalUserEmails {
		if e = EmailKey(e); e != "" {
			set["email:"+e] = true
		}
	}
	for _, g := range a.ExternalUserGroupIDs {
		if g != "" {
			set["group:"+g] = true
		}
	}
	out := make([]string, 0, len(set))
	for p := range set {
		out = append(out, p)
	}
	sort.Strings(out)
	return out
}

// OwnerNames returns the names of owners (Onyx's BasicExpertInfo, as JSON)
// as Onyx's search results give them (basic_expert_info_representation):
// "first middle last", or the display name, or the email, or the first
// name; owners with none are left out. Nil when there are no owners.
func OwnerNames(owners []json.RawMessage) []string {
	if len(owners) == 0 {
		return nil
	}
	out := []string{}
	for _, raw := range owners {
		var o struct {
			DisplayName   *string `json:"display_name"`
			FirstName     *string `json:"first_name"`
			MiddleInitial *string `json:"middle_initial"`
			LastName      *string `json:"last_name"`
			Email         *string `json:"email"`
		}
		if json.Unmarshal(raw, &o) != nil {
			continue
		}
		s := func(p *string) string {
			if p == nil {
				return ""
			}
			return *p
		}
		switch {
		case s(o.FirstName) != "" && s(o.LastName) != "":
			mid := "None"
			if o.MiddleInitial != nil {
				mid = *o.MiddleInitial
			}
			out = append(out, s(o.FirstName)+" "+mid+" "+s(o.LastName))
		case s(o.DisplayName) != "":
			out = append(out, s(o.DisplayName))
		case strings.Contains(s(o.Email), "@"):
			out = append(out, s(o.Email))
		case s(o.FirstName) != "":
			out = append(out, s(o.FirstName))
		}
	}
	return out
}

// SearchFilters narrow a search: Onyx's BaseFilters, as far as Quarry
// keeps what they name.
type SearchFilters struct {
	Sources []DocumentSource // Any of these sources; all when empty.
	// DocumentSets are sets named by a person (Onyx's filters.document_set):
	// any of them, each one the person may see (Caller.CheckDocumentSetNames),
	// or the search is refused. Kept as given: a refusal names them so.
	DocumentSets []string
	// DocumentSetIDs are sets named by what the person uses (an
	// assistant's): any of them, not checked against the person, as an
	// assistant's sets were checked when they were given it.
	DocumentSetIDs []int64
	UpdatedAfter   *Time       // Updated at or after (documents without a time pass, as in Onyx).
	UpdatedBefore  *Time       // Updated at or before.
	Tags           [][2]string // Any of these metadata keys and values.
}

// MaxSearchTags is how many different tags a search may filter by, and
// MaxSearchDocumentSets how many document sets.
const (
	MaxSearchTags         = 100
	MaxSearchDocumentSets = 100
)

// Normalized returns f with each source and each tag once (a request may
// repeat them), or an EINVALID error when it names more than
// MaxSearchTags different tags or MaxSearchDocumentSets document sets, or
// a set or tag holds the NUL character (ErrNUL).
func (f SearchFilters) Normalized() (SearchFilters, error) {
	if slices.ContainsFunc(f.DocumentSets, hasNUL) || slices.ContainsFunc(f.Tags, func(t [2]string) bool { return hasNUL(t[0]) || hasNUL(t[1]) }) {
		return f, ErrNUL
	}
	if n := len(f.DocumentSets) + len(f.DocumentSetIDs); n > MaxSearchDocumentSets {
		return f, Errorf(EINVALID, "A search filters by %d document sets at most; this one names %d", MaxSearchDocumentSets, n)
	}
	f.Sources = slices.Compact(slices.Sorted(slices.Values(f.Sources)))
	f.Tags = slices.CompactFunc(slices.SortedFunc(slices.Values(f.Tags), func(a, b [2]string) int {
		return cmp.Or(cmp.Compare(a[0], b[0]), cmp.Compare(a[1], b[1]))
	}), func(a, b [2]string) bool { return a == b })
	if len(f.Tags) > MaxSearchTags {
		return f, Errorf(EINVALID, "A search filters by %d tags at most; this one names %d", MaxSearchTags, len(f.Tags))
	}
	return f, nil
}

// SearchHit is a result of a search: the best chunk of a pair's copy of a
// document the caller may see, the document's facts, and the pair it came
// from. A document several pairs hold is a result for each copy the
// caller may see: each copy stays its own (see DocumentCopy).
type SearchHit struct {
	DocumentID         string
	Pair               PairRef // The pair the copy is of.
	ChunkNo            int
	SemanticIdentifier string
	Link               *string
	Blurb              string
	Source             DocumentSource
	Metadata           map[string]any
	Score              float64
	MatchHighlights    []string
	UpdatedAt          *Time
	PrimaryOwners      []string
	SecondaryOwners    []string
	Content            string // The chunk's text.
}

// PairRef names the cc-pair a copy of a document comes from, as search
// shows it to those who may read the copy: its id (which alone tells
// pairs apart: names need not be unique), name and access type.
type PairRef struct {
	ID         int64
	Name       string
	AccessType AccessType
}

// String returns r as messages name it: its id, quoted name and access
// type.
func (r PairRef) String() string { return fmt.Sprintf("%d (%q, %s)", r.ID, r.Name, r.AccessType) }

// DocumentCopy is one pair's copy of a document. Documents are stored per
// pair, and pairs that hold a document of the same id each keep their own
// copy: nobody may decide what a person reads under a document that person
// can see from a pair they did not choose, so search, fetch and the
// listings give each copy as its own, with its pair, and never one copy in
// place of another.
type DocumentCopy struct {
	Pair     PairRef
	Document *Document
}

// AmbiguousDocumentError answers a document asked for by its id alone
// (without its pair) that several pairs the caller may read hold: the
// caller must name the copy. Its code is ECONFLICT; Pairs are the pairs
// holding a copy the caller may read, by id.
type AmbiguousDocumentError struct {
	ID    string
	Pairs []PairRef
}

// Error implements the error interface.
func (e *AmbiguousDocumentError) Error() string { return e.Unwrap().Error() }

// Unwrap returns the *Error of e, as Onyx's routes answer it: the pairs to
// choose from, by the cc_pair_id that names one.
func (e *AmbiguousDocumentError) Unwrap() error {
	names := make([]string, len(e.Pairs))
	for i, p := range e.Pairs {
		names[i] = p.String()
	}
	return Errorf(ECONFLICT, "Document %q is in %d pairs you may search; name one with cc_pair_id: %s",
		ClipText(e.ID, 200), len(e.Pairs), strings.Join(names, ", "))
}

// ErrNoPermission is Onyx's refusal of a route that needs a permission the
// caller (or the token it came with) does not hold.
var ErrNoPermission = Errorf(EFORBIDDEN, "You do not have the required permissions for this action.")

// CanSearch reports whether c may search the documents: it holds
// read:search (every role but limited; a personal access token only with
// that scope or one that implies it) and is a person or an API key, not
// the company's directory.
func (c *Caller) CanSearch() bool { return c.Directory == nil && c.Has(PermReadSearch) }

// CheckSearch refuses a caller who may not search (ErrNoPermission).
func (c *Caller) CheckSearch() error {
	if !c.CanSearch() {
		return ErrNoPermission
	}
	return nil
}
