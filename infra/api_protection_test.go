package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// The execution log group API Gateway would otherwise create outside the
// stack, never expiring: the stack makes it, with the stage's exact name
// and 30 days, before the stage exists.
func TestExecutionLogGroup(t *testing.T) {
	for _, v := range []string{"dev", "prod"} {
		s := synth(t, v)
		apiID, _ := s.only(t, "AWS::ApiGateway::RestApi")
		stageID, stage := s.only(t, "AWS::ApiGateway::Stage")
		stageName := props(stage)["StageName"]
		var groupID string
		for id, r := range s.resources("AWS::Logs::LogGroup") {
			if render(props(r)["LogGroupName"]) == ExecutionLogGroupName("${"+apiID+"}", stageName.(string)) {
				groupID = id
				if props(r)["RetentionInDays"] != float64(30) {
					t.Errorf("%s: execution logs kept %v days, want 30", v, props(r)["RetentionInDays"])
				}
				if want := map[string]string{"dev": "Delete", "prod": "Retain"}[v]; r["DeletionPolicy"] != want {
					t.Errorf("%s: execution logs DeletionPolicy %v, want %s", v, r["DeletionPolicy"], want)
				}
			}
		}
		if groupID == "" {
			t.Fatalf("%s: no log group API-Gateway-Execution-Logs_${%s}/%s", v, apiID, stageName)
		}
		// API Gateway's account-wide logging role, and the account setting
		// naming it, are kept on prod only; a dev stage deletes them.
		roles := 0
		for _, typ := range []string{"AWS::IAM::Role", "AWS::ApiGateway::Account"} {
			for id, r := range s.resources(typ) {
				if typ == "AWS::IAM::Role" && !strings.HasPrefix(id, "ApiCloudWatchRole") {
					continue
				}
				roles++
				if want := map[string]string{"dev": "Delete", "prod": "Retain"}[v]; r["DeletionPolicy"] != want || r["UpdateReplacePolicy"] != want {
					t.Errorf("%s: %s %s DeletionPolicy %v, UpdateReplacePolicy %v, want %s", v, typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"], want)
				}
			}
		}
		if roles != 2 {
			t.Errorf("%s: %d API Gateway account role resources, want the role and the account setting", v, roles)
		}
		dependsOn := map[string]bool{}
		for _, d := range list(stage["DependsOn"]) {
			dependsOn[d.(string)] = true
		}
		if !dependsOn[groupID] {
			t.Errorf("%s: stage %s does not wait for the execution log group (DependsOn %v)", v, stageID, stage["DependsOn"])
		}
	}
}

// WAF is off by default; with waf=true one web ACL, REGIONAL, rate-limits
// per IP with the configured limit, answers 429 in the API's error shape,
// and is attached to the stage.
func TestWAF(t *testing.T) {
	dev := synth(t, "dev")
	for _, typ := range []string{"AWS::WAFv2::WebACL", "AWS::WAFv2::WebACLAssociation"} {
		if n := len(dev.resources(typ)); n != 0 {
			t.Errorf("dev (no waf context): %d %s", n, typ)
		}
	}
	prod := synth(t, "prod")
	aclID, acl := prod.only(t, "AWS::WAFv2::WebACL")
	p := props(acl)
	if p["Scope"] != "REGIONAL" || p["DefaultAction"].(map[string]any)["Allow"] == nil {
		t.Errorf("web ACL: %v", p)
	}
	rules := list(p["Rules"])
	if len(rules) != 1 {
		t.Fatalf("rules %v, want one", rules)
	}
	rule := rules[0].(map[string]any)
	rate := rule["Statement"].(map[string]any)["RateBasedStatement"].(map[string]any)
	if rate["Limit"] != float64(1000) || rate["AggregateKeyType"] != "IP" || rate["EvaluationWindowSec"] != float64(WAFRateWindow) {
		t.Errorf("rate rule %v, want 1000 per IP per 5 minutes", rate)
	}
	block := rule["Action"].(map[string]any)["Block"].(map[string]any)["CustomResponse"].(map[string]any)
	if block["ResponseCode"] != float64(429) {
		t.Errorf("blocked requests get %v, want 429", block)
	}
	bodies := p["CustomResponseBodies"].(map[string]any)
	if b := bodies[block["CustomResponseBodyKey"].(string)].(map[string]any); b["ContentType"] != "APPLICATION_JSON" ||
		render(b["Content"]) != `{"error":{"code":"rate_limited","message":"more than 1000 requests from this address in 5 minutes; slow down"}}` {
		t.Errorf("429 body %v", b)
	}
	stageID, _ := prod.only(t, "AWS::ApiGateway::Stage")
	apiID, _ := prod.only(t, "AWS::ApiGateway::RestApi")
	_, assoc := prod.only(t, "AWS::WAFv2::WebACLAssociation")
	if got := render(props(assoc)["WebACLArn"]); got != "${"+aclID+".Arn}" {
		t.Errorf("association web ACL %s", got)
	}
	want := "arn:${AWS::Partition}:apigateway:${AWS::Region}::/restapis/${" + apiID + "}/stages/${" + stageID + "}"
	if got := render(props(assoc)["ResourceArn"]); got != want {
		t.Errorf("association resource %s, want the stage %s", got, want)
	}
	prod.tmpl.ResourceCountIs(jsii.String("AWS::WAFv2::WebACLAssociation"), jsii.Number(1))
}
