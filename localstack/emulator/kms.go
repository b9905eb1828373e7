package emulator

// The KMS emulator: local-kms (github.com/nsmithuk/local-kms), a Go KMS
// emulator, served on loopback by the wrapper in localstack/kms (a module of
// its own, so its dependencies stay out of go.mod). The code talks to it
// through aws-sdk-go-v2's KMS client, as it talks to AWS KMS.

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/service/kms"
	"github.com/aws/aws-sdk-go-v2/service/kms/types"
)

// KMSBinary is where BuildKMS puts the emulator, under the emulators' folder.
func KMSBinary(dir string) string { return filepath.Join(dir, "bin", "local-kms") }

// BuildKMS builds the KMS emulator into KMSBinary(dir) unless it is there
// (the Go build cache makes a rebuild take seconds; the first one, about a
// minute, downloads the module from the Go proxy).
func BuildKMS(ctx context.Context, root, dir string) (string, error) {
	bin := KMSBinary(dir)
	if fileExists(bin) {
		return bin, nil
	}
	cmd := exec.CommandContext(ctx, "go", "build", "-o", bin, ".")
	cmd.Dir = filepath.Join(root, "localstack", "kms")
	if out, err := cmd.CombinedOutput(); err != nil {
		return "", fmt.Errorf("build the KMS emulator: %w: %s", err, out)
	}
	return bin, nil
}

// KMS is a running KMS emulator.
type KMS struct {
	URL  string
	cmd  *exec.Cmd
	data string
}

// StartKMS builds (if needed) and starts the KMS emulator on a free loopback
// port, its keys in dataDir ("" keeps them in a temporary folder removed by
// Stop). It returns once the emulator listens.
func StartKMS(ctx context.Context, dir, dataDir string) (*KMS, error) {
	root, err := ModuleRoot()
	if err != nil {
		return nil, err
	}
	if dir == "" {
		dir = filepath.Join(root, "localstack", "_emulators")
	}
	bin, err := BuildKMS(ctx, root, dir)
	if err != nil {
		return nil, err
	}
	k := &KMS{}
	if dataDir == "" {
		if dataDir, err = os.MkdirTemp("", "local-kms-"); err != nil {
			return nil, err
		}
		k.data = dataDir
	}
	k.cmd = exec.Command(bin, "-addr", "127.0.0.1:0", "-data", dataDir)
	k.cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true} // dies with us, as the others
	out, err := k.cmd.StdoutPipe()
	if err != nil {
		return nil, err
	}
	if err := k.cmd.Start(); err != nil {
		return nil, err
	}
	addr := make(chan string, 1)
	go func() {
		sc := bufio.NewScanner(out)
		for sc.Scan() {
			if a, ok := strings.CutPrefix(sc.Text(), "listening on "); ok {
				addr <- a
			}
		}
	}()
	select {
	case a := <-addr:
		k.URL = "http://" + a
		return k, nil
	case <-time.After(30 * time.Second):
	case <-ctx.Done():
	}
	k.Stop()
	return nil, fmt.Errorf("the KMS emulator did not start")
}

// Stop ends the emulator and removes its temporary key folder.
func (k *KMS) Stop() {
	if k.cmd != nil && k.cmd.Process != nil {
		_ = k.cmd.Process.Kill()
		_ = k.cmd.Wait()
	}
	if k.data != "" {
		_ = os.RemoveAll(k.data)
	}
}

// KMSClient is an SDK client pointed at the emulator.
func KMSClient(url string) *kms.Client {
	return kms.NewFromConfig(Config(), func(o *kms.Options) { o.BaseEndpoint = aws.String(url) })
}

// CreateKey makes a symmetric encryption key, as the stack's key is, and
// returns its ARN.
func CreateKey(ctx context.Context, c *kms.Client, description string) (string, error) {
	out, err := c.CreateKey(ctx, &kms.CreateKeyInput{
		Description: aws.String(description),
		KeySpec:     types.KeySpecSymmetricDefault, KeyUsage: types.KeyUsageTypeEncryptDecrypt,
	})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.KeyMetadata.Arn), nil
}

// EnsureKey returns the ARN of the key named alias, making the key and the
// alias the first time (make dev keeps them across restarts in its data dir).
func EnsureKey(ctx context.Context, c *kms.Client, alias string) (string, error) {
	out, err := c.DescribeKey(ctx, &kms.DescribeKeyInput{KeyId: aws.String(alias)})
	var missing *types.NotFoundException
	switch {
	case err == nil:
		return aws.ToString(out.KeyMetadata.Arn), nil
	case !errors.As(err, &missing):
		return "", err
	}
	arn, err := CreateKey(ctx, c, alias)
	if err != nil {
		return "", err
	}
	_, err = c.CreateAlias(ctx, &kms.CreateAliasInput{AliasName: aws.String(alias), TargetKeyId: aws.String(arn)})
	return arn, err
}
