// Package npmtest installs the npm packages that tests run with node: a
// directory's package-lock.json, installed once per test binary with npm
// ci unless its node_modules already holds every locked package at its
// version. Without node or npm a test skips, unless QUARRY_E2E=1 (set by
// CI) makes that a failure. Only tests import it.
package npmtest

import (
	"context"
	"encoding/json"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"sync"
	"testing"
	"time"
)

// E2EEnv makes a test that needs node a failure, rather than a skip, when
// node or npm is missing. CI sets it.
const E2EEnv = "QUARRY_E2E"

// Install installs the packages of dir (a directory with package.json and
// package-lock.json) at their locked versions and returns node's path.
// Without node or npm the test skips (fails with QUARRY_E2E=1).
func Install(t testing.TB, dir string) (node string) {
	t.Helper()
	node, errNode := exec.LookPath("node")
	npm, errNpm := exec.LookPath("npm")
	if errNode != nil || errNpm != nil {
		if os.Getenv(E2EEnv) == "1" {
			t.Fatalf("node and npm are needed, and %s=1 requires them", E2EEnv)
		}
		t.Skipf("skipped: node or npm is missing (set %s=1 to make this a failure)", E2EEnv)
	}
	v, _ := installs.LoadOrStore(dir, &installation{})
	in := v.(*installation)
	in.once.Do(func() { in.err = install(npm, dir) })
	if in.err != nil {
		t.Fatal(in.err)
	}
	return node
}

// installation is the installation of one directory.
type installation struct {
	once sync.Once
	err  error
}

// installs holds each directory's installation.
var installs sync.Map

// install runs npm ci in dir unless node_modules holds every locked
// package at its version already.
func install(npm, dir string) error {
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "package-lock.json"))
	if err != nil {
		return err
	}
	if err := json.Unmarshal(b, &lock); err != nil {
		return err
	}
	installed := true
	for path, p := range lock.Packages {
		if path == "" {
			continue
		}
		var have struct {
			Version string `json:"version"`
		}
		b, err := os.ReadFile(filepath.Join(dir, filepath.FromSlash(path), "package.json"))
		if err != nil || json.Unmarshal(b, &have) != nil || have.Version != p.Version {
			installed = false
			break
		}
	}
	if installed {
		return nil
	}
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, npm, "ci", "--no-audit", "--no-fund", "--loglevel=error")
	cmd.Dir = dir
	cmd.Env = append(os.Environ(), "npm_config_update_notifier=false")
	if out, err := cmd.CombinedOutput(); err != nil {
		return fmt.Errorf("npm ci in %s: %v\n%s", dir, err, out)
	}
	return nil
}
