package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"time"

	"github.com/quarryhq/quarry"
	"github.com/quarryhq/quarry/api/decode"
	"github.com/quarryhq/quarry/store"
)

// The file store's routes (api/file.go): Onyx's upload of files for the
// file connector, and the worker route that streams them to the worker
// running the connector. The rules on archives are the root package's
// (file.go); the rows the store's (store/file.go).

// fileUploadPath is the route of uploads, whose body may be larger than
// other routes' (Config.FileLimits.MaxUploadBytes).
const fileUploadPath = "/manage/admin/connector/file/upload"

// uploadTimeout bounds an upload (its body is read from the network
// before anything is written), and a file streamed to a worker.
const uploadTimeout = 10 * time.Minute

// maxMetadataBytes bounds a zip's .onyx_metadata.json, which is read whole
// to check that it is JSON.
const maxMetadataBytes = 16 << 20

// spooled is an uploaded file, spooled to a temporary file as it is read
// from the request.
type spooled struct {
	name, contentType string
	file              *os.File
	size              int64
}

// handleUploadConnectorFiles serves POST
// /manage/admin/connector/file/upload: Onyx's upload_files. The files
// (multipart field "files") are spooled to temporary files, a zip is
// checked against the limits and, unless unzip=false, its entries are kept
// one file each (its .onyx_metadata.json apart); then everything is kept
// in one transaction, or nothing is.
func (s *Server) handleUploadConnectorFiles(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	// FastAPI reports the query's errors and then the body's, together.
	var in uploadConnectorFilesRequest
	var queryErrs decode.Errors
	if err := decode.Request(r, &in); err != nil && !errors.As(err, &queryErrs) {
		return err
	}
	// The server's read time-out (QUARRY_READ_TIMEOUT) is for requests
	// of a few kilobytes; an upload may take up to uploadTimeout. Where
	// the connection has no deadlines (in-process), there is none to move.
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadTimeout))
	parts, err := spoolUpload(r)
	defer func() {
		for _, p := range parts {
			p.file.Close()
			os.Remove(p.file.Name())
		}
	}()
	var bodyErrs decode.Errors
	switch {
	case err != nil && !errors.As(err, &bodyErrs): // A body that cannot be read is answered first, as FastAPI's form parsing is.
		return err
	case queryErrs != nil:
		return append(queryErrs, bodyErrs...)
	case err != nil:
		return err
	}
	lim := s.cfg.FileLimits.WithDefaults()
	var (
		files    []store.NewFile
		meta     = -1 // The index in files of the zip's metadata, if any.
		expanded int64
		seenZip  bool
	)
	for _, p := range parts {
		if quarry.IsZipUpload(p.name, p.contentType) {
			if seenZip {
				return quarry.Errorf(quarry.EINVALID, quarry.SeenZipDetail)
			}
			seenZip = true
			if in.Unzip {
				a, err := quarry.ReadArchive(p.file, p.size, lim, len(files), expanded)
				if err != nil {
					return err
				}
				if a.Metadata != nil {
					if err := checkMetadata(a.Metadata); err != nil {
						return err
					}
					meta = len(files)
					files = append(files, store.NewFile{DisplayName: quarry.OnyxMetadataFile, FileType: "application/json",
						Origin: quarry.FileOriginMetadata, Open: a.Metadata.Open})
				}
				for _, e := range a.Entries {
					files = append(files, store.NewFile{DisplayName: e.Name, FileType: quarry.GuessFileType(e.Name),
						Origin: quarry.FileOriginUpload, Open: e.Open})
				}
				continue
			}
		}
		if len(files)+1 > lim.MaxFiles {
			return quarry.Errorf(quarry.EINVALID, "The upload holds more than %d files", lim.MaxFiles)
		}
		if expanded += p.size; expanded > lim.MaxExpandedBytes {
			return quarry.Errorf(quarry.EINVALID, "The upload's files inflate to more than %d bytes", lim.MaxExpandedBytes)
		}
		ct := p.contentType
		if ct == "" {
			ct = "text/plain"
			if quarry.IsZipUpload(p.name, "") {
				ct = "application/zip"
			}
		}
		f := p.file
		files = append(files, store.NewFile{DisplayName: p.name, FileType: ct, Origin: quarry.FileOriginUpload,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(f, 0, 1<<62)), nil }})
	}
	kept, err := s.db.SaveFiles(r.Context(), c, files)
	if err != nil {
		return err
	}
	out := fileUploadResponse{FilePaths: []string{}, FileNames: []string{}, UnreadFiles: []unreadFile{}}
	for i, f := range kept {
		if i == meta {
			out.ZipMetadataFileID = &f.ID
			continue
		}
		out.FilePaths = append(out.FilePaths, f.ID)
		out.FileNames = append(out.FileNames, f.DisplayName)
		if why := quarry.FileNotRead(f.DisplayName); why != "" {
			out.UnreadFiles = append(out.UnreadFiles, unreadFile{FilePath: f.ID, FileName: f.DisplayName, Reason: why})
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// spoolUpload reads the multipart body of an upload, spooling each file
// of its "files" field to a temporary file; parts without a file name are
// skipped, as Onyx skips them. No file at all is FastAPI's 422 (files is
// required). It returns the files spooled so far even with an error, for
// the caller to remove.
func spoolUpload(r *http.Request) ([]*spooled, error) {
	missing := decode.Errors{{Type: "missing", Loc: []any{"body", "files"}, Msg: "Field required", Input: nil}}
	mr, err := r.MultipartReader()
	if err != nil {
		return nil, missing
	}
	var out []*spooled
	seen := false
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return out, bodyError(err)
		}
		if part.FormName() != "files" {
			continue
		}
		seen = true
		if part.FileName() == "" {
			continue
		}
		tmp, err := os.CreateTemp("", "quarry-upload-*")
		if err != nil {
			return out, err
		}
		sp := &spooled{name: part.FileName(), contentType: part.Header.Get("Content-Type"), file: tmp}
		out = append(out, sp)
		if sp.size, err = io.Copy(tmp, part); err != nil {
			return out, bodyError(err)
		}
	}
	if !seen {
		return out, missing
	}
	return out, nil
}

// bodyError is the error of a multipart body that cannot be read: too
// large (413), or not multipart as it says (400).
func bodyError(err error) error {
	var mbe *http.MaxBytesError
	if errors.As(err, &mbe) {
		return quarry.Errorf(quarry.ETOOLARGE, "Request body is larger than %d bytes", mbe.Limit)
	}
	return quarry.Errorf(quarry.EINVALID, "There was an error parsing the body")
}

// checkMetadata checks that a zip's .onyx_metadata.json is JSON, as
// Onyx's save_zip_metadata_to_file_store does (400 otherwise).
func checkMetadata(e *quarry.ArchiveEntry) error {
	rc, err := e.Open()
	if err != nil {
		return err
	}
	defer rc.Close()
	b, err := io.ReadAll(io.LimitReader(rc, maxMetadataBytes+1))
	if err != nil {
		return err
	}
	if len(b) > maxMetadataBytes {
		return quarry.Errorf(quarry.EINVALID, "Unable to load %s: it is larger than %d bytes", quarry.OnyxMetadataFile, maxMetadataBytes)
	}
	if !json.Valid(b) {
		return quarry.Errorf(quarry.EINVALID, "Unable to load %s: it is not JSON", quarry.OnyxMetadataFile)
	}
	return nil
}

// handleAttemptFile serves GET /worker/attempts/{attempt_id}/files/{file_id}:
// the content of a file the attempt's connector names, streamed to the
// worker holding the attempt's live lease.
func (s *Server) handleAttemptFile(w http.ResponseWriter, r *http.Request, wk *quarry.Worker) error {
	var in attemptFileRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	f, err := s.db.AttemptFile(r.Context(), wk.ID, in.ID, in.FileID)
	if err != nil {
		return err
	}
	// A file may take longer to send than the server's write time-out
	// (QUARRY_WRITE_TIMEOUT) allows an answer.
	_ = http.NewResponseController(w).SetWriteDeadline(time.Now().Add(uploadTimeout))
	rc := s.db.OpenFile(r.Context(), f)
	defer rc.Close()
	h := w.Header()
	h.Set("Content-Type", "application/octet-stream")
	h.Set("X-Quarry-File-Name", url.QueryEscape(f.DisplayName))
	h.Set("X-Quarry-File-Type", url.QueryEscape(f.FileType))
	h.Set("Content-Length", strconv.FormatInt(f.Size, 10))
	w.WriteHeader(http.StatusOK)
	if _, err := io.Copy(w, rc); err != nil {
		// Too late for an error answer: the worker sees a body shorter
		// than its Content-Length.
		s.log.WarnContext(r.Context(), "streaming a file to a worker failed", "file", f.ID, "err", err)
	}
	return nil
}

// fileUploadResponse is the answer to POST
// /manage/admin/connector/file/upload: Onyx's FileUploadResponse, and
// Quarry's unread_files.
type fileUploadResponse struct {
	FilePaths         []string `json:"file_paths"`
	FileNames         []string `json:"file_names"`
	ZipMetadataFileID *string  `json:"zip_metadata_file_id"`
	// UnreadFiles are the files kept that the file connector will not
	// read (quarry.FileNotRead), in the order of file_paths.
	UnreadFiles []unreadFile `json:"unread_files"`
}

// unreadFile is a file of an upload that the file connector will not
// read, and why.
type unreadFile struct {
	FilePath string `json:"file_path"`
	FileName string `json:"file_name"`
	Reason   string `json:"reason"`
}
