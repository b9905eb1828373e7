// Package netguard keeps deliveries away from addresses a webhook must never
// reach: loopback, private networks, link-local (cloud metadata), and the
// special-purpose ranges. It checks endpoint URLs at registration and, through
// a net.Dialer Control hook, every address actually dialled, so a hostname
// that resolves somewhere else later (DNS rebinding) is still refused.
package netguard

import (
	"context"
	"errors"
	"fmt"
	"net"
	"net/netip"
	"net/url"
	"strings"
	"syscall"
	"time"

	"github.com/gifq/webhooks/shared/domain"
)

// ErrForbidden is returned for an address the policy refuses.
var ErrForbidden = errors.New("address not allowed")

// Policy says what endpoint URLs may be.
type Policy struct {
	AllowPrivate bool     // local development: receivers on loopback and private networks
	Schemes      []string // allowed URL schemes, e.g. ["https"] deployed, ["http","https"] locally
}

var forbidden = mustPrefixes(
	"0.0.0.0/8",       // "this network"
	"10.0.0.0/8",      // private
	"100.64.0.0/10",   // carrier-grade NAT
	"127.0.0.0/8",     // loopback
	"169.254.0.0/16",  // link-local, EC2/ECS metadata 169.254.169.254 and 169.254.170.2
	"172.16.0.0/12",   // private
	"192.0.0.0/24",    // IETF protocol assignments
	"192.0.2.0/24",    // documentation
	"192.88.99.0/24",  // 6to4 relay anycast
	"192.168.0.0/16",  // private
	"198.18.0.0/15",   // benchmarking
	"198.51.100.0/24", // documentation
	"203.0.113.0/24",  // documentation
	"224.0.0.0/4",     // multicast
	"240.0.0.0/4",     // reserved, and 255.255.255.255
	"::/96",           // unspecified, loopback and the deprecated IPv4-compatible ::a.b.c.d (RFC 4291)
	"::ffff:0:0:0/96", // IPv4-translated (RFC 2765/6145 SIIT)
	"100::/64",        // discard
	"2001:db8::/32",   // documentation
	"fc00::/7",        // unique local, includes the EC2 metadata fd00:ec2::254
	"fe80::/10",       // link-local
	"fec0::/10",       // site-local, deprecated (RFC 3879) but still routed inside some networks
	"ff00::/8",        // multicast
)

// Embedded IPv4 inside IPv6 (NAT64, 6to4, Teredo is not routed from Lambda).
var (
	nat64     = netip.MustParsePrefix("64:ff9b::/96")
	nat64loc  = netip.MustParsePrefix("64:ff9b:1::/48")
	sixToFour = netip.MustParsePrefix("2002::/16")
)

func mustPrefixes(ss ...string) []netip.Prefix {
	out := make([]netip.Prefix, len(ss))
	for i, s := range ss {
		out[i] = netip.MustParsePrefix(s)
	}
	return out
}

// Allowed reports whether a delivery may connect to ip.
func (p Policy) Allowed(ip netip.Addr) bool {
	if p.AllowPrivate {
		return ip.IsValid()
	}
	return publicAddr(ip)
}

func publicAddr(ip netip.Addr) bool {
	if !ip.IsValid() {
		return false
	}
	// ::ffff:127.0.0.1 is 127.0.0.1, and fe80::1%eth0 is fe80::1 (a zoned
	// address is in no prefix, so it would otherwise pass every check).
	ip = ip.Unmap().WithZone("")
	if ip.Is6() {
		switch {
		case nat64.Contains(ip), nat64loc.Contains(ip):
			b := ip.As16()
			return publicAddr(netip.AddrFrom4([4]byte(b[12:16])))
		case sixToFour.Contains(ip):
			b := ip.As16()
			return publicAddr(netip.AddrFrom4([4]byte(b[2:6])))
		}
	}
	for _, p := range forbidden {
		if p.Contains(ip) {
			return false
		}
	}
	return true
}

// Control is a net.Dialer Control hook: it refuses to connect to an address
// the policy forbids. It runs after DNS resolution, on the very address dialled.
func (p Policy) Control(network, address string, _ syscall.RawConn) error {
	ap, err := netip.ParseAddrPort(address)
	if err != nil {
		return fmt.Errorf("%w: %s", ErrForbidden, address)
	}
	if !p.Allowed(ap.Addr()) {
		return fmt.Errorf("%w: %s", ErrForbidden, ap.Addr())
	}
	return nil
}

// URLError explains why an endpoint URL was refused; the message is safe to
// show the user.
type URLError struct{ Reason string }

func (e *URLError) Error() string { return e.Reason }

// Resolver looks up a host's addresses; net.DefaultResolver is one.
type Resolver interface {
	LookupNetIP(ctx context.Context, network, host string) ([]netip.Addr, error)
}

// CheckURL validates an endpoint URL at registration: absolute, an allowed
// scheme, a host, no credentials or fragment, and (unless private addresses
// are allowed) no literal or resolved address the policy forbids. A name that
// does not resolve yet is accepted: the dial-time check still applies.
func (p Policy) CheckURL(ctx context.Context, raw string, r Resolver) (*url.URL, error) {
	if len(raw) > domain.MaxURLLength {
		return nil, &URLError{fmt.Sprintf("url is longer than %d characters", domain.MaxURLLength)}
	}
	u, err := url.Parse(raw)
	if err != nil || !u.IsAbs() || u.Opaque != "" {
		return nil, &URLError{"url must be an absolute http(s) URL"}
	}
	scheme := strings.ToLower(u.Scheme)
	if !contains(p.Schemes, scheme) {
		return nil, &URLError{fmt.Sprintf("url scheme %q is not allowed (allowed: %s)", u.Scheme, strings.Join(p.Schemes, ", "))}
	}
	if u.User != nil {
		return nil, &URLError{"url must not contain credentials"}
	}
	if u.Fragment != "" || strings.Contains(raw, "#") {
		return nil, &URLError{"url must not contain a fragment"}
	}
	host := u.Hostname()
	if host == "" {
		return nil, &URLError{"url has no host"}
	}
	if p.AllowPrivate {
		return u, nil
	}
	if ip, err := netip.ParseAddr(strings.Trim(host, "[]")); err == nil {
		if !publicAddr(ip) {
			return nil, &URLError{"url points at a private, loopback, link-local or reserved address"}
		}
		return u, nil
	}
	if h := strings.ToLower(strings.TrimSuffix(host, ".")); h == "localhost" || strings.HasSuffix(h, ".localhost") ||
		strings.HasSuffix(h, ".internal") || strings.HasSuffix(h, ".local") {
		return nil, &URLError{"url points at a local host name"}
	}
	if r == nil {
		return u, nil
	}
	lctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	addrs, err := r.LookupNetIP(lctx, "ip", host)
	if err != nil {
		return u, nil // not resolvable now; refused at dial time if it ever points inside
	}
	for _, a := range addrs {
		if !publicAddr(a) {
			return nil, &URLError{"url resolves to a private, loopback, link-local or reserved address"}
		}
	}
	return u, nil
}

func contains(list []string, s string) bool {
	for _, x := range list {
		if strings.EqualFold(x, s) {
			return true
		}
	}
	return false
}

// Dialer returns a dialer that applies the policy at connect time.
func (p Policy) Dialer(timeout time.Duration) *net.Dialer {
	return &net.Dialer{Timeout: timeout, KeepAlive: 30 * time.Second, Control: p.Control}
}
