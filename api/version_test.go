package api_test

import (
	"fmt"
	"runtime"
	"testing"
	"time"

	"github.com/quarryhq/quarry/api"
)

// TestVersion checks GET /version and the build labels of the metrics, for
// a release build and for a build that knows no revision.
func TestVersion(t *testing.T) {
	e := newEnv(t, func(c *api.Config) {
		c.Version, c.Revision, c.Modified = "v1.4.0", "047f9bba6c2692834fbbf4d85daa4cc16441a2dd", true
		c.RevisionTime = time.Date(2026, 11, 22, 2, 37, 11, 0, time.FixedZone("CET", 3600))
	})
	e.do(user{}, "GET", "/version", nil).want(t, 200, fmt.Sprintf(`{"version":"v1.4.0",
		"revision":"047f9bba6c2692834fbbf4d85daa4cc16441a2dd","revision_time":"2026-11-22T01:37:11Z",
		"modified":true,"go_version":%q}`, runtime.Version()))
	series := fmt.Sprintf(`quarry_build_info{go_version=%q,modified="true",revision="047f9bba6c2692834fbbf4d85daa4cc16441a2dd",revision_time="2026-11-22T01:37:11Z",version="v1.4.0"}`,
		runtime.Version())
	if got := sample(scrape(t, e), series); got != 1 {
		t.Errorf("%s = %v, want 1", series, got)
	}

	e = newEnv(t, func(c *api.Config) { c.Version = "" })
	e.do(user{}, "GET", "/version", nil).want(t, 200, fmt.Sprintf(`{"version":"dev","revision":null,"revision_time":null,
		"modified":false,"go_version":%q}`, runtime.Version()))
	e.do(e.admin, "GET", "/version", nil).want(t, 200, fmt.Sprintf(`{"version":"dev","revision":null,"revision_time":null,
		"modified":false,"go_version":%q}`, runtime.Version()))
}
