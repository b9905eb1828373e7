package webhook

import (
	"context"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/destination"
	"github.com/gifq/webhooks/shared/netguard"
)

// These tests aim a guarded sender at addresses a webhook must never reach:
// 127.0.0.1, ::1, 169.254.169.254 (cloud metadata) and 10.0.0.5 (a private
// network), with real listeners on them that count connections. The last two
// exist only inside a network namespace the test makes for itself (with
// unshare and ip, as root in CI), together with one "public" address,
// 93.184.216.34, for a receiver the deployed policy may reach. Nothing there
// can leave the machine: the namespace has only its loopback interface.
// Without a namespace (no permission), the loopback cases still run on the
// host and the others are skipped with a message.

const (
	netnsEnv   = "GIFQ_SENDER_TEST_NETNS"
	publicAddr = "93.184.216.34" // the receiver's "public" address, only inside the namespace
	metadata   = "169.254.169.254"
	private10  = "10.0.0.5"
	rebindName = "hooks.rebind.example.com"
)

// inNetns reports whether the test body should run here: true inside the
// namespace, or on the host when no namespace can be made (inNamespace then
// false). When it has run the test in a new namespace itself, it returns
// run false and the caller returns.
func inNetns(t *testing.T) (run, inNamespace bool) {
	t.Helper()
	if os.Getenv(netnsEnv) == "1" {
		return true, true
	}
	unshare, err1 := exec.LookPath("unshare")
	ip, err2 := exec.LookPath("ip")
	if err1 != nil || err2 != nil || exec.Command(unshare, "--net", "true").Run() != nil {
		t.Logf("no network namespace (unshare --net not permitted or missing): loopback cases only")
		return true, false
	}
	setup := fmt.Sprintf("%[1]s link set lo up && %[1]s addr add %[2]s/32 dev lo && %[1]s addr add %[3]s/32 dev lo && %[1]s addr add %[4]s/32 dev lo && exec \"$@\"",
		ip, metadata, private10, publicAddr)
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	cmd := exec.CommandContext(ctx, unshare, "--net", "--", "sh", "-c", setup, "sh",
		os.Args[0], "-test.run", "^"+t.Name()+"$", "-test.count", "1", "-test.v")
	cmd.Env = append(os.Environ(), netnsEnv+"=1")
	out, err := cmd.CombinedOutput()
	t.Logf("in a new network namespace:\n%s", out)
	if err != nil {
		t.Fatalf("the test failed in its network namespace: %v", err)
	}
	return false, true
}

// counter is a TCP listener that counts the connections it accepts.
type counter struct {
	ln       net.Listener
	accepted atomic.Int32
}

func listenCounting(t *testing.T, addr string) *counter {
	t.Helper()
	return listenCountingPort(t, addr, "0")
}

func (c *counter) port() string {
	_, p, _ := net.SplitHostPort(c.ln.Addr().String())
	return p
}

// The deployed address policy; http is allowed too only so that the tests
// need no certificates (the scheme plays no part in where a dial may go).
var deployedAddrs = netguard.Policy{Schemes: []string{"http", "https"}}

// DNS rebinding: a name that resolved to a public address when the endpoint
// was registered (and may even have received deliveries there) resolves to a
// forbidden address later. The attempt is refused at dial time, after the
// sender's own DNS lookup, and the forbidden listener never sees a connection.
func TestDNSRebindingRefusedAtDialTime(t *testing.T) {
	run, netns := inNetns(t)
	if !run {
		return
	}
	dns := startDNS(t)
	resolver := dns.resolver()
	guarded := New(Options{Policy: deployedAddrs, Timeout: 2 * time.Second, Resolver: resolver})

	for _, forbidden := range []string{"127.0.0.1", "::1", metadata, private10} {
		t.Run(forbidden, func(t *testing.T) {
			if !netns && (forbidden == metadata || forbidden == private10) {
				t.Skipf("%s needs the test's network namespace", forbidden)
			}
			target := listenCounting(t, forbidden)
			url := "http://" + rebindName + ":" + target.port() + "/hook"

			// Registration: the name resolves to a public address and passes.
			dns.point(publicAddr)
			if _, err := deployedAddrs.CheckURL(context.Background(), url, resolver); err != nil {
				t.Fatalf("registration refused %s while it resolved to %s: %v", url, publicAddr, err)
			}
			// Had it resolved to the forbidden address then, registration would refuse it.
			dns.point(forbidden)
			if _, err := deployedAddrs.CheckURL(context.Background(), url, resolver); err == nil {
				t.Fatalf("registration accepted %s resolving to %s", url, forbidden)
			}

			// Later the attacker's DNS points the name at the forbidden address.
			before := dns.lookups(rebindName)
			res := guarded.Send(context.Background(), req(url))
			if res.Class != ErrBlockedAddress || res.Status != 0 {
				t.Fatalf("attempt to %s (now %s): %+v, want error class %s", url, forbidden, res, ErrBlockedAddress)
			}
			if res.Verdict != destination.Rejected {
				t.Fatalf("a blocked address must fail the delivery, got %v", res.Verdict)
			}
			if strings.Contains(res.Error, forbidden) || strings.Contains(res.Error, rebindName) {
				t.Fatalf("the stored error names the address or host: %q", res.Error)
			}
			if n := target.accepted.Load(); n != 0 {
				t.Fatalf("the forbidden listener on %s accepted %d connections", forbidden, n)
			}
			if dns.lookups(rebindName) == before {
				t.Fatal("the sender did not resolve the name at dial time")
			}

			// Control: without the guard the same name does reach the listener,
			// so the zero above is the guard's doing.
			open := New(Options{Policy: netguard.Policy{AllowPrivate: true}, Timeout: 2 * time.Second, Resolver: resolver})
			open.Send(context.Background(), req(url))
			if target.accepted.Load() == 0 {
				t.Fatalf("control: an unguarded sender did not reach %s through %s", forbidden, rebindName)
			}
		})
	}
}

// The whole attack in order: deliveries succeed while the name points at the
// receiver's public address; after the DNS answer changes to loopback the
// next attempt is blocked and loopback sees nothing.
func TestRebindingAfterSuccessfulDeliveries(t *testing.T) {
	run, netns := inNetns(t)
	if !run {
		return
	}
	if !netns {
		t.Skip("needs the test's network namespace for a public receiver address")
	}
	var received atomic.Int32
	receiver := serveOn(t, publicAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
		received.Add(1)
		w.Header().Set("Connection", "close") // the next attempt dials again
		w.WriteHeader(204)
	}))
	// Loopback listens on the receiver's port number too: after rebinding,
	// the same URL would reach it.
	port := receiver.port()
	loop := listenCountingPort(t, "127.0.0.1", port)
	dns := startDNS(t)
	guarded := New(Options{Policy: deployedAddrs, Timeout: 2 * time.Second, Resolver: dns.resolver()})
	url := "http://" + rebindName + ":" + port + "/hook"

	dns.point(publicAddr)
	for i := 0; i < 2; i++ {
		if res := guarded.Send(context.Background(), req(url)); res.Status != 204 {
			t.Fatalf("delivery %d to the public address: %+v", i+1, res)
		}
	}
	dns.point("127.0.0.1")
	res := guarded.Send(context.Background(), req(url))
	if res.Class != ErrBlockedAddress {
		t.Fatalf("after rebinding to loopback: %+v", res)
	}
	if received.Load() != 2 || loop.accepted.Load() != 0 {
		t.Fatalf("receiver got %d requests, loopback %d connections; want 2 and 0", received.Load(), loop.accepted.Load())
	}
}

// Redirects are answers, never followed, wherever they point: a literal
// forbidden address, the metadata service, or a name that resolves to a
// private address. The attempt records the 3xx and fails the delivery.
func TestRedirectToForbiddenAddressIsNotFollowed(t *testing.T) {
	run, netns := inNetns(t)
	if !run {
		return
	}
	receiverAddr, policy := publicAddr, deployedAddrs
	if !netns {
		// On the host the receiver can only be on loopback, so the sender
		// must allow private addresses: this then shows that the redirect is
		// not followed even where following it would be allowed.
		receiverAddr, policy = "127.0.0.1", netguard.Policy{AllowPrivate: true}
	}
	dns := startDNS(t)
	dns.point(private10, "::1")
	sender := New(Options{Policy: policy, Timeout: 2 * time.Second, Resolver: dns.resolver()})

	targets := map[string]*counter{"127.0.0.1": listenCounting(t, "127.0.0.1"), "::1": listenCounting(t, "::1")}
	if netns {
		targets[metadata] = listenCounting(t, metadata)
		targets[private10] = listenCounting(t, private10)
	}
	var locations []string
	for addr, c := range targets {
		locations = append(locations, "http://"+net.JoinHostPort(addr, c.port())+"/latest/meta-data/")
	}
	if netns {
		locations = append(locations, "http://"+rebindName+":"+targets[private10].port()+"/")
	}

	for _, code := range []int{301, 302, 303, 307, 308} {
		for _, loc := range locations {
			var hits atomic.Int32
			receiver := serveOn(t, receiverAddr, http.HandlerFunc(func(w http.ResponseWriter, r *http.Request) {
				hits.Add(1)
				_, _ = io.Copy(io.Discard, r.Body)
				http.Redirect(w, r, loc, code)
			}))
			res := sender.Send(context.Background(), req("http://"+net.JoinHostPort(receiverAddr, receiver.port())+"/hook"))
			if res.Status != code || res.Class != "" {
				t.Errorf("%d to %s: %+v", code, loc, res)
			}
			if res.Verdict != destination.Rejected {
				t.Errorf("%d to %s: a redirect must fail the delivery", code, loc)
			}
			if hits.Load() != 1 {
				t.Errorf("%d to %s: the receiver got %d requests, want 1", code, loc, hits.Load())
			}
		}
	}
	for addr, c := range targets {
		if n := c.accepted.Load(); n != 0 {
			t.Errorf("redirect target %s accepted %d connections", addr, n)
		}
	}
	if n := dns.lookups(rebindName); n != 0 {
		t.Errorf("the redirect's host name was looked up %d times", n)
	}
}

// A zoned IPv6 literal must not get through the dial-time guard either.
func TestZonedLoopbackLiteralRefusedAtDialTime(t *testing.T) {
	target := listenCounting(t, "::1")
	guarded := New(Options{Policy: deployedAddrs, Timeout: 2 * time.Second})
	lo := loopbackInterface(t)
	res := guarded.Send(context.Background(), req("http://[::1%25"+lo+"]:"+target.port()+"/hook"))
	if n := target.accepted.Load(); n != 0 || res.Class != ErrBlockedAddress {
		t.Fatalf("a zoned IPv6 literal bypassed the SSRF guard: http://[::1%%25%s]/ reached loopback (%d connections, %+v)", lo, n, res)
	}
}

func loopbackInterface(t *testing.T) string {
	ifs, err := net.Interfaces()
	if err != nil {
		t.Skip(err)
	}
	for _, i := range ifs {
		if i.Flags&net.FlagLoopback != 0 {
			return i.Name
		}
	}
	t.Skip("no loopback interface")
	return ""
}

// listenCountingPort listens on addr at port ("0": any free port; another
// address's listener may hold the same number).
func listenCountingPort(t *testing.T, addr, port string) *counter {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, port))
	if err != nil {
		t.Skipf("cannot listen on %s port %s: %v", addr, port, err)
	}
	c := &counter{ln: ln}
	go func() {
		for {
			conn, err := ln.Accept()
			if err != nil {
				return
			}
			c.accepted.Add(1)
			conn.Close()
		}
	}()
	t.Cleanup(func() { ln.Close() })
	return c
}

type server struct{ ln net.Listener }

func (s server) port() string {
	_, p, _ := net.SplitHostPort(s.ln.Addr().String())
	return p
}

// serveOn runs h on addr at a free port until the test ends.
func serveOn(t *testing.T, addr string, h http.Handler) server {
	t.Helper()
	ln, err := net.Listen("tcp", net.JoinHostPort(addr, "0"))
	if err != nil {
		t.Fatalf("listen on %s: %v", addr, err)
	}
	srv := &http.Server{Handler: h, ReadHeaderTimeout: 5 * time.Second}
	go func() { _ = srv.Serve(ln) }()
	t.Cleanup(func() { srv.Close() })
	return server{ln}
}
