package quarry

import (
	"net/http"
	"testing"
)

func TestAvatarType(t *testing.T) {
	webp := "RIFF\x24\x00\x00\x00WEBPVP8 \x18\x00\x00\x00"
	for _, tc := range []struct {
		head, want string
	}{
		{"\x89PNG\r\n\x1a\n\x00\x00\x00\rIHDR", "image/png"},
		{"\xff\xd8\xff\xe0\x00\x10JFIF", "image/jpeg"},
		{"GIF87a\x01\x00", "image/gif"},
		{"GIF89a\x01\x00", "image/gif"},
		{webp, "image/webp"},
		{"RIFF\x24\x00\x00\x00WAVEfmt ", ""}, // A RIFF that is not WebP.
		{"RIFF\x24\x00\x00\x00WEBP", ""},     // Too short to tell.
		{`<svg xmlns="http://www.w3.org/2000/svg"/>`, ""},
		{"<html><script>alert(1)</script>", ""},
		{"BM\x3a\x00", ""}, // BMP: an image, not one of the four.
		{"", ""},
		{"\x89PNG", ""},
	} {
		got, err := AvatarType([]byte(tc.head))
		if got != tc.want || (err == nil) != (tc.want != "") {
			t.Errorf("AvatarType(%q) = %q, %v; want %q", tc.head, got, err, tc.want)
		}
		// What it accepts, the WHATWG's sniffing (Go's) tells alike.
		if tc.want != "" && http.DetectContentType([]byte(tc.head)) != tc.want {
			t.Errorf("DetectContentType(%q) = %q, AvatarType %q", tc.head, http.DetectContentType([]byte(tc.head)), tc.want)
		}
	}
}

func TestPersonaImage(t *testing.T) {
	s := func(v string) *string { return &v }
	old := &Persona{UploadedImageID: s("old")}
	for _, tc := range []struct {
		name string
		old  *Persona
		in   PersonaInput
		want string
	}{
		{"new, none", nil, PersonaInput{}, "<nil>"},
		{"new, empty", nil, PersonaInput{UploadedImageID: s("")}, "<nil>"},
		{"new, one", nil, PersonaInput{UploadedImageID: s("a")}, "a"},
		{"change, null keeps", old, PersonaInput{}, "old"},
		{"change, empty keeps", old, PersonaInput{UploadedImageID: s("")}, "old"},
		{"change, another", old, PersonaInput{UploadedImageID: s("a")}, "a"},
		{"change, remove", old, PersonaInput{RemoveImage: true}, "<nil>"},
		{"change, remove with one", old, PersonaInput{RemoveImage: true, UploadedImageID: s("a")}, "a"},
	} {
		got := "<nil>"
		if p := tc.in.PersonaImage(tc.old); p != nil {
			got = *p
		}
		if got != tc.want {
			t.Errorf("%s: %s, want %s", tc.name, got, tc.want)
		}
	}
}

func TestCheckPersonaImage(t *testing.T) {
	s := func(v string) *string { return &v }
	c := &Caller{User: User{ID: "u1"}}
	mine := &File{ID: "f1", Origin: FileOriginAvatar, UploadedBy: "u1"}
	for _, tc := range []struct {
		name string
		old  *Persona
		id   string
		f    *File
		ok   bool
	}{
		{"mine", nil, "f1", mine, true},
		{"another's", nil, "f2", &File{ID: "f2", Origin: FileOriginAvatar, UploadedBy: "u2"}, false},
		{"uploader gone", nil, "f2", &File{ID: "f2", Origin: FileOriginAvatar}, false},
		{"a connector's", nil, "f3", &File{ID: "f3", Origin: FileOriginUpload, UploadedBy: "u1"}, false},
		{"none", nil, "f4", nil, false},
		{"the one it has, another's", &Persona{UploadedImageID: s("f2")}, "f2", &File{ID: "f2", Origin: FileOriginAvatar, UploadedBy: "u2"}, true},
		{"another's, over one it has", &Persona{UploadedImageID: s("f1")}, "f2", &File{ID: "f2", Origin: FileOriginAvatar, UploadedBy: "u2"}, false},
	} {
		if err := c.CheckPersonaImage(tc.old, tc.id, tc.f); (err == nil) != tc.ok {
			t.Errorf("%s: %v", tc.name, err)
		}
	}
	p := &Persona{UploadedImageID: s("f1")}
	if CheckAvatar(p, mine) != nil || CheckAvatar(p, nil) == nil || CheckAvatar(&Persona{}, mine) == nil ||
		CheckAvatar(p, &File{ID: "f1", Origin: FileOriginUpload}) == nil || CheckAvatar(p, &File{ID: "f9", Origin: FileOriginAvatar}) == nil {
		t.Error("CheckAvatar serves what it should not, or not what it should")
	}
}
