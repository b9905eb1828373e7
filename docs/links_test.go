package docs

import (
	"os"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"unicode"
)

// The README is a newcomer's first ten minutes (STYLE.md, "READMEs that
// people finish"): depth goes to docs/ by topic.
const readmeMaxBytes = 12 << 10

func TestReadmeStaysShort(t *testing.T) {
	info, err := os.Stat("../README.md")
	if err != nil {
		t.Fatal(err)
	}
	if info.Size() > readmeMaxBytes {
		t.Errorf("README.md is %d bytes, over %d: move the detail into docs/", info.Size(), readmeMaxBytes)
	}
}

// docs/ is the manual of the system as it is now, not a lab book: small
// enough to read, its decisions short records, and no dated runs in the
// topic files (a run's record lives beside the tool that makes it, e.g.
// localstack/load/RUNS.md). Dates inside code (examples of requests) are
// fine.
const (
	docsMaxBytes      = 150 << 10
	decisionsMaxBytes = 25 << 10
)

var isoDate = regexp.MustCompile(`\b20[0-9]{2}-[01][0-9]-[0-3][0-9]\b`)

func TestDocsStayAManual(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	total := 0
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		total += len(raw)
		if file == "decisions.md" {
			if len(raw) > decisionsMaxBytes {
				t.Errorf("decisions.md is %d bytes, over %d: keep each record short", len(raw), decisionsMaxBytes)
			}
			continue
		}
		prose := codeSpan.ReplaceAllString(fence.ReplaceAllString(string(raw), ""), "")
		if d := isoDate.FindString(prose); d != "" {
			t.Errorf("%s names the date %s: say how things are, and keep a run's record beside its tool", file, d)
		}
	}
	if total > docsMaxBytes {
		t.Errorf("docs/*.md is %d bytes, over %d: a reference of the system as it is, not its history", total, docsMaxBytes)
	}
}

// Every relative link in README.md and docs/*.md names a file or folder
// that exists, and a #fragment names a heading of the Markdown file it
// points into.
func TestRelativeLinksResolve(t *testing.T) {
	files, _ := filepath.Glob("*.md")
	files = append(files, "../README.md")
	if len(files) < 2 {
		t.Fatalf("found %v: run from docs/", files)
	}
	for _, file := range files {
		raw, err := os.ReadFile(file)
		if err != nil {
			t.Fatal(err)
		}
		for _, target := range links(string(raw)) {
			if strings.Contains(target, "://") || strings.HasPrefix(target, "mailto:") {
				continue
			}
			path, frag, _ := strings.Cut(target, "#")
			resolved := file
			if path != "" {
				resolved = filepath.Join(filepath.Dir(file), path)
				if _, err := os.Stat(resolved); err != nil {
					t.Errorf("%s: link %q: no %s", file, target, resolved)
					continue
				}
			}
			if frag == "" || !strings.HasSuffix(resolved, ".md") {
				continue
			}
			text, err := os.ReadFile(resolved)
			if err != nil {
				t.Errorf("%s: link %q: %v", file, target, err)
				continue
			}
			if !anchors(string(text))[frag] {
				t.Errorf("%s: link %q: %s has no heading with the anchor #%s", file, target, resolved, frag)
			}
		}
	}
}

var (
	fence      = regexp.MustCompile("(?ms)^```.*?^```")
	codeSpan   = regexp.MustCompile("`[^`\n]*`")
	mdLink     = regexp.MustCompile(`\]\(([^()\s]+)(?:\s+"[^"]*")?\)`)
	htmlAnchor = regexp.MustCompile(`<a (?:name|id)="([^"]+)"`)
)

// links are the targets of a Markdown text's inline links and images,
// outside code blocks and code spans.
func links(md string) []string {
	md = codeSpan.ReplaceAllString(fence.ReplaceAllString(md, ""), "")
	var out []string
	for _, m := range mdLink.FindAllStringSubmatch(md, -1) {
		out = append(out, m[1])
	}
	return out
}

// anchors are the fragments GitHub gives a Markdown text's headings (and
// any <a name> in it).
func anchors(md string) map[string]bool {
	md = fence.ReplaceAllString(md, "")
	seen := map[string]int{}
	out := map[string]bool{}
	for _, line := range strings.Split(md, "\n") {
		if m := htmlAnchor.FindStringSubmatch(line); m != nil {
			out[m[1]] = true
		}
		if !strings.HasPrefix(line, "#") {
			continue
		}
		title := strings.TrimLeft(line, "#")
		if !strings.HasPrefix(title, " ") {
			continue
		}
		s := slug(title)
		if n := seen[s]; n > 0 {
			out[s+"-"+strconv.Itoa(n)] = true
		} else {
			out[s] = true
		}
		seen[s]++
	}
	return out
}

// slug is GitHub's heading anchor: lower case, letters, digits, '-' and '_'
// kept, spaces made '-', everything else dropped.
func slug(title string) string {
	var b strings.Builder
	for _, r := range strings.ToLower(strings.TrimSpace(title)) {
		switch {
		case unicode.IsLetter(r) || unicode.IsDigit(r) || r == '-' || r == '_':
			b.WriteRune(r)
		case r == ' ':
			b.WriteByte('-')
		}
	}
	return b.String()
}

func TestSlugIsGitHubs(t *testing.T) {
	for title, want := range map[string]string{
		" Tokens taken ahead, and dynoxide built for the machine (a run)":                "tokens-taken-ahead-and-dynoxide-built-for-the-machine-a-run",
		" CPU per delivery of the whole system (`make load`, `make load-targets`)":       "cpu-per-delivery-of-the-whole-system-make-load-make-load-targets",
		" Signing: `signing.Sign` (every attempt) and `signing.Verify` (every receiver)": "signing-signingsign-every-attempt-and-signingverify-every-receiver",
		" Failure → retry → DLQ → redrive":                                               "failure--retry--dlq--redrive",
	} {
		if got := slug(title); got != want {
			t.Errorf("slug(%q) = %q, want %q", title, got, want)
		}
	}
	a := anchors("# A\n## A\n```\n# not a heading\n```\n#nospace\n")
	if !a["a"] || !a["a-1"] || a["not-a-heading"] || a["nospace"] {
		t.Errorf("anchors = %v", a)
	}
}
