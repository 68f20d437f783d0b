package quarry

import (
	"testing"
	"time"
)

func TestNextPruneAt(t *testing.T) {
	created := TimeFromMicros(1_000_000_000_000)
	day := int64(86400)
	zero := int64(0)
	at := func(d time.Duration) *Time { t := Time{created.Add(d)}; return &t }
	epoch := TimeFromMicros(0)
	indexed := at(time.Minute)
	for _, c := range []struct {
		name string
		f    PruneFacts
		want *Time
	}{
		{"no prune_freq", PruneFacts{Source: "web", Status: CCPairActive, LastSuccessfulIndex: indexed}, nil},
		{"prune_freq zero", PruneFacts{Source: "web", Status: CCPairActive, PruneFreq: &zero, LastSuccessfulIndex: indexed}, nil},
		{"never indexed", PruneFacts{Source: "web", Status: CCPairActive, PruneFreq: &day}, nil},
		{"never pruned: after the connector was made", PruneFacts{Source: "web", Status: CCPairActive, PruneFreq: &day,
			LastSuccessfulIndex: indexed}, at(24 * time.Hour)},
		{"after the last prune ended", PruneFacts{Source: "web", Status: CCPairActive, PruneFreq: &day,
			LastSuccessfulIndex: indexed, LastPruneEnded: at(time.Hour)}, at(25 * time.Hour)},
		{"not active yet", PruneFacts{Source: "web", Status: CCPairInitialIndexing, PruneFreq: &day, LastSuccessfulIndex: indexed}, nil},
		{"asked for: at once", PruneFacts{Source: "web", Status: CCPairScheduled, Requested: true}, &epoch},
		{"asked for, paused", PruneFacts{Source: "web", Status: CCPairPaused, Requested: true, PruneFreq: &day, LastSuccessfulIndex: indexed}, nil},
		{"asked for, deleting", PruneFacts{Source: "web", Status: CCPairDeleting, Requested: true}, nil},
		{"pushed documents: never", PruneFacts{Source: "ingestion_api", Status: CCPairActive, Requested: true, PruneFreq: &day,
			LastSuccessfulIndex: indexed}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			c.f.ConnectorCreated = created
			got := c.f.NextPruneAt()
			if (got == nil) != (c.want == nil) || (got != nil && !got.Equal(c.want.Time)) {
				t.Errorf("NextPruneAt() = %v, want %v", got, c.want)
			}
		})
	}
}
