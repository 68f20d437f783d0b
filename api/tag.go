package api

import (
	"net/http"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
)

// errNoPrefix answers allow_prefix=false, which Onyx's get_tags does not
// implement either (it raises NotImplementedError: a 500).
var errNoPrefix = quarry.Errorf(quarry.EINVALID, "Cannot disable prefix match for now")

// handleValidTags serves GET /query/valid-tags: Onyx's get_tags, the tags
// of the documents the caller may find (quarry.TagQuery, the store's
// ValidTags).
func (s *Server) handleValidTags(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in validTagsRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	if !in.AllowPrefix {
		return errNoPrefix
	}
	pattern := ""
	if v := value(in.MatchPattern); v != nil {
		pattern = *v
	}
	tags, err := s.db.ValidTags(r.Context(), c, quarry.ParseTagQuery(pattern, in.Sources, int(min(in.Limit, quarry.MaxTagLimit))))
	if err != nil {
		return err
	}
	out := tagResponse{Tags: make([]sourceTag, len(tags))}
	for i, t := range tags {
		out.Tags[i] = sourceTag{TagKey: t.Key, TagValue: t.Value, Source: t.Source}
	}
	return writeJSON(w, http.StatusOK, out)
}
