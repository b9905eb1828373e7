package main

import (
	"encoding/json"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strings"
	"testing"

	"gopkg.in/yaml.v3"
)

// composeFile is the part of localstack/docker-compose.yml the tests read.
type composeFile struct {
	Services map[string]struct {
		Image       string            `yaml:"image"`
		Ports       []string          `yaml:"ports"`
		Environment map[string]string `yaml:"environment"`
		Volumes     []string          `yaml:"volumes"`
		Healthcheck struct {
			Test []string `yaml:"test"`
		} `yaml:"healthcheck"`
	} `yaml:"services"`
}

// TestComposeFile: the LocalStack compose file parses, runs the LocalStack
// image, publishes ports on loopback only, takes the auth token from the
// environment (and refuses to start without it), and has a health check for
// `docker compose up --wait`.
func TestComposeFile(t *testing.T) {
	raw, err := os.ReadFile("../localstack/docker-compose.yml")
	if err != nil {
		t.Fatal(err)
	}
	var c composeFile
	if err := yaml.Unmarshal(raw, &c); err != nil {
		t.Fatalf("docker-compose.yml does not parse: %v", err)
	}
	ls, ok := c.Services["localstack"]
	if !ok {
		t.Fatalf("no localstack service (have %v)", sortedKeys(c.Services))
	}
	if !regexp.MustCompile(`^localstack/localstack(-pro)?(:[^ ]+)?$`).MatchString(ls.Image) {
		t.Errorf("image %q is not LocalStack's", ls.Image)
	}
	if len(ls.Ports) == 0 {
		t.Error("no ports published")
	}
	edge := false
	for _, p := range c.Services["localstack"].Ports {
		if !strings.HasPrefix(p, "127.0.0.1:") {
			t.Errorf("port %q is not bound to 127.0.0.1", p)
		}
		edge = edge || strings.HasSuffix(p, ":4566")
	}
	if !edge {
		t.Error("the edge port 4566 is not published")
	}
	for name, svc := range c.Services {
		for _, p := range svc.Ports {
			if !strings.HasPrefix(p, "127.0.0.1:") {
				t.Errorf("service %s: port %q is not bound to 127.0.0.1", name, p)
			}
		}
	}
	token := ls.Environment["LOCALSTACK_AUTH_TOKEN"]
	if !regexp.MustCompile(`^\$\{LOCALSTACK_AUTH_TOKEN(:?[?-][^}]*)?\}$`).MatchString(token) {
		t.Errorf("LOCALSTACK_AUTH_TOKEN = %q, want it taken from the environment", token)
	}
	if !strings.Contains(token, ":?") {
		t.Errorf("LOCALSTACK_AUTH_TOKEN = %q: compose should refuse to start without a token", token)
	}
	// No literal token anywhere in the file.
	if m := regexp.MustCompile(`ls-[A-Za-z0-9]{4,}-`).Find(raw); m != nil {
		t.Errorf("the file seems to hold a token: %s", m)
	}
	if !contains(ls.Volumes, "/var/run/docker.sock:/var/run/docker.sock") {
		t.Error("LocalStack needs the Docker socket to run Lambda containers")
	}
	if len(ls.Healthcheck.Test) == 0 || !strings.Contains(strings.Join(ls.Healthcheck.Test, " "), "_localstack/health") {
		t.Errorf("healthcheck %v", ls.Healthcheck.Test)
	}
}

// TestMakeTargets: infra/cdk.mk defines every target with the right
// commands (`make -n`, nothing runs).
func TestMakeTargets(t *testing.T) {
	if _, err := exec.LookPath("make"); err != nil {
		t.Skip("make is not installed")
	}
	dry := func(args ...string) string {
		t.Helper()
		cmd := exec.Command("make", append([]string{"-n", "-B", "--no-print-directory", "-f", "infra/cdk.mk"}, args...)...)
		cmd.Dir = ".."
		out, err := cmd.CombinedOutput()
		if err != nil {
			t.Fatalf("make -n %v: %v\n%s", args, err, out)
		}
		return string(out)
	}
	for target, wants := range map[string][]string{
		"build": {
			"GOOS=linux GOARCH=arm64 CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bin/$fn/bootstrap ./functions/$fn",
			"for fn in " + strings.Join(BuiltFunctions, " "),
		},
		"cdk-tools":     {"npm ci"},
		"synth":         {"go build -tags lambda.norpc", "cdk synth", "--output cdk.out", "-u AWS_ACCESS_KEY_ID", "-c stage=dev"},
		"deploy":        {"go build -tags lambda.norpc", "cdk deploy", "--outputs-file cdk.out/outputs-dev.json", "cdk-bootstrap"},
		"cdk-bootstrap": {"cdk bootstrap"},
		"infra-test":    {"go test -count=1 ./infra/..."},
		"localstack-up": {"localstack/host.sh up"},
		"localstack-deploy": {"cdklocal bootstrap", "cdklocal deploy", "--outputs-file cdk.out/localstack-outputs.json", "-c stage=localstack", "-c allowPrivateEndpoints=true", "-c sweepGrace=3s",
			// No DNS name needed: S3 path-style on LocalStack's IP endpoint.
			"AWS_ENDPOINT_URL=http://127.0.0.1:4566 AWS_ENDPOINT_URL_S3=http://127.0.0.1:4566", "AWS_ACCESS_KEY_ID=test"},
		"localstack-e2e": {"cdklocal deploy", "stack-env.mjs cdk.out/localstack-outputs.json GifqWebhooks-localstack", "go test", "-run '^Test(", "./localstack/e2e/...", "E2E_RECEIVER_HOST:-127.0.0.1",
			"E2E_RETRY_SCHEDULE=1s,1s,1s,1s,1s,1s,1s", "E2E_FUNCTION_LOG=/"},
		"localstack-down": {"localstack/host.sh down"},
	} {
		out := dry(target)
		for _, w := range wants {
			if !strings.Contains(out, w) {
				t.Errorf("make %s: %q not in\n%s", target, w, out)
			}
		}
	}
	// Where Docker is present, the compose file's path.
	for target, want := range map[string]string{
		"localstack-up":   "docker compose -f localstack/docker-compose.yml up -d --wait",
		"localstack-down": "docker compose -f localstack/docker-compose.yml down",
		"localstack-e2e":  "E2E_RECEIVER_HOST:-host.docker.internal",
	} {
		if out := dry(target, "LOCALSTACK_MODE=docker"); !strings.Contains(out, want) || strings.Contains(out, "host.sh") {
			t.Errorf("make %s LOCALSTACK_MODE=docker: %q not in\n%s", target, want, out)
		}
	}
	if out := dry("localstack-up", "LOCALSTACK_MODE=docker"); !strings.Contains(out, "LOCALSTACK_AUTH_TOKEN") {
		t.Errorf("make localstack-up LOCALSTACK_MODE=docker does not check the token:\n%s", out)
	}
	if out := dry("build", "LAMBDA_ARCH=x86_64"); !strings.Contains(out, "GOARCH=amd64") {
		t.Errorf("LAMBDA_ARCH=x86_64 does not build amd64:\n%s", out)
	}
	if out := dry("deploy", "STAGE=prod", "CDK_CONTEXT=-c alarmEmail=ops@example.com"); !strings.Contains(out, "-c stage=prod") || !strings.Contains(out, "-c alarmEmail=ops@example.com") {
		t.Errorf("STAGE/CDK_CONTEXT do not reach cdk deploy:\n%s", out)
	}
	// A terminal confirms widened permissions; CI, where no one can, says never.
	if out := dry("deploy", "STAGE=prod"); !strings.Contains(out, "--require-approval broadening") {
		t.Errorf("make deploy does not ask before broadening:\n%s", out)
	}
	if out := dry("deploy", "STAGE=prod", "CDK_APPROVAL=never"); !strings.Contains(out, "--require-approval never") {
		t.Errorf("CDK_APPROVAL=never does not reach cdk deploy:\n%s", out)
	}
	mk, err := os.ReadFile("cdk.mk")
	if err != nil {
		t.Fatal(err)
	}
	for _, v := range []string{"export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION", "export CDK_DISABLE_CLI_TELEMETRY", "export CDK_HOME"} {
		if !strings.Contains(string(mk), v) {
			t.Errorf("cdk.mk does not set %s", v)
		}
	}
}

// TestCdkToolsPinned: the CLI versions are pinned in the committed
// package.json and lock file; node_modules stays out of git.
func TestCdkToolsPinned(t *testing.T) {
	var pkg struct {
		DevDependencies map[string]string `json:"devDependencies"`
	}
	raw, err := os.ReadFile("_cdk/package.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &pkg); err != nil {
		t.Fatal(err)
	}
	if pkg.DevDependencies["aws-cdk"] != "2.1148.1" || pkg.DevDependencies["aws-cdk-local"] != "3.0.4" {
		t.Errorf("devDependencies %v", pkg.DevDependencies)
	}
	var lock struct {
		Packages map[string]struct {
			Version string `json:"version"`
		} `json:"packages"`
	}
	raw, err = os.ReadFile("_cdk/package-lock.json")
	if err != nil {
		t.Fatal(err)
	}
	if err := json.Unmarshal(raw, &lock); err != nil {
		t.Fatal(err)
	}
	if lock.Packages["node_modules/aws-cdk"].Version != "2.1148.1" || lock.Packages["node_modules/aws-cdk-local"].Version != "3.0.4" {
		t.Errorf("package-lock.json does not pin the CLI versions")
	}
}

// TestStackEnvScript: the script localstack-e2e uses turns the deploy's
// outputs file into the suite's environment, pointing the SDK at LocalStack.
func TestStackEnvScript(t *testing.T) {
	node, err := exec.LookPath("node")
	if err != nil {
		t.Skip("node is not installed")
	}
	dir := t.TempDir()
	outputs := filepath.Join(dir, "outputs.json")
	os.WriteFile(outputs, []byte(`{"GifqWebhooks-localstack": {
		"ApiId": "abc123", "ApiStageName": "localstack",
		"ApiUrl": "https://abc123.execute-api.us-east-1.amazonaws.com/localstack/",
		"QueueUrl": "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/GifqWebhooks-localstack-deliveries",
		"DlqUrl": "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/GifqWebhooks-localstack-dlq",
		"TableName": "GifqWebhooks-localstack-Table-XYZ", "RedriveFunctionName": "GifqWebhooks-localstack-redrive",
		"OpsFunctionName": "GifqWebhooks-localstack-ops", "OpsEventBusName": "GifqWebhooks-localstack-bus"}}`), 0o644)
	cmd := exec.Command(node, "_cdk/stack-env.mjs", outputs, "GifqWebhooks-localstack")
	cmd.Env = append(os.Environ(), "E2E_RECEIVER_HOST=receiver.test", "AWS_REGION=eu-west-3", "AWS_ACCESS_KEY_ID=AKIAREALKEY")
	out, err := cmd.CombinedOutput()
	if err != nil {
		t.Fatalf("%v\n%s", err, out)
	}
	got := map[string]string{}
	for _, line := range strings.Split(strings.TrimSpace(string(out)), "\n") {
		k, v, ok := strings.Cut(strings.TrimPrefix(line, "export "), "=")
		if !ok {
			t.Fatalf("line %q", line)
		}
		got[k] = strings.Trim(v, "'")
	}
	want := map[string]string{
		"E2E_API_URL":          "http://127.0.0.1:4566/_aws/execute-api/abc123/localstack",
		"E2E_QUEUE_URL":        "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/GifqWebhooks-localstack-deliveries",
		"E2E_DLQ_URL":          "http://sqs.us-east-1.localhost.localstack.cloud:4566/000000000000/GifqWebhooks-localstack-dlq",
		"E2E_TABLE_NAME":       "GifqWebhooks-localstack-Table-XYZ",
		"E2E_RECEIVER_HOST":    "receiver.test",
		"E2E_STACK_NAME":       "GifqWebhooks-localstack",
		"E2E_REDRIVE_FUNCTION": "GifqWebhooks-localstack-redrive",
		"E2E_OPS_FUNCTION":     "GifqWebhooks-localstack-ops",
		"E2E_OPS_EVENT_BUS":    "GifqWebhooks-localstack-bus",
		"AWS_ENDPOINT_URL":     "http://127.0.0.1:4566",
		"AWS_REGION":           "us-east-1", // never the caller's real settings
		"AWS_ACCESS_KEY_ID":    "test",
	}
	for k, v := range want {
		if got[k] != v {
			t.Errorf("%s = %q, want %q", k, got[k], v)
		}
	}
	// A stack missing from the file is an error, not empty variables.
	if err := exec.Command(node, "_cdk/stack-env.mjs", outputs, "Other").Run(); err == nil {
		t.Error("a missing stack did not fail")
	}
}

// TestLocalStackHostInstall: make localstack-up installs LocalStack pinned,
// every requirement at an exact version, and our plugin registers the two
// entry points host.sh selects (LAMBDA_RUNTIME_EXECUTOR=host,
// PROVIDER_OVERRIDE_DYNAMODB=moto).
func TestLocalStackHostInstall(t *testing.T) {
	raw, err := os.ReadFile("../localstack/requirements.txt")
	if err != nil {
		t.Fatal(err)
	}
	pinned := regexp.MustCompile(`^[A-Za-z0-9_.\-]+(\[[a-z,\-]+\])?==[0-9][A-Za-z0-9.+\-]*$`)
	core := false
	for _, line := range strings.Split(string(raw), "\n") {
		if line = strings.TrimSpace(line); line == "" || strings.HasPrefix(line, "#") {
			continue
		}
		if !pinned.MatchString(line) {
			t.Errorf("requirements.txt: %q is not pinned to one version", line)
		}
		core = core || line == "localstack-core[runtime]==4.14.0"
	}
	if !core {
		t.Error("requirements.txt does not pin localstack-core[runtime]==4.14.0")
	}
	py, err := os.ReadFile("../localstack/plugin/pyproject.toml")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{
		"[project.entry-points.\"localstack.lambda.runtime_executor\"]\nhost = \"gifq_localstack.executor:HostRuntimeExecutorPlugin\"",
		"[project.entry-points.\"localstack.aws.provider\"]\n\"dynamodb:moto\" = \"gifq_localstack.dynamodb:dynamodb_moto\"",
	} {
		if !strings.Contains(string(py), want) {
			t.Errorf("pyproject.toml lacks\n%s", want)
		}
	}
	sh, err := os.ReadFile("../localstack/host.sh")
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"LAMBDA_RUNTIME_EXECUTOR=host", "PROVIDER_OVERRIDE_DYNAMODB=moto", "GATEWAY_LISTEN=\"$LISTEN\"",
		"LISTEN=${LOCALSTACK_LISTEN:-127.0.0.1:4566}", "DNS_ADDRESS=0", "env -i", "setsid", "9>&-", "flock", "kill -TERM -- \"-$pid\""} {
		if !strings.Contains(string(sh), want) {
			t.Errorf("host.sh does not contain %q", want)
		}
	}
	if bash, err := exec.LookPath("bash"); err == nil {
		if out, err := exec.Command(bash, "-n", "../localstack/host.sh").CombinedOutput(); err != nil {
			t.Errorf("host.sh: %v\n%s", err, out)
		}
	}
}
