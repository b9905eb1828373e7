package netguard

import (
	"context"
	"errors"
	"net"
	"net/http"
	"net/http/httptest"
	"net/netip"
	"strings"
	"testing"
	"time"
)

func TestPublicAddr(t *testing.T) {
	tests := map[string]bool{
		"93.184.216.34":          true,
		"8.8.8.8":                true,
		"2606:4700:4700::1111":   true,
		"127.0.0.1":              false,
		"127.1.2.3":              false,
		"10.0.0.1":               false,
		"10.255.255.255":         false,
		"172.16.0.1":             false,
		"172.31.255.255":         false,
		"172.32.0.1":             true,
		"192.168.1.1":            false,
		"169.254.169.254":        false, // EC2 metadata
		"169.254.170.2":          false, // ECS task metadata
		"100.64.0.1":             false,
		"0.0.0.0":                false,
		"255.255.255.255":        false,
		"224.0.0.1":              false,
		"::1":                    false,
		"::":                     false,
		"fe80::1":                false,
		"fd00:ec2::254":          false, // EC2 metadata over IPv6
		"fc00::1":                false,
		"::ffff:127.0.0.1":       false, // IPv4-mapped loopback
		"::ffff:169.254.169.254": false,
		"::ffff:8.8.8.8":         true,
		"64:ff9b::a9fe:a9fe":     false, // NAT64 of 169.254.169.254
		"64:ff9b::808:808":       true,  // NAT64 of 8.8.8.8
		"2002:7f00:1::":          false, // 6to4 of 127.0.0.1
		"2002:0808:0808::":       true,
		"ff02::1":                false,
	}
	for s, want := range tests {
		if got := publicAddr(netip.MustParseAddr(s)); got != want {
			t.Errorf("publicAddr(%s) = %v, want %v", s, got, want)
		}
	}
	if !(Policy{AllowPrivate: true}).Allowed(netip.MustParseAddr("127.0.0.1")) {
		t.Error("AllowPrivate must allow loopback")
	}
}

type fakeDNS map[string][]netip.Addr

func (f fakeDNS) LookupNetIP(_ context.Context, _, host string) ([]netip.Addr, error) {
	if a, ok := f[host]; ok {
		return a, nil
	}
	return nil, &net.DNSError{Err: "no such host", Name: host, IsNotFound: true}
}

func TestCheckURL(t *testing.T) {
	dns := fakeDNS{
		"hooks.example.com":  {netip.MustParseAddr("93.184.216.34")},
		"rebind.example.com": {netip.MustParseAddr("93.184.216.34"), netip.MustParseAddr("10.0.0.5")},
		"meta.example.com":   {netip.MustParseAddr("169.254.169.254")},
		"v6loop.example.com": {netip.MustParseAddr("::1")},
	}
	deployed := Policy{Schemes: []string{"https"}}
	local := Policy{AllowPrivate: true, Schemes: []string{"http", "https"}}
	tests := []struct {
		p      Policy
		url    string
		reason string // "" when accepted
	}{
		{deployed, "https://hooks.example.com/gifq", ""},
		{deployed, "https://hooks.example.com:8443/gifq?x=1", ""},
		{deployed, "https://not-yet-in-dns.example.com/hook", ""},
		{deployed, "https://93.184.216.34/hook", ""},
		{deployed, "http://hooks.example.com/gifq", "scheme"},
		{deployed, "ftp://hooks.example.com/gifq", "scheme"},
		{deployed, "hooks.example.com/gifq", "absolute"},
		{deployed, "/relative", "absolute"},
		{deployed, "mailto:a@b.c", "absolute"},
		{deployed, "https://user:pw@hooks.example.com/", "credentials"},
		{deployed, "https://hooks.example.com/#frag", "fragment"},
		{deployed, "https:///nohost", "no host"},
		{deployed, "https://127.0.0.1/hook", "private"},
		{deployed, "https://[::1]/hook", "private"},
		{deployed, "https://169.254.169.254/latest/meta-data", "private"},
		{deployed, "https://10.1.2.3/hook", "private"},
		{deployed, "https://localhost/hook", "local host"},
		{deployed, "https://api.localhost/hook", "local host"},
		{deployed, "https://meta.example.com/hook", "resolves"},
		{deployed, "https://rebind.example.com/hook", "resolves"},
		{deployed, "https://v6loop.example.com/hook", "resolves"},
		{deployed, "https://" + strings.Repeat("a", 2050) + ".com/", "longer"},
		{deployed, "https://hooks.example.com/%zz", "absolute"},
		{local, "http://127.0.0.1:9000/hook", ""},
		{local, "http://localhost:9000/hook", ""},
		{local, "ftp://127.0.0.1/", "scheme"},
	}
	for _, tt := range tests {
		_, err := tt.p.CheckURL(context.Background(), tt.url, dns)
		if tt.reason == "" {
			if err != nil {
				t.Errorf("CheckURL(%q) = %v, want accepted", tt.url, err)
			}
			continue
		}
		var ue *URLError
		if !errors.As(err, &ue) || !strings.Contains(ue.Reason, tt.reason) {
			t.Errorf("CheckURL(%q) = %v, want a URLError about %q", tt.url, err, tt.reason)
		}
	}
}

// The dial-time check refuses a loopback receiver even though the URL is a
// host name (localhost resolves to 127.0.0.1 and ::1 through /etc/hosts).
func TestDialerRefusesForbiddenAddressAtConnectTime(t *testing.T) {
	srv := httptest.NewServer(http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		t.Error("the guarded client reached a loopback server")
	}))
	defer srv.Close()
	_, port, _ := net.SplitHostPort(strings.TrimPrefix(srv.URL, "http://"))

	guarded := &http.Client{Transport: &http.Transport{DialContext: Policy{}.Dialer(time.Second).DialContext}}
	_, err := guarded.Get("http://localhost:" + port + "/")
	if !errors.Is(err, ErrForbidden) {
		t.Fatalf("err = %v, want ErrForbidden", err)
	}

	open := &http.Client{Transport: &http.Transport{DialContext: Policy{AllowPrivate: true}.Dialer(time.Second).DialContext}}
	srv.Config.Handler = http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) { w.WriteHeader(204) })
	resp, err := open.Get("http://localhost:" + port + "/")
	if err != nil || resp.StatusCode != 204 {
		t.Fatalf("with private addresses allowed: %v %v", resp, err)
	}
	resp.Body.Close()
}

// The IPv4-compatible (::/96), IPv4-translated (::ffff:0:0:0/96) and
// site-local (fec0::/10) ranges reach inside as surely as the IPv4 they
// carry: refused at registration and at dial time alike.
func TestEmbeddedAndDeprecatedIPv6RangesAreRefused(t *testing.T) {
	p := Policy{Schemes: []string{"https"}}
	for _, ip := range []string{"::127.0.0.1", "::169.254.169.254", "::8.8.8.8", "::ffff:0:7f00:1", "::ffff:0:a9fe:a9fe", "fec0::1", "feff::1"} {
		if _, err := p.CheckURL(context.Background(), "https://["+ip+"]/hook", nil); err == nil {
			t.Errorf("CheckURL accepted https://[%s]/hook", ip)
		}
		if err := p.Control("tcp6", "["+ip+"]:443", nil); !errors.Is(err, ErrForbidden) {
			t.Errorf("dial guard let [%s]:443 through (err %v)", ip, err)
		}
	}
	if err := p.Control("tcp6", "[2606:4700:4700::1111]:443", nil); err != nil {
		t.Errorf("a public IPv6 address was refused: %v", err)
	}
}
