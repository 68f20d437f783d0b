package bench

import (
	"archive/zip"
	"bytes"
	"context"
	"encoding/json"
	"fmt"
	"io"
	"log/slog"
	"math/rand/v2"
	"mime/multipart"
	"net/http"
	"net/textproto"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/outbound"
)

// -op ingest: how fast documents get into the store (issue 33's target:
// 500 documents/s of 2 KB text), by the two ways in that need no outside
// system: the file connector (a zip of ingestDocs text files uploaded,
// then indexed by a worker registered over HTTP, which reads each file
// through the worker route and reports the documents in batches) and
// Onyx's ingestion API (POST /onyx-api/ingestion, one document a request,
// from -clients clients). Seeded pairs are indexed away first (their
// attempts ended at once, as -op indexing does) so that the worker runs
// the file connector's attempt alone. -duration does not apply.

// Ingest is the -op of ingestion into the store.
const Ingest = "ingest"

// Sizes of -op ingest.
const (
	ingestDocs     = 2000 // Documents each way.
	ingestDocBytes = 2048 // Text of each.
	ingestTarget   = 500  // Documents/s.
)

// IngestReport is what -op ingest measured.
type IngestReport struct {
	Series []IngestSeries `json:"series"`
	Missed []string       `json:"missed"`
}

// IngestSeries is one way in.
type IngestSeries struct {
	Name      string  `json:"name"`
	About     string  `json:"about"`
	Documents int     `json:"documents"`
	Seconds   float64 `json:"seconds"`
	DocsPerS  float64 `json:"documents_per_second"`
	TargetPS  float64 `json:"target_documents_per_second"`
}

// ingestText returns document i's text: ingestDocBytes of words, unlike
// every other document's.
func ingestText(i int) string {
	r := rand.New(rand.NewPCG(uint64(i), 33))
	words := []string{"granite", "quarry", "limestone", "crusher", "blast", "permit", "haul", "bench", "face", "slope", "survey", "report"}
	var b bytes.Buffer
	fmt.Fprintf(&b, "Document %d.", i)
	for b.Len() < ingestDocBytes {
		b.WriteByte(' ')
		b.WriteString(words[r.IntN(len(words))])
	}
	return b.String()[:ingestDocBytes]
}

// measureIngest measures -op ingest into rep.
func measureIngest(ctx context.Context, sys *system, sc *screen, rep *Report) error {
	ir, err := ingest(ctx, sys, sc, rep.Clients)
	rep.Ingest = ir
	return err
}

func ingest(ctx context.Context, sys *system, sc *screen, clients int) (*IngestReport, error) {
	db := sys.db
	c := &caller{client: setupClient(), base: sys.base, token: sys.token}

	// The seeded pairs' first attempts, ended at once.
	_, drain, err := db.StartInProcessWorker(ctx, "bench drain")
	if err != nil {
		return nil, err
	}
	sc.line("ending the seeded pairs' first attempts")
	for {
		res, err := db.Schedule(ctx)
		if err != nil {
			return nil, err
		}
		if res.Created == 0 {
			break
		}
	}
	for {
		l, err := db.LeaseAttempt(ctx, drain)
		if err != nil {
			return nil, err
		}
		if l == nil {
			break
		}
		if _, err := db.FinishAttempt(ctx, drain, l.AttemptID, quarry.Finish{Status: quarry.IndexSuccess}); err != nil {
			return nil, err
		}
	}

	rep := &IngestReport{Missed: []string{}}
	add := func(s IngestSeries) {
		s.DocsPerS = round(float64(s.Documents) / s.Seconds)
		s.Seconds = round(s.Seconds)
		s.TargetPS = ingestTarget
		rep.Series = append(rep.Series, s)
		if s.DocsPerS < ingestTarget {
			rep.Missed = append(rep.Missed, fmt.Sprintf("%s: %.0f documents/s, under %d", s.Name, s.DocsPerS, ingestTarget))
		}
	}

	// The file connector: a zip of the documents, uploaded, then indexed.
	sc.line(fmt.Sprintf("file: zipping and uploading %d files of %d bytes", ingestDocs, ingestDocBytes))
	var zb bytes.Buffer
	zw := zip.NewWriter(&zb)
	for i := range ingestDocs {
		w, err := zw.Create(fmt.Sprintf("docs/doc-%05d.txt", i))
		if err != nil {
			return nil, err
		}
		io.WriteString(w, ingestText(i))
	}
	zw.Close()
	var body bytes.Buffer
	mw := multipart.NewWriter(&body)
	h := textproto.MIMEHeader{}
	h.Set("Content-Disposition", `form-data; name="files"; filename="bench.zip"`)
	h.Set("Content-Type", "application/zip")
	pw, _ := mw.CreatePart(h)
	pw.Write(zb.Bytes())
	mw.Close()
	upStart := time.Now()
	var up struct {
		FilePaths []string `json:"file_paths"`
		FileNames []string `json:"file_names"`
	}
	b, err := c.call(ctx, "POST", "/manage/admin/connector/file/upload", body.Bytes(), "Content-Type", mw.FormDataContentType())
	if err != nil {
		return nil, err
	}
	if err := json.Unmarshal(b, &up); err != nil || len(up.FilePaths) != ingestDocs {
		return nil, fmt.Errorf("bench: the upload answered %s", truncate(b, 300))
	}
	add(IngestSeries{Name: "file:upload", About: fmt.Sprintf("POST /manage/admin/connector/file/upload of a zip of %d files (%s), into the file store", ingestDocs, formatBytes(int64(zb.Len()))),
		Documents: ingestDocs, Seconds: time.Since(upStart).Seconds()})
	pair, err := benchPair(ctx, c, "file", map[string]any{"file_locations": up.FilePaths, "file_names": up.FileNames, "zip_metadata_file_id": nil})
	if err != nil {
		return nil, err
	}
	var reg struct {
		Token string `json:"token"`
	}
	if err := c.decode(ctx, "POST", "/admin/worker/registration-token", []byte(`{"name":"bench"}`), &reg); err != nil {
		return nil, err
	}
	token, _, err := outbound.RegisterWorker(ctx, c.client, sys.base, reg.Token, "bench worker")
	if err != nil {
		return nil, err
	}
	wctx, stop := context.WithCancel(ctx)
	defer stop()
	wk := outbound.NewWorker(outbound.WorkerConfig{API: outbound.NewWorkerAPI(c.client, sys.base, token),
		ConnectorHTTP: http.DefaultClient, PollInterval: 10 * time.Millisecond, Log: slog.New(slog.DiscardHandler)})
	var wg sync.WaitGroup
	wg.Go(func() { wk.Run(wctx) })
	defer wg.Wait()
	sc.line("file: indexing the files with a worker")
	idxStart := time.Now()
	if _, err := db.Schedule(ctx); err != nil {
		return nil, err
	}
	caller, err := db.Authenticate(ctx, quarry.HashToken(sys.token))
	if err != nil {
		return nil, err
	}
	for {
		as, _, err := db.IndexAttempts(ctx, caller, pair, 0, 1)
		if err != nil {
			return nil, err
		}
		if len(as) > 0 && !as[0].Status.Live() {
			if as[0].Status != quarry.IndexSuccess || as[0].NewDocsIndexed != ingestDocs {
				return nil, fmt.Errorf("bench: the file connector's attempt ended %s with %d new documents, want success with %d", as[0].Status, as[0].NewDocsIndexed, ingestDocs)
			}
			break
		}
		select {
		case <-ctx.Done():
			return nil, ctx.Err()
		case <-time.After(5 * time.Millisecond):
		}
	}
	add(IngestSeries{Name: "file:index", About: fmt.Sprintf("the attempt of a file connector of those %d files, from the scheduler's pass to its end, by a worker over HTTP", ingestDocs),
		Documents: ingestDocs, Seconds: time.Since(idxStart).Seconds()})
	stop()

	// Onyx's ingestion API.
	ipair, err := benchPair(ctx, c, "ingestion_api", map[string]any{})
	if err != nil {
		return nil, err
	}
	sc.line(fmt.Sprintf("ingestion API: %d documents from %d clients", ingestDocs, clients))
	var next atomic.Int64
	var failed atomic.Pointer[error]
	ingStart := time.Now()
	var cw sync.WaitGroup
	for range clients {
		cw.Go(func() {
			for {
				i := int(next.Add(1)) - 1
				if i >= ingestDocs || failed.Load() != nil {
					return
				}
				doc, _ := json.Marshal(map[string]any{"cc_pair_id": ipair, "document": map[string]any{
					"id": fmt.Sprintf("bench-%05d", i), "semantic_identifier": fmt.Sprintf("Document %d", i),
					"sections": []map[string]any{{"text": ingestText(i), "link": nil}}, "metadata": map[string]any{}}})
				if _, err := c.call(ctx, "POST", "/onyx-api/ingestion", doc); err != nil {
					failed.CompareAndSwap(nil, &err)
					return
				}
			}
		})
	}
	cw.Wait()
	if err := failed.Load(); err != nil {
		return nil, *err
	}
	add(IngestSeries{Name: "ingestion-api", About: fmt.Sprintf("POST /onyx-api/ingestion, one document a request, %d clients", clients),
		Documents: ingestDocs, Seconds: time.Since(ingStart).Seconds()})
	return rep, nil
}

// benchPair makes a connector of source with config, an empty credential
// and their public pair, through the API, and returns the pair's id.
func benchPair(ctx context.Context, c *caller, source string, config map[string]any) (int64, error) {
	var id struct {
		ID   int64 `json:"id"`
		Data int64 `json:"data"`
	}
	name := fmt.Sprintf("bench %s %d", source, time.Now().UnixNano())
	b, _ := json.Marshal(map[string]any{"name": name, "source": source, "input_type": "load_state", "connector_specific_config": config})
	if err := c.decode(ctx, "POST", "/manage/admin/connector", b, &id); err != nil {
		return 0, err
	}
	conn := id.ID + id.Data
	id.ID, id.Data = 0, 0
	b, _ = json.Marshal(map[string]any{"credential_json": map[string]string{}, "admin_public": true, "source": source})
	if err := c.decode(ctx, "POST", "/manage/credential", b, &id); err != nil {
		return 0, err
	}
	cred := id.ID + id.Data
	id.ID, id.Data = 0, 0
	b, _ = json.Marshal(map[string]any{"name": "pair " + name, "access_type": "public", "groups": []int64{}})
	if err := c.decode(ctx, "PUT", fmt.Sprintf("/manage/connector/%d/credential/%d", conn, cred), b, &id); err != nil {
		return 0, err
	}
	return id.ID + id.Data, nil
}

// writeIngestText writes -op ingest's figures.
func (r *Report) writeIngestText(w io.Writer) {
	fmt.Fprintln(w)
	const row = "%-16s %9s %9s %10s %8s  %s\n"
	fmt.Fprintf(w, row, "", "documents", "seconds", "docs/s", "target", "")
	for _, s := range r.Ingest.Series {
		fmt.Fprintf(w, row, s.Name, fmt.Sprint(s.Documents), num(s.Seconds), num(s.DocsPerS), num(s.TargetPS), s.About)
	}
	if len(r.Ingest.Missed) > 0 {
		fmt.Fprintf(w, "missed    %v\n", r.Ingest.Missed)
	}
}
