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

// A destroy-and-redeploy of prod keeps its data: the documented import
// mapping names exactly the resources prod retains that hold data (the
// table and the queues), by their logical ids in today's template, with
// the identifier CloudFormation's import wants for the type, taken from an
// output the stack writes. If a logical id changes (a construct renamed or
// moved), this fails: the mapping, and any import, would silently miss it.
func TestRedeployImportMappingMatchesTheTemplate(t *testing.T) {
	prod := synth(t, "prod")
	outputs := prod.json["Outputs"].(map[string]any)
	identifier := map[string]string{"AWS::DynamoDB::Table": "TableName", "AWS::SQS::Queue": "QueueUrl"}
	var retained []string
	for typ := range identifier {
		for id, r := range prod.resources(typ) {
			if r["DeletionPolicy"] != "Retain" || r["UpdateReplacePolicy"] != "Retain" {
				t.Errorf("prod %s %s is not retained (%v / %v)", typ, id, r["DeletionPolicy"], r["UpdateReplacePolicy"])
			}
			retained = append(retained, id)
		}
	}
	mapping := importMapping(t)
	var documented []string
	for id, m := range mapping {
		documented = append(documented, id)
		r, ok := prod.json["Resources"].(map[string]any)[id].(map[string]any)
		if !ok {
			t.Errorf("the mapping names %s, which prod's template does not have", id)
			continue
		}
		if want := identifier[r["Type"].(string)]; m[0] != want {
			t.Errorf("%s (%s): identifier %s, want %s", id, r["Type"], m[0], want)
		}
		out, ok := outputs[m[1]].(map[string]any)
		if !ok {
			t.Errorf("%s: output %s does not exist", id, m[1])
			continue
		}
		ref := "${" + id + "}" // Ref of a table is its name, of a queue its URL
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
