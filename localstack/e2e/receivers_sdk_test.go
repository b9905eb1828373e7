package e2e

import (
	"bytes"
	"crypto/ed25519"
	"crypto/rand"
	"encoding/json"
	"fmt"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/gifq/webhooks/shared/signing"
)

// The Node and Python receivers of docs/receivers.md, run exactly as the
// page shows them with the libraries in sdk/, verify real deliveries of this
// system: one endpoint on v1 (the endpoint's secret) and one on v1a (the
// account's public JWKS, fetched by the library) per receiver. A delivery is
// delivered on its first attempt only if the receiver verified it (it answers
// 401 otherwise), and each receiver prints the scheme it verified; requests
// signed with another secret or key are refused.
func TestReceiversFromTheDocs(t *testing.T) {
	localOnly(t)
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".cache/sdk/venv/bin/python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no Python for the SDK (%v): run make sdk-deps", err)
	}
	doc, err := os.ReadFile(filepath.Join(root, "docs/receivers.md"))
	if err != nil {
		t.Fatal(err)
	}
	h := start(t, opts{kms: true})
	acct, key := h.account(t)
	jwksURL := h.api + "/v1/accounts/" + acct + "/jwks.json"

	type receiver struct {
		lang, url string
		out       *lines
	}
	run := func(lang, file, code string, cmd func(dir string) *exec.Cmd) receiver {
		port := freePort(t)
		url := fmt.Sprintf("http://127.0.0.1:%d", port)
		v1 := h.createEndpoint(t, key, map[string]any{"url": url + "/v1"})
		h.createEndpoint(t, key, map[string]any{"url": url + "/v1a", "signature_scheme": "v1a"})
		dir := t.TempDir()
		if err := os.WriteFile(filepath.Join(dir, file), []byte(code), 0o644); err != nil {
			t.Fatal(err)
		}
		c := cmd(dir)
		c.Dir = dir
		c.Env = append(append(os.Environ(), c.Env...), "PORT="+strconv.Itoa(port), "GIFQ_SECRET="+v1.Secret, "GIFQ_JWKS_URL="+jwksURL)
		out := &lines{}
		c.Stdout, c.Stderr = out, out
		if err := c.Start(); err != nil {
			t.Fatalf("%s receiver: %v", lang, err)
		}
		t.Cleanup(func() { _ = c.Process.Kill(); _ = c.Wait() })
		waitListening(t, port, out)
		return receiver{lang, url, out}
	}
	ts := run("node", "receiver.mjs", docBlock(t, doc, "js", "// receiver.mjs"), func(dir string) *exec.Cmd {
		// The package as npm would install it: node_modules/@gifq/webhooks.
		if err := os.MkdirAll(filepath.Join(dir, "node_modules/@gifq"), 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.Symlink(filepath.Join(root, "sdk/typescript"), filepath.Join(dir, "node_modules/@gifq/webhooks")); err != nil {
			t.Fatal(err)
		}
		return exec.Command("node", "receiver.mjs")
	})
	py := run("python", "receiver.py", docBlock(t, doc, "python", "# receiver.py"), func(string) *exec.Cmd {
		c := exec.Command(python, "receiver.py")
		c.Env = append(c.Env, "PYTHONPATH="+filepath.Join(root, "sdk/python/src"))
		return c
	})

	ev := h.publish(t, key, payout)
	if len(ev.Deliveries) != 4 {
		t.Fatalf("deliveries: %+v", ev.Deliveries)
	}
	ids := map[string]bool{}
	for _, d := range ev.Deliveries {
		got := h.waitFor(t, key, d.ID, 30*time.Second, settled)
		if got.Status != "delivered" || got.AttemptCount != 1 {
			t.Errorf("delivery %s: %s after %d attempts (last %d): the receiver did not verify it", d.ID, got.Status, got.AttemptCount, got.LastStatus)
		}
		ids[d.ID] = true
	}
	verified := regexp.MustCompile(`verified (\S+) (\S+)`)
	for _, r := range []receiver{ts, py} {
		schemes := map[string]bool{}
		for _, m := range verified.FindAllStringSubmatch(r.out.String(), -1) {
			if !ids[m[2]] {
				t.Errorf("%s verified an unknown webhook-id %q", r.lang, m[2])
			}
			schemes[m[1]] = true
		}
		if !schemes["standard-webhooks-v1"] || !schemes["standard-webhooks-v1a"] || len(schemes) != 2 {
			t.Errorf("%s receiver verified %v, want v1 and v1a; its output:\n%s", r.lang, schemes, r.out)
		}
		// A request signed with a secret or a key this account never had is refused.
		_, other, _ := ed25519.GenerateKey(rand.Reader)
		now := time.Now()
		for path, sig := range map[string]string{
			"/v1":  signing.SignStandard([]string{signing.NewSecret()}, "dlv_forged", now, []byte(payout)),
			"/v1a": signing.SignStandardV1a([]ed25519.PrivateKey{other}, "dlv_forged", now, []byte(payout)),
		} {
			req, _ := http.NewRequest("POST", r.url+path, strings.NewReader(payout))
			req.Header.Set("webhook-id", "dlv_forged")
			req.Header.Set("webhook-timestamp", strconv.FormatInt(now.Unix(), 10))
			req.Header.Set("webhook-signature", sig)
			resp, err := http.DefaultClient.Do(req)
			if err != nil {
				t.Fatal(err)
			}
			resp.Body.Close()
			if resp.StatusCode != 401 {
				t.Errorf("%s receiver answered %d to a forged %s request", r.lang, resp.StatusCode, path)
			}
		}
	}
}

// createEndpoint registers an endpoint with any body and returns it with its secret.
func (h *harness) createEndpoint(t *testing.T, key string, body map[string]any) endpointOut {
	t.Helper()
	var ep endpointOut
	if code := h.call(t, key, "POST", "/v1/endpoints", body, &ep); code != 201 {
		t.Fatalf("create endpoint %v: %d", body, code)
	}
	return ep
}

// docBlock is the fenced code block of the given language whose first line is first.
func docBlock(t *testing.T, doc []byte, lang, first string) string {
	t.Helper()
	fence := "```" + lang + "\n" + first + "\n"
	i := bytes.Index(doc, []byte(fence))
	if i < 0 {
		t.Fatalf("docs/receivers.md has no %s block starting %q", lang, first)
	}
	code := doc[i+len("```"+lang+"\n"):]
	end := bytes.Index(code, []byte("\n```"))
	if end < 0 {
		t.Fatalf("the %s block is not closed", lang)
	}
	return string(code[:end+1])
}

func freePort(t *testing.T) int {
	t.Helper()
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	defer l.Close()
	return l.Addr().(*net.TCPAddr).Port
}

func waitListening(t *testing.T, port int, out *lines) {
	t.Helper()
	deadline := time.Now().Add(20 * time.Second)
	for {
		c, err := net.Dial("tcp", fmt.Sprintf("127.0.0.1:%d", port))
		if err == nil {
			c.Close()
			return
		}
		if time.Now().After(deadline) {
			t.Fatalf("no receiver on port %d: %v; its output:\n%s", port, err, out)
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// lines collects a process's output.
type lines struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lines) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lines) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}

// The producer clients generated from docs/openapi.yaml (sdk/typescript's
// client, sdk/python-client) register an endpoint and post an event against
// the real API; the delivery arrives, signed with the secret the client was
// given.
func TestProducerClients(t *testing.T) {
	localOnly(t)
	t.Parallel()
	root, err := filepath.Abs("../..")
	if err != nil {
		t.Fatal(err)
	}
	python := filepath.Join(root, ".cache/sdk/venv/bin/python")
	if _, err := os.Stat(python); err != nil {
		t.Fatalf("no Python for the SDK (%v): run make sdk-deps", err)
	}
	h := start(t, opts{})
	scripts := map[string]struct {
		file, code string
		cmd        func(dir string) *exec.Cmd
	}{
		"typescript": {"producer.mjs", `import { createClient } from '@gifq/webhooks/client';
const api = createClient({ baseUrl: process.env.API, apiKey: process.env.KEY });
const ep = await api.POST('/v1/endpoints', { body: { url: process.env.URL } });
const ev = await api.POST('/v1/events', { body: { event: 'sdk.typescript', n: 1 }, params: { header: { 'Idempotency-Key': 'ts-1' } } });
console.log(JSON.stringify({ secret: ep.secret, delivery: ev.deliveries[0].id }));
`, func(dir string) *exec.Cmd {
			if err := os.MkdirAll(filepath.Join(dir, "node_modules/@gifq"), 0o755); err != nil {
				t.Fatal(err)
			}
			if err := os.Symlink(filepath.Join(root, "sdk/typescript"), filepath.Join(dir, "node_modules/@gifq/webhooks")); err != nil {
				t.Fatal(err)
			}
			return exec.Command("node", "producer.mjs")
		}},
		"python": {"producer.py", `import json, os
from gifq_webhooks_client import AuthenticatedClient
from gifq_webhooks_client.api.endpoints import create_endpoint
from gifq_webhooks_client.api.events import create_event
from gifq_webhooks_client.models import AcceptedEvent, EndpointWithSecret, EventBody, NewEndpoint

client = AuthenticatedClient(base_url=os.environ["API"], token=os.environ["KEY"])
ep = create_endpoint.sync(client=client, body=NewEndpoint(url=os.environ["URL"]))
assert isinstance(ep, EndpointWithSecret), ep
body = EventBody(event="sdk.python")
body["n"] = 1
ev = create_event.sync(client=client, body=body, idempotency_key="py-1")
assert isinstance(ev, AcceptedEvent), ev
print(json.dumps({"secret": ep.secret, "delivery": ev.deliveries[0].id}))
`, func(string) *exec.Cmd {
			c := exec.Command(python, "producer.py")
			c.Env = append(os.Environ(), "PYTHONPATH="+filepath.Join(root, "sdk/python-client"))
			return c
		}},
	}
	for lang, s := range scripts {
		t.Run(lang, func(t *testing.T) {
			_, key := h.account(t)
			rv := h.receiver(t, always(204))
			dir := t.TempDir()
			if err := os.WriteFile(filepath.Join(dir, s.file), []byte(s.code), 0o644); err != nil {
				t.Fatal(err)
			}
			c := s.cmd(dir)
			c.Dir = dir
			if c.Env == nil {
				c.Env = os.Environ()
			}
			c.Env = append(c.Env, "API="+h.api, "KEY="+key, "URL="+rv.URL)
			out, err := c.Output()
			if err != nil {
				t.Fatalf("%s producer: %v\n%s%s", lang, err, out, stderrOf(err))
			}
			var got struct{ Secret, Delivery string }
			if err := json.Unmarshal(out, &got); err != nil || got.Secret == "" || got.Delivery == "" {
				t.Fatalf("%s producer printed %q: %v", lang, out, err)
			}
			rv.setSecret(got.Secret)
			if d := h.waitFor(t, key, got.Delivery, 30*time.Second, settled); d.Status != "delivered" {
				t.Fatalf("delivery %+v", d)
			}
			reqs := rv.requests()
			if len(reqs) != 1 || !strings.Contains(string(reqs[0].body), `"sdk.`+lang+`"`) {
				t.Fatalf("receiver got %d requests", len(reqs))
			}
			if err := signing.Verify(reqs[0].body, reqs[0].header.Get(signing.Header), []string{got.Secret}, signing.Options{}); err != nil {
				t.Fatalf("not signed with the secret the %s client was given: %v", lang, err)
			}
		})
	}
}

func stderrOf(err error) string {
	if ee, ok := err.(*exec.ExitError); ok {
		return string(ee.Stderr)
	}
	return ""
}
