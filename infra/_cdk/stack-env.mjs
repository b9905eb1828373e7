// Prints shell `export` lines for the end-to-end suite (localstack/e2e) from
// a `cdk deploy --outputs-file` JSON file:
//   eval "$(node infra/_cdk/stack-env.mjs cdk.out/localstack-outputs.json GifqWebhooks-localstack)"
// Environment: LOCALSTACK_ENDPOINT (default http://127.0.0.1:4566),
// and any E2E_* variable already set wins over the value computed here
// (E2E_RECEIVER_HOST defaults to 127.0.0.1: functions run on this host; the
// Docker mode sets host.docker.internal).
import { readFileSync } from "node:fs";

const [file, stackName] = process.argv.slice(2);
if (!file) {
  console.error("usage: node stack-env.mjs OUTPUTS.json [STACK]");
  process.exit(2);
}
const all = JSON.parse(readFileSync(file, "utf8"));
const name = stackName || Object.keys(all)[0];
const out = all[name];
if (!out) {
  console.error(`stack ${name} is not in ${file} (has: ${Object.keys(all).join(", ") || "nothing"})`);
  process.exit(1);
}
for (const key of ["ApiId", "ApiStageName", "QueueUrl", "DlqUrl", "TableName", "RedriveFunctionName", "OpsFunctionName", "OpsEventBusName"]) {
  if (!out[key]) {
    console.error(`output ${key} is missing from ${name} in ${file}`);
    process.exit(1);
  }
}
const endpoint = (process.env.LOCALSTACK_ENDPOINT || "http://127.0.0.1:4566").replace(/\/+$/, "");
const vars = {
  // LocalStack's path-style invoke URL: no DNS name needed.
  E2E_API_URL: `${endpoint}/_aws/execute-api/${out.ApiId}/${out.ApiStageName}`,
  E2E_QUEUE_URL: out.QueueUrl,
  E2E_DLQ_URL: out.DlqUrl,
  E2E_TABLE_NAME: out.TableName,
  E2E_STACK_NAME: name,
  E2E_REDRIVE_FUNCTION: out.RedriveFunctionName,
  E2E_OPS_FUNCTION: out.OpsFunctionName,
  E2E_OPS_EVENT_BUS: out.OpsEventBusName,
  E2E_RECEIVER_HOST: "127.0.0.1",
  AWS_ENDPOINT_URL: endpoint,
  AWS_REGION: "us-east-1",
  AWS_ACCESS_KEY_ID: "test",
  AWS_SECRET_ACCESS_KEY: "test",
};
const quote = (v) => "'" + String(v).replace(/'/g, "'\\''") + "'";
for (const [k, v] of Object.entries(vars)) {
  // E2E_* may be overridden from the environment; the AWS_* settings always
  // point at LocalStack, so real credentials never reach the suite.
  const value = k.startsWith("E2E_") && process.env[k] ? process.env[k] : v;
  console.log(`export ${k}=${quote(value)}`);
}
