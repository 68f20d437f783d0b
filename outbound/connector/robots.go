package connector

import (
	"bufio"
	"io"
	"strings"
)

// robots is what a robots.txt says to one user agent: the Allow and
// Disallow rules of the group that names it (the longest name that is a
// prefix of its product token), else those of the group for "*"
// (RFC 9309). No rules allow everything.
type robots struct {
	rules []robotsRule
}

// robotsRule is one Allow or Disallow line.
type robotsRule struct {
	allow   bool
	pattern string // A path pattern: * matches any run of characters, a final $ the end.
}

// robotsMaxBytes bounds what is read of a robots.txt: RFC 9309 asks
// crawlers to read at least 500 KiB and lets them ignore what follows, so
// a larger robots.txt is read up to the limit (and the run goes on); the
// robots.txt files of the largest sites are tens of kilobytes.
const robotsMaxBytes = 512 << 10

// errRobotsTooLarge ends the read of a robots.txt over robotsMaxBytes.
var errRobotsTooLarge = &limitError{what: "robots.txt", limit: robotsMaxBytes}

// parseRobots reads the rules of robots.txt r, of at most robotsMaxBytes,
// for the user agent whose product token is agent (say,
// "Quarry-Web-Connector"). A read error ends the rules where it
// happens.
func parseRobots(r io.Reader, agent string) *robots {
	agent = strings.ToLower(agent)
	type group struct {
		agents []string
		rules  []robotsRule
	}
	var groups []*group
	var cur *group
	inAgents := false // The previous line was a user-agent line.
	sc := bufio.NewScanner(r)
	sc.Buffer(make([]byte, 0, 4096), robotsMaxBytes)
	for sc.Scan() {
		line, _, _ := strings.Cut(sc.Text(), "#")
		key, value, ok := strings.Cut(line, ":")
		if !ok {
			continue
		}
		key, value = strings.ToLower(strings.TrimSpace(key)), strings.TrimSpace(value)
		switch key {
		case "user-agent":
			if !inAgents || cur == nil {
				cur = &group{}
				groups = append(groups, cur)
			}
			cur.agents = append(cur.agents, strings.ToLower(value))
			inAgents = true
		case "allow", "disallow":
			inAgents = false
			if cur == nil {
				continue
			}
			if value == "" {
				continue // "Disallow:" allows everything.
			}
			cur.rules = append(cur.rules, robotsRule{allow: key == "allow", pattern: value})
		default:
			inAgents = false // Sitemap, Crawl-delay and others end no group but are not agents.
		}
	}
	best, bestLen := -1, -1
	var star []robotsRule
	for i, g := range groups {
		for _, a := range g.agents {
			switch {
			case a == "*":
				star = append(star, g.rules...)
			case strings.HasPrefix(agent, a) && len(a) > bestLen:
				best, bestLen = i, len(a)
			}
		}
	}
	if best >= 0 {
		// Every group naming the agent is merged, as RFC 9309 says.
		var rules []robotsRule
		for _, g := range groups {
			for _, a := range g.agents {
				if a != "*" && strings.HasPrefix(agent, a) && len(a) == bestLen {
					rules = append(rules, g.rules...)
					break
				}
			}
		}
		return &robots{rules: rules}
	}
	return &robots{rules: star}
}

// allowed reports whether the path (with its query) may be fetched: the
// rule with the longest pattern that matches decides, Allow winning a
// tie; no match allows.
func (r *robots) allowed(path string) bool {
	if r == nil {
		return true
	}
	if path == "" {
		path = "/"
	}
	if path == "/robots.txt" {
		return true
	}
	allow, n := true, -1
	for _, rule := range r.rules {
		if !robotsMatch(rule.pattern, path) {
			continue
		}
		if len(rule.pattern) > n || (len(rule.pattern) == n && rule.allow) {
			allow, n = rule.allow, len(rule.pattern)
		}
	}
	return allow
}

// robotsMatch reports whether a robots.txt path pattern matches path from
// its start: * matches any run of characters, and a $ at the end matches
// the end of the path.
func robotsMatch(pattern, path string) bool {
	anchored := strings.HasSuffix(pattern, "$")
	if anchored {
		pattern = pattern[:len(pattern)-1]
	}
	parts := strings.Split(pattern, "*")
	if !strings.HasPrefix(path, parts[0]) {
		return false
	}
	rest := path[len(parts[0]):]
	if len(parts) == 1 {
		return !anchored || rest == ""
	}
	for i, part := range parts[1:] {
		last := i == len(parts)-2
		if last && anchored {
			return strings.HasSuffix(rest, part)
		}
		j := strings.Index(rest, part)
		if j < 0 {
			return false
		}
		rest = rest[j+len(part):]
	}
	return true
}
