// Starts the fauxqs SQS emulator on loopback only (its own CLI binds 0.0.0.0),
// optionally persisting queues and messages under --data-dir.
// Usage: node sqs.mjs --port 4566 [--data-dir DIR]
import { parseArgs } from "node:util";
import { fileURLToPath } from "node:url";
import path from "node:path";
import { buildApp } from "fauxqs";

const here = path.dirname(fileURLToPath(import.meta.url));
const dist = path.join(here, "node_modules", "fauxqs", "dist");
const load = (rel) => import(path.join(dist, rel));

const { values } = parseArgs({
  options: {
    port: { type: "string", default: "4566" },
    host: { type: "string", default: "127.0.0.1" },
    "data-dir": { type: "string" },
  },
});

const { SqsStore } = await load("sqs/sqsStore.js");
const { SnsStore } = await load("sns/snsStore.js");
const { S3Store } = await load("s3/s3Store.js");
const stores = { sqsStore: new SqsStore(), snsStore: new SnsStore(), s3Store: new S3Store() };
// Queue URLs as the client reached us, http://127.0.0.1:4566/000000000000/<name>,
// usable as they are with curl or the AWS CLI. fauxqs's own form,
// sqs.<region>.<host>:<port>, doubles the port when its host carries one.
stores.sqsStore.host = "";

let persistence;
if (values["data-dir"]) {
  const { PersistenceManager } = await load("persistence.js");
  persistence = new PersistenceManager(values["data-dir"]);
  // fauxqs 2.4.1 bug: making an in-flight message visible again (visibility
  // 0) writes NULL into a NOT NULL column, throws, and drops the message from
  // memory. Clear only the in-flight columns instead.
  const ready = persistence.db.prepare(
    "UPDATE sqs_messages SET receipt_handle = NULL, visibility_deadline = NULL WHERE message_id = ?");
  persistence.updateMessageReady = (messageId) => ready.run(messageId);
  persistence.load(stores.sqsStore, stores.snsStore, stores.s3Store);
  stores.sqsStore.persistence = persistence;
  stores.snsStore.persistence = persistence;
  stores.s3Store.persistence = persistence;
  for (const q of [...stores.sqsStore.allQueues()]) {
    q.persistence = persistence;
    // Queues saved by an older make dev carry fauxqs's URL form: serve them under ours.
    const url = `http://${values.host}:${values.port}/000000000000/${q.name}`;
    if (q.url !== url) {
      stores.sqsStore.queues.delete(q.url);
      q.url = url;
      stores.sqsStore.queues.set(url, q);
    }
  }
}

const app = buildApp({ logger: false, stores });
if (persistence) app.addHook("preClose", () => persistence.close());
await app.listen({ port: Number(values.port), host: values.host });
console.log(`fauxqs listening on http://${values.host}:${values.port}`);

const stop = async () => { await app.close(); process.exit(0); };
process.on("SIGTERM", stop);
process.on("SIGINT", stop);
