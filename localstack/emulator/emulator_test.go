package emulator

import (
	"os"
	"path/filepath"
	"testing"
)

// The dynoxide built from its crate is used when make emulators built it,
// the npm package's otherwise.
func TestDynoxidePrefersTheBuildFromItsCrate(t *testing.T) {
	dir := t.TempDir()
	npm := filepath.Join(dir, "node_modules", "@dynoxide", "linux-x64", "dynoxide")
	if got := Dynoxide(dir); got != npm {
		t.Fatalf("without a build: %s, want the npm binary %s", got, npm)
	}
	built := filepath.Join(dir, "cargo", "bin", "dynoxide")
	if err := os.MkdirAll(filepath.Dir(built), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(built, nil, 0o755); err != nil {
		t.Fatal(err)
	}
	if got := Dynoxide(dir); got != built {
		t.Fatalf("with a build: %s, want %s", got, built)
	}
}
