package quarry

import (
	"cmp"
	"slices"
	"strings"
	"unicode/utf8"
)

// Tags: a document's metadata as Onyx v4.6.1 keeps it in its tag table
// (backend/onyx/db/tag.py), what a search filters by (SearchFilters.Tags)
// and what GET /query/valid-tags lists. The store keeps each tag once
// (store/tag.go) and which copies of documents carry it.

// Tag is a key and a value of a document's metadata, from a source, and
// whether the value was an item of a list (Onyx's Tag row: the same key
// and value from a list and from a single value are two tags).
type Tag struct {
	ID     int64 // The store's id of the tag, shared by every document carrying it (0 before it is stored).
	Key    string
	Value  string
	Source DocumentSource
	IsList bool
}

// MaxTagLength is how many characters a tag's key and value may have
// together: a longer one is not kept as a tag (Onyx's check_tag_validity),
// so a search cannot filter by it and valid-tags never lists it.
const MaxTagLength = 255

// Tags returns d's metadata as tags, each key with each of its values
// (IsList for the items of a list), sorted by key, value and IsList, each
// once; a key and value longer than MaxTagLength together are left out.
func (d *Document) Tags() []Tag {
	var out []Tag
	add := func(k, v string, list bool) {
		if utf8.RuneCountInString(k)+utf8.RuneCountInString(v) <= MaxTagLength {
			out = append(out, Tag{Key: k, Value: v, Source: d.Source, IsList: list})
		}
	}
	for k, v := range d.Metadata {
		switch v := v.(type) {
		case string:
			add(k, v, false)
		case []string:
			for _, s := range v {
				add(k, s, true)
			}
		case []any:
			for _, s := range v {
				if s, ok := s.(string); ok {
					add(k, s, true)
				}
			}
		}
	}
	slices.SortFunc(out, compareTags)
	return slices.CompactFunc(out, func(a, b Tag) bool { return compareTags(a, b) == 0 })
}

// compareTags orders tags by key, value, source, then single values first.
func compareTags(a, b Tag) int {
	return cmp.Or(cmp.Compare(a.Key, b.Key), cmp.Compare(a.Value, b.Value), cmp.Compare(a.Source, b.Source),
		cmp.Compare(boolInt(a.IsList), boolInt(b.IsList)))
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}

// FoldTag returns s as tags are matched by prefix: lower case (Onyx
// matches with PostgreSQL's ILIKE).
func FoldTag(s string) string { return strings.ToLower(s) }

// MaxTagLimit is how many tags valid-tags lists at most, and
// DefaultTagLimit how many unless asked (Onyx's default).
const (
	MaxTagLimit     = 1000
	DefaultTagLimit = 50
)

// TagQuery is what GET /query/valid-tags asks for: the tags whose key
// begins with KeyPrefix or whose value begins with ValuePrefix (both, with
// Both), case-insensitively (FoldTag); an empty prefix is no condition.
// Sources, if any, narrow them to those sources; at most Limit of them.
type TagQuery struct {
	KeyPrefix, ValuePrefix string
	Both                   bool
	Sources                []DocumentSource
	Limit                  int
}

// ParseTagQuery returns the query of valid-tags' match_pattern, sources
// and limit, as Onyx's get_tags reads them: a pattern "author=bo" asks for
// the tags of key prefix "author" and value prefix "bo" (the value takes
// every "=" after the first); a pattern without "=" asks for the tags
// whose key or value begins with it. A limit of 0 (Onyx's "no limit") or
// above MaxTagLimit is MaxTagLimit.
func ParseTagQuery(pattern string, sources []DocumentSource, limit int) TagQuery {
	q := TagQuery{KeyPrefix: pattern, ValuePrefix: pattern, Sources: sources, Limit: limit}
	if k, v, ok := strings.Cut(pattern, "="); ok {
		q.KeyPrefix, q.ValuePrefix, q.Both = k, v, true
	}
	if q.Limit <= 0 || q.Limit > MaxTagLimit {
		q.Limit = MaxTagLimit
	}
	q.Sources = slices.Compact(slices.Sorted(slices.Values(q.Sources)))
	return q
}

// Branches returns the branches of q's search, its prefixes folded
// (FoldTag): with Both one, the key's and value's prefixes together;
// otherwise the key's prefix alone, then the value's alone. A query with
// no prefix is one branch that matches every tag.
func (q TagQuery) Branches() []TagQuery {
	q.KeyPrefix, q.ValuePrefix = FoldTag(q.KeyPrefix), FoldTag(q.ValuePrefix)
	if q.Both || q.KeyPrefix == "" || q.ValuePrefix == "" {
		q.Both = true
		return []TagQuery{q}
	}
	byKey, byValue := q, q
	byKey.ValuePrefix, byValue.KeyPrefix = "", ""
	return []TagQuery{byKey, byValue}
}

// ListedTags returns the tags valid-tags lists of found, the tags of each
// branch of q in its order (key then value): each key, value and source
// once (the same key and value from a list and from a single value are
// one), in the order found, at most q.Limit.
func (q TagQuery) ListedTags(found []Tag) []Tag {
	type kvs struct {
		k, v string
		s    DocumentSource
	}
	seen := map[kvs]bool{}
	out := []Tag{}
	for _, t := range found {
		if len(out) == q.Limit {
			break
		}
		if k := (kvs{t.Key, t.Value, t.Source}); !seen[k] {
			seen[k] = true
			out = append(out, t)
		}
	}
	return out
}
