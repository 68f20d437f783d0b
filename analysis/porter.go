package analysis

import "unicode/utf8"

// Stem returns the Porter stem of word, a lowercase word: the algorithm of
// Martin Porter's reference implementation, as Lucene's PorterStemmer
// (and PorterStemFilter) applies it, with its two departures from the
// paper ("bli" becomes "ble", "logi" becomes "log"). Words of one or two
// letters are left as they are.
func Stem(word string) string {
	if utf8.RuneCountInString(word) <= 2 {
		return word
	}
	s := &stemmer{b: []rune(word)} // Letters other than a, e, i, o, u (and y) are consonants.
	s.k = len(s.b) - 1
	s.step1ab()
	if s.k > 0 {
		s.step1c()
		s.step2()
		s.step3()
		s.step4()
		s.step5()
	}
	return string(s.b[:s.k+1])
}

// stemmer holds a word being stemmed: b[0..k] is the word so far, j the
// end of its stem once ends has matched a suffix.
type stemmer struct {
	b    []rune
	k, j int
}

// cons reports whether b[i] is a consonant.
func (s *stemmer) cons(i int) bool {
	switch s.b[i] {
	case 'a', 'e', 'i', 'o', 'u':
		return false
	case 'y':
		return i == 0 || !s.cons(i-1)
	}
	return true
}

// m measures the number of consonant sequences between 0 and j: with [C]
// a consonant sequence and [V] a vowel one, [C](VC){m}[V].
func (s *stemmer) m() int {
	n, i := 0, 0
	for {
		if i > s.j {
			return n
		}
		if !s.cons(i) {
			break
		}
		i++
	}
	i++
	for {
		for {
			if i > s.j {
				return n
			}
			if s.cons(i) {
				break
			}
			i++
		}
		i++
		n++
		for {
			if i > s.j {
				return n
			}
			if !s.cons(i) {
				break
			}
			i++
		}
		i++
	}
}

// vowelInStem reports whether b[0..j] holds a vowel.
func (s *stemmer) vowelInStem() bool {
	for i := 0; i <= s.j; i++ {
		if !s.cons(i) {
			return true
		}
	}
	return false
}

// doublec reports whether b[j-1..j] is a double consonant.
func (s *stemmer) doublec(j int) bool {
	return j >= 1 && s.b[j] == s.b[j-1] && s.cons(j)
}

// cvc reports whether b[i-2..i] is consonant-vowel-consonant and the
// second consonant is not w, x or y: the condition to restore an e (cav(e),
// lov(e), hop(e)) but not after snow, box, tray.
func (s *stemmer) cvc(i int) bool {
	if i < 2 || !s.cons(i) || s.cons(i-1) || !s.cons(i-2) {
		return false
	}
	switch s.b[i] {
	case 'w', 'x', 'y':
		return false
	}
	return true
}

// ends reports whether b[0..k] ends with suffix, and then sets j before it.
func (s *stemmer) ends(suffix string) bool {
	l := len(suffix) // Suffixes are ASCII: a byte is a rune.
	if l > s.k+1 {
		return false
	}
	for i := range l {
		if s.b[s.k-l+1+i] != rune(suffix[i]) {
			return false
		}
	}
	s.j = s.k - l
	return true
}

// setTo replaces b[j+1..k] with t.
func (s *stemmer) setTo(t string) {
	s.b = s.b[:s.j+1]
	for i := range len(t) { // Replacements are ASCII too.
		s.b = append(s.b, rune(t[i]))
	}
	s.k = s.j + len(t)
}

// r replaces the suffix with t if m() > 0.
func (s *stemmer) r(t string) {
	if s.m() > 0 {
		s.setTo(t)
	}
}

// step1ab removes plurals and -ed or -ing.
func (s *stemmer) step1ab() {
	if s.b[s.k] == 's' {
		switch {
		case s.ends("sses"):
			s.k -= 2
		case s.ends("ies"):
			s.setTo("i")
		case s.b[s.k-1] != 's':
			s.k--
		}
	}
	if s.ends("eed") {
		if s.m() > 0 {
			s.k--
		}
	} else if (s.ends("ed") || s.ends("ing")) && s.vowelInStem() {
		s.k = s.j
		switch {
		case s.ends("at"):
			s.setTo("ate")
		case s.ends("bl"):
			s.setTo("ble")
		case s.ends("iz"):
			s.setTo("ize")
		case s.doublec(s.k):
			s.k--
			if c := s.b[s.k]; c == 'l' || c == 's' || c == 'z' {
				s.k++
			}
		default:
			s.j = s.k
			if s.m() == 1 && s.cvc(s.k) {
				s.setTo("e")
			}
		}
	}
	s.b = s.b[:s.k+1]
}

// step1c turns a terminal y into i when there is another vowel in the stem.
func (s *stemmer) step1c() {
	if s.ends("y") && s.vowelInStem() {
		s.b[s.k] = 'i'
	}
}

// replace tries the pairs of suffix and replacement in order: the first
// suffix that ends the word is replaced (if m() > 0) and the rest are left.
func (s *stemmer) replace(pairs ...string) {
	for i := 0; i < len(pairs); i += 2 {
		if s.ends(pairs[i]) {
			s.r(pairs[i+1])
			return
		}
	}
}

// step2 maps double suffixes to single ones (-ization to -ize, …).
func (s *stemmer) step2() {
	if s.k < 1 {
		return
	}
	switch s.b[s.k-1] {
	case 'a':
		s.replace("ational", "ate", "tional", "tion")
	case 'c':
		s.replace("enci", "ence", "anci", "ance")
	case 'e':
		s.replace("izer", "ize")
	case 'l':
		s.replace("bli", "ble", "alli", "al", "entli", "ent", "eli", "e", "ousli", "ous")
	case 'o':
		s.replace("ization", "ize", "ation", "ate", "ator", "ate")
	case 's':
		s.replace("alism", "al", "iveness", "ive", "fulness", "ful", "ousness", "ous")
	case 't':
		s.replace("aliti", "al", "iviti", "ive", "biliti", "ble")
	case 'g':
		s.replace("logi", "log")
	}
}

// step3 deals with -ic-, -full, -ness and the like.
func (s *stemmer) step3() {
	switch s.b[s.k] {
	case 'e':
		s.replace("icate", "ic", "ative", "", "alize", "al")
	case 'i':
		s.replace("iciti", "ic")
	case 'l':
		s.replace("ical", "ic", "ful", "")
	case 's':
		s.replace("ness", "")
	}
}

// step4 takes off -ant, -ence and the like, in context <c>vcvc<v>.
func (s *stemmer) step4() {
	if s.k < 1 {
		return
	}
	var found bool
	switch s.b[s.k-1] {
	case 'a':
		found = s.ends("al")
	case 'c':
		found = s.ends("ance") || s.ends("ence")
	case 'e':
		found = s.ends("er")
	case 'i':
		found = s.ends("ic")
	case 'l':
		found = s.ends("able") || s.ends("ible")
	case 'n':
		found = s.ends("ant") || s.ends("ement") || s.ends("ment") || s.ends("ent")
	case 'o':
		if s.ends("ion") && s.j >= 0 && (s.b[s.j] == 's' || s.b[s.j] == 't') {
			found = true
		} else {
			found = s.ends("ou")
		}
	case 's':
		found = s.ends("ism")
	case 't':
		found = s.ends("ate") || s.ends("iti")
	case 'u':
		found = s.ends("ous")
	case 'v':
		found = s.ends("ive")
	case 'z':
		found = s.ends("ize")
	}
	if found && s.m() > 1 {
		s.k = s.j
	}
}

// step5 removes a final -e if m() > 1, and changes -ll to -l if m() > 1.
func (s *stemmer) step5() {
	s.j = s.k
	if s.b[s.k] == 'e' {
		a := s.m()
		if a > 1 || a == 1 && !s.cvc(s.k-1) {
			s.k--
		}
	}
	if s.b[s.k] == 'l' && s.doublec(s.k) && s.m() > 1 {
		s.k--
	}
}
