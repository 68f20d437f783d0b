package connector

import (
	"archive/zip"
	"encoding/xml"
	"errors"
	"fmt"
	"io"
	"net/url"
	"path"
	"strings"

	"github.com/quarryhq/quarry"
)

// Limits of the EPUB reader.
const (
	// epubMaxPart bounds the container and package documents of an
	// EPUB, which are read whole.
	epubMaxPart = 16 << 20
	// epubMaxInflated bounds what is inflated of an EPUB's documents
	// together (a spine may name a document many times).
	epubMaxInflated = 256 << 20
)

// epubText writes the text of an EPUB (2 or 3) file: the XHTML documents
// of its package's spine, in reading order, each read as the file
// connector reads an HTML file, a blank line between them. The package
// document is the first rootfile META-INF/container.xml names; spine
// items that are not XHTML or HTML (images, SVG) are not read.
func epubText(out *textBuffer, r io.Reader) error {
	zr, tmp, err := openZip(r, "an EPUB")
	if err != nil {
		return err
	}
	defer tmp.Close()
	files := make(map[string]*zip.File, len(zr.File))
	for _, f := range zr.File {
		files[f.Name] = f
	}
	var container struct {
		Rootfiles []struct {
			FullPath string `xml:"full-path,attr"`
		} `xml:"rootfiles>rootfile"`
	}
	if err := readZipXML(files, "META-INF/container.xml", &container); err != nil {
		return err
	}
	if len(container.Rootfiles) == 0 || container.Rootfiles[0].FullPath == "" {
		return errors.New("it is not an EPUB file (its META-INF/container.xml names no package document)")
	}
	opf := container.Rootfiles[0].FullPath
	var pkg struct {
		Items []struct {
			ID        string `xml:"id,attr"`
			Href      string `xml:"href,attr"`
			MediaType string `xml:"media-type,attr"`
		} `xml:"manifest>item"`
		Spine []struct {
			IDRef string `xml:"idref,attr"`
		} `xml:"spine>itemref"`
	}
	if err := readZipXML(files, opf, &pkg); err != nil {
		return err
	}
	type item struct{ href, mediaType string }
	manifest := make(map[string]item, len(pkg.Items))
	for _, it := range pkg.Items {
		manifest[it.ID] = item{it.Href, it.MediaType}
	}
	dir := path.Dir(opf)
	left := int64(epubMaxInflated)
	for i, ref := range pkg.Spine {
		it, ok := manifest[ref.IDRef]
		if !ok || (it.mediaType != "application/xhtml+xml" && it.mediaType != "text/html") {
			continue
		}
		href, err := url.PathUnescape(strings.SplitN(it.href, "#", 2)[0])
		if err != nil {
			href = it.href
		}
		name := path.Join(dir, href)
		f := files[name]
		if f == nil {
			return fmt.Errorf("its spine names %s, which it does not hold", quarry.ClipText(name, 200))
		}
		rc, err := f.Open()
		if err != nil {
			return fmt.Errorf("its part %s cannot be read", quarry.ClipText(name, 200))
		}
		limit := min(left, maxFileInput)
		br := newBoundedReader(rc, limit, &limitError{what: "what its documents inflate to", limit: epubMaxInflated})
		if left > maxFileInput {
			br.tooLarge = &limitError{what: "its part " + quarry.ClipText(name, 200), limit: maxFileInput}
		}
		p, err := readHTML(br)
		rc.Close()
		left -= limit - max(br.left, 0)
		var le *limitError
		if errors.As(err, &le) {
			return err
		}
		if err != nil {
			return fmt.Errorf("its part %s: %w", quarry.ClipText(name, 200), err)
		}
		text := strings.TrimSpace(p.Text)
		if text == "" {
			continue
		}
		if i > 0 && out.b.Len() > 0 {
			text = "\n\n" + text
		}
		if err := out.WriteString(text); err != nil {
			return err
		}
	}
	return nil
}

// readZipXML decodes the XML part name of files into v.
func readZipXML(files map[string]*zip.File, name string, v any) error {
	f := files[name]
	if f == nil {
		return fmt.Errorf("it is not an EPUB file (it has no %s)", quarry.ClipText(name, 200))
	}
	rc, err := f.Open()
	if err != nil {
		return fmt.Errorf("its part %s cannot be read", quarry.ClipText(name, 200))
	}
	defer rc.Close()
	d := xml.NewDecoder(newBoundedReader(rc, epubMaxPart, &limitError{what: "its part " + quarry.ClipText(name, 200), limit: epubMaxPart}))
	d.Strict = false
	if err := d.Decode(v); err != nil {
		var le *limitError
		if errors.As(err, &le) {
			return err
		}
		return fmt.Errorf("its part %s does not parse as XML", quarry.ClipText(name, 200))
	}
	return nil
}
