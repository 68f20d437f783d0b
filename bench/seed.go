package bench

import (
	"context"
	"encoding/json"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/internal/progress"
	"github.com/quarryhq/quarry/store"
)

// SeedSpec sizes a synthetic deployment (see Seed).
type SeedSpec struct {
	Pairs       int // cc-pairs; pair i uses credential i mod Credentials
	Connectors  int // connectors the pairs are spread over
	Credentials int // credentials, each with 3–6 secret fields
	Groups      int // user groups; each pair is shared with 0–3 of them
}

// DefaultSeedSpec is the dataset of the status listing's benchmark, scaled
// to pairs: one connector per 5 pairs, one credential per pair, 100 groups.
func DefaultSeedSpec(pairs int) SeedSpec {
	return SeedSpec{Pairs: pairs, Connectors: max(1, pairs/5), Credentials: pairs, Groups: 100}
}

// Seeded is what Seed made: tokens for an admin and for a curator who is a
// member of a tenth of the groups and curates half of those.
type Seeded struct {
	AdminToken   string
	CuratorToken string
}

// seedReportEvery is the number of rows between two progress reports.
const seedReportEvery = 500

// Seed fills an empty database with a synthetic deployment for benchmarks
// and load tests, in one transaction (store.DB.Import), reporting progress
// (rows handed to the import so far, of rows in all; the last report
// once they are written) to report if it is not nil. The data is the same
// for the same spec, but for the API keys and their users' ids.
func Seed(ctx context.Context, db *store.DB, spec SeedSpec, report func(progress.Count)) (*Seeded, error) {
	if spec.Connectors < 1 || spec.Credentials < 1 || spec.Pairs < 0 || spec.Groups < 0 {
		return nil, fmt.Errorf("bench: bad seed spec %+v", spec)
	}
	if spec.Pairs > spec.Connectors*spec.Credentials {
		return nil, fmt.Errorf("bench: %d pairs cannot be made of %d connectors and %d credentials", spec.Pairs, spec.Connectors, spec.Credentials)
	}
	counts, err := db.ObjectCounts(ctx)
	if err != nil {
		return nil, err
	}
	for _, c := range counts {
		if c.Kind == "connectors" && c.Count > 0 {
			return nil, quarry.Errorf(quarry.ECONFLICT, "Seeding needs an empty database; this one has %d connectors", c.Count)
		}
	}
	out := &Seeded{}
	// The pairs and their groups are drawn first, so that the progress
	// total is exact.
	rng := rand.New(rand.NewPCG(1, 2))
	access := []quarry.AccessType{"private", "private", "private", "private", "private", "private", "private", "public", "public", "sync"}
	pairAccess := make([]quarry.AccessType, spec.Pairs+1)
	pairGroups := make([][]int64, spec.Pairs+1)
	rows := spec.Groups + spec.Connectors + spec.Credentials + spec.Pairs
	for p := 1; p <= spec.Pairs; p++ {
		pairAccess[p] = access[rng.IntN(len(access))]
		if spec.Groups > 0 {
			for _, g := range rng.Perm(spec.Groups)[:rng.IntN(min(3, spec.Groups)+1)] {
				pairGroups[p] = append(pairGroups[p], int64(g+1))
			}
			rows += len(pairGroups[p])
		}
	}
	total := int64(rows)
	var done int64
	// added counts n rows handed to the import, reporting every
	// seedReportEvery.
	added := func(n int) {
		before := done
		done += int64(n)
		if report != nil && done < total && done/seedReportEvery > before/seedReportEvery {
			report(progress.Count{Done: done, Total: total})
		}
	}
	err = db.Import(ctx, func(im *store.Importer) error {
		adminName, curatorName := "seed admin", "seed curator"
		admin, token, err := im.APIKey(&adminName, quarry.RoleAdmin)
		if err != nil {
			return err
		}
		out.AdminToken = token
		curator, token, err := im.APIKey(&curatorName, quarry.RoleCurator)
		if err != nil {
			return err
		}
		out.CuratorToken = token

		// The curator is a member of groups 1, 11, 21, … and curates 1,
		// 21, 41, ….
		for g := 1; g <= spec.Groups; g++ {
			group := &quarry.UserGroup{ID: int64(g), Name: fmt.Sprintf("group-%03d", g)}
			if g%10 == 1 {
				group.Users = []quarry.User{{ID: curator.UserID}}
			}
			if g%20 == 1 {
				group.CuratorIDs = []string{curator.UserID}
			}
			if err := im.Group(group); err != nil {
				return err
			}
			added(1)
		}

		sources := quarry.DocumentSource("").EnumValues()
		prune := int64(86400)
		for c := 1; c <= spec.Connectors; c++ {
			refresh := int64(600 + c%3600)
			err := im.Connector(&quarry.Connector{
				ID:          int64(c),
				Name:        fmt.Sprintf("connector-%05d", c),
				Source:      quarry.DocumentSource(sources[c%len(sources)]),
				InputType:   "poll",
				Config:      json.RawMessage(fmt.Sprintf(`{"base_url":"https://system-%d.example.com","space":"space-%d","include_archived":%t,"batch_size":%d}`, c, c, c%2 == 0, 50+c%200)),
				RefreshFreq: &refresh,
				PruneFreq:   &prune,
				AccessType:  quarry.AccessPrivate,
			}, &admin.UserID)
			if err != nil {
				return err
			}
			added(1)
		}

		for k := 1; k <= spec.Credentials; k++ {
			// The credential of pair k (k ≤ Pairs) matches its connector's source.
			source := sources[(1+(k-1)%spec.Connectors)%len(sources)]
			name := fmt.Sprintf("credential-%05d", k)
			err := im.Credential(&quarry.Credential{
				ID:             int64(k),
				Name:           &name,
				Source:         quarry.DocumentSource(source),
				CredentialJSON: seedSecret(rng, k),
				AdminPublic:    k%3 == 0,
				CuratorPublic:  k%7 == 0,
				UserID:         &admin.UserID,
			})
			if err != nil {
				return err
			}
			added(1)
		}

		for p := 1; p <= spec.Pairs; p++ {
			conn := 1 + (p-1)%spec.Connectors
			cred := 1 + ((p-1)/spec.Connectors+(p-1))%spec.Credentials
			if spec.Pairs <= spec.Credentials {
				cred = p
			}
			err := im.Pair(&quarry.CCPair{
				ID:           int64(p),
				Name:         fmt.Sprintf("pair-%05d", p),
				ConnectorID:  int64(conn),
				CredentialID: int64(cred),
				AccessType:   pairAccess[p],
				Status:       quarry.CCPairActive,
				Groups:       pairGroups[p],
				CreatorID:    &admin.UserID,
			})
			if err != nil {
				return err
			}
			added(1 + len(pairGroups[p]))
		}
		return nil
	})
	if err != nil {
		return nil, err
	}
	if report != nil {
		report(progress.Count{Done: total, Total: total})
	}
	return out, nil
}

// seedSecret returns the credential_json of seeded credential k: 3–6
// secret fields of realistic kinds and lengths.
func seedSecret(rng *rand.Rand, k int) json.RawMessage {
	fields := []string{
		fmt.Sprintf(`"username":"service-account-%d@example.com"`, k),
		fmt.Sprintf(`"api_token":%q`, seedToken(rng, 40)),
		fmt.Sprintf(`"password":%q`, seedToken(rng, 12)),
		fmt.Sprintf(`"client_secret":%q`, seedToken(rng, 64)),
		fmt.Sprintf(`"port":%d`, 1024+rng.IntN(60000)),
		fmt.Sprintf(`"refresh_token":%q`, seedToken(rng, 96)),
	}
	n := 3 + rng.IntN(4)
	return json.RawMessage("{" + strings.Join(fields[:n], ",") + "}")
}

func seedToken(rng *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}
