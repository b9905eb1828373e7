package main

import (
	"os"
	"os/exec"
	"regexp"
	"strings"
	"testing"
)

var checkovID = regexp.MustCompile(`^CKV2?_[A-Z]+_[0-9]+$`)

// TestLintSkips: every accepted checkov or cfn-lint finding says why, and
// applies to at least one resource of some variant (no stale entries).
func TestLintSkips(t *testing.T) {
	for i, k := range LintSkips {
		if k.ID == "" || len(k.Reason) < 20 || k.On == nil {
			t.Errorf("LintSkips[%d] %q: want an id, a reason and a selector, have reason %q", i, k.ID, k.Reason)
		}
		used := false
		for _, v := range sortedKeys(variants) {
			if len(k.On(synth(t, v).stack)) > 0 {
				used = true
				break
			}
		}
		if !used {
			t.Errorf("LintSkips[%d] %s applies to no resource in any variant: remove it", i, k.ID)
		}
	}
}

// TestTemplateLintSkipsHaveReasons reads the skips as checkov and cfn-lint
// see them, in each variant's template: every checkov skip names a check
// and carries a non-empty comment; every cfn-lint ignore is one of
// LintSkips (where its reason is).
func TestTemplateLintSkipsHaveReasons(t *testing.T) {
	reasons := map[string]bool{}
	for _, k := range LintSkips {
		reasons[k.ID] = k.Reason != ""
	}
	for _, v := range sortedKeys(variants) {
		s := synth(t, v)
		skipped := 0
		for id, r := range s.json["Resources"].(map[string]any) {
			md, _ := r.(map[string]any)["Metadata"].(map[string]any)
			if c, ok := md["checkov"].(map[string]any); ok {
				for _, e := range list(c["skip"]) {
					e, _ := e.(map[string]any)
					cid, _ := e["id"].(string)
					comment, _ := e["comment"].(string)
					if !checkovID.MatchString(cid) || comment == "" {
						t.Errorf("%s %s: checkov skip %v: want {id: CKV_..., comment: <reason>}", v, id, e)
					}
					skipped++
				}
			}
			if c, ok := md["cfn-lint"].(map[string]any); ok {
				cfg, _ := c["config"].(map[string]any)
				for _, rule := range list(cfg["ignore_checks"]) {
					if rule, _ := rule.(string); !reasons[rule] {
						t.Errorf("%s %s: cfn-lint ignores %v, which LintSkips does not give a reason for", v, id, rule)
					}
				}
			}
		}
		if skipped == 0 {
			t.Errorf("%s: no checkov skips in the template (LintSkips not applied?)", v)
		}
	}
}

// TestCfnCheckTarget: make cfn-check installs the pinned linters and runs
// both on the default template, on the one with every option on, and on a
// demo stage behind an HTTP API.
func TestCfnCheckTarget(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	cmd := exec.Command("make", "-n", "-B", "--no-print-directory", "-f", "infra/cdk.mk", "cfn-check")
	cmd.Dir = ".."
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("make -n cfn-check: %v\n%s", err, out)
	}
	for _, w := range []string{
		"cdk synth --quiet --no-notices --output cdk.out -c stage=dev", // make synth's
		"--output cdk.out/cfn-check -c stage=prod", "-c alarmEmail=", "-c " + CtxEgressStaticIPs + "=true", "-c " + CtxWAF + "=true",
		"-c " + CtxTableCapacity + "=" + TableProvisioned,                  // autoscaling targets and policies
		"-c " + CtxDemoReceiver + "=true -c " + CtxAPIType + "=" + APIHTTP, // the HTTP API's template is linted too
		"pip install --quiet --disable-pip-version-check -r infra/cfn-check-requirements.txt",
		"cfn-lint --include-checks I -- cdk.out/GifqWebhooks-dev.template.json cdk.out/cfn-check/GifqWebhooks-prod.template.json",
		"checkov --framework cloudformation --skip-download",
		"-f cdk.out/GifqWebhooks-dev.template.json -f cdk.out/cfn-check/GifqWebhooks-prod.template.json",
	} {
		if !strings.Contains(string(out), w) {
			t.Errorf("make cfn-check: %q not in\n%s", w, out)
		}
	}
	req, err := os.ReadFile("cfn-check-requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	for _, pin := range []string{"\ncfn-lint==1.58.0\n", "\ncheckov==3.3.30\n"} {
		if !strings.Contains(string(req), pin) {
			t.Errorf("cfn-check-requirements.txt does not pin %s", strings.TrimSpace(pin))
		}
	}
}
