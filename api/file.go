package api

import (
	"encoding/json"
	"errors"
	"io"
	"net/http"
	"net/url"
	"os"
	"strconv"
	"strings"
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

// uploadsFiles reports whether path is a route whose body holds files to
// keep, as large as an upload's: the upload, and a change of a file
// connector's files (/manage/admin/connector/{connector_id}/files/update).
func uploadsFiles(path string) bool {
	if path == fileUploadPath {
		return true
	}
	id, ok := strings.CutPrefix(path, "/manage/admin/connector/")
	id, ok2 := strings.CutSuffix(id, "/files/update")
	return ok && ok2 && id != "" && !strings.Contains(id, "/")
}

// uploadTimeout bounds an upload (its body is read from the network
// before anything is written), and a file streamed to a worker.
const uploadTimeout = 10 * time.Minute

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
	form, err := spoolForm(w, r, "files")
	defer form.remove()
	var bodyErrs decode.Errors
	if err == nil && !form.hasFiles {
		// No file at all is FastAPI's 422 (files is required).
		bodyErrs = decode.Errors{{Type: "missing", Loc: []any{"body", "files"}, Msg: "Field required", Input: nil}}
	}
	switch {
	case err != nil: // A body that cannot be read is answered first, as FastAPI's form parsing is.
		return err
	case queryErrs != nil || bodyErrs != nil:
		return append(queryErrs, bodyErrs...)
	}
	files, meta, err := s.filesToKeep(form.files, in.Unzip, quarry.FileOriginUpload)
	if err != nil {
		return err
	}
	kept, err := s.db.SaveFiles(r.Context(), c, files)
	if err != nil {
		return err
	}
	var ids, names []string
	var metaID *string
	var uploaded []quarry.File
	for i, f := range kept {
		if i == meta {
			metaID = &f.ID
			continue
		}
		ids, names, uploaded = append(ids, f.ID), append(names, f.DisplayName), append(uploaded, f)
	}
	return writeJSON(w, http.StatusOK, newFileUploadResponse(ids, names, metaID, uploaded))
}

// newFileUploadResponse returns the answer of an upload, or of a change of
// a connector's files, that names files ids named names (and the zip's
// metadata, metaID): of the files added, those the file connector will not
// read are named with why.
func newFileUploadResponse(ids, names []string, metaID *string, added []quarry.File) fileUploadResponse {
	out := fileUploadResponse{FilePaths: append([]string{}, ids...), FileNames: append([]string{}, names...),
		ZipMetadataFileID: metaID, UnreadFiles: []unreadFile{}}
	for _, f := range added {
		if why := quarry.FileNotRead(f.DisplayName); why != "" {
			out.UnreadFiles = append(out.UnreadFiles, unreadFile{FilePath: f.ID, FileName: f.DisplayName, Reason: why})
		}
	}
	return out
}

// filesToKeep returns the files to keep of the files of an upload, with
// origin, checked against the limits, and the index among them of a zip's
// .onyx_metadata.json (-1 if none): a zip is unpacked unless unzip is
// false, its entries kept one file each (those no upload keeps left out,
// quarry.KeepArchiveEntry), and at most one zip is allowed.
func (s *Server) filesToKeep(parts []*spooled, unzip bool, origin string) ([]store.NewFile, int, error) {
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
				return nil, 0, quarry.Errorf(quarry.EINVALID, quarry.SeenZipDetail)
			}
			seenZip = true
			if unzip {
				a, err := quarry.ReadArchive(p.file, p.size, lim, len(files), expanded)
				if err != nil {
					return nil, 0, err
				}
				if a.Metadata != nil {
					if err := checkMetadata(a.Metadata); err != nil {
						return nil, 0, err
					}
					meta = len(files)
					files = append(files, store.NewFile{DisplayName: quarry.OnyxMetadataFile, FileType: "application/json",
						Origin: quarry.FileOriginMetadata, Open: a.Metadata.Open})
				}
				for _, e := range a.Entries {
					files = append(files, store.NewFile{DisplayName: e.Name, FileType: quarry.GuessFileType(e.Name),
						Origin: origin, Open: e.Open})
				}
				continue
			}
		}
		if len(files)+1 > lim.MaxFiles {
			return nil, 0, quarry.Errorf(quarry.EINVALID, "The upload holds more than %d files", lim.MaxFiles)
		}
		if expanded += p.size; expanded > lim.MaxExpandedBytes {
			return nil, 0, quarry.Errorf(quarry.EINVALID, "The upload's files inflate to more than %d bytes", lim.MaxExpandedBytes)
		}
		ct := p.contentType
		if ct == "" {
			ct = "text/plain"
			if quarry.IsZipUpload(p.name, "") {
				ct = "application/zip"
			}
		}
		f := p.file
		files = append(files, store.NewFile{DisplayName: p.name, FileType: ct, Origin: origin,
			Open: func() (io.ReadCloser, error) { return io.NopCloser(io.NewSectionReader(f, 0, 1<<62)), nil }})
	}
	return files, meta, nil
}

// uploadForm is the multipart form of an upload: its files (of one
// field), spooled to temporary files as they are read, and its other
// fields.
type uploadForm struct {
	files    []*spooled
	hasFiles bool              // A part of the files' field came, with a file name or not.
	fields   map[string]string // The last value of each other field.
}

// maxFormField bounds a form field that is not a file: Starlette's
// max_part_size, and its answer.
const maxFormField = 1 << 20

// spoolForm reads the multipart body of an upload, spooling each file of
// its field field ("files" for the file connector's) to a temporary file (parts of that field without a
// file name are skipped, as Onyx skips them), and keeping its other
// fields that are not files. A body that is not
// multipart is an empty form, as Starlette reads it. The server's read
// time-out (QUARRY_READ_TIMEOUT) is for requests of a few kilobytes; an
// upload may take up to uploadTimeout (where the connection has no
// deadlines, in-process, there is none to move). The form is returned
// even with an error, for the caller to remove.
func spoolForm(w http.ResponseWriter, r *http.Request, field string) (*uploadForm, error) {
	_ = http.NewResponseController(w).SetReadDeadline(time.Now().Add(uploadTimeout))
	form := &uploadForm{fields: map[string]string{}}
	mr, err := r.MultipartReader()
	if err != nil {
		return form, nil
	}
	for {
		part, err := mr.NextPart()
		if errors.Is(err, io.EOF) {
			break
		}
		if err != nil {
			return form, bodyError(err)
		}
		if part.FormName() != field && part.FileName() != "" {
			continue // A file of another field: not read.
		}
		if part.FormName() != field {
			b, err := io.ReadAll(io.LimitReader(part, maxFormField+1))
			if err != nil {
				return form, bodyError(err)
			}
			if len(b) > maxFormField {
				return form, quarry.Errorf(quarry.EINVALID, "Part exceeded maximum size of %dKB.", maxFormField>>10)
			}
			form.fields[part.FormName()] = string(b)
			continue
		}
		form.hasFiles = true
		if part.FileName() == "" {
			continue
		}
		tmp, err := os.CreateTemp("", "quarry-upload-*")
		if err != nil {
			return form, err
		}
		sp := &spooled{name: part.FileName(), contentType: part.Header.Get("Content-Type"), file: tmp}
		form.files = append(form.files, sp)
		if sp.size, err = io.Copy(tmp, part); err != nil {
			return form, bodyError(err)
		}
	}
	return form, nil
}

// remove removes the form's temporary files.
func (f *uploadForm) remove() {
	for _, p := range f.files {
		p.file.Close()
		os.Remove(p.file.Name())
	}
}

// handleConnectorFiles serves GET
// /manage/admin/connector/{connector_id}/files: Onyx's
// list_connector_files, the files a file connector names, with their
// size and upload time when the file store has them.
func (s *Server) handleConnectorFiles(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in connectorFilesRequest
	if err := decode.Request(r, &in); err != nil {
		return err
	}
	files, records, err := s.db.ConnectorFileList(r.Context(), c, in.ID)
	if err != nil {
		return err
	}
	out := connectorFilesResponse{Files: make([]connectorFileInfo, len(files.Locations))}
	for i, id := range files.Locations {
		out.Files[i] = connectorFileInfo{FileID: id, FileName: files.Names[i]}
		if f := records[id]; f != nil {
			at := pythonISO(f.CreatedAt.Time)
			out.Files[i].FileSize, out.Files[i].UploadDate = &f.Size, &at
		}
	}
	return writeJSON(w, http.StatusOK, out)
}

// handleUpdateConnectorFiles serves POST
// /manage/admin/connector/{connector_id}/files/update: Onyx's
// update_connector_files. The form's files (optional) are spooled as an
// upload's; once the caller may change the connector's files, its
// file_ids_to_remove (a JSON list, "[]" when absent) and the files are
// checked, and the store changes the connector in one transaction.
func (s *Server) handleUpdateConnectorFiles(w http.ResponseWriter, r *http.Request, c *quarry.Caller) error {
	var in updateConnectorFilesRequest
	var pathErrs decode.Errors
	if err := decode.Request(r, &in); err != nil && !errors.As(err, &pathErrs) {
		return err
	}
	form, err := spoolForm(w, r, "files")
	defer form.remove()
	switch {
	case err != nil: // A body that cannot be read is answered first, as FastAPI's form parsing is.
		return err
	case pathErrs != nil:
		return pathErrs
	}
	out, added, err := s.db.UpdateConnectorFiles(r.Context(), c, in.ID, func() (*store.ConnectorFilesChange, error) {
		field, ok := form.fields["file_ids_to_remove"]
		if !ok {
			field = "[]"
		}
		remove, err := quarry.ParseFileIDsToRemove(field)
		if err != nil {
			return nil, err
		}
		files, meta, err := s.filesToKeep(form.files, true, quarry.FileOriginConnector)
		if err != nil {
			return nil, err
		}
		ch := &store.ConnectorFilesChange{Remove: remove}
		for i := range files {
			if i == meta {
				ch.Metadata = &files[i]
			} else {
				ch.Add = append(ch.Add, files[i])
			}
		}
		return ch, nil
	})
	if err != nil {
		return err
	}
	return writeJSON(w, http.StatusOK, newFileUploadResponse(out.Locations, out.Names, out.MetadataID, added))
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
	b, err := io.ReadAll(io.LimitReader(rc, quarry.MaxMetadataBytes+1))
	if err != nil {
		return err
	}
	if len(b) > quarry.MaxMetadataBytes {
		return quarry.Errorf(quarry.EINVALID, "Unable to load %s: it is larger than %d bytes", quarry.OnyxMetadataFile, quarry.MaxMetadataBytes)
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

// connectorFileInfo is a file of a file connector: Onyx's
// ConnectorFileInfo.
type connectorFileInfo struct {
	FileID     string  `json:"file_id"`
	FileName   string  `json:"file_name"`
	FileSize   *int64  `json:"file_size"`
	UploadDate *string `json:"upload_date"`
}

// connectorFilesResponse is the answer to GET
// /manage/admin/connector/{connector_id}/files: Onyx's
// ConnectorFilesResponse.
type connectorFilesResponse struct {
	Files []connectorFileInfo `json:"files"`
}
