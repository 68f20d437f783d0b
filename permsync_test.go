package quarry

import (
	"fmt"
	"slices"
	"testing"
	"time"
)

func TestNextSyncAt(t *testing.T) {
	base := TimeFromMicros(1_000_000_000_000)
	at := func(d time.Duration) *Time { t := Time{base.Add(d)}; return &t }
	epoch := TimeFromMicros(0)
	indexed := at(time.Minute)
	perm, group := AttemptPermissionSync, AttemptGroupSync
	for _, c := range []struct {
		name string
		f    SyncFacts
		want *Time
	}{
		{"never synced: at once", SyncFacts{Kind: perm, Source: "github", Status: CCPairActive, AccessType: AccessSync, LastSuccessfulIndex: indexed}, &epoch},
		{"a permission sync waits for a first indexing", SyncFacts{Kind: perm, Source: "github", Status: CCPairActive, AccessType: AccessSync}, nil},
		{"a group sync does not", SyncFacts{Kind: group, Source: "github", Status: CCPairActive, AccessType: AccessSync}, &epoch},
		{"github: 5 minutes after the last", SyncFacts{Kind: perm, Source: "github", Status: CCPairActive, AccessType: AccessSync,
			LastSuccessfulIndex: indexed, LastSyncEnded: at(time.Hour)}, at(time.Hour + 5*time.Minute)},
		{"jira groups: 30 minutes", SyncFacts{Kind: group, Source: "jira", Status: CCPairActive, AccessType: AccessSync,
			LastSyncEnded: at(time.Hour)}, at(90 * time.Minute)},
		{"slack has no group sync", SyncFacts{Kind: group, Source: "slack", Status: CCPairActive, AccessType: AccessSync}, nil},
		{"a source Onyx does not sync", SyncFacts{Kind: perm, Source: "web", Status: CCPairActive, AccessType: AccessSync, LastSuccessfulIndex: indexed}, nil},
		{"not a sync pair", SyncFacts{Kind: perm, Source: "github", Status: CCPairActive, AccessType: AccessPublic, LastSuccessfulIndex: indexed}, nil},
		{"not active yet", SyncFacts{Kind: group, Source: "github", Status: CCPairInitialIndexing, AccessType: AccessSync}, nil},
		{"asked for: at once, whatever the access type", SyncFacts{Kind: perm, Source: "web", Status: CCPairScheduled, AccessType: AccessPrivate, Requested: true}, &epoch},
		{"asked for, paused", SyncFacts{Kind: perm, Source: "github", Status: CCPairPaused, AccessType: AccessSync, Requested: true}, nil},
		{"pushed documents: never", SyncFacts{Kind: perm, Source: "ingestion_api", Status: CCPairActive, AccessType: AccessSync, Requested: true}, nil},
	} {
		t.Run(c.name, func(t *testing.T) {
			got := c.f.NextSyncAt()
			if (got == nil) != (c.want == nil) || (got != nil && !got.Equal(c.want.Time)) {
				t.Errorf("NextSyncAt() = %v, want %v", got, c.want)
			}
		})
	}
}

func TestReportSync(t *testing.T) {
	t1, t2 := Time{time.Date(2026, 11, 21, 10, 0, 0, 0, time.UTC)}, Time{time.Date(2026, 11, 21, 11, 0, 0, 0, time.UTC)}
	msg := "The github connector cannot list its documents' permissions"
	str := func(p any) string {
		switch v := p.(type) {
		case *string:
			if v != nil {
				return *v
			}
		case *Time:
			if v != nil {
				return v.Format(time.RFC3339)
			}
		}
		return "null"
	}
	for _, tt := range []struct {
		name              string
		source            DocumentSource
		access            AccessType
		latest            *IndexAttempt
		lastPerm, lastGrp *Time
		want              string
	}{
		{"not a sync pair", "github", AccessPublic, &IndexAttempt{Status: IndexInProgress}, &t1, &t2, "full null, syncing false, status null, finished null, error null"},
		{"never", "github", AccessSync, nil, nil, nil, "full null, syncing false, status null, finished null, error null"},
		{"waiting: not syncing, as Onyx", "github", AccessSync, &IndexAttempt{Status: IndexNotStarted}, nil, nil,
			"full null, syncing false, status not_started, finished null, error null"},
		{"running", "github", AccessSync, &IndexAttempt{Status: IndexInProgress}, nil, &t1, "full null, syncing true, status in_progress, finished null, error null"},
		{"both synced: the older", "github", AccessSync, &IndexAttempt{Status: IndexSuccess, TimeUpdated: t2}, &t2, &t1,
			"full 2026-11-21T10:00:00Z, syncing false, status success, finished 2026-11-21T11:00:00Z, error null"},
		{"slack needs no group sync", "slack", AccessSync, &IndexAttempt{Status: IndexSuccess, TimeUpdated: t2}, &t2, nil,
			"full 2026-11-21T11:00:00Z, syncing false, status success, finished 2026-11-21T11:00:00Z, error null"},
		{"interrupted is failed", "github", AccessSync, &IndexAttempt{Status: IndexInterrupted, TimeUpdated: t1}, nil, nil,
			"full null, syncing false, status failed, finished 2026-11-21T10:00:00Z, error null"},
		{"failed", "github", AccessSync, &IndexAttempt{Status: IndexFailed, TimeUpdated: t1, ErrorMsg: &msg}, &t2, &t2,
			"full 2026-11-21T11:00:00Z, syncing false, status failed, finished 2026-11-21T10:00:00Z, error " + msg},
	} {
		t.Run(tt.name, func(t *testing.T) {
			r := ReportSync(tt.source, tt.access, tt.latest, tt.lastPerm, tt.lastGrp)
			got := fmt.Sprintf("full %s, syncing %v, status %s, finished %s, error %s", str(r.LastFull), r.Syncing, str(r.LastStatus), str(r.LastFinished), str(r.LastError))
			if got != tt.want {
				t.Errorf("got  %s\nwant %s", got, tt.want)
			}
		})
	}
}

// TestSyncedEmailsAreKeys checks that a source's emails are kept as the
// keys of accounts' emails (EmailKey), not merely lowercased: full-width
// letters, a Kelvin sign and a sharp s match the account they name.
func TestSyncedEmailsAreKeys(t *testing.T) {
	emails := []string{" Ａnn@Corp.Example ", "\u212Aate@corp.example", "STRASSE@corp.example", "ann@corp.example"}
	g := ExternalGroup{ID: "eng", UserEmails: append(emails, "straße@corp.example")}
	if got, want := g.Members(), []string{"ann@corp.example", "kate@corp.example", "strasse@corp.example"}; !slices.Equal(got, want) {
		t.Errorf("Members() = %q, want %q", got, want)
	}
	a := ExternalAccess{ExternalUserEmails: emails}
	if got, want := a.Principals(), []string{"email:ann@corp.example", "email:kate@corp.example", "email:strasse@corp.example"}; !slices.Equal(got, want) {
		t.Errorf("Principals() = %q, want %q", got, want)
	}
	for _, e := range []string{"ann@corp.example", "Kate@corp.example", "straße@corp.example"} {
		if k := EmailKey(e); !slices.Contains(g.Members(), k) {
			t.Errorf("the account %s (key %s) is not among the members", e, k)
		}
	}
}

func TestResyncAfterSourceChange(t *testing.T) {
	for _, c := range []struct {
		fields []string
		want   bool
	}{
		{[]string{"name", "refresh_freq"}, false},
		{[]string{"connector_specific_config"}, true},
		{[]string{"source"}, true},
		{[]string{"name", "credential_json"}, true},
		{nil, false},
	} {
		if got := SourceChangedFields(c.fields); got != c.want {
			t.Errorf("SourceChangedFields(%q) = %v, want %v", c.fields, got, c.want)
		}
	}
	for _, c := range []struct {
		source DocumentSource
		access AccessType
		kind   AttemptKind
		want   bool
	}{
		{"github", AccessSync, AttemptGroupSync, true},
		{"github", AccessSync, AttemptPermissionSync, true},
		{"slack", AccessSync, AttemptGroupSync, false},
		{"github", AccessPrivate, AttemptPermissionSync, false},
		{"web", AccessSync, AttemptPermissionSync, false},
	} {
		if got := ResyncAfterSourceChange(c.source, c.access, c.kind); got != c.want {
			t.Errorf("ResyncAfterSourceChange(%s, %s, %s) = %v, want %v", c.source, c.access, c.kind, got, c.want)
		}
	}
}
