package main

import (
	"strings"
	"testing"

	"github.com/aws/jsii-runtime-go"
)

// TestHTTPAPI: with api=http the api function is behind an HTTP API and no
// REST API: one $default route to a Lambda proxy integration in payload
// format 1.0 (the REST API's event shape, which shared/httpapi reads), the
// $default stage deployed with the stage throttle and JSON access logs to
// the stack's log group, the 5XX alarm and the dashboard on the HTTP API's
// metrics, the URL where the outputs and the demo receiver look for it.
func TestHTTPAPI(t *testing.T) {
	s := synth(t, "http")
	apiFnID, _ := s.functionByName(t, FnAPI)
	for _, typ := range []string{"AWS::ApiGateway::RestApi", "AWS::ApiGateway::Stage", "AWS::ApiGateway::Account", "AWS::WAFv2::WebACL"} {
		s.tmpl.ResourceCountIs(jsii.String(typ), jsii.Number(0))
	}
	apiID, api := s.only(t, "AWS::ApiGatewayV2::Api")
	if p := props(api); p["ProtocolType"] != "HTTP" || p["Name"] != StackName("dev") {
		t.Errorf("HTTP API %v", p)
	}
	_, integ := s.only(t, "AWS::ApiGatewayV2::Integration")
	if p := props(integ); p["IntegrationType"] != "AWS_PROXY" || p["PayloadFormatVersion"] != "1.0" ||
		!strings.Contains(render(p["IntegrationUri"]), apiFnID) || render(p["ApiId"]) != "${"+apiID+"}" {
		t.Errorf("integration %v: want AWS_PROXY to the api function, payload 1.0", p)
	}
	_, route := s.only(t, "AWS::ApiGatewayV2::Route")
	if p := props(route); p["RouteKey"] != "$default" {
		t.Errorf("route %v: want the one $default route", p)
	}
	accessLogsID := ""
	for id := range s.resources("AWS::Logs::LogGroup") {
		if strings.HasPrefix(id, "ApiAccessLogs") {
			accessLogsID = id
			// Named under /aws/vendedlogs/: no entry in the account-wide log
			// resource policy, which a generated name would join.
			if name, _ := props(s.resources("AWS::Logs::LogGroup")[id])["LogGroupName"].(string); !strings.HasPrefix(name, "/aws/vendedlogs/") {
				t.Errorf("the access log group is named %q, want it under /aws/vendedlogs/", name)
			}
		}
	}
	_, stage := s.only(t, "AWS::ApiGatewayV2::Stage")
	p := props(stage)
	throttle, _ := p["DefaultRouteSettings"].(map[string]any)
	if p["StageName"] != HTTPStageName || p["AutoDeploy"] != true ||
		throttle["ThrottlingRateLimit"] != float64(DefaultAPIThrottleRate) || throttle["ThrottlingBurstLimit"] != float64(DefaultAPIThrottleBurst) {
		t.Errorf("stage %v: want $default, deployed, throttled at %d rps (burst %d)", p, DefaultAPIThrottleRate, DefaultAPIThrottleBurst)
	}
	logs, _ := p["AccessLogSettings"].(map[string]any)
	if !strings.Contains(render(logs["DestinationArn"]), accessLogsID) || !strings.Contains(render(logs["Format"]), "$context.requestId") ||
		strings.Contains(render(logs["Format"]), "header") {
		t.Errorf("access logs %v: want the stack's group (%s), request ids, no headers", logs, accessLogsID)
	}
	// API Gateway may invoke the api function, and nothing else.
	invokes := 0
	for id, r := range s.resources("AWS::Lambda::Permission") {
		if p := props(r); p["Principal"] == "apigateway.amazonaws.com" {
			invokes++
			if !strings.Contains(render(p["FunctionName"]), apiFnID) {
				t.Errorf("API Gateway may invoke something else than api: %s", id)
			}
		}
	}
	if invokes == 0 {
		t.Error("API Gateway may not invoke the api function")
	}
	check(t, "5XX alarm on the HTTP API", func() {
		s.tmpl.HasResourceProperties(jsii.String("AWS::CloudWatch::Alarm"), m{
			"AlarmName": "GifqWebhooks-dev-" + AlarmAPI5xx, "Namespace": "AWS/ApiGateway", "MetricName": "5xx",
			"Dimensions": []any{m{"Name": "ApiId", "Value": m{"Ref": apiID}}},
		})
	})
	outputs := s.json["Outputs"].(map[string]any)
	url := render(outputs["ApiUrl"].(map[string]any)["Value"])
	if !strings.Contains(url, apiID) || !strings.Contains(url, "execute-api") {
		t.Errorf("ApiUrl %s: want the HTTP API's", url)
	}
	recv, _ := s.functionByName(t, FnReceiver)
	env := props(s.resources("AWS::Lambda::Function")[recv])["Environment"].(map[string]any)["Variables"].(map[string]any)
	if got := render(env["API_URL"]); got != url {
		t.Errorf("the demo receiver reads the API at %s, want %s", got, url)
	}
	dash := render(props(func() map[string]any { _, d := s.only(t, "AWS::CloudWatch::Dashboard"); return d }())["DashboardBody"])
	if !strings.Contains(dash, `\"ApiId\",\"`) && !strings.Contains(dash, `"ApiId","`) {
		t.Errorf("the dashboard does not graph the HTTP API's metrics (ApiId): %.300s", dash)
	}
}
