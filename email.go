package quarry

import (
	"strings"
	"unicode"
	"unicode/utf8"

	"github.com/mtibben/confusables"
	"golang.org/x/text/cases"
	"golang.org/x/text/unicode/norm"
)

// maxEmailLength is the longest email address accepted (RFC 5321's limit
// on a path, less its angle brackets).
const maxEmailLength = 254

// ParseEmail checks that s is an email address a person can have and
// returns it without surrounding space and in Unicode normalization form KC
// (a full-width or Kelvin-sign letter becomes the letter it stands for),
// with the key it is compared by (EmailKey). It checks the shape only (one
// @, a local part and a domain with a dot, no spaces or control
// characters); only mail sent to it could prove more. An address for a new
// account must also pass CheckNewEmail.
func ParseEmail(s string) (email, key string, err error) {
	email = norm.NFKC.String(strings.TrimSpace(s))
	local, domain, ok := strings.Cut(email, "@")
	bad := !ok || local == "" || domain == "" || strings.Contains(domain, "@") ||
		!strings.Contains(strings.Trim(domain, "."), ".") || len(email) > maxEmailLength || !utf8.ValidString(email) ||
		strings.IndexFunc(email, func(r rune) bool { return unicode.IsSpace(r) || unicode.IsControl(r) }) >= 0
	if bad {
		if len(s) > 100 {
			s = s[:100] + "…"
		}
		return "", "", Errorf(EINVALID, "%q is not a valid email address", s)
	}
	return email, EmailKey(email), nil
}

// EmailKey returns the form in which an email is compared and stored for
// lookups: without surrounding space, NFKC-normalized and case-folded
// (NFKC_Casefold), so that "Kate@corp.example", "\u212Aate@corp.example"
// (a Kelvin sign) and full-width letters are the same address.
func EmailKey(email string) string { return FoldCase(strings.TrimSpace(email)) }

// FoldCase returns s in the form in which texts are compared without
// regard to case: NFKC-normalized and case-folded (NFKC_Casefold).
func FoldCase(s string) string {
	return norm.NFKC.String(cases.Fold().String(norm.NFKC.String(s)))
}

// EmailSkeleton returns the skeleton of the email with key key (Unicode
// TR39 confusable detection): two addresses with the same skeleton look
// alike, such as one with a Cyrillic "а" where the other has a Latin "a".
// No account is made with the skeleton of another's.
func EmailSkeleton(key string) string { return confusables.Skeleton(key) }

// ErrLookalikeEmail answers a new account (or invitation) whose email looks
// like an existing account's (EmailSkeleton).
var ErrLookalikeEmail = Errorf(EINVALID, "This email looks like the email of an existing account; use another, or ask an admin")

// CheckNewEmail reports why email, parsed by ParseEmail, may not be the
// address of a new account or invitation: its local part mixes scripts
// (Unicode TR39's "highly restrictive" level: one script, or Latin with
// Han and the Japanese or Korean scripts that go with it; digits and
// punctuation belong to every script).
func CheckNewEmail(email string) error {
	local, _, _ := strings.Cut(email, "@")
	if !singleScript(local) {
		return Errorf(EINVALID, "The email's name part mixes scripts (such as Latin and Cyrillic letters); use an address in one script")
	}
	return nil
}

// scriptSets are the sets of scripts a name may mix under TR39's highly
// restrictive level, besides any one script alone.
var scriptSets = [][]*unicode.RangeTable{
	{unicode.Latin, unicode.Han, unicode.Hiragana, unicode.Katakana},
	{unicode.Latin, unicode.Han, unicode.Bopomofo},
	{unicode.Latin, unicode.Han, unicode.Hangul},
}

// singleScript reports whether the letters of s belong to one script, or
// to one of scriptSets.
func singleScript(s string) bool {
	var used []*unicode.RangeTable
	for _, r := range s {
		if unicode.In(r, unicode.Common, unicode.Inherited) {
			continue
		}
		t := scriptOf(r)
		if t == nil {
			return false // unassigned
		}
		if !containsTable(used, t) {
			used = append(used, t)
		}
	}
	if len(used) <= 1 {
		return true
	}
	for _, set := range scriptSets {
		all := true
		for _, t := range used {
			all = all && containsTable(set, t)
		}
		if all {
			return true
		}
	}
	return false
}

// scriptOf returns the script of r, or nil.
func scriptOf(r rune) *unicode.RangeTable {
	for _, t := range unicode.Scripts {
		if unicode.Is(t, r) {
			return t
		}
	}
	return nil
}

func containsTable(ts []*unicode.RangeTable, t *unicode.RangeTable) bool {
	for _, u := range ts {
		if u == t {
			return true
		}
	}
	return false
}
