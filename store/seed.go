package store

import (
	"context"
	"fmt"
	"math/rand/v2"
	"strings"

	"github.com/quarryhq/quarry"
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

// seedBatch is the number of rows per INSERT statement.
const seedBatch = 500

// Seed fills an empty database with a synthetic deployment for benchmarks
// and load tests, in one transaction, reporting progress (rows written so
// far, rows in all) to progress if it is not nil. The data is the same for
// the same spec.
func (db *DB) Seed(ctx context.Context, spec SeedSpec, progress func(done, total int)) (*Seeded, error) {
	if spec.Connectors < 1 || spec.Credentials < 1 || spec.Pairs < 0 || spec.Groups < 0 {
		return nil, fmt.Errorf("store: bad seed spec %+v", spec)
	}
	if spec.Pairs > spec.Connectors*spec.Credentials {
		return nil, fmt.Errorf("store: %d pairs cannot be made of %d connectors and %d credentials", spec.Pairs, spec.Connectors, spec.Credentials)
	}
	out := &Seeded{}
	// The pairs and their groups are drawn first, so that the progress
	// total is exact.
	rng := rand.New(rand.NewPCG(1, 2))
	access := []string{"private", "private", "private", "private", "private", "private", "private", "public", "public", "sync"}
	pairAccess := make([]string, spec.Pairs+1)
	var pairGroups [][]any
	for p := 1; p <= spec.Pairs; p++ {
		pairAccess[p] = access[rng.IntN(len(access))]
		if spec.Groups > 0 {
			for _, g := range rng.Perm(spec.Groups)[:rng.IntN(min(3, spec.Groups)+1)] {
				pairGroups = append(pairGroups, []any{p, g + 1})
			}
		}
	}
	total := spec.Groups + spec.Connectors + spec.Credentials + spec.Pairs + len(pairGroups)
	done := 0
	report := func(n int) {
		done += n
		if progress != nil {
			progress(done, total)
		}
	}
	err := db.update(ctx, func(tx *Tx) error {
		var n int
		if err := tx.QueryRowContext(ctx, `SELECT COUNT(*) FROM connectors`).Scan(&n); err != nil {
			return err
		}
		if n > 0 {
			return quarry.Errorf(quarry.ECONFLICT, "Seeding needs an empty database; this one has %d connectors", n)
		}
		adminName, curatorName := "seed admin", "seed curator"
		admin, token, err := tx.createAPIKey(ctx, nil, &adminName, quarry.RoleAdmin)
		if err != nil {
			return err
		}
		out.AdminToken = token
		curator, token, err := tx.createAPIKey(ctx, nil, &curatorName, quarry.RoleCurator)
		if err != nil {
			return err
		}
		out.CuratorToken = token

		now := tx.now.Micros()
		var rows [][]any
		flush := func(table, columns string) error {
			err := tx.insertRows(ctx, table, columns, rows)
			report(len(rows))
			rows = rows[:0]
			return err
		}
		add := func(table, columns string, row ...any) error {
			rows = append(rows, row)
			if len(rows) == seedBatch {
				return flush(table, columns)
			}
			return nil
		}

		const groupCols = "id, name, name_key, created_at, updated_at"
		for g := 1; g <= spec.Groups; g++ {
			name := fmt.Sprintf("group-%03d", g)
			if err := add("user_groups", groupCols, g, name, quarry.FoldCase(name), now, now); err != nil {
				return err
			}
		}
		if err := flush("user_groups", groupCols); err != nil {
			return err
		}
		for g := 1; g <= spec.Groups; g += 10 {
			if _, err := tx.ExecContext(ctx, `INSERT INTO user_group_members (group_id, user_id, is_curator) VALUES ($1, $2, $3)`,
				g, curator.UserID, g%20 == 1); err != nil {
				return err
			}
		}

		const connCols = "id, name, source, input_type, config, refresh_freq, prune_freq, creator_id, created_at, updated_at"
		sources := quarry.DocumentSource("").EnumValues()
		for c := 1; c <= spec.Connectors; c++ {
			config := fmt.Sprintf(`{"base_url":"https://system-%d.example.com","space":"space-%d","include_archived":%t,"batch_size":%d}`,
				c, c, c%2 == 0, 50+c%200)
			if err := add("connectors", connCols, c, fmt.Sprintf("connector-%05d", c), sources[c%len(sources)], "poll",
				config, 600+c%3600, 86400, admin.UserID, now, now); err != nil {
				return err
			}
		}
		if err := flush("connectors", connCols); err != nil {
			return err
		}

		const credCols = "id, name, source, secret, admin_public, curator_public, user_id, created_at, updated_at"
		for k := 1; k <= spec.Credentials; k++ {
			// The credential of pair k (k ≤ Pairs) matches its connector's source.
			source := sources[(1+(k-1)%spec.Connectors)%len(sources)]
			if err := add("credentials", credCols, k, fmt.Sprintf("credential-%05d", k), source,
				db.keys.seal(purposeCredential, seedSecret(rng, k)), k%3 == 0, k%7 == 0, admin.UserID, now, now); err != nil {
				return err
			}
		}
		if err := flush("credentials", credCols); err != nil {
			return err
		}

		const pairCols = "id, name, connector_id, credential_id, access_type, creator_id, created_at"
		for p := 1; p <= spec.Pairs; p++ {
			conn := 1 + (p-1)%spec.Connectors
			cred := 1 + ((p-1)/spec.Connectors+(p-1))%spec.Credentials
			if spec.Pairs <= spec.Credentials {
				cred = p
			}
			if err := add("cc_pairs", pairCols, p, fmt.Sprintf("pair-%05d", p), conn, cred, pairAccess[p], admin.UserID, now); err != nil {
				return err
			}
		}
		if err := flush("cc_pairs", pairCols); err != nil {
			return err
		}
		for _, r := range pairGroups {
			if err := add("cc_pair_groups", "cc_pair_id, group_id", r...); err != nil {
				return err
			}
		}
		if err := flush("cc_pair_groups", "cc_pair_id, group_id"); err != nil {
			return err
		}
		if db.dialect == Postgres {
			for _, t := range []string{"user_groups", "connectors", "credentials", "cc_pairs"} {
				if _, err := tx.ExecContext(ctx, `SELECT setval(pg_get_serial_sequence('`+t+`', 'id'), (SELECT MAX(id) FROM `+t+`))`); err != nil {
					return err
				}
			}
		}
		tx.changed(ChangeAll)
		return tx.audit(ctx, nil, "seed", "database", 0, []string{"user_groups", "connectors", "credentials", "cc_pairs"})
	})
	if err != nil {
		return nil, err
	}
	return out, nil
}

// seedSecret returns the credential_json of seeded credential k: 3–6
// secret fields of realistic kinds and lengths.
func seedSecret(rng *rand.Rand, k int) []byte {
	fields := []string{
		fmt.Sprintf(`"username":"service-account-%d@example.com"`, k),
		fmt.Sprintf(`"api_token":%q`, seedToken(rng, 40)),
		fmt.Sprintf(`"password":%q`, seedToken(rng, 12)),
		fmt.Sprintf(`"client_secret":%q`, seedToken(rng, 64)),
		fmt.Sprintf(`"port":%d`, 1024+rng.IntN(60000)),
		fmt.Sprintf(`"refresh_token":%q`, seedToken(rng, 96)),
	}
	n := 3 + rng.IntN(4)
	return []byte("{" + strings.Join(fields[:n], ",") + "}")
}

func seedToken(rng *rand.Rand, n int) string {
	const alphabet = "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"
	b := make([]byte, n)
	for i := range b {
		b[i] = alphabet[rng.IntN(len(alphabet))]
	}
	return string(b)
}

// insertRows inserts rows into table with one multi-row INSERT.
func (tx *Tx) insertRows(ctx context.Context, table, columns string, rows [][]any) error {
	if len(rows) == 0 {
		return nil
	}
	var b strings.Builder
	fmt.Fprintf(&b, "INSERT INTO %s (%s) VALUES ", table, columns)
	args := make([]any, 0, len(rows)*len(rows[0]))
	for i, r := range rows {
		if i > 0 {
			b.WriteString(", ")
		}
		b.WriteByte('(')
		for j, v := range r {
			if j > 0 {
				b.WriteString(", ")
			}
			args = append(args, v)
			// SQLite looks $n names up one by one: plain ? is much
			// faster for thousands of parameters.
			if tx.db.dialect == SQLite {
				b.WriteByte('?')
			} else {
				fmt.Fprintf(&b, "$%d", len(args))
			}
		}
		b.WriteByte(')')
	}
	_, err := tx.ExecContext(ctx, b.String(), args...)
	return err
}
