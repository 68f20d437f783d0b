package toolrun

import (
	"context"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"slices"
	"strconv"
	"strings"
	"syscall"
	"time"
)

// Policy says where a Runner may connect, and how long and how much it
// may take. The zero Policy refuses every internal address and uses the
// default limits.
type Policy struct {
	// Allow lists the networks that are opened although their addresses
	// are internal (see Refusal).
	Allow []netip.Prefix
	// AllowHosts lists host names (lower case, without a trailing dot)
	// that are opened whatever they resolve to; "*.example.com" opens
	// every name under example.com (not example.com itself).
	AllowHosts []string
	// ConnectTimeout bounds each connection attempt and TLS handshake;
	// zero means DefaultConnectTimeout.
	ConnectTimeout time.Duration
	// Timeout bounds a whole call, redirects and reading the answer
	// included; zero means DefaultTimeout.
	Timeout time.Duration
	// MaxBytes caps the answer's body; a longer one is cut and marked
	// truncated. Zero means DefaultMaxBytes.
	MaxBytes int64
	// MaxRunsPerCaller and MaxRunsPerTool cap the runs in progress at
	// once in this process, of one caller and of one tool (Runner.Admit);
	// zero means DefaultRunsPerCaller and DefaultRunsPerTool.
	MaxRunsPerCaller, MaxRunsPerTool int
	// Lookup resolves a host name to its addresses; nil means the
	// system's resolver. Tests set it to make a name resolve to what they
	// need.
	Lookup func(ctx context.Context, host string) ([]netip.Addr, error)
}

// The default limits of a Policy.
const (
	DefaultConnectTimeout = 5 * time.Second
	DefaultTimeout        = 30 * time.Second
	DefaultMaxBytes       = 1 << 20
	// MaxRedirects is the number of redirects a call follows; the next one
	// fails it.
	MaxRedirects = 3
)

// AllowSetting is the name of the setting that opens internal addresses,
// which refusals name.
const AllowSetting = "QUARRY_TOOL_EGRESS_ALLOW"

// withDefaults returns p with its zero limits set to the defaults.
func (p Policy) withDefaults() Policy {
	if p.MaxRunsPerCaller <= 0 {
		p.MaxRunsPerCaller = DefaultRunsPerCaller
	}
	if p.MaxRunsPerTool <= 0 {
		p.MaxRunsPerTool = DefaultRunsPerTool
	}
	if p.ConnectTimeout <= 0 {
		p.ConnectTimeout = DefaultConnectTimeout
	}
	if p.Timeout <= 0 {
		p.Timeout = DefaultTimeout
	}
	if p.MaxBytes <= 0 {
		p.MaxBytes = DefaultMaxBytes
	}
	if p.Lookup == nil {
		p.Lookup = func(ctx context.Context, host string) ([]netip.Addr, error) {
			return net.DefaultResolver.LookupNetIP(ctx, "ip", host)
		}
	}
	return p
}

// ParseAllow reads the value of QUARRY_TOOL_EGRESS_ALLOW: a comma-separated
// list of networks in CIDR notation ("10.0.0.0/8", "fd12:3456::/48"),
// single addresses ("10.1.2.3", "::1") and host names ("api.internal",
// "*.corp.example.com"). Spaces around entries are ignored.
func ParseAllow(s string) (nets []netip.Prefix, hosts []string, err error) {
	for _, e := range strings.Split(s, ",") {
		e = strings.TrimSpace(e)
		if e == "" {
			continue
		}
		if strings.Contains(e, "/") {
			p, err := netip.ParsePrefix(e)
			if err != nil {
				return nil, nil, fmt.Errorf("%s: %q is not a network in CIDR notation", AllowSetting, e)
			}
			if p.Addr().Is4In6() {
				return nil, nil, fmt.Errorf("%s: %q is an IPv4-mapped IPv6 network: write the IPv4 network", AllowSetting, e)
			}
			nets = append(nets, p.Masked())
			continue
		}
		if a, err := netip.ParseAddr(strings.Trim(e, "[]")); err == nil {
			a = a.Unmap().WithZone("")
			nets = append(nets, netip.PrefixFrom(a, a.BitLen()))
			continue
		}
		h := strings.TrimSuffix(strings.ToLower(e), ".")
		name := strings.TrimPrefix(h, "*.")
		if !validHostName(name) || strings.Contains(name, "*") {
			return nil, nil, fmt.Errorf("%s: %q is neither a network, an address nor a host name", AllowSetting, e)
		}
		if _, ok := legacyIPv4(name); ok {
			return nil, nil, fmt.Errorf("%s: %q is an IPv4 address in a non-standard form: write it as a dotted quad", AllowSetting, e)
		}
		hosts = append(hosts, h)
	}
	return nets, hosts, nil
}

// validHostName reports whether s is a DNS name of letters, digits,
// hyphens and underscores, in labels of 1 to 63 characters.
func validHostName(s string) bool {
	if s == "" || len(s) > 253 {
		return false
	}
	for _, label := range strings.Split(s, ".") {
		if label == "" || len(label) > 63 {
			return false
		}
		for i := 0; i < len(label); i++ {
			c := label[i]
			if !('a' <= c && c <= 'z' || '0' <= c && c <= '9' || c == '-' || c == '_') {
				return false
			}
		}
	}
	return true
}

// A special is a range of addresses that is not the public internet, with
// what it is.
type special struct {
	prefix netip.Prefix
	what   string
}

func mustPrefix(s string) netip.Prefix { return netip.MustParsePrefix(s) }

// specials lists the address ranges Quarry does not call unless they are
// opened: IANA's special-purpose registries for IPv4 and IPv6, and the
// ranges clouds put their metadata services in. docs/decisions.md ("The
// egress guard") lists them with the reasons. Order matters only for the
// name a refusal gives (the first match).
var specials = []special{
	// IPv4.
	{mustPrefix("0.0.0.0/8"), "unspecified (\"this network\")"},
	{mustPrefix("10.0.0.0/8"), "private (RFC 1918)"},
	{mustPrefix("100.64.0.0/10"), "shared carrier-grade NAT (RFC 6598)"},
	{mustPrefix("127.0.0.0/8"), "loopback"},
	{mustPrefix("169.254.0.0/16"), "link-local (cloud metadata services live here)"},
	{mustPrefix("172.16.0.0/12"), "private (RFC 1918)"},
	{mustPrefix("192.0.0.0/24"), "IETF protocol assignment (RFC 6890)"},
	{mustPrefix("192.0.2.0/24"), "documentation (TEST-NET-1)"},
	{mustPrefix("192.31.196.0/24"), "AS112 service (RFC 7535)"},
	{mustPrefix("192.52.193.0/24"), "AMT relay anycast (RFC 7450)"},
	{mustPrefix("192.88.99.0/24"), "6to4 relay anycast (deprecated)"},
	{mustPrefix("192.168.0.0/16"), "private (RFC 1918)"},
	{mustPrefix("192.175.48.0/24"), "AS112 direct delegation (RFC 7534)"},
	{mustPrefix("198.18.0.0/15"), "benchmarking (RFC 2544)"},
	{mustPrefix("198.51.100.0/24"), "documentation (TEST-NET-2)"},
	{mustPrefix("203.0.113.0/24"), "documentation (TEST-NET-3)"},
	{mustPrefix("224.0.0.0/4"), "multicast"},
	{mustPrefix("240.0.0.0/4"), "reserved (and broadcast)"},
	// IPv6. IPv4-mapped addresses (::ffff:0:0/96) are judged as the IPv4
	// address they hold.
	{mustPrefix("::/128"), "unspecified"},
	{mustPrefix("::1/128"), "loopback"},
	{mustPrefix("::/96"), "IPv4-compatible (deprecated)"},
	{mustPrefix("::ffff:0:0:0/96"), "IPv4-translated (SIIT)"},
	{mustPrefix("64:ff9b::/96"), "NAT64 (judged by the IPv4 address it holds)"},
	{mustPrefix("64:ff9b:1::/48"), "local-use NAT64 (RFC 8215)"},
	{mustPrefix("100::/64"), "discard-only (RFC 6666)"},
	{mustPrefix("100:0:0:1::/64"), "dummy prefix (RFC 9780)"},
	{mustPrefix("2001::/23"), "IETF protocol assignment (Teredo, ORCHID, benchmarking...)"},
	{mustPrefix("2001:db8::/32"), "documentation"},
	{mustPrefix("2002::/16"), "6to4 (deprecated)"},
	{mustPrefix("2620:4f:8000::/48"), "AS112 direct delegation (RFC 7534)"},
	{mustPrefix("3fff::/20"), "documentation"},
	{mustPrefix("5f00::/16"), "segment routing SIDs (RFC 9602)"},
	{mustPrefix("fc00::/7"), "unique local (ULA; AWS's metadata service is fd00:ec2::254)"},
	{mustPrefix("fe80::/10"), "link-local"},
	{mustPrefix("fec0::/10"), "site-local (deprecated)"},
	{mustPrefix("ff00::/8"), "multicast"},
}

// Refusal returns why an address is not on the public internet (such as
// "loopback"), or "" if it is. An IPv4-mapped IPv6 address is judged as
// the IPv4 address it holds, and so is a NAT64 address (64:ff9b::/96)
// holding an internal one.
func Refusal(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	if !a.IsValid() {
		return "invalid"
	}
	for _, s := range specials {
		if !s.prefix.Contains(a) {
			continue
		}
		if s.prefix == mustPrefix("64:ff9b::/96") {
			b := a.As16()
			if why := Refusal(netip.AddrFrom4([4]byte(b[12:]))); why != "" {
				return "NAT64 of a " + why + " address"
			}
			continue
		}
		return s.what
	}
	return ""
}

// RefusedError is the error of a call the egress guard refused: it names
// the host (as written in the URL), the address it resolved to, if any,
// and why.
type RefusedError struct {
	Host   string
	Addr   string // "" when refused before any address was known
	Reason string
}

func (e *RefusedError) Error() string {
	if e.Addr == "" {
		return fmt.Sprintf("Quarry does not call %s: %s", e.Host, e.Reason)
	}
	if e.Addr == e.Host {
		return fmt.Sprintf("Quarry does not call %s: it is a %s address. To call internal APIs, add the host or its network to %s",
			e.Host, e.Reason, AllowSetting)
	}
	return fmt.Sprintf("Quarry does not call %s: it resolves to %s, a %s address. To call internal APIs, add the host or its network to %s",
		e.Host, e.Addr, e.Reason, AllowSetting)
}

// guard applies a Policy to the connections a Runner makes.
type guard struct {
	p      Policy
	dialer net.Dialer
}

func newGuard(p Policy) *guard {
	g := &guard{p: p}
	g.dialer = net.Dialer{Timeout: p.ConnectTimeout, KeepAlive: 30 * time.Second, ControlContext: g.controlContext}
	return g
}

// hostAllowed reports whether host (lower case) is on the allow-list.
func (g *guard) hostAllowed(host string) bool {
	host = strings.TrimSuffix(strings.ToLower(host), ".")
	for _, h := range g.p.AllowHosts {
		if h == host {
			return true
		}
		if suffix, ok := strings.CutPrefix(h, "*"); ok && strings.HasSuffix(host, suffix) && len(host) > len(suffix) {
			return true
		}
	}
	return false
}

// addrAllowed returns why a is refused, or "" when it may be dialed: it is
// public, or in an allowed network.
func (g *guard) addrAllowed(a netip.Addr) string {
	a = a.Unmap().WithZone("")
	why := Refusal(a)
	if why == "" {
		return ""
	}
	for _, p := range g.p.Allow {
		if p.Contains(a) {
			return ""
		}
	}
	return why
}

// checkURL refuses, before any connection, what no policy allows: schemes
// other than http and https, user names and passwords, hosts missing or
// written as IPv4 addresses in a non-standard form, and IP literals that
// are not allowed.
func (g *guard) checkURL(u *url.URL) error {
	if u.Scheme != "http" && u.Scheme != "https" {
		return &RefusedError{Host: u.Redacted(), Reason: fmt.Sprintf("only http and https URLs are called, not %q", u.Scheme)}
	}
	host := u.Hostname()
	if host == "" {
		return &RefusedError{Host: u.Redacted(), Reason: "the URL has no host"}
	}
	if u.User != nil {
		return &RefusedError{Host: host, Reason: "URLs with a user name or password are not called (send credentials as custom headers)"}
	}
	if port := u.Port(); port != "" {
		if n, err := strconv.Atoi(port); err != nil || n < 1 || n > 65535 {
			return &RefusedError{Host: host, Reason: fmt.Sprintf("%q is not a port", port)}
		}
	}
	if a, err := netip.ParseAddr(host); err == nil {
		if why := g.addrAllowed(a); why != "" {
			return &RefusedError{Host: host, Addr: host, Reason: why}
		}
		return nil
	}
	if a, ok := legacyIPv4(host); ok {
		return &RefusedError{Host: host, Reason: fmt.Sprintf(
			"it is the IPv4 address %s written in a non-standard form (decimal, octal or hexadecimal); write it as a dotted quad", a)}
	}
	if !validHostName(strings.TrimSuffix(strings.ToLower(host), ".")) {
		return &RefusedError{Host: host, Reason: "it is not a valid host name"}
	}
	return nil
}

// legacyIPv4 reads s as inet_aton(3) would: one to four parts separated by
// dots, each decimal, octal (leading 0) or hexadecimal (leading 0x), the
// last filling the remaining bytes. Some resolvers still accept these
// forms ("2130706433", "0x7f.1", "0177.0.0.1" are all 127.0.0.1), so they
// are refused outright rather than left to a resolver's reading.
func legacyIPv4(s string) (netip.Addr, bool) {
	s = strings.TrimSuffix(s, ".")
	parts := strings.Split(s, ".")
	if len(parts) == 0 || len(parts) > 4 {
		return netip.Addr{}, false
	}
	vals := make([]uint64, len(parts))
	for i, p := range parts {
		base, digits := 10, p
		switch {
		case strings.HasPrefix(p, "0x") || strings.HasPrefix(p, "0X"):
			base, digits = 16, p[2:]
		case len(p) > 1 && p[0] == '0':
			base, digits = 8, p[1:]
		}
		if digits == "" && base != 16 {
			return netip.Addr{}, false
		}
		if digits == "" {
			digits = "0"
		}
		v, err := strconv.ParseUint(digits, base, 32)
		if err != nil {
			return netip.Addr{}, false
		}
		vals[i] = v
	}
	var n uint64
	for i, v := range vals[:len(vals)-1] {
		if v > 255 {
			return netip.Addr{}, false
		}
		n |= v << (24 - 8*i)
	}
	last := vals[len(vals)-1]
	if last >= 1<<(8*(5-len(vals))) {
		return netip.Addr{}, false
	}
	n |= last
	return netip.AddrFrom4([4]byte{byte(n >> 24), byte(n >> 16), byte(n >> 8), byte(n)}), true
}

// approvedKey carries, in a dial's context, the addresses the guard
// approved for a host name on the allow-list; controlContext lets them
// through.
type approvedKey struct{}

// approve resolves host once and returns the addresses that may be
// dialed, and whether they were approved by the host's name being on the
// allow-list (then all of them are). A name that resolves to a refused
// address is refused whole, even if it has allowed ones too: which one a
// connection reaches should not depend on the order of the answer.
func (g *guard) approve(ctx context.Context, host string) ([]netip.Addr, bool, error) {
	var addrs []netip.Addr
	if a, err := netip.ParseAddr(host); err == nil {
		addrs = []netip.Addr{a}
	} else {
		name := strings.TrimSuffix(strings.ToLower(host), ".")
		if _, ok := legacyIPv4(host); ok || !validHostName(name) {
			return nil, false, &RefusedError{Host: host, Reason: "it is not a valid host name"}
		}
		if name == "localhost" || strings.HasSuffix(name, ".localhost") {
			// RFC 6761: these names are this machine's, whatever a
			// resolver would say of them.
			addrs = []netip.Addr{netip.MustParseAddr("127.0.0.1"), netip.MustParseAddr("::1")}
		} else if addrs, err = g.p.Lookup(ctx, host); err != nil {
			return nil, false, err
		}
	}
	if len(addrs) == 0 {
		return nil, false, &RefusedError{Host: host, Reason: "its name resolves to no address"}
	}
	byName := g.hostAllowed(host)
	ok := make([]netip.Addr, 0, len(addrs))
	for _, a := range addrs {
		a = a.Unmap()
		if !byName {
			if why := g.addrAllowed(a); why != "" {
				return nil, false, &RefusedError{Host: host, Addr: a.WithZone("").String(), Reason: why}
			}
		}
		ok = append(ok, a)
	}
	return ok, byName, nil
}

// dialContext is the Transport's DialContext: it resolves the host once
// (approve) and dials the approved addresses in turn. The address actually
// dialed is checked again as the socket connects (controlContext), so
// that no other resolution can bring another.
func (g *guard) dialContext(ctx context.Context, network, address string) (net.Conn, error) {
	host, port, err := net.SplitHostPort(address)
	if err != nil {
		return nil, err
	}
	addrs, byName, err := g.approve(ctx, host)
	if err != nil {
		return nil, err
	}
	dctx := ctx
	if byName {
		dctx = context.WithValue(ctx, approvedKey{}, addrs)
	}
	var firstErr error
	for _, a := range addrs {
		conn, err := g.dialer.DialContext(dctx, network, net.JoinHostPort(a.String(), port))
		if err == nil {
			return conn, nil
		}
		if firstErr == nil {
			firstErr = err
		}
		if ctx.Err() != nil {
			break
		}
	}
	return nil, firstErr
}

// controlContext runs as a socket connects, with the dial's context: the
// address must be allowed by the policy, or be one that dialContext
// approved for a host name on the allow-list. It is the check on the
// address actually dialed, whatever resolved it.
func (g *guard) controlContext(ctx context.Context, _, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return &RefusedError{Host: address, Reason: "the address dialed cannot be read"}
	}
	a := ap.Addr().Unmap().WithZone("")
	why := g.addrAllowed(a)
	if why == "" {
		return nil
	}
	approved, _ := ctx.Value(approvedKey{}).([]netip.Addr)
	if slices.ContainsFunc(approved, func(b netip.Addr) bool { return b.Unmap().WithZone("") == a }) {
		return nil
	}
	return &RefusedError{Host: a.String(), Addr: a.String(), Reason: why}
}
