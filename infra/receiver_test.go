package main

import (
	"strings"
	"testing"
)

// TestOpsFunction: every stage has the ops function (a console run makes
// an account and its first key), named in an output; its grants are checked
// with the others' (TestIAMLeastPrivilege, TestIAMFollowsCode).
func TestOpsFunction(t *testing.T) {
	for _, v := range sortedKeys(variants) {
		s := synth(t, v)
		id, f := s.functionByName(t, FnOps)
		if p := props(f); p["Timeout"] != float64(30) || p["TracingConfig"].(map[string]any)["Mode"] != "Active" {
			t.Errorf("%s: ops function %v", v, p)
		}
		out, _ := s.json["Outputs"].(map[string]any)["OpsFunctionName"].(map[string]any)
		if out == nil || render(out["Value"]) != "${"+id+"}" {
			t.Errorf("%s: OpsFunctionName output %v", v, out)
		}
	}
}

// TestDemoReceiver: off by default (no function, no URL, no output); with
// demoReceiver a function URL without AWS auth whose function knows the API's
// URL and has a reserved concurrency, whose role can write only its logs and traces, and whose URL is an
// output; refused on prod.
func TestDemoReceiver(t *testing.T) {
	for _, v := range []string{"dev", "prod", "localstack"} {
		s := synth(t, v)
		if len(s.resources("AWS::Lambda::Url")) != 0 || s.stack.Functions[FnReceiver] != nil {
			t.Errorf("%s: a demo receiver without demoReceiver", v)
		}
		if _, ok := s.json["Outputs"].(map[string]any)["ReceiverUrl"]; ok {
			t.Errorf("%s: ReceiverUrl output without demoReceiver", v)
		}
	}
	s := synth(t, "demo")
	fnID, f := s.functionByName(t, FnReceiver)
	urlID, u := s.only(t, "AWS::Lambda::Url")
	if p := props(u); p["AuthType"] != "NONE" || render(p["TargetFunctionArn"]) != "${"+fnID+".Arn}" {
		t.Errorf("function URL %v", p)
	}
	env := props(f)["Environment"].(map[string]any)["Variables"].(map[string]any)
	if api := render(env["API_URL"]); !strings.Contains(api, "${Api") || len(env) != 1 {
		t.Errorf("receiver environment %v", env)
	}
	if props(f)["TracingConfig"].(map[string]any)["Mode"] != "Active" {
		t.Error("receiver not traced")
	}
	// Its public URL's flood stops at its own reserved concurrency, never
	// at api's or deliver's; the other functions reserve none.
	if got := props(f)["ReservedConcurrentExecutions"]; got != float64(DemoReceiverConcurrency) {
		t.Errorf("receiver reserved concurrency %v, want %d", got, DemoReceiverConcurrency)
	}
	for _, fn := range Functions {
		if _, other := s.functionByName(t, fn); props(other)["ReservedConcurrentExecutions"] != nil {
			t.Errorf("%s reserves concurrency: %v", fn, props(other)["ReservedConcurrentExecutions"])
		}
	}
	out, _ := s.json["Outputs"].(map[string]any)["ReceiverUrl"].(map[string]any)
	if out == nil || render(out["Value"]) != "${"+urlID+".FunctionUrl}" {
		t.Errorf("ReceiverUrl output %v", out)
	}
	// The receiver's role: its own logs and X-Ray, nothing else.
	role := strings.TrimSuffix(strings.Trim(render(props(f)["Role"]), "${}"), ".Arn")
	xray := false
	for _, st := range s.statements() {
		if !contains(st.Roles, role) {
			continue
		}
		for _, a := range st.Actions {
			xray = xray || a == "xray:PutTraceSegments"
			if !strings.HasPrefix(a, "logs:") && !strings.HasPrefix(a, "xray:") {
				t.Errorf("receiver role allows %s on %v", a, st.Resources)
			}
		}
	}
	if !xray {
		t.Error("the receiver's role cannot send its trace segments")
	}
	// The public invoke permissions are for the URL only: InvokeFunctionUrl
	// with auth NONE, and InvokeFunction only when invoked through the URL.
	perms := 0
	for _, p := range s.resources("AWS::Lambda::Permission") {
		p := props(p)
		if render(p["FunctionName"]) != "${"+fnID+".Arn}" {
			continue
		}
		perms++
		switch p["Action"] {
		case "lambda:InvokeFunctionUrl":
			if p["FunctionUrlAuthType"] != "NONE" {
				t.Errorf("receiver permission %v", p)
			}
		case "lambda:InvokeFunction":
			if p["InvokedViaFunctionUrl"] != true {
				t.Errorf("receiver permission %v", p)
			}
		default:
			t.Errorf("receiver permission %v", p)
		}
	}
	if perms == 0 {
		t.Error("no permission lets the function URL invoke the receiver")
	}
	if _, err := ParseConfig(getter(map[string]any{CtxStage: "prod", CtxDemoReceiver: "true"})); err == nil || !strings.Contains(err.Error(), CtxDemoReceiver) {
		t.Errorf("demoReceiver on prod: %v", err)
	}
}
