# infra/cdk.mk: build, synthesize and deploy the AWS CDK stack, and the same
# stack on LocalStack. Included from the root Makefile (`include infra/cdk.mk`);
# run every target from the repository root. docs/deploy.md explains them.
#
#   make build                 arm64 Lambda binaries in bin/<fn>/bootstrap
#   make synth                 cdk synth, no AWS credentials, template in cdk.out/
#   make deploy STAGE=prod     build + cdk deploy (run `make cdk-bootstrap` once per account/region)
#   make infra-test            go test ./infra/...
#   make cfn-check             cfn-lint and checkov on the synthesized templates (CI)
#   make localstack-up / localstack-deploy / localstack-e2e / localstack-down
#
# Variables (override on the command line):
#   STAGE=dev                  context `stage`; the stack is GifqWebhooks-$(STAGE)
#   LAMBDA_ARCH=arm64          arm64 or x86_64 (binaries and the stack's functions)
#   CDK_CONTEXT='-c k=v ...'   more CDK context (alarmEmail, retrySchedule, ...)
#   CDK_APPROVAL=broadening    cdk deploy --require-approval; never in CI (no terminal)

CDK_TOOLS_DIR := infra/_cdk
CDK_BIN       := $(CDK_TOOLS_DIR)/node_modules/.bin
CDK           := $(CDK_BIN)/cdk
CDKLOCAL      := $(CDK_BIN)/cdklocal
CDK_FUNCTIONS := api deliver sweeper redrive ops stats receiver
CDK_OUT       := cdk.out

STAGE       ?= dev
LAMBDA_ARCH ?= arm64
CDK_CONTEXT ?=
# What cdk deploy asks before: broadening (IAM or security group changes
# wait for a yes at a terminal); never for CI, where no one can answer.
CDK_APPROVAL ?= broadening

# The CDK CLI and the jsii runtime behind the Go app.
export JSII_SILENCE_WARNING_END_OF_LIFE_NODE_VERSION ?= 20
export CDK_DISABLE_CLI_TELEMETRY ?= true
export CDK_HOME ?= $(CURDIR)/.cache/cdk

# GOARCH for a Lambda architecture name.
cdk_goarch = $(if $(filter x86_64,$(1)),amd64,$(if $(filter arm64,$(1)),arm64,$(error LAMBDA_ARCH must be arm64 or x86_64, not '$(1)')))

# $(call cdk_build,ARCH): the four bootstrap binaries for one architecture.
define cdk_build
@set -e; for fn in $(CDK_FUNCTIONS); do \
	  echo "go build ./functions/$$fn -> bin/$$fn/bootstrap (linux/$(call cdk_goarch,$(1)))"; \
	  GOOS=linux GOARCH=$(call cdk_goarch,$(1)) CGO_ENABLED=0 go build -tags lambda.norpc -trimpath -ldflags='-s -w' -o bin/$$fn/bootstrap ./functions/$$fn; \
	done; \
	echo "binary sizes (linux/$(call cdk_goarch,$(1))):"; \
	for fn in $(CDK_FUNCTIONS); do printf '  %-8s %9d bytes\n' $$fn $$(wc -c < bin/$$fn/bootstrap); done
endef

CDK_CONTEXT_ARGS = -c stage=$(STAGE) -c lambdaArchitecture=$(LAMBDA_ARCH) $(CDK_CONTEXT)
# Synth must not need (or use) credentials: the stack is environment-agnostic.
CDK_NO_CREDENTIALS = env -u AWS_PROFILE -u AWS_ACCESS_KEY_ID -u AWS_SECRET_ACCESS_KEY -u AWS_SESSION_TOKEN AWS_EC2_METADATA_DISABLED=true

.PHONY: cdk-tools build synth deploy cdk-diff cdk-bootstrap cdk-destroy infra-test cfn-check \
	localstack-up localstack-deploy localstack-e2e localstack-stats-e2e localstack-down

# The pinned CDK CLI and cdklocal (infra/_cdk/package-lock.json). The folder
# starts with "_" so that `go build ./...` never walks into node_modules.
cdk-tools: $(CDK_TOOLS_DIR)/node_modules/.installed
$(CDK_TOOLS_DIR)/node_modules/.installed: $(CDK_TOOLS_DIR)/package.json $(CDK_TOOLS_DIR)/package-lock.json
	cd $(CDK_TOOLS_DIR) && npm ci --no-audit --no-fund --loglevel=error
	@touch $@

build:
	$(call cdk_build,$(LAMBDA_ARCH))

synth: build cdk-tools
	$(CDK_NO_CREDENTIALS) $(CDK) synth --quiet --no-notices --output $(CDK_OUT) $(CDK_CONTEXT_ARGS)
	@echo "template: $(CDK_OUT)/GifqWebhooks-$(STAGE).template.json"

# Needs AWS credentials for the target account. Once per account and region,
# first: `make cdk-bootstrap` (cdk bootstrap: the assets bucket and roles).
deploy: build cdk-tools
	@echo "deploying GifqWebhooks-$(STAGE) (first time in this account/region? run 'make cdk-bootstrap' first)"
	@mkdir -p $(CDK_OUT)
	$(CDK) deploy --no-notices --require-approval $(CDK_APPROVAL) $(CDK_CONTEXT_ARGS) \
	  --outputs-file $(CDK_OUT)/outputs-$(STAGE).json
	@echo "stack outputs: $(CDK_OUT)/outputs-$(STAGE).json"

cdk-bootstrap: build cdk-tools
	$(CDK) bootstrap --no-notices $(CDK_CONTEXT_ARGS)

cdk-diff: build cdk-tools
	$(CDK) diff --no-notices $(CDK_CONTEXT_ARGS)

# Deletes the stage's stack. prod keeps its table and queues (RETAIN) and the
# table has deletion protection; other stages delete their data.
cdk-destroy: build cdk-tools
	$(CDK) destroy --no-notices $(CDK_CONTEXT_ARGS)

infra-test:
	go test -count=1 ./infra/...

# cfn-lint and checkov, pinned (infra/cfn-check-requirements.txt) and installed
# from PyPI into .cache/cfn-check on first use, on make synth's template (the
# defaults: no VPC) and on a second synth with every optional part switched
# on (prod: alarm topic and its KMS key, RETAIN; static egress IPs: VPC, NAT
# gateways, EIPs; the WAF web ACL and its association), and a third with the demo receiver (a dev stage: prod
# refuses it; its function URL and public invoke permission), behind an HTTP
# API, its table of provisioned capacity (auto scaling's targets and policies). Fails on any cfn-lint error, warning or informational
# finding and on any failed checkov check. Accepted findings are skipped in
# the template's metadata, each with its reason, from infra/checkov.go.
CFN_CHECK_VENV    := .cache/cfn-check
CFN_CHECK_OUT     := $(CDK_OUT)/cfn-check
CFN_CHECK_CONTEXT := -c stage=prod -c lambdaArchitecture=$(LAMBDA_ARCH) -c alarmEmail=ops@example.com -c notifyEmailFrom=notices@example.com -c egressStaticIps=true -c waf=true
CFN_CHECK_DEMO    := -c stage=demo -c lambdaArchitecture=$(LAMBDA_ARCH) -c demoReceiver=true -c api=http -c tableCapacity=provisioned
CFN_CHECK_FILES    = $(CDK_OUT)/GifqWebhooks-$(STAGE).template.json $(CFN_CHECK_OUT)/GifqWebhooks-prod.template.json \
	$(CFN_CHECK_OUT)/demo/GifqWebhooks-demo.template.json
cfn-check: synth $(CFN_CHECK_VENV)/.installed
	$(CDK_NO_CREDENTIALS) $(CDK) synth --quiet --no-notices --output $(CFN_CHECK_OUT) $(CFN_CHECK_CONTEXT)
	$(CDK_NO_CREDENTIALS) $(CDK) synth --quiet --no-notices --output $(CFN_CHECK_OUT)/demo $(CFN_CHECK_DEMO)
	$(CFN_CHECK_VENV)/bin/cfn-lint --include-checks I -- $(CFN_CHECK_FILES)
	@echo "cfn-lint: no findings"
	$(CFN_CHECK_VENV)/bin/checkov --framework cloudformation --skip-download --compact --quiet \
	  $(addprefix -f ,$(CFN_CHECK_FILES))
$(CFN_CHECK_VENV)/.installed: infra/cfn-check-requirements.txt
	python3 -m venv $(CFN_CHECK_VENV)
	$(CFN_CHECK_VENV)/bin/pip install --quiet --disable-pip-version-check -r infra/cfn-check-requirements.txt
	@touch $@

# --- LocalStack ---------------------------------------------------------------
# Two ways to run it (LOCALSTACK_MODE):
#   host (default)  LocalStack 4.14.0 from PyPI in localstack/_venv, installed
#                   on first use, run on this machine without Docker; Lambda
#                   functions run as host processes (localstack/plugin), and
#                   DynamoDB is moto's. localstack/host.sh does the work.
#   docker          localstack/docker-compose.yml (needs Docker and
#                   LOCALSTACK_AUTH_TOKEN: LocalStack's current image wants one).

LOCALSTACK_MODE     ?= host
LOCALSTACK_COMPOSE  = docker compose -f localstack/docker-compose.yml
LOCALSTACK_ENDPOINT ?= http://127.0.0.1:4566
LOCALSTACK_STACK    := GifqWebhooks-localstack
# Host mode runs the binaries on this machine; Docker mode runs them in
# containers of the host's architecture.
LOCALSTACK_ARCH     ?= $(if $(filter arm64,$(shell go env GOARCH)),arm64,x86_64)
# Retries in seconds so that the suite sees a delivery exhaust its attempts;
# a short sweep grace so that the sweeper's test need not wait 5 minutes.
LOCALSTACK_RETRY_SCHEDULE ?= 1s,1s,1s,1s,1s,1s,1s
LOCALSTACK_SWEEP_GRACE    ?= 3s
# The e2e receiver runs on the host (http, a private address), which only the
# "localstack" stage may allow; a deployed stack never does.
LOCALSTACK_CONTEXT = -c stage=localstack -c lambdaArchitecture=$(LOCALSTACK_ARCH) \
	-c allowedSchemes=http,https -c allowPrivateEndpoints=true \
	-c retrySchedule=$(LOCALSTACK_RETRY_SCHEDULE) -c sweepGrace=$(LOCALSTACK_SWEEP_GRACE) \
	-c apiGatewayCloudWatchRole=false -c notifyEmailFrom=$(LOCALSTACK_NOTIFY_FROM) $(LOCALSTACK_CDK_CONTEXT)
# Notices by email from this sender (LocalStack's SES: the e2e verifies it
# and reads the mails at /_aws/ses).
LOCALSTACK_NOTIFY_FROM ?= notices@gifq.example
LOCALSTACK_OUTPUTS  := $(CDK_OUT)/localstack-outputs.json
# Host mode: LocalStack's log, with every line the functions print (host.sh).
LOCALSTACK_LOG      = $(abspath $(or $(LOCALSTACK_STATE),.cache/localstack))/localstack.log
# cdklocal aims at *.localhost.localstack.cloud unless told otherwise; these
# need no DNS name (S3 path-style on an IP endpoint).
LOCALSTACK_CDK_ENV  = AWS_ENDPOINT_URL=$(LOCALSTACK_ENDPOINT) AWS_ENDPOINT_URL_S3=$(LOCALSTACK_ENDPOINT) \
	AWS_S3_FORCE_PATH_STYLE=1 AWS_REGION=us-east-1 AWS_ACCESS_KEY_ID=test AWS_SECRET_ACCESS_KEY=test
# What the deployed stack can run (docs/deploy.md lists the rest and why).
LOCALSTACK_E2E_RUN  ?= ^Test(Kinesis|OAuth2|MutualTLS|EndpointWithAFilter|ReplayHonours|Happy|Retries|Always500|Rejected|Redirect|Duplicate|Idempotent|IngestValidation|EventShows|ResendDoesNot|Recover|EndpointLifecycle|RotateSecret|Authorization|SecretsNeverLogged|StandardWebhooks|Batch|IngestFlood|Deployed|OperationalEvents|ReplayDelivers|AWSProvider|AWSDestinations|Ordered|EventsFeed|PollingEndpoint|NotificationEndpoint|ListenForwards|NoticeMailSentOnce|NotificationEmail)
E2E_GOTEST_FLAGS    ?= -count=1 -v -timeout 15m -run '$(LOCALSTACK_E2E_RUN)'

localstack-up:
ifeq ($(LOCALSTACK_MODE),docker)
	@test -n "$$LOCALSTACK_AUTH_TOKEN" || { echo "LOCALSTACK_AUTH_TOKEN is not set: export your LocalStack auth token first (docs/deploy.md)" >&2; exit 1; }
	$(LOCALSTACK_COMPOSE) up -d --wait
else
	localstack/host.sh up
endif
	@echo "LocalStack is up on $(LOCALSTACK_ENDPOINT); next: make localstack-deploy"

localstack-deploy: cdk-tools
	$(call cdk_build,$(LOCALSTACK_ARCH))
	@mkdir -p $(CDK_OUT)
	@t0=$$(date +%s); \
	$(LOCALSTACK_CDK_ENV) $(CDKLOCAL) bootstrap --no-notices $(LOCALSTACK_CONTEXT) && \
	$(LOCALSTACK_CDK_ENV) $(CDKLOCAL) deploy --no-notices --require-approval never $(LOCALSTACK_CONTEXT) \
	  --outputs-file $(LOCALSTACK_OUTPUTS) && \
	echo "bootstrap + deploy took $$(( $$(date +%s) - t0 )) s; stack outputs: $(LOCALSTACK_OUTPUTS)"

# The stats function's stream mapping, deployed on its own after the suite
# (context localstackStats): in the whole suite LocalStack's one process
# spends most of a core reading and filtering every write's stream record,
# and unrelated tests time out (localstack/README.md).
localstack-stats-e2e:
	$(MAKE) --no-print-directory localstack-e2e LOCALSTACK_CDK_CONTEXT='$(LOCALSTACK_CDK_CONTEXT) -c localstackStats=true' \
	  LOCALSTACK_E2E_RUN='^TestStatsCountWhatTheReceiverSaw$$$$'

localstack-e2e: localstack-deploy
	@eval "$$(LOCALSTACK_ENDPOINT=$(LOCALSTACK_ENDPOINT) E2E_RECEIVER_HOST=$${E2E_RECEIVER_HOST:-$(if $(filter docker,$(LOCALSTACK_MODE)),host.docker.internal,127.0.0.1)} \
	    node $(CDK_TOOLS_DIR)/stack-env.mjs $(LOCALSTACK_OUTPUTS) $(LOCALSTACK_STACK))" && \
	  echo "e2e against $$E2E_API_URL (receiver host $$E2E_RECEIVER_HOST)" && \
	  E2E_RETRY_SCHEDULE=$(LOCALSTACK_RETRY_SCHEDULE) E2E_NOTIFY_EMAIL_FROM=$(LOCALSTACK_NOTIFY_FROM) $(if $(filter docker,$(LOCALSTACK_MODE)),,E2E_FUNCTION_LOG=$(LOCALSTACK_LOG)) \
	  go test $(E2E_GOTEST_FLAGS) ./localstack/e2e/...

localstack-down:
ifeq ($(LOCALSTACK_MODE),docker)
	# compose reads the file (and its required token) even to stop it.
	LOCALSTACK_AUTH_TOKEN="$${LOCALSTACK_AUTH_TOKEN:-unused}" $(LOCALSTACK_COMPOSE) down -v
else
	localstack/host.sh down
endif
