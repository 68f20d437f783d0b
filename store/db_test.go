package store_test

import (
	"context"
	"sync"
	"testing"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/store"
	"github.com/quarryhq/quarry/store/storetest"
)

var ctx = context.Background()

func TestMigrateConcurrently(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	var wg sync.WaitGroup
	dbs := make([]*store.DB, 4)
	errs := make([]error, len(dbs))
	for i := range dbs {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db, err := store.Open(ctx, u, keys, store.Options{})
			if err != nil {
				errs[i] = err
				return
			}
			dbs[i] = db
			errs[i] = db.Migrate(ctx)
		}()
	}
	wg.Wait()
	for i, err := range errs {
		if dbs[i] != nil {
			defer dbs[i].Close()
		}
		if err != nil {
			t.Fatalf("replica %d: %v", i, err)
		}
	}
	cur, latest, err := dbs[0].SchemaVersion(ctx)
	if err != nil || cur != latest || cur == 0 {
		t.Errorf("SchemaVersion = %d, %d, %v; want equal and non-zero", cur, latest, err)
	}
	tools, err := dbs[0].Tools(ctx)
	if err != nil {
		t.Fatal(err)
	}
	if len(tools) != 4 {
		t.Errorf("%d tools after concurrent migrations, want the 4 built-ins once", len(tools))
	}
}

func TestBootstrapOnce(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	var wg sync.WaitGroup
	tokens := make([]string, 8)
	for i := range tokens {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := a
			if i%2 == 1 {
				db = b
			}
			tok, err := db.Bootstrap(ctx)
			if err != nil {
				t.Error(err)
			}
			tokens[i] = tok
		}()
	}
	wg.Wait()
	made := 0
	for _, tok := range tokens {
		if tok != "" {
			made++
			c, err := a.Authenticate(ctx, quarry.HashAPIKey(tok))
			if err != nil || c.Role != quarry.RoleAdmin {
				t.Errorf("bootstrap key authenticates as %v, %v", c, err)
			}
		}
	}
	if made != 1 {
		t.Errorf("%d bootstrap keys made, want 1", made)
	}
	keysList, err := a.APIKeys(ctx)
	if err != nil || len(keysList) != 1 {
		t.Errorf("APIKeys = %d keys, %v; want 1", len(keysList), err)
	}
}

// TestUpdateCredentialReplicas runs conditional and unconditional updates
// of one credential from two handles on one database: each If-Match
// version is won exactly once, and no unconditional update is lost.
func TestUpdateCredentialReplicas(t *testing.T) {
	u, keys := storetest.URL(t), storetest.Key(t)
	a, b := storetest.OpenURL(t, u, keys), storetest.OpenURL(t, u, keys)
	_, token, err := a.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	if err != nil {
		t.Fatal(err)
	}
	admin, err := a.Authenticate(ctx, quarry.HashAPIKey(token))
	if err != nil {
		t.Fatal(err)
	}
	cred, err := a.CreateCredential(ctx, admin, quarry.CredentialInput{Source: "slack", CredentialJSON: map[string]any{"n": "0"}})
	if err != nil {
		t.Fatal(err)
	}

	const writers = 8
	var (
		wg   sync.WaitGroup
		mu   sync.Mutex
		wins = map[int64]int{}
	)
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := []*store.DB{a, b}[i%2]
			for v := cred.Version; v < cred.Version+5; v++ {
				_, err := db.UpdateCredential(ctx, admin, cred.ID, quarry.CredentialUpdate{
					CredentialJSON: map[string]any{"writer": i},
					IfMatch:        []int64{v},
					KeepEchoes:     true,
				})
				switch quarry.ErrorCode(err) {
				case "":
					mu.Lock()
					wins[v]++
					mu.Unlock()
				case quarry.EPRECONDITION:
				default:
					t.Errorf("writer %d at version %d: %v", i, v, err)
				}
			}
		}()
	}
	wg.Wait()
	for v := cred.Version; v < cred.Version+5; v++ {
		if wins[v] != 1 {
			t.Errorf("version %d won %d times, want exactly once", v, wins[v])
		}
	}

	// Unconditional updates all land: each adds its own key.
	base, err := a.Credential(ctx, admin, cred.ID)
	if err != nil {
		t.Fatal(err)
	}
	for i := range writers {
		wg.Add(1)
		go func() {
			defer wg.Done()
			db := []*store.DB{a, b}[i%2]
			if _, err := db.UpdateCredential(ctx, admin, cred.ID, quarry.CredentialUpdate{AdminPublic: new(i%2 == 0), KeepEchoes: true}); err != nil {
				t.Errorf("writer %d: %v", i, err)
			}
		}()
	}
	wg.Wait()
	final, err := a.Credential(ctx, admin, cred.ID)
	if err != nil {
		t.Fatal(err)
	}
	if final.Version != base.Version+writers {
		t.Errorf("version went from %d to %d after %d updates; an update was lost", base.Version, final.Version, writers)
	}
}

// TestCuratorWithoutFlagsKeepsRole checks that a curator who curates by
// role alone stays a curator when it leaves a group; losing its last
// curator flag demotes a curator who had one.
func TestCuratorWithoutFlagsKeepsRole(t *testing.T) {
	db := storetest.Open(t)
	_, token, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleAdmin)
	admin, _ := db.Authenticate(ctx, quarry.HashAPIKey(token))
	_, curToken, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleCurator)
	cur, _ := db.Authenticate(ctx, quarry.HashAPIKey(curToken))
	_, basicToken, _ := db.CreateAPIKey(ctx, nil, nil, quarry.RoleBasic)
	basic, _ := db.Authenticate(ctx, quarry.HashAPIKey(basicToken))
	role := func(token string) quarry.Role {
		c, err := db.Authenticate(ctx, quarry.HashAPIKey(token))
		if err != nil {
			t.Fatal(err)
		}
		return c.Role
	}
	name := "g"
	g, err := db.CreateGroup(ctx, admin, quarry.UserGroupInput{Name: &name, UserIDs: []string{cur.ID, basic.ID}})
	if err != nil {
		t.Fatal(err)
	}
	if err := db.SetCurator(ctx, admin, g.ID, cur.ID, false); err != nil {
		t.Fatal(err)
	}
	if r := role(curToken); r != quarry.RoleCurator {
		t.Errorf("clearing a flag it never had made the curator %s", r)
	}
	if err := db.SetCurator(ctx, admin, g.ID, basic.ID, true); err != nil {
		t.Fatal(err)
	}
	if r := role(basicToken); r != quarry.RoleCurator {
		t.Errorf("a basic user given a curator flag is %s, want curator", r)
	}
	if _, err := db.UpdateGroup(ctx, admin, g.ID, quarry.UserGroupInput{UserIDs: []string{}}); err != nil {
		t.Fatal(err)
	}
	if r := role(curToken); r != quarry.RoleCurator {
		t.Errorf("leaving a group made a flagless curator %s", r)
	}
	if r := role(basicToken); r != quarry.RoleBasic {
		t.Errorf("losing its only flag left the promoted user %s, want basic", r)
	}
}
