package apispec

import "testing"

func TestDocumentLoads(t *testing.T) {
	doc, err := Load()
	if err != nil {
		t.Fatal(err)
	}
	t.Log(Operations(doc))
}
