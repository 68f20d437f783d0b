package toolrun

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// lookupTable resolves the names of a test from a table; other names fail.
func lookupTable(names map[string][]string) func(context.Context, string) ([]netip.Addr, error) {
	return func(_ context.Context, host string) ([]netip.Addr, error) {
		addrs, ok := names[strings.TrimSuffix(strings.ToLower(host), ".")]
		if !ok {
			return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
		}
		var out []netip.Addr
		for _, a := range addrs {
			out = append(out, netip.MustParseAddr(a))
		}
		return out, nil
	}
}

// TestEgressTable checks the guard's decision, before any connection, for
// URLs in every spelling of an address it knows: each must be refused with
// a message naming the host (and, for an address refusal, the setting that
// opens it), or let through.
func TestEgressTable(t *testing.T) {
	names := map[string][]string{
		"api.test":                {"8.8.8.8"},
		"api6.test":               {"2606:4700:4700::1111"},
		"rebind.test":             {"10.1.1.1"},
		"mixed.test":              {"8.8.8.8", "127.0.0.1"},
		"metadata.test":           {"169.254.169.254"},
		"internal.corp":           {"10.9.9.9"},
		"a.b.corp.example.com":    {"10.9.9.9"},
		"corp.example.com":        {"10.9.9.8"},
		"v6internal.test":         {"fd12:3456::1"},
		"mapped.test":             {"::ffff:127.0.0.1"},
		"empty.test":              {},
		"nat64-loopback.test":     {"64:ff9b::7f00:1"},
		"cgnat.test":              {"100.64.1.1"},
		"allowed-mapped.corp.net": {"::ffff:10.1.2.3"},
	}
	const (
		ok      = ""
		setting = "QUARRY_TOOL_EGRESS_ALLOW"
	)
	for _, tt := range []struct {
		url    string
		allow  string // QUARRY_TOOL_EGRESS_ALLOW
		system bool   // resolve with the system's resolver (for localhost)
		want   string // "" when allowed, else a part of the refusal
	}{
		// Loopback, in every spelling.
		{url: "http://127.0.0.1/", want: "a loopback address. To call internal APIs, add the host or its network to " + setting},
		{url: "http://127.1.2.3:8080/x", want: "loopback"},
		{url: "http://2130706433/", want: "the IPv4 address 127.0.0.1 written in a non-standard form"},
		{url: "http://0x7f000001/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://0177.0.0.1/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://0x7f.0.0.1/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://0x7f.1/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://127.1/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://017700000001/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://127.000.000.001/", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://127.0.0.1./", want: "127.0.0.1 written in a non-standard form"},
		{url: "http://[::1]/", want: "loopback"},
		{url: "http://[0:0:0:0:0:0:0:1]/", want: "loopback"},
		{url: "http://[::ffff:127.0.0.1]/", want: "loopback"},
		{url: "http://[::ffff:7f00:1]/", want: "loopback"},
		{url: "http://[0:0:0:0:0:ffff:7f00:0001]:80/", want: "loopback"},
		{url: "http://[::127.0.0.1]/", want: "IPv4-compatible"},
		{url: "http://[::ffff:0:7f00:1]/", want: "IPv4-translated"},
		{url: "http://[64:ff9b::7f00:1]/", want: "NAT64 of a loopback address"},
		{url: "http://localhost/", system: true, want: "loopback"},
		{url: "http://LOCALHOST./", system: true, want: "loopback"},
		{url: "http://api.localhost/", system: true, want: "loopback"},
		{url: "http://mapped.test/", want: "resolves to 127.0.0.1, a loopback address"},
		{url: "http://nat64-loopback.test/", want: "NAT64 of a loopback address"},
		// Unspecified.
		{url: "http://0.0.0.0/", want: "unspecified"},
		{url: "http://0/", want: "0.0.0.0 written in a non-standard form"},
		{url: "http://[::]/", want: "unspecified"},
		// Private, unique local, shared NAT.
		{url: "http://10.0.0.1/", want: "private (RFC 1918)"},
		{url: "http://172.16.5.4/", want: "private (RFC 1918)"},
		{url: "http://172.31.255.255/", want: "private (RFC 1918)"},
		{url: "http://192.168.1.1/", want: "private (RFC 1918)"},
		{url: "http://[::ffff:192.168.1.1]/", want: "private (RFC 1918)"},
		{url: "http://[::ffff:c0a8:101]/", want: "private (RFC 1918)"},
		{url: "http://[fc00::1]/", want: "unique local"},
		{url: "http://v6internal.test/", want: "resolves to fd12:3456::1, a unique local"},
		{url: "http://100.64.0.1/", want: "carrier-grade NAT"},
		{url: "http://100.100.100.200/", want: "carrier-grade NAT"}, // Alibaba Cloud's metadata service
		{url: "http://cgnat.test/", want: "carrier-grade NAT"},
		{url: "http://rebind.test/", want: "resolves to 10.1.1.1, a private (RFC 1918) address"},
		{url: "http://mixed.test/", want: "resolves to 127.0.0.1, a loopback address"},
		// Link-local and cloud metadata services.
		{url: "http://169.254.169.254/latest/meta-data/", want: "link-local"},
		{url: "http://[::ffff:169.254.169.254]/", want: "link-local"},
		{url: "http://[::ffff:a9fe:a9fe]/", want: "link-local"},
		{url: "http://2852039166/", want: "169.254.169.254 written in a non-standard form"},
		{url: "http://[fd00:ec2::254]/", want: "unique local"},
		{url: "http://[fe80::1]/", want: "link-local"},
		{url: "http://[fe80::1%25eth0]/", want: "link-local"},
		{url: "http://metadata.test/", want: "resolves to 169.254.169.254, a link-local"},
		{url: "http://192.0.0.192/", want: "IETF protocol assignment"}, // Oracle Cloud's metadata service
		// Multicast, broadcast, reserved, documentation, benchmarking.
		{url: "http://224.0.0.1/", want: "multicast"},
		{url: "http://[ff02::1]/", want: "multicast"},
		{url: "http://255.255.255.255/", want: "reserved"},
		{url: "http://240.0.0.1/", want: "reserved"},
		{url: "http://198.18.0.1/", want: "benchmarking"},
		{url: "http://192.0.2.10/", want: "documentation"},
		{url: "http://[2001:db8::1]/", want: "documentation"},
		{url: "http://[2001::1]/", want: "IETF protocol assignment"}, // Teredo
		{url: "http://[2002:7f00:1::1]/", want: "6to4"},
		// Schemes, user information, hosts and ports.
		{url: "ftp://api.test/", want: `only http and https URLs are called, not "ftp"`},
		{url: "file:///etc/passwd", want: `not "file"`},
		{url: "gopher://127.0.0.1:70/", want: `not "gopher"`},
		{url: "http://user:secret@api.test/", want: "user name or password"},
		{url: "http://api.test:99999/", want: `"99999" is not a port`},
		{url: "http://empty.test/", want: "resolves to no address"},
		{url: "http://nowhere.test/", want: "no such host"},
		{url: "http://bad_host!.test/", want: "not a valid host name"},
		// Public addresses pass.
		{url: "http://8.8.8.8/", want: ok},
		{url: "https://93.184.216.34/x?y=1", want: ok},
		{url: "https://[2606:4700:4700::1111]/", want: ok},
		{url: "http://[::ffff:8.8.8.8]/", want: ok},
		{url: "http://[64:ff9b::808:808]/", want: ok},
		{url: "https://api.test/", want: ok},
		{url: "https://API.TEST./", want: ok},
		{url: "https://api6.test:8443/", want: ok},
		{url: "http://100.63.255.255/", want: ok},
		{url: "http://172.32.0.1/", want: ok},
		{url: "http://11.0.0.1/", want: ok},
		// The setting opens networks, addresses and names.
		{url: "http://10.1.2.3/", allow: "10.0.0.0/8", want: ok},
		{url: "http://[::ffff:10.1.2.3]/", allow: "10.0.0.0/8", want: ok},
		{url: "http://192.168.1.1/", allow: "10.0.0.0/8", want: "private (RFC 1918)"},
		{url: "http://127.0.0.1:8080/", allow: "127.0.0.1", want: ok},
		{url: "http://127.0.0.2/", allow: "127.0.0.1", want: "loopback"},
		{url: "http://[fd00:ec2::254]/", allow: "fd12:3456::/48", want: "unique local"},
		{url: "http://v6internal.test/", allow: "fd12:3456::/48", want: ok},
		{url: "http://internal.corp/", allow: "internal.corp", want: ok},
		{url: "http://INTERNAL.corp./", allow: "internal.corp", want: ok},
		{url: "http://a.b.corp.example.com/", allow: "*.corp.example.com", want: ok},
		{url: "http://corp.example.com/", allow: "*.corp.example.com", want: "private (RFC 1918)"},
		{url: "http://allowed-mapped.corp.net/", allow: "*.corp.net", want: ok},
		{url: "http://rebind.test/", allow: "internal.corp, 192.168.0.0/16", want: "private (RFC 1918)"},
	} {
		t.Run(tt.url+" "+tt.allow, func(t *testing.T) {
			nets, hosts, err := ParseAllow(tt.allow)
			if err != nil {
				t.Fatal(err)
			}
			p := Policy{Allow: nets, AllowHosts: hosts}
			if !tt.system {
				p.Lookup = lookupTable(names)
			}
			g := newGuard(p.withDefaults())
			u, err := url.Parse(tt.url)
			if err != nil {
				t.Fatal(err)
			}
			err = g.checkURL(u)
			if err == nil {
				_, _, err = g.approve(context.Background(), u.Hostname())
			}
			switch {
			case tt.want == ok && err != nil:
				t.Errorf("refused: %v", err)
			case tt.want != ok && err == nil:
				t.Errorf("allowed, want a refusal saying %q", tt.want)
			case tt.want != ok && !strings.Contains(err.Error(), tt.want):
				t.Errorf("refusal %q, want it to say %q", err, tt.want)
			}
			var re *RefusedError
			if err != nil && errors.As(err, &re) && !strings.Contains(err.Error(), u.Hostname()) && u.Hostname() != "" {
				t.Errorf("refusal %q does not name the host %q", err, u.Hostname())
			}
		})
	}
}

// TestRefusalRanges checks the edges of every range of the table: its
// first and last addresses are refused, and the addresses just outside are
// judged on their own.
func TestRefusalRanges(t *testing.T) {
	for _, s := range specials {
		first := s.prefix.Masked().Addr()
		last := first
		for range first.BitLen() - s.prefix.Bits() {
			last = last.Next()
			if !s.prefix.Contains(last) {
				last = last.Prev()
				break
			}
		}
		if s.prefix.Bits() < first.BitLen()-20 {
			last = lastOf(s.prefix)
		}
		for _, a := range []netip.Addr{first, last} {
			if s.prefix.String() == "64:ff9b::/96" {
				continue // judged by the IPv4 address it holds
			}
			if Refusal(a) == "" {
				t.Errorf("%s (in %s) is not refused", a, s.prefix)
			}
		}
	}
}

// lastOf returns the last address of p.
func lastOf(p netip.Prefix) netip.Addr {
	b := p.Masked().Addr().AsSlice()
	for i := p.Bits(); i < len(b)*8; i++ {
		b[i/8] |= 1 << (7 - i%8)
	}
	a, _ := netip.AddrFromSlice(b)
	return a
}

func TestParseAllow(t *testing.T) {
	for _, tt := range []struct {
		in    string
		nets  string
		hosts string
		err   string
	}{
		{in: "", nets: "[]", hosts: "[]"},
		{in: " 10.0.0.0/8 , 192.168.1.7, ::1, fd00::/8,api.internal, *.Corp.Example.com. ",
			nets: "[10.0.0.0/8 192.168.1.7/32 ::1/128 fd00::/8]", hosts: "[api.internal *.corp.example.com]"},
		{in: "10.1.2.3/8", nets: "[10.0.0.0/8]", hosts: "[]"},
		{in: "[::1]", nets: "[::1/128]", hosts: "[]"},
		{in: "::ffff:10.0.0.1", nets: "[10.0.0.1/32]", hosts: "[]"},
		{in: "10.0.0.0/33", err: "is not a network in CIDR notation"},
		{in: "::ffff:10.0.0.0/104", err: "IPv4-mapped"},
		{in: "http://api.internal", err: "is not a network in CIDR notation"},
		{in: "api internal", err: "neither a network"},
		{in: "a*.example.com", err: "neither a network"},
		{in: "2130706433", err: "non-standard form"},
	} {
		t.Run(tt.in, func(t *testing.T) {
			nets, hosts, err := ParseAllow(tt.in)
			if tt.err != "" {
				if err == nil || !strings.Contains(err.Error(), tt.err) {
					t.Fatalf("ParseAllow(%q) = %v, want an error saying %q", tt.in, err, tt.err)
				}
				return
			}
			if err != nil {
				t.Fatal(err)
			}
			if got := fmt.Sprint(nets); got != tt.nets && !(got == "[]" && tt.nets == "[]") {
				t.Errorf("nets = %s, want %s", got, tt.nets)
			}
			if got := fmt.Sprint(hosts); got != tt.hosts {
				t.Errorf("hosts = %s, want %s", got, tt.hosts)
			}
		})
	}
}

// TestLegacyIPv4 checks the reading of inet_aton's forms.
func TestLegacyIPv4(t *testing.T) {
	for _, tt := range []struct {
		in   string
		want string // "" when not an address
	}{
		{"127.0.0.1", "127.0.0.1"},
		{"2130706433", "127.0.0.1"},
		{"0x7f000001", "127.0.0.1"},
		{"0X7F.1", "127.0.0.1"},
		{"0177.0.0.01", "127.0.0.1"},
		{"10.65535", "10.0.255.255"},
		{"10.65536", "10.1.0.0"},
		{"10.16777216", ""},
		{"1.2.3.4.5", ""},
		{"256.1.1.1", ""},
		{"08.1.1.1", ""},
		{"0x", "0.0.0.0"},
		{"api.test", ""},
		{"", ""},
		{"4294967295", "255.255.255.255"},
		{"4294967296", ""},
	} {
		a, ok := legacyIPv4(tt.in)
		got := ""
		if ok {
			got = a.String()
		}
		if got != tt.want {
			t.Errorf("legacyIPv4(%q) = %q, want %q", tt.in, got, tt.want)
		}
	}
}

// TestDialedAddressIsChecked checks the check on the address actually
// dialed: a dial of a loopback address that skips the resolution step
// (as a second resolution would) is refused as the socket connects.
func TestDialedAddressIsChecked(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	g := newGuard(Policy{}.withDefaults())
	_, err = g.dialer.DialContext(context.Background(), "tcp", l.Addr().String())
	var re *RefusedError
	if !errors.As(err, &re) || re.Reason != "loopback" {
		t.Fatalf("dial of %s: %v, want a refusal of a loopback address", l.Addr(), err)
	}
	// Opened by the policy, the same dial connects.
	nets, _, _ := ParseAllow("127.0.0.1")
	g = newGuard(Policy{Allow: nets}.withDefaults())
	c, err := g.dialer.DialContext(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial with 127.0.0.1 allowed: %v", err)
	}
	c.Close()
}

// Runner.Dial, for connectors that do not speak HTTP, is guarded as the
// HTTP client is: loopback is refused by default, and reached once the
// policy opens it.
func TestRunnerDial(t *testing.T) {
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	go func() {
		for {
			c, err := l.Accept()
			if err != nil {
				return
			}
			c.Close()
		}
	}()
	var refused *RefusedError
	if _, err := NewRunner(Policy{}).Dial(context.Background(), "tcp", l.Addr().String()); !errors.As(err, &refused) || refused.Reason != "loopback" {
		t.Errorf("dial of loopback by default: %v, want the guard's refusal", err)
	}
	nets, hosts, err := ParseAllow("127.0.0.1")
	if err != nil {
		t.Fatal(err)
	}
	c, err := NewRunner(Policy{Allow: nets, AllowHosts: hosts}).Dial(context.Background(), "tcp", l.Addr().String())
	if err != nil {
		t.Fatalf("dial of loopback once allowed: %v", err)
	}
	c.Close()
}
