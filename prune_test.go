package quarry

import (
	"fmt"
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

func TestReportPrune(t *testing.T) {
	at := Time{time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}
	msg := "The imap connector cannot list the ids of its documents"
	for _, tt := range []struct {
		name      string
		requested bool
		latest    *IndexAttempt
		want      string
	}{
		{"never", false, nil, "pruning false, last <nil> finished <nil> error <nil>"},
		{"asked for, not made", true, nil, "pruning true, last <nil> finished <nil> error <nil>"},
		{"waiting", false, &IndexAttempt{Status: IndexNotStarted}, "pruning true, last not_started finished <nil> error <nil>"},
		{"succeeded", false, &IndexAttempt{Status: IndexSuccess, TimeUpdated: at}, "pruning false, last success finished 2026-11-21T10:00:00Z error <nil>"},
		{"failed", false, &IndexAttempt{Status: IndexFailed, TimeUpdated: at, ErrorMsg: &msg},
			"pruning false, last failed finished 2026-11-21T10:00:00Z error " + msg},
		{"failed, asked for again", true, &IndexAttempt{Status: IndexCanceled, TimeUpdated: at, ErrorMsg: &msg},
			"pruning true, last canceled finished 2026-11-21T10:00:00Z error " + msg},
	} {
		r := ReportPrune(tt.requested, tt.latest)
		str := func(p any) string {
			switch v := p.(type) {
			case *IndexingStatus:
				if v != nil {
					return string(*v)
				}
			case *Time:
				if v != nil {
					return v.String()
				}
			case *string:
				if v != nil {
					return *v
				}
			}
			return "<nil>"
		}
		if got := fmt.Sprintf("pruning %v, last %s finished %s error %s", r.Pruning, str(r.LastStatus), str(r.LastFinished), str(r.LastError)); got != tt.want {
			t.Errorf("%s: %s, want %s", tt.name, got, tt.want)
		}
	}
}
