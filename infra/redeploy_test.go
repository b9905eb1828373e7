package main

import (
	"os"
	"regexp"
	"sort"
	"strings"
	"testing"
)

// importMapping is the resource mapping docs/deploy.md ("Destroying and
// redeploying prod") builds for `cdk import` from a stage's saved outputs:
// logical id -> identifier property -> the output that holds its value.
func importMapping(t *testing.T) map[string][2]string {
	t.Helper()
	b, err := os.ReadFile("../docs/deploy.md")
	if err != nil {
		t.Fatal(err)
	}
	doc := string(b)
	start := strings.Index(doc, "<!-- import-mapping -->")
	if start < 0 {
		t.Fatal("docs/deploy.md has no <!-- import-mapping --> block")
	}
	block := doc[start:]
	block = block[:strings.Index(block, "```\n\n")]
	out := map[string][2]string{}
	// "TableCD117FA1": {"TableName": .TableName}
	for _, m := range regexp.MustCompile(`"(\w+)":\s*\{\s*"(\w+)":\s*\$o\.(\w+)\s*\}`).FindAllStringSubmatch(block, -1) {
		out[m[1]] = [2]string{m[2], m[3]}
	}
	if len(out) == 0 {
		t.Fatalf("no mapping entries in %q", block)
	}
	return out
}

// importIdentifier is, for each retained type that holds data or keys,
// the identifier CloudFormation's import wants: each is the resource's Ref.
var importIdentifier = map[string]string{
	"AWS::DynamoDB::Table": "TableName",
	"AWS::SQS::Queue":      "QueueUrl",
	"AWS::KMS::Key":        "KeyId",
}

// notImported are the retained types a redeploy leaves behind, and why:
// they hold nothing the new stack reads.
var notImported = map[string]string{
	"AWS::Logs::LogGroup":      "old logs stay readable where they are; the new functions write to new groups",
	"AWS::IAM::Role":           "API Gateway's account-wide logging role holds no data; the new stack makes its own",
	"AWS::ApiGateway::Account": "the account's API Gateway setting naming that role; the new stack sets it again",
}

// A destroy-and-redeploy of prod keeps its data and its keys: every
// resource prod retains (DeletionPolicy Retain) is either in the documented
// import mapping, by its logical id in today's template, with the
// identifier CloudFormation's import wants for the type, taken from an
// output the stack writes; or of a type notImported says why it may stay
// behind. A new retained resource, a renamed construct (a changed logical
// id) or a missing output fails here: the mapping, and any import, would
// silently miss it (a new signing key opens no sealed secret).
func TestRedeployImportMappingMatchesTheTemplate(t *testing.T) {
	prod := synth(t, "prod")
	outputs := prod.json["Outputs"].(map[string]any)
	mapping := importMapping(t)
	var retained, documented []string
	for id, r := range prod.json["Resources"].(map[string]any) {
		r := r.(map[string]any)
		if r["DeletionPolicy"] != "Retain" {
			continue
		}
		typ := r["Type"].(string)
		if _, ok := importIdentifier[typ]; ok {
			retained = append(retained, id)
			if r["UpdateReplacePolicy"] != "Retain" {
				t.Errorf("prod %s %s: UpdateReplacePolicy %v, want Retain", typ, id, r["UpdateReplacePolicy"])
			}
			continue
		}
		if _, ok := notImported[typ]; !ok {
			t.Errorf("prod retains %s (%s), which neither the import mapping nor notImported covers: "+
				"add it to both (importIdentifier, docs/deploy.md) or say why it may stay behind", id, typ)
		}
	}
	for _, typ := range []string{"AWS::DynamoDB::Table", "AWS::KMS::Key"} {
		if len(prod.resources(typ)) == 0 {
			t.Errorf("prod has no %s", typ)
		}
	}
	for id, m := range mapping {
		documented = append(documented, id)
		r, ok := prod.json["Resources"].(map[string]any)[id].(map[string]any)
		if !ok {
			t.Errorf("the mapping names %s, which prod's template does not have", id)
			continue
		}
		if want := importIdentifier[r["Type"].(string)]; m[0] != want {
			t.Errorf("%s (%s): identifier %s, want %s", id, r["Type"], m[0], want)
		}
		out, ok := outputs[m[1]].(map[string]any)
		if !ok {
			t.Errorf("%s: output %s does not exist", id, m[1])
			continue
		}
		ref := "${" + id + "}" // Ref of a table is its name, of a queue its URL, of a key its id
		if got := render(out["Value"]); got != ref {
			t.Errorf("%s: output %s is %s, want %s", id, m[1], got, ref)
		}
	}
	sort.Strings(retained)
	sort.Strings(documented)
	if strings.Join(retained, ",") != strings.Join(documented, ",") {
		t.Errorf("prod retains %v; the documented mapping names %v", retained, documented)
	}
}
