package analysis

import (
	"reflect"
	"testing"
)

// TestStem checks the stemmer against the examples of Porter's paper ("An
// algorithm for suffix stripping", 1980) and of Lucene's departures.
func TestStem(t *testing.T) {
	for _, c := range [][2]string{
		{"caresses", "caress"}, {"ponies", "poni"}, {"ties", "ti"}, {"caress", "caress"}, {"cats", "cat"},
		{"feed", "feed"}, {"agreed", "agre"}, {"plastered", "plaster"}, {"bled", "bled"}, {"motoring", "motor"}, {"sing", "sing"},
		{"conflated", "conflat"}, {"troubled", "troubl"}, {"sized", "size"}, {"hopping", "hop"}, {"tanned", "tan"},
		{"falling", "fall"}, {"hissing", "hiss"}, {"fizzed", "fizz"}, {"failing", "fail"}, {"filing", "file"},
		{"happy", "happi"}, {"sky", "sky"},
		{"relational", "relat"}, {"conditional", "condit"}, {"rational", "ration"}, {"valenci", "valenc"},
		{"hesitanci", "hesit"}, {"digitizer", "digit"}, {"conformabli", "conform"}, {"radicalli", "radic"},
		{"differentli", "differ"}, {"vileli", "vile"}, {"analogousli", "analog"}, {"vietnamization", "vietnam"},
		{"predication", "predic"}, {"operator", "oper"}, {"feudalism", "feudal"}, {"decisiveness", "decis"},
		{"hopefulness", "hope"}, {"callousness", "callous"}, {"formaliti", "formal"}, {"sensitiviti", "sensit"},
		{"sensibiliti", "sensibl"},
		{"triplicate", "triplic"}, {"formative", "form"}, {"formalize", "formal"}, {"electriciti", "electr"},
		{"electrical", "electr"}, {"hopeful", "hope"}, {"goodness", "good"},
		{"revival", "reviv"}, {"allowance", "allow"}, {"inference", "infer"}, {"airliner", "airlin"},
		{"gyroscopic", "gyroscop"}, {"adjustable", "adjust"}, {"defensible", "defens"}, {"irritant", "irrit"},
		{"replacement", "replac"}, {"adjustment", "adjust"}, {"dependent", "depend"}, {"adoption", "adopt"},
		{"homologou", "homolog"}, {"communism", "commun"}, {"activate", "activ"}, {"angulariti", "angular"},
		{"homologous", "homolog"}, {"effective", "effect"}, {"bowdlerize", "bowdler"},
		{"probate", "probat"}, {"rate", "rate"}, {"cease", "ceas"}, {"controll", "control"}, {"roll", "roll"},
		// The reference implementation's departures, which Lucene keeps.
		{"possibly", "possibl"}, {"archaeology", "archaeolog"},
		// Short words and others.
		{"is", "is"}, {"a", "a"}, {"generalizations", "gener"}, {"oscillators", "oscil"}, {"quarry", "quarri"},
		{"flies", "fli"}, {"dying", "dy"}, {"running", "run"}, {"naïveté", "naïveté"},
	} {
		if got := Stem(c[0]); got != c[1] {
			t.Errorf("Stem(%q) = %q, want %q", c[0], got, c[1])
		}
	}
}

// TestAnalyze checks the whole chain as Lucene's EnglishAnalyzer runs it:
// words as the standard tokenizer cuts them, possessives, lowercase, stop
// words (positions still counted) and stems.
func TestAnalyze(t *testing.T) {
	terms := func(ts []Token) (out []string) {
		for _, t := range ts {
			out = append(out, t.Term)
		}
		return out
	}
	for _, c := range []struct {
		text string
		want []string
	}{
		{"The quick brown foxes jumped over the lazy dog's back", []string{"quick", "brown", "fox", "jump", "over", "lazi", "dog", "back"}},
		{"Quarry's connectors, and THEIR documents.", []string{"quarri", "connector", "document"}},
		{"U.S.A. costs 1,000.50 dollars; e-mail foo_bar@example.com", []string{"u.s.a", "cost", "1,000.50", "dollar", "e", "mail", "foo_bar", "example.com"}},
		{"don't stop: it's 3.14", []string{"don't", "stop", "3.14"}},
		{"日本語 text", []string{"日", "本", "語", "text"}},
		{"", nil},
		{"...,,,", nil},
		{"x:y 12:30 a,b", []string{"x:y", "12", "30", "b"}},
	} {
		if got := terms(Analyze(c.text)); !reflect.DeepEqual(got, c.want) {
			t.Errorf("Analyze(%q) = %q, want %q", c.text, got, c.want)
		}
	}
	ts := Analyze("the flow of air")
	if len(ts) != 2 || ts[0].Position != 1 || ts[1].Position != 3 || ts[1].Word != "air" || ts[1].Start != 12 {
		t.Errorf("positions and offsets: %+v", ts)
	}
}
