package connector

import (
	"errors"
	"fmt"
	"image"
	_ "image/gif" // Image formats whose size readImageSize reads.
	_ "image/jpeg"
	_ "image/png"
	"io"
	"mime"
	"net/url"
	"strings"
)

// webImage is what the web connector reads of an image a page links to:
// its size, which a browser shows in the title of an image it opens.
// Onyx's connector opens every link in a browser (Playwright's Chromium),
// which makes an image an "image document" titled "name (W×H)" with no
// text, and keeps that as a document.
type webImage struct {
	width, height int
	// known is false when the format is one readImageSize does not read
	// (WebP, BMP, ICO, AVIF): the browser would read its size, Quarry
	// titles it with its name alone.
	known bool
}

// webImageType reports whether the media type of Content-Type ct is an
// image's that a browser shows as an image document: image/*, but SVG,
// which it shows as a page of its own.
func webImageType(ct string) bool {
	mt, _, _ := mime.ParseMediaType(ct)
	return strings.HasPrefix(mt, "image/") && mt != "image/svg+xml"
}

// readImageSize reads the size of the image r holds from its header (the
// image is not decoded). A format it does not read gives an image whose
// size is not known; a damaged image the size 0×0, which a browser gives
// no title.
func readImageSize(r io.Reader) *webImage {
	cfg, _, err := image.DecodeConfig(r)
	switch {
	case errors.Is(err, image.ErrFormat):
		return &webImage{}
	case err != nil:
		return &webImage{known: true}
	}
	return &webImage{width: cfg.Width, height: cfg.Height, known: true}
}

// title is the title Chromium gives the image at u (Blink's
// ImageDocument: the last part of the URL's path, decoded, or its host
// when the path has none, and the size as "(W×H)"), with the name alone
// when the size is not known; "" for an image without a size (a damaged
// one), which Chromium leaves untitled.
func (img *webImage) title(u *url.URL) string {
	p := strings.TrimSuffix(u.Path, "/")
	name := p[strings.LastIndex(p, "/")+1:]
	if name == "" {
		name = u.Hostname()
	}
	switch {
	case !img.known:
		return name
	case img.width == 0 || img.height == 0:
		return ""
	}
	return fmt.Sprintf("%s (%d×%d)", name, img.width, img.height)
}
