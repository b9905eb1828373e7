package webhook

import (
	"context"
	"encoding/binary"
	"errors"
	"net"
	"net/netip"
	"strings"
	"sync"
	"testing"
)

// dnsServer is a minimal authoritative DNS server on loopback UDP for the
// tests: every A or AAAA question, whatever the name, gets the addresses set
// last (TTL 0), so a test can make one name point somewhere else between two
// lookups, as a rebinding attacker's server does.
type dnsServer struct {
	conn net.PacketConn

	mu      sync.Mutex
	addrs   []netip.Addr
	queries map[string]int // "name TYPE" -> count
}

func startDNS(t *testing.T) *dnsServer {
	t.Helper()
	c, err := net.ListenPacket("udp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	s := &dnsServer{conn: c, queries: map[string]int{}}
	go s.serve()
	t.Cleanup(func() { c.Close() })
	return s
}

// point makes every name resolve to addrs from now on.
func (s *dnsServer) point(addrs ...string) {
	s.mu.Lock()
	defer s.mu.Unlock()
	s.addrs = nil
	for _, a := range addrs {
		s.addrs = append(s.addrs, netip.MustParseAddr(a))
	}
}

// lookups is how many A and AAAA questions were asked for name so far.
func (s *dnsServer) lookups(name string) int {
	s.mu.Lock()
	defer s.mu.Unlock()
	name = strings.ToLower(strings.TrimSuffix(name, ".")) + "."
	return s.queries[name+" A"] + s.queries[name+" AAAA"]
}

// resolver is a pure-Go resolver that asks only this server.
func (s *dnsServer) resolver() *net.Resolver {
	addr := s.conn.LocalAddr().String()
	return &net.Resolver{PreferGo: true, Dial: func(ctx context.Context, _, _ string) (net.Conn, error) {
		var d net.Dialer
		return d.DialContext(ctx, "udp", addr)
	}}
}

func (s *dnsServer) serve() {
	buf := make([]byte, 1500)
	for {
		n, from, err := s.conn.ReadFrom(buf)
		if err != nil {
			return
		}
		if resp, err := s.answer(buf[:n]); err == nil {
			_, _ = s.conn.WriteTo(resp, from)
		}
	}
}

const (
	typeA    = 1
	typeAAAA = 28
)

// answer builds the response to one query (RFC 1035 4.1): the header, the
// question copied, and one record per matching address, the name given as a
// pointer to the question's.
func (s *dnsServer) answer(q []byte) ([]byte, error) {
	if len(q) < 12 || binary.BigEndian.Uint16(q[4:6]) != 1 {
		return nil, errors.New("want one question")
	}
	var labels []string
	i := 12
	for {
		if i >= len(q) {
			return nil, errors.New("short name")
		}
		l := int(q[i])
		i++
		if l == 0 {
			break
		}
		if l > 63 || i+l > len(q) {
			return nil, errors.New("bad label")
		}
		labels = append(labels, strings.ToLower(string(q[i:i+l])))
		i += l
	}
	if i+4 > len(q) {
		return nil, errors.New("short question")
	}
	qtype := binary.BigEndian.Uint16(q[i : i+2])
	question := q[12 : i+4]

	s.mu.Lock()
	name := strings.Join(labels, ".") + "."
	var records []netip.Addr
	switch qtype {
	case typeA:
		s.queries[name+" A"]++
		for _, a := range s.addrs {
			if a.Is4() {
				records = append(records, a)
			}
		}
	case typeAAAA:
		s.queries[name+" AAAA"]++
		for _, a := range s.addrs {
			if a.Is6() {
				records = append(records, a)
			}
		}
	}
	s.mu.Unlock()

	resp := make([]byte, 12, 512)
	copy(resp[0:2], q[0:2])                                                        // id
	flags := uint16(0x8000|0x0400|0x0080) | binary.BigEndian.Uint16(q[2:4])&0x0100 // QR, AA, RA, RD as asked
	binary.BigEndian.PutUint16(resp[2:4], flags)
	binary.BigEndian.PutUint16(resp[4:6], 1)
	binary.BigEndian.PutUint16(resp[6:8], uint16(len(records)))
	resp = append(resp, question...)
	for _, a := range records {
		rdata := a.AsSlice()
		resp = append(resp, 0xc0, 12) // the question's name
		resp = binary.BigEndian.AppendUint16(resp, qtype)
		resp = binary.BigEndian.AppendUint16(resp, 1) // IN
		resp = binary.BigEndian.AppendUint32(resp, 0) // TTL: never cache
		resp = binary.BigEndian.AppendUint16(resp, uint16(len(rdata)))
		resp = append(resp, rdata...)
	}
	return resp, nil
}

// The server itself, through the resolver the tests use.
func TestDNSServer(t *testing.T) {
	dns := startDNS(t)
	r := dns.resolver()
	dns.point("93.184.216.34", "2606:4700:4700::1111")
	got, err := r.LookupNetIP(context.Background(), "ip", "Hooks.Example.com")
	if err != nil || len(got) != 2 {
		t.Fatalf("lookup = %v, %v", got, err)
	}
	dns.point("127.0.0.1")
	got, err = r.LookupNetIP(context.Background(), "ip4", "hooks.example.com")
	if err != nil || len(got) != 1 || got[0] != netip.MustParseAddr("127.0.0.1") {
		t.Fatalf("after re-pointing: %v, %v", got, err)
	}
	if n := dns.lookups("hooks.example.com"); n < 3 {
		t.Fatalf("%d questions recorded", n)
	}
}
