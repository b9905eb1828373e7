package main

import (
	"bytes"
	"debug/elf"
	"encoding/binary"
	"os"
	"path/filepath"
	"strings"
	"testing"
)

// tinyELF is a 64-byte ELF64 little-endian header with no sections or
// program headers: enough for debug/elf, and all CheckBootstrap reads.
func tinyELF(machine elf.Machine, typ elf.Type) []byte {
	var b bytes.Buffer
	b.Write([]byte{0x7f, 'E', 'L', 'F', byte(elf.ELFCLASS64), byte(elf.ELFDATA2LSB), byte(elf.EV_CURRENT), byte(elf.ELFOSABI_NONE)})
	b.Write(make([]byte, 8)) // ABI version and padding
	h := struct {
		Type, Machine                                        uint16
		Version                                              uint32
		Entry, Phoff, Shoff                                  uint64
		Flags                                                uint32
		Ehsize, Phentsize, Phnum, Shentsize, Shnum, Shstrndx uint16
	}{uint16(typ), uint16(machine), uint32(elf.EV_CURRENT), 0, 0, 0, 0, 64, 56, 0, 64, 0, 0}
	_ = binary.Write(&b, binary.LittleEndian, h)
	return b.Bytes()
}

func TestCheckBootstrap(t *testing.T) {
	dir := t.TempDir()
	write := func(name string, data []byte) string {
		p := filepath.Join(dir, name)
		if err := os.WriteFile(p, data, 0o755); err != nil {
			t.Fatal(err)
		}
		return p
	}
	arm := write("arm64", tinyELF(elf.EM_AARCH64, elf.ET_EXEC))
	x86 := write("x86_64", tinyELF(elf.EM_X86_64, elf.ET_EXEC))
	pie := write("pie", tinyELF(elf.EM_AARCH64, elf.ET_DYN))
	obj := write("object", tinyELF(elf.EM_AARCH64, elf.ET_REL))
	script := write("script", []byte("#!/bin/sh\necho hi\n"))

	for _, ok := range []struct{ path, arch string }{{arm, "arm64"}, {x86, "x86_64"}, {pie, "arm64"}} {
		if err := CheckBootstrap(ok.path, ok.arch); err != nil {
			t.Errorf("%s on %s: %v", filepath.Base(ok.path), ok.arch, err)
		}
	}
	for _, bad := range []struct {
		path, arch string
		says       []string
	}{
		// The audit's case: x86-64 binaries packaged onto arm64 functions.
		{x86, "arm64", []string{x86, "EM_X86_64", "arm64", "EM_AARCH64", "make build LAMBDA_ARCH=arm64"}},
		{arm, "x86_64", []string{arm, "EM_AARCH64", "x86_64", "EM_X86_64"}},
		{script, "arm64", []string{script, "not a Linux executable"}},
		{obj, "arm64", []string{obj, "not an executable"}},
		{filepath.Join(dir, "missing"), "arm64", []string{"missing"}},
		{arm, "riscv64", []string{"riscv64"}},
	} {
		err := CheckBootstrap(bad.path, bad.arch)
		if err == nil {
			t.Errorf("%s on %s: accepted", filepath.Base(bad.path), bad.arch)
			continue
		}
		for _, s := range bad.says {
			if !strings.Contains(err.Error(), s) {
				t.Errorf("%s on %s: %q does not say %q", filepath.Base(bad.path), bad.arch, err, s)
			}
		}
	}
}

// PrepareAssets builds every missing bootstrap for the functions'
// architecture, then refuses them for the other one. A module of trivial
// programs stands in for the repository (same layout: functions/<fn>).
func TestPrepareAssetsBuildsMissingBinariesForTheArchitecture(t *testing.T) {
	mod := t.TempDir()
	if err := os.WriteFile(filepath.Join(mod, "go.mod"), []byte("module tiny\n\ngo 1.22\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	for _, fn := range BuiltFunctions {
		dir := filepath.Join(mod, "functions", fn)
		if err := os.MkdirAll(dir, 0o755); err != nil {
			t.Fatal(err)
		}
		if err := os.WriteFile(filepath.Join(dir, "main.go"), []byte("package main\n\nfunc main() { println(\""+fn+"\") }\n"), 0o644); err != nil {
			t.Fatal(err)
		}
	}
	assets := filepath.Join(t.TempDir(), "bin")
	// One is already there (and right): kept as it is.
	kept := filepath.Join(assets, FnRedrive, "bootstrap")
	if err := os.MkdirAll(filepath.Dir(kept), 0o755); err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(kept, tinyELF(elf.EM_AARCH64, elf.ET_EXEC), 0o755); err != nil {
		t.Fatal(err)
	}
	var log bytes.Buffer
	if err := PrepareAssets(mod, assets, "arm64", &log); err != nil {
		t.Fatalf("%v\n%s", err, log.String())
	}
	for _, fn := range BuiltFunctions {
		p := filepath.Join(assets, fn, "bootstrap")
		f, err := elf.Open(p)
		if err != nil {
			t.Fatalf("%s: %v", fn, err)
		}
		if f.Machine != elf.EM_AARCH64 || f.OSABI != elf.ELFOSABI_NONE {
			t.Errorf("%s: %s, want an arm64 Linux binary", fn, f.Machine)
		}
		f.Close()
		if st, _ := os.Stat(p); st.Mode()&0o111 == 0 {
			t.Errorf("%s: not executable (%v)", fn, st.Mode())
		}
		built := strings.Contains(log.String(), "./functions/"+fn+" -> ")
		if built != (fn != FnRedrive) {
			t.Errorf("%s: built %v; want the missing ones built and the present one kept\n%s", fn, built, log.String())
		}
	}
	// The same binaries for x86_64 functions: refused, naming the file.
	err := PrepareAssets(mod, assets, "x86_64", &log)
	if err == nil || !strings.Contains(err.Error(), filepath.Join(assets, FnAPI, "bootstrap")) || !strings.Contains(err.Error(), "EM_AARCH64") {
		t.Errorf("arm64 binaries for x86_64 functions: %v", err)
	}
}
