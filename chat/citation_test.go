package chat

import (
	"fmt"
	"regexp"
	"strings"
	"testing"

	"github.com/quarryhq/quarry"
)

func link(s string) *string { return &s }

// citeAll runs tokens through a citer with documents 1 (a.example), 2
// (b.example) and 3 (the copy of 1's document in another pair), and
// returns the text and the citations as "{n}".
func citeAll(links bool, tokens ...string) string {
	p := newCiter(links)
	p.number(1, &quarry.SearchHit{DocumentID: "a", Pair: quarry.PairRef{ID: 1}, Link: link("https://a.example")})
	p.number(2, &quarry.SearchHit{DocumentID: "b", Pair: quarry.PairRef{ID: 1}})
	p.number(3, &quarry.SearchHit{DocumentID: "a", Pair: quarry.PairRef{ID: 2}, Link: link("https://a2.example")})
	var b strings.Builder
	out := func(ps []piece) {
		for _, x := range ps {
			if x.cite != nil {
				fmt.Fprintf(&b, "{%d}", x.cite.Number)
			} else {
				b.WriteString(x.text)
			}
		}
	}
	for _, tok := range tokens {
		out(p.write(tok))
	}
	out(p.flush())
	return b.String()
}

// TestCitations pins the citer to Onyx v4.6.1's DynamicCitationProcessor
// (hyperlink and remove modes), case by case.
func TestCitations(t *testing.T) {
	for _, tt := range []struct {
		name   string
		links  bool
		tokens []string
		want   string
	}{
		{"one citation", true, []string{"Basalt is volcanic [1]."}, "Basalt is volcanic {1}[[1]](https://a.example)."},
		{"split across pieces", true, []string{"Basalt is volcanic [", "1", "]", "."}, "Basalt is volcanic {1}[[1]](https://a.example)."},
		{"no space before", true, []string{"volcanic[1]."}, "volcanic{1} [[1]](https://a.example)."},
		{"a document without a link", true, []string{"It is [2]."}, "It is {2}[[2]]()."},
		{"several in one", true, []string{"It is [1, 2]."}, "It is {1}{2}[[1]](https://a.example) [[2]]()."},
		{"formatted already", true, []string{"It is [[1]]."}, "It is {1}[[1]](https://a.example)."},
		{"full-width brackets", true, []string{"It is 【1】 and ［2］."}, "It is {1}[[1]](https://a.example) and {2}[[2]]()."},
		{"an unknown number is dropped", true, []string{"It is [9] so."}, "It is  so."},
		{"unknown and known", true, []string{"It is [9, 2]."}, "It is {2}[[2]]()."},
		{"a second citation of a document announces nothing", true, []string{"A [1]. Then much later, again [1]."},
			"A {1}[[1]](https://a.example). Then much later, again [[1]](https://a.example)."},
		{"each copy of a document is its own", true, []string{"A [1] and [3]."}, "A {1}[[1]](https://a.example) and {3}[[3]](https://a2.example)."},
		{"in a code block", true, []string{"```\nx = a[1]", "\n```\nthen [1]"}, "```\nx = a[1]\n```\nthen {1}[[1]](https://a.example)"},
		{"held at the end", true, []string{"the end ["}, "the end ["},
		{"a bracket that is not a citation", true, []string{"a [b] c"}, "a [b] c"},
		{"removed", false, []string{"Basalt is volcanic [1]."}, "Basalt is volcanic."},
		{"removed before a space", false, []string{"It is [1] and [2] so"}, "It is and so"},
		{"removed, split", false, []string{"It is [", "1]", " so"}, "It is  so"},
	} {
		t.Run(tt.name, func(t *testing.T) {
			if got := citeAll(tt.links, tt.tokens...); got != tt.want {
				t.Errorf("got  %q\nwant %q", got, tt.want)
			}
		})
	}
}

func TestRemoveCitationLinks(t *testing.T) {
	for _, tt := range []struct{ in, want string }{
		{"Basalt [[1]](https://a.example/x(y)) is volcanic [[2]]().", "Basalt is volcanic."},
		{"no links", "no links"},
		{"open [[1]](https://a", "open [[1]](https://a"},
	} {
		if got := RemoveCitationLinks(tt.in); got != tt.want {
			t.Errorf("RemoveCitationLinks(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

var validName = regexp.MustCompile(`^[a-zA-Z0-9_-]{1,64}$`)

func TestNameTools(t *testing.T) {
	long := strings.Repeat("x", 70)
	tools := NameTools([]Tool{
		{ToolID: 5, ToolName: "Weather", Method: "getWeather"},
		{ToolID: 6, ToolName: "Weather 2", Method: "getWeather"},
		{ToolID: 7, ToolName: "docs", Method: "search", MCP: true},
		{ToolID: 8, ToolName: "wiki", Method: "search", MCP: true},
		{ToolID: 9, ToolName: "wiki", Method: "internal_search", MCP: true},
		{ToolID: 10, ToolName: "t", Method: long},
		{ToolID: 11, ToolName: "t", Method: long},
		{ToolID: 12, ToolName: "é", Method: "get.thing"},
		{ToolID: 13, ToolName: "x", Method: ""},
	})
	want := []string{"getWeather", "Weather_2_getWeather", "search", "mcp_wiki_search", "mcp_wiki_internal_search",
		("t_" + long)[:61] + "_10", ("t_" + long)[:61] + "_11", "get_thing", "_"}
	for i, tool := range tools {
		if tool.Name != want[i] {
			t.Errorf("tool %d: %q, want %q", tool.ToolID, tool.Name, want[i])
		}
		if !validName.MatchString(tool.Name) {
			t.Errorf("tool %d: %q is not a valid function name", tool.ToolID, tool.Name)
		}
	}
	// The same name twice gets the id, then a number.
	again := NameTools([]Tool{{ToolID: 1, ToolName: "a", Method: "m"}, {ToolID: 1, ToolName: "a", Method: "m"}, {ToolID: 1, ToolName: "a", Method: "m"},
		{ToolID: 1, ToolName: "a", Method: "m"}})
	for i, w := range []string{"m", "a_m", "a_m_1", "a_m_1_2"} {
		if again[i].Name != w {
			t.Errorf("again %d: %q, want %q", i, again[i].Name, w)
		}
	}
}
