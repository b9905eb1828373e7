package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// A stack that lets GIFQ's dashboard frame the portal on a custom domain.
func init() {
	variants["portal"] = map[string]any{
		CtxPortalFrameAncestors: "'self' https://dashboard.gifq.com", CtxPortalURL: "https://webhooks.gifq.com/portal/",
	}
}

// The portal is served by the api function through the API's catch-all
// proxy, so it needs no resource of its own: only its settings reach the
// function, and by default nobody may frame it.
func TestPortalSettingsReachTheAPIFunction(t *testing.T) {
	for variant, want := range map[string]map[string]any{
		"dev":    {"PORTAL_FRAME_ANCESTORS": "'none'", "PORTAL_URL": nil},
		"portal": {"PORTAL_FRAME_ANCESTORS": "'self' https://dashboard.gifq.com", "PORTAL_URL": "https://webhooks.gifq.com/portal/"},
	} {
		s := synth(t, variant)
		_, api := s.functionByName(t, FnAPI)
		env := props(api)["Environment"].(map[string]any)["Variables"].(map[string]any)
		for k, v := range want {
			if env[k] != v {
				t.Errorf("%s: %s = %v, want %v", variant, k, env[k], v)
			}
		}
		_, deliver := s.functionByName(t, FnDeliver)
		if v, ok := props(deliver)["Environment"].(map[string]any)["Variables"].(map[string]any)["PORTAL_FRAME_ANCESTORS"]; ok {
			t.Errorf("%s: the deliver function gets the portal's settings (%v)", variant, v)
		}
		check(t, variant+" catch-all proxy", func() {
			s.tmpl.HasResourceProperties(jsii.String("AWS::ApiGateway::Resource"), m{"PathPart": "{proxy+}"})
		})
		for _, typ := range []string{"AWS::S3::Bucket", "AWS::CloudFront::Distribution"} {
			if n := len(s.resources(typ)); n != 0 {
				t.Errorf("%s: %d %s; the portal is served by the api function", variant, n, typ)
			}
		}
	}
}

func TestPortalContextRejects(t *testing.T) {
	for _, ctx := range []map[string]any{
		{CtxPortalFrameAncestors: "*"},
		{CtxPortalFrameAncestors: "https://dashboard.gifq.com; script-src *"},
		{CtxPortalFrameAncestors: "http://dashboard.gifq.com"},
		{CtxPortalURL: "https://webhooks.gifq.com/portal"},
		{CtxPortalURL: "webhooks.gifq.com/portal/"},
	} {
		if _, err := ParseConfig(getter(ctx)); err == nil || !strings.Contains(err.Error(), CtxPortalFrameAncestors) {
			t.Errorf("%v: error %v", ctx, err)
		}
	}
}
