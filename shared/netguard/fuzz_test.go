package netguard

import (
	"context"
	"errors"
	"hash/fnv"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"testing"
)

// fuzzDNS answers every name, deterministically from its hash, with one of
// the answers below: public, private, metadata, loopback, mixed, an error, or
// nothing. Names are case-insensitive and a trailing dot is ignored, as in
// DNS. It records what it answered.
type fuzzDNS struct{ answered map[string][]netip.Addr }

var fuzzAnswers = [][]netip.Addr{
	{netip.MustParseAddr("93.184.216.34")},
	{netip.MustParseAddr("10.0.0.7")},
	{netip.MustParseAddr("169.254.169.254")},
	{netip.MustParseAddr("::1")},
	{netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("127.0.0.1")},
	{netip.MustParseAddr("2606:4700:4700::1111")},
	{netip.MustParseAddr("fd00:ec2::254")},
	{netip.MustParseAddr("::ffff:10.1.2.3")},
	{netip.MustParseAddr("64:ff9b::a9fe:a9fe")},
	{netip.MustParseAddr("100.64.1.1"), netip.MustParseAddr("2606:4700:4700::1111")},
	nil, // an error
	{},  // no addresses
}

func (f *fuzzDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	name := strings.ToLower(strings.TrimSuffix(host, "."))
	h := fnv.New32a()
	h.Write([]byte(name))
	a := fuzzAnswers[h.Sum32()%uint32(len(fuzzAnswers))]
	if a == nil {
		return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
	}
	f.answered[host] = a
	return a, nil
}

// forbiddenForTest is an oracle written apart from the policy's table: the
// standard library's predicates and the ranges a webhook must never reach.
// It is allowed to be laxer than the policy, never stricter.
func forbiddenForTest(ip netip.Addr) bool {
	ip = ip.Unmap()
	if !ip.IsValid() || ip.IsUnspecified() || ip.IsLoopback() || ip.IsPrivate() || ip.IsLinkLocalUnicast() ||
		ip.IsMulticast() || ip.IsLinkLocalMulticast() || ip.IsInterfaceLocalMulticast() {
		return true
	}
	for _, p := range []string{"0.0.0.0/8", "100.64.0.0/10", "169.254.0.0/16", "240.0.0.0/4", "192.0.2.0/24", "2001:db8::/32"} {
		if netip.MustParsePrefix(p).Contains(ip.WithZone("")) {
			return true
		}
	}
	for _, p := range []string{"64:ff9b::/96"} { // NAT64 of a forbidden IPv4 address
		if pre := netip.MustParsePrefix(p); pre.Contains(ip.WithZone("")) {
			b := ip.As16()
			return forbiddenForTest(netip.AddrFrom4([4]byte(b[12:16])))
		}
	}
	return false
}

// FuzzCheckURL feeds arbitrary URLs to the registration check under the
// deployed policy (https only, no private addresses). Seeds: the f.Add calls
// and testdata/fuzz/FuzzCheckURL.
//
//	go test -run '^$' -fuzz '^FuzzCheckURL$' -fuzztime 30s ./shared/netguard
func FuzzCheckURL(f *testing.F) {
	for _, s := range []string{
		"https://hooks.example.com/gifq",
		"https://hooks.example.com:8443/gifq?x=1&y=%20",
		"https://93.184.216.34/hook",
		"https://[2606:4700:4700::1111]:443/hook",
		"https://127.0.0.1/",
		"https://[::ffff:127.0.0.1]/",
		"https://[64:ff9b::a9fe:a9fe]/",
		"https://169.254.169.254/latest/meta-data/",
		"https://%31%32%37.0.0.1/",
		"https://0177.0.0.1/",
		"https://2130706433/",
		"https://user@hooks.example.com/",
		"https://:pw@hooks.example.com/",
		"https://hooks.example.com/#",
		"https://hooks.example.com/%23",
		"HTTPS://HOOKS.EXAMPLE.COM./",
		"https://localhost./",
		"https://a.b.internal/",
		"https:///x",
		"https://[::1]:99999/",
		"http://hooks.example.com/",
		"//hooks.example.com/",
		"https:hooks.example.com",
		"https://hooks.example.com\\@127.0.0.1/",
		"https://127.0.0.1\\@hooks.example.com/",
		"https://hooks.example.com\t/",
	} {
		f.Add(s)
	}
	deployed := Policy{Schemes: []string{"https"}}
	f.Fuzz(func(t *testing.T, raw string) {
		dns := &fuzzDNS{answered: map[string][]netip.Addr{}}
		u, err := deployed.CheckURL(context.Background(), raw, dns)
		if err != nil {
			var ue *URLError
			if !errors.As(err, &ue) || u != nil {
				t.Fatalf("CheckURL(%q) = %v, %v: want a URLError and no URL", raw, u, err)
			}
			return
		}
		if u == nil {
			t.Fatalf("CheckURL(%q) accepted without a URL", raw)
		}
		// What the sender will POST to is what this URL parses to.
		again, err := url.Parse(raw)
		if err != nil || again.String() != u.String() {
			t.Fatalf("CheckURL(%q) returned %q, the sender would parse %v, %v", raw, u, again, err)
		}
		if !strings.EqualFold(u.Scheme, "https") {
			t.Fatalf("accepted scheme %q: %q", u.Scheme, raw)
		}
		if u.Host == "" || u.Hostname() == "" {
			t.Fatalf("accepted a URL without a host: %q", raw)
		}
		if u.User != nil {
			t.Fatalf("accepted credentials: %q", raw)
		}
		if u.Fragment != "" || strings.Contains(raw, "#") {
			t.Fatalf("accepted a fragment: %q", raw)
		}
		if ip, err := netip.ParseAddr(u.Hostname()); err == nil {
			if forbiddenForTest(ip) {
				t.Fatalf("accepted a forbidden literal address %s: %q", ip, raw)
			}
			return
		}
		for host, addrs := range dns.answered {
			for _, a := range addrs {
				if forbiddenForTest(a) {
					t.Fatalf("accepted %q although %q resolves to %s", raw, host, a)
				}
			}
		}
	})
}

// Zoned literals, checked directly: the registration check and the dial-time
// hook must refuse a loopback or link-local address whatever its zone.
func TestZonedIPv6Literals(t *testing.T) {
	deployed := Policy{Schemes: []string{"https"}}
	var bug []string
	for _, raw := range []string{"https://[::1%25lo]/", "https://[fe80::1%25eth0]/", "https://[fd00:ec2::254%25eth0]/"} {
		if _, err := deployed.CheckURL(context.Background(), raw, nil); err == nil {
			bug = append(bug, "CheckURL accepts "+raw)
		}
	}
	for _, addr := range []string{"[::1%lo]:443", "[fe80::1%eth0]:443", "[fd00:ec2::254%eth0]:80"} {
		if err := deployed.Control("tcp6", addr, nil); !errors.Is(err, ErrForbidden) {
			bug = append(bug, "Control allows "+addr)
		}
	}
	if len(bug) > 0 {
		t.Fatalf("zoned IPv6 literals get past the guard: %s", strings.Join(bug, "; "))
	}
}
