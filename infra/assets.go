package main

import (
	"debug/elf"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
)

// Architectures maps each Lambda architecture (context lambdaArchitecture)
// to the GOARCH that builds for it and the ELF machine its binaries carry.
var Architectures = map[string]struct {
	GOARCH  string
	Machine elf.Machine
}{
	"arm64":  {"arm64", elf.EM_AARCH64},
	"x86_64": {"amd64", elf.EM_X86_64},
}

// CheckBootstrap makes sure path is a Linux executable for the functions'
// architecture. Lambda would accept a binary of the other architecture and
// fail every invocation (Runtime.InvalidEntrypoint), so synth refuses it.
func CheckBootstrap(path, arch string) error {
	want, ok := Architectures[arch]
	if !ok {
		return fmt.Errorf("lambdaArchitecture %q: want arm64 or x86_64", arch)
	}
	f, err := elf.Open(path)
	if err != nil {
		return fmt.Errorf("%s is not a Linux executable (%v): build it with `make build LAMBDA_ARCH=%s`, or delete it and the CDK app builds it", path, err, arch)
	}
	defer f.Close()
	if f.Machine != want.Machine {
		return fmt.Errorf("%s is built for %s, but the functions are %s (%s): rebuild with `make build LAMBDA_ARCH=%s`, or delete it (and the others built with it) and the CDK app builds them",
			path, f.Machine, arch, want.Machine, arch)
	}
	if f.Type != elf.ET_EXEC && f.Type != elf.ET_DYN {
		return fmt.Errorf("%s is an ELF %s, not an executable", path, f.Type)
	}
	return nil
}

// BuildBootstrap builds the Go package pkg (e.g. ./functions/api) of the
// module in moduleDir into out, for Lambda's provided.al2023 runtime on
// arch: what `make build` does (infra/cdk.mk), so that `cdk deploy` from a
// fresh clone works without make, as CDK's GoFunction builds at synth.
func BuildBootstrap(moduleDir, pkg, out, arch string, log io.Writer) error {
	a, ok := Architectures[arch]
	if !ok {
		return fmt.Errorf("lambdaArchitecture %q: want arm64 or x86_64", arch)
	}
	abs, err := filepath.Abs(out)
	if err != nil {
		return err
	}
	fmt.Fprintf(log, "infra: go build %s -> %s (linux/%s)\n", pkg, out, a.GOARCH)
	cmd := exec.Command("go", "build", "-tags", "lambda.norpc", "-trimpath", "-ldflags=-s -w", "-o", abs, pkg)
	cmd.Dir = moduleDir
	cmd.Env = append(os.Environ(), "GOOS=linux", "GOARCH="+a.GOARCH, "CGO_ENABLED=0")
	cmd.Stdout, cmd.Stderr = log, log
	if err := cmd.Run(); err != nil {
		return fmt.Errorf("go build %s for linux/%s: %w", pkg, a.GOARCH, err)
	}
	return nil
}

// PrepareAssets gives every function a checked bootstrap in
// assetDir/<fn>/bootstrap: missing ones are built from ./functions/<fn> of
// the module in moduleDir (whether one that exists is stale cannot be told
// reliably, so those are kept: `make synth`/`make deploy` always rebuild);
// then each one's ELF machine must match arch.
func PrepareAssets(moduleDir, assetDir, arch string, log io.Writer) error {
	for _, fn := range BuiltFunctions {
		p := filepath.Join(assetDir, fn, "bootstrap")
		if _, err := os.Stat(p); errors.Is(err, fs.ErrNotExist) {
			if err := BuildBootstrap(moduleDir, "./functions/"+fn, p, arch, log); err != nil {
				return err
			}
		}
		if err := CheckBootstrap(p, arch); err != nil {
			return err
		}
	}
	return nil
}
