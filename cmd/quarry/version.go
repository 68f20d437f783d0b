package main

import (
	"context"
	"flag"
	"fmt"
	"runtime"
	"runtime/debug"
	"time"

	"github.com/quarryhq/quarry/api"
)

// Release builds name themselves with -ldflags (docs/operations.md):
//
//	go build -trimpath -ldflags "-X main.version=v1.4.0" ./cmd/quarry
//
// The revision, its time and whether the tree was modified come from the
// VCS information that go build stamps into binaries built in a git
// checkout (debug.ReadBuildInfo). Where it cannot (a git worktree, a source
// tarball, GOFLAGS=-buildvcs=false), -X main.revision=<commit>,
// -X main.revisionTime=<RFC 3339 time> and -X main.modified=true stand in.
var (
	version      = "dev" // The version label; "dev" means none was set.
	revision     = ""
	revisionTime = ""
	modified     = ""
)

// build describes the running binary.
type build struct {
	version   string    // -X main.version, else the module version, else "dev".
	revision  string    // The VCS commit, "" if unknown.
	time      time.Time // The commit's time, zero if unknown.
	modified  bool      // The tree had uncommitted changes.
	goVersion string
}

// currentBuild reads what the binary says of itself.
func currentBuild() build {
	info, _ := debug.ReadBuildInfo()
	return makeBuild(info, version, revision, revisionTime, modified)
}

// makeBuild describes a build from its build information (nil if none) and
// the values set with -ldflags.
func makeBuild(info *debug.BuildInfo, version, revision, revisionTime, modified string) build {
	b := build{version: version, revision: revision, modified: modified == "true", goVersion: runtime.Version()}
	b.time, _ = time.Parse(time.RFC3339, revisionTime)
	if info == nil {
		return b
	}
	if v := info.Main.Version; b.version == "dev" && v != "" && v != "(devel)" {
		b.version = v
	}
	if b.revision != "" {
		return b // Set with -ldflags: the build's own information is not mixed in.
	}
	for _, s := range info.Settings {
		switch s.Key {
		case "vcs.revision":
			b.revision = s.Value
		case "vcs.time":
			b.time, _ = time.Parse(time.RFC3339, s.Value)
		case "vcs.modified":
			b.modified = s.Value == "true"
		}
	}
	return b
}

// into returns c with the build's description.
func (b build) into(c api.Config) api.Config {
	c.Version, c.Revision, c.RevisionTime, c.Modified = b.version, b.revision, b.time, b.modified
	return c
}

// String renders b for "quarry version", one fact a line.
func (b build) String() string {
	s := "quarry " + b.version + "\n"
	if b.revision == "" {
		s += "revision unknown (built without VCS information; see docs/operations.md)\n"
	} else {
		s += "revision " + b.revision
		if b.modified {
			s += " (modified)"
		}
		s += "\n"
		if !b.time.IsZero() {
			s += "committed " + b.time.UTC().Format(time.RFC3339) + "\n"
		}
	}
	return s + fmt.Sprintf("built with %s for %s/%s\n", b.goVersion, runtime.GOOS, runtime.GOARCH)
}

func runVersion(ctx context.Context, env *environment, args []string) error {
	fs := flag.NewFlagSet("version", flag.ContinueOnError)
	fs.SetOutput(env.stderr)
	if err := fs.Parse(args); err != nil {
		return err
	}
	fmt.Fprint(env.stdout, currentBuild())
	return nil
}
