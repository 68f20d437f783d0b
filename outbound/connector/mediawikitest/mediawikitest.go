// Package mediawikitest runs real MediaWikis for the MediaWiki
// connector's tests: Debian's mediawiki package on SQLite, served by
// PHP's built-in web server. A wiki is installed once
// (maintenance/install.php) and kept in the system's temporary directory
// as a template, which later test binaries use too (one per MediaWiki
// and recipe), and each test gets a copy of it. It is for tests only.
package mediawikitest

import (
	"bytes"
	"context"
	"crypto/sha256"
	"encoding/xml"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"sync"
	"testing"
	"time"
)

// Dir is where Debian's mediawiki package installs MediaWiki.
const Dir = "/usr/share/mediawiki"

// template is a wiki made once: its LocalSettings.php and SQLite files,
// which each Wiki copies.
type template struct {
	once sync.Once
	dir  string // Holds LocalSettings.php and data/.
	err  error
}

// The templates of this test binary: the wiki as installed, and the wiki
// of NewFixture.
var installed, fixture template

// templateServer is the server the templates are installed with, which
// each copy replaces by its own.
const templateServer = "http://127.0.0.1:1"

// Wiki is a MediaWiki of its own served on 127.0.0.1 until the test
// ends.
type Wiki struct {
	// URL is the wiki's address: http://127.0.0.1:port, whose / redirects
	// to the main page and whose API is URL/api.php.
	URL  string
	conf string // Its LocalSettings.php.
}

// Available reports why MediaWiki cannot run here, or "" when it can.
func Available() string {
	if _, err := exec.LookPath("php"); err != nil {
		return "php is not installed"
	}
	if _, err := os.Stat(filepath.Join(Dir, "maintenance", "install.php")); err != nil {
		return "MediaWiki is not installed in " + Dir
	}
	if err := exec.Command("php", "-r", `exit(extension_loaded("pdo_sqlite") ? 0 : 1);`).Run(); err != nil {
		return "PHP has no SQLite (pdo_sqlite)"
	}
	return ""
}

// New starts a wiki with the installer's main page and nothing else. It
// skips the test when MediaWiki is not installed, unless CI is set, where
// it fails it.
func New(tb testing.TB) *Wiki {
	tb.Helper()
	return start(tb, &installed, installed.install)
}

// start starts a copy of the template t, made by build the first time.
func start(tb testing.TB, t *template, build func()) *Wiki {
	tb.Helper()
	if why := Available(); why != "" {
		if os.Getenv("CI") == "" {
			tb.Skipf("%s: apt-get install mediawiki php-cli php-sqlite3 to run this test (CI does)", why)
		}
		tb.Fatalf("%s, and CI is set: .ci/run installs mediawiki php-cli php-sqlite3", why)
	}
	t.once.Do(build)
	if t.err != nil {
		tb.Fatal(t.err)
	}
	port, err := freePort()
	if err != nil {
		tb.Fatal(err)
	}
	w := &Wiki{URL: fmt.Sprintf("http://127.0.0.1:%d", port)}
	if w.conf, err = t.copy(tb.TempDir(), w.URL); err != nil {
		tb.Fatal(err)
	}
	var out bytes.Buffer
	// OPcache and APCu make the requests after the first quick; OPcache
	// checks at each request whether LocalSettings.php changed
	// (Configure).
	cmd := exec.Command("php", "-d", "opcache.enable_cli=1", "-d", "opcache.revalidate_freq=0", "-d", "apc.enable_cli=1", "-S", fmt.Sprintf("127.0.0.1:%d", port), "-t", Dir)
	cmd.Dir = Dir
	cmd.Env = append(os.Environ(), "MW_CONFIG_FILE="+w.conf)
	cmd.Stdout, cmd.Stderr = &out, &out
	if err := cmd.Start(); err != nil {
		tb.Fatal(err)
	}
	done := make(chan struct{})
	go func() { _ = cmd.Wait(); close(done) }() // Killed at the end.
	tb.Cleanup(func() {
		_ = cmd.Process.Kill() // It may have stopped.
		<-done
	})
	// Wait for it to answer, a bounded number of times.
	for i := 0; ; i++ {
		resp, err := http.Get(w.URL + "/api.php?action=query&meta=siteinfo&format=json")
		if err == nil {
			resp.Body.Close()
			if resp.StatusCode == http.StatusOK {
				return w
			}
		}
		if i == 200 {
			tb.Fatalf("the wiki at %s did not answer: %v; its server said:\n%s", w.URL, err, out.String())
		}
		time.Sleep(25 * time.Millisecond)
	}
}

// freePort returns a port of 127.0.0.1 that nothing listens on.
func freePort() (int, error) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return 0, err
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port, nil
}

// dataMark stands for the data directory in a template's
// LocalSettings.php: each copy puts its own there.
const dataMark = "@QUARRY_WIKI_DATA@"

// copy copies the template into dir, for a wiki served at server, and
// returns the copy's LocalSettings.php.
func (t *template) copy(dir, server string) (string, error) {
	if err := os.CopyFS(filepath.Join(dir, "data"), os.DirFS(filepath.Join(t.dir, "data"))); err != nil {
		return "", err
	}
	ls, err := os.ReadFile(filepath.Join(t.dir, "LocalSettings.php"))
	if err != nil {
		return "", err
	}
	s := strings.ReplaceAll(string(ls), dataMark, filepath.Join(dir, "data"))
	s = strings.ReplaceAll(s, templateServer, server)
	conf := filepath.Join(dir, "LocalSettings.php")
	return conf, os.WriteFile(conf, []byte(s), 0o600)
}

// build makes the template name with fill, which writes a wiki into the
// directory it is given, unless an earlier test binary made it from the
// same recipe and the same MediaWiki: templates are kept in the
// system's temporary directory, one per recipe, and never changed once
// made.
func (t *template) build(name, recipe string, fill func(dir string) error) {
	h := sha256.New()
	fmt.Fprintf(h, "%s\n%s\n", name, recipe)
	for _, f := range []string{filepath.Join(Dir, "includes", "Defines.php"), filepath.Join(Dir, "includes", "Setup.php")} {
		if fi, err := os.Stat(f); err == nil {
			fmt.Fprintf(h, "%s %d %d\n", f, fi.Size(), fi.ModTime().UnixNano())
		}
	}
	final := filepath.Join(os.TempDir(), fmt.Sprintf("quarry-mediawiki-%s-%x", name, h.Sum(nil)[:8]))
	ready := func() bool { _, err := os.Stat(filepath.Join(final, "ready")); return err == nil }
	if ready() {
		t.dir = final
		return
	}
	tmp, err := os.MkdirTemp("", "quarry-mediawiki-build-")
	if err != nil {
		t.err = err
		return
	}
	defer os.RemoveAll(tmp) // Gone once renamed.
	if t.err = fill(tmp); t.err != nil {
		return
	}
	conf := filepath.Join(tmp, "LocalSettings.php")
	ls, err := os.ReadFile(conf)
	if err != nil {
		t.err = err
		return
	}
	if err := os.WriteFile(conf, []byte(strings.ReplaceAll(string(ls), filepath.Join(tmp, "data"), dataMark)), 0o600); err != nil {
		t.err = err
		return
	}
	if err := os.WriteFile(filepath.Join(tmp, "ready"), nil, 0o600); err != nil {
		t.err = err
		return
	}
	// Another test binary may have made it meanwhile: then its is used.
	if err := os.Rename(tmp, final); err != nil && !ready() {
		t.err = err
		return
	}
	t.dir = final
}

// installArgs are the arguments of install.php but the paths, and
// installSettings what is added to the LocalSettings.php it writes: no
// object cache shared between requests, so that what a maintenance
// script writes is what the server reads next.
var (
	installArgs = []string{"--dbtype", "sqlite", "--dbname", "wiki", "--server", templateServer, "--scriptpath", "",
		"--pass", "Quarry-test-admin-0123", "--skins", "", "Quarry Test Wiki", "Admin"}
	installSettings = "\n$wgMainCacheType = CACHE_NONE;\n$wgParserCacheType = CACHE_NONE;\n$wgMessageCacheType = CACHE_NONE;\n"
)

// install makes the template of the wiki as installed.
func (t *template) install() {
	t.build("installed", strings.Join(installArgs, "\x00")+installSettings, func(dir string) error {
		args := append([]string{"--dbpath", filepath.Join(dir, "data"), "--confpath", dir}, installArgs...)
		if err := maintenance("", "install.php", nil, args...); err != nil {
			return fmt.Errorf("installing MediaWiki: %w", err)
		}
		f, err := os.OpenFile(filepath.Join(dir, "LocalSettings.php"), os.O_APPEND|os.O_WRONLY, 0)
		if err != nil {
			return err
		}
		_, err = f.WriteString(installSettings)
		if cerr := f.Close(); err == nil {
			err = cerr
		}
		return err
	})
}

// fixtureRevisions are the pages of NewFixture.
var fixtureRevisions = []Revision{
	{"Category:Food", Old, "Things to eat."},
	{"Category:Fruit", Old, "Fruit. [[Category:Food]] [[Category:Tropical]]"},
	{"Category:Tropical", Old, "Warm fruit. [[Category:Fruit]]"},
	{"Bread", Old, "Bread is baked.\n[[Category:Food]]"},
	{"File:Map.png", Old, "Where food grows.\n[[Category:Food]]"},
	{"Alpha", Old, "Lead of alpha.\n== First part ==\nAlpha one.\n<!--\n== Not a heading ==\n-->\n=== Deeper part ===\nDeeper text.\n[[Category:Fruit]]"},
	{"Cherry", Old, "Cherries are red.\n[[Category:Fruit]]"},
	{"Cherry", Edited, "Cherries are dark red.\n[[Category:Fruit]]"},
	{"Banana", Old, "Bananas are yellow.\n[[Category:Tropical]]"},
	{"Loose", Old, "A page in no category."},
}

// makeFixture makes the template of NewFixture: a copy of the installed
// wiki with its pages imported.
func (t *template) makeFixture() {
	installed.once.Do(installed.install)
	if t.err = installed.err; t.err != nil {
		return
	}
	t.build("fixture", fmt.Sprintf("%s\n%q", installed.dir, fixtureRevisions), func(dir string) error {
		conf, err := installed.copy(dir, templateServer)
		if err != nil {
			return err
		}
		return importRevisions(conf, fixtureRevisions...)
	})
}

// maintenance runs MediaWiki's maintenance script with args, the wiki's
// LocalSettings.php being conf (none for the installer) and stdin its
// standard input.
func maintenance(conf, script string, stdin []byte, args ...string) error {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	a := []string{filepath.Join("maintenance", script)}
	if conf != "" {
		a = append(a, "--conf", conf)
	}
	cmd := exec.CommandContext(ctx, "php", append(a, args...)...)
	cmd.Dir = Dir
	if conf != "" {
		cmd.Env = append(os.Environ(), "MW_CONFIG_FILE="+conf)
	}
	cmd.Stdin = bytes.NewReader(stdin)
	out, err := cmd.CombinedOutput()
	if err != nil {
		return fmt.Errorf("%s: %w\n%s", script, err, out)
	}
	return nil
}

// Revision is a revision of a page to import, made at Time.
type Revision struct {
	Title string
	Time  time.Time
	Text  string
}

// Import imports the revisions, in order, with their own times
// (maintenance/importDump.php): a page's latest revision is the one of
// its latest time.
func (w *Wiki) Import(tb testing.TB, revs ...Revision) {
	tb.Helper()
	if err := importRevisions(w.conf, revs...); err != nil {
		tb.Fatal(err)
	}
}

// importRevisions imports the revisions into the wiki of conf.
func importRevisions(conf string, revs ...Revision) error {
	var b bytes.Buffer
	b.WriteString(`<mediawiki xmlns="http://www.mediawiki.org/xml/export-0.11/" version="0.11" xml:lang="en">` + "\n")
	for _, r := range revs {
		b.WriteString("<page><title>")
		_ = xml.EscapeText(&b, []byte(r.Title)) // A bytes.Buffer does not fail.
		fmt.Fprintf(&b, "</title><revision><timestamp>%s</timestamp><contributor><username>Admin</username></contributor>", r.Time.UTC().Format(time.RFC3339))
		b.WriteString(`<model>wikitext</model><format>text/x-wiki</format><text xml:space="preserve">`)
		_ = xml.EscapeText(&b, []byte(r.Text))
		b.WriteString("</text></revision></page>\n")
	}
	b.WriteString("</mediawiki>\n")
	return maintenance(conf, "importDump.php", b.Bytes())
}

// Delete deletes the pages of titles (maintenance/deleteBatch.php).
func (w *Wiki) Delete(tb testing.TB, titles ...string) {
	tb.Helper()
	list := filepath.Join(tb.TempDir(), "titles")
	if err := os.WriteFile(list, []byte(strings.Join(titles, "\n")+"\n"), 0o600); err != nil {
		tb.Fatal(err)
	}
	if err := maintenance(w.conf, "deleteBatch.php", nil, "-u", "Admin", "-r", "test", list); err != nil {
		tb.Fatal(err)
	}
}

// Old and Edited are the times of the revisions of the wiki of
// NewFixture: every page's first revision is Old, Cherry's second Edited.
var (
	Old    = time.Date(2020, 1, 2, 3, 4, 5, 0, time.UTC)
	Edited = time.Date(2024, 6, 1, 12, 0, 0, 0, time.UTC)
)

// NewFixture starts a wiki, as New, with the pages of the connector's
// tests: the categories Food, Fruit (in Food and Tropical) and Tropical
// (in Fruit), a cycle; the pages Bread and File:Map.png (in Food), Alpha
// and Cherry (in Fruit), Banana (in Tropical) and Loose (in none). Alpha has a lead,
// two headings and a heading in a comment; Cherry has a second revision
// at Edited, the others one at Old.
func NewFixture(tb testing.TB) *Wiki {
	tb.Helper()
	return start(tb, &fixture, fixture.makeFixture)
}

// Configure adds the PHP of settings to the end of the wiki's
// LocalSettings.php: the server reads it at its next request.
func (w *Wiki) Configure(tb testing.TB, settings string) {
	tb.Helper()
	f, err := os.OpenFile(w.conf, os.O_APPEND|os.O_WRONLY, 0)
	if err != nil {
		tb.Fatal(err)
	}
	_, err = f.WriteString("\n" + settings + "\n")
	if cerr := f.Close(); err == nil {
		err = cerr
	}
	if err != nil {
		tb.Fatal(err)
	}
}
