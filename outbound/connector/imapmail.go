package connector

import (
	"bufio"
	"bytes"
	"encoding/base64"
	"encoding/json"
	"fmt"
	"io"
	"mime"
	"mime/multipart"
	"mime/quotedprintable"
	"net/mail"
	"net/textproto"
	"strings"
	"time"
	"unicode/utf8"

	"golang.org/x/text/encoding/htmlindex"

	"github.com/quarryhq/quarry"
)

// imapMaxDepth bounds how deep multiparts and attached messages are read.
const imapMaxDepth = 10

// wordDecoder returns the decoder of the encoded words of headers (RFC
// 2047), in the charsets the WHATWG encoding standard names.
func wordDecoder() *mime.WordDecoder { return &mime.WordDecoder{CharsetReader: charsetReader} }

// charsetReader decodes the text of r, in charset, into UTF-8.
func charsetReader(charset string, r io.Reader) (io.Reader, error) {
	cs := strings.ToLower(strings.TrimSpace(charset))
	if cs == "" || cs == "utf-8" || cs == "us-ascii" || cs == "ascii" || cs == "utf8" {
		return r, nil
	}
	enc, err := htmlindex.Get(cs)
	if err != nil {
		return nil, fmt.Errorf("unknown charset %q", charset)
	}
	return enc.NewDecoder().Reader(r), nil
}

// imapDoc is the document of a message, the media types of the inline
// parts it skipped (images of an HTML body) and the attachments it could
// not read.
type imapDoc struct {
	quarry.Document
	skipped []string
	unread  []unreadAttachment
}

// unreadAttachment is an attachment of a message that is not read: of a
// kind Quarry does not read, damaged, or with more text than a document
// may hold.
type unreadAttachment struct {
	name, mediaType, why string
}

// String names the attachment, as the document's metadata lists it.
func (u unreadAttachment) String() string {
	if u.name == "" {
		return "(" + u.mediaType + ")"
	}
	return u.name + " (" + u.mediaType + ")"
}

// unreadAttachmentsKey is the metadata key of a message's document that
// lists the attachments it could not read.
const unreadAttachmentsKey = "unread_attachments"

// imapOwner is Onyx's BasicExpertInfo, as the IMAP connector fills it.
type imapOwner struct {
	DisplayName string `json:"display_name"`
	Email       string `json:"email"`
}

// imapDocument reads a message (RFC 5322, with MIME) into its document,
// as Onyx's _convert_email_headers_and_body_into_document: its id is its
// Message-ID ("" when it has none), its title and semantic identifier
// its subject ("Unknown Subject" when it has none), its primary owners
// its recipients (To, else Delivered-To) and then its sender, its
// doc_updated_at its Date (else arrived, when it reached the mailbox),
// and its sections its body, then the text of each of its attachments
// of a kind the file connector reads (quarry.FileKindOf: by the
// attachment's file name, else its media type), read by ExtractText, and
// of each attached message. Text is decoded from its transfer encoding
// and charset; HTML is read to its text. An attachment that cannot be
// read (of another kind, damaged, or past the size of a document) is
// named in the document's metadata (unread_attachments) and in d.unread,
// with why: the message is read all the same.
func imapDocument(pdf *PDFReader, raw []byte, arrived time.Time) (*imapDoc, error) {
	msg, err := mail.ReadMessage(bytes.NewReader(raw))
	if err != nil {
		return nil, fmt.Errorf("its header: %w", err)
	}
	h := msg.Header
	d := &imapDoc{Document: quarry.Document{
		ID:       messageIDOf(h.Get("Message-ID")),
		Source:   ImapSource,
		Metadata: map[string]any{},
	}}
	subject := decodeHeader(h.Get("Subject"))
	if subject == "" {
		subject = "Unknown Subject"
	}
	d.SemanticIdentifier, d.Title = subject, &subject
	if t, err := mail.ParseDate(h.Get("Date")); err == nil {
		d.DocUpdatedAt = &quarry.Time{Time: t.UTC()}
	} else if !arrived.IsZero() {
		d.DocUpdatedAt = &quarry.Time{Time: arrived.UTC()}
	}
	recipients := h.Get("To")
	if strings.TrimSpace(recipients) == "" {
		recipients = h.Get("Delivered-To")
	}
	var owners []imapOwner
	add := func(header string) {
		for _, a := range parseAddresses(header) {
			if a.Address != "" && !containsOwner(owners, a.Address) {
				owners = append(owners, imapOwner{DisplayName: a.Name, Email: a.Address})
			}
		}
	}
	add(recipients)
	add(h.Get("From"))
	for _, o := range owners {
		b, _ := json.Marshal(o)
		d.PrimaryOwners = append(d.PrimaryOwners, b)
	}
	r := mailReader{pdf: pdf}
	if err := r.part(textproto.MIMEHeader(h), msg.Body, 0, false); err != nil {
		return nil, err
	}
	d.Sections = append([]quarry.Section{{Text: strings.TrimSpace(strings.Join(r.body, "\n\n"))}}, r.attachments...)
	d.skipped, d.unread = r.skipped, r.unread
	if len(r.unread) > 0 {
		names := make([]string, len(r.unread))
		for i, u := range r.unread {
			names[i] = u.String()
		}
		d.Metadata[unreadAttachmentsKey] = names
	}
	return d, nil
}

// containsOwner reports whether owners has one of address addr.
func containsOwner(owners []imapOwner, addr string) bool {
	for _, o := range owners {
		if strings.EqualFold(o.Email, addr) {
			return true
		}
	}
	return false
}

// parseAddresses reads the addresses of an address header; one that does
// not parse as a list is read address by address, and what does not
// parse is left out.
func parseAddresses(header string) []*mail.Address {
	if strings.TrimSpace(header) == "" {
		return nil
	}
	p := &mail.AddressParser{WordDecoder: wordDecoder()}
	if list, err := p.ParseList(header); err == nil {
		return list
	}
	var out []*mail.Address
	for _, one := range strings.Split(header, ",") {
		if a, err := p.Parse(one); err == nil {
			out = append(out, a)
		}
	}
	return out
}

// decodeHeader decodes the encoded words of a header's value; a value
// that does not decode is kept as it is, made valid UTF-8.
func decodeHeader(v string) string {
	s, err := wordDecoder().DecodeHeader(v)
	if err != nil {
		s = v
	}
	return strings.TrimSpace(strings.ToValidUTF8(s, "\uFFFD"))
}

// mailReader gathers the text of a message's parts.
type mailReader struct {
	pdf         *PDFReader         // Reads the attached PDFs.
	body        []string           // The texts of the body, in order.
	attachments []quarry.Section   // One per attachment read.
	skipped     []string           // The media types of the inline parts not read.
	unread      []unreadAttachment // The attachments not read.
	size        int                // The bytes of text read so far.
}

// part reads one part (the message itself at depth 0): a multipart's
// parts in turn (for multipart/alternative, the plain text if there is
// one, else the HTML), an attached message's, or a leaf's text.
// attached tells that the part is inside an attachment.
func (r *mailReader) part(h textproto.MIMEHeader, body io.Reader, depth int, attached bool) error {
	if depth > imapMaxDepth {
		return fmt.Errorf("its parts are nested more than %d deep", imapMaxDepth)
	}
	mt, params, err := mime.ParseMediaType(h.Get("Content-Type"))
	if err != nil {
		mt, params = "text/plain", map[string]string{} // RFC 2045's default.
	}
	disp, dparams, _ := mime.ParseMediaType(h.Get("Content-Disposition"))
	name := decodeHeader(dparams["filename"])
	if name == "" {
		name = decodeHeader(params["name"])
	}
	isAttachment := attached || disp == "attachment" || (disp != "inline" && name != "" && depth > 0)
	kind := ""
	if !strings.HasPrefix(mt, "multipart/") {
		kind = quarry.FileKindOf(name, mt)
	}
	switch {
	case strings.HasPrefix(mt, "multipart/"):
		boundary := params["boundary"]
		if boundary == "" {
			return fmt.Errorf("its %s part has no boundary", mt)
		}
		mr := multipart.NewReader(body, boundary)
		type leaf struct {
			h    textproto.MIMEHeader
			body []byte
		}
		var alternatives []leaf
		for {
			p, err := mr.NextRawPart()
			if err == io.EOF {
				break
			}
			if err != nil {
				return fmt.Errorf("its %s part: %w", mt, err)
			}
			if mt == "multipart/alternative" {
				b, err := io.ReadAll(p)
				if err != nil {
					return fmt.Errorf("its %s part: %w", mt, err)
				}
				alternatives = append(alternatives, leaf{p.Header, b})
				continue
			}
			if err := r.part(p.Header, p, depth+1, isAttachment); err != nil {
				return err
			}
		}
		if len(alternatives) > 0 {
			pick := alternatives[len(alternatives)-1] // The richest, as RFC 2046 orders them.
			for _, a := range alternatives {
				if amt, _, _ := mime.ParseMediaType(a.h.Get("Content-Type")); amt == "text/plain" {
					pick = a
					break
				}
			}
			return r.part(pick.h, bytes.NewReader(pick.body), depth+1, isAttachment)
		}
		return nil
	case mt == "message/rfc822" || mt == "message/global" || (kind == quarry.FileKindEML && mt != "text/plain" && mt != "text/html"):
		dec, err := transferDecoder(h, body)
		if err != nil {
			return err
		}
		inner, err := mail.ReadMessage(bufio.NewReader(dec))
		if err != nil {
			return fmt.Errorf("its attached message's header: %w", err)
		}
		sub := mailReader{pdf: r.pdf}
		if err := sub.part(textproto.MIMEHeader(inner.Header), inner.Body, depth+1, false); err != nil {
			return err
		}
		text := strings.TrimSpace(strings.Join(sub.body, "\n\n"))
		if s := decodeHeader(inner.Header.Get("Subject")); s != "" {
			text = s + "\n\n" + text
		}
		r.attachments = append(r.attachments, quarry.Section{Text: text})
		r.attachments = append(r.attachments, sub.attachments...)
		r.skipped = append(r.skipped, sub.skipped...)
		r.unread = append(r.unread, sub.unread...)
		r.size += len(text) + sub.size
		return nil
	case mt != "text/plain" && mt != "text/html" && kind != "":
		return r.file(h, body, name, mt, kind)
	case mt != "text/plain" && mt != "text/html":
		if isAttachment {
			why := quarry.FileNotRead(name)
			if name == "" || strings.HasPrefix(why, "Quarry reads files by their extension") {
				why = "Quarry does not read attachments of type " + mt
			}
			r.unread = append(r.unread, unreadAttachment{name: name, mediaType: mt, why: why})
		} else {
			r.skipped = append(r.skipped, mt)
		}
		_, _ = io.Copy(io.Discard, body)
		return nil
	}
	dec, err := transferDecoder(h, body)
	if err != nil {
		return err
	}
	text, err := readText(dec, params["charset"], mt == "text/html")
	if err != nil {
		return err
	}
	r.size += len(text)
	if isAttachment {
		if name != "" {
			text = name + "\n\n" + text
		}
		r.attachments = append(r.attachments, quarry.Section{Text: text})
	} else if text != "" {
		r.body = append(r.body, text)
	}
	return nil
}

// file reads an attachment (or an inline part) of a kind the file
// connector reads, by ExtractText, as a section of the name and the
// text, within what is left of the size of a document; one that cannot
// be read is recorded in r.unread with why.
func (r *mailReader) file(h textproto.MIMEHeader, body io.Reader, name, mt, kind string) error {
	defer io.Copy(io.Discard, body)
	var text string
	dec, err := transferDecoder(h, body)
	if err == nil {
		text, err = ExtractText(r.pdf, kind, dec, max(quarry.MaxDocumentBytes-r.size, 0))
	}
	if err != nil {
		r.unread = append(r.unread, unreadAttachment{name: name, mediaType: mt, why: err.Error()})
		return nil
	}
	text = strings.TrimSpace(text)
	r.size += len(text)
	if name != "" {
		text = name + "\n\n" + text
	}
	r.attachments = append(r.attachments, quarry.Section{Text: text})
	return nil
}

// readMessage reads a message file (.eml) to its document, as the IMAP
// connector reads a message (imapDocument); with no Date header, it has
// no doc_updated_at.
func readMessage(pdf *PDFReader, r io.Reader) (*imapDoc, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return nil, err
	}
	d, err := imapDocument(pdf, b, time.Time{})
	if err != nil {
		return nil, fmt.Errorf("the message cannot be read: %w", err)
	}
	return d, nil
}

// messageText is the text of a message's document: its subject, then
// its sections, a blank line between them.
func messageText(d *imapDoc) string {
	parts := []string{d.SemanticIdentifier}
	for _, s := range d.Sections {
		if t := strings.TrimSpace(s.Text); t != "" {
			parts = append(parts, t)
		}
	}
	return strings.Join(parts, "\n\n")
}

// transferDecoder returns the reader of a part's body decoded from its
// Content-Transfer-Encoding.
func transferDecoder(h textproto.MIMEHeader, body io.Reader) (io.Reader, error) {
	switch cte := strings.ToLower(strings.TrimSpace(h.Get("Content-Transfer-Encoding"))); cte {
	case "", "7bit", "8bit", "binary":
		return body, nil
	case "quoted-printable":
		return quotedprintable.NewReader(body), nil
	case "base64":
		return base64.NewDecoder(base64.StdEncoding, body), nil // Line breaks are ignored.
	default:
		return nil, fmt.Errorf("unknown Content-Transfer-Encoding %q", cte)
	}
}

// readText reads a text part in charset to its text: HTML's as the web
// connector reads a page's, plain text as it is.
func readText(r io.Reader, charset string, isHTML bool) (string, error) {
	b, err := io.ReadAll(r)
	if err != nil {
		return "", fmt.Errorf("decoding a part: %w", err)
	}
	if cr, err := charsetReader(charset, bytes.NewReader(b)); err == nil {
		if u, err := io.ReadAll(cr); err == nil {
			b = u
		}
	}
	// An unknown charset is read as UTF-8, bytes that are not made
	// U+FFFD.
	if !utf8.Valid(b) {
		b = []byte(strings.ToValidUTF8(string(b), "\uFFFD"))
	}
	if isHTML {
		p, err := readHTML(bytes.NewReader(b))
		if err != nil {
			return "", fmt.Errorf("its HTML: %w", err)
		}
		return strings.TrimSpace(p.Text), nil
	}
	s := strings.ReplaceAll(string(b), "\r\n", "\n")
	return strings.TrimSpace(s), nil
}

// messageID returns the Message-ID of a raw message, read from its header
// lines without parsing the message (which may not parse); "" if none.
func messageID(raw []byte) string {
	tp := textproto.NewReader(bufio.NewReader(bytes.NewReader(raw)))
	for {
		line, err := tp.ReadLine()
		if err != nil || line == "" {
			return ""
		}
		k, v, ok := strings.Cut(line, ":")
		if ok && strings.EqualFold(strings.TrimSpace(k), "Message-ID") {
			return messageIDOf(v)
		}
	}
}

// messageIDOf is the id of a message whose Message-ID header is v: v
// trimmed, with its angle brackets as Onyx keeps them; "" when v is
// empty, longer than a document id may be or not UTF-8.
func messageIDOf(v string) string {
	v = strings.TrimSpace(v)
	if len(v) > quarry.MaxDocumentIDBytes || !utf8.ValidString(v) {
		return ""
	}
	return v
}
